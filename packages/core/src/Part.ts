/**
 * The parts an assistant, a user or a tool message is made of: one part per Responses output item,
 * in output order; a `message` item is one part per content part (`TextPart` for `output_text`,
 * `RefusalPart` for `refusal`), all with the item's attributes.
 *
 * Every part is a `Schema.Class` whose JSON encoding carries a `type` field (`text`, `refusal`,
 * `reasoning`, `tool_call`, `custom_tool_call`, `shell_call`, `apply_patch_call`, `local_shell_call`,
 * `mcp_approval_request`, `tool_search_call`, `tool_search_output`, `media`, `unknown`; in tool messages
 * `tool_result`, `shell_call_output`, `apply_patch_call_output`, `local_shell_call_output`,
 * `mcp_approval_response`, `tool_search_output`). That encoding is public: the CLI prints it
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

const namespace = Schema.optionalWith(Schema.String, { exact: true })

/**
 * Provider data the caller must hand back verbatim and cannot read, such as a reasoning item's
 * `encrypted_content` (provider `"openai.responses"`, kind `"encrypted_content"`) or a Chat Completions
 * tool call's `extra_content` (provider `"chat-completions"`, kind `"extra_content"`: Gemini's thought
 * signature). A payload is handed back only to the provider that made it.
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
 * `payload` is provider data the call must be sent back with (field added in 0.2.0): a Chat Completions tool
 * call's `extra_content`, which carries Gemini's thought signature (provider `"chat-completions"`, kind
 * `"extra_content"`, the JSON text as received; see `ChatCompletionsOutput.EXTRA_CONTENT`).
 *
 * @since 0.1.0
 * @category parts
 */
export class ToolCallPart extends Schema.Class<ToolCallPart>("@effect-responses/core/ToolCallPart")({
  type: Schema.tag("tool_call"),
  callId: Schema.String,
  name: Schema.String,
  arguments: Schema.String,
  namespace,
  payload: Schema.optionalWith(OpaquePayload, { exact: true }),
  attributes
}) {}

/**
 * A call of a custom (freeform) tool: a Responses `custom_tool_call` item. `input` is the raw text the
 * model wrote (constrained by the tool's grammar when it has one), never JSON-decoded. `namespace` is the
 * namespace of the tool when the tool belongs to one. `payload` is provider data the call must be sent back
 * with, as on `ToolCallPart` (a custom tool called over Chat Completions, as a function). Source: API
 * reference, `CustomToolCall`; recorded in `pai-gpt5-custom-tool-call-input-deltas.sse`.
 *
 * @since 0.2.0
 * @category parts
 */
export class CustomToolCallPart extends Schema.Class<CustomToolCallPart>("@effect-responses/core/CustomToolCallPart")({
  type: Schema.tag("custom_tool_call"),
  callId: Schema.String,
  name: Schema.String,
  input: Schema.String,
  namespace,
  payload: Schema.optionalWith(OpaquePayload, { exact: true }),
  attributes
}) {}

/**
 * A request to run shell commands on the client: a Responses `shell_call` item (the `shell` tool).
 * `commands` run in order; `timeoutMs` (milliseconds) and `maxOutputLength` (characters of output per
 * command) are the model's limits, absent when it gave none (`null` on the wire). `environment` is the
 * item's `environment`, verbatim, when present. Source: API reference, `FunctionShellCall`; recorded in
 * `vai-openai-shell-call.chunks.txt`.
 *
 * @since 0.2.0
 * @category parts
 */
export class ShellCallPart extends Schema.Class<ShellCallPart>("@effect-responses/core/ShellCallPart")({
  type: Schema.tag("shell_call"),
  callId: Schema.String,
  commands: Schema.Array(Schema.String),
  timeoutMs: Schema.optionalWith(Schema.Number, { exact: true }),
  maxOutputLength: Schema.optionalWith(Schema.Number, { exact: true }),
  environment: Schema.optionalWith(Schema.Unknown, { exact: true }),
  attributes
}) {}

/**
 * One file operation of an `apply_patch_call`: create a file from a diff of `+` lines, update a file with a
 * V4A diff of hunks, or delete it. `path` is relative to the workspace the client chose. Source: API
 * reference, `ApplyPatchCreateFileOperation` / `ApplyPatchUpdateFileOperation` /
 * `ApplyPatchDeleteFileOperation`.
 *
 * @since 0.2.0
 * @category parts
 */
export const ApplyPatchOperation = Schema.Union(
  Schema.Struct({ type: Schema.Literal("create_file"), path: Schema.String, diff: Schema.String }),
  Schema.Struct({ type: Schema.Literal("update_file"), path: Schema.String, diff: Schema.String }),
  Schema.Struct({ type: Schema.Literal("delete_file"), path: Schema.String })
)

/**
 * @since 0.2.0
 * @category parts
 */
export type ApplyPatchOperation = typeof ApplyPatchOperation.Type

/**
 * A request to change a file on the client: a Responses `apply_patch_call` item (the `apply_patch` tool).
 * Source: API reference, `ApplyPatchToolCall`; recorded in `vai-openai-apply-patch-call.chunks.txt`.
 *
 * @since 0.2.0
 * @category parts
 */
export class ApplyPatchCallPart extends Schema.Class<ApplyPatchCallPart>("@effect-responses/core/ApplyPatchCallPart")({
  type: Schema.tag("apply_patch_call"),
  callId: Schema.String,
  operation: ApplyPatchOperation,
  attributes
}) {}

/**
 * A request to run one command on the client: a Responses `local_shell_call` item (the `local_shell` tool
 * of `codex-mini-latest`). `command` is the argument vector (`["ls", "-la"]`), `timeoutMs` milliseconds,
 * `env` extra environment variables. Source: API reference, `LocalShellToolCall` / `LocalShellExecAction`.
 *
 * @since 0.2.0
 * @category parts
 */
export class LocalShellCallPart extends Schema.Class<LocalShellCallPart>("@effect-responses/core/LocalShellCallPart")({
  type: Schema.tag("local_shell_call"),
  callId: Schema.String,
  command: Schema.Array(Schema.String),
  timeoutMs: Schema.optionalWith(Schema.Number, { exact: true }),
  workingDirectory: Schema.optionalWith(Schema.String, { exact: true }),
  env: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), {
    exact: true,
    default: () => ({})
  }),
  user: Schema.optionalWith(Schema.String, { exact: true }),
  attributes
}) {}

/**
 * A remote MCP server's tool call that waits for the client's approval: a Responses `mcp_approval_request`
 * item. `approvalRequestId` is the item id (`mcpr_…`) an `McpApprovalResponsePart` answers; `arguments` is
 * the JSON text of the call. Source: API reference, `MCPApprovalRequest`; recorded in
 * `vai-openai-mcp-approval-request.chunks.txt`.
 *
 * @since 0.2.0
 * @category parts
 */
export class McpApprovalRequestPart extends Schema.Class<McpApprovalRequestPart>("@effect-responses/core/McpApprovalRequestPart")({
  type: Schema.tag("mcp_approval_request"),
  approvalRequestId: Schema.String,
  serverLabel: Schema.String,
  name: Schema.String,
  arguments: Schema.String,
  attributes
}) {}

/**
 * A tool search: a Responses `tool_search_call` item, run by the server (`execution: "server"`) or asked of
 * the client (`"client"`). `arguments` is the item's `arguments`, verbatim (e.g. `{paths: ["get_weather"]}`);
 * `callId` is absent when the wire has `null` (server execution). Replayed as it came. Source: API
 * reference, `ToolSearchCall`; recorded in `vai-openai-tool-search.chunks.txt`.
 *
 * @since 0.2.0
 * @category parts
 */
export class ToolSearchCallPart extends Schema.Class<ToolSearchCallPart>("@effect-responses/core/ToolSearchCallPart")({
  type: Schema.tag("tool_search_call"),
  callId: Schema.optionalWith(Schema.String, { exact: true }),
  execution: Schema.String,
  arguments: Schema.Unknown,
  attributes
}) {}

/**
 * The tools a tool search loaded: a Responses `tool_search_output` item. `tools` are the loaded tool
 * definitions, verbatim (wire JSON). In an assistant message it is the server's output; in a tool message,
 * the client's answer to a client-executed `tool_search_call`. Source: API reference, `ToolSearchOutput`.
 *
 * @since 0.2.0
 * @category parts
 */
export class ToolSearchOutputPart extends Schema.Class<ToolSearchOutputPart>("@effect-responses/core/ToolSearchOutputPart")({
  type: Schema.tag("tool_search_output"),
  callId: Schema.optionalWith(Schema.String, { exact: true }),
  execution: Schema.String,
  tools: Schema.Array(Schema.Unknown),
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
 * `code_interpreter_call`, `mcp_call`, `mcp_list_tools`, items not invented yet), kept verbatim: `kind` is
 * the item `type`, `item` the JSON item, `provider` who made it. It goes back only to that provider.
 *
 * `malformed` (since 0.2.0), when present, says why an item of a type the part model knows could not be
 * read as its part, naming the field (`operation.path is missing`): a client-run built-in call
 * (`shell_call`, `apply_patch_call`, `local_shell_call`) whose `call_id` is readable is kept so, for the
 * client to answer that call with an error (the tool loop does, see `ToolExecutor.answerUnreadable`),
 * instead of failing the whole response.
 *
 * @since 0.1.0
 * @category parts
 */
export class UnknownPart extends Schema.Class<UnknownPart>("@effect-responses/core/UnknownPart")({
  type: Schema.tag("unknown"),
  provider: Schema.String,
  kind: Schema.String,
  item: Schema.Unknown,
  malformed: Schema.optionalWith(Schema.String, { exact: true }),
  attributes
}) {}

/**
 * The result of a local tool call, in a tool message; becomes a `function_call_output`, or a
 * `custom_tool_call_output` when `kind` is `"custom"` (the answer to a `CustomToolCallPart`). `output` is
 * the text the model reads; `isError` marks a failure (the Responses wire has no error flag, so the text
 * of a failure says so itself). `kind` absent means `"function"`.
 *
 * @since 0.1.0
 * @category parts
 */
export class ToolResultPart extends Schema.Class<ToolResultPart>("@effect-responses/core/ToolResultPart")({
  type: Schema.tag("tool_result"),
  callId: Schema.String,
  name: Schema.String,
  output: Schema.String,
  isError: Schema.optionalWith(Schema.Boolean, { exact: true, default: () => false }),
  kind: Schema.optionalWith(Schema.Literal("function", "custom"), { exact: true })
}) {}

/**
 * How one shell command ended: it exited with `exitCode`, or it was stopped at its timeout.
 *
 * @since 0.2.0
 * @category parts
 */
export const ShellOutcome = Schema.Union(
  Schema.Struct({ type: Schema.Literal("exit"), exitCode: Schema.Number }),
  Schema.Struct({ type: Schema.Literal("timeout") })
)

/**
 * @since 0.2.0
 * @category parts
 */
export type ShellOutcome = typeof ShellOutcome.Type

/**
 * The captured output of one shell command: its standard output, standard error and outcome.
 *
 * @since 0.2.0
 * @category parts
 */
export const ShellCommandOutput = Schema.Struct({
  stdout: Schema.String,
  stderr: Schema.String,
  outcome: ShellOutcome
})

/**
 * @since 0.2.0
 * @category parts
 */
export type ShellCommandOutput = typeof ShellCommandOutput.Type

/**
 * The client's answer to a `ShellCallPart`: one output per command, in order; becomes a
 * `shell_call_output` (`max_output_length` handed back as the call gave it). Source: API reference,
 * `FunctionShellCallOutputItemParam`.
 *
 * @since 0.2.0
 * @category parts
 */
export class ShellCallOutputPart extends Schema.Class<ShellCallOutputPart>("@effect-responses/core/ShellCallOutputPart")({
  type: Schema.tag("shell_call_output"),
  callId: Schema.String,
  output: Schema.Array(ShellCommandOutput),
  maxOutputLength: Schema.optionalWith(Schema.Number, { exact: true })
}) {}

/**
 * The client's answer to an `ApplyPatchCallPart`: `completed` or `failed`, with an optional log the model
 * reads (what was changed, or why the patch did not apply); becomes an `apply_patch_call_output`. Source: API
 * reference, `ApplyPatchToolCallOutputItemParam`.
 *
 * @since 0.2.0
 * @category parts
 */
export class ApplyPatchCallOutputPart extends Schema.Class<ApplyPatchCallOutputPart>("@effect-responses/core/ApplyPatchCallOutputPart")({
  type: Schema.tag("apply_patch_call_output"),
  callId: Schema.String,
  status: Schema.Literal("completed", "failed"),
  output: Schema.optionalWith(Schema.String, { exact: true })
}) {}

/**
 * The client's answer to a `LocalShellCallPart`: the output text (the API reference asks for a JSON string);
 * becomes a `local_shell_call_output` whose `id` is the call id. Source: API reference,
 * `LocalShellToolCallOutput`.
 *
 * @since 0.2.0
 * @category parts
 */
export class LocalShellCallOutputPart extends Schema.Class<LocalShellCallOutputPart>("@effect-responses/core/LocalShellCallOutputPart")({
  type: Schema.tag("local_shell_call_output"),
  callId: Schema.String,
  output: Schema.String
}) {}

/**
 * The client's decision on an `McpApprovalRequestPart`: becomes an `mcp_approval_response` item
 * (`approval_request_id`, `approve`, `reason`). Source: API reference, `MCPApprovalResponse`; the approved
 * call of `vai-openai-mcp-approved-call.chunks.txt` follows one.
 *
 * @since 0.2.0
 * @category parts
 */
export class McpApprovalResponsePart extends Schema.Class<McpApprovalResponsePart>("@effect-responses/core/McpApprovalResponsePart")({
  type: Schema.tag("mcp_approval_response"),
  approvalRequestId: Schema.String,
  approve: Schema.Boolean,
  reason: Schema.optionalWith(Schema.String, { exact: true })
}) {}

/**
 * A part of an assistant message.
 *
 * @since 0.1.0
 * @category unions
 */
export const AssistantPart = Schema.Union(
  TextPart,
  RefusalPart,
  ReasoningPart,
  ToolCallPart,
  CustomToolCallPart,
  ShellCallPart,
  ApplyPatchCallPart,
  LocalShellCallPart,
  McpApprovalRequestPart,
  ToolSearchCallPart,
  ToolSearchOutputPart,
  MediaPart,
  UnknownPart
)

/**
 * @since 0.1.0
 * @category unions
 */
export type AssistantPart = typeof AssistantPart.Type

/**
 * A part of a tool message: what the client sends back for the calls of the previous assistant message
 * (function and custom tool results, shell / apply_patch / local_shell outputs, tool search output) and
 * its decisions on MCP approval requests.
 *
 * @since 0.2.0
 * @category unions
 */
export const ToolMessagePart = Schema.Union(
  ToolResultPart,
  ShellCallOutputPart,
  ApplyPatchCallOutputPart,
  LocalShellCallOutputPart,
  McpApprovalResponsePart,
  ToolSearchOutputPart
)

/**
 * @since 0.2.0
 * @category unions
 */
export type ToolMessagePart = typeof ToolMessagePart.Type

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

/**
 * A part the client has to answer before the model can go on: a function or custom tool call, a shell,
 * apply_patch or local_shell call, an MCP approval request, or a tool search the client executes.
 *
 * @since 0.2.0
 * @category unions
 */
export type ClientCallPart =
  | ToolCallPart
  | CustomToolCallPart
  | ShellCallPart
  | ApplyPatchCallPart
  | LocalShellCallPart
  | McpApprovalRequestPart
  | ToolSearchCallPart

/**
 * Whether an assistant part is a call the client has to answer (`ClientCallPart`); a `tool_search_call`
 * counts only with `execution: "client"`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isClientCall = (part: AssistantPart): part is ClientCallPart => {
  switch (part.type) {
    case "tool_call":
    case "custom_tool_call":
    case "shell_call":
    case "apply_patch_call":
    case "local_shell_call":
    case "mcp_approval_request":
      return true
    case "tool_search_call":
      return part.execution === "client"
    default:
      return false
  }
}

/**
 * The id that answers a client call: the `callId` (the `approvalRequestId` of an MCP approval request, the
 * item id of a tool search without a call id).
 *
 * @since 0.2.0
 * @category guards
 */
export const callIdOf = (part: ClientCallPart): string => {
  switch (part.type) {
    case "mcp_approval_request":
      return part.approvalRequestId
    case "tool_search_call":
      return part.callId ?? part.attributes.itemId ?? ""
    default:
      return part.callId
  }
}

/**
 * The call id an assistant part answers, when it is the output item of a call the server ran itself (a
 * `shell_call_output` of a hosted shell, kept as an `UnknownPart` whose item has a `call_id`).
 *
 * @since 0.2.0
 * @category guards
 */
export const answeredCallId = (part: AssistantPart): string | undefined => {
  if (part.type === "tool_search_output") return part.callId
  if (part.type !== "unknown" || !part.kind.endsWith("_output")) return undefined
  const item = part.item
  if (typeof item !== "object" || item === null || !("call_id" in item)) return undefined
  return typeof item.call_id === "string" ? item.call_id : undefined
}

/**
 * The client calls of assistant parts that the parts themselves leave unanswered: every `ClientCallPart`
 * except those whose output item follows in the same message (a shell call the server ran in a hosted
 * container comes with its `shell_call_output`).
 *
 * @since 0.2.0
 * @category guards
 */
export const pendingCalls = (parts: ReadonlyArray<AssistantPart>): ReadonlyArray<ClientCallPart> => {
  const answered = new Set<string>()
  for (const part of parts) {
    const id = answeredCallId(part)
    if (id !== undefined) answered.add(id)
  }
  return parts.filter((part): part is ClientCallPart => isClientCall(part) && !answered.has(callIdOf(part)))
}
