/**
 * One model response: the assistant message made of its output items, why it stopped, and its usage.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Message from "./Message.js"
import * as Usage from "./Usage.js"

/**
 * Why the model stopped: `stop` (a final answer), `tool_calls` (it wants local tools run), `length` (an output
 * token limit), `content_filter`, or `other`. The Responses API's own reason for an incomplete response is
 * kept in `ModelResponse.incompleteReason`.
 *
 * @since 0.1.0
 * @category models
 */
export const FinishReason = Schema.Literal("stop", "tool_calls", "length", "content_filter", "other")

/**
 * @since 0.1.0
 * @category models
 */
export type FinishReason = typeof FinishReason.Type

/**
 * A whole response. `id` is the provider's response id (`resp_…`), `status` the Responses status
 * (`completed`, `incomplete`, `failed`, `in_progress` for a stream cut short), `incompleteReason` the API's
 * value (`max_output_tokens`, `content_filter`) when the response is incomplete.
 *
 * @since 0.1.0
 * @category models
 */
export class ModelResponse extends Schema.Class<ModelResponse>("@effect-responses/core/ModelResponse")({
  id: Schema.String,
  model: Schema.String,
  status: Schema.String,
  finishReason: FinishReason,
  incompleteReason: Schema.optionalWith(Schema.String, { exact: true }),
  usage: Usage.Usage,
  message: Message.AssistantMessage
}) {
  /**
   * The concatenated text of the message's text parts.
   *
   * @since 0.1.0
   */
  get text(): string {
    return this.message.text
  }
}

/**
 * The finish reason a response's parts imply when the protocol does not say it: `tool_calls` when the
 * message holds a local function call, else `stop`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const finishReasonOf = (message: Message.AssistantMessage): FinishReason =>
  message.parts.some((part) => part.type === "tool_call") ? "tool_calls" : "stop"
