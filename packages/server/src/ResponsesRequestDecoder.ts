/**
 * The decoding side of the Responses protocol: the body of a `POST /v1/responses` request (`CreateResponse`,
 * JSON) -> a core `Prompt` plus the request's options, for a stateless server in front of another model
 * (the inverse of `ResponsesRequest.fromPrompt`).
 *
 * | request element | prompt element |
 * |---|---|
 * | `instructions` | the first `SystemMessage` |
 * | `system` / `developer` message (short `{role, content: "text"}` or typed, `input_text` content) | a `SystemMessage` |
 * | `user` message: `input_text` / `input_image` / `input_file` | a `UserMessage`: `TextPart` / `MediaPart` (image `url` or base64 `data` of a data URL, `detail`) / `MediaPart` (file data, or file id) |
 * | `assistant` message: `output_text` / `refusal` content (or a string) | `TextPart` / `RefusalPart` with `{itemId, status, phase}` |
 * | `reasoning` item | `ReasoningPart` (`summary` texts, `reasoning_text` content as `text`, `encrypted_content` as payload unless `encryptedReasoning` is `"drop"`); an `encrypted_content` the gateway wrote (`effect-responses.reasoning.v1.` + base64url of the reasoning text, see `ResponsesLifecycle`) gives the `text` instead (when no `reasoning_text` content does) and is no payload; an item with only an `encrypted_content` of another kind is dropped (debug log) |
 * | `function_call` | `ToolCallPart` (a `namespace` call gets its flattened name, see below, but a namespace equal to the name of a top-level tool, as the API writes the call of a deferred top-level tool in `vai-openai-tool-search.chunks.txt`, names that tool when no namespace declares a tool of that name; `""` arguments, and JSON whitespace alone (`"  "`, `"\n"`), become `"{}"`; a `call_id` the gateway wrote with a call's `extra_content` in it, `<id>__extra_content__<base64url JSON>` (see `ResponsesLifecycle`), is split into the upstream's call id and the part's payload; in every other item that names a call, the same) |
 * | `custom_tool_call` | `ToolCallPart` with arguments `{"input": <its input>}` |
 * | `function_call_output`, `custom_tool_call_output` (string, or a content array of `input_text`, `input_image`, `input_file`) | a `ToolResultPart` in a `ToolMessage` (its text parts; only images or files: a note that they are attached); its images and files as `MediaPart`s in a `UserMessage` after that `ToolMessage`, each output's led by a `TextPart` naming its call (`Output of tool call <call_id> (<name>), continued:`) |
 * | `apply_patch_call` (the client-run `apply_patch` tool) | `ToolCallPart` of the function `apply_patch` (`APPLY_PATCH`) with the operation as arguments |
 * | `apply_patch_call_output` | a `ToolResultPart`: its `output` log (a failed one said so) |
 * | `shell_call` (the client-run `shell` tool) | `ToolCallPart` of the function `shell` (`SHELL`) with the action (`commands`, `timeout_ms`, `max_output_length`) as arguments |
 * | `shell_call_output` | a `ToolResultPart`: per command its stdout, its stderr and how it ended (exit code, or timed out) |
 * | `local_shell_call` (the client-run `local_shell` tool) | `ToolCallPart` of the function `local_shell` (`LOCAL_SHELL`) with the exec action (`command`, `timeout_ms`, `working_directory`, `env`, `user`; `null`s and an empty `env` left out) as arguments |
 * | `local_shell_call_output` | a `ToolResultPart`: its `output` as it came; the call named by `call_id`, or by `id` (the call id, as the API reference has it, or the `local_shell_call` item's id) |
 * | `additional_tools` | nothing in the prompt: its tools join the tool list (which `tool_choice` is checked against) |
 * | `tool_search_call` (client-run or server-run) | `ToolCallPart` of a function named `tool_search` (`TOOL_SEARCH`) with the search's arguments (its call id: `call_id`, else the item's `id`) |
 * | `tool_search_output` | its tools join the tool list, loaded (a deferred tool is offered from then on); a `ToolResultPart` naming the tools it loaded, answering the search of its `call_id` (without one: the first search without one that no such output answered yet, so that searches and outputs without ids pair in order); a `call_id` no earlier search has: 400 (as for the other outputs, below); a server-run search's result, between calls of one response, goes into the `ToolMessage` of their outputs |
 * | `item_reference` to a reasoning item (`rs_…`) | nothing (debug log): no upstream here reads stored reasoning |
 *
 * Consecutive assistant items (reasoning, function calls, one message) form one `AssistantMessage`; an
 * assistant message after another starts a new one, so that Chat Completions does not join their texts
 * (`"ok"`, `"again"` stay two assistant messages, not `"okagain"`). An assistant message after tool calls,
 * before their outputs, joins the message holding the calls (their tool messages must follow it), its text
 * after the text before the calls; a second one there is joined with a blank line (`"ok\n\nagain"`).
 * Consecutive tool outputs form one `ToolMessage`; the images and files of their outputs follow it in one
 * `UserMessage` (a Chat Completions tool message holds text only, and the tool messages must follow the
 * assistant message holding their calls directly). A client-run call (`function_call`, `custom_tool_call`,
 * `apply_patch_call`, `shell_call`, `local_shell_call`, and a `tool_search_call` with `execution: "client"`
 * and a `call_id`) that no output answers later in the input (a stored response's calls included) is a 400
 * with param `input`, in the API's words ("No tool output found for function call <call_id>", "… for local
 * shell call <call_id>", as openai/openai-agents-python#1855 quotes the API; "… for tool search call
 * <call_id>"), naming the first such call in input order: sent on, the upstream would read the conversation
 * without the call (Chat Completions would refuse it, and the gateway's upstream request drops it). A
 * client-run tool search is such a call: the API reference is silent on it, but Codex gives one without its
 * `tool_search_output` an output before it sends a conversation, as it does a function call
 * (openai/codex `codex-rs/core/src/context_manager/normalize.rs`, `ensure_call_outputs_present`). Hosted
 * built-in calls (`web_search_call`, …), reasoning and server-run tool searches (the API writes their
 * output beside them, with `call_id: null`) need no output here.
 *
 * Tools: `function` tools become `ToolDefinition`s (`strict` defaults to `false`: open-model backends
 * rarely enforce schemas). A `custom` (freeform) tool becomes the function Chat Completions offers it as
 * (`ChatCompletionsRequest.customToolFunction`): one string parameter, `input`, its description carrying
 * the input format (a grammar's syntax and definition go into the text, not the JSON schema, which cannot
 * hold them; a format other than text or a `lark` / `regex` grammar is a 400); `customTools` names them. The client-run `apply_patch` tool
 * becomes a function `apply_patch` whose arguments are the operation (`type`, `path`, `diff`), the client-run
 * `shell` tool a function `shell` whose arguments are the action (`commands`, `timeout_ms`,
 * `max_output_length`), the client-run `local_shell` tool a function `local_shell` whose arguments are the
 * exec action (`command`, `timeout_ms`, `working_directory`, `env`, `user`). A `namespace` group is flattened
 * into its function and custom tools named `<namespace>__<name>` (`NAMESPACE_SEPARATOR`). Every name sent
 * upstream matches `^[a-zA-Z0-9_-]{1,64}$`: a longer one, or one with other characters (a dot), is
 * shortened to a prefix and a hash of the whole name (`upstreamName`; stable across turns). Two tools whose
 * names flatten to one (a top-level `crm__lookup` and `lookup` of namespace `crm`) are both sent, whatever
 * their order: the top-level tool under that name, the namespaced one under that name, `_` and a hash of the
 * tool (of two namespaced tools, `a`'s `b__c` and `a__b`'s `c`, the one whose namespace sorts first keeps the
 * name; the same in every turn that declares the same tools, in any order; a tool of an `additional_tools`
 * item whose name a tool of an earlier list holds gets the hash); its earlier calls in `input` and a
 * `tool_choice` naming it use that name too. `namespacedTools` (`renamedTools` for top-level tools) maps the sent, flattened, dotted and unambiguous bare names back, so a server can write the
 * call with its `namespace`; a bare name declared in two namespaces is not mapped (a warning names it) and
 * a call by it goes to the client as it came. Tools with `defer_loading` (`deferredTools`): with a
 * client-run `tool_search` tool (`execution: "client"`) the upstream is offered the tools no search needs to
 * load (not deferred, or loaded by a `tool_search_output` of the input, or named by `tool_choice`) and a
 * function `tool_search` (`toolSearch`) with the tool's `parameters` (else `{paths: string[]}`, the built-in
 * client search the Agents SDK runs) and its `description` (else one saying what it does) followed by the
 * name and first description line of each tool still to load (a namespace's tool by its namespace's: what
 * the API shows a model of deferred tools); with a hosted `tool_search` (the default, which cannot run over
 * Chat Completions) or none, every tool, and no `tool_search` function. Built-in tools (`web_search`, `file_search`, …) and the items they produced
 * follow `builtinTools`: `"drop"` (default) removes them with a warning log, `"reject"` fails.
 *
 * What a stateless bridge cannot honour fails with a `RequestError` naming the parameter (HTTP 400 in
 * OpenAI's shape): `previous_response_id`, `conversation`, `prompt` (stored prompt templates),
 * `store: true`, `background: true`, `truncation: "auto"`, `context_management` (server-side compaction),
 * `moderation` (moderation runs), `top_logprobs` above 0 and `include: ["message.output_text.logprobs"]`
 * (the part model carries no log probabilities, so they could not be returned), `max_output_tokens` below
 * 1 and `top_logprobs` below 0 (code `integer_below_min_value`, worded as the API words it; the API's own
 * minimum for `max_output_tokens` is 16, which a Chat Completions backend need not share: 1 to 15 are
 * forwarded; `max_tool_calls`, given no range by the API reference and only echoed, is not checked),
 * `temperature` outside 0 to 2 and `top_p` outside 0 to 1 (the API reference's ranges; codes
 * `decimal_below_min_value` / `decimal_above_max_value`),
 * `input_file` content the upstream cannot take (`inputFiles`), an `input_image` by `file_id` when `imageFileIds` is
 * `false` (the gateway has no Files API: send `image_url`), a `tool_choice` that forces a tool call
 * (`required`, a named tool, `allowed_tools` in `required` mode) when no tool is left to call or that names a
 * tool the request does not declare, an `allowed_tools` entry (function, custom or namespace, either mode)
 * naming a tool or namespace the request does not declare (OpenAI's "Tool choice 'x' not found in 'tools'
 * parameter.", param `tool_choice`), a `tool_choice` object whose `type` the API has no tool choice of
 * (`TOOL_CHOICE_TYPES`: "Invalid value: 'frobnicate'. Supported values are: 'function', …", param
 * `tool_choice.type`) or has no `type` ("Missing required parameter: 'tool_choice.type'.", code
 * `missing_required_parameter`) (a `tool_choice` of `auto` or `none` with no tool is left out of
 * `toolChoice`: OpenAI's Chat Completions refuses any `tool_choice` without `tools`), a `tool_choice` forcing a
 * built-in tool that `builtinTools: "drop"` drops (`{"type": "web_search_preview"}`, `file_search`, `mcp`, …:
 * "Invalid value for 'tool_choice': the tool it forces is a built-in tool this gateway drops (web_search_preview):
 * the upstream cannot run it.", code `invalid_value`), `item_reference` items to anything but
 * reasoning (the gateway stores no items: the error names the id), a tool call output (`function_call_output`,
 * `custom_tool_call_output`, `apply_patch_call_output`, `shell_call_output`, `local_shell_call_output`, and a
 * `tool_search_output` with a `call_id`) whose call is not earlier in the input (the API's "No tool call found for function call output with call_id
 * …", `param` the output's `input[i]`), such an output apart from its call when `toolOutputsApart` is
 * `false` (`param` the output's `input[i]`, code `invalid_prompt`), two function or custom tools of one name
 * in one list of tools (`tools`, an `additional_tools` item; `ns.name` in a namespace: `param` the second's
 * `tools[i].name`, code `invalid_value`), a `namespace` tool group with an empty name (its tools would be the
 * top-level tools of their names: `param` `tools[i].name`, code `empty_string`), a `compaction` item (the output of `/v1/responses/compact`: its
 * `encrypted_content` is the earlier conversation, which only OpenAI can read, and dropping it would lose that
 * conversation; the message says so and to send the items themselves) or a `compaction_trigger` item
 * (`param` `input[i].type`, code `unsupported_value`), and input items of unknown types.
 *
 * Every other parameter of `CreateResponse` is accepted: sampling and bookkeeping options (`temperature`,
 * `top_p`, `max_output_tokens`, `max_tool_calls`, `tool_choice`, `parallel_tool_calls`, `reasoning`, `text`,
 * `metadata` (within the API's bounds, `METADATA_BOUNDS`), `prompt_cache_key`, `prompt_cache_retention`,
 * `prompt_cache_options`, `safety_identifier`, `user`, `service_tier`, `include`, `stream_options`); those a model call can use are kept in `options`,
 * those the Response object shows are echoed in `echo`, and `parameters` names those the request set, so that a server can tell which of them its upstream cannot
 * use. Unknown top-level fields (client metadata) are ignored, named in `ignoredFields` and in a debug log.
 *
 * Source: the OpenAI API reference, "Create a model response" (`CreateResponse` in
 * its OpenAPI description).
 *
 * @since 0.1.0
 */
import { LanguageModel, Message, Prompt, ResponseFormat } from "@effect-responses/core"
import { isObject, stringField } from "@effect-responses/wire/Json"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Common from "./internal/decoder/common.js"
import { decodeAt, fail, Nullable, UnknownArray } from "./internal/decoder/common.js"
import * as Input from "./internal/decoder/input.js"
import * as Tools from "./internal/decoder/tools.js"
import { decodeTools, logAmbiguousNames, makeToolSet, offeredTools } from "./internal/decoder/tools.js"

// ---------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------

/**
 * A request the decoder cannot accept: malformed, or asking for what a stateless bridge cannot honour.
 * `param` names the offending request parameter as OpenAI does (`store`, `input[2].content[0].file_url`,
 * `tools[1]`), `null` when the whole body is at fault; `code` is OpenAI's error code
 * (`unsupported_parameter`, `unsupported_value`, `invalid_type`, `missing_required_parameter`,
 * `invalid_value`, `empty_string`, `array_above_max_length`, `string_above_max_length`, `object_above_max_properties`,
 * `integer_below_min_value`, `decimal_below_min_value`, `decimal_above_max_value`). A server answers it with HTTP 400 and its `body`
 * (`ErrorBody`).
 *
 * @since 0.1.0
 * @category errors
 */
export const RequestError = Common.RequestError

/**
 * @since 0.1.0
 * @category errors
 */
export type RequestError = Common.RequestError

/**
 * OpenAI's error body: `{"error":{"message","type","param","code"}}`.
 *
 * @since 0.1.0
 * @category models
 */
export type ErrorBody = Common.ErrorBody

/**
 * A request parameter path as OpenAI writes it: `input[2].content[0].type`.
 *
 * @since 0.1.0
 * @category errors
 */
export const formatParam: (path: ReadonlyArray<PropertyKey>) => string | null = Common.formatParam

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * What to do with built-in tools (the tools OpenAI runs itself) and their items: `drop` them with a
 * warning log (a `tool_choice` forcing a call of one is then a 400: nothing is left to call), or `reject` the
 * request.
 *
 * @since 0.1.0
 * @category models
 */
export type BuiltinToolsPolicy = "drop" | "reject"

/**
 * How an `input_file` may be given to the upstream: as inline `file_data`, by `file_url`, or by `file_id`.
 *
 * @since 0.1.0
 * @category models
 */
export type FileInput = "data" | "url" | "id"

/**
 * The decoder's settings. `builtinTools` defaults to `"drop"`; `inputFiles` (default `["data", "id"]`,
 * what Chat Completions takes) lists the ways an `input_file` may be given; `maxInputItems` (default
 * `MAX_INPUT_ITEMS`) bounds the number of input items and the number of content parts of each (an item's
 * `content`, a function call output's `output`); `encryptedReasoning` (see `EncryptedReasoning`)
 * and `itemAttributes` (see `ItemAttributes`) default to `"keep"`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly builtinTools?: BuiltinToolsPolicy | undefined
  readonly inputFiles?: ReadonlyArray<FileInput> | undefined
  readonly maxInputItems?: number | undefined
  /** @since 0.2.0 */
  readonly encryptedReasoning?: EncryptedReasoning | undefined
  /** @since 0.2.0 */
  readonly itemAttributes?: ItemAttributes | undefined
  /**
   * Whether an `input_image` may be given by `file_id` (default `true`); `false` (an upstream that cannot
   * resolve file ids, e.g. Chat Completions, which takes images only by URL) refuses one with a 400 naming
   * its `file_id`: the gateway has no Files API to fetch the image with.
   *
   * @since 0.2.0
   */
  readonly imageFileIds?: boolean | undefined
  /**
   * Whether a tool call output may be apart from its call in the input (default `true`); `false` (an
   * upstream that needs each output right after the assistant message holding its call, e.g. Chat
   * Completions) refuses an output that a message comes before (a user, system or developer message, an
   * assistant message of its own, a later call's message) with a 400 naming the client's output item,
   * `input[i]`, its call's item and the item between them, code `invalid_prompt`, instead of the upstream
   * encoder's error naming the upstream's `messages[k]`.
   *
   * @since 0.2.0
   */
  readonly toolOutputsApart?: boolean | undefined
}

/**
 * What becomes of a reasoning item's `encrypted_content`: `keep` it as its `ReasoningPart`'s payload (for
 * an upstream that sends it back to the model, a Responses one), or `drop` it (for an upstream that never
 * reads it, a Chat Completions one: the prompt then holds no reference to it, and a long conversation's
 * encrypted reasoning, about a third of a coding agent's request, is not kept alive while the request
 * runs). The item's summary and text are kept either way.
 *
 * @since 0.2.0
 * @category models
 */
export type EncryptedReasoning = "keep" | "drop"

/**
 * What becomes of an input item's `id`, `status` and `phase`: `keep` them as its parts' `attributes` (for an
 * upstream that sends them back, a Responses one), or `drop` them (for an upstream that never reads them, a
 * Chat Completions one, whose messages have no field for them: the parts then share one empty `attributes`,
 * and a long conversation's item ids and statuses are not kept alive, an object per part, while the request
 * runs).
 *
 * @since 0.2.0
 * @category models
 */
export type ItemAttributes = "keep" | "drop"

/**
 * The default bound on the number of input items of one request, and on the content parts of one item:
 * 20,000. Decoding costs some microseconds per item, so the bound keeps one request's decoding within a
 * fraction of a second (and the decoder yields to other requests every few milliseconds meanwhile, between
 * items: one item's parts are decoded at once).
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_INPUT_ITEMS = 20_000

/**
 * The bound on the number of tools of one request: 10,000, counted as the upstream would be sent them:
 * the entries of `tools`, of `additional_tools` items and of `tool_search_output` items in `input`
 * together, a namespace counted by its members. The API reference gives none for the
 * Responses API's `tools` (Chat Completions' reference caps its functions at 128), so the bound is set
 * far above what a client sends (a coding agent declares a few dozen) and low enough that decoding them
 * and writing them upstream and in the Response object stays within a few tens of milliseconds: 20,000
 * tools held a gateway's event loop for about 50 ms in one stretch. A request of more is refused with a
 * `RequestError` (`array_above_max_length`, param `tools` for more than 10,000 entries of `tools`; else
 * the list whose tools crossed the bound, e.g. `input[3].tools`, the message naming the bound and what it
 * counts).
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_TOOLS: number = Tools.MAX_TOOLS

/**
 * The bound on the members of one JSON object in a request: 5,000, the number of object properties the
 * Structured Outputs guide (https://platform.openai.com/docs/guides/structured-outputs, "Supported
 * schemas") allows a schema (a `text.format` schema, a function tool's `parameters`) in all, with up to 10
 * levels of nesting. No other object of a request comes near it (`metadata` holds at most 16 pairs). The
 * gateway checks it on the body's bytes before parsing (an object of 100,000 members held its event loop
 * for about 380 ms in one stretch: parsing it, enumerating its keys, writing it upstream and echoing it)
 * and answers a 400 `object_above_max_properties` naming the top-level parameter that holds it. It bounds
 * one object, not a schema's total: a schema within it object by object but past 5,000 in all is left to
 * the upstream to refuse.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_OBJECT_PROPERTIES = 5_000

/**
 * The bound on the elements of one JSON array in a request, anywhere in it (an unknown field, a schema's
 * `enum`, a tool's `parameters`): 100,000, or the gateway's `maxInputItems` when that is larger (the
 * `input` array and an item's parts have their own bound, and `tools` its own). The API reference sets
 * none this large (the Structured Outputs guide allows a schema 1,000 `enum` values in all), and V8 cannot
 * build an array of millions of elements without a long stretch: growing one of 6.6 million elements past
 * its capacity was one copy of about 290 ms, and `JSON.parse` of a flat array of 7.8 million zeros (15 MB,
 * under the 16 MiB body bound) held the gateway's event loop for 3-6 s. The gateway checks it on the
 * body's bytes before parsing and answers a 400 `array_above_max_length` naming the top-level parameter
 * that holds the array.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_ARRAY_ELEMENTS = 100_000

/**
 * The bounds of `metadata` (the API reference's `Metadata`): at most 16 key-value pairs, keys of at most 64
 * characters, values of at most 512 (UTF-16 code units, as JavaScript counts a string's length). A request
 * past one of them is refused with a `RequestError` (`object_above_max_properties` or
 * `string_above_max_length`) naming the parameter.
 *
 * @since 0.2.0
 * @category constants
 */
export const METADATA_BOUNDS = { pairs: 16, keyChars: 64, valueChars: 512 } as const

/**
 * A tool the request declared with `defer_loading` that no `tool_search_output` of its input loaded
 * (`DecodedRequest.deferredTools`): `path`, what a tool search loads it by (its name, or `namespace.name` for a
 * namespace's tool), and `tool`, the definition a `tool_search_output` lists it with (the tool's JSON as the
 * request declared it; a namespace's tool inside `{type: "namespace", name, description, tools: [tool]}`, as
 * the API lists loaded tools in `vai-openai-tool-search.chunks.txt`). `summary` is its name (a namespace's
 * tool: its namespace's name) and the first line of its description (leading blank lines skipped, as for a
 * namespace's lead).
 *
 * @since 0.2.0
 * @category models
 */
export interface DeferredTool {
  readonly path: string
  readonly tool: unknown
  readonly summary: string
}

/**
 * The original name of a flattened namespace tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface NamespacedName {
  readonly namespace: string
  readonly name: string
}

/**
 * The request's options for the model call, in this project's terms (`undefined` when not given):
 * `temperature`, `topP`, `maxOutputTokens` (tokens), `parallelToolCalls`, `reasoningEffort`,
 * `reasoningSummary`, `textFormat`, `verbosity`, `metadata`, `promptCacheKey`, `safetyIdentifier`,
 * `user`, `serviceTier`, `maxToolCalls`, `topLogprobs`, `include`, `promptCacheRetention`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelOptions {
  readonly temperature?: number | undefined
  readonly topP?: number | undefined
  readonly maxOutputTokens?: number | undefined
  readonly parallelToolCalls?: boolean | undefined
  readonly reasoningEffort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | undefined
  readonly reasoningSummary?: string | undefined
  readonly textFormat?: ResponseFormat.ResponseFormat | undefined
  readonly verbosity?: string | undefined
  readonly metadata?: { readonly [key: string]: string } | undefined
  readonly promptCacheKey?: string | undefined
  readonly safetyIdentifier?: string | undefined
  readonly user?: string | undefined
  readonly serviceTier?: string | undefined
  readonly maxToolCalls?: number | undefined
  readonly topLogprobs?: number | undefined
  readonly include?: ReadonlyArray<string> | undefined
  readonly promptCacheRetention?: string | undefined
}

/**
 * A decoded request.
 *
 * - `model`: the requested model name; `stream`: whether the client wants SSE.
 * - `prompt`: the conversation; `tools` / `toolChoice`: the function tools (namespaces flattened) and the
 *   tool choice, as `LanguageModel.CallOptions` takes them.
 * - `namespacedTools`: the names a call of a namespaced tool may come back under -> its namespace and
 *   name: the flattened name (`crm__lookup`), the dotted one (`crm.lookup`), and the bare one (`lookup`)
 *   when exactly one namespace declares it and no top-level tool has it. The flattened name is sent
 *   upstream as `upstreamName` makes it (shortened with a hash when over 64 characters), and that name maps
 *   back too; when another tool is sent under that name (a top-level `crm__lookup`, in either order), the
 *   tool gets a name of its own (`crm__lookup_` and 10 hex digits), which maps back instead of the flattened
 *   one.
 * - `renamedTools`: the top-level tools whose name `upstreamName` changed (over 64 characters, or holding
 *   characters other than `a-z A-Z 0-9 _ -`, such as a dot), or that got a name of their own because a tool
 *   of an earlier list is sent under their name (`lookup` of namespace `crm` in `tools`, a top-level
 *   `crm__lookup` in an `additional_tools` item): the name sent upstream -> the tool's name.
 * - `customTools`: the (flattened) names of the custom tools, presented upstream as functions of one
 *   string parameter `input`; a call of one is written back as a `custom_tool_call`.
 * - `applyPatch`: the name of the function presenting the client-run `apply_patch` tool, when the request
 *   declares it; a call of it is written back as an `apply_patch_call` whose `operation` is the call's
 *   arguments. It is `apply_patch`, or `apply_patch_operation` when a function or custom tool of the request
 *   (in any order, in `tools` or in an `additional_tools` / `tool_search_output` input item before or after
 *   the built-in's list) is named `apply_patch` (Codex's freeform tool beside the built-in): both are offered,
 *   the other tool under its name (a built-in that held the name gives it up, and the calls of it read from
 *   `input` before, as `apply_patch_call` items or function calls of its name, go upstream under its new name,
 *   with their outputs: the same names as had both been in `tools`); so for `shell` (`shell_commands`) and `local_shell` (`local_shell_exec`), with
 *   `_` and a hash when a tool holds that name too. Such a name maps back to the built-in's in
 *   `renamedTools`: a call of it whose arguments are no operation or action is written back as a function
 *   call of the built-in's name, and that call in `input`, when the other tool is a custom one, goes
 *   upstream as the built-in's again.
 * - `shell`: the name of the function presenting the client-run `shell` tool, when the request declares it
 *   (`shell_commands` beside a tool named `shell`, see `applyPatch`); a call of it is written back as a
 *   `shell_call` whose `action` is the call's arguments.
 * - `localShell`: the name of the function presenting the client-run `local_shell` tool, when the request
 *   declares it (`local_shell_exec` beside a tool named `local_shell`, see `applyPatch`); a call of it is
 *   written back as a `local_shell_call` whose `action` is the call's arguments.
 * - `toolSearch`: the name of the function presenting a client-run tool search (`TOOL_SEARCH`), when the
 *   request declares a `tool_search` tool with `execution: "client"` (and no function of that name); it is
 *   offered in `tools` and an upstream call of it is written back as a `tool_search_call` with
 *   `execution: "client"` whose `arguments` are the call's.
 * - `deferredTools`: the tools declared with `defer_loading` that no `tool_search_output` of the input
 *   loaded, by the name sent upstream (`DeferredTool`). With a client-run tool search they are not in
 *   `tools` (a tool choice naming one keeps it there); a call of one is written back after a
 *   `tool_search_call` and `tool_search_output` (`execution: "server"`) that load it.
 * - `searchedTools` (since 0.2.0): the top-level function and custom tools a `tool_search_output` of the
 *   input loaded (listed in its `tools`, not declared without `defer_loading`), by the client's name. A tool
 *   a search loaded lives in a namespace of its own name: the API answers a `function_call` of one without
 *   `namespace` in the input with a 400 ("Missing namespace for function_call 'get_weather'. It does not
 *   exist in the default namespace."), so its own calls of one carry `namespace` its name (the recorded
 *   call after its search does: `vai-openai-tool-search.chunks.txt`); the gateway writes every call of
 *   these tools so too.
 * - `droppedTools`: the `type`s of the built-in tools removed under the `drop` policy.
 * - `options`: the other options (`ModelOptions`).
 * - `parameters`: the `CreateResponse` parameters the request set (not `null`), in `PARAMETERS` order, with
 *   `reasoning` and `text` named by their fields (`reasoning.effort`, `reasoning.summary`, `text.format`,
 *   `text.verbosity`).
 * - `ignoredFields`: the top-level fields that are not `CreateResponse` parameters (ignored).
 * - `echo`: the request parameters as the Response object shows them (snake_case JSON, OpenAI's defaults
 *   where the request was silent): `instructions`, `tools`, `tool_choice`, `temperature`, `top_p`,
 *   `max_output_tokens`, `max_tool_calls`, `parallel_tool_calls`, `reasoning`, `text`, `metadata`,
 *   `prompt_cache_key`, `prompt_cache_retention`, `safety_identifier`, `user`, `service_tier`, `top_logprobs`, `truncation`, `store`,
 *   `background`, `previous_response_id`.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodedRequest {
  readonly model: string
  readonly stream: boolean
  readonly prompt: Prompt.Prompt
  readonly tools: ReadonlyArray<LanguageModel.ToolDefinition>
  readonly toolChoice: LanguageModel.ToolChoice | undefined
  readonly namespacedTools: ReadonlyMap<string, NamespacedName>
  readonly renamedTools?: ReadonlyMap<string, string> | undefined
  readonly customTools: ReadonlySet<string>
  readonly applyPatch?: string | undefined
  readonly shell?: string | undefined
  readonly localShell?: string | undefined
  readonly toolSearch?: string | undefined
  readonly deferredTools?: ReadonlyMap<string, DeferredTool> | undefined
  readonly searchedTools?: ReadonlySet<string> | undefined
  readonly droppedTools: ReadonlyArray<string>
  readonly options: ModelOptions
  readonly parameters: ReadonlyArray<string>
  readonly ignoredFields: ReadonlyArray<string>
  readonly echo: { readonly [key: string]: unknown }
}

/**
 * The top-level parameters of `CreateResponse` (the API reference's OpenAPI description); any other
 * top-level field of a request is ignored.
 *
 * @since 0.1.0
 * @category constants
 */
export const PARAMETERS: ReadonlyArray<string> = [
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "temperature",
  "top_p",
  "max_output_tokens",
  "max_tool_calls",
  "parallel_tool_calls",
  "reasoning",
  "text",
  "metadata",
  "prompt_cache_key",
  "prompt_cache_retention",
  "prompt_cache_options",
  "safety_identifier",
  "user",
  "service_tier",
  "top_logprobs",
  "include",
  "stream",
  "stream_options",
  "store",
  "background",
  "truncation",
  "previous_response_id",
  "conversation",
  "prompt",
  "context_management",
  "moderation"
]

const KNOWN = new Set(PARAMETERS)

/**
 * The `include` value asking for the log probabilities of output text, which this decoder refuses.
 *
 * @since 0.1.0
 * @category constants
 */
export const LOGPROBS_INCLUDE = "message.output_text.logprobs" as const

/**
 * What joins a namespace and a tool name in a flattened tool name (`crm__lookup`): characters Chat
 * Completions accepts in function names.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAMESPACE_SEPARATOR: typeof Tools.NAMESPACE_SEPARATOR = Tools.NAMESPACE_SEPARATOR

/**
 * The function name a tool (its flattened name, for a namespace tool) is sent upstream under. OpenAI and most
 * Chat Completions servers refuse a function name that does not match `^[a-zA-Z0-9_-]{1,64}$`; such a name is
 * sent as it is. Any other is renamed: its characters outside that set replaced by `_`, cut to its first 20
 * and last 32 characters when longer than 53, then `_` and 10 hex digits of a hash (FNV-1a, 64 bits) of the
 * whole name; at most 64 characters. The rule depends on the name alone, so every turn of a conversation
 * sends a tool, and the calls of it in `input`, under the same name. The same rule applies to every name the
 * gateway sends: function and custom tools, namespace tools, the client-run tools' functions.
 *
 * @example
 * ```ts
 * import { ResponsesRequestDecoder } from "@effect-responses/server"
 *
 * ResponsesRequestDecoder.upstreamName("crm__lookup") // "crm__lookup"
 * ResponsesRequestDecoder.upstreamName("crm.lookup") // "crm_lookup_" + 10 hex digits
 * ```
 *
 * @since 0.2.0
 * @category decoding
 */
export const upstreamName: (name: string) => string = Tools.upstreamName

// ---------------------------------------------------------------------------------------------------------
// schemas
// ---------------------------------------------------------------------------------------------------------

/**
 * The top-level fields of a `CreateResponse` body this decoder reads (lenient: other fields are ignored).
 * Input items, tools and the tool choice are decoded one by one after it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateResponse = Schema.Struct({
  model: Schema.String,
  input: Nullable(Schema.Union(Schema.String, UnknownArray)),
  instructions: Nullable(Schema.String),
  tools: Nullable(UnknownArray),
  // a mode, or an object decoded after the tools (its `type` tells which)
  tool_choice: Nullable(Schema.Union(
    Schema.Literal("none", "auto", "required"),
    Schema.Record({ key: Schema.String, value: Schema.Unknown })
  )),
  // finite: `1e400` parses as Infinity, which no upstream body can carry (`decodeAt`'s invalid_value)
  temperature: Nullable(Schema.Finite),
  top_p: Nullable(Schema.Finite),
  max_output_tokens: Nullable(Schema.Int),
  max_tool_calls: Nullable(Schema.Int),
  parallel_tool_calls: Nullable(Schema.Boolean),
  reasoning: Nullable(Schema.Struct({
    effort: Nullable(Schema.Literal("none", "minimal", "low", "medium", "high", "xhigh")),
    summary: Nullable(Schema.String)
  })),
  text: Nullable(Schema.Struct({
    format: Nullable(Schema.Unknown),
    verbosity: Nullable(Schema.String)
  })),
  metadata: Nullable(Schema.Record({ key: Schema.String, value: Schema.String })),
  prompt_cache_key: Nullable(Schema.String),
  safety_identifier: Nullable(Schema.String),
  user: Nullable(Schema.String),
  service_tier: Nullable(Schema.String),
  top_logprobs: Nullable(Schema.Int),
  include: Nullable(Schema.Array(Schema.String)),
  prompt_cache_retention: Nullable(Schema.String),
  prompt_cache_options: Nullable(Schema.Unknown),
  stream: Nullable(Schema.Boolean),
  stream_options: Nullable(Schema.Unknown),
  store: Nullable(Schema.Boolean),
  background: Nullable(Schema.Boolean),
  truncation: Nullable(Schema.Literal("auto", "disabled")),
  previous_response_id: Nullable(Schema.String),
  conversation: Nullable(Schema.Unknown),
  prompt: Nullable(Schema.Unknown),
  context_management: Nullable(Schema.Unknown),
  moderation: Nullable(Schema.Unknown)
})

const JsonSchemaFormat = Schema.Struct({
  type: Schema.Literal("json_schema"),
  name: Schema.String,
  schema: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  description: Nullable(Schema.String),
  strict: Nullable(Schema.Boolean)
})

// ---------------------------------------------------------------------------------------------------------
// decoding
// ---------------------------------------------------------------------------------------------------------

/**
 * Decodes a `CreateResponse` body (parsed JSON) into a `DecodedRequest` (see the module doc for the
 * mapping). Logs a warning for each dropped built-in tool or item, a debug line for each dropped
 * encrypted-only reasoning item.
 *
 * Fails with `RequestError` (HTTP 400 in OpenAI's shape) when the body is not an object, a field has the
 * wrong type (`invalid_type`, `missing_required_parameter`) or a value none of its literals (`invalid_value`,
 * worded as OpenAI words it, every supported value named: `Invalid value: 'turbo'. Supported values are:
 * 'auto' and 'disabled'.`; a number past a double's range, `1e400` parsed as Infinity, in any numeric field:
 * "Invalid 'temperature': number out of range. Expected a finite number, but got Infinity instead."), `model`
 * is empty (`empty_string`), or the request asks for what a stateless
 * bridge cannot honour (`unsupported_parameter`, `unsupported_value`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (body: unknown, options: Options = {}): Effect.Effect<DecodedRequest, RequestError> =>
  decodeBody(body, undefined, options)

/**
 * The elements of a request's `input` array, read one at a time and in order: `element(index)` succeeds with
 * the element at `index` (parsed JSON), or fails with `E` (a server that parses them as they are read: the
 * body's syntax error).
 *
 * @since 0.2.0
 * @category models
 */
export interface InputElements<E> {
  readonly length: number
  readonly element: (index: number) => Effect.Effect<unknown, E>
  /**
   * The number of parts of the item at `index` (its `content` array's length, else its `output` array's)
   * when it is known before the element is read (a server that parses a large element part by part counts
   * them first), else `undefined` (or an effect of `undefined`): an item of too many parts is then refused
   * before they are parsed, with the same error as once they are. A server that gives it checks, on a
   * `RequestError`, that the elements not read yet parse (the element counted among them), so that a body
   * that is no JSON answers as such.
   *
   * @since 0.2.0
   */
  readonly partsOf?: (index: number) => Effect.Effect<{ readonly field: "content" | "output"; readonly length: number } | undefined, E> | undefined
}

/**
 * `decode` of a body whose `input` array is given by `input` (the body's own `input`, `null` or absent, is
 * not read): each element is read when its turn comes and nothing of it is kept but what the prompt takes
 * from it, so a server that parses the elements as they are read (the gateway) lets each parsed element
 * become garbage as soon as it is decoded instead of keeping the whole parsed `input` alive while the
 * request runs. Fails as `decode` does, and with what `input.element` fails with.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeElements = <E>(
  body: unknown,
  input: InputElements<E>,
  options: Options = {}
): Effect.Effect<DecodedRequest, RequestError | E> => decodeBody(body, input, options)

const decodeBody = <E>(
  body: unknown,
  elements: InputElements<E> | undefined,
  options: Options
): Effect.Effect<DecodedRequest, RequestError | E> =>
  Effect.gen(function*() {
    if (!isObject(body)) return yield* fail("The request body must be a JSON object.", null, "invalid_type")
    const request = yield* decodeAt(CreateResponse, body, [])
    if (request.model === "") {
      // the API's wording for an empty string; no upstream takes a model without a name
      return yield* fail(
        "Invalid 'model': empty string. Expected a string with minimum length 1, but got an empty string instead.",
        "model",
        "empty_string"
      )
    }
    const policy = options.builtinTools ?? "drop"

    // the body's own object, checked by the schema: the decoded copy is built by assignment, which drops a
    // `__proto__` key (it sets the copy's prototype instead)
    const metadata = request.metadata == null ? undefined : body.metadata as { readonly [key: string]: string }
    if (metadata !== undefined) yield* checkMetadata(metadata)
    yield* checkRanges(request)

    if (request.previous_response_id != null) {
      // a gateway with a response store takes `previous_response_id` before the decoder sees the request
      return yield* fail(
        "This gateway is stateless and does not support 'previous_response_id': replay the earlier items in `input` instead.",
        "previous_response_id",
        "unsupported_parameter"
      )
    }
    if (request.conversation != null) {
      return yield* fail(CONVERSATION_UNSUPPORTED, "conversation", "unsupported_parameter")
    }
    if (request.prompt != null) {
      return yield* unsupportedParameter("prompt", "send the prompt's text as `instructions` and `input`")
    }
    if (request.store === true) {
      return yield* fail(
        "This gateway is stateless and stores nothing: 'store' must be false or left out.",
        "store",
        "unsupported_value"
      )
    }
    if (request.background === true) {
      return yield* fail("This gateway does not run background responses: 'background' must be false.", "background", "unsupported_value")
    }
    if (request.truncation === "auto") {
      return yield* fail(
        "This gateway cannot truncate the conversation: 'truncation' must be \"disabled\"; trim the input yourself.",
        "truncation",
        "unsupported_value"
      )
    }

    if (request.context_management != null) {
      return yield* unsupportedParameter("context_management", "it compacts stored context; trim the input yourself")
    }
    if (request.moderation != null) {
      return yield* unsupportedParameter("moderation", "run moderation on the input and output yourself")
    }
    if (request.top_logprobs != null && request.top_logprobs > 0) {
      return yield* fail(
        "This gateway cannot return log probabilities: 'top_logprobs' must be 0 or left out.",
        "top_logprobs",
        "unsupported_value"
      )
    }
    const logprobsAt = (request.include ?? []).indexOf(LOGPROBS_INCLUDE)
    if (logprobsAt >= 0) {
      return yield* fail(
        `This gateway cannot return log probabilities: remove '${LOGPROBS_INCLUDE}' from 'include'.`,
        `include[${logprobsAt}]`,
        "unsupported_value"
      )
    }

    const parameters: Array<string> = []
    for (const name of PARAMETERS) {
      const value = name === "input" && elements !== undefined ? elements : body[name]
      if (value === undefined || value === null) continue
      if ((name === "reasoning" || name === "text") && isObject(value)) {
        for (const field of name === "reasoning" ? ["effort", "summary"] : ["format", "verbosity"]) {
          if (value[field] != null) parameters.push(`${name}.${field}`)
        }
      } else {
        parameters.push(name)
      }
    }
    const ignoredFields = Object.keys(body).filter((key) => !KNOWN.has(key))
    if (ignoredFields.length > 0) {
      yield* Effect.logDebug(`unknown top-level fields ignored: ${ignoredFields.join(", ")}`)
    }

    // tools
    const toolSet = makeToolSet()
    const rawTools = request.tools ?? []
    if (rawTools.length > MAX_TOOLS) return yield* tooManyTools(rawTools.length)
    // a request without tools (most of them) runs neither pass: each is an `Effect.gen` of its own
    if (rawTools.length > 0) yield* decodeTools(rawTools, ["tools"], policy, toolSet)

    // text format
    let textFormat: ResponseFormat.ResponseFormat | undefined
    const format = request.text?.format
    if (format != null) {
      const type = isObject(format) ? stringField(format, "type") : undefined
      if (type === "text") {
        textFormat = ResponseFormat.text
      } else if (type === "json_object") {
        textFormat = ResponseFormat.json()
      } else if (type === "json_schema") {
        const decoded = yield* decodeAt(JsonSchemaFormat, format, ["text", "format"])
        // `strict` defaults to false on the wire (API reference, `text.format`), not to ResponseFormat's
        // "strict when the schema allows".
        textFormat = ResponseFormat.json(decoded.schema, {
          name: decoded.name,
          description: decoded.description ?? undefined,
          strict: decoded.strict ?? false
        })
      } else {
        return yield* fail("Invalid value for 'text.format.type'.", "text.format.type", "invalid_value")
      }
    }

    // input
    const messages: Array<Message.Message> = []
    if (request.instructions != null && request.instructions !== "") {
      messages.push(new Message.SystemMessage({ content: request.instructions }))
    }
    const input = elements ?? request.input
    const length = typeof input === "object" && input !== null ? input.length : undefined
    const maxItems = options.maxInputItems ?? MAX_INPUT_ITEMS
    if (length !== undefined && length > maxItems) {
      return yield* fail(
        `Invalid 'input': array too long. Expected an array with maximum length ${maxItems}, but got an array with length ${length} instead.`,
        "input",
        "array_above_max_length"
      )
    }
    // a stateless gateway has no earlier conversation: no input is an empty conversation, refused as the
    // API refuses a request without `input`
    if (input == null || length === 0) {
      return yield* fail(
        input == null ? "Missing required parameter: 'input'." : "Invalid 'input': the conversation is empty.",
        "input",
        input == null ? "missing_required_parameter" : "empty_array"
      )
    }
    if (typeof input === "string") {
      messages.push(Prompt.userMessage(input))
    } else {
      yield* Input.decodeInput(input, toolSet, {
        policy,
        inputFiles: options.inputFiles ?? ["data", "id"],
        imageFileIds: options.imageFileIds !== false,
        keepEncrypted: options.encryptedReasoning !== "drop",
        keepAttributes: options.itemAttributes !== "drop",
        maxParts: maxItems,
        outputsApart: options.toolOutputsApart !== false
      }, messages)
    }
    if (toolSet.namespaced.length > 0 || toolSet.collisions.length > 0) yield* logAmbiguousNames(toolSet)

    // tool choice, read once the input's `additional_tools` / `tool_search_output` items added their tools
    let toolChoice: LanguageModel.ToolChoice | undefined
    let allowedNames: ReadonlySet<string> | undefined
    const choice = request.tool_choice
    if (choice === "auto" || choice === "none" || choice === "required") {
      toolChoice = choice
    } else if (isObject(choice)) {
      // an object with no `type` (or a `null` one) is refused as the API refuses a missing required field, one
      // whose `type` is not a string as a value of the wrong type, not taken for a built-in tool's choice
      if (choice.type == null) {
        return yield* fail("Missing required parameter: 'tool_choice.type'.", "tool_choice.type", "missing_required_parameter")
      }
      if (typeof choice.type !== "string") {
        return yield* fail(
          `Invalid type for 'tool_choice.type': expected a string, but got ${Array.isArray(choice.type) ? "an array" : `a ${typeof choice.type}`} instead.`,
          "tool_choice.type",
          "invalid_type"
        )
      }
      const type = choice.type
      if (type === "function" || type === "custom") {
        const name = stringField(choice, "name")
        if (name === undefined) return yield* fail("Missing required parameter: 'tool_choice.name'.", "tool_choice.name", "missing_required_parameter")
        const namespace = stringField(choice, "namespace")
        const sent = Tools.sentNameOf(toolSet, namespace, name)
        if (!toolSet.declared.has(sent)) {
          return yield* fail(`Tool choice '${name}' not found in 'tools' parameter.`, "tool_choice", "invalid_value")
        }
        toolChoice = { tool: sent }
      } else if (type === "allowed_tools") {
        const mode = stringField(choice, "mode")
        const allowed = Array.isArray(choice.tools) ? choice.tools : []
        const names = new Set<string>()
        // an entry naming a tool the request does not declare is refused as OpenAI refuses it (vercel/ai#18997:
        // an allowed_tools entry { type: "function", name: "web_search" } got "Tool choice 'web_search' not
        // found in 'tools' parameter.", param tool_choice), not dropped
        for (const entry of allowed) {
          if (isObject(entry) && (entry.type === "function" || entry.type === "custom") && typeof entry.name === "string") {
            const sent = Tools.sentNameOf(toolSet, typeof entry.namespace === "string" ? entry.namespace : undefined, entry.name)
            if (!toolSet.declared.has(sent)) {
              return yield* fail(`Tool choice '${entry.name}' not found in 'tools' parameter.`, "tool_choice", "invalid_value")
            }
            names.add(sent)
          } else if (isObject(entry) && entry.type === "namespace" && typeof entry.name === "string") {
            let found = false
            for (const original of toolSet.names.values()) {
              if (original.namespace !== entry.name) continue
              names.add(Tools.sentNameOfNamespaced(original))
              found = true
            }
            if (!found) return yield* fail(`Tool choice '${entry.name}' not found in 'tools' parameter.`, "tool_choice", "invalid_value")
          }
        }
        allowedNames = names
        toolChoice = mode === "required" ? "required" : "auto"
      } else if (type === "apply_patch" || type === "shell") {
        // the client-run tools: chosen only when the request declares them
        const tool = type === "apply_patch" ? toolSet.applyPatch : toolSet.shell
        if (tool === undefined) {
          return yield* fail(`Tool choice '${type}' not found in 'tools' parameter.`, "tool_choice", "invalid_value")
        }
        toolChoice = { tool }
      } else if (!TOOL_CHOICE_TYPES.has(type)) {
        // a type the API has no tool choice of (`{"type": "frobnicate"}`, `{"type": "tool_search"}`): refused as
        // the API refuses a value none of a field's, not taken for a built-in tool's choice and dropped
        return yield* Common.invalidValue(type, [...TOOL_CHOICE_TYPES], "tool_choice.type")
      } else if (policy === "drop") {
        // a choice that forces a call of a tool the gateway drops: nothing to call, as `allowed_tools` in
        // `required` mode allowing only such tools (below); taking it as `auto` would answer without the tool
        return yield* fail(
          `Invalid value for 'tool_choice': the tool it forces is a built-in tool this gateway drops (${type}): the upstream cannot run it.`,
          "tool_choice",
          "invalid_value"
        )
      } else {
        return yield* fail(
          `Unsupported tool choice ${type}: this gateway supports auto, none, required and function tools.`,
          "tool_choice",
          "unsupported_value"
        )
      }
    }
    // deferred tools wait for the client's search, when it runs one; a tool the choice names is offered
    const presented = offeredTools(toolSet, typeof toolChoice === "object" ? toolChoice.tool : undefined)
    const offered = allowedNames === undefined
      ? presented
      : presented.filter((tool) => allowedNames.has(tool.name) || tool.name === toolSet.toolSearch)
    if (offered.length === 0 && toolChoice !== undefined) {
      if (toolChoice === "auto" || toolChoice === "none") {
        // with no tool to call, both mean what no choice means; OpenAI's Chat Completions (and servers
        // following it) refuse a `tool_choice` without `tools`
        toolChoice = undefined
      } else {
        // a choice that forces a call with nothing to call: the API refuses it, an upstream would answer
        // with an error of its own
        return yield* fail(noToolToChoose(request.tool_choice, toolSet.dropped), "tool_choice", "invalid_value")
      }
    }

    const modelOptions: ModelOptions = {
      temperature: request.temperature ?? undefined,
      topP: request.top_p ?? undefined,
      maxOutputTokens: request.max_output_tokens ?? undefined,
      parallelToolCalls: request.parallel_tool_calls ?? undefined,
      reasoningEffort: request.reasoning?.effort ?? undefined,
      reasoningSummary: request.reasoning?.summary ?? undefined,
      textFormat,
      verbosity: request.text?.verbosity ?? undefined,
      metadata,
      promptCacheKey: request.prompt_cache_key ?? undefined,
      safetyIdentifier: request.safety_identifier ?? undefined,
      user: request.user ?? undefined,
      serviceTier: request.service_tier ?? undefined,
      maxToolCalls: request.max_tool_calls ?? undefined,
      topLogprobs: request.top_logprobs ?? undefined,
      include: request.include ?? undefined,
      promptCacheRetention: request.prompt_cache_retention ?? undefined
    }

    const text: Record<string, unknown> = { format: isObject(format) ? format : { type: "text" } }
    if (request.text?.verbosity != null) text.verbosity = request.text.verbosity
    const echo: Record<string, unknown> = {
      instructions: request.instructions ?? null,
      tools: rawTools,
      tool_choice: choice ?? "auto",
      temperature: request.temperature ?? 1,
      top_p: request.top_p ?? 1,
      max_output_tokens: request.max_output_tokens ?? null,
      max_tool_calls: request.max_tool_calls ?? null,
      parallel_tool_calls: request.parallel_tool_calls ?? true,
      reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
      text,
      metadata: metadata ?? {},
      prompt_cache_key: request.prompt_cache_key ?? null,
      prompt_cache_retention: request.prompt_cache_retention ?? null,
      safety_identifier: request.safety_identifier ?? null,
      user: request.user ?? null,
      service_tier: request.service_tier ?? "default",
      top_logprobs: request.top_logprobs ?? 0,
      truncation: request.truncation ?? "disabled",
      store: false,
      background: false,
      previous_response_id: null
    }

    return {
      model: request.model,
      stream: request.stream === true,
      // `true`: the messages are instances made here (validating them again costs time per message)
      prompt: new Prompt.Prompt({ messages }, true),
      tools: offered,
      toolChoice,
      namespacedTools: toolSet.names,
      renamedTools: toolSet.renamed,
      customTools: toolSet.custom,
      applyPatch: toolSet.applyPatch,
      shell: toolSet.shell,
      localShell: toolSet.localShell,
      toolSearch: toolSet.toolSearch,
      deferredTools: toolSet.deferred,
      searchedTools: toolSet.searched,
      droppedTools: toolSet.dropped,
      options: modelOptions,
      parameters,
      ignoredFields,
      echo
    } satisfies DecodedRequest
  })

/**
 * The integer parameters within their ranges, worded as the API words an integer below its minimum
 * (`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got -5 instead.`,
 * code `integer_below_min_value`): `max_output_tokens` at least 1 (the API reference's minimum is 16, which
 * a Chat Completions backend need not share, so 1 to 15 go upstream; below 1 no backend can answer), and
 * `top_logprobs` at least 0 (the API reference's range is 0 to 20; above 0 is refused as unsupported
 * anyway). `max_tool_calls` has no range in the API reference and is only echoed: it is not checked. Since
 * 0.2.0 the decimal ones too, worded as the API words them (`Invalid 'temperature': decimal above maximum
 * value. Expected a value <= 2, but got 5 instead.`, codes `decimal_above_max_value` /
 * `decimal_below_min_value`): `temperature` 0 to 2 and `top_p` 0 to 1 (the API reference's
 * `ModelResponseProperties`), which every Chat Completions backend shares.
 */
const checkRanges = (
  request: {
    readonly max_output_tokens?: number | null | undefined
    readonly top_logprobs?: number | null | undefined
    readonly temperature?: number | null | undefined
    readonly top_p?: number | null | undefined
  }
) => {
  const below = (name: string, value: number, minimum: number) =>
    fail(
      `Invalid '${name}': integer below minimum value. Expected a value >= ${minimum}, but got ${value} instead.`,
      name,
      "integer_below_min_value"
    )
  if (request.max_output_tokens != null && request.max_output_tokens < 1) {
    return below("max_output_tokens", request.max_output_tokens, 1)
  }
  if (request.top_logprobs != null && request.top_logprobs < 0) return below("top_logprobs", request.top_logprobs, 0)
  for (const [name, value, maximum] of [["temperature", request.temperature, 2], ["top_p", request.top_p, 1]] as const) {
    if (value == null) continue
    if (value < 0) {
      return fail(
        `Invalid '${name}': decimal below minimum value. Expected a value >= 0, but got ${value} instead.`,
        name,
        "decimal_below_min_value"
      )
    }
    if (value > maximum) {
      return fail(
        `Invalid '${name}': decimal above maximum value. Expected a value <= ${maximum}, but got ${value} instead.`,
        name,
        "decimal_above_max_value"
      )
    }
  }
  return Effect.void
}

/**
 * `metadata` within the API's bounds (the API reference's `Metadata`: at most 16 pairs, keys of at most 64
 * characters, values of at most 512), so that a request the API would refuse is refused here too and a
 * large value is never echoed back. The errors are worded as the API words its string bounds.
 */
const checkMetadata = (metadata: { readonly [key: string]: string }) => {
  const keys = Object.keys(metadata)
  if (keys.length > METADATA_BOUNDS.pairs) {
    return fail(
      `Invalid 'metadata': too many properties. Expected an object with at most ${METADATA_BOUNDS.pairs} properties, but got an object with ${keys.length} properties instead.`,
      "metadata",
      "object_above_max_properties"
    )
  }
  for (const key of keys) {
    const value = metadata[key]!
    if (key.length > METADATA_BOUNDS.keyChars) {
      return fail(
        `Invalid 'metadata': key too long. Expected a key with maximum length ${METADATA_BOUNDS.keyChars}, but got a key with length ${key.length} instead.`,
        "metadata",
        "string_above_max_length"
      )
    }
    if (value.length > METADATA_BOUNDS.valueChars) {
      return fail(
        `Invalid 'metadata.${key}': string too long. Expected a string with maximum length ${METADATA_BOUNDS.valueChars}, but got a string with length ${value.length} instead.`,
        `metadata.${key}`,
        "string_above_max_length"
      )
    }
  }
  return Effect.void
}

/**
 * The `type`s of a `tool_choice` object in the API reference (`ToolChoiceFunction`, `ToolChoiceCustom`,
 * `ToolChoiceAllowed`, `ToolChoiceApplyPatch`, `ToolChoiceShell`, `ToolChoiceMcp`, `ToolChoiceTypes`, the
 * programmatic tool calling one), in the order a 400 lists them: the gateway's own, then the built-in tools'
 * (dropped with a warning, or refused, as `builtinTools` says).
 */
const TOOL_CHOICE_TYPES: ReadonlySet<string> = new Set([
  "function",
  "custom",
  "allowed_tools",
  "apply_patch",
  "shell",
  "mcp",
  "file_search",
  "web_search_preview",
  "web_search_preview_2025_03_11",
  "computer",
  "computer_use",
  "computer_use_preview",
  "image_generation",
  "code_interpreter",
  "programmatic_tool_calling"
])

/**
 * The message of a `tool_choice` that forces a tool call when no tool is left to call: OpenAI's wording for
 * a choice without `tools`, with why none is left.
 */
const noToolToChoose = (choice: unknown, dropped: ReadonlyArray<string>): string => {
  const allowedDropped = isObject(choice) && choice.type === "allowed_tools" && Array.isArray(choice.tools)
    ? dropped.filter((type) => (choice.tools as ReadonlyArray<unknown>).some((tool) => isObject(tool) && tool.type === type))
    : []
  const why = allowedDropped.length > 0
    ? ` The tools 'tool_choice.tools' allows are built-in tools this gateway drops (${allowedDropped.join(", ")}): the upstream cannot run them.`
    : isObject(choice) && choice.type === "allowed_tools"
    ? " None of the tools in 'tool_choice.tools' is in 'tools'."
    : dropped.length > 0
    ? ` This gateway drops built-in tools (${dropped.join(", ")}): the upstream cannot run them.`
    : ""
  return `Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.${why}`
}

/**
 * The error for more than `MAX_TOOLS` tools (`length` of them), worded as the API words its array bounds.
 *
 * @since 0.2.0
 * @category errors
 */
export const tooManyTools = (length: number): Effect.Effect<never, RequestError> =>
  fail(
    `Invalid 'tools': array too long. Expected an array with maximum length ${MAX_TOOLS}, but got an array with length ${length} instead.`,
    "tools",
    "array_above_max_length"
  )

/**
 * What the gateway answers for a request with `conversation` (400 `unsupported_parameter`, param
 * `conversation`): it has no Conversations API, with a response store or without. With a store the gateway
 * answers before the decoder, naming `previous_response_id` (`CONVERSATION_UNSUPPORTED_STORED`).
 *
 * @since 0.2.0
 * @category errors
 */
export const CONVERSATION_UNSUPPORTED =
  "This gateway does not support the Conversations API: 'conversation' cannot be used. Replay the earlier items in `input` instead."

/**
 * `CONVERSATION_UNSUPPORTED` for a gateway with a response store: the store keeps responses, not
 * conversations, so a stored response is continued with `previous_response_id`.
 *
 * @since 0.2.0
 * @category errors
 */
export const CONVERSATION_UNSUPPORTED_STORED =
  "This gateway does not support the Conversations API: 'conversation' cannot be used. Its store keeps responses, not conversations: continue a stored response with `previous_response_id`, or replay the earlier items in `input`."

/**
 * A 400 `unsupported_parameter` for `param`, which the gateway does not support with a response store or
 * without (a stored prompt template, moderation, server-side compaction): "This gateway does not support
 * '<param>': <hint>."
 */
const unsupportedParameter = (param: string, hint: string) =>
  fail(`This gateway does not support '${param}': ${hint}.`, param, "unsupported_parameter")

/**
 * The function name a client-run tool search (`tool_search_call` / `tool_search_output` input items) is
 * shown to the upstream under.
 *
 * @since 0.2.0
 * @category constants
 */
export const TOOL_SEARCH: typeof Tools.TOOL_SEARCH = Tools.TOOL_SEARCH
