/**
 * The `LanguageModel` service: one model call, whole (`generate`) or streamed (`stream`), over whichever wire
 * protocol the layer provided speaks. Every call sends the whole prompt; nothing is kept on the server.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as AiError from "./AiError.js"
import type * as ModelResponse from "./ModelResponse.js"
import type * as Prompt from "./Prompt.js"
import type * as StreamPart from "./StreamPart.js"

/**
 * A local function tool as the model sees it: its `name`, `description`, the JSON Schema of its
 * `parameters` (an object schema), and whether the provider should enforce that schema (`strict`).
 *
 * @since 0.1.0
 * @category models
 */
export class ToolDefinition extends Schema.Class<ToolDefinition>("ToolDefinition")({
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
 * What a call adds to the prompt: the local function tools offered to the model and the tool choice.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly toolChoice?: ToolChoice | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * One model call, waited for whole. Fails with an `AiError`.
   */
  readonly generate: (
    prompt: Prompt.Prompt,
    options?: CallOptions
  ) => Effect.Effect<ModelResponse.ModelResponse, AiError.AiError>
  /**
   * One model call, streamed as `StreamPart`s; a failure arrives after the elements that came before it.
   */
  readonly stream: (
    prompt: Prompt.Prompt,
    options?: CallOptions
  ) => Stream.Stream<StreamPart.StreamPart, AiError.AiError>
}

/**
 * The service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class LanguageModel extends Context.Tag("@effect-responses/core/LanguageModel")<LanguageModel, Service>() {}
