/**
 * The `LanguageModel` service: one model call, whole (`generate`) or streamed (`stream`), over whichever wire
 * protocol the layer provided speaks. Every call sends the whole prompt; nothing is kept on the server.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as AiError from "./AiError.js"
import type * as ModelResponse from "./ModelResponse.js"
import type * as Prompt from "./Prompt.js"
import type * as ResponseFormat from "./ResponseFormat.js"
import type * as StreamPart from "./StreamPart.js"

/**
 * A local function tool as the model sees it: its `name`, `description`, the JSON Schema of its
 * `parameters` (an object schema), and whether the provider should enforce that schema (`strict`).
 *
 * @since 0.1.0
 * @category models
 */
export class ToolDefinition extends Schema.Class<ToolDefinition>("@effect-responses/core/ToolDefinition")({
  name: Schema.String,
  description: Schema.optionalWith(Schema.String, { exact: true }),
  parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  strict: Schema.Boolean
}) {}

/**
 * Which tools the model may call: `auto` (its choice), `none`, `required` (at least one), or one named tool.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolChoice = "auto" | "none" | "required" | { readonly tool: string }

/**
 * What a call adds to the prompt: the local function tools offered to the model, the tool choice, and the
 * format of the answer (`ResponseFormat`: free text, or JSON matching a schema). A layer that cannot send
 * the response format fails the call with `AiError.InvalidPrompt`; none drops it.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly toolChoice?: ToolChoice | undefined
  readonly responseFormat?: ResponseFormat.ResponseFormat | undefined
}

/**
 * What a model call can fail with: every `AiError` except those raised around a call, never by one
 * (`ToolError` from running a local tool, `StructuredOutputError` from decoding the answer).
 *
 * @since 0.2.0
 * @category models
 */
export type ModelError = Exclude<AiError.AiError, AiError.ToolError | AiError.StructuredOutputError>

/**
 * The service: `generate` and `stream`, each one model call with the whole prompt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * One model call, waited for whole. Fails with a `ModelError`.
   */
  readonly generate: (
    prompt: Prompt.Prompt,
    options?: CallOptions
  ) => Effect.Effect<ModelResponse.ModelResponse, ModelError>
  /**
   * One model call, streamed as `StreamPart`s; a failure (a `ModelError`) arrives after the elements that
   * came before it.
   */
  readonly stream: (
    prompt: Prompt.Prompt,
    options?: CallOptions
  ) => Stream.Stream<StreamPart.StreamPart, ModelError>
}

/**
 * The service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class LanguageModel extends Context.Tag("@effect-responses/core/LanguageModel")<LanguageModel, Service>() {}

/**
 * One model call, waited for whole, with the `LanguageModel` of the context (`service.generate`).
 *
 * ```ts
 * const response = yield* LanguageModel.generate(Prompt.make("Say hello"))
 * console.log(response.text)
 * ```
 *
 * Fails with a `ModelError`: whatever the layer's protocol, transport and decoder can fail with.
 *
 * @since 0.2.0
 * @category accessors
 */
export const generate = (
  prompt: Prompt.Prompt,
  options?: CallOptions
): Effect.Effect<ModelResponse.ModelResponse, ModelError, LanguageModel> =>
  Effect.flatMap(LanguageModel, (model) => model.generate(prompt, options))

/**
 * One model call, streamed as `StreamPart`s, with the `LanguageModel` of the context (`service.stream`).
 * Fold the parts with `MessageAggregator` (package `@effect-responses/aggregate`) to get `ModelResponse`s.
 *
 * ```ts
 * LanguageModel.stream(Prompt.make("Say hello")).pipe(Stream.runForEach((part) => Console.log(part.type)))
 * ```
 *
 * Fails with a `ModelError`, after the elements that came before it.
 *
 * @since 0.2.0
 * @category accessors
 */
export const stream = (
  prompt: Prompt.Prompt,
  options?: CallOptions
): Stream.Stream<StreamPart.StreamPart, ModelError, LanguageModel> =>
  Stream.unwrap(Effect.map(LanguageModel, (model) => model.stream(prompt, options)))
