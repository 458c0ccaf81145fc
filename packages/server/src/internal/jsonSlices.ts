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
 * An element can be most of the body: one message of 300,000 content parts is 10 MB, one `JSON.parse` of
 * 0.4 s. An element larger than `LARGE_ELEMENT_BYTES` gets the same treatment one level deeper: a pass
 * over its bytes finds its `content` and `output` arrays (a message's and a function call output's parts),
 * and the element is parsed without them, then its parts, a run of them at a time. That pass also counts
 * the parts, so a reader can refuse too many before any is parsed (`Elements.partsOf`), and notes the
 * element's long strings (a single 10 MB text part: one `JSON.parse` of tens of milliseconds), which are
 * parsed apart, in slices (`parseString`), and put back in their places. What is still parsed at once is
 * one part, or a member of another name, however large, but for those strings.
 *
 * The pass reads bytes: every byte JSON's syntax cares about is ASCII, and no byte of a multi-byte UTF-8
 * sequence is. The result is exactly `JSON.parse` of the body decoded as UTF-8 (a leading byte order mark
 * dropped, as `TextDecoder` does): whatever the pass cannot vouch for (a body or a large element that is no
 * object, an escaped or repeated key at its top level, an array or a rest that does not parse) is decoded
 * and parsed whole, which also gives the syntax error of a malformed body.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type Budget, makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"

/** A body as it was read: its chunks of bytes, in order. Offsets into it count bytes from its start. */
export type Chunks = ReadonlyArray<Uint8Array>

/** What the pass found: where the nesting passed the bound (-1: it did not), and the `input` elements. */
export interface Scan {
  /** The offset of the first character (UTF-16 code units of the decoded body) past the bound, or -1. */
  readonly deepAt: number
  /** The `input` array (`[` to `]` inclusive) and its elements, as flat `[start, end)` byte offset pairs. */
  readonly input: ArrayAt | undefined
}

/** An array (`[` to `]` inclusive, byte offsets) and its elements, as flat `[start, end)` byte offset pairs. */
export interface ArrayAt {
  readonly start: number
  readonly end: number
  readonly items: ReadonlyArray<number>
}

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9

const keyBytes = (key: string): Uint8Array => new TextEncoder().encode(key)

/** The key whose array holds the body's input items. */
const INPUT_KEY = [keyBytes("input")]

/**
 * The keys whose arrays hold an input item's parts: a message's `content`, a function call output's `output`
 * (in this order: the decoder bounds the first of them that is an array).
 */
const PARTS_NAMES = ["content", "output"] as const
const PARTS_KEYS = PARTS_NAMES.map(keyBytes)

/**
 * An element of `input` larger than this is parsed part by part (see `parseLarge`); below it, one
 * `JSON.parse` of the element takes a few milliseconds at most.
 */
export const LARGE_ELEMENT_BYTES = 256 * 1024

/** The bytes of a large element's parts parsed in one `JSON.parse` (about a millisecond's work). */
const PARTS_RUN_BYTES = 32 * 1024

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
  Effect.map(scanObject(chunks, 0, sizeOf(chunks), INPUT_KEY, limit, Infinity, slice), (found) => ({
    deepAt: found.deepAt,
    input: found.arrays[0]
  }))

/** What `scanObject` found in one JSON value. */
interface ObjectScan {
  /** As `Scan.deepAt`. */
  readonly deepAt: number
  /**
   * Per key asked for, in their order: its array, when the pass vouches for it (the value is an object
   * without escaped keys at its top level, holding the key once, with an array whose elements the pass
   * split at its own commas).
   */
  readonly arrays: ReadonlyArray<ArrayAt | undefined>
  /** Per key asked for: whether the object holds it with no array (absent, or once with another value). */
  readonly noArray: ReadonlyArray<boolean>
  /**
   * The long strings (more bytes between their quotes than asked for) that are values, not keys, at any
   * depth: flat `[start, end)` byte offset pairs, quotes included, in order.
   */
  readonly strings: ReadonlyArray<number>
}

/**
 * The pass of `scan` over the bytes `[from, to)` of `chunks`, one JSON value (a leading byte order mark
 * skipped when `from` is 0), finding the arrays of the top-level `keys` of that value (keys as UTF-8
 * bytes, at most 31 of them) and the strings of more than `longBytes` bytes.
 */
const scanObject = (
  chunks: Chunks,
  from: number,
  to: number,
  keys: ReadonlyArray<Uint8Array>,
  limit: number,
  longBytes: number,
  slice: number
): Effect.Effect<ObjectScan> =>
  Effect.gen(function*() {
    const pass = new ObjectPass(keys, limit, longBytes)
    // a leading byte order mark is no character of the text
    const head = bytesOf(chunks, from, from + 3)
    const skip = from === 0 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0
    let base = 0
    let sinceTick = 0
    const budget = makeBudget(undefined, 1)
    for (const chunk of chunks) {
      if (base >= to) break
      const stop = Math.min(chunk.length, to - base)
      for (let j = Math.max(0, from + skip - base); j < stop;) {
        if (sinceTick >= slice) {
          if (budget.tick()) yield* yieldToIo
          sinceTick = 0
        }
        const end = Math.min(stop, j + slice - sinceTick)
        sinceTick += end - j
        const deep = pass.feed(chunk, j, end, base)
        if (deep !== -1) return { deepAt: decode([bytesOf(chunks, 0, deep)]).length, arrays: [], noArray: [], strings: [] }
        j = end
      }
      base += chunk.length
    }
    return pass.result()
  })

/**
 * The state of `scanObject`'s pass, fed a slice of bytes at a time. The loop is a plain method, its state in
 * local variables while it runs: in the generator that drives it, the same loop took about three times as
 * long (the generator's locals live in its frame object, not in registers).
 */
class ObjectPass {
  private depth = 0
  private inString = false
  private escaped = false
  private stringIsKey = false
  private keyEscaped = false
  // the key being read: the characters read so far, and the bit set of the keys asked for it still matches
  private keyLength = 0
  private keyMatches = 0
  // the top level: an object whose next string is a key, the key just read (-1: none asked for), the key
  // whose value comes next
  private first = true
  private topObject = false
  private expectKey = false
  private keyIs = -1
  private awaitValue = -1
  // the array being split (an index into `keys`, -1: none) and the element being read in it
  private inArray = -1
  private itemStart = -1
  private readonly counts: Array<number>
  private readonly starts: Array<number>
  private readonly ends: Array<number>
  private readonly broken: Array<boolean>
  private readonly items: Array<Array<number>>
  // the string being read began here; the last long string found, until the next character tells whether
  // it was a key (then `:` follows, and it is dropped)
  private stringStart = -1
  private longPending = false
  private readonly strings: Array<number> = []

  constructor(
    private readonly keys: ReadonlyArray<Uint8Array>,
    private readonly limit: number,
    private readonly longBytes: number
  ) {
    this.counts = keys.map(() => 0)
    this.starts = keys.map(() => -1)
    this.ends = keys.map(() => -1)
    this.broken = keys.map(() => false)
    this.items = keys.map(() => [])
  }

  /** Reads `chunk[from, to)` (`base`: the chunk's offset); the offset where the nesting passed the bound, or -1. */
  feed(chunk: Uint8Array, from: number, to: number, base: number): number {
    const keys = this.keys
    const all = (1 << keys.length) - 1
    let { depth, escaped, inString, stringIsKey } = this
    for (let j = from; j < to; j++) {
      const c = chunk[j]!
      if (inString) {
        if (escaped) {
          escaped = false
        } else if (c === 92 /* \ */) {
          escaped = true
          if (stringIsKey) {
            this.keyEscaped = true
            this.keyMatches = 0
          }
        } else if (c === 34 /* " */) {
          inString = false
          if (stringIsKey) this.keyIs = matchedKey(keys, this.keyMatches, this.keyLength)
          if (base + j - this.stringStart - 1 > this.longBytes) {
            this.strings.push(this.stringStart, base + j + 1)
            this.longPending = true
          }
        } else if (stringIsKey && this.keyMatches !== 0) {
          this.keyMatches = matchKeys(keys, this.keyMatches, this.keyLength++, c)
        }
        continue
      }
      if (isSpace(c)) continue
      const i = base + j
      if (this.longPending) {
        this.longPending = false
        if (c === 58 /* : */) this.strings.length -= 2 // a key
      }
      if (this.first) {
        this.first = false
        this.topObject = c === 123
      }
      if (depth === 1 && this.awaitValue !== -1) {
        if (c === 91 /* [ */) {
          this.inArray = this.awaitValue
          this.starts[this.inArray] = i
          this.itemStart = -1
        }
        this.awaitValue = -1
      } else if (this.inArray !== -1 && depth === 2 && this.itemStart === -1 && c !== 44 && c !== 93) {
        this.itemStart = i
      }
      if (c === 34) {
        inString = true
        this.stringStart = i
        stringIsKey = this.topObject && depth === 1 && this.expectKey
        if (stringIsKey) {
          this.expectKey = false
          this.keyLength = 0
          this.keyMatches = all
        }
      } else if (c === 123 || c === 91) {
        if (++depth > this.limit) return i
        if (depth === 1 && c === 123) this.expectKey = true
      } else if (c === 125 || c === 93) {
        const array = this.inArray
        if (array !== -1 && depth === 2 && c === 93) {
          if (this.itemStart !== -1) this.items[array]!.push(this.itemStart, i)
          else if (this.items[array]!.length > 0) this.broken[array] = true // `[1,]`
          this.ends[array] = i + 1
          this.inArray = -1
        }
        depth--
      } else if (c === 44 /* , */) {
        const array = this.inArray
        if (depth === 1) this.expectKey = true
        else if (array !== -1 && depth === 2) {
          if (this.itemStart === -1) this.broken[array] = true // `[,1]`, `[1,,2]`
          else this.items[array]!.push(this.itemStart, i)
          this.itemStart = -1
        }
      } else if (c === 58 /* : */ && depth === 1 && this.keyIs !== -1) {
        this.awaitValue = this.keyIs
        this.counts[this.keyIs]!++
        this.keyIs = -1
      }
    }
    this.depth = depth
    this.escaped = escaped
    this.inString = inString
    this.stringIsKey = stringIsKey
    return -1
  }

  /** What the pass found (see `ObjectScan`), once it read the whole value. */
  result(): ObjectScan {
    const plain = this.topObject && !this.keyEscaped
    return {
      deepAt: -1,
      arrays: this.keys.map((_, k) =>
        plain && this.counts[k] === 1 && this.ends[k] !== -1 && !this.broken[k]
          ? { start: this.starts[k]!, end: this.ends[k]!, items: this.items[k]! }
          : undefined
      ),
      noArray: this.keys.map((_, k) => plain && (this.counts[k] === 0 || (this.counts[k] === 1 && this.starts[k] === -1))),
      strings: this.strings
    }
  }
}

/** The keys of bit set `matches` whose byte `at` is `c` (a key's next character read). */
const matchKeys = (keys: ReadonlyArray<Uint8Array>, matches: number, at: number, c: number): number => {
  let still = 0
  for (let k = 0; k < keys.length; k++) {
    if ((matches & (1 << k)) !== 0 && keys[k]![at] === c) still |= 1 << k
  }
  return still
}

/** The key of bit set `matches` that is `length` bytes long (the whole key read), or -1. */
const matchedKey = (keys: ReadonlyArray<Uint8Array>, matches: number, length: number): number => {
  for (let k = 0; k < keys.length; k++) {
    if ((matches & (1 << k)) !== 0 && keys[k]!.length === length) return k
  }
  return -1
}

/** `JSON.parse(text, reviver)`, or `undefined` when it throws. */
const tryParse = (text: string, reviver?: (key: string, value: unknown) => unknown): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text, reviver) }
  } catch {
    return undefined
  }
}

/** A value parsed, or `undefined`: it does not parse. */
type Parsed = { readonly value: unknown } | undefined

/**
 * The body but for its `input` elements (`rest`, `input` `null` in it) and readers of the elements, each
 * parsed when it is read; `undefined` when the pass cannot vouch for the body (see the module doc) or its
 * rest does not parse: then it is parsed whole.
 */
interface Sliced {
  readonly rest: { input: unknown }
  readonly length: number
  /** Whether element `index` is larger than `LARGE_ELEMENT_BYTES` (then it is read with `large`). */
  readonly isLarge: (index: number) => boolean
  /** Element `index`, parsed at once. */
  readonly small: (index: number) => Parsed
  /** The pass over large element `index` (kept for the element last asked for: counted, then parsed). */
  readonly scanLarge: (index: number) => Effect.Effect<ObjectScan>
  /** Large element `index`, parsed part by part (`parseLarge`), yielding with `budget`. */
  readonly large: (index: number, budget: Budget) => Effect.Effect<Parsed>
}

const sliceBody = (chunks: Chunks, found: Scan, largeBytes: number): Sliced | undefined => {
  const input = found.input
  if (input === undefined) return undefined
  const before = bodyDecoder.decode(bytesOf(chunks, 0, input.start))
  const after = partDecoder.decode(bytesOf(chunks, input.end, sizeOf(chunks)))
  const rest = tryParse(`${before}null${after}`)
  if (rest === undefined || typeof rest.value !== "object" || rest.value === null || (rest.value as { input?: unknown }).input !== null) {
    return undefined
  }
  const items = input.items
  // the pieces are mostly read in order: the chunk holding the next one is found from the last one's
  let index = 0
  let base = 0
  const textOf = (start: number, end: number): string => {
    if (start < base) {
      index = 0
      base = 0
    }
    while (base + chunks[index]!.length <= start) base += chunks[index++]!.length
    const chunk = chunks[index]!
    const bytes = end - base <= chunk.length
      ? chunk.subarray(start - base, end - base)
      : bytesOf(chunks.slice(index), start - base, end - base)
    return partDecoder.decode(bytes)
  }
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
    rest: rest.value as { input: unknown },
    length: items.length / 2,
    isLarge: (k) => items[2 * k + 1]! - items[2 * k]! > largeBytes,
    small: (k) => tryParse(textOf(items[2 * k]!, items[2 * k + 1]!)),
    scanLarge,
    large: (k, budget) =>
      Effect.flatMap(scanLarge(k), (parts) => parseLarge(chunks, textOf, items[2 * k]!, items[2 * k + 1]!, parts, budget))
  }
}

/**
 * A large element (bytes `[start, end)`, read with `textOf`) parsed as the body is, one level deeper: `found`
 * (the pass over its bytes) gives its `content` and `output` arrays, the element is parsed with `null` for
 * them, then their elements (the item's parts) one by one, yielding with `budget`. Exactly `JSON.parse` of
 * the element: the pass splits the arrays at their own commas, so every piece parses when the element does;
 * an element whose arrays the pass cannot vouch for (see `ObjectScan.arrays`) is parsed at once. Its long
 * strings (`found.strings`: a 10 MB text part) are parsed on their own, in slices (see `LongStrings`).
 */
const parseLarge = (
  chunks: Chunks,
  textOf: (start: number, end: number) => string,
  start: number,
  end: number,
  found: ObjectScan,
  budget: Budget
): Effect.Effect<Parsed> =>
  Effect.gen(function*() {
    const longs = new LongStrings(chunks, textOf, found.strings, budget)
    const arrays = PARTS_NAMES.flatMap((name, k) => {
      const array = found.arrays[k]
      return array === undefined ? [] : [{ name, array }]
    }).sort((a, b) => a.array.start - b.array.start)
    if (arrays.length === 0) return yield* longs.parse([[start, end]])
    const rest: Array<readonly [number, number] | string> = []
    let at = start
    for (const { array } of arrays) {
      rest.push([at, array.start], "null")
      at = array.end
    }
    rest.push([at, end])
    const element = yield* longs.parse(rest)
    if (element === undefined) return undefined
    for (const { array, name } of arrays) {
      const items = array.items
      const parts: Array<unknown> = new Array(items.length / 2)
      // a run of parts at a time, as an array of them (the commas between them are the array's own): one
      // decoding and one `JSON.parse` per `PARTS_RUN_BYTES`, not per part (a part is often 30 bytes)
      for (let p = 0; p < parts.length;) {
        let q = p + 1
        while (q < parts.length && items[2 * q + 1]! - items[2 * p]! <= PARTS_RUN_BYTES) q++
        if (budget.tick(q - p)) yield* yieldToIo
        const run = yield* longs.parse(["[", [items[2 * p]!, items[2 * q - 1]!], "]"])
        if (run === undefined) return undefined
        const values = run.value as Array<unknown>
        for (let at = 0; at < values.length; at++) parts[p + at] = values[at]
        p = q
      }
      // the member `JSON.parse` made (`null` in place of the array) keeps its place among the keys
      ;(element.value as { [key: string]: unknown })[name] = parts
    }
    return element
  })

/**
 * Stands for a long string in the text given to `JSON.parse` (then its index): a string no request holds
 * but by chance, since nothing the gateway answers reveals it; a chance the reviver checks anyway.
 */
const LONG_MARKER = `long-string-${globalThis.crypto.randomUUID()}:`

/**
 * The long strings of a large element (`strings`, see `ObjectScan.strings`) parsed apart from the rest: one
 * `JSON.parse` of a 10 MB string is a stretch of tens of milliseconds. A piece of the element is parsed with
 * a marker in place of each long string in it, and a reviver puts the string, parsed in slices
 * (`parseString`), in the marker's place.
 */
class LongStrings {
  constructor(
    private readonly chunks: Chunks,
    private readonly textOf: (start: number, end: number) => string,
    private readonly strings: ReadonlyArray<number>,
    private readonly budget: Budget
  ) {}

  /**
   * `JSON.parse` of `pieces` joined (byte ranges of the element, read as text, and literal text), or
   * `undefined`: it does not parse, or a string of the element equals a marker (then the element is parsed
   * with the whole body).
   */
  parse(pieces: ReadonlyArray<readonly [number, number] | string>): Effect.Effect<Parsed> {
    return Effect.suspend(() => {
      let text = ""
      const used: Array<number> = []
      for (const piece of pieces) text += typeof piece === "string" ? piece : this.marked(piece[0], piece[1], used)
      if (used.length === 0) return Effect.succeed(tryParse(text))
      const { budget, chunks, strings } = this
      return Effect.gen(function*() {
        const values = new Map<string, string>()
        for (const k of used) {
          const parsed = yield* parseString(chunks, strings[2 * k]!, strings[2 * k + 1]!, budget)
          if (parsed === undefined) return undefined
          values.set(`${LONG_MARKER}${k}`, parsed.value as string)
        }
        // each marker stands for one string: met twice, a string of the element equals it
        const met = new Set<string>()
        let twice = false
        const parsed = tryParse(text, (_, value) => {
          if (typeof value !== "string" || !value.startsWith(LONG_MARKER)) return value
          const long = values.get(value)
          if (long === undefined) return value
          if (met.has(value)) twice = true
          met.add(value)
          return long
        })
        return twice ? undefined : parsed
      })
    })
  }

  /** The text of bytes `[from, to)` with a marker for each long string in them; their indexes pushed to `used`. */
  private marked(from: number, to: number, used: Array<number>): string {
    const strings = this.strings
    // the first long string at or after `from` (they are in order, and do not overlap)
    let lo = 0
    let hi = strings.length / 2
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (strings[2 * mid]! < from) lo = mid + 1
      else hi = mid
    }
    let text = ""
    let at = from
    for (let k = lo; k < strings.length / 2 && strings[2 * k + 1]! <= to; k++) {
      text += `${this.textOf(at, strings[2 * k]!)}"${LONG_MARKER}${k}"`
      used.push(k)
      at = strings[2 * k + 1]!
    }
    return text + this.textOf(at, to)
  }
}

/** The bytes of a long string parsed in one `JSON.parse` (a fraction of a millisecond). */
export const STRING_SLICE_BYTES = 64 * 1024

/**
 * The JSON string whose text (quotes included) is the bytes `[start, end)` of `chunks`, parsed a slice of
 * about `sliceBytes` bytes at a time, yielding with `budget`; `undefined` when it does not parse. A slice
 * ends where an escape sequence and a character's UTF-8 bytes end (`safeEnd`), so each is a string's text
 * of its own: when every slice parses, the string does, and its value is theirs joined (JavaScript strings
 * are UTF-16 code units: the two halves of a surrogate pair written as two `\u` escapes join as they
 * would in one `JSON.parse`). A slice that does not parse means the string does not: the caller parses
 * the whole, which gives the error.
 */
export const parseString = (
  chunks: Chunks,
  start: number,
  end: number,
  budget: Budget,
  sliceBytes = STRING_SLICE_BYTES
): Effect.Effect<Parsed> =>
  Effect.gen(function*() {
    const close = end - 1
    let value = ""
    for (let cut = start + 1; cut < close;) {
      // a slice is as much work as a run of parts: the budget reads the clock
      if (budget.tick(64)) yield* yieldToIo
      let to = close
      for (let size = sliceBytes; cut + size < close; size *= 2) {
        // the slice and the byte after it; a slice too short to end anywhere safe (inside one escape or
        // character) is made longer
        const safe = safeEnd(bytesOf(chunks, cut, cut + size + 1), size)
        if (safe > 0) {
          to = cut + safe
          break
        }
      }
      const piece = tryParse(`"${partDecoder.decode(bytesOf(chunks, cut, to))}"`)
      if (piece === undefined) return undefined
      value += piece.value as string
      cut = to
    }
    return { value }
  })

/**
 * The largest `k <= n` where a string's bytes (`bytes`, from a place where no escape sequence or character
 * is under way, and at least the byte `n` when `n < bytes.length`) may be cut: not before a UTF-8
 * continuation byte (`10xxxxxx`), not inside an escape sequence (a backslash and one more ASCII byte, or
 * five for `\uXXXX`); 0 when there is none.
 */
const safeEnd = (bytes: Uint8Array, n: number): number => {
  let k = n
  while (k > 0 && ((bytes[k] ?? 0) & 0xc0) === 0x80) k--
  // the last backslash of the 6 bytes before k; none: no escape reaches k
  let q = k - 1
  while (q >= 0 && q >= k - 6 && bytes[q] !== 92) q--
  if (q < 0 || q < k - 6) return k
  // a run of backslashes from a place where none is escaped: pairs (`\\`), and the odd one out begins an
  // escape sequence
  let r = q
  while (r > 0 && bytes[r - 1] === 92) r--
  if ((q - r) % 2 === 1) return k
  return q + (bytes[q + 1] === 117 /* u */ ? 6 : 2) <= k ? k : q
}

/**
 * The parsed body (exactly `JSON.parse` of `chunks` decoded) using `found` (see the module doc);
 * `parseWhole` parses the decoded body in one call, and gives the error of a malformed body; an element of
 * more than `largeBytes` bytes is parsed part by part.
 */
export const parse = <E>(
  chunks: Chunks,
  found: Scan,
  parseWhole: (text: string) => Effect.Effect<unknown, E>,
  largeBytes = LARGE_ELEMENT_BYTES
): Effect.Effect<unknown, E> =>
  Effect.gen(function*() {
    const sliced = sliceBody(chunks, found, largeBytes)
    if (sliced === undefined) return yield* parseWhole(decode(chunks))
    const elements: Array<unknown> = new Array(sliced.length)
    const budget = makeBudget()
    for (let k = 0; k < sliced.length; k++) {
      if (budget.tick()) yield* yieldToIo
      const element = sliced.isLarge(k) ? yield* sliced.large(k, budget) : sliced.small(k)
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
 * and fails with the error of the first that does not parse (for a reader that failed early: a body that is
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
 * `parse`, the `input` elements left to be parsed as they are read (`Lazy`); `parseWhole` and `largeBytes`
 * as in `parse`. Every element parses when the whole body does (the pass splits the array at its own
 * commas), so an element that does not parse gives the whole body's error.
 */
export const parseLazily = <E>(
  chunks: Chunks,
  found: Scan,
  parseWhole: (text: string) => Either.Either<unknown, E>,
  largeBytes = LARGE_ELEMENT_BYTES
): Either.Either<Lazy<E>, E> => {
  const sliced = sliceBody(chunks, found, largeBytes)
  if (sliced === undefined) return Either.map(parseWhole(decode(chunks)), (body) => ({ body, input: undefined }))
  // past every element read so far
  let next = 0
  // the whole body parsed, once an element did not parse (it cannot parse then: see above)
  let whole: Either.Either<unknown, E> | undefined
  const wholeElement = (index: number): Either.Either<unknown, E> => {
    whole ??= parseWhole(decode(chunks))
    return Either.map(whole, (body) => (body as { input?: ReadonlyArray<unknown> } | null)?.input?.[index])
  }
  const budget = makeBudget()
  const element = (index: number): Effect.Effect<unknown, E> => {
    if (whole !== undefined) return wholeElement(index)
    next = Math.max(next, index + 1)
    if (sliced.isLarge(index)) {
      return Effect.flatMap(sliced.large(index, budget), (parsed) => parsed === undefined ? wholeElement(index) : Effect.succeed(parsed.value))
    }
    const parsed = sliced.small(index)
    return parsed === undefined ? wholeElement(index) : Either.right(parsed.value)
  }
  const partsOf = (index: number): Effect.Effect<PartsCount | undefined> | undefined =>
    sliced.isLarge(index) ? Effect.map(sliced.scanLarge(index), countParts) : undefined
  const rest = Effect.gen(function*() {
    for (let index = next; index < sliced.length; index++) {
      if (budget.tick()) yield* yieldToIo
      yield* element(index)
    }
  })
  return Either.right({ body: sliced.rest, input: { length: sliced.length, element, partsOf, rest } })
}

/** What `found` (the pass over an element) tells of its parts' number (see `PartsCount`). */
const countParts = (found: ObjectScan): PartsCount | undefined => {
  const [content, output] = found.arrays
  if (content !== undefined) return { field: "content", length: content.items.length / 2 }
  if (found.noArray[0] === true && output !== undefined) return { field: "output", length: output.items.length / 2 }
  return undefined
}
