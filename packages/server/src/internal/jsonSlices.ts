/**
 * A request body parsed without holding the event loop for long: one pass over the text checks the
 * nesting bound (before `JSON.parse`, so that no recursion ever meets a deep value) and finds the elements
 * of the top-level `input` array; the body is then parsed without them, and the elements one by one, with
 * a yield to other requests every few milliseconds. `JSON.parse` of a whole 16 MiB body is one call of
 * tens of milliseconds; parsed this way no stretch is longer than an element.
 *
 * The result is exactly `JSON.parse(text)`: whatever the pass cannot vouch for (a body that is no object,
 * an escaped or repeated key at the top level, an element or a rest that does not parse) is parsed whole,
 * which also gives the syntax error of a malformed body.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"

/** What the pass found: where the nesting passed the bound (-1: it did not), and the `input` elements. */
export interface Scan {
  readonly deepAt: number
  /** The `input` array (`[` to `]` inclusive) and its elements, as flat `[start, end)` offset pairs. */
  readonly input: { readonly start: number; readonly end: number; readonly items: ReadonlyArray<number> } | undefined
}

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9

/**
 * One pass over `text` (strings skipped), in slices of `slice` characters with a yield between them; stops
 * as soon as the nesting of objects and arrays passes `limit`.
 */
export const scan = (text: string, limit: number, slice = 1 << 18): Effect.Effect<Scan> =>
  Effect.gen(function*() {
    let depth = 0
    let inString = false
    let stringStart = -1
    let stringIsKey = false
    let keyEscaped = false
    // the top level: an object whose next string is a key, the key just read, the value awaited
    let topObject = false
    let expectKey = false
    let keyIsInput = false
    let awaitInput = false
    let inputs = 0
    // the `input` array
    let inInput = false
    let inputStart = -1
    let inputEnd = -1
    let itemStart = -1
    let broken = false
    const items: Array<number> = []
    let first = true
    // one index across the slices: an escape at the end of a slice skips the first character of the next
    let i = 0
    while (i < text.length) {
      if (i > 0) yield* yieldToIo
      const end = Math.min(text.length, i + slice)
      for (; i < end; i++) {
        const c = text.charCodeAt(i)
        if (inString) {
          if (c === 92 /* \ */) {
            if (stringIsKey) keyEscaped = true
            i++
          } else if (c === 34 /* " */) {
            inString = false
            if (stringIsKey) keyIsInput = text.slice(stringStart, i + 1) === "\"input\""
          }
          continue
        }
        if (isSpace(c)) continue
        if (first) {
          first = false
          topObject = c === 123
        }
        if (depth === 1 && awaitInput) {
          awaitInput = false
          if (c === 91 /* [ */) {
            inInput = true
            inputStart = i
            itemStart = -1
          }
        } else if (inInput && depth === 2 && itemStart === -1 && c !== 44 && c !== 93) {
          itemStart = i
        }
        if (c === 34) {
          inString = true
          stringStart = i
          stringIsKey = topObject && depth === 1 && expectKey
          if (stringIsKey) expectKey = false
        } else if (c === 123 || c === 91) {
          if (++depth > limit) return { deepAt: i, input: undefined }
          if (depth === 1 && c === 123) expectKey = true
        } else if (c === 125 || c === 93) {
          if (inInput && depth === 2 && c === 93) {
            if (itemStart !== -1) items.push(itemStart, i)
            else if (items.length > 0) broken = true // `[1,]`
            inInput = false
            inputEnd = i + 1
          }
          depth--
        } else if (c === 44 /* , */) {
          if (depth === 1) expectKey = true
          else if (inInput && depth === 2) {
            if (itemStart === -1) broken = true // `[,1]`, `[1,,2]`
            else items.push(itemStart, i)
            itemStart = -1
          }
        } else if (c === 58 /* : */ && depth === 1 && keyIsInput) {
          keyIsInput = false
          awaitInput = true
          inputs++
        }
      }
    }
    const sliceable = topObject && !keyEscaped && !broken && inputs === 1 && inputStart !== -1 && inputEnd !== -1
    return { deepAt: -1, input: sliceable ? { start: inputStart, end: inputEnd, items } : undefined }
  })

/** `JSON.parse(text)`, or `undefined` when it throws. */
const tryParse = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/**
 * The parsed body (exactly `JSON.parse(text)`) using `found` (see the module doc); `parseWhole` parses it
 * in one call, and gives the error of a malformed body.
 */
export const parse = <E>(
  text: string,
  found: Scan,
  parseWhole: (text: string) => Effect.Effect<unknown, E>
): Effect.Effect<unknown, E> =>
  Effect.gen(function*() {
    const input = found.input
    if (input === undefined) return yield* parseWhole(text)
    const rest = tryParse(`${text.slice(0, input.start)}null${text.slice(input.end)}`)
    if (rest === undefined || typeof rest.value !== "object" || rest.value === null || (rest.value as { input?: unknown }).input !== null) {
      return yield* parseWhole(text)
    }
    const elements: Array<unknown> = new Array(input.items.length / 2)
    const budget = makeBudget()
    for (let k = 0; k < input.items.length; k += 2) {
      if (budget.tick()) yield* yieldToIo
      const element = tryParse(text.slice(input.items[k], input.items[k + 1]))
      if (element === undefined) return yield* parseWhole(text)
      elements[k / 2] = element.value
    }
    ;(rest.value as { input: unknown }).input = elements
    return rest.value
  })
