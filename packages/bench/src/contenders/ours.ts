/**
 * Our contenders: decode + aggregate through the public API, and decode only.
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { ResponsesStream } from "@effect-responses/responses"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Contender } from "../Contenders.js"

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
