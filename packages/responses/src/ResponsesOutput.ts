/**
 * Responses output -> the core part model: one output item (JSON) -> its assistant parts (one part, or one
 * per content part of a `message`), and a whole non-streaming response body (`POST /v1/responses` with
 * `stream: false`, or the `response` of `response.completed`) -> `ModelResponse`.
 *
 * | output item | part |
 * |---|---|
 * | `reasoning` | `ReasoningPart` (`summary` texts, `text` from `reasoning_text` content, `encrypted_content` as an `OpaquePayload`) |
 * | `message` | one part per content part, in order: `TextPart` (`output_text`, its annotations as sent) or `RefusalPart` (`refusal`); a message without either is one `TextPart` with text `""` |
 * | `function_call` | `ToolCallPart` (`namespace` when the call names one) |
 * | `custom_tool_call` | `CustomToolCallPart` |
 * | `shell_call` | `ShellCallPart` |
 * | `apply_patch_call` | `ApplyPatchCallPart` |
 * | `local_shell_call` | `LocalShellCallPart` |
 * | `mcp_approval_request` | `McpApprovalRequestPart` |
 * | `tool_search_call` / `tool_search_output` | `ToolSearchCallPart` / `ToolSearchOutputPart` |
 * | `image_generation_call` with a `result` | `MediaPart` (base64 image) |
 * | anything else | `UnknownPart` holding the item verbatim |
 *
 * Every part gets `attributes` `{itemId, status, phase}` from the item's `id`, `status` and `phase` (those
 * present); the parts of one message all get the message's (that is how `ResponsesRequest` hands them back
 * as one message item, content parts in order). Items are decoded with lenient schemas: unknown fields are ignored, only the fields used are
 * checked. Source: OpenAI API reference, "The response object" / output items.
 *
 * @since 0.1.0
 */
import { AiError, Message, ModelResponse, Part, UnsafePart, Usage } from "@effect-responses/core"
import { isObject, type JsonObject, numberField, objectField, stringField } from "@effect-responses/wire/Json"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Provider from "./Provider.js"

// ---------------------------------------------------------------------------------------------------------
// wire schemas (lenient: unknown fields are ignored)
// ---------------------------------------------------------------------------------------------------------

const NullableString = Schema.optional(Schema.NullOr(Schema.String))

/**
 * The fields of a `reasoning` output item this package reads.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReasoningItem = Schema.Struct({
  type: Schema.Literal("reasoning"),
  id: NullableString,
  status: NullableString,
  encrypted_content: NullableString,
  summary: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ text: Schema.String })))),
  content: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({ type: Schema.String, text: NullableString })))
  )
})

/**
 * The fields of a `message` output item this package reads. Each content part is `output_text`
 * (`text`, `annotations`) or `refusal` (`refusal`); other content types are ignored.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageItem = Schema.Struct({
  type: Schema.Literal("message"),
  id: NullableString,
  status: NullableString,
  phase: NullableString,
  content: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({
      type: Schema.String,
      text: NullableString,
      refusal: NullableString,
      annotations: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
    })))
  )
})

/**
 * The fields of a `function_call` output item this package reads. A missing or `null` `arguments` reads as
 * `""`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  id: NullableString,
  status: NullableString,
  call_id: Schema.String,
  name: Schema.String,
  arguments: NullableString,
  namespace: NullableString
})

/**
 * The fields of a `custom_tool_call` output item this package reads. A missing or `null` `input` reads as
 * `""`. Source: API reference, `CustomToolCall`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const CustomToolCallItem = Schema.Struct({
  type: Schema.Literal("custom_tool_call"),
  id: NullableString,
  status: NullableString,
  call_id: Schema.String,
  name: Schema.String,
  input: NullableString,
  namespace: NullableString
})

const NullableNumber = Schema.optional(Schema.NullOr(Schema.Number))

/**
 * The fields of a `shell_call` output item this package reads: `action.commands`, `action.timeout_ms`,
 * `action.max_output_length`, and `environment` (kept verbatim). Source: API reference, `FunctionShellCall`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ShellCallItem = Schema.Struct({
  type: Schema.Literal("shell_call"),
  id: NullableString,
  status: NullableString,
  call_id: Schema.String,
  action: Schema.Struct({
    commands: Schema.Array(Schema.String),
    timeout_ms: NullableNumber,
    max_output_length: NullableNumber
  }),
  environment: Schema.optional(Schema.Unknown)
})

/**
 * The fields of an `apply_patch_call` output item this package reads: the `operation` (`create_file`,
 * `update_file` with `path` and `diff`; `delete_file` with `path`). Source: API reference,
 * `ApplyPatchToolCall`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ApplyPatchCallItem = Schema.Struct({
  type: Schema.Literal("apply_patch_call"),
  id: NullableString,
  status: NullableString,
  call_id: Schema.String,
  // one member per type, so that a mismatch names the field of that type (`operation.path is missing`)
  operation: Schema.Union(
    Schema.Struct({ type: Schema.Literal("create_file"), path: Schema.String, diff: NullableString }),
    Schema.Struct({ type: Schema.Literal("update_file"), path: Schema.String, diff: NullableString }),
    Schema.Struct({ type: Schema.Literal("delete_file"), path: Schema.String })
  ).annotations({ description: "an object with type create_file, update_file or delete_file" })
})

/**
 * The fields of a `local_shell_call` output item this package reads: the `exec` action's `command`,
 * `timeout_ms`, `working_directory`, `env` and `user`. Source: API reference, `LocalShellToolCall`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const LocalShellCallItem = Schema.Struct({
  type: Schema.Literal("local_shell_call"),
  id: NullableString,
  status: NullableString,
  call_id: Schema.String,
  action: Schema.Struct({
    command: Schema.Array(Schema.String),
    timeout_ms: NullableNumber,
    working_directory: NullableString,
    env: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String }))),
    user: NullableString
  })
})

/**
 * The fields of an `mcp_approval_request` output item this package reads. Source: API reference,
 * `MCPApprovalRequest`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const McpApprovalRequestItem = Schema.Struct({
  type: Schema.Literal("mcp_approval_request"),
  id: Schema.String,
  status: NullableString,
  server_label: Schema.String,
  name: Schema.String,
  arguments: NullableString
})

/**
 * The fields of a `tool_search_call` output item this package reads. Source: API reference,
 * `ToolSearchCall`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ToolSearchCallItem = Schema.Struct({
  type: Schema.Literal("tool_search_call"),
  id: NullableString,
  status: NullableString,
  call_id: NullableString,
  execution: NullableString,
  arguments: Schema.optional(Schema.Unknown)
})

/**
 * The fields of a `tool_search_output` output item this package reads. Source: API reference,
 * `ToolSearchOutput`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ToolSearchOutputItem = Schema.Struct({
  type: Schema.Literal("tool_search_output"),
  id: NullableString,
  status: NullableString,
  call_id: NullableString,
  execution: NullableString,
  tools: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
})

/**
 * The fields of an `image_generation_call` output item this package reads: `result` (base64 image) and
 * `output_format` (`png`, `jpeg`, `webp`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ImageGenerationCallItem = Schema.Struct({
  type: Schema.Literal("image_generation_call"),
  id: NullableString,
  status: NullableString,
  result: NullableString,
  output_format: NullableString
})

/**
 * The fields of a Responses response object this package reads. `output` items are decoded one by one
 * with `decodeOutputItem`; `usage` and `incomplete_details` are read leniently (missing -> 0 / none).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseObject = Schema.Struct({
  id: Schema.String,
  model: NullableString,
  status: NullableString,
  output: Schema.Array(Schema.Unknown),
  usage: Schema.optional(Schema.Unknown),
  incomplete_details: Schema.optional(Schema.Unknown)
})

// ---------------------------------------------------------------------------------------------------------
// output items
// ---------------------------------------------------------------------------------------------------------

/**
 * One output item -> its assistant parts, synchronously: one part for every item but a `message`, which is
 * one part per content part (`output_text` -> `TextPart` with that content part's text and annotations,
 * `refusal` -> `RefusalPart`), in content order, each with the message's attributes; content parts of
 * other types are skipped, and a message with no `output_text` or `refusal` content is one `TextPart` with
 * text `""`. So a message of `[output_text, refusal]` or of two `output_text` parts keeps each content
 * part, with its annotations' offsets as sent (into its own text), and `ResponsesRequest` hands the parts
 * back as that one message (source: API reference, `OutputMessage.content`, an array of
 * `OutputTextContent | RefusalContent`). `decodeResponse` and the streaming decoder use this; the parts
 * of a message are the slots `(outputIndex, contentIndex)` of the stream (`StreamPart.PartUpdate`).
 *
 * Fails as `decodeOutputItem` does.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeOutputItemParts = (
  item: unknown
): Either.Either<ReadonlyArray<Part.AssistantPart>, AiError.MalformedOutput> => {
  if (isObject(item) && item.type === "message") {
    return isCommonMessage(item)
      ? Either.right(messageParts(item as unknown as typeof MessageItem.Type))
      : Either.map(decodeItem(MessageItem, item), messageParts)
  }
  return Either.map(decodeOutputItem(item), (part) => [part])
}

/**
 * One output item -> ONE assistant part, synchronously. See the module table for the mapping.
 *
 * A `message` item of several content parts is joined here: all its `output_text` parts become ONE
 * `TextPart` whose text is their concatenation, in order, and whose annotations are theirs with
 * `startIndex` / `endIndex` / `index` shifted by the length of the text before them (so they stay offsets
 * into the concatenated text), and a `refusal` beside `output_text` is dropped. A message with no
 * `output_text` but `refusal` content becomes one `RefusalPart` (refusal texts concatenated). A message
 * with neither becomes a `TextPart` with text `""`. That loses the content parts' boundaries: use
 * `decodeOutputItemParts`, which keeps every content part (the decoders of this package do).
 *
 * Fails with `MalformedOutput` (naming the item type, the path of the first mismatch and an excerpt)
 * when the item is not an object with a string `type`, or a known item lacks a field the mapping needs.
 *
 * Fails with `MalformedOutput` (naming the item type, the path of the first mismatch and an excerpt)
 * when the item is not an object with a string `type`, or a known item lacks a field the mapping needs;
 * except a `shell_call`, `apply_patch_call` or `local_shell_call` whose `call_id` is a string: it becomes an
 * `UnknownPart` whose `malformed` names the field (`operation.path is missing`, `action.commands: Expected
 * ReadonlyArray<string>, actual "ls"`), so that the client answers that call with an error the model reads
 * instead of losing the whole response.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeOutputItem = (item: unknown): Either.Either<Part.AssistantPart, AiError.MalformedOutput> => {
  if (!isObject(item) || typeof item.type !== "string") {
    return Either.left(
      new AiError.MalformedOutput({
        description: "an output item is not an object with a string `type`",
        excerpt: AiError.excerpt(safeStringify(item))
      })
    )
  }
  const common = decodeCommonItem(item)
  if (common !== undefined) return Either.right(common)
  switch (item.type) {
    case "reasoning":
      return Either.map(decodeItem(ReasoningItem, item), fromReasoningItem)
    case "message":
      return Either.map(decodeItem(MessageItem, item), fromMessageItem)
    case "function_call":
      return Either.map(decodeItem(FunctionCallItem, item), fromFunctionCallItem)
    case "custom_tool_call":
      return Either.map(decodeItem(CustomToolCallItem, item), fromCustomToolCallItem)
    case "shell_call":
      return orUnreadableCall(item, ShellCallItem, fromShellCallItem)
    case "apply_patch_call":
      return orUnreadableCall(item, ApplyPatchCallItem, fromApplyPatchCallItem)
    case "local_shell_call":
      return orUnreadableCall(item, LocalShellCallItem, fromLocalShellCallItem)
    case "mcp_approval_request":
      return Either.map(decodeItem(McpApprovalRequestItem, item), (decoded) =>
        new Part.McpApprovalRequestPart({
          approvalRequestId: decoded.id,
          serverLabel: decoded.server_label,
          name: decoded.name,
          arguments: decoded.arguments ?? "",
          attributes: attributesOf(decoded)
        }, true))
    case "tool_search_call":
      return Either.map(decodeItem(ToolSearchCallItem, item), (decoded) =>
        new Part.ToolSearchCallPart({
          ...(typeof decoded.call_id === "string" ? { callId: decoded.call_id } : {}),
          execution: decoded.execution ?? "server",
          arguments: decoded.arguments ?? {},
          attributes: attributesOf(decoded)
        }, true))
    case "tool_search_output":
      return Either.map(decodeItem(ToolSearchOutputItem, item), (decoded) =>
        new Part.ToolSearchOutputPart({
          ...(typeof decoded.call_id === "string" ? { callId: decoded.call_id } : {}),
          execution: decoded.execution ?? "server",
          tools: decoded.tools ?? [],
          attributes: attributesOf(decoded)
        }, true))
    case "image_generation_call":
      return Either.map(decodeItem(ImageGenerationCallItem, item), (decoded) =>
        typeof decoded.result === "string" && decoded.result !== ""
          ? new Part.MediaPart({
            mediaType: typeof decoded.output_format === "string" && decoded.output_format !== ""
              ? `image/${decoded.output_format}`
              : "image/png",
            data: decoded.result,
            attributes: attributesOf(decoded)
          }, true)
          : unknownPart(item))
    default:
      return Either.right(unknownPart(item))
  }
}

/**
 * `decodeOutputItem` as an `Effect`, failing with `AiError.MalformedOutput`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const fromOutputItem = (item: unknown): Effect.Effect<Part.AssistantPart, AiError.MalformedOutput> =>
  Effect.suspend(() => decodeOutputItem(item))

/** A field `Schema.optional(Schema.NullOr(Schema.String))` takes. */
const isNullableString = (u: unknown): boolean => u === undefined || u === null || typeof u === "string"

/**
 * An object whose fields are all its own (a plain or null-prototype object, as `JSON.parse` makes them), so
 * that reading a field gives what the schemas read: they take only own keys of an optional field.
 */
const isPlainObject = (u: unknown): u is JsonObject => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const prototype = Object.getPrototypeOf(u)
  return prototype === Object.prototype || prototype === null
}

/** A field `Schema.optional(Schema.NullOr(Schema.Array(...)))` takes, each element checked by `element`. */
const isNullableArrayOf = (u: unknown, element: (u: unknown) => boolean): boolean => {
  if (u === undefined || u === null) return true
  if (!Array.isArray(u)) return false
  for (let i = 0; i < u.length; i++) if (!element(u[i])) return false
  return true
}

const isSummaryEntry = (u: unknown): boolean => isPlainObject(u) && typeof u.text === "string"

const isReasoningContent = (u: unknown): boolean =>
  isPlainObject(u) && typeof u.type === "string" && isNullableString(u.text)

const isMessageContent = (u: unknown): boolean =>
  isPlainObject(u) && typeof u.type === "string" && isNullableString(u.text) && isNullableString(u.refusal) &&
  (u.annotations === undefined || u.annotations === null || Array.isArray(u.annotations))

/**
 * The common output items (`reasoning`, `message`, `function_call`, `custom_tool_call`) checked field by field
 * as their schemas check them, and mapped as `decodeOutputItem` maps what the schemas give; `undefined` for
 * any other item, or one these checks do not plainly accept (a prototype other than an object's, a field of
 * the wrong type), which then goes through its schema for the same part or the error naming the field.
 * Schema decoding of such an item took about 16 µs, these checks under 1 µs (packages/bench/RESULTS.md,
 * "the client path, round 8").
 */
const decodeCommonItem = (item: JsonObject): Part.AssistantPart | undefined => {
  if (!isPlainObject(item) || !isNullableString(item.id) || !isNullableString(item.status)) return undefined
  switch (item.type) {
    case "reasoning":
      return isNullableString(item.encrypted_content) && isNullableArrayOf(item.summary, isSummaryEntry) &&
          isNullableArrayOf(item.content, isReasoningContent)
        ? fromReasoningItem(item as unknown as typeof ReasoningItem.Type)
        : undefined
    case "message":
      return isCommonMessage(item) ? fromMessageItem(item as unknown as typeof MessageItem.Type) : undefined
    case "function_call":
      return typeof item.call_id === "string" && typeof item.name === "string" &&
          isNullableString(item.arguments) && isNullableString(item.namespace)
        ? fromFunctionCallItem(item as unknown as typeof FunctionCallItem.Type)
        : undefined
    case "custom_tool_call":
      return typeof item.call_id === "string" && typeof item.name === "string" && isNullableString(item.input) &&
          isNullableString(item.namespace)
        ? fromCustomToolCallItem(item as unknown as typeof CustomToolCallItem.Type)
        : undefined
    default:
      return undefined
  }
}

/** A `message` item as `MessageItem` reads it, checked field by field (see `decodeCommonItem`). */
const isCommonMessage = (item: JsonObject): boolean =>
  isPlainObject(item) && isNullableString(item.id) && isNullableString(item.status) &&
  isNullableString(item.phase) && isNullableArrayOf(item.content, isMessageContent)

const decodeItem = <A, I>(
  schema: Schema.Schema<A, I, never>,
  item: JsonObject
): Either.Either<A, AiError.MalformedOutput> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema)(item), (error) => {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    const path = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`
    return new AiError.MalformedOutput({
      description: `invalid ${String(item.type)} output item${path}: ${issue?.message ?? "does not match its schema"}`,
      excerpt: AiError.excerpt(safeStringify(item))
    })
  })

/**
 * A client-run built-in call item decoded to its part, or, when it does not match its schema but its
 * `call_id` is a string, an `UnknownPart` whose `malformed` names the first mismatch (`operation.path is
 * missing`): the call can still be answered, with an error.
 */
const orUnreadableCall = <A, I>(
  item: JsonObject,
  schema: Schema.Schema<A, I, never>,
  toPart: (decoded: A) => Part.AssistantPart
): Either.Either<Part.AssistantPart, AiError.MalformedOutput> => {
  const decoded = Schema.decodeUnknownEither(schema)(item)
  if (Either.isRight(decoded)) return Either.right(toPart(decoded.right))
  if (typeof item.call_id !== "string") return Either.map(decodeItem(schema, item), toPart)
  const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
  const where = issue === undefined || issue.path.length === 0 ? "the item" : issue.path.join(".")
  const what = issue?.message ?? "does not match its schema"
  return Either.right(
    new Part.UnknownPart({
      provider: Provider.PROVIDER,
      kind: String(item.type),
      item,
      malformed: what === "is missing" ? `${where} is missing` : `${where}: ${what}`,
      attributes: attributesOfItem(item)
    }, true)
  )
}

const safeStringify = (u: unknown): string => {
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

interface ItemAttributes {
  readonly id?: string | null | undefined
  readonly status?: string | null | undefined
  readonly phase?: string | null | undefined
}

const attributesOf = (item: ItemAttributes): Part.Attributes => attributesFrom(item.id, item.status, item.phase)

/**
 * The attributes of an item whose schema has no `phase`: the fast path of `decodeCommonItem` hands the raw
 * item, whose `phase`, if any, the schema would have dropped.
 */
const attributesWithoutPhase = (item: ItemAttributes): Part.Attributes =>
  attributesFrom(item.id, item.status, undefined)

const attributesFrom = (id: unknown, status: unknown, phase: unknown): Part.Attributes => {
  const attributes: { itemId?: string; status?: string; phase?: string } = {}
  if (typeof id === "string") attributes.itemId = id
  if (typeof status === "string") attributes.status = status
  if (typeof phase === "string") attributes.phase = phase
  return attributes
}

/**
 * The attributes of an output item given as raw JSON: `itemId` from `id`, `status`, `phase` (those that
 * are strings).
 *
 * @since 0.1.0
 * @category decoding
 */
export const attributesOfItem = (item: JsonObject): Part.Attributes =>
  attributesOf({ id: stringField(item, "id"), status: stringField(item, "status"), phase: stringField(item, "phase") })

const unknownPart = (item: JsonObject): Part.UnknownPart =>
  new Part.UnknownPart({
    provider: Provider.PROVIDER,
    kind: String(item.type),
    item,
    attributes: attributesOfItem(item)
  }, true)

const fromReasoningItem = (item: typeof ReasoningItem.Type): Part.ReasoningPart => {
  const summary = (item.summary ?? []).map((entry) => entry.text)
  let text: string | undefined
  for (const content of item.content ?? []) {
    if (content.type === "reasoning_text" && typeof content.text === "string") {
      text = text === undefined ? content.text : text + content.text
    }
  }
  return UnsafePart.reasoningPart(
    summary,
    text,
    typeof item.encrypted_content === "string"
      ? UnsafePart.opaquePayload(Provider.PROVIDER, Provider.ENCRYPTED_CONTENT, item.encrypted_content)
      : undefined,
    attributesWithoutPhase(item)
  )
}

const fromMessageItem = (item: typeof MessageItem.Type): Part.TextPart | Part.RefusalPart => {
  const texts: Array<string> = []
  const refusals: Array<string> = []
  const annotations: Array<Part.Annotation> = []
  let offset = 0
  let hasText = false
  for (const content of item.content ?? []) {
    if (content.type === "output_text") {
      hasText = true
      const text = content.text ?? ""
      for (const annotation of content.annotations ?? []) {
        annotations.push(shiftAnnotation(annotationFromWire(annotation), offset))
      }
      texts.push(text)
      offset += text.length
    } else if (content.type === "refusal") {
      refusals.push(content.refusal ?? "")
    }
  }
  const attributes = attributesOf(item)
  if (!hasText && refusals.length > 0) return UnsafePart.refusalPart(refusals.join(""), attributes)
  return UnsafePart.textPart(texts.join(""), annotations, attributes)
}

/** The parts of a `message` item, one per `output_text` / `refusal` content part, in order. */
const messageParts = (item: typeof MessageItem.Type): ReadonlyArray<Part.TextPart | Part.RefusalPart> => {
  const attributes = attributesOf(item)
  const content = item.content ?? []
  const parts: Array<Part.TextPart | Part.RefusalPart> = []
  for (const entry of content) {
    if (entry.type === "output_text") {
      const annotations = entry.annotations ?? []
      parts.push(UnsafePart.textPart(
        entry.text ?? "",
        annotations.length === 0 ? [] : annotations.map(annotationFromWire),
        attributes
      ))
    } else if (entry.type === "refusal") {
      parts.push(UnsafePart.refusalPart(entry.refusal ?? "", attributes))
    }
  }
  if (parts.length === 0) parts.push(UnsafePart.textPart("", [], attributes))
  return parts
}

const fromFunctionCallItem = (item: typeof FunctionCallItem.Type): Part.ToolCallPart =>
  UnsafePart.toolCallPart(
    item.call_id,
    item.name,
    item.arguments ?? "",
    attributesWithoutPhase(item),
    typeof item.namespace === "string" ? item.namespace : undefined
  )

const fromCustomToolCallItem = (item: typeof CustomToolCallItem.Type): Part.CustomToolCallPart =>
  UnsafePart.customToolCallPart(
    item.call_id,
    item.name,
    item.input ?? "",
    attributesWithoutPhase(item),
    typeof item.namespace === "string" ? item.namespace : undefined
  )

const fromShellCallItem = (item: typeof ShellCallItem.Type): Part.ShellCallPart =>
  new Part.ShellCallPart({
    callId: item.call_id,
    commands: item.action.commands,
    ...(typeof item.action.timeout_ms === "number" ? { timeoutMs: item.action.timeout_ms } : {}),
    ...(typeof item.action.max_output_length === "number" ? { maxOutputLength: item.action.max_output_length } : {}),
    ...(item.environment === undefined || item.environment === null ? {} : { environment: item.environment }),
    attributes: attributesOf(item)
  }, true)

const fromApplyPatchCallItem = (item: typeof ApplyPatchCallItem.Type): Part.ApplyPatchCallPart =>
  new Part.ApplyPatchCallPart({
    callId: item.call_id,
    operation: item.operation.type === "delete_file"
      ? { type: "delete_file", path: item.operation.path }
      : { type: item.operation.type, path: item.operation.path, diff: item.operation.diff ?? "" },
    attributes: attributesOf(item)
  }, true)

const fromLocalShellCallItem = (item: typeof LocalShellCallItem.Type): Part.LocalShellCallPart =>
  new Part.LocalShellCallPart({
    callId: item.call_id,
    command: item.action.command,
    ...(typeof item.action.timeout_ms === "number" ? { timeoutMs: item.action.timeout_ms } : {}),
    ...(typeof item.action.working_directory === "string" ? { workingDirectory: item.action.working_directory } : {}),
    env: item.action.env ?? {},
    ...(typeof item.action.user === "string" ? { user: item.action.user } : {}),
    attributes: attributesOf(item)
  }, true)

// ---------------------------------------------------------------------------------------------------------
// annotations
// ---------------------------------------------------------------------------------------------------------

/**
 * One `output_text` annotation (JSON) -> a core `Annotation`: `url_citation` (`url`, `title`,
 * `start_index`, `end_index`), `file_citation` (`file_id`, `filename`, `index`) and
 * `container_file_citation` (`container_id`, `file_id`, `filename`, `start_index`, `end_index`) and
 * `file_path` (`file_id`, `index`) with camelCase fields; any other annotation, or a known one lacking its required ids, as
 * `{type: "other", value}` holding the JSON verbatim.
 *
 * @since 0.1.0
 * @category annotations
 */
export const annotationFromWire = (annotation: unknown): Part.Annotation => {
  if (isObject(annotation)) {
    switch (annotation.type) {
      case "url_citation": {
        const url = stringField(annotation, "url")
        if (url === undefined) break
        return {
          type: "url_citation",
          url,
          ...optional("title", stringField(annotation, "title")),
          ...optional("startIndex", numberField(annotation, "start_index")),
          ...optional("endIndex", numberField(annotation, "end_index"))
        }
      }
      case "file_citation": {
        const fileId = stringField(annotation, "file_id")
        if (fileId === undefined) break
        return {
          type: "file_citation",
          fileId,
          ...optional("filename", stringField(annotation, "filename")),
          ...optional("index", numberField(annotation, "index"))
        }
      }
      case "container_file_citation": {
        const containerId = stringField(annotation, "container_id")
        const fileId = stringField(annotation, "file_id")
        if (containerId === undefined || fileId === undefined) break
        return {
          type: "container_file_citation",
          containerId,
          fileId,
          ...optional("filename", stringField(annotation, "filename")),
          ...optional("startIndex", numberField(annotation, "start_index")),
          ...optional("endIndex", numberField(annotation, "end_index"))
        }
      }
      case "file_path": {
        const fileId = stringField(annotation, "file_id")
        if (fileId === undefined) break
        return { type: "file_path", fileId, ...optional("index", numberField(annotation, "index")) }
      }
    }
  }
  return { type: "other", value: annotation }
}

const optional = <K extends string, A>(key: K, value: A | undefined): { readonly [P in K]?: A } =>
  (value === undefined ? {} : { [key]: value }) as { readonly [P in K]?: A }

/**
 * The annotation moved `offset` UTF-16 code units further into the text: how an annotation of a message's
 * second or later `output_text` content part is placed in the one `TextPart` that joins them.
 *
 * @since 0.1.0
 * @category annotations
 */
export const shiftAnnotation = (annotation: Part.Annotation, offset: number): Part.Annotation => {
  if (offset === 0) return annotation
  switch (annotation.type) {
    case "url_citation":
    case "container_file_citation":
      return {
        ...annotation,
        ...optional("startIndex", annotation.startIndex === undefined ? undefined : annotation.startIndex + offset),
        ...optional("endIndex", annotation.endIndex === undefined ? undefined : annotation.endIndex + offset)
      }
    case "file_citation":
    case "file_path":
      return {
        ...annotation,
        ...optional("index", annotation.index === undefined ? undefined : annotation.index + offset)
      }
    case "other":
      return annotation
  }
}

// ---------------------------------------------------------------------------------------------------------
// usage and finish reason
// ---------------------------------------------------------------------------------------------------------

/**
 * A Responses `usage` object (JSON) -> core `Usage`: `input_tokens`, `input_tokens_details.cached_tokens`,
 * `output_tokens`, `output_tokens_details.reasoning_tokens`, `total_tokens`. A missing, `null` or
 * non-numeric count reads as 0; a missing `total_tokens` as input + output.
 *
 * @since 0.1.0
 * @category decoding
 */
export const usageFromWire = (usage: unknown): Usage.Usage => {
  if (!isObject(usage)) return Usage.empty
  const inputTokens = numberField(usage, "input_tokens") ?? 0
  const outputTokens = numberField(usage, "output_tokens") ?? 0
  const inputDetails = objectField(usage, "input_tokens_details")
  const outputDetails = objectField(usage, "output_tokens_details")
  return UnsafePart.usage(
    inputTokens,
    (inputDetails && numberField(inputDetails, "cached_tokens")) ?? 0,
    outputTokens,
    (outputDetails && numberField(outputDetails, "reasoning_tokens")) ?? 0,
    numberField(usage, "total_tokens") ?? inputTokens + outputTokens
  )
}

/**
 * The `incomplete_details.reason` of a response object (JSON), if any (`max_output_tokens`,
 * `content_filter`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const incompleteReasonFromWire = (incompleteDetails: unknown): string | undefined =>
  isObject(incompleteDetails) ? stringField(incompleteDetails, "reason") : undefined

/**
 * The finish reason of a response: `completed` -> `tool_calls` when the output holds a call the client
 * answers (`hasFunctionCall`),
 * else `stop`; `incomplete` -> `length` for `max_output_tokens`, `content_filter` for `content_filter`,
 * else `other`; any other status (`failed`, `cancelled`, `in_progress`, `queued`) -> `other`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const finishReasonOf = (
  status: string,
  incompleteReason: string | undefined,
  hasFunctionCall: boolean
): ModelResponse.FinishReason => {
  switch (status) {
    case "completed":
      return hasFunctionCall ? "tool_calls" : "stop"
    case "incomplete":
      return incompleteReason === "max_output_tokens"
        ? "length"
        : incompleteReason === "content_filter"
        ? "content_filter"
        : "other"
    default:
      return "other"
  }
}

/**
 * The output item types the client answers: `function_call`, `custom_tool_call`, `shell_call`,
 * `apply_patch_call`, `local_shell_call` and `mcp_approval_request`.
 *
 * @since 0.2.0
 * @category decoding
 */
export const CLIENT_CALL_TYPES: ReadonlySet<string> = new Set([
  "function_call",
  "custom_tool_call",
  "shell_call",
  "apply_patch_call",
  "local_shell_call",
  "mcp_approval_request"
])

/**
 * Whether a list of output items (JSON) holds a call the client answers (`CLIENT_CALL_TYPES`, or a
 * `tool_search_call` with `execution: "client"`) that no `*_output` item of the list answers (a hosted
 * shell's `shell_call_output`): the response then finishes with `tool_calls`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const hasFunctionCall = (output: ReadonlyArray<unknown>): boolean => {
  const answered = new Set<unknown>()
  for (const item of output) {
    if (isObject(item) && typeof item.type === "string" && item.type.endsWith("_output")) answered.add(item.call_id)
  }
  return output.some((item) =>
    isObject(item) &&
    (CLIENT_CALL_TYPES.has(item.type as string) || (item.type === "tool_search_call" && item.execution === "client")) &&
    !(typeof item.call_id === "string" && answered.has(item.call_id))
  )
}

// ---------------------------------------------------------------------------------------------------------
// whole responses
// ---------------------------------------------------------------------------------------------------------

/**
 * A whole Responses response object (JSON: the body of a non-streaming `POST /v1/responses`, or the
 * `response` of `response.completed` / `response.incomplete`) -> `ModelResponse`: `id`, `model` (`""` when
 * absent), `status` (`"completed"` when absent), the assistant message made of the output items in
 * order (`decodeOutputItemParts`: a message of several content parts is several parts), `usage` (`usageFromWire`), `finishReason` (`finishReasonOf`) and
 * `incompleteReason` (`incomplete_details.reason`).
 *
 * A `failed` response decodes too (finish reason `other`); callers that want it as an error check
 * `status`. Fails with `MalformedOutput` when the body is not a response object or an item is malformed.
 *
 * @since 0.1.0
 * @category decoding
 */
export const fromResponse = (json: unknown): Effect.Effect<ModelResponse.ModelResponse, AiError.MalformedOutput> =>
  Effect.suspend(() => decodeResponse(json))

/**
 * `fromResponse`, synchronously, as an `Either`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeResponse = (
  json: unknown
): Either.Either<ModelResponse.ModelResponse, AiError.MalformedOutput> => {
  const decoded = Schema.decodeUnknownEither(ResponseObject)(json)
  if (Either.isLeft(decoded)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
    const path = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`
    return Either.left(
      new AiError.MalformedOutput({
        description: `not a Responses response object${path}: ${issue?.message ?? "does not match its schema"}`,
        excerpt: AiError.excerpt(safeStringify(json))
      })
    )
  }
  const response = decoded.right
  const parts: Array<Part.AssistantPart> = []
  for (let index = 0; index < response.output.length; index++) {
    const decodedParts = decodeOutputItemParts(response.output[index])
    if (Either.isLeft(decodedParts)) {
      return Either.left(
        new AiError.MalformedOutput({
          description: `output[${index}]: ${decodedParts.left.description}`,
          ...(decodedParts.left.excerpt === undefined ? {} : { excerpt: decodedParts.left.excerpt })
        })
      )
    }
    for (const part of decodedParts.right) parts.push(part)
  }
  const status = response.status ?? "completed"
  const incompleteReason = incompleteReasonFromWire(response.incomplete_details)
  return Either.right(
    new ModelResponse.ModelResponse({
      id: response.id,
      model: response.model ?? "",
      status,
      finishReason: finishReasonOf(status, incompleteReason, hasFunctionCall(response.output)),
      ...(incompleteReason === undefined ? {} : { incompleteReason }),
      usage: usageFromWire(response.usage),
      message: new Message.AssistantMessage({ role: "assistant", parts }, true)
    }, true)
  )
}
