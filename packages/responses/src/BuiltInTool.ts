/**
 * Built-in tools: the tools OpenAI runs itself, next to the local function tools of a request (`tools` of
 * `CreateResponse`). Their calls come back as output items (`web_search_call`, `file_search_call`,
 * `code_interpreter_call`, `image_generation_call`, `mcp_call`, …) that the response mapping keeps verbatim
 * (`UnknownPart`), or as a `MediaPart` for a generated image; they are never run locally.
 *
 * ```ts
 * ResponsesLanguageModel.layer({
 *   model: "gpt-5.1",
 *   builtInTools: [BuiltInTool.webSearch({ searchContextSize: "low", allowedDomains: ["effect.website"] })]
 * })
 * ```
 *
 * A built-in tool is its wire JSON (snake_case, as the API reference "Tools" section gives it), built by
 * the constructors below; secrets (`mcp` `authorization` and header values) may be `Redacted` and are
 * revealed only by `toJson`, when the request body is built.
 *
 * @since 0.1.0
 */
import * as Redacted from "effect/Redacted"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * A built-in tool: its wire `type` (`web_search`, `file_search`, `code_interpreter`, `image_generation`,
 * `mcp`, or anything given to `raw`) and its wire fields (`Redacted` values are revealed by `toJson`).
 *
 * @since 0.1.0
 * @category models
 */
export interface BuiltInTool {
  readonly _tag: "BuiltInTool"
  readonly type: string
  readonly wire: { readonly [key: string]: unknown }
}

/**
 * A file search filter on the attributes of the files (`ComparisonFilter` / `CompoundFilter` of the API):
 * compare one attribute `key` with `value`, or combine filters with `and` / `or`.
 *
 * @since 0.1.0
 * @category models
 */
export type FileSearchFilter =
  | {
    readonly type: "eq" | "ne" | "gt" | "gte" | "lt" | "lte" | "in" | "nin"
    readonly key: string
    readonly value: string | number | boolean | ReadonlyArray<string | number>
  }
  | { readonly type: "and" | "or"; readonly filters: ReadonlyArray<FileSearchFilter> }

/**
 * The tools of an MCP server the model may see (`allowed_tools`): a list of tool names, or a filter by
 * names and the server's read-only hint.
 *
 * @since 0.1.0
 * @category models
 */
export type McpToolFilter = ReadonlyArray<string> | {
  readonly toolNames?: ReadonlyArray<string> | undefined
  readonly readOnly?: boolean | undefined
}

/**
 * Which MCP tool calls need the caller's approval (`require_approval`): `"never"`, `"always"`, or a filter
 * for each (e.g. `{always: ["delete_file"]}`). A call that needs one arrives as an `mcp_approval_request`
 * (`Part.McpApprovalRequestPart`) and runs once an `mcp_approval_response` approves it.
 *
 * @since 0.1.0
 * @category models
 */
export type McpRequireApproval =
  | "never"
  | "always"
  | { readonly always?: McpToolFilter | undefined; readonly never?: McpToolFilter | undefined }

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

const make = (type: string, fields: { readonly [key: string]: unknown }): BuiltInTool => {
  const wire: Record<string, unknown> = { type }
  for (const key in fields) {
    if (fields[key] !== undefined) wire[key] = fields[key]
  }
  return { _tag: "BuiltInTool", type, wire }
}

/**
 * Web search (`{"type":"web_search"}`): `searchContextSize` (`low` / `medium` / `high`, how much of the
 * context window the results may use), `allowedDomains` (`filters.allowed_domains`; subdomains included),
 * `userLocation` (an approximate location: ISO country code, region, city, IANA timezone) and
 * `externalWebAccess` (`false`: cached results only). Source: API reference, `WebSearchTool`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const webSearch = (options: {
  readonly searchContextSize?: "low" | "medium" | "high" | undefined
  readonly allowedDomains?: ReadonlyArray<string> | undefined
  readonly userLocation?: {
    readonly country?: string | undefined
    readonly region?: string | undefined
    readonly city?: string | undefined
    readonly timezone?: string | undefined
  } | undefined
  readonly externalWebAccess?: boolean | undefined
} = {}): BuiltInTool =>
  make("web_search", {
    search_context_size: options.searchContextSize,
    filters: options.allowedDomains === undefined ? undefined : { allowed_domains: options.allowedDomains },
    user_location: options.userLocation === undefined ? undefined : defined({
      type: "approximate",
      country: options.userLocation.country,
      region: options.userLocation.region,
      city: options.userLocation.city,
      timezone: options.userLocation.timezone
    }),
    external_web_access: options.externalWebAccess
  })

/**
 * File search over vector stores (`{"type":"file_search"}`): `vectorStoreIds` (required), `maxNumResults`
 * (1 to 50), `filters` on file attributes, `scoreThreshold` (0 to 1, `ranking_options.score_threshold`).
 * Add `"file_search_call.results"` to `include` (through `extraBody`) to get the results in the output
 * item. Source: API reference, `FileSearchTool`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fileSearch = (options: {
  readonly vectorStoreIds: ReadonlyArray<string>
  readonly maxNumResults?: number | undefined
  readonly filters?: FileSearchFilter | undefined
  readonly scoreThreshold?: number | undefined
}): BuiltInTool =>
  make("file_search", {
    vector_store_ids: options.vectorStoreIds,
    max_num_results: options.maxNumResults,
    filters: options.filters,
    ranking_options: options.scoreThreshold === undefined ? undefined : { score_threshold: options.scoreThreshold }
  })

/**
 * Code interpreter (`{"type":"code_interpreter"}`): `container` is a container id, or (the default) a new
 * container made for the request (`{"type":"auto"}`) with the uploaded `fileIds` it may read and its
 * `memoryLimit`. Source: API reference, `CodeInterpreterTool`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const codeInterpreter = (options: {
  readonly container?: string | {
    readonly fileIds?: ReadonlyArray<string> | undefined
    readonly memoryLimit?: "1g" | "4g" | "16g" | "64g" | undefined
  } | undefined
} = {}): BuiltInTool =>
  make("code_interpreter", {
    container: typeof options.container === "string"
      ? options.container
      : defined({ type: "auto", file_ids: options.container?.fileIds, memory_limit: options.container?.memoryLimit })
  })

/**
 * Image generation (`{"type":"image_generation"}`): `model` (e.g. `gpt-image-1`), `size` (`1024x1024`,
 * `1536x1024`, `auto`, …), `quality` (`low` / `medium` / `high` / `auto`), `outputFormat` (`png` / `jpeg` /
 * `webp`: the media type of the resulting `MediaPart`), `outputCompression` (0 to 100), `background`,
 * `moderation`, `partialImages` (0 to 3 partial images while streaming). Source: API reference,
 * `ImageGenTool`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const imageGeneration = (options: {
  readonly model?: string | undefined
  readonly size?: string | undefined
  readonly quality?: "low" | "medium" | "high" | "auto" | undefined
  readonly outputFormat?: "png" | "jpeg" | "webp" | undefined
  readonly outputCompression?: number | undefined
  readonly background?: "transparent" | "opaque" | "auto" | undefined
  readonly moderation?: "auto" | "low" | undefined
  readonly partialImages?: number | undefined
} = {}): BuiltInTool =>
  make("image_generation", {
    model: options.model,
    size: options.size,
    quality: options.quality,
    output_format: options.outputFormat,
    output_compression: options.outputCompression,
    background: options.background,
    moderation: options.moderation,
    partial_images: options.partialImages
  })

/**
 * A remote MCP server (`{"type":"mcp"}`) reached by OpenAI: `serverLabel` (names it in `mcp_*` items), and
 * either `serverUrl` or `connectorId` (e.g. `connector_googledrive`); `serverDescription`; `allowedTools`;
 * `headers` and `authorization` (an OAuth token), either of which may be `Redacted`; `requireApproval`
 * (default `"never"`; the API's own default is `"always"`): with `"always"` or per-tool rules, calls that
 * need approval come back as `mcp_approval_request` items for the caller (or the tool loop's
 * `McpApprovals` service) to answer. Source: API reference, `MCPTool`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const mcp = (
  options:
    & {
      readonly serverLabel: string
      readonly serverDescription?: string | undefined
      readonly allowedTools?: McpToolFilter | undefined
      readonly headers?: { readonly [name: string]: string | Redacted.Redacted } | undefined
      readonly authorization?: string | Redacted.Redacted | undefined
      readonly requireApproval?: McpRequireApproval | undefined
    }
    & (
      | { readonly serverUrl: string; readonly connectorId?: undefined }
      | { readonly connectorId: string; readonly serverUrl?: undefined }
    )
): BuiltInTool =>
  make("mcp", {
    server_label: options.serverLabel,
    server_url: options.serverUrl,
    connector_id: options.connectorId,
    server_description: options.serverDescription,
    allowed_tools: options.allowedTools === undefined ? undefined : mcpToolFilter(options.allowedTools),
    headers: options.headers,
    authorization: options.authorization,
    require_approval: mcpRequireApproval(options.requireApproval ?? "never")
  })

/**
 * Tool search (`{"type":"tool_search"}`): the model searches the tools marked `deferLoading` (and
 * namespaces) and loads those it needs, as `tool_search_call` / `tool_search_output` items
 * (`Part.ToolSearchCallPart` / `Part.ToolSearchOutputPart`). `execution` `"server"` (default: OpenAI
 * searches) or `"client"` (the model asks the client, which answers with a `tool_search_output`).
 * Recorded in `vai-openai-tool-search.chunks.txt`. Source: API reference, `ToolSearchToolParam`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const toolSearch = (options: {
  readonly execution?: "server" | "client" | undefined
  readonly description?: string | undefined
} = {}): BuiltInTool =>
  make("tool_search", { execution: options.execution, description: options.description })

/**
 * Any built-in tool as its wire JSON, for tools this module has no constructor for (`computer_use_preview`,
 * `local_shell`, `apply_patch`, newer versions…): sent as given. The `type` field is required.
 *
 * @since 0.1.0
 * @category constructors
 */
export const raw = (json: { readonly type: string; readonly [key: string]: unknown }): BuiltInTool =>
  ({ _tag: "BuiltInTool", type: json.type, wire: json })

// ---------------------------------------------------------------------------------------------------------
// encoding
// ---------------------------------------------------------------------------------------------------------

/**
 * The wire JSON of a built-in tool, with every `Redacted` value revealed (for the request body only).
 *
 * @since 0.1.0
 * @category encoding
 */
export const toJson = (tool: BuiltInTool): { readonly [key: string]: unknown } =>
  reveal(tool.wire) as { readonly [key: string]: unknown }

/**
 * Why this client cannot send `tool`, or `undefined` when it can. Every built-in tool can be sent today:
 * an `mcp` tool that requires approvals makes the response stop at an `mcp_approval_request`
 * (`Part.McpApprovalRequestPart`), answered with an `McpApprovalResponsePart` in a tool message (the tool
 * loop asks its `McpApprovals` service). Kept for tools a later API version adds.
 *
 * @since 0.1.0
 * @category validation
 */
export const unsupportedReason = (_tool: BuiltInTool): string | undefined => undefined

/**
 * Whether a value is a `BuiltInTool`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isBuiltInTool = (u: unknown): u is BuiltInTool =>
  typeof u === "object" && u !== null && (u as { readonly _tag?: unknown })._tag === "BuiltInTool"

/**
 * How a `tool_choice` of `allowed_tools` names this built-in tool: `{type}`, plus `server_label` for `mcp`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const reference = (tool: BuiltInTool): { readonly [key: string]: unknown } =>
  tool.type === "mcp" ? { type: "mcp", server_label: tool.wire.server_label } : { type: tool.type }

// ---------------------------------------------------------------------------------------------------------
// internal
// ---------------------------------------------------------------------------------------------------------

const defined = (record: { readonly [key: string]: unknown }): { readonly [key: string]: unknown } => {
  const out: Record<string, unknown> = {}
  for (const key in record) {
    if (record[key] !== undefined) out[key] = record[key]
  }
  return out
}

const mcpToolFilter = (filter: McpToolFilter): unknown =>
  isReadonlyArray(filter) ? filter : defined({ tool_names: filter.toolNames, read_only: filter.readOnly })

const mcpRequireApproval = (approval: McpRequireApproval): unknown =>
  typeof approval === "string" ? approval : defined({
    always: approval.always === undefined ? undefined : mcpToolFilterObject(approval.always),
    never: approval.never === undefined ? undefined : mcpToolFilterObject(approval.never)
  })

// `require_approval` filters are objects only (`MCPToolFilter`); a list of names means `tool_names`.
const mcpToolFilterObject = (filter: McpToolFilter): unknown =>
  isReadonlyArray(filter) ? { tool_names: filter } : defined({ tool_names: filter.toolNames, read_only: filter.readOnly })

const isReadonlyArray = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u)

const reveal = (value: unknown): unknown => {
  if (Redacted.isRedacted(value)) return Redacted.value(value)
  if (Array.isArray(value)) return value.map(reveal)
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, entry] of Object.entries(value)) out[key] = reveal(entry)
    return out
  }
  return value
}
