/**
 * A JSON array kept as the request body's bytes where they are what `JSON.stringify` writes of it: the echo
 * of a request's `tools` in the Response object. The parsed tools, kept for the echo, were about 300 bytes
 * of objects a tool alive until the answer was written (10,000 tools: 3 MB), which every young-generation
 * collection meanwhile copied; their bytes lie outside the heap, in the body's chunks, which the request
 * keeps anyway.
 *
 * @internal
 */
import { partDecoder } from "./bytes.js"

/**
 * A run of an array's elements: their text (the UTF-8 of `JSON.stringify` of each, joined by commas) as
 * views of the body's bytes, or one element's value (its text was spelled otherwise: whitespace, an escape
 * `JSON.stringify` writes another way, a long string, a large element).
 */
export type Run =
  | { readonly bytes: ReadonlyArray<Uint8Array>; readonly length: number }
  | { readonly value: unknown }

/**
 * The array whose elements are those of `runs`, in order: its JSON text is `[`, the runs' texts (a value's
 * `JSON.stringify`) joined by commas, `]`, exactly `JSON.stringify` of the array of values. The gateway's
 * answer writer (`ResponsesLifecycle.toJsonPieces`, `toSsePieces`) copies the bytes a piece at a time;
 * anything else that stringifies it (`toJSON`) gets the values, parsed again from the bytes.
 */
export class ArrayText {
  constructor(
    readonly runs: ReadonlyArray<Run>,
    /** The bytes of the runs' texts (a value's counted as 0), for a writer that sizes its pieces. */
    readonly bytes: number
  ) {}

  /** The array of values, for `JSON.stringify`: the texts parsed (the same text again when stringified). */
  toJSON(): Array<unknown> {
    const values: Array<unknown> = []
    for (const run of this.runs) {
      if ("value" in run) values.push(run.value)
      else values.push(...(JSON.parse(`[${textOf(run.bytes)}]`) as Array<unknown>))
    }
    return values
  }
}

const textOf = (bytes: ReadonlyArray<Uint8Array>): string => {
  let text = ""
  for (const piece of bytes) text += partDecoder.decode(piece, { stream: true })
  return text + partDecoder.decode()
}
