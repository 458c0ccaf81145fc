/**
 * The JSON text of a request body, as UTF-8 bytes, built in slices: a large value (a long `messages` or
 * `input`, a message of many content parts, a 10 MB string) is written a piece at a time, yielding to other
 * fibers' I/O every few milliseconds, so that one large request does not hold the event loop for one whole
 * `JSON.stringify` (nor for one encoding or copy of the whole text). The bytes are those
 * `JSON.stringify(body)` gives (values `JSON.stringify` cannot write become `null` in an array and are left
 * out of an object, as it does; a cycle or a bigint fails as it does). A long string whose JSON text the
 * fiber knows (`Cooperative.currentJsonTexts`: the gateway's request it was read from) is that text,
 * copied a piece at a time, not escaped (which would read it whole).
 *
 * A value is written by one `JSON.stringify` when it is small (`isSmall`: its strings and members add up to
 * less than `SMALL_CHARS`); a large plain array or object is written member by member, and a long string in
 * slices of `JSON.stringify` of its substrings, cut never between the two halves of a surrogate pair (a
 * lone half is written as an escape, a pair as itself).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { BUDGET_MS, type Budget, currentJsonTexts, findJsonText, type JsonText, makeBudget, yieldToIo } from "../Cooperative.js"

/**
 * At most about this many characters are written, and bytes copied, between two clock reads: encoding and
 * copying touch fresh memory, whose page faults make a megabyte cost milliseconds on some machines (a VM).
 * A string longer than this is written in slices.
 */
const SLICE_CHARS = 256 * 1024

/**
 * A value of fewer characters is written by one `JSON.stringify` (a fraction of a millisecond). Finding out
 * walks at most about this much of a value, before the first yield too: 256 KiB of small messages took a
 * few milliseconds.
 */
const SMALL_CHARS = 32 * 1024

const encoder = new TextEncoder()

/** An array or object `JSON.stringify` writes member by member as this module does (no `toJSON`, no class). */
const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  if (Array.isArray(value)) return proto === Array.prototype && typeof (value as { toJSON?: unknown }).toJSON !== "function"
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function"
}

/**
 * The own enumerable keys of an object, each object's enumerated once in one `jsonBytes` call: enumerating
 * an object of many keys (a schema's `properties` of 100,000) costs about a microsecond a key however few
 * of them are read (a `for...in` stopped after 10 too), and the walk that finds what is small (`isSmall`)
 * meets such an object once per level above it, then `write` once more. Only the keys of an object of more
 * than `MANY_KEYS` are kept: a small object's keys cost little to enumerate again.
 */
class Keys {
  private readonly many = new Map<object, ReadonlyArray<string>>()

  of(value: object): ReadonlyArray<string> {
    const known = this.many.get(value)
    if (known !== undefined) return known
    const keys = Object.keys(value)
    if (keys.length > MANY_KEYS) this.many.set(value, keys)
    return keys
  }
}

const MANY_KEYS = 64

/**
 * Whether `value` is small: its strings' characters and its keys, values and elements add up to less than
 * `SMALL_CHARS`. A walk that stops as soon as that room is spent, or past 64 levels of nesting (a cycle
 * spends either), so it costs little more than the room however large the value (its objects' keys read
 * with `keys`, enumerated once per object).
 */
const isSmall = (value: unknown, keys: Keys): boolean => roomLeft(value, SMALL_CHARS, 0, keys) > 0

const roomLeft = (value: unknown, room: number, depth: number, keys: Keys): number => {
  if (typeof value === "string") return room - value.length - 2
  if (typeof value !== "object" || value === null) return room - 1
  if (depth >= 64) return 0
  room -= 2
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && room > 0; i++) room = roomLeft(value[i], room - 1, depth + 1, keys)
    return room
  }
  const names = keys.of(value)
  for (let i = 0; i < names.length && room > 0; i++) {
    const key = names[i]!
    room = roomLeft((value as Record<string, unknown>)[key], room - key.length - 4, depth + 1, keys)
  }
  return room
}

/**
 * The text written so far, encoded a piece of about `SLICE_CHARS` characters at a time. Its time counts as a
 * `makeBudget`'s: from the turn's start when the writer begins in a turn that other work began less than
 * `BUDGET_MS` before (the Chat request builder's last slice, right before it), not afresh, so that the two
 * do not spend a budget each in one stretch of the event loop.
 */
class Pieces {
  readonly chunks: Array<Uint8Array> = []
  size = 0
  private text = ""
  private budget: Budget = makeBudget(BUDGET_MS)

  add(text: string): void {
    this.text += text
  }

  /** Adds `bytes` as they are (after the text so far, encoded), a piece of `SLICE_CHARS` bytes per call. */
  *addBytes(bytes: ReadonlyArray<Uint8Array>): Generator<void, void> {
    this.encode()
    for (const piece of bytes) {
      for (let at = 0; at < piece.length; at += SLICE_CHARS) {
        const slice = piece.subarray(at, at + SLICE_CHARS)
        this.chunks.push(slice)
        this.size += slice.length
        if (this.due()) yield
      }
    }
  }

  /**
   * Whether it is time to pause: the text not encoded yet is a slice, or `BUDGET_MS` passed (the clock read
   * every 64 calls: a call per member, often of a few dozen bytes).
   */
  due(): boolean {
    return this.text.length >= SLICE_CHARS || this.budget.tick()
  }

  /** Encodes the text written since the last call; the time is counted from now (from the resume, right after a yield). */
  flush(): void {
    this.encode()
    this.budget = makeBudget(BUDGET_MS)
  }

  private encode(): void {
    if (this.text.length > 0) {
      const bytes = encoder.encode(this.text)
      this.chunks.push(bytes)
      this.size += bytes.length
      this.text = ""
    }
  }
}

/** Whether the UTF-16 code unit `code` is the first half of a surrogate pair. */
const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/** Whether `value` is written by `write` rather than by one `JSON.stringify`: a long string, a large plain array or object. */
const isLarge = (value: unknown, keys: Keys): value is string | object =>
  typeof value === "string"
    ? value.length > SLICE_CHARS
    : typeof value === "object" && value !== null && isPlain(value) && !isSmall(value, keys)

/**
 * Writes `value` (see `isLarge`) to `out`, pausing (a `yield`, for the caller to encode and yield to I/O)
 * whenever `out.due()`; throws what `JSON.stringify` throws. `ancestors` are the objects being written around
 * it: one met again is a cycle, `JSON.stringify`'s error. A plain generator, not an effect: a member costs
 * no fiber step.
 */
function* write(
  value: string | object,
  out: Pieces,
  ancestors: Set<object>,
  keys: Keys,
  texts: ReadonlyArray<JsonText>
): Generator<void, void> {
  if (typeof value === "string") {
    // a string whose JSON text is known (read from the request that brought it) is that text, copied
    const known = findJsonText(texts, value)
    if (known !== undefined) {
      yield* out.addBytes(known.bytes)
      return
    }
    // `JSON.stringify` of a substring is that substring's part of the whole's text, but for a surrogate pair
    // cut in two (each half alone is written as an escape): a slice never ends between the halves
    out.add("\"")
    for (let at = 0; at < value.length;) {
      let end = Math.min(value.length, at + SLICE_CHARS)
      if (end < value.length && isHighSurrogate(value.charCodeAt(end - 1))) end--
      out.add(JSON.stringify(value.slice(at, end)).slice(1, -1))
      at = end
      if (out.due()) yield
    }
    out.add("\"")
    return
  }
  if (ancestors.has(value)) throw new TypeError("Converting circular structure to JSON")
  ancestors.add(value)
  if (Array.isArray(value)) {
    out.add("[")
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out.add(",")
      const item: unknown = value[index]
      if (isLarge(item, keys)) yield* write(item, out, ancestors, keys, texts)
      // a value `JSON.stringify` cannot write is `null` in an array
      else out.add(JSON.stringify(item) ?? "null")
      if (out.due()) yield
    }
    out.add("]")
  } else {
    out.add("{")
    let first = true
    for (const key of keys.of(value)) {
      const item: unknown = (value as Record<string, unknown>)[key]
      const head = `${first ? "" : ","}${JSON.stringify(key)}:`
      if (isLarge(item, keys)) {
        out.add(head)
        yield* write(item, out, ancestors, keys, texts)
      } else {
        const text = JSON.stringify(item)
        // a member whose value `JSON.stringify` cannot write is left out
        if (text === undefined) continue
        out.add(head + text)
      }
      first = false
      if (out.due()) yield
    }
    out.add("}")
  }
  ancestors.delete(value)
}

/**
 * The UTF-8 bytes of `JSON.stringify(body)`; fails with what `JSON.stringify` throws (a cycle, a bigint).
 */
export const jsonBytes = (body: object): Effect.Effect<Uint8Array, unknown> =>
  Effect.suspend(() => {
    // A small body (the usual request: a prompt of a few messages) has nothing to write in slices: one
    // `JSON.stringify` and one encoding, without the copy.
    const keys = new Keys()
    if (!isPlain(body) || isSmall(body, keys)) {
      return Effect.try({ try: () => encoder.encode(JSON.stringify(body)), catch: (e) => e })
    }
    return Effect.gen(function*() {
      const out = new Pieces()
      const steps = write(body, out, new Set(), keys, yield* FiberRef.get(currentJsonTexts))
      // a step writes until a pause is due; the text is encoded, then other fibers' I/O runs
      while (!(yield* Effect.try({ try: () => steps.next().done === true, catch: (e) => e }))) {
        out.flush()
        yield* yieldToIo
        out.flush() // the time counted from here
      }
      out.flush()
      // one copy of the whole body would be one long stretch too: copied a slice at a time, yielding
      const bytes = new Uint8Array(out.size)
      let offset = 0
      // counted as the writing's last step was (the same turn)
      let budget = makeBudget(BUDGET_MS, 1)
      for (const chunk of out.chunks) {
        for (let at = 0; at < chunk.length; at += SLICE_CHARS) {
          const piece = chunk.subarray(at, at + SLICE_CHARS)
          bytes.set(piece, offset)
          offset += piece.length
          if (budget.tick()) {
            yield* yieldToIo
            budget = makeBudget(BUDGET_MS, 1)
          }
        }
      }
      return bytes
    })
  })
