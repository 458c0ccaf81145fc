/**
 * A request body parsed without holding the event loop for long: one pass over its UTF-8 bytes, chunk by
 * chunk as they were read (`internal/jsonSlices/pass.ts`), checks the nesting bound (before `JSON.parse`,
 * so that no recursion ever meets a deep value), finds the elements of the top-level `input` and `tools`
 * arrays and notes the body's long strings; the body is then decoded and parsed without them, the `input`
 * elements one by one and the tools a run at a time, with a yield to other requests every few milliseconds. Whole-body steps are what this avoids:
 * `JSON.parse` of a 16 MiB body is one call of tens of milliseconds, and so are decoding it into one
 * string, V8's flattening of a string built from its chunks (at the string's first indexed read), and
 * copying the chunks into one buffer (fresh memory: a page fault per 4 KiB). Parsed this way no stretch is
 * longer than an element.
 *
 * An element can be most of the body: one message of 300,000 content parts is 10 MB, one `JSON.parse` of
 * 0.4 s. An element larger than `LARGE_ELEMENT_BYTES` gets the same treatment one level deeper: a pass
 * over its bytes finds its `content` and `output` arrays (a message's and a function call output's parts),
 * and the element is parsed without them, then its parts, a run of them at a time. That pass also counts
 * the parts, so a reader can refuse too many before any is parsed (`Elements.partsOf`).
 *
 * A string of more than `LONG_STRING_BYTES` (a 10 MB text part, `instructions`, a tool's description, a
 * string `input`) is parsed apart, in slices, and put back in its place (`internal/jsonSlices/longStrings.ts`),
 * wherever it is: in the rest of the body, in a large element, in a part. And the rest of the body, the rest
 * of a large element, and a tool or part of more than a run are parsed a run of their members (elements) at
 * a time, a large one the same way one level deeper (`internal/jsonSlices/values.ts`): an unknown field of
 * 100 arrays of 78,000 zeros was one `JSON.parse` of hundreds of milliseconds. What is still parsed at once is
 * an input element of at most `LARGE_ELEMENT_BYTES` and a run.
 *
 * The result is exactly `JSON.parse` of the body decoded as UTF-8 (a leading byte order mark dropped, as
 * `TextDecoder` does): whatever the pass cannot vouch for (a body or a large element that is no object, an
 * escaped or repeated key at its top level, an array or a rest that does not parse) is parsed at once (but
 * for its long strings), and a body that does not parse is decoded and parsed whole, which gives the
 * syntax error of a malformed body.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type Budget, type JsonText, makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"
import { bomLength, type Chunks, decode, makeTextOf, sizeOf } from "./jsonSlices/bytes.js"
import { LongStrings, type Parsed, tryParse } from "./jsonSlices/longStrings.js"
import { type ArrayAt, keyBytes, type ObjectScan, scanObject } from "./jsonSlices/pass.js"
import { parseValue, RUN_BYTES } from "./jsonSlices/values.js"

export type { Chunks } from "./jsonSlices/bytes.js"
export { parseString, STRING_SLICE_BYTES } from "./jsonSlices/longStrings.js"
export type { ArrayAt } from "./jsonSlices/pass.js"

/**
 * What the pass found: where the nesting passed the bound (-1: it did not), where an object of too many
 * members is, the `input` elements, the `tools` array, the long strings.
 */
export interface Scan {
  /** The offset of the first character (UTF-16 code units of the decoded body) past the bound, or -1. */
  readonly deepAt: number
  /**
   * Where an object of more members than `maxMembers` or an array of more elements than `maxElements` is
   * (the pass stopped there; see `ObjectScan.wide`).
   */
  readonly wide: ObjectScan["wide"]
  /** The `input` array (`[` to `]` inclusive) and its elements, as flat `[start, end)` byte offset pairs. */
  readonly input: ArrayAt | undefined
  /** The `tools` array, as `input` (its length known before anything is parsed). */
  readonly tools: ArrayAt | undefined
  /** The string values (not keys) of more than `LONG_STRING_BYTES`, at any depth, as `ObjectScan.strings`. */
  readonly strings: ReadonlyArray<number>
}

/** The keys whose arrays hold the body's input items and its tools. */
const BODY_KEYS = [keyBytes("input"), keyBytes("tools")]

/**
 * The keys whose arrays hold an input item's parts: a message's `content`, a function call output's `output`
 * (in this order: the decoder bounds the first of them that is an array).
 */
const PARTS_NAMES = ["content", "output"] as const
const PARTS_KEYS = PARTS_NAMES.map(keyBytes)

/** The key whose array holds a `namespace` tool's tools (the API's `NamespaceToolParam.tools`). */
const NAMESPACE_NAMES = ["tools"] as const
const NAMESPACE_KEYS = NAMESPACE_NAMES.map(keyBytes)

/**
 * An element of `input` larger than this is parsed part by part (see `parseLarge`); below it, one
 * `JSON.parse` of the element takes a few milliseconds at most.
 */
export const LARGE_ELEMENT_BYTES = 256 * 1024

/**
 * A string of more bytes than this (between its quotes) is parsed apart, in slices (see the module doc);
 * `JSON.parse` of this much takes about a millisecond.
 */
export const LONG_STRING_BYTES = 256 * 1024

/**
 * One pass over `chunks` (strings skipped), reading the clock after every `slice` bytes and yielding once a
 * few milliseconds of work passed (`makeBudget`); stops as soon as the nesting of objects and arrays passes
 * `limit`, an object has more than `maxMembers` members or an array more than `maxElements` elements. By time, not by bytes: until V8 optimises this
 * loop, a request's first megabytes go several times slower (256 KiB between yields took 10-20 ms of a fresh
 * gateway's CPU). Strings of more than `longBytes` bytes are noted.
 */
export const scan = (
  chunks: Chunks,
  limit: number,
  slice = 1 << 14,
  longBytes = LONG_STRING_BYTES,
  maxMembers = Infinity,
  maxElements = Infinity
): Effect.Effect<Scan> => {
  const size = sizeOf(chunks)
  const pass = Effect.map(scanObject(chunks, 0, size, BODY_KEYS, limit, longBytes, slice, maxMembers, maxElements), (found) => ({
    deepAt: found.deepAt,
    wide: found.wide,
    input: found.arrays[0],
    tools: found.arrays[1],
    strings: found.strings
  }))
  // a body of more than a slice is passed over from a turn of the event loop of its own: the turn that read
  // its last chunk (the request's I/O callbacks) is not made longer by the pass's first budget
  return size > slice ? Effect.andThen(yieldToIo, pass) : pass
}

/**
 * The body parsed but for its `input` elements, and readers of the elements: `body` is the parsed body,
 * `input` `null` in it when `elements` is given, else the whole body (it has no `input` array the pass
 * vouches for: a string `input`, none). Its `tools` array, when the pass vouches for it, is parsed a run of
 * tools at a time (see `sliceBody`).
 */
interface Sliced {
  readonly body: unknown
  readonly elements: SlicedElements | undefined
}

/** The `input` elements of a `Sliced` body, each parsed when it is read. */
interface SlicedElements {
  readonly length: number
  /** Whether element `index` is larger than `LARGE_ELEMENT_BYTES` (then it is read with `large`). */
  readonly isLarge: (index: number) => boolean
  /** Element `index`, parsed at once. */
  readonly small: (index: number) => Parsed
  /** The pass over large element `index` (kept for the element last asked for: counted, then parsed). */
  readonly scanLarge: (index: number) => Effect.Effect<ObjectScan>
  /**
   * Large element `index`, parsed part by part (`parseLarge`), yielding with `budget`; with `keep` false,
   * only checked (its value is `undefined`).
   */
  readonly large: (index: number, budget: Budget, keep: boolean) => Effect.Effect<Parsed>
}

/**
 * The body as `found` lets it be read (see `Sliced`), its long strings parsed in slices, yielding with
 * `budget`; `undefined` when the pass cannot vouch for it or it does not parse (then it is parsed whole,
 * which gives the error), and when there is nothing to slice (no `input` or `tools` array, no long string).
 *
 * The rest of the body is parsed with `null` in place of the `input` and `tools` arrays, then the `tools`
 * array's elements a run of them at a time (`parseRuns`): 10,000 tools (1.6 MB) parsed with the rest were
 * one `JSON.parse` of about 15 ms. The tools' array takes the place of its `null`, among the keys where
 * `JSON.parse` put it.
 */
const sliceBody = (
  chunks: Chunks,
  found: Scan,
  largeBytes: number,
  budget: Budget,
  texts: Array<JsonText> | undefined
): Effect.Effect<Sliced | undefined> => {
  const { input, tools } = found
  // a leading byte order mark is no character of the text
  const start = bomLength(chunks)
  const size = sizeOf(chunks)
  if (input === undefined && tools === undefined && found.strings.length === 0 && size - start <= RUN_BYTES) {
    return Effect.succeed(undefined)
  }
  const textOf = makeTextOf(chunks)
  const longs = new LongStrings(chunks, textOf, found.strings, budget, texts)
  const arrays = [input, tools].filter((array) => array !== undefined).sort((a, b) => a.start - b.start)
  return Effect.gen(function*() {
    // the rest of the body, a run of members at a time (`parseValue`), `null` in place of the arrays
    const parsed = yield* parseValue(longs, start, size, arrays.flatMap((array) => [array.start, array.end]))
    if (parsed === undefined) return undefined
    const body = parsed.value as { input?: unknown; tools?: unknown } | null
    if (arrays.length === 0) return { body, elements: undefined }
    if (typeof body !== "object" || body === null) return undefined
    if ((input !== undefined && body.input !== null) || (tools !== undefined && body.tools !== null)) return undefined
    if (tools !== undefined) {
      const values = yield* parseRuns(longs, tools.items, budget, true, { chunks, textOf, largeBytes, texts })
      if (values === undefined) return undefined
      body.tools = values
    }
    return { body, elements: input === undefined ? undefined : sliceElements(chunks, textOf, input.items, largeBytes, texts) }
  })
}

/**
 * Where the elements of the body's `tools` array are read from, for a tool larger than `largeBytes` (a
 * `namespace` of many tools): see `parseRuns`.
 */
interface LargeTools {
  readonly chunks: Chunks
  readonly textOf: (start: number, end: number) => string
  readonly largeBytes: number
  readonly texts: Array<JsonText> | undefined
}

/**
 * The elements of an array (at `items`, flat `[start, end)` byte offset pairs, split by the pass at the
 * array's own commas) parsed a run of them at a time, as an array of them: one decoding and one `JSON.parse`
 * per `RUN_BYTES` (a content part is often 30 bytes, a tool 150), not per element; an element larger than
 * that is a run of its own. Yields with `budget`. `undefined` when a run does not parse (then the array
 * does not: its pieces are the array's text between its commas); with `keep` false the values are dropped
 * as they are parsed (the array given is empty).
 *
 * With `tools` (the body's `tools` array), an element of more than `tools.largeBytes` bytes is parsed as a
 * large input element is (`parseLarge`), with its own `tools` array (a namespace's: 10,000 tools in one
 * namespace were one `JSON.parse` of 1.6 MB) parsed a run of tools at a time.
 */
const parseRuns = (
  longs: LongStrings,
  items: ReadonlyArray<number>,
  budget: Budget,
  keep: boolean,
  tools?: LargeTools
): Effect.Effect<Array<unknown> | undefined> =>
  Effect.gen(function*() {
    const count = items.length / 2
    const values: Array<unknown> = new Array(keep ? count : 0)
    for (let p = 0; p < count;) {
      if (tools !== undefined && items[2 * p + 1]! - items[2 * p]! > tools.largeBytes) {
        if (budget.tick()) yield* yieldToIo
        const start = items[2 * p]!, end = items[2 * p + 1]!
        const found = yield* scanObject(tools.chunks, start, end, NAMESPACE_KEYS, Infinity, tools.largeBytes, 1 << 14)
        const tool = yield* parseLarge(tools.chunks, tools.textOf, start, end, found, budget, keep, tools.texts, NAMESPACE_NAMES)
        if (tool === undefined) return undefined
        if (keep) values[p] = tool.value
        p++
        continue
      }
      let q = p + 1
      while (q < count && items[2 * q + 1]! - items[2 * p]! <= RUN_BYTES) q++
      if (budget.tick(q - p)) yield* yieldToIo
      if (q === p + 1 && items[2 * p + 1]! - items[2 * p]! > RUN_BYTES) {
        // one element larger than a run: a run of its members at a time (`parseValue`)
        const element = yield* parseValue(longs, items[2 * p]!, items[2 * p + 1]!)
        if (element === undefined) return undefined
        if (keep) values[p] = element.value
        p = q
        continue
      }
      const run = yield* longs.parse(["[", [items[2 * p]!, items[2 * q - 1]!], "]"])
      if (run === undefined) return undefined
      if (keep) {
        const parsed = run.value as Array<unknown>
        for (let at = 0; at < parsed.length; at++) values[p + at] = parsed[at]
      }
      p = q
    }
    return values
  })

/** Readers of the `input` elements at `items` (flat `[start, end)` byte offset pairs), read with `textOf`. */
const sliceElements = (
  chunks: Chunks,
  textOf: (start: number, end: number) => string,
  items: ReadonlyArray<number>,
  largeBytes: number,
  texts: Array<JsonText> | undefined
): SlicedElements => {
  // the pass over the large element last asked for: its parts are counted, then it is parsed
  let scanned: { readonly index: number; readonly found: ObjectScan } | undefined
  const scanLarge = (k: number): Effect.Effect<ObjectScan> =>
    scanned?.index === k
      ? Effect.succeed(scanned.found)
      : Effect.map(scanObject(chunks, items[2 * k]!, items[2 * k + 1]!, PARTS_KEYS, Infinity, largeBytes, 1 << 14), (found) => {
        scanned = { index: k, found }
        return found
      })
  return {
    length: items.length / 2,
    isLarge: (k) => items[2 * k + 1]! - items[2 * k]! > largeBytes,
    small: (k) => tryParse(textOf(items[2 * k]!, items[2 * k + 1]!)),
    scanLarge,
    large: (k, budget, keep) =>
      Effect.flatMap(scanLarge(k), (parts) => parseLarge(chunks, textOf, items[2 * k]!, items[2 * k + 1]!, parts, budget, keep, keep ? texts : undefined))
  }
}

/**
 * A large element (bytes `[start, end)`, read with `textOf`) parsed as the body is, one level deeper: `found`
 * (the pass over its bytes) gives its `content` and `output` arrays, the element is parsed with `null` for
 * them, then their elements (the item's parts) one by one, yielding with `budget`. Exactly `JSON.parse` of
 * the element: the pass splits the arrays at their own commas, so every piece parses when the element does;
 * an element whose arrays the pass cannot vouch for (see `ObjectScan.arrays`) is parsed at once. Its long
 * strings (`found.strings`: a 10 MB text part) are parsed on their own, in slices (see `LongStrings`).
 *
 * `names` are the keys of the arrays to split (a large tool's: `tools`, a namespace's tools); `found` is the
 * pass made with their keys, in this order.
 *
 * With `keep` false the element is only checked: it parses (`{ value: undefined }`) or not (`undefined`).
 * Its parts are then dropped as soon as they are parsed: kept, the parts of an element of 300,000 of them
 * were all alive until its last was parsed, and each young-generation collection meanwhile copied them.
 */
const parseLarge = (
  chunks: Chunks,
  textOf: (start: number, end: number) => string,
  start: number,
  end: number,
  found: ObjectScan,
  budget: Budget,
  keep: boolean,
  texts: Array<JsonText> | undefined,
  names: ReadonlyArray<string> = PARTS_NAMES
): Effect.Effect<Parsed> =>
  Effect.gen(function*() {
    const longs = new LongStrings(chunks, textOf, found.strings, budget, texts)
    const arrays = names.flatMap((name, k) => {
      const array = found.arrays[k]
      return array === undefined ? [] : [{ name, array }]
    }).sort((a, b) => a.array.start - b.array.start)
    // the rest of the element, a run of members at a time (`parseValue`), `null` in place of the arrays
    const element = yield* parseValue(longs, start, end, arrays.flatMap(({ array }) => [array.start, array.end]))
    if (arrays.length === 0) return keep || element === undefined ? element : CHECKED
    if (element === undefined) return undefined
    for (const { array, name } of arrays) {
      const parts = yield* parseRuns(longs, array.items, budget, keep)
      if (parts === undefined) return undefined
      // the member `JSON.parse` made (`null` in place of the array) keeps its place among the keys
      ;(element.value as { [key: string]: unknown })[name] = parts
    }
    return keep ? element : CHECKED
  })

/** What `parseLarge` gives for an element it only checked. */
const CHECKED: Parsed = { value: undefined }


/**
 * The parsed body (exactly `JSON.parse` of `chunks` decoded) using `found` (see the module doc);
 * `parseWhole` parses the decoded body in one call, and gives the error of a malformed body; an element of
 * more than `largeBytes` bytes is parsed part by part. The long strings parsed in slices whose JSON text
 * is known (see `parseString`) are pushed to `texts`, when given, as they are parsed (a body parsed whole
 * after all has strings of its own, which none of them is).
 */
export const parse = <E>(
  chunks: Chunks,
  found: Scan,
  parseWhole: (text: string) => Effect.Effect<unknown, E>,
  largeBytes = LARGE_ELEMENT_BYTES,
  texts?: Array<JsonText>
): Effect.Effect<unknown, E> =>
  Effect.gen(function*() {
    const budget = makeBudget()
    const sliced = yield* sliceBody(chunks, found, largeBytes, budget, texts)
    if (sliced === undefined) return yield* parseWhole(decode(chunks))
    const input = sliced.elements
    if (input === undefined) return sliced.body
    const elements: Array<unknown> = new Array(input.length)
    for (let k = 0; k < input.length; k++) {
      if (budget.tick()) yield* yieldToIo
      const element = input.isLarge(k) ? yield* input.large(k, budget, true) : input.small(k)
      if (element === undefined) return yield* parseWhole(decode(chunks))
      elements[k] = element.value
    }
    ;(sliced.body as { input: unknown }).input = elements
    return sliced.body
  })

/**
 * A body whose `input` elements are parsed as they are read: `body` is the parsed body, `input` `null` in it
 * when `input` is given (then the array's elements, as `ResponsesRequestDecoder.decodeElements` reads
 * them), else undefined (the body has no `input` array the pass vouches for, and was parsed at once but for
 * its long strings). A reader that keeps only what it makes of each
 * element lets the element become garbage at once: the young generation's collections then find it dead
 * instead of copying it (a 20,000-item body parsed whole is about 10 MB of objects alive until the request
 * ends).
 */
export interface Lazy<E> {
  readonly body: unknown
  readonly input: Elements<E> | undefined
}

/**
 * The number of an input item's parts, known before they are parsed: the length of its `content` array,
 * else of its `output` array (the array `ResponsesRequestDecoder` bounds).
 */
export interface PartsCount {
  readonly field: "content" | "output"
  readonly length: number
}

/**
 * The elements of `input`: `element(index)` parses one (an element that does not parse fails with the
 * whole body's error; a small one is an `Either`, no fiber step; a large one is parsed part by part,
 * yielding); `partsOf(index)` counts a large element's parts before they are parsed (`undefined` for a
 * small element, and when the pass cannot vouch for the count); `rest` parses, yielding, those not read yet
 * (only to check them: what it parses is dropped at once) and fails with the error of the first that does
 * not parse (for a reader that failed early: a body that is
 * no JSON answers as such, whatever a reader found before the syntax error; an element only counted is not
 * read).
 */
export interface Elements<E> {
  readonly length: number
  readonly element: (index: number) => Effect.Effect<unknown, E>
  readonly partsOf: (index: number) => Effect.Effect<PartsCount | undefined> | undefined
  readonly rest: Effect.Effect<void, E>
}

/**
 * `parse`, the `input` elements left to be parsed as they are read (`Lazy`); `parseWhole`, `largeBytes`
 * and `texts` as in `parse` (the texts of an element's strings are pushed when it is read to be kept). Every element parses when the whole body does (the pass splits the array at its own
 * commas), so an element that does not parse gives the whole body's error.
 */
export const parseLazily = <E>(
  chunks: Chunks,
  found: Scan,
  parseWhole: (text: string) => Either.Either<unknown, E>,
  largeBytes = LARGE_ELEMENT_BYTES,
  texts?: Array<JsonText>
): Effect.Effect<Lazy<E>, E> => {
  const budget = makeBudget()
  return Effect.flatMap(sliceBody(chunks, found, largeBytes, budget, texts), (sliced): Effect.Effect<Lazy<E>, E> => {
    if (sliced === undefined) return Either.map(parseWhole(decode(chunks)), (body) => ({ body, input: undefined }))
    const input = sliced.elements
    if (input === undefined) return Effect.succeed({ body: sliced.body, input: undefined })
    // past every element read so far
    let next = 0
    // the whole body parsed, once an element did not parse (it cannot parse then: see above)
    let whole: Either.Either<unknown, E> | undefined
    const wholeElement = (index: number): Either.Either<unknown, E> => {
      whole ??= parseWhole(decode(chunks))
      return Either.map(whole, (body) => (body as { input?: ReadonlyArray<unknown> } | null)?.input?.[index])
    }
    // element `index`, or with `keep` false only checked (a large one's parts dropped as they are parsed)
    const read = (index: number, keep: boolean): Effect.Effect<unknown, E> => {
      if (whole !== undefined) return wholeElement(index)
      next = Math.max(next, index + 1)
      if (input.isLarge(index)) {
        return Effect.flatMap(input.large(index, budget, keep), (parsed) => parsed === undefined ? wholeElement(index) : Effect.succeed(parsed.value))
      }
      const parsed = input.small(index)
      return parsed === undefined ? wholeElement(index) : Either.right(parsed.value)
    }
    const element = (index: number) => read(index, true)
    const partsOf = (index: number): Effect.Effect<PartsCount | undefined> | undefined =>
      input.isLarge(index) ? Effect.map(input.scanLarge(index), countParts) : undefined
    const rest = Effect.gen(function*() {
      for (let index = next; index < input.length; index++) {
        if (budget.tick()) yield* yieldToIo
        yield* read(index, false)
      }
    })
    return Effect.succeed({ body: sliced.body, input: { length: input.length, element, partsOf, rest } })
  })
}

/** What `found` (the pass over an element) tells of its parts' number (see `PartsCount`). */
const countParts = (found: ObjectScan): PartsCount | undefined => {
  const [content, output] = found.arrays
  if (content !== undefined) return { field: "content", length: content.items.length / 2 }
  if (found.noArray[0] === true && output !== undefined) return { field: "output", length: output.items.length / 2 }
  return undefined
}
