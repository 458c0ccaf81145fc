/**
 * The bytes of a request body as it was read (its chunks, never joined into one buffer or string) and the
 * ways `jsonSlices` reads pieces of them as text.
 *
 * @internal
 */

/** A body as it was read: its chunks of bytes, in order. Offsets into it count bytes from its start. */
export type Chunks = ReadonlyArray<Uint8Array>

/** The size of `chunks` in bytes. */
export const sizeOf = (chunks: Chunks): number => chunks.reduce((size, chunk) => size + chunk.length, 0)

/** The bytes `[start, end)` of `chunks` (fewer past their end), without a copy when they lie in one chunk. */
export const bytesOf = (chunks: Chunks, start: number, to: number): Uint8Array => {
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

/** The bytes `[start, end)` of `chunks` as views of them (no copy), in order. */
export const viewsOf = (chunks: Chunks, start: number, end: number): Array<Uint8Array> => {
  const views: Array<Uint8Array> = []
  let base = 0
  for (const chunk of chunks) {
    const from = Math.max(start, base)
    const to = Math.min(end, base + chunk.length)
    if (from < to) views.push(chunk.subarray(from - base, to - base))
    base += chunk.length
    if (base >= end) break
  }
  return views
}

// the body from its first byte: a leading byte order mark is dropped (`TextDecoder`'s default)
const bodyDecoder = new TextDecoder()
// a part of the body after its first byte: a byte order mark there is a character, kept
export const partDecoder = new TextDecoder("utf-8", { ignoreBOM: true })
// the same, throwing on bytes that are no UTF-8 (which `partDecoder` reads as U+FFFD)
export const strictDecoder = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true })

/** The whole body as text, a leading byte order mark dropped. */
export const decode = (chunks: Chunks): string => {
  let text = ""
  for (const chunk of chunks) text += bodyDecoder.decode(chunk, { stream: true })
  return text + bodyDecoder.decode()
}

/** The length of a leading byte order mark of `chunks` (3 bytes, or 0: none), which is no character of the text. */
export const bomLength = (chunks: Chunks): number => {
  const head = bytesOf(chunks, 0, 3)
  return head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0
}

/**
 * A reader of pieces of `chunks` as text (`[start, end)` in bytes, each decoded on its own: a piece starts
 * and ends where a character does). Pieces are mostly read in order: the chunk holding the next one is
 * found from the last one's.
 */
export const makeTextOf = (chunks: Chunks): (start: number, end: number) => string => {
  let index = 0
  let base = 0
  return (start, end) => {
    if (end <= start) return ""
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
}
