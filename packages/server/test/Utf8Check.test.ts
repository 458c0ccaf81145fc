/**
 * The check that a request body is UTF-8, made chunk by chunk as the gateway reads it: the offset of the
 * first sequence that is not, as `TextDecoder` with `fatal: true` finds it, however the body is cut, with
 * Node's native validator and with the decoder as the validator.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { decoderValidator, nativeValidator, Utf8Check, type Validator } from "../src/internal/utf8Check.js"
import { readFixture } from "./utils.js"

/** UTF-8 decoding that throws on bytes that are no UTF-8 (a byte order mark kept). */
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const decodes = (bytes: Uint8Array): boolean => {
  try {
    strict.decode(bytes)
    return true
  } catch {
    return false
  }
}

/** `bytes` with `replacement` in place of the byte at `at`. */
const splice = (bytes: Uint8Array, at: number, replacement: ReadonlyArray<number>): Uint8Array =>
  new Uint8Array([...bytes.subarray(0, at), ...replacement, ...bytes.subarray(at + 1)])

/** The validators a check can use: the runtime's (Node's `isUtf8` here) and the decoder. */
const validators: ReadonlyArray<readonly [string, Validator | undefined]> = [
  ["the runtime's", undefined],
  ["the decoder", decoderValidator()]
]

/** The offset `Utf8Check` finds in `bytes` fed in chunks of `size` bytes, or -1. */
const check = (bytes: Uint8Array, size: number, validate?: Validator): number => {
  const utf8 = new Utf8Check(validate)
  for (let from = 0; from < bytes.length; from += size) utf8.feed(bytes.subarray(from, from + size))
  return utf8.end()
}

describe("Utf8Check", () => {
  it("finds the first bytes that are no UTF-8, by their byte offset, however the body is cut into chunks", () => {
    // a recorded answer's output items sent back as input: text with multi-byte characters
    const recorded = JSON.parse(readFixture("responses-json/pai-gpt5-web-search-url-citations.json")) as { output: Array<object> }
    const body = new TextEncoder().encode(JSON.stringify({ model: "gpt-5", input: recorded.output }))
    const first = body.findIndex((byte) => byte >= 0x80)
    expect(first).toBeGreaterThan(0)
    const lead = body[first]!
    const cases: ReadonlyArray<readonly [string, Uint8Array, number]> = [
      ["UTF-8", body, -1],
      ["a byte order mark", new Uint8Array([0xef, 0xbb, 0xbf, ...body]), -1],
      // a character's continuation byte alone, a lead byte followed by ASCII, a character cut by the body's end
      ["a lone continuation byte", splice(body, first, [0x80]), first],
      ["a lead byte then ASCII", splice(body, first, [lead, 0x41]), first],
      ["a character cut by the end", body.slice(0, first + 1), first],
      // what TextDecoder refuses although the lead byte starts a character: overlong, surrogate, past U+10FFFF
      ["an overlong form", splice(body, first, [0xc0, 0xaf]), first],
      ["an overlong three-byte form", splice(body, first, [0xe0, 0x80, 0xaf]), first],
      ["a surrogate", splice(body, first, [0xed, 0xa0, 0x80]), first],
      ["past U+10FFFF", splice(body, first, [0xf4, 0x90, 0x80, 0x80]), first],
      ["a byte no character starts with", splice(body, first, [0xff]), first],
      // after a byte order mark: the offset counts it
      ["a byte order mark then 0xFF", new Uint8Array([0xef, 0xbb, 0xbf, ...splice(body, first, [0xff])]), first + 3]
    ]
    for (const [name, bytes, at] of cases) {
      for (const size of [bytes.length, 1, 2, 3, 5, 4096]) {
        for (const [validator, validate] of validators) {
          expect([name, size, validator, check(bytes, size, validate)]).toEqual([name, size, validator, at])
        }
      }
      // where it stops is where strict decoding stops: what comes before is UTF-8, what starts there is not
      assert.strictEqual(decodes(bytes), at === -1)
      if (at !== -1) {
        assert.isTrue(decodes(bytes.subarray(0, at)))
        for (let k = 1; k <= 4 && at + k <= bytes.length; k++) assert.isFalse(decodes(bytes.subarray(0, at + k)))
      }
    }
  })

  it.prop(
    "any bytes in a string, in chunks of any size: the offset strict decoding fails at, or -1 when it does not fail",
    [FastCheck.uint8Array({ maxLength: 24 }), FastCheck.integer({ min: 1, max: 8 })],
    ([inner, size]) => {
      const bytes = new Uint8Array([...new TextEncoder().encode(`{"input":"`), ...inner, ...new TextEncoder().encode(`"}`)])
      return validators.every(([, validate]) => {
        const at = check(bytes, size, validate)
        if (decodes(bytes)) return at === -1
        return at >= 0 && decodes(bytes.subarray(0, at)) &&
          Array.from({ length: 4 }, (_, k) => k + 1).every((k) => at + k > bytes.length || !decodes(bytes.subarray(0, at + k)))
      })
    }
  )

  it("gives the validator whole characters only, each byte once, and Node's isUtf8 is the runtime's validator", () => {
    // the recorded body's bytes, in chunks that cut two-, three- and four-byte characters
    const recorded = JSON.parse(readFixture("responses-json/pai-gpt5-web-search-url-citations.json")) as { output: Array<object> }
    const body = new TextEncoder().encode(JSON.stringify({ model: "gpt-5", input: [...recorded.output, "é€😀"] }))
    for (const size of [1, 2, 3, 5, 7, 4096]) {
      const runs: Array<Uint8Array> = []
      const utf8 = new Utf8Check((bytes) => {
        runs.push(bytes.slice())
        return decodes(bytes)
      })
      for (let from = 0; from < body.length; from += size) utf8.feed(body.subarray(from, from + size))
      assert.strictEqual(utf8.end(), -1)
      // each run decodes on its own (no character cut at either end), and the runs with the characters
      // checked apart (those that spanned two chunks) make up the body
      for (const run of runs) assert.isTrue(decodes(run))
      const checked = runs.reduce((sum, run) => sum + run.length, 0)
      assert.isAtMost(checked, body.length)
      if (size === 4096) assert.strictEqual(checked, body.length)
    }
    assert.isDefined(nativeValidator)
    assert.isTrue(nativeValidator!(new TextEncoder().encode("é€😀")))
    assert.isFalse(nativeValidator!(new Uint8Array([0xed, 0xa0, 0x80])))
  })
})
