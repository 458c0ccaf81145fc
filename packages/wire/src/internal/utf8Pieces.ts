/**
 * UTF-8 bytes given in pieces cut anywhere (even inside a character) decoded to text, as
 * `new TextDecoder().decode(piece, { stream: true })` does, without its streaming mode: Node's `TextDecoder`
 * leaves its fast path for good on the first `stream: true` call and decodes every later piece with ICU's
 * converter, about 4x the time (13 MB of SSE in 64 KiB pieces: 12-17 ms against 3 ms; about 7 % of the
 * gateway's busy CPU in a long unpaced stream, packages/bench/RESULTS.md, "the gateway's CPU per event, round 3").
 * Each piece is decoded whole up to its last complete character; the bytes of a character it cuts (at most
 * 3) are held and decoded with the next piece.
 *
 * The text is the same as the streaming decoder's, character for character, however the bytes are cut: a
 * piece is only ever cut before a byte that is not a continuation byte, where the WHATWG decoder starts
 * afresh whatever came before; malformed bytes give U+FFFD as there; a BOM is dropped at the start of the
 * text only.
 *
 * @internal
 */

/** See the module doc. */
export class Utf8Pieces {
  private readonly utf8 = new TextDecoder("utf-8", { ignoreBOM: true })
  /** The bytes of a character the last piece cut, decoded with the next. */
  private held: Uint8Array | undefined
  /** Whether text was given yet (a leading BOM is dropped from the first). */
  private started = false

  /** The text of `bytes` up to its last complete character, after the bytes held from the piece before. */
  decode(bytes: Uint8Array): string {
    let piece = bytes
    if (this.held !== undefined) {
      piece = new Uint8Array(this.held.length + bytes.length)
      piece.set(this.held)
      piece.set(bytes, this.held.length)
      this.held = undefined
    }
    const end = completeEnd(piece)
    if (end < piece.length) {
      this.held = piece.slice(end)
      piece = piece.subarray(0, end)
    }
    return this.text(piece.length === 0 ? "" : this.utf8.decode(piece))
  }

  /** The text of the bytes still held (a character cut at the end of the input: U+FFFD), `""` for none. */
  end(): string {
    const held = this.held
    this.held = undefined
    return held === undefined ? "" : this.text(this.utf8.decode(held))
  }

  private text(text: string): string {
    if (this.started || text === "") return text
    this.started = true
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }
}

/**
 * Where the last character of `bytes` starts when its bytes are not all there (the bytes from there on are
 * held for the next piece), else `bytes.length`. The last byte that is not a continuation byte (10xxxxxx)
 * among the last four starts the last character; its lead says how many bytes it needs.
 */
const completeEnd = (bytes: Uint8Array): number => {
  const length = bytes.length
  let start = length - 1
  while (start >= 0 && start > length - 4 && (bytes[start]! & 0xc0) === 0x80) start--
  if (start < 0) return length
  const lead = bytes[start]!
  const needs = lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4
  return length - start >= needs ? length : start
}
