/**
 * `@effect/ai-openai` (0.41, the Effect 3 line), and the same `@effect/ai` program over our provider
 * (`@effect-responses/effect-ai`).
 *
 * @since 0.1.0
 */
import { EffectAiLanguageModel } from "@effect-responses/effect-ai"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as OpenAiLanguageModel from "@effect/ai-openai/OpenAiLanguageModel"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import type { Contender } from "../Contenders.js"
import { MODEL, PROMPT, SSE_HEADERS } from "./shared.js"

/**
 * `LanguageModel.streamText` with the OpenAI layers over an `HttpClient` that answers with the body; the
 * `text-delta` parts accumulated.
 *
 * @since 0.1.0
 * @category contenders
 */
export const make = (): Contender =>
  streamText("effect-ai", "@effect/ai-openai 0.41 (streamText)", (http) =>
    OpenAiLanguageModel.layer({ model: MODEL }).pipe(
      Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-bench") })),
      Layer.provide(http)
    ))

/**
 * The same `@effect/ai` program (`LanguageModel.streamText`, the `text-delta` parts accumulated) with its
 * provider swapped: `EffectAiLanguageModel.layer` over our Responses layer and client, on the same kind of
 * `HttpClient`. Set against `make`, it measures what an `@effect/ai` app pays or saves by the swap.
 *
 * @since 0.2.0
 * @category contenders
 */
export const makeOurs = (): Contender =>
  streamText("ours-effect-ai", "@effect/ai streamText over @effect-responses/effect-ai", (http) =>
    EffectAiLanguageModel.layer.pipe(
      Layer.provide(ResponsesLanguageModel.layer({ model: MODEL })),
      Layer.provide(ResponsesClient.layer({ apiKey: Redacted.make("sk-bench"), baseUrl: "http://bench.invalid/v1" })),
      Layer.provide(http)
    ))

/** The `streamText` program over `model`, built on an `HttpClient` that answers with the run's body. */
const streamText = (
  id: string,
  name: string,
  model: (http: Layer.Layer<HttpClient.HttpClient>) => Layer.Layer<LanguageModel.LanguageModel>
): Contender => {
  let pending: ReadableStream<Uint8Array> | undefined
  const httpClient = HttpClient.make((request) =>
    Effect.sync(() => {
      const body = pending
      pending = undefined
      return HttpClientResponse.fromWeb(request, new Response(body ?? null, { status: 200, headers: SSE_HEADERS }))
    })
  )
  const runtime = ManagedRuntime.make(model(Layer.succeed(HttpClient.HttpClient, httpClient)))
  return {
    id,
    name,
    run: (body) => {
      pending = body
      const texts: Array<string> = []
      return runtime.runPromise(
        Stream.runForEach(LanguageModel.streamText({ prompt: PROMPT }), (part) =>
          Effect.sync(() => {
            if (part.type === "text-delta") texts.push(part.delta)
          }))
      ).then(() => texts.join(""))
    }
  }
}
