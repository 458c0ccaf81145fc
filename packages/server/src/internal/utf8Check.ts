/**
 * The check that a request body is UTF-8 (RFC 8259 §8.1: JSON text exchanged between systems is UTF-8),
 * made on each chunk as it is read. A chunk is cut at its last character's start when the chunk does not end
 * that character: the whole characters are checked at once by a native validator, the character begun is
 * kept (at most 3 bytes) and checked with the next chunk's first bytes. Where a chunk is refused, its bytes
 * are read one by one for the offset of the first sequence that is no UTF-8 (the WHATWG Encoding Standard's
 * UTF-8 decoder's rules: a byte no character starts with, a character cut short, an overlong form, a
 * surrogate, past U+10FFFF are refused).
 *
 * The validator is Node's `buffer.isUtf8` where the runtime has it (found through
 * `process.getBuiltinModule`, Node 20.16 and 22.3 on: no import of a Node module), a `TextDecoder` with
 * `fatal: true` elsewhere. The decoder builds the text it is not asked for: about 0.8 ms per MiB of ASCII
 * and 1.6 ms per MiB of CJK text (64 KiB chunks, a loaded 2-core machine), in the turn that reads the
 * chunk, where it made most of the longest turns while a 10 MB body arrived; `isUtf8` (simdutf) takes about
 * 0.06 ms per MiB of either.
 *
 * @internal
 */

/** Whether `bytes`, whole characters (none cut by either end), are UTF-8. */
export type Validator = (bytes: Uint8Array) => boolean

/**
 * `TextDecoder` with `fatal: true` as a validator, for every runtime with the Encoding API: the fallback
 * where `process.getBuiltinModule` is missing.
 */
export const decoderValidator = (): Validator => {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
  return (bytes) => {
    try {
      decoder.decode(bytes)
      return true
    } catch {
      return false
    }
  }
}

/** Node's `buffer.isUtf8`, when the runtime has it and `process.getBuiltinModule` to reach it. */
export const nativeValidator: Validator | undefined = (() => {
  const get = (globalThis as { process?: { getBuiltinModule?: unknown } }).process?.getBuiltinModule
  if (typeof get !== "function") return undefined
  try {
    const buffer = (get as (id: string) => { isUtf8?: unknown } | undefined)("node:buffer")
    return typeof buffer?.isUtf8 === "function" ? buffer.isUtf8 as Validator : undefined
  } catch {
    return undefined
  }
})()

/**
 * Feeds the body's chunks in order (`feed`), then `end`: each answers -1 while the bytes are UTF-8, else the
 * 0-based byte offset (from the body's first byte, a byte order mark counted) of the first byte of the first
 * sequence that is not, as `TextDecoder` with `fatal: true` finds it. Once an offset is found it is kept and
 * nothing more is checked. `validate` checks runs of whole characters (`nativeValidator` when the runtime
 * has it, else `decoderValidator`).
 */
export class Utf8Check {
  private readonly validate: Validator
  /** The bytes fed so far, before `pending`. */
  private size = 0
  /** The bytes of a character begun and not ended (at most 3), valid so far. */
  private pending: Uint8Array = new Uint8Array(0)
  /** The offset found, or -1. */
  at = -1

  constructor(validate: Validator = nativeValidator ?? decoderValidator()) {
    this.validate = validate
  }

  /** Checks `chunk`, the next bytes of the body: -1, or the offset of the first sequence that is no UTF-8. */
  feed(chunk: Uint8Array): number {
    if (this.at !== -1 || chunk.length === 0) return this.at
    let from = 0
    if (this.pending.length > 0) {
      // the character begun: its other bytes are the chunk's first ones
      const need = lengthOf(this.pending[0]!)
      from = Math.min(need - this.pending.length, chunk.length)
      const joined = new Uint8Array(this.pending.length + from)
      joined.set(this.pending)
      joined.set(chunk.subarray(0, from), this.pending.length)
      const found = firstInvalid(joined)
      if (found !== -1) return this.found(found)
      if (joined.length < need) {
        // still not ended (a chunk of 1 or 2 bytes)
        this.pending = joined
        return -1
      }
      this.size += joined.length
      this.pending = new Uint8Array(0)
    }
    const cut = from + endOfWhole(chunk.subarray(from))
    const whole = chunk.subarray(from, cut)
    if (whole.length > 0 && !this.validate(whole)) {
      // the validator refused these bytes: the scan finds where, reading on into the character cut off after
      // them (`whole` may end with a character cut short by a lead byte, which `rest` starts with)
      const found = firstInvalid(chunk.subarray(from))
      return this.found(found === -1 ? whole.length : found)
    }
    this.size += whole.length
    if (cut < chunk.length) {
      const rest = chunk.slice(cut)
      const found = firstInvalid(rest)
      if (found !== -1) return this.found(found)
      this.pending = rest
    }
    return -1
  }

  /** At the body's end: -1, or the offset of the first sequence that is no UTF-8 (a character cut by the end). */
  end(): number {
    if (this.at === -1 && this.pending.length > 0) this.at = this.size
    return this.at
  }

  /** Keeps the offset `index` bytes past the bytes checked so far (`pending` first). */
  private found(index: number): number {
    this.at = this.size + index
    return this.at
  }
}

/** The bytes a character whose first byte is `lead` has (0: no character starts with it). */
const lengthOf = (lead: number): number =>
  lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0

/**
 * Where the last character of `bytes` begins when `bytes` do not end it (its lead byte among the last 3, with
 * fewer bytes after it than its length), else `bytes.length`: `bytes` up to there are whole characters, or
 * hold bytes that are no UTF-8 (a character cut short by the next lead byte among them).
 */
const endOfWhole = (bytes: Uint8Array): number => {
  for (let i = bytes.length - 1; i >= 0 && i >= bytes.length - 3; i--) {
    const c = bytes[i]!
    if (c < 0x80) return bytes.length
    if (c >= 0xc0) return bytes.length - i < lengthOf(c) ? i : bytes.length
  }
  return bytes.length
}

/**
 * The index of the first byte of the first sequence in `bytes[from..]` that is no UTF-8 (the WHATWG decoder's
 * bounds after E0, ED, F0, F4: no overlong form, no surrogate, nothing past U+10FFFF), or -1 (a character
 * cut by the end of `bytes` is not counted: more bytes may end it).
 */
export const firstInvalid = (bytes: Uint8Array, from = 0): number => {
  for (let i = from; i < bytes.length;) {
    const c = bytes[i]!
    if (c < 0x80) {
      i++
      continue
    }
    const need = lengthOf(c)
    if (need === 0) return i
    const lower = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80
    const upper = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf
    for (let k = 1; k < need; k++) {
      if (i + k >= bytes.length) return -1
      const next = bytes[i + k]!
      if (next < (k === 1 ? lower : 0x80) || next > (k === 1 ? upper : 0xbf)) return i
    }
    i += need
  }
  return -1
}
