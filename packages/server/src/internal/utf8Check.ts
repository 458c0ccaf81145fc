/**
 * The check that a request body is UTF-8 (RFC 8259 §8.1: JSON text exchanged between systems is UTF-8),
 * made on each chunk as it is read: a native `TextDecoder` with `fatal: true` and `stream: true` decides (the
 * WHATWG Encoding Standard's UTF-8 decoder: a byte no character starts with, a character cut short, an
 * overlong form, a surrogate, past U+10FFFF are refused), and only when it refuses a chunk are that chunk's
 * bytes (and the few of a character begun in the chunks before) read one by one for the offset.
 *
 * @internal
 */

/**
 * Feeds the body's chunks in order (`feed`), then `end`: each answers -1 while the bytes are UTF-8, else the
 * 0-based byte offset (from the body's first byte, a byte order mark counted) of the first byte of the first
 * sequence that is not, as `TextDecoder` with `fatal: true` finds it. Once an offset is found it is kept and
 * nothing more is decoded.
 */
export class Utf8Check {
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
  /** The bytes fed so far. */
  private size = 0
  /** The last (at most 3) bytes fed: a character begun and not ended is among them. */
  private last: Uint8Array = new Uint8Array(0)
  /** The offset found, or -1. */
  at = -1

  /** Checks `chunk`, the next bytes of the body: -1, or the offset of the first sequence that is no UTF-8. */
  feed(chunk: Uint8Array): number {
    if (this.at !== -1 || chunk.length === 0) return this.at
    try {
      this.decoder.decode(chunk, { stream: true })
    } catch {
      const bytes = new Uint8Array(this.last.length + chunk.length)
      bytes.set(this.last)
      bytes.set(chunk, this.last.length)
      const from = pendingStart(this.last)
      const found = firstInvalid(bytes, from === -1 ? this.last.length : from)
      // the decoder refused these bytes: the scan finds where (an end cut short is no refusal)
      this.at = this.size - this.last.length + (found === -1 ? bytes.length : found)
      return this.at
    }
    this.size += chunk.length
    this.last = chunk.length >= 3
      ? chunk.slice(chunk.length - 3)
      : concatLast(this.last, chunk)
    return -1
  }

  /** At the body's end: -1, or the offset of the first sequence that is no UTF-8 (a character cut by the end). */
  end(): number {
    if (this.at !== -1) return this.at
    try {
      this.decoder.decode()
    } catch {
      const from = pendingStart(this.last)
      this.at = this.size - this.last.length + (from === -1 ? 0 : from)
    }
    return this.at
  }
}

const concatLast = (last: Uint8Array, chunk: Uint8Array): Uint8Array => {
  const both = new Uint8Array(last.length + chunk.length)
  both.set(last)
  both.set(chunk, last.length)
  return both.slice(Math.max(0, both.length - 3))
}

/** The bytes a character whose first byte is `lead` has (0: no character starts with it). */
const lengthOf = (lead: number): number =>
  lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0

/**
 * Where in `last` (bytes the decoder accepted) a character begins that they do not end, or -1: its first
 * byte is a lead byte at most 3 bytes from the end, with fewer bytes after it than its length.
 */
const pendingStart = (last: Uint8Array): number => {
  for (let i = last.length - 1; i >= 0; i--) {
    const c = last[i]!
    if (c < 0x80) return -1
    if (c >= 0xc0) return last.length - i < lengthOf(c) ? i : -1
  }
  return -1
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
