/**
 * Any JSON value parsed without one long `JSON.parse`: a value of more than `RUN_BYTES` bytes that is an
 * array or an object is split at its own commas by a pass over its bytes, its elements (members) parsed a
 * run of about `RUN_BYTES` at a time, and an element larger than that the same way, one level deeper. So a
 * member of the body that no other slicing knows (an unknown field, `metadata`, `text.format.schema`, a
 * tool's `parameters`) costs no stretch longer than a run: a flat array of 7.8 million zeros (15 MB) was one
 * `JSON.parse` of 3-6 s, the whole gateway stalled meanwhile. Long strings are parsed apart as everywhere
 * (`LongStrings`).
 *
 * The result is exactly `JSON.parse` of the value's text, or `undefined` when that text does not parse (then
 * the caller parses the whole, which gives the error): every piece parsed is a JSON text of its own, the
 * pass checks the brackets and commas between them, and an object's members are put in their places as
 * `JSON.parse` puts them (a repeated key keeps its first place and its last value; `__proto__` is an own
 * member, not the prototype).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { yieldToIo } from "@effect-responses/wire/Cooperative"
import type { LongStrings, Parsed } from "./longStrings.js"
import { StringStops } from "./pass.js"

/**
 * The bytes of elements (members) parsed in one `JSON.parse` (about a millisecond's work even for the
 * densest array, `[0,0,…]`); a value no larger is parsed at once.
 */
export const RUN_BYTES = 32 * 1024

/** The bytes the pass reads between two ticks of the budget. */
const PASS_SLICE = 1 << 14

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9

/**
 * The value that is bytes `[start, end)` of `longs.chunks` (space around it allowed), parsed in runs (see
 * the module doc), yielding with `longs.budget`. `holes`: flat `[start, end)` byte offset pairs, in order,
 * of values (members of the value's top level: the body's `input` and `tools` arrays) read as `null`.
 */
export const parseValue = (
  longs: LongStrings,
  start: number,
  end: number,
  holes: ReadonlyArray<number> = []
): Effect.Effect<Parsed> =>
  Effect.suspend(() => {
    const reader = new Reader(longs.chunks, start, end)
    const first = reader.firstNonSpace()
    for (let k = 0; k < holes.length; k += 2) if (holes[k] === first) return Effect.succeed({ value: null })
    const open = first === -1 ? -1 : reader.byteAt(first)
    // the holes are no text to parse: a body whose rest is small is one `JSON.parse`
    let size = end - start
    for (let k = 0; k < holes.length; k += 2) if (holes[k]! >= start && holes[k + 1]! <= end) size -= holes[k + 1]! - holes[k]!
    if (size <= RUN_BYTES || (open !== 91 && open !== 123)) {
      return longs.parse(withHoles(start, end, holes))
    }
    return parseContainer(longs, first, end, open === 91, holes)
  })

/** `[from, to)` as `LongStrings.parse` pieces, each hole within it read as `null`. */
const withHoles = (from: number, to: number, holes: ReadonlyArray<number>): Array<readonly [number, number] | string> => {
  const pieces: Array<readonly [number, number] | string> = []
  let at = from
  for (let k = 0; k < holes.length; k += 2) {
    if (holes[k]! < from || holes[k + 1]! > to) continue
    pieces.push([at, holes[k]!], "null")
    at = holes[k + 1]!
  }
  pieces.push([at, to])
  return pieces
}

/** A run of small elements (`colon` -1), or one large element (for an object: its key's `:`). */
interface Run {
  readonly start: number
  readonly end: number
  readonly large: boolean
  readonly colon: number
}

/**
 * The array or object opening at byte `open` (`[` when `isArray`), its text ending before `end`: the pass
 * over it (`runsOf`), then its runs parsed, and its large elements as values of their own.
 */
const parseContainer = (
  longs: LongStrings,
  open: number,
  end: number,
  isArray: boolean,
  holes: ReadonlyArray<number>
): Effect.Effect<Parsed> =>
  Effect.gen(function*() {
    const runs = yield* runsOf(longs, open, end, isArray)
    if (runs === undefined) return undefined
    const budget = longs.budget
    // an array's elements, a run's array (or a large element in one of its own) at a time, joined by one
    // `concat` at the end: pushed one by one into one growing array, a run of 16,384 zeros took about twice
    // as long as its `JSON.parse`, and all the runs 4-5 times the `concat` (which the gateway's bound on an
    // array's length, checked before any parse, keeps at 100,000 elements and a millisecond or two)
    const parts: Array<Array<unknown>> = []
    const fields: { [key: string]: unknown } = {}
    for (const run of runs) {
      if (budget.tick(64)) yield* yieldToIo
      if (!run.large) {
        const pieces = withHoles(run.start, run.end, holes)
        const parsed = yield* longs.parse(isArray ? ["[", ...pieces, "]"] : ["{", ...pieces, "}"])
        if (parsed === undefined) return undefined
        if (isArray) parts.push(parsed.value as Array<unknown>)
        else assign(fields, parsed.value as { [key: string]: unknown })
        continue
      }
      if (isArray) {
        const element = yield* parseValue(longs, run.start, run.end, holes)
        if (element === undefined) return undefined
        parts.push([element.value])
        continue
      }
      // a large member: its key (a string, parsed at once), then its value
      const key = yield* longs.parse([[run.start, run.colon]])
      if (key === undefined || typeof key.value !== "string") return undefined
      const value = yield* parseValue(longs, run.colon + 1, run.end, holes)
      if (value === undefined) return undefined
      put(fields, key.value, value.value)
    }
    // `concat` spreads each part (an array of its own), not the elements (a large element may be an array)
    return { value: isArray ? ([] as Array<unknown>).concat(...parts) : fields }
  })

/** Puts `run`'s members into `fields` in their order (see `put`). */
const assign = (fields: { [key: string]: unknown }, run: { [key: string]: unknown }): void => {
  for (const key of Object.keys(run)) put(fields, key, run[key])
}

/** Sets member `key` as `JSON.parse` does: `__proto__` an own member (assigned, it would set the prototype). */
const put = (fields: { [key: string]: unknown }, key: string, value: unknown): void => {
  if (key === "__proto__") {
    Object.defineProperty(fields, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    fields[key] = value
  }
}

/**
 * The pass over the array or object opening at byte `open` (strings skipped, yielding with the budget): its
 * elements grouped into runs of at most about `RUN_BYTES` (an element larger than that a run of its own);
 * `undefined` when the pass cannot vouch for them (an empty element, `[1,,2]`, `[1,]`; a closing bracket of
 * the other kind; no close; anything but space after it).
 */
const runsOf = (
  longs: LongStrings,
  open: number,
  end: number,
  isArray: boolean
): Effect.Effect<ReadonlyArray<Run> | undefined> =>
  Effect.gen(function*() {
    const reader = new Reader(longs.chunks, open + 1, end)
    const pass = new RunPass(open + 1)
    const budget = longs.budget
    for (let at = open + 1; at < end && pass.closed === -1 && !pass.broken; at += PASS_SLICE) {
      if (budget.tick(64)) yield* yieldToIo
      reader.feed(pass, at, Math.min(end, at + PASS_SLICE))
    }
    if (pass.broken || pass.closed === -1) return undefined
    if (reader.byteAt(pass.closed) !== (isArray ? 93 : 125)) return undefined
    // nothing but space after the close
    if (new Reader(longs.chunks, pass.closed + 1, end).firstNonSpace() !== -1) return undefined
    if (!isArray && pass.runs.some((run) => run.large && run.colon === -1)) return undefined
    return pass.runs
  })

/**
 * The state of `runsOf`'s pass, fed a slice of bytes at a time (a plain method, as `ObjectPass`: its state in
 * locals while it runs).
 */
class RunPass {
  runs: Array<Run> = []
  closed = -1
  broken = false
  private depth = 0
  private inString = false
  private escaped = false
  // the element being read: its first byte (-1: none yet), its key's `:` (an object's member)
  private itemStart = -1
  private colon = -1
  // the run being gathered (-1: none): from its first element's start to its last one's end
  private runStart = -1
  private runEnd = -1
  // elements seen so far (an empty one after a comma is broken)
  private items = 0
  private readonly stops = new StringStops()

  constructor(readonly from: number) {}

  feed(chunk: Uint8Array, from: number, to: number, base: number): void {
    let { depth, escaped, inString } = this
    for (let j = from; j < to; j++) {
      const c = chunk[j]!
      if (inString) {
        if (escaped) escaped = false
        else if (c === 92) escaped = true
        else if (c === 34) inString = false
        // the rest of the string's content, up to its next quote or backslash, at once
        else j = this.stops.next(chunk, j + 1, to) - 1
        continue
      }
      if (isSpace(c)) continue
      const i = base + j
      if (depth === 0 && this.itemStart === -1 && c !== 44 && c !== 93 && c !== 125) this.itemStart = i
      if (c === 34) {
        inString = true
      } else if (c === 123 || c === 91) {
        depth++
      } else if (c === 125 || c === 93) {
        if (depth === 0) {
          if (this.itemStart !== -1) this.endItem(i)
          else if (this.items > 0) this.broken = true // `[1,]`
          this.flush()
          this.closed = i
          break
        }
        depth--
      } else if (c === 44 && depth === 0) {
        if (this.itemStart === -1) {
          this.broken = true // `[,1]`, `[1,,2]`
          break
        }
        this.endItem(i)
      } else if (c === 58 && depth === 0 && this.colon === -1) {
        this.colon = i
      }
    }
    this.depth = depth
    this.escaped = escaped
    this.inString = inString
  }

  /** The element from `itemStart` ends before byte `i` (a comma or the close). */
  private endItem(i: number): void {
    const start = this.itemStart
    this.items++
    if (i - start > RUN_BYTES) {
      this.flush()
      this.runs.push({ start, end: i, large: true, colon: this.colon })
    } else if (this.runStart !== -1 && i - this.runStart > RUN_BYTES) {
      this.flush()
      this.runStart = start
      this.runEnd = i
    } else {
      if (this.runStart === -1) this.runStart = start
      this.runEnd = i
    }
    this.itemStart = -1
    this.colon = -1
  }

  private flush(): void {
    if (this.runStart !== -1) this.runs.push({ start: this.runStart, end: this.runEnd, large: false, colon: -1 })
    this.runStart = -1
  }
}

/** Reads bytes `[start, end)` of `chunks` (offsets counted from the first chunk's start). */
class Reader {
  constructor(
    private readonly chunks: ReadonlyArray<Uint8Array>,
    private readonly start: number,
    private readonly end: number
  ) {}

  /** The byte at offset `at`. */
  byteAt(at: number): number {
    let base = 0
    for (const chunk of this.chunks) {
      if (at < base + chunk.length) return chunk[at - base]!
      base += chunk.length
    }
    return -1
  }

  /** The offset of the first byte of `[start, end)` that is no space, or -1. */
  firstNonSpace(): number {
    let base = 0
    for (const chunk of this.chunks) {
      if (base >= this.end) break
      for (let j = Math.max(0, this.start - base); j < chunk.length && base + j < this.end; j++) {
        if (!isSpace(chunk[j]!)) return base + j
      }
      base += chunk.length
    }
    return -1
  }

  /** Feeds bytes `[from, to)` to `pass`, a chunk's part at a time, until it closed or broke. */
  feed(pass: RunPass, from: number, to: number): void {
    let base = 0
    for (const chunk of this.chunks) {
      if (base >= to) break
      if (base + chunk.length > from) {
        pass.feed(chunk, Math.max(0, from - base), Math.min(chunk.length, to - base), base)
        if (pass.closed !== -1 || pass.broken) return
      }
      base += chunk.length
    }
  }
}
