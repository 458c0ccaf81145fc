/**
 * Long JSON strings parsed apart from the value around them: one `JSON.parse` of a 10 MB string is a stretch
 * of tens of milliseconds, and so is decoding its bytes into one string. A piece of the body is parsed with a
 * marker in place of each long string in it (found by the pass, `ObjectScan.strings`), and a reviver puts
 * the string, parsed in slices (`parseString`), in the marker's place.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { type Budget, type JsonText, yieldToIo } from "@effect-responses/wire/Cooperative"
import { bytesOf, type Chunks, partDecoder, strictDecoder, viewsOf } from "./bytes.js"

/** `JSON.parse(text, reviver)`, or `undefined` when it throws. */
export const tryParse = (text: string, reviver?: (key: string, value: unknown) => unknown): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text, reviver) }
  } catch {
    return undefined
  }
}

/** A value parsed, or `undefined`: it does not parse. */
export type Parsed = { readonly value: unknown } | undefined

/**
 * Stands for a long string in the text given to `JSON.parse` (then its index): a string no request holds
 * but by chance, since nothing the gateway answers reveals it; a chance the reviver checks anyway.
 */
const LONG_MARKER = `long-string-${globalThis.crypto.randomUUID()}:`

/**
 * The long strings of a body or of a large element (`strings`, see `ObjectScan.strings`), parsed apart from
 * the pieces of it that hold them (see the module doc).
 */
export class LongStrings {
  constructor(
    readonly chunks: Chunks,
    private readonly textOf: (start: number, end: number) => string,
    private readonly strings: ReadonlyArray<number>,
    readonly budget: Budget,
    private readonly texts?: Array<JsonText>
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
      const { budget, chunks, strings, texts } = this
      return Effect.gen(function*() {
        const values = new Map<string, string>()
        const known: Array<JsonText> = []
        for (const k of used) {
          const parsed = yield* parseString(chunks, strings[2 * k]!, strings[2 * k + 1]!, budget)
          if (parsed === undefined) return undefined
          values.set(`${LONG_MARKER}${k}`, parsed.value)
          if (parsed.json !== undefined) known.push({ value: parsed.value, bytes: parsed.json })
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
        if (twice) return undefined
        // the texts of the strings that are in the value (it parsed)
        if (parsed !== undefined && texts !== undefined) texts.push(...known)
        return parsed
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
 *
 * `json`: the string's bytes (views of `chunks`, quotes included) when they are exactly the UTF-8 of
 * `JSON.stringify(value)` (`Cooperative.JsonText`), which a writer then copies instead of escaping the
 * string (escaping reads it whole: V8 first copies a string built of slices into one, 6-7 ms for 10 MB).
 * So the string is not made whole here; a reader that reads its characters makes it whole then. Else
 * (escapes `JSON.stringify` would write otherwise, `\u0041`, `\/`; bytes that are no UTF-8; a string of one
 * slice) `json` is absent and the string is made whole in a stretch of its own.
 */
export const parseString = (
  chunks: Chunks,
  start: number,
  end: number,
  budget: Budget,
  sliceBytes = STRING_SLICE_BYTES
): Effect.Effect<{ readonly value: string; readonly json: ReadonlyArray<Uint8Array> | undefined } | undefined> =>
  Effect.gen(function*() {
    const close = end - 1
    let value = ""
    let pieces = 0
    // whether every slice so far is `JSON.stringify` of its value
    let canonical = true
    // the last code unit of the slices so far
    let last = -1
    for (let cut = start + 1; cut < close; pieces++) {
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
      const bytes = bytesOf(chunks, cut, to)
      const text = canonical ? strictText(bytes) : undefined
      if (text === undefined) canonical = false
      const quoted = `"${text ?? partDecoder.decode(bytes)}"`
      const piece = tryParse(quoted)
      if (piece === undefined) return undefined
      const slice = piece.value as string
      // a slice with an escape: its text is `JSON.stringify`'s unless an escape is spelled otherwise; the
      // halves of a surrogate pair (escapes: UTF-8 is never cut inside a character) in two slices are each
      // `JSON.stringify`'s alone, but joined it writes them as the character
      if (canonical && bytes.includes(92)) {
        if (JSON.stringify(slice) !== quoted) canonical = false
        else if (isLowSurrogate(slice.charCodeAt(0)) && isHighSurrogate(last)) canonical = false
      }
      // (read from the slice: an indexed read of `value`, a rope of slices, would make it one string)
      last = slice.charCodeAt(slice.length - 1)
      value += slice
      cut = to
    }
    if (pieces > 1 && canonical) return { value, json: viewsOf(chunks, start, end) }
    if (pieces > 1) {
      // the slices joined are a rope that V8 makes one string of at its first read (`flatten`): a stretch of
      // its own, not added to whatever reads it first (the request's decoding, a writer's slice)
      yield* yieldToIo
      flatten(value)
      if (budget.tick(64)) yield* yieldToIo
    }
    return { value, json: undefined }
  })

/** `bytes` read as UTF-8, or `undefined` when they are no UTF-8. */
const strictText = (bytes: Uint8Array): string | undefined => {
  try {
    return strictDecoder.decode(bytes)
  } catch {
    return undefined
  }
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/**
 * Makes V8 turn `value`, a string built by `+=` of slices, into one sequential string now (an indexed read
 * does; the later reads are of it): about 7 ms for 10 MB, most of it the page faults of the fresh memory
 * that V8 gives a string this large.
 */
const flatten = (value: string): void => {
  value.charCodeAt(0)
}

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
