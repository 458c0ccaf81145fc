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
 * - a `message` item of several content parts is one part per content part: updates of the second and later
 *   carry their `contentIndex` (see `PartUpdate`).
 *
 * A UI that concatenates what it receives (and honours `replace`) shows every character exactly once. JSON
 * encoding, one object per element: `{"type":"response_started","responseId","model"}`,
 * `{"type":"part","responseId","outputIndex","contentIndex"?,"partial","replace"?,"part"}` (`replace`
 * present only when `true`; `contentIndex` only for the second and later content parts of a message), `{"type":"response_finished","responseId","status","finishReason","incompleteReason"?,"usage"}`.
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
 * `contentIndex` (since 0.2.0) is the 0-based content part of a Responses `message` item the update belongs
 * to (the events' `content_index`): a message of several content parts (`output_text`, `refusal`; API
 * reference, `OutputMessage.content`) is one part per content part, all with the item's attributes, and
 * each content part is a slot of its own, `(outputIndex, contentIndex)`. Absent means 0: the only content
 * part of a message, or an item without content parts. It is an integer from 0 to 65535
 * (`MAX_CONTENT_INDEX`). A `replace: true` update at content index 0 replaces the whole output item:
 * the content parts after it that it does not bring again are dropped.
 *
 * @since 0.1.0
 * @category elements
 */
export class PartUpdate extends Schema.Class<PartUpdate>("@effect-responses/core/PartUpdate")({
  type: Schema.tag("part"),
  responseId: Schema.String,
  outputIndex: Schema.Number,
  contentIndex: Schema.optionalWith(Schema.Number, { exact: true }),
  partial: Schema.Boolean,
  replace: Schema.optionalWith(Schema.Boolean, { exact: true }),
  part: Part.AssistantPart
}) {}

/**
 * The largest `PartUpdate.contentIndex`: 65535. Content indices above it are not addressed (a decoder reads
 * such an event as content index 0).
 *
 * @since 0.2.0
 * @category elements
 */
export const MAX_CONTENT_INDEX = 65535

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
