/**
 * A request body parsed without holding the event loop for long: one pass over its UTF-8 bytes, chunk by
 * chunk as they were read, checks the nesting bound (before `JSON.parse`, so that no recursion ever meets
 * a deep value) and finds the elements of the top-level `input` array; the body is then decoded and parsed
 * without them, and the elements one by one, with a yield to other requests every few milliseconds.
 * Whole-body steps are what this avoids: `JSON.parse` of a 16 MiB body is one call of tens of
 * milliseconds, and so are decoding it into one string, V8's flattening of a string built from its
 * chunks (at the string's first indexed read), and copying the chunks into one buffer (fresh memory: a
 * page fault per 4 KiB). Parsed this way no stretch is longer than an element.
 *
 * The pass reads bytes: every byte JSON's syntax cares about is ASCII, and no byte of a multi-byte UTF-8
 * sequence is. The result is exactly `JSON.parse` of the body decoded as UTF-8 (a leading byte order mark
 * dropped, as `TextDecoder` does): whatever the pass cannot vouch for (a body that is no object, an escaped
 * or repeated key at the top level, an element or a rest that does not parse) is decoded and parsed whole,
 * which also gives the syntax error of a malformed body.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"

/** A body as it was read: its chunks of bytes, in order. Offsets into it count bytes from its start. */
export type Chunks = ReadonlyArray<Uint8Array>

/** What the pass found: where the nesting passed the bound (-1: it did not), and the `input` elements. */
export interface Scan {
  /** The offset of the first character (UTF-16 code units of the decoded body) past the bound, or -1. */
  readonly deepAt: number
  /** The `input` array (`[` to `]` inclusive) and its elements, as flat `[start, end)` byte offset pairs. */
  readonly input: { readonly start: number; readonly end: number; readonly items: ReadonlyArray<number> } | undefined
}

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9

/** `"input"`, quotes included, as bytes. */
const INPUT_KEY = new TextEncoder().encode("\"input\"")

const sizeOf = (chunks: Chunks): number => chunks.reduce((size, chunk) => size + chunk.length, 0)

/** The bytes `[start, end)` of `chunks` (fewer past their end), without a copy when they lie in one chunk. */
const bytesOf = (chunks: Chunks, start: number, to: number): Uint8Array => {
  const end = Math.min(to, sizeOf(chunks))
  if (end <= start) return new Uint8Array(0)
  let base = 0
  let index = 0
  while (index < chunks.length && base + chunks[index]!.length <= start) base += chunks[index++]!.length
  const first = chunks[index]!
  if (end - base <= first.length) return first.subarray(start - base, end - base)
  const bytes = new Uint8Array(end - start)
  for (let at = 0; at < bytes.length; index++) {
    const chunk = chunks[index]!
    const piece = chunk.subarray(Math.max(0, start - base), Math.min(chunk.length, end - base))
    bytes.set(piece, at)
    at += piece.length
    base += chunk.length
  }
  return bytes
}

// the body from its first byte: a leading byte order mark is dropped (`TextDecoder`'s default)
const bodyDecoder = new TextDecoder()
// a part of the body after its first byte: a byte order mark there is a character, kept
const partDecoder = new TextDecoder("utf-8", { ignoreBOM: true })

/** The whole body as text, a leading byte order mark dropped. */
export const decode = (chunks: Chunks): string => {
  let text = ""
  for (const chunk of chunks) text += bodyDecoder.decode(chunk, { stream: true })
  return text + bodyDecoder.decode()
}

/**
 * One pass over `chunks` (strings skipped), reading the clock after every `slice` bytes and yielding once a
 * few milliseconds of work passed (`makeBudget`); stops as soon as the nesting of objects and arrays passes
 * `limit`. By time, not by bytes: until V8 optimises this loop, a request's first megabytes go several
 * times slower (256 KiB between yields took 10-20 ms of a fresh gateway's CPU).
 */
export const scan = (chunks: Chunks, limit: number, slice = 1 << 14): Effect.Effect<Scan> =>
  Effect.gen(function*() {
    let depth = 0
    let inString = false
    let escaped = false
    let stringIsKey = false
    let keyEscaped = false
    // how much of `"input"` the key read so far matches (-1: it is another key)
    let keyMatch = -1
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
    // a leading byte order mark is no character of the text
    const head = bytesOf(chunks, 0, 3)
    let skip = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0
    let base = 0
    let sinceTick = 0
    const budget = makeBudget(undefined, 1)
    for (const chunk of chunks) {
      for (let j = 0; j < chunk.length;) {
        if (sinceTick >= slice) {
          if (budget.tick()) yield* yieldToIo
          sinceTick = 0
        }
        const end = Math.min(chunk.length, j + slice - sinceTick)
        sinceTick += end - j
        for (; j < end; j++) {
          if (skip > 0) {
            skip--
            continue
          }
          const c = chunk[j]!
          if (inString) {
            if (escaped) {
              escaped = false
            } else if (c === 92 /* \ */) {
              escaped = true
              if (stringIsKey) {
                keyEscaped = true
                keyMatch = -1
              }
            } else if (c === 34 /* " */) {
              inString = false
              if (stringIsKey) keyIsInput = keyMatch === 6
            } else if (stringIsKey && keyMatch !== -1) {
              keyMatch = keyMatch < 6 && c === INPUT_KEY[keyMatch] ? keyMatch + 1 : -1
            }
            continue
          }
          if (isSpace(c)) continue
          const i = base + j
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
            stringIsKey = topObject && depth === 1 && expectKey
            if (stringIsKey) {
              expectKey = false
              keyMatch = 1
            }
          } else if (c === 123 || c === 91) {
            if (++depth > limit) return { deepAt: decode([bytesOf(chunks, 0, i)]).length, input: undefined }
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
      base += chunk.length
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
 * The body but for its `input` elements (`rest`, `input` `null` in it) and a reader of the elements, each
 * parsed when it is read (`element`, `undefined` when it does not parse); `undefined` when the pass cannot
 * vouch for the body (see the module doc) or its rest does not parse: then it is parsed whole.
 */
interface Sliced {
  readonly rest: { input: unknown }
  readonly length: number
  readonly element: (index: number) => { readonly value: unknown } | undefined
}

const sliceBody = (chunks: Chunks, found: Scan): Sliced | undefined => {
  const input = found.input
  if (input === undefined) return undefined
  const before = bodyDecoder.decode(bytesOf(chunks, 0, input.start))
  const after = partDecoder.decode(bytesOf(chunks, input.end, sizeOf(chunks)))
  const rest = tryParse(`${before}null${after}`)
  if (rest === undefined || typeof rest.value !== "object" || rest.value === null || (rest.value as { input?: unknown }).input !== null) {
    return undefined
  }
  const items = input.items
  // the elements are mostly read in order: the chunk holding the next one is found from the last one's
  let index = 0
  let base = 0
  const element = (k: number) => {
    const start = items[2 * k]!
    const end = items[2 * k + 1]!
    if (start < base) {
      index = 0
      base = 0
    }
    while (base + chunks[index]!.length <= start) base += chunks[index++]!.length
    const chunk = chunks[index]!
    const bytes = end - base <= chunk.length
      ? chunk.subarray(start - base, end - base)
      : bytesOf(chunks.slice(index), start - base, end - base)
    return tryParse(partDecoder.decode(bytes))
  }
  return { rest: rest.value as { input: unknown }, length: items.length / 2, element }
}

/**
 * The parsed body (exactly `JSON.parse` of `chunks` decoded) using `found` (see the module doc);
 * `parseWhole` parses the decoded body in one call, and gives the error of a malformed body.
 */
export const parse = <E>(
  chunks: Chunks,
  found: Scan,
  parseWhole: (text: string) => Effect.Effect<unknown, E>
): Effect.Effect<unknown, E> =>
  Effect.gen(function*() {
    const sliced = sliceBody(chunks, found)
    if (sliced === undefined) return yield* parseWhole(decode(chunks))
    const elements: Array<unknown> = new Array(sliced.length)
    const budget = makeBudget()
    for (let k = 0; k < sliced.length; k++) {
      if (budget.tick()) yield* yieldToIo
      const element = sliced.element(k)
      if (element === undefined) return yield* parseWhole(decode(chunks))
      elements[k] = element.value
    }
    sliced.rest.input = elements
    return sliced.rest
  })

/**
 * A body whose `input` elements are parsed as they are read: `body` is the parsed body, `input` `null` in it
 * when `input` is given (then the array's elements, as `ResponsesRequestDecoder.decodeElements` reads
 * them), else undefined (the body was parsed whole). A reader that keeps only what it makes of each
 * element lets the element become garbage at once: the young generation's collections then find it dead
 * instead of copying it (a 20,000-item body parsed whole is about 10 MB of objects alive until the request
 * ends).
 */
export interface Lazy<E> {
  readonly body: unknown
  readonly input: Elements<E> | undefined
}

/**
 * The elements of `input`: `element(index)` parses one (an element that does not parse fails with the
 * whole body's error); `rest` parses, yielding, those not read yet and fails with the error of the first
 * that does not parse (for a reader that failed early: a body that is no JSON answers as such, whatever a
 * reader found before the syntax error).
 */
export interface Elements<E> {
  readonly length: number
  readonly element: (index: number) => Either.Either<unknown, E>
  readonly rest: Effect.Effect<void, E>
}

/**
 * `parse`, the `input` elements left to be parsed as they are read (`Lazy`); `parseWhole` as in `parse`.
 * Every element parses when the whole body does (the pass splits the array at its own commas), so an
 * element that does not parse gives the whole body's error.
 */
export const parseLazily = <E>(
  chunks: Chunks,
  found: Scan,
  parseWhole: (text: string) => Either.Either<unknown, E>
): Either.Either<Lazy<E>, E> => {
  const sliced = sliceBody(chunks, found)
  if (sliced === undefined) return Either.map(parseWhole(decode(chunks)), (body) => ({ body, input: undefined }))
  // past every element read so far
  let next = 0
  // the whole body parsed, once an element did not parse (it cannot parse then: see above)
  let whole: Either.Either<unknown, E> | undefined
  const element = (index: number): Either.Either<unknown, E> => {
    if (whole === undefined) {
      next = Math.max(next, index + 1)
      const parsed = sliced.element(index)
      if (parsed !== undefined) return Either.right(parsed.value)
      whole = parseWhole(decode(chunks))
    }
    return Either.map(whole, (body) => (body as { input?: ReadonlyArray<unknown> } | null)?.input?.[index])
  }
  const rest = Effect.gen(function*() {
    const budget = makeBudget()
    for (let index = next; index < sliced.length; index++) {
      if (budget.tick()) yield* yieldToIo
      const parsed = element(index)
      if (Either.isLeft(parsed)) return yield* parsed
    }
  })
  return Either.right({ body: sliced.rest, input: { length: sliced.length, element, rest } })
}
