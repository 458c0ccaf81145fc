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
 * Options are set on the layer and overridden per call with `withOptions` (values of the call merge over
 * the layer's); the `tools` and `toolChoice` of core's `CallOptions` merge over both.
 *
 * @since 0.1.0
 */
import { AiError, LanguageModel, type ModelResponse, type Prompt, type StreamPart } from "@effect-responses/core"
import { isObject, objectField, stringField } from "@effect-responses/wire/Json"
import * as Channel from "effect/Channel"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
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
 * Per-call overrides of the layer's options: any `Options` field, `model` included.
 *
 * @since 0.1.0
 * @category models
 */
export type OptionsOverride = { readonly [K in keyof Options]?: Options[K] }

/**
 * The overrides in effect for the model calls of the current fiber (default: none). Set it with
 * `withOptions`, which merges over what is already set.
 *
 * @since 0.1.0
 * @category references
 */
export class CurrentOptions extends Context.Reference<CurrentOptions>()(
  "@effect-responses/responses/ResponsesLanguageModel/CurrentOptions",
  { defaultValue: (): OptionsOverride => ({}) }
) {}

/**
 * `override` merged over `base`: a field set in `override` wins, except that `reasoning`, `text`,
 * `metadata` and `extraBody` merge one level deep (an override of `reasoning.effort` keeps the base's
 * `reasoning.summary`) and `tools` merge by name, namespace and kind (`LanguageModel.mergeTools`: an override tool replaces the base
 * tool the model calls by the same name in the same namespace, a built-in tool only the same built-in; base tools come first). `builtInTools` and `toolChoice` are replaced whole. A field set to
 * `undefined` in `override` leaves the base's.
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeOptions: {
  (override: OptionsOverride): <O extends OptionsOverride>(base: O) => O
  <O extends OptionsOverride>(base: O, override: OptionsOverride): O
} = dual(2, <O extends OptionsOverride>(base: O, override: OptionsOverride): O => {
  const out: Record<string, unknown> = { ...base }
  for (const key of Object.keys(override) as Array<keyof OptionsOverride>) {
    const value = override[key]
    if (value === undefined) continue
    const current = base[key]
    switch (key) {
      case "reasoning":
      case "text":
      case "metadata":
      case "extraBody":
        out[key] = current === undefined ? value : { ...(current as object), ...(value as object) }
        break
      case "tools":
        out[key] = LanguageModel.mergeTools(base.tools, override.tools)
        break
      default:
        out[key] = value
    }
  }
  return out as O
})

/**
 * Runs `self` (an `Effect` or a `Stream`, e.g. a `ToolLoop.generate`) with `overrides` merged over the
 * options of every Responses model call it makes (`mergeOptions`; nested `withOptions` merge inner over
 * outer). Core's `LanguageModel` knows nothing of Responses options: this is how a caller overrides them
 * per call.
 *
 * ```ts
 * ToolLoop.generate(prompt, { toolkit }).pipe(
 *   ResponsesLanguageModel.withOptions({ reasoning: { effort: "high" }, maxOutputTokens: 4000 })
 * )
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withOptions: {
  (overrides: OptionsOverride): <Self extends EffectOrStream>(self: Self) => Self
  <Self extends EffectOrStream>(self: Self, overrides: OptionsOverride): Self
} = dual(
  2,
  <Self extends EffectOrStream>(self: Self, overrides: OptionsOverride): Self =>
    LanguageModel.withReference(self, CurrentOptions, (current) => mergeOptions(current, overrides))
)

/**
 * What `withOptions` applies to: any `Effect` or `Stream`.
 *
 * @since 0.1.0
 * @category models
 */
export type EffectOrStream = LanguageModel.EffectOrStream

/**
 * The request options of one call: the layer's `options` with the call's `tools` merged over them by name,
 * namespace and kind (`LanguageModel.mergeTools`: a call tool replaces a layer tool of the same name, namespace and kind; the
 * others are kept, layer tools first), the
 * call's `toolChoice` replacing the layer's when given, and the call's `responseFormat` replacing
 * `text.format` when given (`text.verbosity` is kept).
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeCallOptions = (
  options: Options,
  call: LanguageModel.CallOptions | undefined
): ResponsesRequest.RequestOptions => {
  if (call === undefined) return options
  return {
    ...options,
    tools: LanguageModel.mergeTools(options.tools, call.tools),
    toolChoice: call.toolChoice ?? options.toolChoice,
    ...(call.responseFormat === undefined ? {} : { text: { ...options.text, format: call.responseFormat } })
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
 * Each call's options: the layer's `options`, then the `withOptions` overrides of the calling fiber
 * (`CurrentOptions`), then the call's `CallOptions`. Both fail with `InvalidPrompt` before any request when
 * the prompt or the options cannot be mapped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, ResponsesClient.ResponsesClient> =>
  Effect.gen(function*() {
    const client = yield* ResponsesClient.ResponsesClient

    const requestBody = (prompt: Prompt.Prompt, call: LanguageModel.CallOptions | undefined) =>
      Effect.flatMap(
        CurrentOptions,
        (overrides) => ResponsesRequest.fromPrompt(prompt, mergeCallOptions(mergeOptions(options, overrides), call))
      )

    const generate = (
      prompt: Prompt.Prompt,
      call?: LanguageModel.CallOptions
    ): Effect.Effect<ModelResponse.ModelResponse, LanguageModel.ModelError> =>
      requestBody(prompt, call).pipe(
        Effect.flatMap((body) => client.create({ ...body, stream: false })),
        Effect.flatMap((json) =>
          Effect.flatMap(ResponsesOutput.fromResponse(json), (response) =>
            response.status === "failed" ? Effect.fail(failedError(response, json)) : Effect.succeed(response))
        )
      )

    const stream = (
      prompt: Prompt.Prompt,
      call?: LanguageModel.CallOptions
    ): Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError> =>
      // `Channel.unwrap`: `Stream.unwrap` costs about 140 fiber steps per call more.
      Stream.fromChannel(Channel.unwrap(
        Effect.map(requestBody(prompt, call), (body) => Stream.toChannel(client.createStream({ ...body, stream: true })))
      ))

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
