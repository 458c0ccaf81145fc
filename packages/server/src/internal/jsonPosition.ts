/**
 * Where a JSON text stops being JSON: V8's `JSON.parse` messages name a position only for some errors, so
 * a malformed body is scanned again (only on the error path) to name it.
 *
 * @internal
 */

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const HEX4 = /^[0-9a-fA-F]{4}$/

/**
 * The 0-based UTF-16 offset of the first character that makes `text` invalid JSON (`text.length` when it
 * ends too early), or -1 when it is valid. Iterative: deep nesting cannot overflow the stack.
 *
 * @internal
 */
export const syntaxErrorPosition = (text: string): number => {
  const n = text.length
  const stack: Array<number> = [] // 91 `[` or 123 `{`
  let i = 0
  const skipWhitespace = () => {
    for (; i < n; i++) {
      const c = text.charCodeAt(i)
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return
    }
  }
  /** At a `"`: moves past the string; false at the offending character. */
  const string = (): boolean => {
    i++
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 34) {
        i++
        return true
      }
      if (c < 32) return false
      if (c === 92) {
        const escape = text[i + 1]
        if (escape === "u") {
          if (!HEX4.test(text.slice(i + 2, i + 6))) {
            i += 2
            return false
          }
          i += 6
        } else if (escape !== undefined && "\"\\/bfnrt".includes(escape)) {
          i += 2
        } else {
          i++
          return false
        }
      } else {
        i++
      }
    }
    return false
  }
  /** A scalar value at `i`; false at the offending character. */
  const scalar = (): boolean => {
    const c = text[i]
    if (c === "\"") return string()
    for (const literal of ["true", "false", "null"]) {
      if (c === literal[0]) {
        for (let k = 0; k < literal.length; k++, i++) if (text[i] !== literal[k]) return false
        return true
      }
    }
    NUMBER.lastIndex = i
    const match = NUMBER.exec(text)
    if (match === null || match[0].length === 0 || match[0] === "-") {
      if (match !== null && match[0] === "-") i++
      return false
    }
    i += match[0].length
    return true
  }

  let expect: "value" | "key" | "after" = "value"
  for (;;) {
    skipWhitespace()
    if (expect === "value") {
      const c = text.charCodeAt(i)
      if (c === 123 || c === 91) {
        stack.push(c)
        i++
        skipWhitespace()
        if (text.charCodeAt(i) === (c === 123 ? 125 : 93)) {
          stack.pop()
          i++
          expect = "after"
        } else {
          expect = c === 123 ? "key" : "value"
        }
        continue
      }
      if (i >= n || !scalar()) return Math.min(i, n)
      expect = "after"
    } else if (expect === "key") {
      if (text[i] !== "\"" || !string()) return Math.min(i, n)
      skipWhitespace()
      if (text[i] !== ":") return Math.min(i, n)
      i++
      expect = "value"
    } else {
      const top = stack[stack.length - 1]
      if (top === undefined) return i < n ? i : -1
      const c = text[i]
      if (c === ",") {
        i++
        expect = top === 123 ? "key" : "value"
      } else if ((c === "}" && top === 123) || (c === "]" && top === 91)) {
        stack.pop()
        i++
      } else {
        return Math.min(i, n)
      }
    }
  }
}

/**
 * The 1-based line and column of an offset.
 *
 * @internal
 */
export const lineAndColumn = (text: string, offset: number): { readonly line: number; readonly column: number } => {
  let line = 1
  let start = 0
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text.charCodeAt(k) === 10) {
      line++
      start = k + 1
    }
  }
  return { line, column: offset - start + 1 }
}
