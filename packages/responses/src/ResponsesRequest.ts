/**
 * `Prompt` -> the body of a Responses `POST /v1/responses` request (`CreateResponse`), as a plain JSON
 * object (source: the OpenAI API reference, "Create a model response", `CreateResponse`).
 *
 * | prompt element | Responses input |
 * |---|---|
 * | first system message | `instructions`; later ones: `{type:"message", role:"developer", content}` |
 * | user text / image / file | `{type:"message", role:"user", content:[input_text / input_image / input_file…]}` |
 * | assistant `TextPart` | output `message` `{id, status, phase?, content:[{type:"output_text", text, annotations, logprobs: []}]}` when it has an item id; else `{role:"assistant", content: text}` |
 * | assistant `RefusalPart` | output `message` with `refusal` content when it has an item id; else `{role:"assistant", content: text}` |
 * | assistant `TextPart`s and `RefusalPart`s in a row with one item id | ONE output `message` of that id whose `content` holds theirs, in order: the content parts `ResponsesOutput` decoded the message into (`[output_text, refusal]`, two `output_text`), handed back as the model sent them |
 * | assistant `ReasoningPart` | `{type:"reasoning", id, encrypted_content, summary}` only when its payload came from `"openai.responses"` and it has an item id; otherwise skipped (debug log) |
 * | assistant `ToolCallPart` | `{type:"function_call", call_id, name, arguments ("" -> "{}"), namespace?, id?, status?}` |
 * | assistant `CustomToolCallPart` | `{type:"custom_tool_call", call_id, name, input, namespace?, id?, status?}` |
 * | assistant `ShellCallPart` | `{type:"shell_call", call_id, action:{commands, timeout_ms, max_output_length}, environment?, id?, status?}` |
 * | assistant `ApplyPatchCallPart` | `{type:"apply_patch_call", call_id, operation, id?, status?}` |
 * | assistant `LocalShellCallPart` | `{type:"local_shell_call", call_id, action:{type:"exec", command, env, timeout_ms?, working_directory?, user?}, id?, status?}` |
 * | assistant `McpApprovalRequestPart` | `{type:"mcp_approval_request", id, server_label, name, arguments}` |
 * | assistant `ToolSearchCallPart` / `ToolSearchOutputPart` | `{type:"tool_search_call", call_id, execution, arguments, id?, status?}` / `{type:"tool_search_output", call_id, execution, tools, id?, status?}` |
 * | assistant `UnknownPart` | its item verbatim when its provider is `"openai.responses"`; otherwise skipped (debug log) |
 * | assistant `MediaPart` | not replayed (debug log) |
 * | tool message `ToolResultPart` | `{type:"function_call_output", call_id, output}`, or `custom_tool_call_output` for `kind: "custom"` |
 * | tool message `ShellCallOutputPart` | `{type:"shell_call_output", call_id, output:[{stdout, stderr, outcome:{type:"exit", exit_code} / {type:"timeout"}}], max_output_length?}` |
 * | tool message `ApplyPatchCallOutputPart` | `{type:"apply_patch_call_output", call_id, status, output?}` |
 * | tool message `LocalShellCallOutputPart` | `{type:"local_shell_call_output", id: call id, output}` |
 * | tool message `McpApprovalResponsePart` | `{type:"mcp_approval_response", approval_request_id, approve, reason?}` |
 * | tool message `ToolSearchOutputPart` | as in an assistant message |
 *
 * Before the body is returned, `input` is checked against the pairing rules the API enforces for a
 * stateless request (`PAIRING_RULES`): a tool result without its call fails with `InvalidPrompt` naming
 * the item; a call without its result, and a reasoning item without the item it produced, are dropped with
 * a warning.
 *
 * The body always has `store: false` (the client is stateless) and, unless `includeEncryptedReasoning` is
 * `false`, `include: ["reasoning.encrypted_content"]`, so that reasoning can be handed back on the next
 * call. `stream` is left to the caller (`ResponsesClient` sets it). Built-in tools (`BuiltInTool`) are sent
 * in `tools` after the function tools; the text format is core's `ResponseFormat` (a JSON format made from an
 * Effect `Schema` goes out in its strict form when it has one: core's `StrictSchema`, the same as function
 * tools' parameters).
 *
 * @since 0.1.0
 */
import { AiError, LanguageModel, Message, Part, Prompt, ResponseFormat } from "@effect-responses/core"
import { isObject, type JsonObject } from "@effect-responses/wire/Json"
import * as Media from "@effect-responses/wire/Media"
import * as Effect from "effect/Effect"
import * as BuiltInTool from "./BuiltInTool.js"
import * as Provider from "./Provider.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * One item of the request `input` (a JSON object).
 *
 * @since 0.1.0
 * @category models
 */
export interface InputItem {
  readonly [key: string]: unknown
}

/**
 * A Responses function tool on the wire.
 *
 * @since 0.1.0
 * @category models
 */
export interface FunctionTool {
  readonly type: "function"
  readonly name: string
  readonly description?: string
  readonly parameters: { readonly [key: string]: unknown }
  readonly strict: boolean
}

/**
 * The `tool_choice` of the request: a mode, one function by name, or a set of allowed tools
 * (`{type:"allowed_tools", mode, tools:[{type:"function", name} | {type:"web_search"} | …]}`).
 *
 * @since 0.1.0
 * @category models
 */
export type WireToolChoice =
  | "auto"
  | "none"
  | "required"
  | { readonly type: "function"; readonly name: string }
  | { readonly type: "custom"; readonly name: string }
  | { readonly type: "shell" | "apply_patch" | "local_shell" }
  | {
    readonly type: "allowed_tools"
    readonly mode: "auto" | "required"
    readonly tools: ReadonlyArray<{ readonly [key: string]: unknown }>
  }

/**
 * Which tools the model may call: core's `LanguageModel.ToolChoice` (`auto`, `none`, `required`, `{tool}`),
 * or `{allowedTools, mode}`: the model may call only these tools (function tool names, or built-in tools
 * given as they are in `builtInTools`), and with `mode: "required"` (default `"auto"`) must call one of
 * them. The tool list itself stays whole, which keeps the prompt cache warm. Source: API reference,
 * `ToolChoiceAllowed`.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolChoice =
  | LanguageModel.ToolChoice
  | {
    readonly allowedTools: ReadonlyArray<string | BuiltInTool.BuiltInTool>
    readonly mode?: "auto" | "required" | undefined
  }

/**
 * The request body, a JSON object. The named fields are those this module writes; `extraBody` may add or
 * override any field.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestBody {
  readonly model: string
  readonly input: ReadonlyArray<InputItem>
  readonly instructions?: string
  readonly store: boolean
  readonly include?: ReadonlyArray<string>
  readonly stream?: boolean
  readonly tools?: ReadonlyArray<FunctionTool | { readonly type: string; readonly [key: string]: unknown }>
  readonly tool_choice?: WireToolChoice
  readonly [key: string]: unknown
}

/**
 * How much the model reasons (`reasoning.effort`) and what summary it writes (`reasoning.summary`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ReasoningOptions {
  readonly effort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | undefined
  readonly summary?: "auto" | "concise" | "detailed" | undefined
}

/**
 * The options of a request. `model` is required; every other field is sent only when set.
 *
 * - `tools` / `toolChoice`: local function tools (`{type:"function", name, description, parameters,
 *   strict}`) and the tool choice (`{tool}` -> `{type:"function", name}`; `{allowedTools, mode}` ->
 *   `{type:"allowed_tools", mode, tools}`; every function named must be in `tools`).
 * - `builtInTools`: tools OpenAI runs itself (`BuiltInTool`), sent in `tools` after the function tools.
 * - `truncation`: only `"disabled"`; `"auto"` lets the server drop items of a conversation it keeps, which a
 *   stateless client does not have, and is an `InvalidPrompt`.
 * - `includeEncryptedReasoning` (default `true`): ask for `reasoning.encrypted_content`; turn it off for
 *   servers that reject the `include` field.
 * - `temperature`, `topP`, `maxOutputTokens` (tokens), `reasoning`, `text` (`verbosity`, `format`: core's
 *   `ResponseFormat`, resolved by `ResponseFormat.resolve`),
 *   `parallelToolCalls`, `maxToolCalls`, `truncation`, `serviceTier`, `promptCacheKey`,
 *   `safetyIdentifier`, `metadata`: the `CreateResponse` fields of the same meaning (snake_case on the wire).
 * - `extraBody`: fields merged into the body last (they win over everything above), except those that would
 *   make the call stateful or replace the mapped prompt (`store`, `previous_response_id`, `conversation`,
 *   `input`, `stream`, `background`): naming one fails with `InvalidPrompt`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  readonly model: string
  readonly tools?: ReadonlyArray<LanguageModel.AnyToolDefinition> | undefined
  readonly toolChoice?: ToolChoice | undefined
  readonly builtInTools?: ReadonlyArray<BuiltInTool.BuiltInTool> | undefined
  readonly includeEncryptedReasoning?: boolean | undefined
  readonly temperature?: number | undefined
  readonly topP?: number | undefined
  readonly maxOutputTokens?: number | undefined
  readonly reasoning?: ReasoningOptions | undefined
  readonly text?: {
    readonly verbosity?: "low" | "medium" | "high" | undefined
    readonly format?: ResponseFormat.ResponseFormat | undefined
  } | undefined
  readonly parallelToolCalls?: boolean | undefined
  readonly maxToolCalls?: number | undefined
  readonly truncation?: "auto" | "disabled" | undefined
  readonly serviceTier?: string | undefined
  readonly promptCacheKey?: string | undefined
  readonly safetyIdentifier?: string | undefined
  readonly metadata?: { readonly [key: string]: string } | undefined
  readonly extraBody?: { readonly [key: string]: unknown } | undefined
}

/**
 * The `include` value that asks for reasoning `encrypted_content`.
 *
 * @since 0.1.0
 * @category constants
 */
export const INCLUDE_ENCRYPTED_REASONING = "reasoning.encrypted_content" as const

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

/**
 * Builds the request body of `prompt` with `options` (see the module table). Parts that cannot be replayed
 * (foreign reasoning, reasoning without an item id, foreign unknown items, assistant media) are skipped
 * with an `Effect.logDebug` saying why.
 *
 * Fails with `AiError.InvalidPrompt` when: `model` is empty; a user message has no parts; a user media
 * part has neither `data`, `url` nor `fileId`; a tool result has an empty call id; `toolChoice` names a
 * tool that is not in `tools`; `truncation` is `"auto"`; a built-in tool cannot be sent
 * (`BuiltInTool.unsupportedReason`; none today); the text format cannot be resolved
 * (`ResponseFormat.resolve`: a bad name, a schema JSON Schema cannot express, `strict: true` with a schema
 * the strict mode cannot take).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPrompt = (
  prompt: Prompt.Prompt,
  options: RequestOptions
): Effect.Effect<RequestBody, AiError.InvalidPrompt> =>
  Effect.gen(function*() {
    if (options.model === "") return yield* invalid("the model name is empty")
    const input: Array<InputItem> = []
    let instructions: string | undefined
    const messages = prompt.messages
    for (let index = 0; index < messages.length; index++) {
      const message = messages[index]
      switch (message.role) {
        case "system": {
          if (instructions === undefined) instructions = message.content
          else input.push({ type: "message", role: "developer", content: message.content })
          break
        }
        case "user": {
          input.push(yield* userMessage(message, index))
          break
        }
        case "assistant": {
          yield* assistantMessage(message, index, input)
          break
        }
        case "tool": {
          for (const result of message.results) {
            input.push(yield* toolMessageItem(result, index))
          }
          break
        }
      }
    }
    const body: Record<string, unknown> = { model: options.model }
    if (instructions !== undefined) body.instructions = instructions
    body.input = yield* checkPairing(input)
    body.store = false
    if (options.includeEncryptedReasoning !== false) body.include = [INCLUDE_ENCRYPTED_REASONING]
    const tools: Array<unknown> = toolsToWire(options.tools ?? [])
    for (const tool of options.builtInTools ?? []) {
      const reason = BuiltInTool.unsupportedReason(tool)
      if (reason !== undefined) return yield* invalid(reason)
      tools.push(BuiltInTool.toJson(tool))
    }
    if (tools.length > 0) body.tools = tools
    if (options.toolChoice !== undefined) body.tool_choice = yield* toolChoice(options.toolChoice, options.tools)
    if (options.temperature !== undefined) body.temperature = options.temperature
    if (options.topP !== undefined) body.top_p = options.topP
    if (options.maxOutputTokens !== undefined) body.max_output_tokens = options.maxOutputTokens
    if (options.reasoning !== undefined) {
      const reasoning: Record<string, unknown> = {}
      if (options.reasoning.effort !== undefined) reasoning.effort = options.reasoning.effort
      if (options.reasoning.summary !== undefined) reasoning.summary = options.reasoning.summary
      body.reasoning = reasoning
    }
    if (options.text !== undefined) {
      const text: Record<string, unknown> = {}
      if (options.text.verbosity !== undefined) text.verbosity = options.text.verbosity
      if (options.text.format !== undefined) text.format = yield* ResponseFormat.resolve(options.text.format)
      body.text = text
    }
    if (options.parallelToolCalls !== undefined) body.parallel_tool_calls = options.parallelToolCalls
    if (options.maxToolCalls !== undefined) body.max_tool_calls = options.maxToolCalls
    if (options.truncation === "auto") {
      return yield* invalid(
        "truncation \"auto\" is not supported: this client is stateless and sends the whole prompt; " +
          "trim the prompt instead, or leave truncation \"disabled\""
      )
    }
    if (options.truncation !== undefined) body.truncation = options.truncation
    if (options.serviceTier !== undefined) body.service_tier = options.serviceTier
    if (options.promptCacheKey !== undefined) body.prompt_cache_key = options.promptCacheKey
    if (options.safetyIdentifier !== undefined) body.safety_identifier = options.safetyIdentifier
    if (options.metadata !== undefined) body.metadata = options.metadata
    if (options.extraBody !== undefined) {
      const stateful = STATEFUL_FIELDS.filter((key) => key in options.extraBody!)
      if (stateful.length > 0) {
        return yield* invalid(
          `extraBody may not set ${stateful.join(", ")}: this client is stateless (every call sends the whole prompt ` +
            "with \"store\": false)"
        )
      }
      Object.assign(body, options.extraBody)
    }
    return body as RequestBody
  })

const invalid = (description: string) => Effect.fail(new AiError.InvalidPrompt({ description }))

/** Calls whose output the caller gives (the outputs may answer either kind). */
const CALL_TYPES: ReadonlySet<unknown> = new Set(["function_call", "custom_tool_call"])
const OUTPUT_TYPES: ReadonlySet<unknown> = new Set(["function_call_output", "custom_tool_call_output"])

/** Items that start a new turn of input: after one, a reasoning item has lost the item it produced. */
const isTurnInput = (item: InputItem): boolean =>
  OUTPUT_TYPES.has(item.type) ||
  (item.type === "message" && (item.role === "user" || item.role === "developer" || item.role === "system")) ||
  (item.type === undefined && item.role !== "assistant")

/**
 * The pairing rules the Responses API enforces on a stateless `input` (see `PAIRING_RULES`): refuses with
 * `InvalidPrompt` what the user must decide, drops with a warning what the model can do without (a call
 * dropped first, so that reasoning left without its call is dropped too).
 */
const checkPairing = (input: Array<InputItem>): Effect.Effect<Array<InputItem>, AiError.InvalidPrompt> =>
  Effect.gen(function*() {
    const calls = new Map<unknown, number>()
    const answered = new Set<unknown>()
    for (let index = 0; index < input.length; index++) {
      const item = input[index]!
      if (CALL_TYPES.has(item.type)) {
        calls.set(item.call_id, index)
      } else if (OUTPUT_TYPES.has(item.type)) {
        if (!calls.has(item.call_id)) {
          return yield* invalid(
            `input[${index}]: the ${String(item.type)} for call ${String(item.call_id)} answers no earlier tool call ` +
              `(the API rejects it with "No tool call found for function call output"); keep the assistant ` +
              `message holding that call, or remove the result`
          )
        }
        answered.add(item.call_id)
      }
    }
    let unanswered: Set<number> | undefined
    for (const [callId, index] of calls) {
      // only function calls: a custom tool call replayed verbatim has no result type of its own yet
      if (!answered.has(callId) && input[index]!.type === "function_call") {
        const call = input[index]!
        yield* Effect.logWarning(
          `input[${index}]: ${String(call.type)} ${String(call.name)} (call ${String(callId)}) dropped: it has no ` +
            `output (the API rejects it with "No tool output found for function call"); add its result in a tool ` +
            `message after it to keep it`
        )
        ;(unanswered ??= new Set()).add(index)
      }
    }
    const kept = unanswered === undefined ? input : input.filter((_, index) => !unanswered.has(index))
    let out: Array<InputItem> | undefined = kept === input ? undefined : []
    for (let index = 0; index < kept.length; index++) {
      const item = kept[index]!
      const next = kept[index + 1]
      if (item.type === "reasoning" && (next === undefined || isTurnInput(next))) {
        yield* Effect.logWarning(
          `input[${index}]: reasoning item ${String(item.id)} dropped: it has no following output item (the API ` +
            `rejects it with "provided without its required following item")`
        )
        out ??= kept.slice(0, index)
        continue
      }
      out?.push(item)
    }
    return out ?? kept
  })

/**
 * The pairing rules of the Responses API for a stateless `input` (every earlier item sent again), checked
 * by `fromPrompt` before a request is sent, and what it does about each (sources: the API's 400 answers,
 * recorded in `fixtures/responses-json/`, and the same rules reported against other clients):
 *
 * | rule | the API's answer | `fromPrompt` |
 * |---|---|---|
 * | every `function_call_output` answers an earlier `function_call` (same `call_id`) | 400 "No tool call found for function call output with call_id …" | fails with `InvalidPrompt` naming `input[i]` and the call id: the result is the user's data, and which call it belongs to is theirs to say |
 * | every `function_call` has a `function_call_output` after it | 400 "No tool output found for function call …" | the call is dropped with a warning naming `input[i]`, the tool and the call id (a call never answered tells the model nothing; a history replayed to ask something else stays usable); add a `ToolResultPart` to keep it |
 * | a `reasoning` item is followed by the output item it produced (not the end of the input, not a user / developer message or a tool output) | 400 "Item 'rs_…' of type 'reasoning' was provided without its required following item." | the reasoning item is dropped with a warning: the model can do without it, and a response cut off after its reasoning would otherwise make the conversation unusable |
 *
 * A `custom_tool_call_output` must answer an earlier call too; an unanswered `custom_tool_call` is left as
 * it is.
 *
 * @since 0.2.0
 * @category constants
 */
export const PAIRING_RULES = [
  "function_call_output without an earlier function_call: InvalidPrompt",
  "function_call without a later function_call_output: dropped with a warning",
  "reasoning without its following output item: dropped with a warning"
] as const

/** Body fields that would make a call stateful or replace what the prompt mapping wrote. */
const STATEFUL_FIELDS = ["store", "previous_response_id", "conversation", "input", "stream", "background"] as const

// ---------------------------------------------------------------------------------------------------------
// user messages
// ---------------------------------------------------------------------------------------------------------

const userMessage = (
  message: Message.UserMessage,
  index: number
): Effect.Effect<InputItem, AiError.InvalidPrompt> =>
  Effect.gen(function*() {
    if (message.parts.length === 0) return yield* invalid(`user message ${index} has no parts`)
    const content: Array<InputItem> = []
    for (const part of message.parts) {
      if (part.type === "text") {
        content.push({ type: "input_text", text: part.text })
      } else {
        content.push(yield* userMedia(part, index))
      }
    }
    return { type: "message", role: "user", content }
  })

/**
 * An image (`image/*`) becomes `input_image` with `image_url` (a data URL from `data`, or `url`) or
 * `file_id`, and `detail` (default `auto`, which the API requires). Any other media type becomes
 * `input_file` with `file_data` (a data URL) and `filename` (default `file.<subtype>`), or `file_url`, or
 * `file_id`. `data` wins over `url`, which wins over `fileId`.
 */
const userMedia = (part: Part.MediaPart, index: number): Effect.Effect<InputItem, AiError.InvalidPrompt> => {
  if (part.mediaType.startsWith("image/")) {
    const detail = part.detail ?? "auto"
    if (part.data !== undefined) {
      return Effect.succeed({ type: "input_image", image_url: Media.dataUrl(part.mediaType, part.data), detail })
    }
    if (part.url !== undefined) return Effect.succeed({ type: "input_image", image_url: part.url, detail })
    if (part.fileId !== undefined) return Effect.succeed({ type: "input_image", file_id: part.fileId, detail })
  } else {
    if (part.data !== undefined) {
      return Effect.succeed({
        type: "input_file",
        filename: part.filename ?? Media.defaultFilename(part.mediaType),
        file_data: Media.dataUrl(part.mediaType, part.data)
      })
    }
    if (part.url !== undefined) return Effect.succeed({ type: "input_file", file_url: part.url })
    if (part.fileId !== undefined) return Effect.succeed({ type: "input_file", file_id: part.fileId })
  }
  return invalid(`user message ${index}: a ${part.mediaType} part has neither data, url nor fileId`)
}

// ---------------------------------------------------------------------------------------------------------
// assistant messages
// ---------------------------------------------------------------------------------------------------------

const assistantMessage = (
  message: Message.AssistantMessage,
  index: number,
  input: Array<InputItem>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const parts = message.parts
    for (let partIndex = 0; partIndex < parts.length; partIndex++) {
      const part = parts[partIndex]
      const where = `assistant message ${index}, part ${partIndex}`
      switch (part.type) {
        case "text": {
          if (part.attributes.itemId === undefined) input.push({ role: "assistant", content: part.text })
          else {
            pushOutputContent(input, part.attributes, {
              type: "output_text",
              text: part.text,
              annotations: part.annotations.map(annotationToWire),
              // Required by the API's `OutputTextContent`; the part model keeps no log probabilities.
              logprobs: []
            })
          }
          break
        }
        case "refusal": {
          if (part.attributes.itemId === undefined) input.push({ role: "assistant", content: part.text })
          else pushOutputContent(input, part.attributes, { type: "refusal", refusal: part.text })
          break
        }
        case "reasoning": {
          const itemId = part.attributes.itemId
          if (part.payload === undefined) {
            yield* Effect.logDebug(`${where}: reasoning skipped: it has no payload (the API rejects unsigned reasoning)`)
          } else if (part.payload.provider !== Provider.PROVIDER) {
            yield* Effect.logDebug(
              `${where}: reasoning skipped: its payload comes from provider ${part.payload.provider}, not ${Provider.PROVIDER}`
            )
          } else if (itemId === undefined) {
            yield* Effect.logDebug(`${where}: reasoning skipped: it has no item id`)
          } else {
            input.push({
              type: "reasoning",
              id: itemId,
              encrypted_content: part.payload.data,
              summary: part.summary.map((text) => ({ type: "summary_text", text }))
            })
          }
          break
        }
        case "tool_call": {
          const item: Record<string, unknown> = {
            type: "function_call",
            call_id: part.callId,
            name: part.name,
            arguments: part.arguments === "" ? "{}" : part.arguments
          }
          if (part.namespace !== undefined) item.namespace = part.namespace
          input.push(withItemAttributes(item, part.attributes))
          break
        }
        case "custom_tool_call":
        case "shell_call":
        case "apply_patch_call":
        case "local_shell_call":
        case "mcp_approval_request":
        case "tool_search_call":
        case "tool_search_output": {
          input.push(callItem(part))
          break
        }
        case "unknown": {
          if (part.provider !== Provider.PROVIDER) {
            yield* Effect.logDebug(
              `${where}: ${part.kind} item skipped: it comes from provider ${part.provider}, not ${Provider.PROVIDER}`
            )
          } else if (!isObject(part.item)) {
            yield* Effect.logDebug(`${where}: ${part.kind} item skipped: it is not a JSON object`)
          } else {
            input.push(part.item)
          }
          break
        }
        case "media": {
          yield* Effect.logDebug(`${where}: ${part.mediaType} media part not replayed`)
          break
        }
      }
    }
  })

/** Adds `id` and `status` from the part's attributes, when present. */
const withItemAttributes = (item: Record<string, unknown>, attributes: Part.Attributes): InputItem => {
  if (attributes.itemId !== undefined) item.id = attributes.itemId
  if (attributes.status !== undefined) item.status = attributes.status
  return item
}

/**
 * A typed call part of an assistant message -> the output item it came from (see the module table). The
 * inverse of `ResponsesOutput.decodeOutputItem` for these items: decoding the result gives the part back.
 *
 * @since 0.2.0
 * @category encoding
 */
export const callItem = (
  part:
    | Part.CustomToolCallPart
    | Part.ShellCallPart
    | Part.ApplyPatchCallPart
    | Part.LocalShellCallPart
    | Part.McpApprovalRequestPart
    | Part.ToolSearchCallPart
    | Part.ToolSearchOutputPart
): InputItem => {
  switch (part.type) {
    case "custom_tool_call": {
      const item: Record<string, unknown> = {
        type: "custom_tool_call",
        call_id: part.callId,
        name: part.name,
        input: part.input
      }
      if (part.namespace !== undefined) item.namespace = part.namespace
      return withItemAttributes(item, part.attributes)
    }
    case "shell_call": {
      const item: Record<string, unknown> = {
        type: "shell_call",
        call_id: part.callId,
        action: {
          commands: part.commands,
          timeout_ms: part.timeoutMs ?? null,
          max_output_length: part.maxOutputLength ?? null
        }
      }
      if (part.environment !== undefined) item.environment = part.environment
      return withItemAttributes(item, part.attributes)
    }
    case "apply_patch_call":
      return withItemAttributes(
        { type: "apply_patch_call", call_id: part.callId, operation: { ...part.operation } },
        part.attributes
      )
    case "local_shell_call": {
      const action: Record<string, unknown> = { type: "exec", command: part.command, env: part.env }
      if (part.timeoutMs !== undefined) action.timeout_ms = part.timeoutMs
      if (part.workingDirectory !== undefined) action.working_directory = part.workingDirectory
      if (part.user !== undefined) action.user = part.user
      return withItemAttributes({ type: "local_shell_call", call_id: part.callId, action }, part.attributes)
    }
    case "mcp_approval_request":
      return {
        type: "mcp_approval_request",
        id: part.approvalRequestId,
        server_label: part.serverLabel,
        name: part.name,
        arguments: part.arguments
      }
    case "tool_search_call":
      return withItemAttributes({
        type: "tool_search_call",
        call_id: part.callId ?? null,
        execution: part.execution,
        arguments: part.arguments
      }, part.attributes)
    case "tool_search_output":
      return withItemAttributes({
        type: "tool_search_output",
        call_id: part.callId ?? null,
        execution: part.execution,
        tools: part.tools
      }, part.attributes)
  }
}

/**
 * A part of a tool message -> its input item (see the module table). Fails with `AiError.InvalidPrompt`
 * when a result has an empty call id (or an approval decision an empty approval request id).
 *
 * @since 0.2.0
 * @category encoding
 */
export const toolMessageItem = (
  result: Part.ToolMessagePart,
  index: number
): Effect.Effect<InputItem, AiError.InvalidPrompt> => {
  switch (result.type) {
    case "tool_result":
      return result.callId === ""
        ? invalid(`tool message ${index}: the result of ${result.name} has an empty call id`)
        : Effect.succeed({
          type: result.kind === "custom" ? "custom_tool_call_output" : "function_call_output",
          call_id: result.callId,
          output: result.output
        })
    case "shell_call_output": {
      if (result.callId === "") return invalid(`tool message ${index}: a shell_call_output has an empty call id`)
      const item: Record<string, unknown> = {
        type: "shell_call_output",
        call_id: result.callId,
        output: result.output.map((entry) => ({
          stdout: entry.stdout,
          stderr: entry.stderr,
          outcome: entry.outcome.type === "exit" ? { type: "exit", exit_code: entry.outcome.exitCode } : { type: "timeout" }
        }))
      }
      if (result.maxOutputLength !== undefined) item.max_output_length = result.maxOutputLength
      return Effect.succeed(item)
    }
    case "apply_patch_call_output": {
      if (result.callId === "") return invalid(`tool message ${index}: an apply_patch_call_output has an empty call id`)
      const item: Record<string, unknown> = { type: "apply_patch_call_output", call_id: result.callId, status: result.status }
      if (result.output !== undefined) item.output = result.output
      return Effect.succeed(item)
    }
    case "local_shell_call_output":
      return result.callId === ""
        ? invalid(`tool message ${index}: a local_shell_call_output has an empty call id`)
        : Effect.succeed({ type: "local_shell_call_output", id: result.callId, output: result.output })
    case "mcp_approval_response": {
      if (result.approvalRequestId === "") {
        return invalid(`tool message ${index}: an mcp_approval_response has an empty approval request id`)
      }
      const item: Record<string, unknown> = {
        type: "mcp_approval_response",
        approval_request_id: result.approvalRequestId,
        approve: result.approve
      }
      if (result.reason !== undefined) item.reason = result.reason
      return Effect.succeed(item)
    }
    case "tool_search_output":
      return Effect.succeed(callItem(result))
  }
}

/**
 * An output message's content entry: added to the message item just before it when that item has the same
 * id (a message of several content parts, which `ResponsesOutput` decodes into a part per content part and
 * the gateway into a text and a refusal part), so that no two input items share an id and the content parts
 * go back in order; else in an output message of its own.
 */
const pushOutputContent = (input: Array<InputItem>, attributes: Part.Attributes, content: InputItem): void => {
  const last = input[input.length - 1]
  if (last !== undefined && last.type === "message" && last.id === attributes.itemId && Array.isArray(last.content)) {
    last.content.push(content)
    return
  }
  input.push(outputMessage(attributes, content))
}

const outputMessage = (attributes: Part.Attributes, content: InputItem): InputItem => {
  const item: Record<string, unknown> = {
    type: "message",
    role: "assistant",
    id: attributes.itemId,
    status: attributes.status ?? "completed"
  }
  if (attributes.phase !== undefined) item.phase = attributes.phase
  item.content = [content]
  return item
}

/**
 * A core annotation -> its Responses JSON (the inverse of `ResponsesOutput.annotationFromWire`): citations
 * with snake_case fields, `other` as its verbatim value.
 *
 * @since 0.1.0
 * @category annotations
 */
export const annotationToWire = (annotation: Part.Annotation): unknown => {
  switch (annotation.type) {
    case "url_citation":
      return withDefined({
        type: "url_citation",
        url: annotation.url,
        title: annotation.title,
        start_index: annotation.startIndex,
        end_index: annotation.endIndex
      })
    case "file_citation":
      return withDefined({
        type: "file_citation",
        file_id: annotation.fileId,
        filename: annotation.filename,
        index: annotation.index
      })
    case "container_file_citation":
      return withDefined({
        type: "container_file_citation",
        container_id: annotation.containerId,
        file_id: annotation.fileId,
        filename: annotation.filename,
        start_index: annotation.startIndex,
        end_index: annotation.endIndex
      })
    case "file_path":
      return withDefined({ type: "file_path", file_id: annotation.fileId, index: annotation.index })
    case "other":
      return annotation.value
  }
}

const withDefined = (record: Record<string, unknown>): JsonObject => {
  const out: Record<string, unknown> = {}
  for (const key in record) {
    if (record[key] !== undefined) out[key] = record[key]
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------
// tools and formats
// ---------------------------------------------------------------------------------------------------------

/**
 * A core tool definition -> a Responses function tool `{type:"function", name, description?, parameters,
 * strict}`.
 *
 * @since 0.1.0
 * @category tools
 */
export const functionTool = (tool: LanguageModel.ToolDefinition): FunctionTool => ({
  type: "function",
  name: tool.name,
  ...(tool.description === undefined ? {} : { description: tool.description }),
  parameters: tool.parameters,
  strict: tool.strict
})

/**
 * A core custom tool definition -> a Responses custom tool `{type:"custom", name, description?, format?,
 * defer_loading?}` (API reference, `CustomToolParam`).
 *
 * @since 0.2.0
 * @category tools
 */
export const customTool = (tool: LanguageModel.CustomToolDefinition): { readonly [key: string]: unknown } => {
  const out: Record<string, unknown> = { type: "custom", name: tool.name }
  if (tool.description !== undefined) out.description = tool.description
  if (tool.format !== undefined) out.format = { ...tool.format }
  if (tool.deferLoading !== undefined) out.defer_loading = tool.deferLoading
  return out
}

/**
 * The `tools` of the request for the core tool definitions, in order: function tools (`functionTool`, with
 * `defer_loading`), custom tools (`customTool`), client-run built-in tools as `{type:"shell"}`,
 * `{type:"apply_patch"}`, `{type:"local_shell"}`; tools that name a namespace are grouped into one
 * `{type:"namespace", name, description, tools:[…]}` at the place of the first of them (API reference,
 * `NamespaceToolParam`).
 *
 * @since 0.2.0
 * @category tools
 */
export const toolsToWire = (
  tools: ReadonlyArray<LanguageModel.AnyToolDefinition>
): Array<{ readonly [key: string]: unknown }> => {
  const out: Array<{ readonly [key: string]: unknown }> = []
  const namespaces = new Map<string, Array<unknown>>()
  for (const tool of tools) {
    if (tool instanceof LanguageModel.ClientToolDefinition) {
      out.push({ type: tool.name })
      continue
    }
    const wire: { readonly [key: string]: unknown } = tool instanceof LanguageModel.CustomToolDefinition
      ? customTool(tool)
      : { ...functionTool(tool), ...(tool.deferLoading === undefined ? {} : { defer_loading: tool.deferLoading }) }
    if (tool.namespace === undefined) {
      out.push(wire)
      continue
    }
    let group = namespaces.get(tool.namespace.name)
    if (group === undefined) {
      group = []
      namespaces.set(tool.namespace.name, group)
      out.push({ type: "namespace", name: tool.namespace.name, description: tool.namespace.description, tools: group })
    }
    group.push(wire)
  }
  return out
}

const toolChoice = (
  choice: ToolChoice,
  tools: ReadonlyArray<LanguageModel.AnyToolDefinition> | undefined
): Effect.Effect<WireToolChoice, AiError.InvalidPrompt> => {
  if (typeof choice === "string") return Effect.succeed(choice)
  const find = (name: string) => tools?.find((tool) => LanguageModel.toolName(tool) === name)
  const reference = (tool: LanguageModel.AnyToolDefinition): { readonly [key: string]: unknown } =>
    tool instanceof LanguageModel.ClientToolDefinition
      ? { type: tool.name }
      : tool instanceof LanguageModel.CustomToolDefinition
      ? { type: "custom", name: tool.name }
      : { type: "function", name: tool.name }
  if ("tool" in choice) {
    const tool = find(choice.tool)
    if (tool === undefined) {
      return invalid(`the tool choice names ${choice.tool}, which is not among the tools offered`)
    }
    return Effect.succeed(reference(tool) as WireToolChoice)
  }
  const allowed: Array<{ readonly [key: string]: unknown }> = []
  for (const tool of choice.allowedTools) {
    if (typeof tool === "string") {
      const found = find(tool)
      if (found === undefined) return invalid(`the allowed tools name ${tool}, which is not among the tools offered`)
      allowed.push(reference(found))
    } else {
      allowed.push(BuiltInTool.reference(tool))
    }
  }
  if (allowed.length === 0) return invalid("the allowed tools of the tool choice are empty")
  return Effect.succeed({ type: "allowed_tools", mode: choice.mode ?? "auto", tools: allowed })
}
