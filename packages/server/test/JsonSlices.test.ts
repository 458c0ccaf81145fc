/**
 * The gateway's sliced body parse (internal `jsonSlices`): the same value as `JSON.parse` on every body,
 * the same failure on every malformed one, the nesting bound, and escapes, keys and characters cut by a
 * slice or chunk boundary.
 */
import { describe, expect, it, vi } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type JsonText, makeBudget } from "@effect-responses/wire/Cooperative"
import * as JsonSlices from "../src/internal/jsonSlices.js"
import { readFixture } from "./utils.js"

const whole = (text: string) => Effect.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })

const utf8 = (text: string) => [new TextEncoder().encode(text)]

/** `text`'s UTF-8 bytes in chunks of `size` bytes (the last one shorter). */
const chunked = (text: string, size: number): JsonSlices.Chunks => {
  const [bytes] = utf8(text)
  const chunks: Array<Uint8Array> = []
  for (let at = 0; at < bytes!.length; at += size) chunks.push(bytes!.subarray(at, at + size))
  return chunks
}

/** The sliced parse of `text`'s UTF-8 bytes, with slices of `slice` bytes in the scan. */
const sliced = (text: string, slice?: number, chunks: JsonSlices.Chunks = utf8(text)) =>
  Effect.flatMap(JsonSlices.scan(chunks, 64, slice), (found) => JsonSlices.parse(chunks, found, whole))

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
  `"input"`,
  `{"instructions":"é ✓ 😀","input":[{"role":"user","content":"héllo [\\"😀\\"], ü"},"日本"],"model":"ø"}`
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
  `{"input" [1]}`,
  `{"input":[\uFEFF1]}`,
  `\uFEFF\uFEFF{"input":[1]}`
]

/** Bodies whose items hold `content` or `output` arrays, read with every element taken as large. */
const ELEMENTS = [
  // parts with escapes (of quotes, brackets, surrogate pairs), multi-byte characters, nested arrays
  `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a,\\"b\\" ]} é ✓ 😀 \\u00e9 \\ud83d\\ude00 \\\\"},{"type":"x","n":[[1,[2]],{"k":[3,"],"]}]}, "s" , 4 ,null,[]]}]}`,
  // a content that is a string, an output array, both arrays, neither
  `{"input":[{"role":"user","content":"[1,2] \\"x\\""},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"o,]"}]},{"output":[2,3],"content":[1]},{"role":"user"}]}`,
  // repeated keys: the last one wins, as in JSON.parse
  `{"input":[{"content":[1,2],"content":[3]},{"output":[1],"output":"x"},{"content":"a","content":[4]}]}`,
  // escaped keys, one spelling content
  `{"input":[{"con\\u0074ent":[1],"content":[2]},{"content":[5],"\\u0063ontent":"s"},{"content":[6],"a\\"b":1}]}`,
  // empty arrays, whitespace, __proto__, content nested deeper
  `{"input":[ { "content" : [ ] , "output" : [ 1 ] } , {"__proto__":{"content":[1]},"content":[{"__proto__":null}]} ]}`,
  `{"input":[[{"content":[1]}],"content",{"content":[[],[[]],{}]},{"a":{"content":[1,2]},"content":{"content":[3]}}]}`,
  // multi-byte characters in keys and values next to the parts
  `{"input":[{"ключ":"значение 😀","content":["日本",{"ü":"ö"}],"é":["ø"]}]}`
]

/** Bodies malformed inside an item's `content` or `output`, or around it. */
const INVALID_ELEMENTS = [
  `{"input":[{"content":[1,,2]}]}`,
  `{"input":[{"content":[,1]}]}`,
  `{"input":[{"content":[1,]}]}`,
  `{"input":[{"content":[1 2]}]}`,
  `{"input":[{"content":[{"a":1]]}]}`,
  `{"input":[{"content":[1],}]}`,
  `{"input":[{"content" [1]}]}`,
  `{"input":[{"a":1 "content":[1]}]}`,
  `{"input":[{"output":["\\x"]}]}`,
  `{"input":[{"content":[1],"output":[2}]}`,
  `{"input":[{"content":[tru]}]}`
]

/** The body of `chunks` as `parse` gives it, every `input` element taken as large (see `ELEMENTS`). */
const slicedLarge = (chunks: JsonSlices.Chunks) =>
  Effect.flatMap(JsonSlices.scan(chunks, 64, 3), (found) => JsonSlices.parse(chunks, found, whole, 0))

/**
 * `JsonSlices.parse` of a scanned body with a spy on `JSON.parse`: the value, and the length of the longest
 * text given to `JSON.parse` (to check that a large part of the body is never given to it whole).
 */
const largestParse = (chunks: JsonSlices.Chunks, found: JsonSlices.Scan) =>
  Effect.gen(function*() {
    const parse = vi.spyOn(JSON, "parse")
    let given: ReadonlyArray<number> = []
    const parsed = yield* Effect.ensuring(
      JsonSlices.parse(chunks, found, whole),
      Effect.sync(() => {
        given = parse.mock.calls.map(([text]) => text.length)
        parse.mockRestore()
      })
    )
    return { parsed, largest: Math.max(...given) }
  })

/** The same as `JSON.parse` gives, key order included. */
const expectSame = (value: unknown, text: string, what: string) => {
  expect(value, what).toEqual(JSON.parse(text))
  expect(JSON.stringify(value), what).toBe(JSON.stringify(JSON.parse(text)))
}

describe("jsonSlices", () => {
  it.effect("gives exactly JSON.parse's value, also with the input elements parsed one by one", () =>
    Effect.gen(function*() {
      for (const text of VALID) {
        for (const slice of [undefined, 1, 3, 7]) {
          const value = yield* sliced(text, slice)
          expect(value, `${text} (slice ${slice})`).toEqual(JSON.parse(text))
          expect(Object.keys(value as object), text).toEqual(Object.keys(JSON.parse(text) as object))
        }
        // chunks as read from a socket: a multi-byte character, an escape or a key split between two
        for (const size of [1, 2, 5]) {
          expect(yield* sliced(text, 3, chunked(text, size)), `${text} (chunks of ${size})`).toEqual(JSON.parse(text))
        }
      }
      const found = yield* JsonSlices.scan(utf8(VALID[0]!), 64)
      expect(found.input?.items).toHaveLength(4)
    }))

  it.effect("fails as JSON.parse does on a malformed body", () =>
    Effect.gen(function*() {
      for (const text of INVALID) {
        for (const slice of [undefined, 2]) {
          expect(yield* Effect.flip(sliced(text, slice)), text).toBe("invalid")
        }
        expect(yield* Effect.flip(sliced(text, 2, chunked(text, 1))), text).toBe("invalid")
      }
    }))

  it.effect("parseLazily: the same value with the input elements parsed as they are read, the same failure", () =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      const read = (chunks: JsonSlices.Chunks) =>
        Effect.gen(function*() {
          const lazy = yield* JsonSlices.parseLazily(chunks, yield* JsonSlices.scan(chunks, 64, 3), parseWhole)
          if (lazy.input === undefined) return lazy.body
          const elements: Array<unknown> = []
          for (let index = 0; index < lazy.input.length; index++) elements.push(yield* lazy.input.element(index))
          yield* lazy.input.rest
          return { ...(lazy.body as object), input: elements }
        })
      for (const text of VALID) {
        for (const size of [1, 5, 1000]) {
          const value = yield* read(chunked(text, size))
          expect(value, `${text} (chunks of ${size})`).toEqual(JSON.parse(text))
        }
      }
      for (const text of INVALID) expect(yield* Effect.flip(read(chunked(text, 2))), text).toBe("invalid")
      // an element read on its own, out of order, and the rest of the elements checked without reading them
      const text = `{"input":[{"a":1},[2,3],"four",{"b" 5}],"model":"m"}`
      const lazy = yield* JsonSlices.parseLazily(chunked(text, 4), yield* JsonSlices.scan(chunked(text, 4), 64), parseWhole)
      expect(lazy.body).toEqual({ input: null, model: "m" })
      expect(yield* lazy.input!.element(2)).toBe("four")
      expect(yield* lazy.input!.element(0)).toEqual({ a: 1 })
      expect(yield* Effect.flip(lazy.input!.rest)).toBe("invalid")
    }))

  it.effect("a large element: its content and output arrays parsed part by part give exactly JSON.parse's value", () =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      for (const text of [...ELEMENTS, ...VALID]) {
        // chunks as read from a socket: a multi-byte character, an escape or a key split between two
        for (const size of [1, 2, 5, 1000]) {
          expectSame(yield* slicedLarge(chunked(text, size)), text, `${text} (chunks of ${size})`)
          const chunks = chunked(text, size)
          const lazy = yield* JsonSlices.parseLazily(chunks, yield* JsonSlices.scan(chunks, 64), parseWhole, 0)
          if (lazy.input === undefined) continue
          const elements: Array<unknown> = []
          for (let index = 0; index < lazy.input.length; index++) elements.push(yield* lazy.input.element(index))
          expectSame({ ...(lazy.body as object), input: elements }, text, `${text} (lazily, chunks of ${size})`)
        }
      }
    }))

  it.effect("a large element that does not parse fails as JSON.parse does", () =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      for (const text of [...INVALID_ELEMENTS, ...INVALID]) {
        for (const size of [1, 1000]) {
          expect(yield* Effect.flip(slicedLarge(chunked(text, size))), text).toBe("invalid")
        }
        const chunks = chunked(text, 3)
        const lazy = yield* Effect.orElseSucceed(JsonSlices.parseLazily(chunks, yield* JsonSlices.scan(chunks, 64), parseWhole, 0), () => undefined)
        if (lazy?.input !== undefined) expect(yield* Effect.flip(lazy.input.rest), text).toBe("invalid")
      }
    }))

  it.effect("partsOf counts a large element's parts before they are parsed, as the decoder bounds them", () =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      const counts = (text: string, largeBytes?: number) =>
        Effect.gen(function*() {
          const chunks = chunked(text, 4)
          const lazy = yield* JsonSlices.parseLazily(chunks, yield* JsonSlices.scan(chunks, 64), parseWhole, largeBytes)
          const out: Array<JsonSlices.PartsCount | undefined | "unknown"> = []
          for (let index = 0; index < lazy.input!.length; index++) {
            const counting = lazy.input!.partsOf(index)
            out.push(counting === undefined ? "unknown" : yield* counting)
          }
          return { out, lazy }
        })
      const text = `{"input":[{"role":"user","content":[1,{"a":[2,3]},"4,5"]},{"output":[{"a":1},2]},{"content":"s","output":[1]},` +
        `{"content":{"a":[1]},"output":[1,2]},{"content":[1],"content":[2]},{"con\\u0074ent":[1]},{"output":[1],"content":null},` +
        `{"role":"user"},[1,2]]}`
      const { out } = yield* counts(text, 0)
      expect(out).toEqual([
        { field: "content", length: 3 },
        { field: "output", length: 2 },
        { field: "output", length: 1 },
        { field: "output", length: 2 },
        undefined,
        undefined,
        { field: "output", length: 1 },
        undefined,
        undefined
      ])
      // a small element is not counted: it is parsed at once
      expect((yield* counts(text)).out.every((count) => count === "unknown")).toBe(true)
      // counted without parsing the parts: a part that does not parse fails only once the element is read
      const malformed = `{"input":[{"content":[1,{"x" 2},3]}]}`
      const { lazy, out: malformedCounts } = yield* counts(malformed, 0)
      expect(malformedCounts).toEqual([{ field: "content", length: 3 }])
      expect(yield* Effect.flip(lazy.input!.element(0))).toBe("invalid")
    }))

  it.effect("an element over LARGE_ELEMENT_BYTES is parsed part by part", () =>
    Effect.gen(function*() {
      const content = Array.from({ length: 20_000 }, (_, i) => ({ type: "input_text", text: `p${i} é😀 "q" [${i}]` }))
      const text = JSON.stringify({ model: "m", input: [{ role: "user", content: "first" }, { role: "user", content }] })
      const chunks = chunked(text, 65_536)
      const found = yield* JsonSlices.scan(chunks, 64)
      expect(found.input!.items[3]! - found.input!.items[2]!).toBeGreaterThan(JsonSlices.LARGE_ELEMENT_BYTES)
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      const lazy = yield* JsonSlices.parseLazily(chunks, found, parseWhole)
      expect(lazy.input!.partsOf(0)).toBeUndefined()
      expect(yield* lazy.input!.partsOf(1)!).toEqual({ field: "content", length: 20_000 })
      expectSame(yield* JsonSlices.parse(chunks, found, whole), text, "20,000 parts")
    }))

  it.effect("drops a leading byte order mark as TextDecoder does, and still parses element by element", () =>
    Effect.gen(function*() {
      const text = `{"model":"m","input":[{"role":"user","content":"a"},2]}`
      for (const chunks of [[new Uint8Array([0xef, 0xbb, 0xbf]), ...utf8(text)], [new Uint8Array([0xef]), new Uint8Array([0xbb, 0xbf]), ...utf8(text)]]) {
        const found = yield* JsonSlices.scan(chunks, 64)
        expect(found.input?.items).toHaveLength(4)
        expect(yield* JsonSlices.parse(chunks, found, whole)).toEqual(JSON.parse(text))
      }
    }))

  it.effect("stops at the nesting bound, not counting brackets inside strings", () =>
    Effect.gen(function*() {
      const deep = `{"input":[${"[".repeat(70)}${"]".repeat(70)}]}`
      // `{"input":[` holds levels 1 and 2 (offsets 0 and 9); level 65 opens at offset 10 + 62
      expect((yield* JsonSlices.scan(utf8(deep), 64)).deepAt).toBe(72)
      const quoted = `{"input":["${"[".repeat(100)}"]}`
      expect((yield* JsonSlices.scan(utf8(quoted), 64)).deepAt).toBe(-1)
      // the offset counts characters of the text (UTF-16 code units), not bytes
      const wide = `{"note":"é😀",${deep.slice(1)}`
      expect((yield* JsonSlices.scan(utf8(wide), 64)).deepAt).toBe(wide.indexOf("[") + 63)
    }))

  it.effect("a many-item body is parsed element by element", () =>
    Effect.gen(function*() {
      const input = Array.from({ length: 5000 }, (_, i) => ({ role: "user", content: `m${i}, "q" [${i}]` }))
      const text = JSON.stringify({ model: "m", input, stream: true })
      const found = yield* JsonSlices.scan(chunked(text, 65_536), 64, 4096)
      expect(found.input?.items).toHaveLength(10_000)
      expect(yield* sliced(text, 4096, chunked(text, 65_536))).toEqual({ model: "m", input, stream: true })
    }))

  /** Strings' JSON texts with escapes of every kind, multi-byte characters and runs of backslashes next to each other. */
  const STRINGS = [
    `"a\\"b\\\\c\\/d\\b\\f\\n\\r\\te"`,
    `"\\u00e9\\u00E9x\\u0000\\u001f\\u2028"`,
    // a surrogate pair as two escapes, as raw UTF-8, and lone halves
    `"\\ud83d\\ude00😀x\\ud83d\\ude00\\ud800a\\udfff"`,
    `"é✓😀日本ø\\né\\"😀\\\\✓"`,
    `"\\\\\\\\\\\\\\\\\\u0041\\\\\\\\\\"\\\\"`,
    `""`,
    `"plain text of some length, no escape at all"`
  ]

  it.effect("parseString: a string cut at every place gives JSON.parse's value", () =>
    Effect.gen(function*() {
      for (const text of STRINGS) {
        for (const size of [1, 2, 3, 1000]) {
          const chunks = chunked(text, size)
          for (let slice = 1; slice <= 8; slice++) {
            const parsed = yield* JsonSlices.parseString(chunks, 0, utf8(text)[0]!.length, makeBudget(), slice)
            expect(parsed?.value, `${text} (chunks of ${size}, slices of ${slice})`).toBe(JSON.parse(text))
          }
        }
      }
    }))

  it.effect("parseString: a string of several slices whose text is JSON.stringify's is given with that text, its bytes as read", () =>
    Effect.gen(function*() {
      const value = "a \"long\" é😀 \\ \n instruction, \u0001".repeat(20_000)
      const long = JSON.stringify(value)
      for (const size of [65_536, 100_003]) {
        const chunks = chunked(long, size)
        const parsed = yield* JsonSlices.parseString(chunks, 0, utf8(long)[0]!.length, makeBudget())
        expect(parsed?.value).toBe(value)
        // views of the chunks, not a copy
        expect(parsed?.json?.every((view) => chunks.some((chunk) => chunk.buffer === view.buffer))).toBe(true)
        expect(Buffer.concat(parsed!.json!).toString("utf8")).toBe(long)
      }
    }))

  it.effect("parseString: JSON text, when given, is exactly JSON.stringify's; none for escapes it spells otherwise, bytes that are no UTF-8, one slice", () =>
    Effect.gen(function*() {
      for (const text of STRINGS) {
        for (const size of [1, 3, 1000]) {
          const chunks = chunked(text, size)
          for (let slice = 1; slice <= 8; slice++) {
            const parsed = yield* JsonSlices.parseString(chunks, 0, utf8(text)[0]!.length, makeBudget(), slice)
            if (parsed?.json !== undefined) {
              expect(Buffer.concat(parsed.json).toString("utf8"), `${text} (chunks of ${size}, slices of ${slice})`).toBe(JSON.stringify(parsed.value))
            }
          }
        }
      }
      const canonical = `"a é😀 \\\\ \\" \\n \\u001f \\ud800 b"`
      expect(JSON.stringify(JSON.parse(canonical))).toBe(canonical)
      for (let slice = 1; slice <= 8; slice++) {
        const parsed = yield* JsonSlices.parseString(chunked(canonical, 2), 0, utf8(canonical)[0]!.length, makeBudget(), slice)
        expect(Buffer.concat(parsed!.json!).toString("utf8")).toBe(canonical)
      }
      // a string of one slice: no text (it is one string already)
      expect((yield* JsonSlices.parseString(utf8(canonical), 0, utf8(canonical)[0]!.length, makeBudget()))?.json).toBeUndefined()
      // spelled otherwise than JSON.stringify spells it: an escape of a character it writes as itself, `\/`,
      // upper-case hex, a surrogate pair as two escapes (cut between them too)
      for (const other of [`"ab\\u0041cd"`, `"ab\\/cd"`, `"ab\\u001Fcd"`, `"ab\\ud83d\\ude00cd"`, `"ab\\ud83d\\ude00\\ud83d\\ude00"`]) {
        for (let slice = 1; slice <= 14; slice++) {
          const parsed = yield* JsonSlices.parseString(chunked(other, 3), 0, utf8(other)[0]!.length, makeBudget(), slice)
          expect(parsed?.value, other).toBe(JSON.parse(other))
          expect(parsed?.json, `${other} (slices of ${slice})`).toBeUndefined()
        }
      }
      // bytes that are no UTF-8 (read as U+FFFD, which JSON.stringify writes as its own three bytes)
      const bytes = new Uint8Array([34, 97, 98, 0xff, 99, 100, 0xc3, 34])
      for (let slice = 1; slice <= 8; slice++) {
        const parsed = yield* JsonSlices.parseString([bytes], 0, bytes.length, makeBudget(), slice)
        expect(parsed?.value).toBe("ab\ufffdcd\ufffd")
        expect(parsed?.json).toBeUndefined()
      }
    }))

  it.effect("parseString: the slices joined are made one string after a yield, before the value is given (its first read is not the reader's), when its text is not JSON.stringify's", () =>
    Effect.gen(function*() {
      // `\u00e9`: JSON.stringify writes é
      const long = JSON.stringify("a \"long\" é😀 instruction, ".repeat(20_000)).replace("é", "\\u00e9")
      const chunks = chunked(long, 65_536)
      const log: Array<string> = []
      const originalParse = JSON.parse
      const parse = vi.spyOn(JSON, "parse").mockImplementation((text: string) => {
        log.push("parse")
        return originalParse(text)
      })
      const originalCharCodeAt = String.prototype.charCodeAt
      const read = vi.spyOn(String.prototype, "charCodeAt").mockImplementation(function(this: string, index: number) {
        if (this.length > 100_000) log.push("read")
        return Reflect.apply(originalCharCodeAt, this, [index])
      })
      const originalSetImmediate = globalThis.setImmediate
      const yielded = vi.spyOn(globalThis, "setImmediate").mockImplementation(((...args: Parameters<typeof setImmediate>) => {
        log.push("yield")
        return originalSetImmediate(...args)
      }) as typeof setImmediate)
      const parsed = yield* JsonSlices.parseString(chunks, 0, utf8(long)[0]!.length, makeBudget())
      parse.mockRestore()
      read.mockRestore()
      yielded.mockRestore()
      expect(parsed?.value).toBe(JSON.parse(long))
      expect(parsed?.json).toBeUndefined()
      expect(log.filter((event) => event === "parse").length).toBeGreaterThan(long.length / JsonSlices.STRING_SLICE_BYTES)
      expect(log.slice(log.lastIndexOf("parse"), log.lastIndexOf("parse") + 3)).toEqual(["parse", "yield", "read"])
    }))

  it.effect("parseString: an invalid string does not parse, however it is cut", () =>
    Effect.gen(function*() {
      for (const text of [`"\\x"`, `"a\\u12"`, `"a\\u12G4b"`, `"\\u"`, `"ab\u0001c"`, `"\\\\\\q"`, `"é\\é"`]) {
        expect(() => JSON.parse(text), text).toThrow()
        for (let slice = 1; slice <= 8; slice++) {
          expect(yield* JsonSlices.parseString(chunked(text, 2), 0, utf8(text)[0]!.length, makeBudget(), slice), text).toBeUndefined()
        }
      }
    }))

  it.effect("a long string in a large element is parsed in slices: JSON.parse's value, JSON.parse's failure", () =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      // more than LARGE_ELEMENT_BYTES, of every escape and character above, cut by slices at every offset
      const long = STRINGS.map((text) => text.slice(1, -1)).join("").repeat(4000) + "é".repeat(100_000)
      const string = (body: string) => `"${body}"`
      const bodies = [
        // a text part; a string output; a string content; a long key next to a long value; two long parts
        `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":${string(long)}}]}]}`,
        `{"input":[{"type":"function_call_output","call_id":"c","output":${string(long)}},{"role":"user","content":${string(long)}}]}`,
        `{"input":[{${string(long)}:${string(long)},"content":[${string(long)},{"a":[${string(long)}]}],"x":1}]}`
      ]
      for (const text of bodies) {
        for (const size of [65_536, 100_003]) {
          const chunks = chunked(text, size)
          const found = yield* JsonSlices.scan(chunks, 64)
          expectSame(yield* JsonSlices.parse(chunks, found, whole), text, `${text.slice(0, 80)} (chunks of ${size})`)
          const lazy = yield* JsonSlices.parseLazily(chunks, found, parseWhole)
          const elements: Array<unknown> = []
          for (let index = 0; index < lazy.input!.length; index++) elements.push(yield* lazy.input!.element(index))
          expectSame({ ...(lazy.body as object), input: elements }, text, `${text.slice(0, 80)} (lazily)`)
        }
        // an invalid escape at the end of a long string fails as the whole body does
        const invalid = text.replace(`${long}"`, `${long}\\x"`)
        expect(invalid).not.toBe(text)
        expect(yield* Effect.flip(JsonSlices.parse(utf8(invalid), yield* JsonSlices.scan(utf8(invalid), 64), whole))).toBe("invalid")
      }
    }))

  it.effect("every string taken as long (in the rest of the body, in an element, a body with no input array): JSON.parse's value and failure", () =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      for (const text of [...VALID, ...ELEMENTS]) {
        for (const size of [1, 3, 1000]) {
          const chunks = chunked(text, size)
          const found = yield* JsonSlices.scan(chunks, 64, 3, 0)
          expectSame(yield* JsonSlices.parse(chunks, found, whole), text, `${text} (chunks of ${size})`)
          expectSame(yield* JsonSlices.parse(chunks, found, whole, 0), text, `${text} (every element large, chunks of ${size})`)
          const lazy = yield* JsonSlices.parseLazily(chunks, found, parseWhole)
          const body = lazy.input === undefined ? lazy.body : {
            ...(lazy.body as object),
            input: yield* Effect.forEach(Array.from({ length: lazy.input.length }, (_, index) => index), lazy.input.element)
          }
          expectSame(body, text, `${text} (lazily, chunks of ${size})`)
        }
      }
      for (const text of [...INVALID, ...INVALID_ELEMENTS, `{"input":"\\\\x","model":"\\x"}`, `{"a":"b" "c":"d"}`, `"\\q"`]) {
        const chunks = chunked(text, 2)
        expect(yield* Effect.flip(JsonSlices.parse(chunks, yield* JsonSlices.scan(chunks, 64, 3, 0), whole)), text).toBe("invalid")
      }
    }))

  it.effect("a long string outside the input elements (instructions, a string input, a tool's description, metadata) is parsed in slices", () =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      const long = `é😀 "q" \\ [x] ${"a".repeat(1000)}`.repeat(1000)
      const bodies = [
        { model: "m", instructions: long, input: [{ role: "user", content: "hi" }] },
        { model: "m", input: long },
        { model: "m", input: "q", tools: [{ type: "function", name: "f", description: long, parameters: { type: "object" } }] },
        { model: "m", input: [{ role: "user", content: "hi" }], metadata: { note: long }, text: { format: { type: "json_schema", schema: { description: long } } } }
      ]
      for (const value of bodies) {
        const text = JSON.stringify(value)
        const chunks = chunked(text, 65_536)
        const found = yield* JsonSlices.scan(chunks, 64)
        expect(found.strings.length, text.slice(0, 60)).toBeGreaterThan(0)
        // no JSON.parse is given the long string whole: every call sees at most about a slice
        const parse = vi.spyOn(JSON, "parse")
        const parsed = yield* JsonSlices.parse(chunks, found, whole)
        const lazy = yield* JsonSlices.parseLazily(chunks, found, parseWhole)
        const body = lazy.input === undefined ? lazy.body : {
          ...(lazy.body as object),
          input: yield* Effect.forEach(Array.from({ length: lazy.input.length }, (_, index) => index), lazy.input.element)
        }
        const given = parse.mock.calls.map(([text]) => text.length)
        parse.mockRestore()
        expectSame(parsed, text, text.slice(0, 60))
        expectSame(body, text, `${text.slice(0, 60)} (lazily)`)
        expect(Math.max(...given), text.slice(0, 60)).toBeLessThan(2 * JsonSlices.STRING_SLICE_BYTES)
        expect(given.length, text.slice(0, 60)).toBeGreaterThan(long.length / JsonSlices.STRING_SLICE_BYTES)
      }
    }))

  it.effect("the JSON texts of long strings are given to `texts`: in the rest of the body, a tool, a namespace's tool, an input element read to be kept", () =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: () => "invalid" as const })
      const long = (tag: string) => `${tag} é😀 "q" \\ ${"a".repeat(1000)}`.repeat(400)
      const tool = (name: string, description: string) => ({ type: "function", name, description, parameters: { type: "object" } })
      const value = {
        model: "m",
        instructions: long("instructions"),
        input: [{ role: "user", content: [{ type: "input_text", text: long("part") }] }, { role: "user", content: "hi" }],
        tools: [
          tool("f", long("tool")),
          { type: "namespace", name: "ns", description: "d", tools: [tool("g", long("namespaced")), ...Array.from({ length: 3000 }, (_, i) => tool(`t${i}`, "x"))] }
        ]
      }
      const text = JSON.stringify(value)
      const chunks = chunked(text, 65_536)
      const found = yield* JsonSlices.scan(chunks, 64)
      const texts: Array<JsonText> = []
      expectSame(yield* JsonSlices.parse(chunks, found, whole, undefined, texts), text, "parse")
      const expected = ["instructions", "tool", "namespaced", "part"].map(long).sort()
      expect(texts.map((known) => known.value).sort()).toEqual(expected)
      for (const known of texts) expect(Buffer.concat(known.bytes).toString("utf8")).toBe(JSON.stringify(known.value))
      const lazily: Array<JsonText> = []
      const lazy = yield* JsonSlices.parseLazily(chunks, found, parseWhole, undefined, lazily)
      expect(lazily.map((known) => known.value).sort()).toEqual(["instructions", "tool", "namespaced"].map(long).sort())
      yield* lazy.input!.element(0)
      expect(lazily.map((known) => known.value).sort()).toEqual(expected)
    }))
  /** `JSON.parse`'s value, or its error's message (which gives the position of a syntax error). */
  const parseOrMessage = (text: string) =>
    Effect.try({ try: (): unknown => JSON.parse(text), catch: (error) => (error as SyntaxError).message })

  /**
   * Bodies whose `tools` array the pass vouches for, from a recorded answer's `tools` (the gateway's echo of
   * a request's tools), many of them, with `input` before, after or absent, and malformed ones.
   */
  const toolBodies = () => {
    const recorded = JSON.parse(readFixture("responses-json/pai-gpt4o-two-parallel-function-calls.json")) as { tools: Array<object> }
    const tools = Array.from({ length: 2000 }, (_, i) => ({ ...recorded.tools[0]!, name: `get_location_${i}` }))
    const many = JSON.stringify(tools)
    const valid = [
      `{"model":"gpt-4o","tools":${many},"input":[{"role":"user","content":"Where am I?"}],"stream":true}`,
      `{"input":[{"role":"user","content":"Where am I?"}],"model":"gpt-4o","tools":${many}}`,
      `{"model":"gpt-4o","input":"Where am I?","tools":${many},"tool_choice":"auto"}`,
      `{"tools":[],"input":"x"}`,
      `{"tools":[ 1 , "two" , [3] , {"four":4} , null , true ],"input":[]}`,
      `{"tools":[{"type":"function","name":"f","description":"a,\\"b\\" ]} é ✓ 😀 \\ud83d\\ude00"}],"input":"x"}`,
      `{"tools":[1],"tools":[2]}`,
      `{"too\\u006cs":[1],"tools":[2]}`,
      `{"__proto__":{"tools":[1]},"tools":[{"__proto__":null}]}`
    ]
    const invalid = [
      `{"tools":[1,,2]}`,
      `{"tools":[,1],"input":[]}`,
      `{"input":[],"tools":[1,]}`,
      `{"tools":[1 2],"input":"x"}`,
      `{"tools":[{"a":1]],"input":[1]}`,
      `{"tools":[tru]}`,
      `{"tools":[{"type":"function","name":"f\\x"}]}`,
      `{"model":"m","tools":${many.slice(0, -1)},{"type":"function" "name":"g"}],"input":[{"role":"user","content":"hi"}]}`,
      `{"model":"m","tools":${many},"input":[{"role":"user","content":"hi"}],}`,
      `{"model":"m","tools":${many.replace("get_location_1500", "get_location\\q")},"input":"x"}`
    ]
    return { valid, invalid }
  }

  /**
   * Each of `valid` parsed by `parse` and `parseLazily` (in chunks of `small` bytes, then of 64 KiB) gives
   * `JSON.parse`'s value, key order included; each of `invalid` fails with `JSON.parse`'s message.
   */
  const expectLikeJsonParse = (
    { invalid, valid }: { readonly valid: ReadonlyArray<string>; readonly invalid: ReadonlyArray<string> },
    small: number
  ) =>
    Effect.gen(function*() {
      const parseWhole = (text: string) => Either.try({ try: (): unknown => JSON.parse(text), catch: (error) => (error as SyntaxError).message })
      for (const text of valid) {
        for (const size of [small, 65_536]) {
          const chunks = chunked(text, size)
          const found = yield* JsonSlices.scan(chunks, 64, 4096)
          expectSame(yield* JsonSlices.parse(chunks, found, parseOrMessage), text, `${text.slice(0, 80)} (chunks of ${size})`)
          const lazy = yield* JsonSlices.parseLazily(chunks, found, parseWhole)
          const body = lazy.input === undefined ? lazy.body : {
            ...(lazy.body as object),
            input: yield* Effect.forEach(Array.from({ length: lazy.input.length }, (_, index) => index), lazy.input.element)
          }
          expectSame(body, text, `${text.slice(0, 80)} (lazily, chunks of ${size})`)
        }
      }
      for (const text of invalid) {
        const message = (() => {
          try {
            JSON.parse(text)
          } catch (error) {
            return (error as SyntaxError).message
          }
          throw new Error(`parses: ${text.slice(0, 80)}`)
        })()
        for (const size of [small, 65_536]) {
          const chunks = chunked(text, size)
          const found = yield* JsonSlices.scan(chunks, 64, 4096)
          expect(yield* Effect.flip(JsonSlices.parse(chunks, found, parseOrMessage)), text.slice(0, 80)).toBe(message)
          const lazy = yield* Effect.either(JsonSlices.parseLazily(chunks, found, parseWhole))
          const failure = Either.isLeft(lazy)
            ? lazy.left
            : yield* Effect.flip(lazy.right.input === undefined ? Effect.fail("parsed") : lazy.right.input.rest)
          expect(failure, text.slice(0, 80)).toBe(message)
        }
      }
    })

  it.effect("the tools are parsed a run at a time: JSON.parse's value, key order included, and JSON.parse's error at the same position", () =>
    expectLikeJsonParse(toolBodies(), 3))

  it.effect("a large tools array is never given to JSON.parse whole: a run of tools at a time", () =>
    Effect.gen(function*() {
      const [text] = toolBodies().valid
      const chunks = chunked(text!, 65_536)
      const found = yield* JsonSlices.scan(chunks, 64)
      expect(found.tools?.items).toHaveLength(2 * 2000)
      const { largest, parsed } = yield* largestParse(chunks, found)
      expectSame(parsed, text!, "tools")
      const toolsBytes = found.tools!.end - found.tools!.start
      expect(toolsBytes).toBeGreaterThan(8 * 32 * 1024)
      expect(largest).toBeLessThan(2 * 32 * 1024)
    }))

  /**
   * Bodies with a `namespace` tool of many tools (the recorded tool search request's deferred functions, each
   * renamed), over `LARGE_ELEMENT_BYTES`, beside other tools, with a long description, with keys the pass
   * cannot vouch for, and malformed inside or around the namespace's tools.
   */
  const namespaceBodies = () => {
    const recorded = JSON.parse(readFixture("responses-sse/vai-openai-tool-search.chunks.txt").split("\n")[0]!) as {
      response: { tools: Array<{ type: string }> }
    }
    const functions = recorded.response.tools.filter((tool) => tool.type === "function")
    expect(functions.length).toBeGreaterThan(0)
    const tools = Array.from({ length: 1000 }, (_, i) => ({ ...functions[i % functions.length]!, name: `get_weather_${i}` }))
    const many = JSON.stringify(tools)
    const namespace = `{"type":"namespace","name":"geo","description":"Places é😀","tools":${many}}`
    const long = "a \\\"long\\\" é😀 description ".repeat(20_000)
    const valid = [
      `{"model":"gpt-5","tools":[${namespace}],"input":"Weather in SF?"}`,
      `{"model":"gpt-5","tools":[{"type":"function","name":"f"},${namespace},${JSON.stringify(functions[0])}],"input":[{"role":"user","content":"hi"}],"stream":true}`,
      `{"tools":[${namespace},${namespace}],"input":"x"}`,
      `{"tools":[{"tools":${many},"type":"namespace","name":"geo","description":"${long}"}],"input":"x"}`,
      `{"tools":[{"type":"namespace","name":"geo","description":"Places","tools": [ ${tools.map((tool) => JSON.stringify(tool)).join(" , ")} ] }],"input":"x"}`,
      `{"tools":[{"type":"namespace","tools":[1],"tools":${many}}],"input":"x"}`,
      `{"tools":[{"type":"namespace","too\\u006cs":${many},"tools":[]}],"input":"x"}`,
      `{"tools":[{"type":"namespace","__proto__":{"tools":[1]},"tools":${many}}],"input":"x"}`,
      `{"tools":[{"type":"function","name":"big","parameters":{"type":"object","description":"${long}"}}],"input":"x"}`,
      `{"tools":[[${many}]],"input":"x"}`
    ]
    const invalid = [
      `{"tools":[{"type":"namespace","tools":${many.slice(0, -1)},]}],"input":"x"}`,
      `{"tools":[{"type":"namespace","tools":${many.replace("get_weather_900", "get_weather\\q")}}],"input":"x"}`,
      `{"tools":[{"type":"namespace","tools":${many.replace("},{\"type\"", "} {\"type\"")}}],"input":"x"}`,
      `{"tools":[{"type":"namespace","tools":${many},}],"input":"x"}`,
      `{"tools":[{"type":"namespace","tools":${many}],"input":"x"}`
    ]
    return { valid, invalid }
  }

  it.effect("a namespace of many tools is parsed a run of its tools at a time: JSON.parse's value and error", () =>
    // ten bodies of about 400 KB: cut every 997 bytes (about 400 cuts each, at every kind of place), not every
    // 3 (a 30 s test on a loaded machine)
    expectLikeJsonParse(namespaceBodies(), 997))

  it.effect("a namespace of many tools is never given to JSON.parse whole: a run of its tools at a time", () =>
    Effect.gen(function*() {
      for (const text of namespaceBodies().valid.slice(0, 4)) {
        const chunks = chunked(text, 65_536)
        const found = yield* JsonSlices.scan(chunks, 64)
        const namespace = found.tools!.items[1]! - found.tools!.items[0]! > JsonSlices.LARGE_ELEMENT_BYTES ? 0 : 1
        expect(found.tools!.items[2 * namespace + 1]! - found.tools!.items[2 * namespace]!).toBeGreaterThan(8 * 32 * 1024)
        const { largest, parsed } = yield* largestParse(chunks, found)
        expectSame(parsed, text, text.slice(0, 80))
        expect(largest, text.slice(0, 80)).toBeLessThan(2 * 32 * 1024)
      }
    }))
  /**
   * Bodies with a long array or a large object where no other slicing reaches (an unknown field, `metadata`,
   * `text.format.schema`'s `enum`, a tool's `parameters`, an input item's part, nested arrays of arrays), the
   * recorded tool request's function around it; malformed inside or around it.
   */
  const wideBodies = () => {
    const recorded = JSON.parse(readFixture("responses-json/pai-gpt4o-two-parallel-function-calls.json")) as { tools: Array<{ parameters: object }> }
    const tool = recorded.tools[0]!
    const zeros = `[${"0,".repeat(40_000)}0]`
    const mixed = JSON.stringify(Array.from({ length: 6000 }, (_, i) => i % 3 === 0 ? { n: i, s: "é😀,]" } : i % 3 === 1 ? [i, "x"] : `s${i}`))
    const members = JSON.stringify(Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`k${i}`, [i, { v: "😀" }]])))
    const withParams = (enumText: string) =>
      JSON.stringify({ ...tool, parameters: { type: "object", properties: { x: { enum: "ENUM" } } } }).replace(`"ENUM"`, enumText)
    const valid = [
      `{"model":"text","input":"hi","client_blob":${zeros}}`,
      `{"model":"text","input":[{"role":"user","content":"hi"}],"client_blob": [ ${"0 , ".repeat(20_000)}1 ] ,"stream":true}`,
      `{"model":"text","input":"hi","text":{"format":{"type":"json_schema","name":"x","schema":{"enum":${zeros}}}}}`,
      `{"model":"text","input":"hi","tools":[${withParams(zeros)}]}`,
      `{"model":"text","input":"hi","tools":[${withParams(mixed)},${JSON.stringify(tool)}]}`,
      // a part of an element over LARGE_ELEMENT_BYTES (a smaller element is still parsed at once)
      `{"model":"text","input":[{"role":"user","content":[{"type":"input_text","text":"hi","blob":[${"0,".repeat(150_000)}0]}]}]}`,
      `{"input":"x","a":[${zeros},${zeros},[],[[${zeros}]]],"b":${mixed}}`,
      `{"input":"x","m":${members},"m":{"k1":1},"__proto__":${members},"1":${zeros},"0":1}`,
      `{"input":"x","m":{"__proto__":${zeros},"a":1,"a":${zeros}}}`,
      `[${zeros},{"input":${zeros}}]`,
      ` ${zeros} `,
      `{"input":"x","d":"${"a \\\"long\\\" é😀 ".repeat(20_000)}","e":[${`"${"é😀 ".repeat(70_000)}",`.repeat(2)}1]}`
    ]
    const invalid = [
      `{"input":"x","a":[${"0,".repeat(40_000)},0]}`,
      `{"input":"x","a":[,${"0,".repeat(40_000)}0]}`,
      `{"input":"x","a":[${"0,".repeat(40_000)}]}`,
      `{"input":"x","a":[${"0,".repeat(40_000)}0 1]}`,
      `{"input":"x","a":[${"0,".repeat(40_000)}0}}`,
      `{"input":"x","a":[${"0,".repeat(40_000)}0]`,
      `{"input":"x","a":[${"0,".repeat(40_000)}0]]}`,
      `{"input":"x","a":${members.replace(`"k3000":`, `"k3000" `)}}`,
      `{"input":"x","a":${members.replace(`"k3000":`, `3000:`)}}`,
      `{"input":"x","a":${members},}`,
      `{"input":"x","a":{${`"k":${zeros}`}}}}`,
      `{"input":"x","a":[${"0,".repeat(40_000)}tru]}`,
      `{"input":"x","tools":[${withParams(`[${"0,".repeat(40_000)},0]`)}]}`
    ]
    return { valid, invalid }
  }

  it.effect("strings past the passes' loop (their content skipped to the next quote or backslash): escapes at every place, cut by chunks and slices, a chunk read twice: JSON.parse's value and error", () =>
    Effect.gen(function*() {
      // the passes read a string's first 32 bytes one by one, then search for its next quote or backslash:
      // escapes of quotes and backslashes, brackets and commas, a multi-byte character, before, at and after
      // that point and near the string's end
      const escapes = [`\\"`, `\\\\`, `\\\\\\"`, `\\u0022`, `\\n`, `é`, `],{:`]
      const strings: Array<string> = []
      for (let k = 0; k < 80; k++) {
        const escape = escapes[k % escapes.length]!
        strings.push(`"${"y".repeat(k)}${escape}${"z".repeat(40)}${escapes[(k + 3) % escapes.length]}${"w".repeat(k % 9)}"`)
      }
      const text = (tail: string) =>
        `{"model":"m","input":[{"role":"user","content":${strings[40]}},{"role":"user","content":[${strings.join(",")}]}],` +
        `"tools":[{"type":"function","name":"f","description":${strings[33]}}],` +
        // a value over RUN_BYTES (split at its own commas) of the same strings, and a long string
        `"x":{"k":[${Array.from({ length: 8 }, () => strings.join(",")).join(",")}],"s":"${"\\\"q\\\" ".repeat(8000)}"}${tail}}`
      const body = text("")
      expect(body.length).toBeGreaterThan(2 * 32 * 1024)
      for (const size of [7, 33, 64, 1000, 65_536]) {
        // identical chunks are one object, read again (the repeated strings, with chunks of their period)
        const objects = new Map<string, Uint8Array>()
        const chunks = chunked(body, size).map((chunk) => {
          const key = Buffer.from(chunk).toString("latin1")
          if (!objects.has(key)) objects.set(key, chunk)
          return objects.get(key)!
        })
        for (const longBytes of [40, undefined]) {
          const found = yield* JsonSlices.scan(chunks, 64, 4096, longBytes)
          expect(found.input?.items, `chunks of ${size}`).toHaveLength(4)
          expect(found.tools?.items, `chunks of ${size}`).toHaveLength(2)
          // the value over RUN_BYTES is split (a pass that lost its place in a string would leave it whole)
          const parse = vi.spyOn(JSON, "parse")
          const parsed = yield* JsonSlices.parse(chunks, found, whole)
          const given = parse.mock.calls.map(([text]) => text.length)
          parse.mockRestore()
          expectSame(parsed, body, `chunks of ${size}, long strings over ${longBytes}`)
          expect(Math.max(...given), `chunks of ${size}, long strings over ${longBytes}`).toBeLessThan(2 * 32 * 1024)
          expectSame(yield* JsonSlices.parse(chunks, found, whole, 0), body, `every element large, chunks of ${size}`)
        }
      }
      // the same with a string ending early or not at all: JSON.parse's failure
      for (const invalid of [text(`,"t":"${"a".repeat(50)}\\"}`), text(`,"t":"${"a".repeat(50)}`), body.replace(`"s":"`, `"s":"\\`)]) {
        expect(() => JSON.parse(invalid)).toThrow()
        for (const size of [33, 65_536]) {
          const chunks = chunked(invalid, size)
          expect(yield* Effect.flip(JsonSlices.parse(chunks, yield* JsonSlices.scan(chunks, 64, 4096, 40), whole)), `chunks of ${size}`).toBe("invalid")
        }
      }
    }))

  // 25 bodies, each parsed four ways (chunks of 4,093 and 65,536 bytes, parse and parseLazily): 19-23 s at load 20
  it.effect("a long array or a large object anywhere is parsed a run of its elements at a time: JSON.parse's value and error", () =>
    expectLikeJsonParse(wideBodies(), 4093), 120_000)

  it.effect("a long array anywhere is never given to JSON.parse whole: an unknown field, text.format.schema, a tool's parameters, a part", () =>
    Effect.gen(function*() {
      for (const text of wideBodies().valid) {
        const chunks = chunked(text, 65_536)
        const found = yield* JsonSlices.scan(chunks, 64)
        const { largest, parsed } = yield* largestParse(chunks, found)
        expectSame(parsed, text, text.slice(0, 80))
        expect(largest, text.slice(0, 80)).toBeLessThan(2 * 32 * 1024)
      }
    }))
})
