/**
 * Our contenders: decode + aggregate through the public API, decode only, and the whole client path
 * (`LanguageModel.stream` over an `HttpClient`).
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { LanguageModel, Prompt } from "@effect-responses/core"
import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { ResponsesClient, ResponsesLanguageModel, ResponsesStream } from "@effect-responses/responses"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import { bareLoop, type Contender } from "../Contenders.js"
import { CHAT_MODEL, fakeFetch, MODEL, PROMPT } from "./shared.js"

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

/**
 * Ours on the whole client path a user calls: `LanguageModel.stream` of `ResponsesLanguageModel` through
 * `ResponsesClient` and an `HttpClient` whose answer is the body as a web `Response` (as `FetchHttpClient`
 * gives it), then `MessageAggregator.aggregate`; the text of the last response. The layers are built once,
 * as an app builds them at its start, and each run is one call through that runtime (request encoding,
 * retry wrapper, span and metrics included). The same path as the `openai` contender's.
 *
 * @since 0.2.0
 * @category contenders
 */
export const client = (): Promise<Contender> =>
  clientPath(
    "ours-client",
    "effect-responses (LanguageModel.stream, client path)",
    (http) =>
      ResponsesLanguageModel.layer({ model: MODEL }).pipe(
        Layer.provide(ResponsesClient.layer({ apiKey: Redacted.make("sk-bench"), baseUrl: "http://bench.invalid/v1" })),
        Layer.provide(http)
      )
  )

/**
 * Ours on the Chat Completions client path: `LanguageModel.stream` of `ChatCompletionsLanguageModel`
 * through `ChatCompletionsClient` and the same `HttpClient`, then `MessageAggregator.aggregate`. The peer is
 * the `openai` SDK's `chat.completions.stream`.
 *
 * @since 0.2.0
 * @category contenders
 */
export const chatClient = (): Promise<Contender> =>
  clientPath(
    "ours-chat-client",
    "effect-responses (Chat Completions LanguageModel.stream, client path)",
    (http) =>
      ChatCompletionsLanguageModel.layer({ model: CHAT_MODEL }).pipe(
        Layer.provide(ChatCompletionsClient.layer({ apiKey: Redacted.make("sk-bench"), baseUrl: "http://bench.invalid/v1" })),
        Layer.provide(http)
      )
  )

const clientPath = async (
  id: string,
  name: string,
  model: (http: Layer.Layer<HttpClient.HttpClient>) => Layer.Layer<LanguageModel.LanguageModel>
): Promise<Contender> => {
  const fake = fakeFetch()
  const http = HttpClient.make((request) =>
    Effect.promise(() => fake.fetch()).pipe(Effect.map((response) => HttpClientResponse.fromWeb(request, response)))
  )
  const runtime = ManagedRuntime.make(model(Layer.succeed(HttpClient.HttpClient, http)))
  const call = LanguageModel.LanguageModel.pipe(
    Effect.flatMap((model) => MessageAggregator.aggregate(model.stream(Prompt.user(PROMPT))))
  )
  await runtime.runPromise(Effect.void)
  return {
    id,
    name,
    run: (body) => {
      fake.next(body)
      return runtime.runPromise(call).then((responses) => responses.at(-1)?.text ?? "")
    }
  }
}
