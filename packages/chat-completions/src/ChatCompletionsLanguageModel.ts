/**
 * The core `LanguageModel` service over the Chat Completions API: `Prompt` -> request body
 * (`ChatCompletionsRequest.fromPrompt`) -> `ChatCompletionsClient` -> `ModelResponse`
 * (`ChatCompletionsOutput.fromCompletion`) or `StreamPart`s (`ChatCompletionsStream`). The part model, the
 * aggregator and the tool loop work over it unchanged.
 *
 * ```ts
 * Effect.provide(program, ChatCompletionsLanguageModel.layer({ model: "gpt-4o-mini" })).pipe(
 *   Effect.provide(ChatCompletionsClient.layerConfig()),   // OPENAI_API_KEY, OPENAI_BASE_URL
 *   Effect.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * @since 0.1.0
 */
import { LanguageModel, type ModelResponse, type Prompt, type StreamPart } from "@effect-responses/core"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ChatCompletionsClient from "./ChatCompletionsClient.js"
import * as ChatCompletionsOutput from "./ChatCompletionsOutput.js"
import * as ChatCompletionsRequest from "./ChatCompletionsRequest.js"

/**
 * The layer's request options: the model and every `ChatCompletionsRequest.RequestOptions` field. `tools`
 * and `toolChoice` given here are defaults that each call's `CallOptions` merge over.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = ChatCompletionsRequest.RequestOptions

/**
 * The request options of one call: the layer's `options` with the call's `tools` merged over them by name
 * (a call tool replaces a layer tool of the same name; the others are kept, layer tools first), the
 * call's `toolChoice` replacing the layer's when given, and the call's `responseFormat` replacing the
 * layer's (sent as `response_format`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeCallOptions = (
  options: Options,
  call: LanguageModel.CallOptions | undefined
): ChatCompletionsRequest.RequestOptions => {
  if (call === undefined) return options
  let tools = options.tools
  if (call.tools !== undefined) {
    const names = new Set(call.tools.map((tool) => tool.name))
    tools = [...(options.tools ?? []).filter((tool) => !names.has(tool.name)), ...call.tools]
  }
  return {
    ...options,
    tools,
    toolChoice: call.toolChoice ?? options.toolChoice,
    responseFormat: call.responseFormat ?? options.responseFormat
  }
}

/**
 * Builds the `LanguageModel` service over the `ChatCompletionsClient` in the context.
 *
 * - `generate` sends the request with `stream: false` and decodes the `chat.completion` body with
 *   `ChatCompletionsOutput.fromCompletion`.
 * - `stream` sends it with `stream: true` and, unless `includeUsage` is `false`,
 *   `stream_options: {include_usage: true}`, and decodes the SSE body (`ChatCompletionsStream`).
 *
 * Both fail with `InvalidPrompt` before any request when the prompt cannot be mapped, then with the
 * client's and the decoder's `AiError`s.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<LanguageModel.Service, never, ChatCompletionsClient.ChatCompletionsClient> =>
  Effect.gen(function*() {
    const client = yield* ChatCompletionsClient.ChatCompletionsClient

    const generate = (
      prompt: Prompt.Prompt,
      call?: LanguageModel.CallOptions
    ): Effect.Effect<ModelResponse.ModelResponse, LanguageModel.ModelError> =>
      ChatCompletionsRequest.fromPrompt(prompt, mergeCallOptions(options, call)).pipe(
        Effect.flatMap((body) => client.create({ ...body, stream: false })),
        Effect.flatMap(ChatCompletionsOutput.fromCompletion)
      )

    const stream = (
      prompt: Prompt.Prompt,
      call?: LanguageModel.CallOptions
    ): Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError> =>
      ChatCompletionsRequest.fromPrompt(prompt, mergeCallOptions(options, call)).pipe(
        Effect.map((body) =>
          client.createStream(
            options.includeUsage === false
              ? { ...body, stream: true }
              : { ...body, stream: true, stream_options: { include_usage: true } }
          )
        ),
        Stream.unwrap
      )

    return LanguageModel.LanguageModel.of({ generate, stream })
  })

/**
 * The `LanguageModel` layer over the Chat Completions API, with the layer-wide request `options`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<LanguageModel.LanguageModel, never, ChatCompletionsClient.ChatCompletionsClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))

/**
 * The default configuration: the model from `OPENAI_MODEL` (required), every other option unset.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Options> = Config.map(Config.nonEmptyString("OPENAI_MODEL"), (model) => ({ model }))

/**
 * The `LanguageModel` layer with its options from `effect/Config` (by default `config`). Fails with a
 * `ConfigError` when the configuration is invalid or missing.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Config.Config<Options> = config
): Layer.Layer<LanguageModel.LanguageModel, ConfigError.ConfigError, ChatCompletionsClient.ChatCompletionsClient> =>
  Layer.effect(LanguageModel.LanguageModel, Effect.flatMap(options, make))
