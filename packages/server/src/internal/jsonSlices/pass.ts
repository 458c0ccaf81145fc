/**
 * The pass over a JSON value's UTF-8 bytes that `jsonSlices` makes before parsing anything: the nesting
 * bound, the arrays of chosen keys at the value's top level (split into their elements at their own commas)
 * and the long strings at any depth, found without building a single value. It reads bytes: every byte
 * JSON's syntax cares about is ASCII, and no byte of a multi-byte UTF-8 sequence is.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"
import { bomLength, bytesOf, type Chunks, decode } from "./bytes.js"

/** An array (`[` to `]` inclusive, byte offsets) and its elements, as flat `[start, end)` byte offset pairs. */
export interface ArrayAt {
  readonly start: number
  readonly end: number
  readonly items: ReadonlyArray<number>
}

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9

/**
 * Where a pass over a string's bytes must look again: the first quote or backslash at or after a byte, found
 * by `Uint8Array.prototype.indexOf` (native) instead of the pass's own loop, byte by byte. The passes spend
 * nothing else on a string's content, and a long one is most of a large body: a tool's 10 MB description
 * was read byte by byte once by the pass over the body, again by the pass over the tool and again by the
 * split of the tool into its members (`values.ts`), about 70 ms of CPU each here.
 *
 * The first bytes are read by a loop (most strings are short, where a call costs more than the loop); past
 * them, the offsets found are kept, per chunk, and searched again only once the pass is past them, so each
 * byte of a chunk is searched at most once for each of the two bytes however the pass cuts it into slices.
 */
export class StringStops {
  private chunk: Uint8Array | undefined = undefined
  // the offsets searched from, and found: the next quote and backslash at or after them (the chunk's length:
  // none)
  private quoteFrom = 0
  private quote = -1
  private slashFrom = 0
  private slash = -1

  /** The offset of the first quote or backslash of `chunk[from, to)`, or `to`: none. */
  next(chunk: Uint8Array, from: number, to: number): number {
    const near = from + 32 < to ? from + 32 : to
    for (let j = from; j < near; j++) {
      const c = chunk[j]!
      if (c === 34 || c === 92) return j
    }
    if (near === to) return to
    if (chunk !== this.chunk) {
      this.chunk = chunk
      this.quote = -1
      this.slash = -1
    }
    if (near < this.quoteFrom || near > this.quote) {
      const q = chunk.indexOf(34, near)
      this.quoteFrom = near
      this.quote = q === -1 ? chunk.length : q
    }
    if (near < this.slashFrom || near > this.slash) {
      const b = chunk.indexOf(92, near)
      this.slashFrom = near
      this.slash = b === -1 ? chunk.length : b
    }
    const stop = this.quote < this.slash ? this.quote : this.slash
    return stop < to ? stop : to
  }
}

/** A key as the pass matches it: its UTF-8 bytes. */
export const keyBytes = (key: string): Uint8Array => new TextEncoder().encode(key)

/** What `scanObject` found in one JSON value. */
export interface ObjectScan {
  /** The offset of the first character (UTF-16 code units of the decoded body) past the nesting bound, or -1. */
  readonly deepAt: number
  /**
   * Where an object of more members than asked for was found (the pass stopped there), or `undefined`: the
   * top-level key whose value holds it, and the index of the element holding it when that value is an
   * array the pass splits.
   */
  readonly wide: {
    readonly key: string | undefined
    readonly index: number | undefined
    /** Which bound it passed: an object's members (`maxMembers`) or an array's elements (`maxElements`). */
    readonly kind: "object" | "array"
  } | undefined
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
 * The pass over the bytes `[from, to)` of `chunks`, one JSON value (a leading byte order mark
 * skipped when `from` is 0), finding the arrays of the top-level `keys` of that value (keys as UTF-8
 * bytes, at most 31 of them) and the strings of more than `longBytes` bytes; stops at an object of more than
 * `maxMembers` members or an array of more than `maxElements` elements (`ObjectScan.wide`).
 */
export const scanObject = (
  chunks: Chunks,
  from: number,
  to: number,
  keys: ReadonlyArray<Uint8Array>,
  limit: number,
  longBytes: number,
  slice: number,
  maxMembers = Infinity,
  maxElements = Infinity
): Effect.Effect<ObjectScan> =>
  Effect.gen(function*() {
    const pass = new ObjectPass(keys, limit, longBytes, maxMembers, maxElements)
    // a leading byte order mark is no character of the text
    const skip = from === 0 ? bomLength(chunks) : 0
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
        const stopped = pass.feed(chunk, j, end, base)
        if (stopped !== -1) {
          return pass.wide
            ? { deepAt: -1, wide: pass.wideAt(chunks), arrays: [], noArray: [], strings: [] }
            : { deepAt: decode([bytesOf(chunks, 0, stopped)]).length, wide: undefined, arrays: [], noArray: [], strings: [] }
        }
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
  private readonly stops = new StringStops()
  // the members (keys) counted so far of the object open at each depth; the last top-level key read
  // (`[start, end)` between its quotes), and whether the pass stopped at an object of too many members
  private readonly members: Array<number> = []
  // the commas counted so far of the array open at each depth (-1: an object is open there)
  private readonly commas: Array<number> = []
  private topKeyStart = -1
  private topKeyEnd = -1
  wide = false
  private wideDepth = 0
  private wideKind: "object" | "array" = "object"

  constructor(
    private readonly keys: ReadonlyArray<Uint8Array>,
    private readonly limit: number,
    private readonly longBytes: number,
    private readonly maxMembers: number,
    private readonly maxElements: number
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
          if (stringIsKey) {
            this.keyIs = matchedKey(keys, this.keyMatches, this.keyLength)
            this.topKeyEnd = base + j
          }
          if (base + j - this.stringStart - 1 > this.longBytes) {
            this.strings.push(this.stringStart, base + j + 1)
            this.longPending = true
          }
        } else if (stringIsKey) {
          if (this.keyMatches !== 0) this.keyMatches = matchKeys(keys, this.keyMatches, this.keyLength++, c)
        } else {
          // the rest of the string's content, up to its next quote or backslash, at once
          j = this.stops.next(chunk, j + 1, to) - 1
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
          this.topKeyStart = i + 1
        }
      } else if (c === 123 || c === 91) {
        if (++depth > this.limit) return i
        if (c === 123) this.members[depth] = 0
        this.commas[depth] = c === 91 ? 0 : -1
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
        // an array of more elements than `maxElements`: its commas reached that many
        if (this.commas[depth]! >= 0 && ++this.commas[depth]! >= this.maxElements) {
          this.wide = true
          this.wideDepth = depth
          this.wideKind = "array"
          return i
        }
        const array = this.inArray
        if (depth === 1) this.expectKey = true
        else if (array !== -1 && depth === 2) {
          if (this.itemStart === -1) this.broken[array] = true // `[,1]`, `[1,,2]`
          else this.items[array]!.push(this.itemStart, i)
          this.itemStart = -1
        }
      } else if (c === 58 /* : */) {
        // a `:` outside a string follows a key of the object open at this depth
        if (++this.members[depth]! > this.maxMembers) {
          this.wide = true
          this.wideDepth = depth
          this.wideKind = "object"
          return i
        }
        if (depth === 1 && this.keyIs !== -1) {
          this.awaitValue = this.keyIs
          this.counts[this.keyIs]!++
          this.keyIs = -1
        }
      }
    }
    this.depth = depth
    this.escaped = escaped
    this.inString = inString
    this.stringIsKey = stringIsKey
    return -1
  }

  /** Where the pass stopped at an object of too many members (see `ObjectScan.wide`). */
  wideAt(chunks: Chunks): ObjectScan["wide"] {
    // the value itself is that object: no key holds it
    const kind = this.wideKind
    if (this.wideDepth === 1 || this.topKeyStart === -1) return { key: undefined, index: undefined, kind }
    const array = this.inArray
    return {
      key: decode([bytesOf(chunks, this.topKeyStart, this.topKeyEnd)]),
      // the split array itself is no element of it
      index: array === -1 || this.wideDepth === 2 ? undefined : this.items[array]!.length / 2,
      kind
    }
  }

  /** What the pass found (see `ObjectScan`), once it read the whole value. */
  result(): ObjectScan {
    const plain = this.topObject && !this.keyEscaped
    return {
      deepAt: -1,
      wide: undefined,
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
