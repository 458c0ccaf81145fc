/**
 * The gateway's sliced body parse (internal `jsonSlices`): the same value as `JSON.parse` on every body,
 * the same failure on every malformed one, the nesting bound, and escapes cut by a slice boundary.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as JsonSlices from "../src/internal/jsonSlices.js"

const whole = (text: string) => Effect.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })

/** The sliced parse of `text`, with slices of `slice` characters in the scan. */
const sliced = (text: string, slice?: number) =>
  Effect.flatMap(JsonSlices.scan(text, 64, slice), (found) => JsonSlices.parse(text, found, whole))

const VALID = [
  `{"model":"m","input":[{"role":"user","content":"a,b]"},{"type":"function_call","arguments":"{\\"x\\":[1,2]}"}]}`,
  ` { "input" : [ 1 , "two" , [3] , {"four":4} , null , true ] , "stream":true } `,
  `{"input":[],"model":"m"}`,
  `{"input":"just text"}`,
  `{"instructions":"say \\"input\\": [1]","input":[{"t":"\\\\"}]}`,
  `{"metadata":{"input":[1,2]},"input":[3]}`,
  `{"input":[1],"input":[2]}`,
  `{"inp\\u0075t":[1],"input":[2]}`,
  `{"input":[1],"inp\\u0075t":[2]}`,
  `{"__proto__":{"x":1},"input":[{"__proto__":null}]}`,
  `[{"input":[1]}]`,
  `"input"`
]

const INVALID = [
  `{"input":[1,,2]}`,
  `{"input":[,1]}`,
  `{"input":[1,]}`,
  `{"input":[1 2]}`,
  `{"input":[{"a":1]]}`,
  `{"input":[1]} x`,
  `{"input":[1]`,
  `{"input":[1],}`,
  `{"input" [1]}`
]

describe("jsonSlices", () => {
  it.effect("gives exactly JSON.parse's value, also with the input elements parsed one by one", () =>
    Effect.gen(function*() {
      for (const text of VALID) {
        for (const slice of [undefined, 1, 3, 7]) {
          const value = yield* sliced(text, slice)
          expect(value, `${text} (slice ${slice})`).toEqual(JSON.parse(text))
          expect(Object.keys(value as object), text).toEqual(Object.keys(JSON.parse(text) as object))
        }
      }
      const found = yield* JsonSlices.scan(VALID[0]!, 64)
      expect(found.input?.items).toHaveLength(4)
    }))

  it.effect("fails as JSON.parse does on a malformed body", () =>
    Effect.gen(function*() {
      for (const text of INVALID) {
        for (const slice of [undefined, 2]) {
          expect(yield* Effect.flip(sliced(text, slice)), text).toBe("invalid")
        }
      }
    }))

  it.effect("stops at the nesting bound, not counting brackets inside strings", () =>
    Effect.gen(function*() {
      const deep = `{"input":[${"[".repeat(70)}${"]".repeat(70)}]}`
      // `{"input":[` holds levels 1 and 2 (offsets 0 and 9); level 65 opens at offset 10 + 62
      expect((yield* JsonSlices.scan(deep, 64)).deepAt).toBe(72)
      const quoted = `{"input":["${"[".repeat(100)}"]}`
      expect((yield* JsonSlices.scan(quoted, 64)).deepAt).toBe(-1)
    }))

  it.effect("a many-item body is parsed element by element", () =>
    Effect.gen(function*() {
      const input = Array.from({ length: 5000 }, (_, i) => ({ role: "user", content: `m${i}, "q" [${i}]` }))
      const text = JSON.stringify({ model: "m", input, stream: true })
      const found = yield* JsonSlices.scan(text, 64, 4096)
      expect(found.input?.items).toHaveLength(10_000)
      expect(yield* sliced(text, 4096)).toEqual({ model: "m", input, stream: true })
    }))
})
