/**
 * The input of a custom tool call, read from the arguments of the function call the upstream made: the
 * gateway presents a custom tool as a function with one string parameter, `input`, so the upstream
 * answers `{"input": "<JSON string>"}`, in fragments. `make` decodes the string value as the fragments
 * arrive, so that the input streams (`response.custom_tool_call_input.delta`) rather than arriving whole.
 *
 * @internal
 */

/** The name of the one parameter a custom tool is presented with. */
export const INPUT_PARAMETER = "input"

/**
 * An incremental reader of `{"input": "…"}`: `feed` takes the next fragment of the arguments and returns
 * the newly decoded input text (`""` when none); `finish` takes all the arguments and returns the whole
 * input: the `input` string (or the only string property) when the arguments are such a JSON object, else
 * the arguments themselves (an upstream that wrote the input bare).
 */
export const make = () => {
  // 0: before the value's opening quote; 1: inside the string; 2: after it (or given up)
  let state = 0
  let head = ""
  let pendingEscape = ""
  const feed = (fragment: string): string => {
    let out = ""
    let i = 0
    if (state === 0) {
      head += fragment
      const match = /^\s*\{\s*"input"\s*:\s*"/.exec(head)
      if (match === null) {
        // not (yet) the expected opening: give up once it cannot become one
        if (head.length > 64 || !/^\s*(\{\s*("(i(n(p(u(t("(\s*(:\s*)?)?)?)?)?)?)?)?)?)?$/.test(head)) state = 2
        return ""
      }
      state = 1
      fragment = head.slice(match[0].length)
      head = ""
    }
    if (state !== 1) return ""
    let text = pendingEscape + fragment
    pendingEscape = ""
    for (i = 0; i < text.length; i++) {
      const c = text[i]!
      if (c === "\"") {
        state = 2
        break
      }
      if (c !== "\\") {
        out += c
        continue
      }
      const next = text[i + 1]
      if (next === undefined) {
        pendingEscape = text.slice(i)
        break
      }
      if (next === "u") {
        if (i + 6 > text.length) {
          pendingEscape = text.slice(i)
          break
        }
        out += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16))
        i += 5
        continue
      }
      out += ESCAPES[next] ?? next
      i++
    }
    text = ""
    return out
  }
  return { feed, finish }
}

const ESCAPES: { readonly [c: string]: string } = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", "/": "/", "\\": "\\", "\"": "\"" }

/** The whole input of a custom tool call from its complete arguments (see `make`). */
export const finish = (args: string): string => {
  try {
    const json: unknown = JSON.parse(args)
    if (typeof json === "string") return json
    if (typeof json === "object" && json !== null && !Array.isArray(json)) {
      const record = json as { readonly [key: string]: unknown }
      if (typeof record[INPUT_PARAMETER] === "string") return record[INPUT_PARAMETER]
      const strings = Object.values(record).filter((value): value is string => typeof value === "string")
      if (strings.length === 1) return strings[0]!
    }
  } catch {
    // not JSON: the upstream wrote the input bare
  }
  return args
}
