/**
 * What a `Framing.BytesDecoder` is inside: two steps that the reader of the bytes takes in its own channel.
 * `input` writes what a chunk of input decodes to and goes on with `next` (or fails with the error that ends
 * the stream, after the elements before it); `end` writes what is left when the input ends. Kept out of the
 * public type, which is opaque, so that no Effect 3 channel type is part of the package's new API.
 *
 * @internal
 */
import * as Channel from "effect/Channel"
import type * as Chunk from "effect/Chunk"
import type * as Framing from "../Framing.js"

/** The steps over input pieces of type `I`. */
export interface Steps<I, A, D> {
  readonly input: <InElem, E, InErr, OutDone>(
    input: Chunk.Chunk<I>,
    next: Channel.Channel<Chunk.Chunk<A>, InElem, E, InErr, OutDone, unknown>
  ) => Channel.Channel<Chunk.Chunk<A>, InElem, E | D, InErr, OutDone, unknown>
  readonly end: Channel.Channel<Chunk.Chunk<A>, unknown, D, unknown, void, unknown>
  /**
   * How much activity the steps have seen so far (a decoder: the elements it decoded), for a reader's idle
   * timeout, which moves on only when it grows. Absent: every piece of input is activity.
   */
  readonly activity?: () => number
}

/** The steps of a decoder of bytes (every `BytesDecoder` is made by `Framing` or here, with them). */
export const stepsOf = <A, D>(decoder: Framing.BytesDecoder<A, D>): Steps<Uint8Array, A, D> =>
  decoder as unknown as Steps<Uint8Array, A, D>

/** The channel that reads its input through `steps` (a stage of its own, for readers that do not take them). */
export const reading = <I, A, D, E>(steps: Steps<I, A, D>): Channel.Channel<Chunk.Chunk<A>, Chunk.Chunk<I>, E | D, E, unknown, unknown> => {
  const read: Channel.Channel<Chunk.Chunk<A>, Chunk.Chunk<I>, E | D, E, unknown, unknown> = Channel.readWithCause({
    onInput: (input: Chunk.Chunk<I>) => steps.input(input, read),
    onFailure: (cause) => Channel.failCause(cause),
    onDone: () => steps.end
  })
  return read
}
