/**
 * Our contenders: decode + aggregate through the public API, and decode only.
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { ResponsesStream } from "@effect-responses/responses"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import { bareLoop, type Contender } from "../Contenders.js"

const bytes = (body: ReadableStream<Uint8Array>): Stream.Stream<Uint8Array, unknown> =>
  Stream.fromReadableStream({ evaluate: () => body, onError: (error) => error })

/**
 * Ours, end to end through the public API: `Stream` of bytes -> `ResponsesStream.decodeSse` ->
 * `MessageAggregator.aggregate`; the text of the last response.
 *
 * @since 0.1.0
 * @category contenders
 */
export const aggregate: Contender = {
  id: "ours",
  name: "effect-responses",
  run: (body) =>
    Effect.runPromise(MessageAggregator.aggregate(ResponsesStream.decodeSse(bytes(body)))).then((responses) =>
      responses.at(-1)?.text ?? ""
    )
}

/**
 * Ours, decoding only: `Stream` of bytes -> `ResponsesStream.decodeSse` -> `StreamPart`s, consumed a chunk
 * at a time; the text deltas are collected to check the result.
 *
 * @since 0.1.0
 * @category contenders
 */
export const decodeOnly: Contender = {
  id: "ours-decode",
  name: "effect-responses (decode only)",
  run: (body) => {
    const texts: Array<string> = []
    return Effect.runPromise(
      Stream.runForEachChunk(ResponsesStream.decodeSse(bytes(body)), (chunk) =>
        Effect.sync(() => {
          for (const element of chunk) {
            if (element.type === "part" && element.partial && element.part.type === "text") {
              texts.push(element.part.text)
            }
          }
        }))
    ).then(() => texts.join(""))
  }
}

/**
 * The Effect floor: the floor's bare loop (split, `JSON.parse`, text deltas kept) run inside an Effect
 * `Stream` built the way ours is (`Stream.fromReadableStream`, one `Stream.mapChunks` stage, `runDrain`).
 * What any decoder on Effect streams pays before doing its own work: its ratio to the floor is the cost of
 * the stream itself, and ours is compared with it too.
 *
 * @since 0.1.0
 * @category contenders
 */
export const effectFloor: Contender = {
  id: "effect-floor",
  name: "Effect floor (the floor's loop in a Stream)",
  run: (body) =>
    Effect.suspend(() => {
      const loop = bareLoop()
      return Stream.runDrain(Stream.mapChunks(bytes(body), (chunk) => {
        for (const piece of chunk) loop.push(piece)
        return Chunk.empty<never>()
      })).pipe(Effect.map(() => loop.end()))
    }).pipe(Effect.runPromise)
}
