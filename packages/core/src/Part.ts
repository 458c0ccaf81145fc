/**
 * The parts an assistant, a user or a tool message is made of: one part per Responses output item,
 * in output order.
 *
 * Every part is a `Schema.Class` whose JSON encoding carries a `type` field (`text`, `refusal`,
 * `reasoning`, `tool_call`, `media`, `unknown`, `tool_result`). That encoding is public: the CLI prints it
 * and tests read it (see the README's "Formats").
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------------------
// attributes and payloads
// ---------------------------------------------------------------------------------------------------------

/**
 * What a part needs to be rebuilt as the output item it came from: the item id (`rs_…`, `msg_…`, `fc_…`,
 * never the `call_id`), the item status (`in_progress`, `completed`, `incomplete`, …) and, on messages, the
 * phase (`commentary` or `final_answer`). All optional; they round-trip unchanged.
 *
 * @since 0.1.0
 * @category attributes
 */
export const Attributes = Schema.Struct({
  itemId: Schema.optionalWith(Schema.String, { exact: true }),
  status: Schema.optionalWith(Schema.String, { exact: true }),
  phase: Schema.optionalWith(Schema.String, { exact: true })
})

/**
 * @since 0.1.0
 * @category attributes
 */
export type Attributes = typeof Attributes.Type

const attributes = Schema.optionalWith(Attributes, { exact: true, default: () => ({}) })

/**
 * Provider data the caller must hand back verbatim and cannot read, such as a reasoning item's
 * `encrypted_content` (provider `"openai.responses"`, kind `"encrypted_content"`). A payload is handed back
 * only to the provider that made it.
 *
 * @since 0.1.0
 * @category payloads
 */
export class OpaquePayload extends Schema.Class<OpaquePayload>("@effect-responses/core/OpaquePayload")({
  provider: Schema.String,
  kind: Schema.String,
  data: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------------------
// annotations
// ---------------------------------------------------------------------------------------------------------

/**
 * A web citation on output text (`url_citation`). Indices are UTF-16 code-unit offsets into the text.
 *
 * @since 0.1.0
 * @category annotations
 */
export const UrlCitation = Schema.Struct({
  type: Schema.Literal("url_citation"),
  url: Schema.String,
  title: Schema.optionalWith(Schema.String, { exact: true }),
  startIndex: Schema.optionalWith(Schema.Number, { exact: true }),
  endIndex: Schema.optionalWith(Schema.Number, { exact: true })
})

/**
 * A citation of an uploaded file (`file_citation`), at `index` in the text.
 *
 * @since 0.1.0
 * @category annotations
 */
export const FileCitation = Schema.Struct({
  type: Schema.Literal("file_citation"),
  fileId: Schema.String,
  filename: Schema.optionalWith(Schema.String, { exact: true }),
  index: Schema.optionalWith(Schema.Number, { exact: true })
})

/**
 * A citation of a file written by code interpreter in a container (`container_file_citation`).
 *
 * @since 0.1.0
 * @category annotations
 */
export const ContainerFileCitation = Schema.Struct({
  type: Schema.Literal("container_file_citation"),
  containerId: Schema.String,
  fileId: Schema.String,
  filename: Schema.optionalWith(Schema.String, { exact: true }),
  startIndex: Schema.optionalWith(Schema.Number, { exact: true }),
  endIndex: Schema.optionalWith(Schema.Number, { exact: true })
})

/**
 * A path to a file the model produced, e.g. with code interpreter (`file_path`), at `index` in the text.
 *
 * @since 0.1.0
 * @category annotations
 */
export const FilePath = Schema.Struct({
  type: Schema.Literal("file_path"),
  fileId: Schema.String,
  index: Schema.optionalWith(Schema.Number, { exact: true })
})

/**
 * The open fallback: an annotation of a type this version does not model, kept verbatim in `value`.
 *
 * @since 0.1.0
 * @category annotations
 */
export const OtherAnnotation = Schema.Struct({
  type: Schema.Literal("other"),
  value: Schema.Unknown
})

/**
 * An annotation on output text.
 *
 * @since 0.1.0
 * @category annotations
 */
export const Annotation = Schema.Union(UrlCitation, FileCitation, ContainerFileCitation, FilePath, OtherAnnotation)

/**
 * @since 0.1.0
 * @category annotations
 */
export type Annotation = typeof Annotation.Type

// ---------------------------------------------------------------------------------------------------------
// parts
// ---------------------------------------------------------------------------------------------------------

/**
 * Text: an `output_text` content part of a Responses `message` item, or user input text.
 *
 * @since 0.1.0
 * @category parts
 */
export class TextPart extends Schema.Class<TextPart>("@effect-responses/core/TextPart")({
  type: Schema.tag("text"),
  text: Schema.String,
  annotations: Schema.optionalWith(Schema.Array(Annotation), { exact: true, default: () => [] }),
  attributes
}) {}

/**
 * A refusal: the `refusal` content part of a Responses `message` item.
 *
 * @since 0.1.0
 * @category parts
 */
export class RefusalPart extends Schema.Class<RefusalPart>("@effect-responses/core/RefusalPart")({
  type: Schema.tag("refusal"),
  text: Schema.String,
  attributes
}) {}

/**
 * Reasoning: a Responses `reasoning` item. `summary` holds one entry per reasoning summary part; `text` the
 * raw reasoning text some open models send (`reasoning_text`); `payload` the encrypted content to hand back.
 *
 * @since 0.1.0
 * @category parts
 */
export class ReasoningPart extends Schema.Class<ReasoningPart>("@effect-responses/core/ReasoningPart")({
  type: Schema.tag("reasoning"),
  summary: Schema.optionalWith(Schema.Array(Schema.String), { exact: true, default: () => [] }),
  text: Schema.optionalWith(Schema.String, { exact: true }),
  payload: Schema.optionalWith(OpaquePayload, { exact: true }),
  attributes
}) {}

/**
 * A call of a local function tool: a Responses `function_call` item. `arguments` is the JSON text exactly as
 * the model sent it (possibly `""`). `namespace` is the item's `namespace` when the called function belongs
 * to a namespace (namespaced tools, tools found by tool search): the API requires it back on the next turn.
 *
 * @since 0.1.0
 * @category parts
 */
export class ToolCallPart extends Schema.Class<ToolCallPart>("@effect-responses/core/ToolCallPart")({
  type: Schema.tag("tool_call"),
  callId: Schema.String,
  name: Schema.String,
  arguments: Schema.String,
  namespace: Schema.optionalWith(Schema.String, { exact: true }),
  attributes
}) {}

/**
 * Media: an image or a file, given inline as base64 `data`, by `url`, or by a provider `fileId`. Made from an
 * `image_generation_call` result, or written by the user as image / PDF input. `detail` is the image
 * detail level (`low`, `high`, `auto`) for image input.
 *
 * @since 0.1.0
 * @category parts
 */
export class MediaPart extends Schema.Class<MediaPart>("@effect-responses/core/MediaPart")({
  type: Schema.tag("media"),
  mediaType: Schema.String,
  data: Schema.optionalWith(Schema.String, { exact: true }),
  url: Schema.optionalWith(Schema.String, { exact: true }),
  fileId: Schema.optionalWith(Schema.String, { exact: true }),
  filename: Schema.optionalWith(Schema.String, { exact: true }),
  detail: Schema.optionalWith(Schema.String, { exact: true }),
  attributes
}) {}

/**
 * Any output item the part model does not model itself (`web_search_call`, `file_search_call`,
 * `code_interpreter_call`, `mcp_*`, `custom_tool_call`, items not invented yet), kept verbatim: `kind` is
 * the item `type`, `item` the JSON item, `provider` who made it. It goes back only to that provider.
 *
 * @since 0.1.0
 * @category parts
 */
export class UnknownPart extends Schema.Class<UnknownPart>("@effect-responses/core/UnknownPart")({
  type: Schema.tag("unknown"),
  provider: Schema.String,
  kind: Schema.String,
  item: Schema.Unknown,
  attributes
}) {}

/**
 * The result of a local tool call, in a tool message; becomes a `function_call_output`. `output` is the
 * text the model reads; `isError` marks a failure (the Responses wire has no error flag, so the text of a
 * failure says so itself).
 *
 * @since 0.1.0
 * @category parts
 */
export class ToolResultPart extends Schema.Class<ToolResultPart>("@effect-responses/core/ToolResultPart")({
  type: Schema.tag("tool_result"),
  callId: Schema.String,
  name: Schema.String,
  output: Schema.String,
  isError: Schema.optionalWith(Schema.Boolean, { exact: true, default: () => false })
}) {}

/**
 * A part of an assistant message.
 *
 * @since 0.1.0
 * @category unions
 */
export const AssistantPart = Schema.Union(TextPart, RefusalPart, ReasoningPart, ToolCallPart, MediaPart, UnknownPart)

/**
 * @since 0.1.0
 * @category unions
 */
export type AssistantPart = typeof AssistantPart.Type

/**
 * A part of a user message: text, or an image / file.
 *
 * @since 0.1.0
 * @category unions
 */
export const UserPart = Schema.Union(TextPart, MediaPart)

/**
 * @since 0.1.0
 * @category unions
 */
export type UserPart = typeof UserPart.Type
