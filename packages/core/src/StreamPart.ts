/**
 * The elements of a model stream (examples: the README's "Formats", "StreamPart lines"). Every element carries the
 * `responseId`; part updates carry the `outputIndex` of their output item and a `partial` flag:
 *
 * - a delta (`partial: true`) holds only the new text, summary text or arguments;
 * - a completing part (`partial: false`, at `response.output_item.done`) is emptied of everything the
 *   deltas already delivered and brings the payload, final attributes and annotations, plus any text the
 *   deltas did not deliver;
 * - items that have no deltas arrive complete;
 * - a part with `replace: true` (always `partial: false`) replaces whatever its slot holds: the decoder
 *   sends one when the server's final snapshot of an item contradicts the deltas it sent before (the
 *   snapshot wins). A UI discards what it showed for the slot and shows this part instead.
 *
 * A UI that concatenates what it receives (and honours `replace`) shows every character exactly once. JSON
 * encoding, one object per element: `{"type":"response_started","responseId","model"}`,
 * `{"type":"part","responseId","outputIndex","partial","replace"?,"part"}` (`replace` present only when
 * `true`), `{"type":"response_finished","responseId","status","finishReason","incompleteReason"?,"usage"}`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as ModelResponse from "./ModelResponse.js"
import * as Part from "./Part.js"
import * as Usage from "./Usage.js"

/**
 * A response started (`response.created`).
 *
 * @since 0.1.0
 * @category elements
 */
export class ResponseStarted extends Schema.Class<ResponseStarted>("@effect-responses/core/ResponseStarted")({
  type: Schema.tag("response_started"),
  responseId: Schema.String,
  model: Schema.String
}) {}

/**
 * An update of the part at `outputIndex` (0-based index of the output item) of response `responseId`: a
 * delta when `partial`, else the completing (or complete) part. `replace: true` marks a complete part that
 * replaces its slot even when deltas of the same type have been filling it (a snapshot that contradicts the
 * deltas); absent means `false`.
 *
 * @since 0.1.0
 * @category elements
 */
export class PartUpdate extends Schema.Class<PartUpdate>("@effect-responses/core/PartUpdate")({
  type: Schema.tag("part"),
  responseId: Schema.String,
  outputIndex: Schema.Number,
  partial: Schema.Boolean,
  replace: Schema.optionalWith(Schema.Boolean, { exact: true }),
  part: Part.AssistantPart
}) {}

/**
 * A response finished (`response.completed` or `response.incomplete`), with its usage.
 *
 * @since 0.1.0
 * @category elements
 */
export class ResponseFinished extends Schema.Class<ResponseFinished>("@effect-responses/core/ResponseFinished")({
  type: Schema.tag("response_finished"),
  responseId: Schema.String,
  status: Schema.String,
  finishReason: ModelResponse.FinishReason,
  incompleteReason: Schema.optionalWith(Schema.String, { exact: true }),
  usage: Usage.Usage
}) {}

/**
 * Any stream element.
 *
 * @since 0.1.0
 * @category elements
 */
export const StreamPart = Schema.Union(ResponseStarted, PartUpdate, ResponseFinished)

/**
 * @since 0.1.0
 * @category elements
 */
export type StreamPart = typeof StreamPart.Type

/**
 * Encodes an element to its public JSON value.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = Schema.encodeSync(StreamPart)
