/**
 * The core `LanguageModel` service over the Responses API: `Prompt` -> request body
 * (`ResponsesRequest.fromPrompt`) -> `ResponsesClient` -> `ModelResponse` (`ResponsesOutput.fromResponse`)
 * or `StreamPart`s (`ResponsesStream`).
 *
 * ```ts
 * Effect.provide(program, ResponsesLanguageModel.layer({ model: "gpt-5.1" })).pipe(
 *   Effect.provide(ResponsesClient.layerConfig()),
 *   Effect.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * @since 0.1.0
 */
import { AiError, LanguageModel, type ModelResponse, type Prompt, type StreamPart } from "@effect-responses/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { isObject, objectField, stringField } from "./internal/json.js"
import * as ResponsesClient from "./ResponsesClient.js"
import * as ResponsesOutput from "./ResponsesOutput.js"
import * as ResponsesRequest from "./ResponsesRequest.js"

/**
 * The layer's request options: the model and every `ResponsesRequest.RequestOptions` field. `tools` and
 * `toolChoice` given here are defaults that each call's `CallOptions` merge over.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = ResponsesRequest.RequestOptions

/**
 * The request options of one call: the layer's `options` with the call's `tools` merged over them by name
 * (a call tool replaces a layer tool of the same name; the others are kept, layer tools first) and the
 * call's `toolChoice` replacing the layer's when given.
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeCallOptions = (
  options: Options,
  call: LanguageModel.CallOptions | undefined
): ResponsesRequest.RequestOptions => {
  if (call === undefined) return options
  let tools = options.tools
  if (call.tools !== undefined) {
    const names = new Set(call.tools.map((tool) => tool.name))
    tools = [...(options.tools ?? []).filter((tool) => !names.has(tool.name)), ...call.tools]
  }
  return {
    ...options,
    tools,
    toolChoice: call.toolChoice ?? options.toolChoice
  }
}

/**
 * Builds the `LanguageModel` service over the `ResponsesClient` in the context.
 *
 * - `generate` sends the request with `stream: false` and decodes the body with
 *   `ResponsesOutput.fromResponse`; a body whose `status` is `failed` fails with `AiError.ResponseFailed`
 *   (`error.message`, `error.code` of the body).
 * - `stream` sends it with `stream: true` and decodes the SSE body (`ResponsesStream`).
 *
 * Both fail with `InvalidPrompt` before any request when the prompt cannot be mapped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, ResponsesClient.ResponsesClient> =>
  Effect.gen(function*() {
    const client = yield* ResponsesClient.ResponsesClient

    const generate = (
      prompt: Prompt.Prompt,
      call?: LanguageModel.CallOptions
    ): Effect.Effect<ModelResponse.ModelResponse, AiError.AiError> =>
      ResponsesRequest.fromPrompt(prompt, mergeCallOptions(options, call)).pipe(
        Effect.flatMap((body) => client.create({ ...body, stream: false })),
        Effect.flatMap((json) =>
          Effect.flatMap(ResponsesOutput.fromResponse(json), (response) =>
            response.status === "failed" ? Effect.fail(failedError(response, json)) : Effect.succeed(response))
        )
      )

    const stream = (
      prompt: Prompt.Prompt,
      call?: LanguageModel.CallOptions
    ): Stream.Stream<StreamPart.StreamPart, AiError.AiError> =>
      ResponsesRequest.fromPrompt(prompt, mergeCallOptions(options, call)).pipe(
        Effect.map((body) => client.createStream({ ...body, stream: true })),
        Stream.unwrap
      )

    return LanguageModel.LanguageModel.of({ generate, stream })
  })

/** `ResponseFailed` from a failed response body: `error.message` and `error.code` when present. */
const failedError = (response: ModelResponse.ModelResponse, json: unknown): AiError.ResponseFailed => {
  const error = isObject(json) ? objectField(json, "error") : undefined
  const code = error && stringField(error, "code")
  return new AiError.ResponseFailed({
    responseId: response.id,
    description: (error && stringField(error, "message")) ?? "the response failed",
    ...(code === undefined ? {} : { code })
  })
}

/**
 * The `LanguageModel` layer over the Responses API, with the layer-wide request `options`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<LanguageModel.LanguageModel, never, ResponsesClient.ResponsesClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
