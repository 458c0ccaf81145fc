/**
 * `Prompt` -> the body of a Chat Completions `POST /v1/chat/completions` request, as a plain JSON object.
 *
 * | prompt element | Chat Completions message |
 * |---|---|
 * | system message | `{role:"system", content}` (or `developer`, by `systemMessageRole`) |
 * | user text only | `{role:"user", content: "<text>"}` (one text part) or a list of `{type:"text", text}` |
 * | user image (`image/*`) | `{type:"image_url", image_url:{url (a data URL from `data`, or `url`), detail?}}` |
 * | user audio (`audio/wav`, `audio/mpeg`, `audio/mp3`) with `data` | `{type:"input_audio", input_audio:{data, format:"wav"\|"mp3"}}` |
 * | user file (PDF…) | `{type:"file", file:{filename, file_data (a data URL)}}` or `{type:"file", file:{file_id}}` |
 * | assistant `TextPart`s | `content`: their texts joined |
 * | assistant `RefusalPart` | `refusal`: its text |
 * | assistant `ToolCallPart`s | `tool_calls: [{id: callId, type:"function", function:{name, arguments ("" or JSON whitespace alone -> "{}")}}]`, plus `extra_content` when the part's payload is one (`ChatCompletionsOutput.extraContentOf`: Gemini's thought signature, which Gemini requires back), whatever server the request goes to (see "extra_content" below) |
 * | assistant `CustomToolCallPart`s | `tool_calls` entries too: Chat Completions has no custom tools, so a custom tool is offered as a function with one string parameter `input` (`CUSTOM_TOOL_INPUT`) and its call sent as `arguments: {"input": <input>}` |
 * | assistant `ReasoningPart`s | not sent, unless `replayReasoningContent` (then `reasoning_content`: their `text`, or their summary joined by blank lines) |
 * | assistant `MediaPart`, `UnknownPart`, and the items of Responses built-in tools (shell, apply_patch, local_shell calls, MCP approval requests, tool search) | not sent (debug log) |
 * | tool message | one `{role:"tool", tool_call_id, content: output}` per `ToolResultPart` (function or custom); other results (built-in tool outputs, MCP approval decisions) not sent (debug log) |
 *
 * An assistant message with neither content, refusal nor tool calls left is not sent (debug log). `stream`
 * and `stream_options` are left to the caller (`ChatCompletionsLanguageModel` sets them).
 *
 * `extra_content` goes back on every call that carried one, whatever the server: only a server that
 * answered with it (Gemini, or a proxy in front of it) gave a call one, and a prompt does not say which
 * server made a call of an earlier turn. A conversation moved from Gemini to another server sends it on the
 * earlier calls: vLLM reads messages as the `openai` package's TypedDicts, whose unknown keys pydantic
 * ignores, and Ollama decodes them with Go's JSON decoder, which ignores them too; OpenAI refused unknown message fields
 * for some older models ("Additional properties are not allowed ('parsed', 'refusal' were unexpected) -
 * 'messages.2'" for gpt-3.5 and gpt-4, not for gpt-4o: openai/openai-node#1161), so such a move to one of
 * them may be answered 400: leave out the `payload` of those parts first.
 *
 * Before the body is returned, `messages` is checked against the pairing rules the API enforces
 * (`PAIRING_RULES`): a tool message that answers no tool call of the assistant message right before it
 * fails with `InvalidPrompt` naming the message; a tool call without its tool message is dropped with a
 * warning.
 *
 * Source: the OpenAI API reference, "Create chat completion" (the OpenAPI
 * description's `CreateChatCompletionRequest`).
 *
 * @since 0.1.0
 */
import { AiError, LanguageModel, type Message, type Part, type Prompt, ResponseFormat } from "@effect-responses/core"
import * as Media from "@effect-responses/wire/Media"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"
import * as ChatCompletionsOutput from "./ChatCompletionsOutput.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * One message of the request `messages` (a JSON object).
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatMessage {
  readonly role: "system" | "developer" | "user" | "assistant" | "tool"
  readonly [key: string]: unknown
}

/**
 * A Chat Completions function tool on the wire: `{type:"function", function:{name, description?,
 * parameters, strict?}}`; `strict` is sent only when `true` (`false` is the API's default).
 *
 * @since 0.1.0
 * @category models
 */
export interface FunctionTool {
  readonly type: "function"
  readonly function: {
    readonly name: string
    readonly description?: string
    readonly parameters: { readonly [key: string]: unknown }
    readonly strict?: true
  }
}

/**
 * The `tool_choice` of the request: a mode, or one function by name.
 *
 * @since 0.1.0
 * @category models
 */
export type WireToolChoice =
  | "auto"
  | "none"
  | "required"
  | { readonly type: "function"; readonly function: { readonly name: string } }

/**
 * The request body, a JSON object. The named fields are those this module writes; `extraBody` may add or
 * override any field.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestBody {
  readonly model: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly stream?: boolean
  readonly stream_options?: { readonly include_usage: boolean }
  readonly tools?: ReadonlyArray<FunctionTool>
  readonly tool_choice?: WireToolChoice
  readonly [key: string]: unknown
}

/**
 * The options of a request. `model` is required; every other field is sent only when set.
 *
 * - `tools` / `toolChoice`: local function tools and the tool choice (`{tool}` -> `{type:"function",
 *   function:{name}}`; the tool must be in `tools`).
 * - `temperature`, `topP` (`top_p`), `seed`, `stop` (up to 4 sequences), `parallelToolCalls`
 *   (`parallel_tool_calls`, sent only with tools), `reasoningEffort` (`reasoning_effort`): the request fields
 *   of the same meaning.
 * - `responseFormat`: core's `ResponseFormat`, sent as `response_format` (`{type:"text"}`,
 *   `{type:"json_object"}`, or `{type:"json_schema", json_schema:{name, schema, description?, strict}}`,
 *   resolved by `ResponseFormat.resolve`).
 * - `maxOutputTokens` (tokens): sent as `max_completion_tokens`, or as `max_tokens` when
 *   `maxTokensParameter` says so (older servers and some open-model servers only know `max_tokens`; OpenAI's
 *   reasoning models reject it).
 * - `systemMessageRole` (default `"system"`): the role system messages are sent with; `"developer"` for
 *   models that reject `system` (o1-mini answers 400 `unsupported_value`).
 * - `replayReasoningContent` (default `false`): send the reasoning of assistant messages back as
 *   `reasoning_content` (some DeepSeek-style backends require it on tool turns; OpenAI rejects it).
 * - `user`, `promptCacheKey` (`prompt_cache_key`), `serviceTier` (`service_tier`: `auto`, `default`, `flex`,
 *   `priority`…), `verbosity` (`low`, `medium`, `high`): the request fields of the same meaning, passed as
 *   given (servers that do not know them usually ignore them; some refuse unknown fields, so they are sent
 *   only when set).
 * - `includeUsage` (default `true`): on streamed requests, ask for the final usage chunk
 *   (`stream_options: {include_usage: true}`).
 * - `extraBody`: fields merged into the body last (they win over everything above).
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  readonly model: string
  readonly tools?: ReadonlyArray<LanguageModel.AnyToolDefinition> | undefined
  readonly toolChoice?: LanguageModel.ToolChoice | undefined
  readonly temperature?: number | undefined
  readonly topP?: number | undefined
  readonly maxOutputTokens?: number | undefined
  readonly maxTokensParameter?: "max_completion_tokens" | "max_tokens" | undefined
  readonly stop?: string | ReadonlyArray<string> | undefined
  readonly seed?: number | undefined
  readonly responseFormat?: ResponseFormat.ResponseFormat | undefined
  readonly parallelToolCalls?: boolean | undefined
  readonly reasoningEffort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | undefined
  readonly systemMessageRole?: "system" | "developer" | undefined
  readonly replayReasoningContent?: boolean | undefined
  readonly user?: string | undefined
  readonly promptCacheKey?: string | undefined
  readonly serviceTier?: string | undefined
  readonly verbosity?: string | undefined
  readonly includeUsage?: boolean | undefined
  readonly extraBody?: { readonly [key: string]: unknown } | undefined
}

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

/**
 * Builds the request body of `prompt` with `options` (see the module table).
 *
 * Fails with `AiError.InvalidPrompt` when: `model` is empty; a user message has no parts; a user media part
 * cannot be sent over Chat Completions (an image given only by `fileId`, a file given only by `url`, audio
 * without `data` or in another format, or none of `data`, `url`, `fileId`); a tool result has an empty call
 * id; a tool result answers no tool call of the assistant message right before it (`PAIRING_RULES`);
 * `toolChoice` names a tool that is not in `tools`; two tools have one name (tools of two namespaces:
 * Chat Completions sends tools by name alone); the response format cannot be resolved
 * (`ResponseFormat.resolve`).
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
    const messages: Array<ChatMessage> = []
    const systemRole = options.systemMessageRole ?? "system"
    const all = prompt.messages
    // what the message builders leave out, logged at debug level after each message
    const notes: Array<string> = []
    // a prompt of many messages is built in slices of a few milliseconds, other fibers' I/O running between;
    // the messages are built by plain functions (an `Effect.gen` per message cost about 2 KB of allocation)
    const budget = makeBudget()
    for (let index = 0; index < all.length; index++) {
      if (budget.tick()) yield* yieldToIo
      const message = all[index]
      switch (message.role) {
        case "system": {
          messages.push({ role: systemRole, content: message.content })
          break
        }
        case "user": {
          if (message.parts.length <= MANY_PARTS) {
            const mapped = userMessage(message, index)
            if (Either.isLeft(mapped)) return yield* mapped.left
            messages.push(mapped.right)
            break
          }
          // a message of thousands of parts (a client may send 20,000) is built with yields between its parts
          const content: Array<unknown> = new Array(message.parts.length)
          for (let at = 0; at < content.length; at++) {
            if (budget.tick()) yield* yieldToIo
            const part = message.parts[at]!
            if (part.type === "text") {
              content[at] = { type: "text", text: part.text }
              continue
            }
            const media = userMedia(part, index)
            if (Either.isLeft(media)) return yield* media.left
            content[at] = media.right
          }
          messages.push({ role: "user", content })
          break
        }
        case "assistant": {
          const mapped = assistantMessage(message, index, options.replayReasoningContent === true, notes)
          for (const note of notes) yield* Effect.logDebug(note)
          notes.length = 0
          if (mapped !== undefined) messages.push(mapped)
          break
        }
        case "tool": {
          for (const result of message.results) {
            if (result.type !== "tool_result") {
              yield* Effect.logDebug(
                `tool message ${index}: a ${result.type} is not sent (Chat Completions has no place for it)`
              )
              continue
            }
            if (result.callId === "") {
              return yield* invalid(`tool message ${index}: the result of ${result.name} has an empty call id`)
            }
            messages.push({ role: "tool", tool_call_id: result.callId, content: result.output })
          }
          break
        }
      }
    }
    const body: Record<string, unknown> = { model: options.model, messages: yield* checkPairing(messages) }
    const wireTools: Array<FunctionTool> = []
    const sent = new Set<string>()
    // as the messages: 10,000 tools (the gateway's bound) are built in slices of a few milliseconds too
    for (const tool of options.tools ?? []) {
      if (budget.tick()) yield* yieldToIo
      if (tool instanceof LanguageModel.ClientToolDefinition) {
        yield* Effect.logDebug(`the ${tool.name} tool is not sent (Chat Completions has no built-in tools)`)
      } else {
        // Chat Completions has no namespaces: two namespaces' tools of one name would be one function
        if (sent.has(tool.name)) {
          return yield* invalid(
            `two tools are named ${tool.name} (in different namespaces): Chat Completions has no namespaces to tell them apart`
          )
        }
        sent.add(tool.name)
        wireTools.push(tool instanceof LanguageModel.CustomToolDefinition ? customToolAsFunction(tool) : functionTool(tool))
      }
    }
    const hasTools = wireTools.length > 0
    if (hasTools) body.tools = wireTools
    if (options.toolChoice !== undefined) body.tool_choice = yield* toolChoice(options.toolChoice, options.tools)
    if (options.parallelToolCalls !== undefined && hasTools) body.parallel_tool_calls = options.parallelToolCalls
    if (options.temperature !== undefined) body.temperature = options.temperature
    if (options.topP !== undefined) body.top_p = options.topP
    if (options.maxOutputTokens !== undefined) {
      body[options.maxTokensParameter ?? "max_completion_tokens"] = options.maxOutputTokens
    }
    if (options.stop !== undefined) body.stop = options.stop
    if (options.seed !== undefined) body.seed = options.seed
    if (options.reasoningEffort !== undefined) body.reasoning_effort = options.reasoningEffort
    if (options.responseFormat !== undefined) body.response_format = yield* responseFormat(options.responseFormat)
    if (options.verbosity !== undefined) body.verbosity = options.verbosity
    if (options.user !== undefined) body.user = options.user
    if (options.promptCacheKey !== undefined) body.prompt_cache_key = options.promptCacheKey
    if (options.serviceTier !== undefined) body.service_tier = options.serviceTier
    if (options.extraBody !== undefined) Object.assign(body, options.extraBody)
    return body as RequestBody
  })

const invalid = (description: string) => Effect.fail(new AiError.InvalidPrompt({ description }))

const invalidEither = (description: string) => Either.left(new AiError.InvalidPrompt({ description }))

/** The `id`s of an assistant message's `tool_calls`. */
const toolCallIds = (message: ChatMessage): ReadonlyArray<unknown> =>
  message.role === "assistant" && Array.isArray(message.tool_calls)
    ? message.tool_calls.map((call: unknown) => (typeof call === "object" && call !== null ? (call as { id?: unknown }).id : undefined))
    : []

/**
 * The pairing rules the Chat Completions API enforces on `messages` (see `PAIRING_RULES`): refuses with
 * `InvalidPrompt` a tool message that answers no call of the assistant message right before it (the result
 * is the user's data), drops with a warning a tool call left without its tool message (and the assistant
 * message when nothing else is left in it).
 */
const checkPairing = (messages: Array<ChatMessage>): Effect.Effect<Array<ChatMessage>, AiError.InvalidPrompt> =>
  Effect.gen(function*() {
    const answered = new Set<unknown>()
    // the assistant message whose tool calls the tool messages that follow it answer
    let open: { readonly index: number; readonly ids: ReadonlyArray<unknown> } | undefined
    const unanswered = new Map<number, Set<unknown>>()
    const close = () => {
      if (open === undefined) return
      const left = open.ids.filter((id) => !answered.has(id))
      if (left.length > 0) unanswered.set(open.index, new Set(left))
      open = undefined
    }
    const budget = makeBudget()
    for (let index = 0; index < messages.length; index++) {
      if (budget.tick()) yield* yieldToIo
      const message = messages[index]!
      if (message.role !== "tool") {
        close()
        const ids = toolCallIds(message)
        if (ids.length > 0) open = { index, ids }
        continue
      }
      const callId = message.tool_call_id
      if (open === undefined || !open.ids.includes(callId)) {
        const earlier = messages.findIndex((m, at) => at < index && toolCallIds(m).includes(callId))
        return yield* invalid(
          `messages[${index}]: the tool message for call ${String(callId)} answers no tool call of the assistant ` +
            `message right before it (the API rejects it with "messages with role 'tool' must be a response to a ` +
            `preceding message with 'tool_calls'")` +
            (earlier === -1
              ? "; keep the assistant message holding that call, or remove the result"
              : `; its call is in messages[${earlier}], but other messages come between them: move the result ` +
                "right after the message holding its call")
        )
      }
      answered.add(callId)
    }
    close()
    if (unanswered.size === 0) return messages
    const out: Array<ChatMessage> = []
    for (let index = 0; index < messages.length; index++) {
      if (budget.tick()) yield* yieldToIo
      const message = messages[index]!
      const dropped = unanswered.get(index)
      if (dropped === undefined) {
        out.push(message)
        continue
      }
      const calls = (message.tool_calls as ReadonlyArray<{ readonly id?: unknown; readonly function?: { readonly name?: unknown } }>)
      for (const call of calls) {
        if (!dropped.has(call.id)) continue
        yield* Effect.logWarning(
          `messages[${index}]: tool call ${String(call.function?.name)} (call ${String(call.id)}) dropped: no tool ` +
            `message answers it right after its assistant message (the API rejects it with "An assistant message ` +
            `with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"); add its ` +
            `result in a tool message after it to keep it`
        )
      }
      const kept = calls.filter((call) => !dropped.has(call.id))
      const { tool_calls: _, ...rest } = message
      if (kept.length > 0) {
        out.push({ ...rest, role: "assistant", tool_calls: kept })
      } else if (rest.content !== null || rest.refusal !== undefined) {
        out.push({ ...rest, role: "assistant", content: rest.content ?? "" })
      } else {
        yield* Effect.logDebug(`messages[${index}] not sent: nothing is left in it once its tool calls are dropped`)
      }
    }
    return out
  })

/**
 * The pairing rules of the Chat Completions API for tool calls and their results, checked by `fromPrompt`
 * before a request is sent, and what it does about each (sources: the API's 400 answers, as reported against
 * other clients, e.g. agno-agi/agno#3105, BerriAI/litellm#10083, FoundationAgents/OpenManus#744,
 * miurla/morphic#136; the same rules hold on DeepSeek, Qwen and other compatible servers):
 *
 * | rule | the API's answer | `fromPrompt` |
 * |---|---|---|
 * | every `tool` message answers a tool call of the assistant message right before it (only tool messages between them) | 400 "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'" (`param` `messages.[i].role`) | fails with `InvalidPrompt` naming `messages[i]` and the call id (and where its call is, when other messages come between): the result is the user's data, where it belongs is theirs to say |
 * | every tool call of an assistant message is answered by a `tool` message after it, before any other message | 400 "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: …" | the call is dropped with a warning naming `messages[i]`, the tool and the call id (an assistant message left with nothing is not sent); add a `ToolResultPart` in a tool message right after it to keep it |
 *
 * The same decisions as the Responses API's rules (`ResponsesRequest.PAIRING_RULES` of
 * `@effect-responses/responses`), with the one difference of the wire: a tool message must come right after
 * the assistant message holding its call.
 *
 * @since 0.2.0
 * @category constants
 */
export const PAIRING_RULES = [
  "tool message answering no tool call of the assistant message right before it: InvalidPrompt",
  "tool call without a tool message right after its assistant message: dropped with a warning"
] as const

// ---------------------------------------------------------------------------------------------------------
// user messages
// ---------------------------------------------------------------------------------------------------------

/** A user message of more parts than this is built with yields between its parts (see `fromPrompt`). */
const MANY_PARTS = 64

const userMessage = (message: Message.UserMessage, index: number): Either.Either<ChatMessage, AiError.InvalidPrompt> => {
  const parts = message.parts
  if (parts.length === 0) return invalidEither(`user message ${index} has no parts`)
  if (parts.length === 1 && parts[0].type === "text") return Either.right({ role: "user", content: parts[0].text })
  const content: Array<unknown> = []
  for (const part of parts) {
    if (part.type === "text") {
      content.push({ type: "text", text: part.text })
      continue
    }
    const media = userMedia(part, index)
    if (Either.isLeft(media)) return Either.left(media.left)
    content.push(media.right)
  }
  return Either.right({ role: "user", content })
}

const AUDIO_FORMATS: { readonly [mediaType: string]: "wav" | "mp3" } = {
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3"
}

/**
 * An image becomes `image_url` (a data URL from `data`, else `url`; `detail` when set); audio with `data`
 * becomes `input_audio`; any other media type becomes `file` with `file_data` (a data URL) and `filename`
 * (default `file.<subtype>`), or `file_id`. `data` wins over `url`, which wins over `fileId`.
 */
const userMedia = (part: Part.MediaPart, index: number): Either.Either<unknown, AiError.InvalidPrompt> => {
  const where = `user message ${index}: a ${part.mediaType} part`
  if (part.mediaType.startsWith("image/")) {
    const url = part.data !== undefined ? Media.dataUrl(part.mediaType, part.data) : part.url
    if (url === undefined) {
      return invalidEither(`${where} has neither data nor url (Chat Completions takes no image file id)`)
    }
    return Either.right({
      type: "image_url",
      image_url: part.detail === undefined ? { url } : { url, detail: part.detail }
    })
  }
  if (part.mediaType.startsWith("audio/")) {
    const format = AUDIO_FORMATS[part.mediaType.split(";")[0]!.trim()]
    if (format === undefined || part.data === undefined) {
      return invalidEither(`${where} cannot be sent: Chat Completions takes audio as base64 data in wav or mp3`)
    }
    return Either.right({ type: "input_audio", input_audio: { data: part.data, format } })
  }
  if (part.data !== undefined) {
    return Either.right({
      type: "file",
      file: {
        filename: part.filename ?? Media.defaultFilename(part.mediaType),
        file_data: Media.dataUrl(part.mediaType, part.data)
      }
    })
  }
  if (part.fileId !== undefined) return Either.right({ type: "file", file: { file_id: part.fileId } })
  return invalidEither(`${where} has neither data nor fileId (Chat Completions takes no file URL)`)
}

/**
 * The name of the one string parameter of the function a custom (freeform) tool is offered as on Chat
 * Completions, which has no custom tools: a custom tool `t` becomes the function `t` with parameters
 * `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"],"additionalProperties":false}`,
 * and a call of it comes back as a `CustomToolCallPart` whose `input` is that parameter.
 *
 * @since 0.2.0
 * @category custom tools
 */
export const CUSTOM_TOOL_INPUT = "input"

// ---------------------------------------------------------------------------------------------------------
// assistant messages
// ---------------------------------------------------------------------------------------------------------

const assistantMessage = (
  message: Message.AssistantMessage,
  index: number,
  replayReasoning: boolean,
  notes: Array<string>
): ChatMessage | undefined => {
  const texts: Array<string> = []
  const refusals: Array<string> = []
  const reasoning: Array<string> = []
  const toolCalls: Array<unknown> = []
  const parts = message.parts
  for (let partIndex = 0; partIndex < parts.length; partIndex++) {
    const part = parts[partIndex]
    switch (part.type) {
      case "text":
        texts.push(part.text)
        break
      case "refusal":
        refusals.push(part.text)
        break
      case "reasoning": {
        const text = part.text ?? part.summary.join("\n\n")
        if (replayReasoning && text !== "") reasoning.push(text)
        break
      }
      case "tool_call":
        toolCalls.push(withExtraContent({
          id: part.callId,
          type: "function",
          function: { name: part.name, arguments: blankArguments(part.arguments) ? "{}" : part.arguments }
        }, part.payload, index, notes))
        break
      case "custom_tool_call":
        toolCalls.push(withExtraContent({
          id: part.callId,
          type: "function",
          function: { name: part.name, arguments: JSON.stringify({ [CUSTOM_TOOL_INPUT]: part.input }) }
        }, part.payload, index, notes))
        break
      default:
        notes.push(
          `assistant message ${index}, part ${partIndex}: ${
            part.type === "media" ? `${part.mediaType} media` : part.type === "unknown" ? `${part.kind} item` : part.type
          } not sent (Chat Completions has no place for it)`
        )
        break
    }
  }
  const content = texts.join("")
  if (content === "" && refusals.length === 0 && toolCalls.length === 0) {
    notes.push(`assistant message ${index} not sent: it has no text, refusal or tool call`)
    return undefined
  }
  const messageContent = content === "" && toolCalls.length > 0 ? null : content
  // The message is kept until the request body is written (a long conversation has thousands), so it is
  // made whole by one object literal: members added to a smaller object afterwards go to a separate
  // property array, allocated young (no allocation site to pretenure it), that the young generation's
  // collections then copy twice. The members keep their order: role, content, refusal, reasoning_content,
  // tool_calls (what `JSON.stringify` writes).
  if (refusals.length === 0 && reasoning.length === 0) {
    return (toolCalls.length === 0
      ? { role: "assistant", content: messageContent }
      : { role: "assistant", content: messageContent, tool_calls: exactCopy(toolCalls) }) as ChatMessage
  }
  // a refusal or replayed reasoning (rare): members added one by one
  const out: Record<string, unknown> = { role: "assistant", content: messageContent }
  if (refusals.length > 0) out.refusal = refusals.join("")
  if (reasoning.length > 0) out.reasoning_content = reasoning.join("\n\n")
  if (toolCalls.length > 0) out.tool_calls = exactCopy(toolCalls)
  return out as unknown as ChatMessage
}

/**
 * An exact-size copy of a message's tool calls, from an array literal for one call (the usual case: the
 * literal's allocation site lets V8 allocate it where it will live): an array grown by `push` from empty
 * holds room for 17 calls.
 */
/**
 * Whether tool call arguments are `""` or JSON whitespace alone (spaces, tabs, line feeds, carriage
 * returns): no JSON, sent as `"{}"`.
 */
const blankArguments = (text: string): boolean => {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return false
  }
  return true
}

const exactCopy = (calls: Array<unknown>): Array<unknown> => calls.length === 1 ? [calls[0]] : calls.slice()

/**
 * A tool call with the `extra_content` of its part's payload, when the payload is one this package made
 * (`ChatCompletionsOutput.PROVIDER`, kind `EXTRA_CONTENT`): Gemini refuses a turn whose tool call lacks
 * the thought signature it came with. A payload of another provider is not sent (debug note).
 * Sent whatever the server (see the module doc): the prompt does not say which server made the call.
 */
const withExtraContent = (
  call: Record<string, unknown>,
  payload: Part.OpaquePayload | undefined,
  index: number,
  notes: Array<string>
): Record<string, unknown> => {
  if (payload === undefined) return call
  if (payload.provider !== ChatCompletionsOutput.PROVIDER || payload.kind !== ChatCompletionsOutput.EXTRA_CONTENT) {
    notes.push(
      `assistant message ${index}: the ${payload.kind} payload of call ${String(call.id)} is not sent (it comes from ${payload.provider})`
    )
    return call
  }
  let extra: unknown
  try {
    extra = JSON.parse(payload.data)
  } catch {
    extra = undefined
  }
  if (typeof extra !== "object" || extra === null || Array.isArray(extra)) {
    notes.push(`assistant message ${index}: the extra_content of call ${String(call.id)} is not a JSON object; not sent`)
    return call
  }
  call.extra_content = extra
  return call
}

// ---------------------------------------------------------------------------------------------------------
// tools and formats
// ---------------------------------------------------------------------------------------------------------

/**
 * A core tool definition -> a Chat Completions function tool `{type:"function", function:{name,
 * description?, parameters, strict?}}`. `strict` is sent only when `true`: `false` is the API's default
 * (the API reference, "Create chat completion", `tools[].function.strict`), and servers whose function
 * definition has no such field refuse a request that carries it (vLLM's OpenAI-compatible server answers
 * 400 `extra_forbidden` in its 0.8 and 0.9 lines).
 *
 * @since 0.1.0
 * @category tools
 */
export const functionTool = (tool: LanguageModel.ToolDefinition): FunctionTool => ({
  type: "function",
  function: {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: tool.parameters,
    ...(tool.strict ? { strict: true } : {})
  }
})

/**
 * A core custom (freeform) tool definition -> the core function tool definition it is offered as where
 * there are no custom tools (Chat Completions, and the gateway in front of such a backend): the same name,
 * namespace and `deferLoading`; the description followed, for a grammar format, by the grammar's syntax
 * and definition (a JSON schema cannot hold a grammar, so the model reads it instead of the backend
 * enforcing it); one required string parameter `input` (`CUSTOM_TOOL_INPUT`) holding the raw input; not
 * strict, so that it goes to any backend (`functionTool` sends no `strict` field then; a one-string
 * schema gains little from strict mode). A call of it carries `{"input": <the input>}` as arguments.
 *
 * @since 0.2.0
 * @category custom tools
 */
export const customToolFunction = (tool: LanguageModel.CustomToolDefinition): LanguageModel.ToolDefinition => {
  const grammar = tool.format?.type === "grammar"
    ? `The ${CUSTOM_TOOL_INPUT} must match this ${tool.format.syntax} grammar (write the raw text it describes, not JSON):\n${tool.format.definition}`
    : undefined
  const description = [tool.description, grammar].filter((text) => text !== undefined).join("\n\n")
  return new LanguageModel.ToolDefinition({
    name: tool.name,
    ...(description === "" ? {} : { description }),
    parameters: {
      type: "object",
      properties: { [CUSTOM_TOOL_INPUT]: { type: "string", description: "The tool's whole input, as raw text." } },
      required: [CUSTOM_TOOL_INPUT],
      additionalProperties: false
    },
    strict: false,
    ...(tool.namespace === undefined ? {} : { namespace: tool.namespace }),
    ...(tool.deferLoading === undefined ? {} : { deferLoading: tool.deferLoading })
  })
}

/**
 * A core custom tool definition -> the Chat Completions function it is offered as: `functionTool` of
 * `customToolFunction` (the grammar of its format, if any, in the description; one required string
 * parameter `input`, `CUSTOM_TOOL_INPUT`; not strict).
 *
 * @since 0.2.0
 * @category custom tools
 */
export const customToolAsFunction = (tool: LanguageModel.CustomToolDefinition): FunctionTool => functionTool(customToolFunction(tool))

const toolChoice = (
  choice: LanguageModel.ToolChoice,
  tools: ReadonlyArray<LanguageModel.AnyToolDefinition> | undefined
): Effect.Effect<WireToolChoice, AiError.InvalidPrompt> => {
  if (typeof choice === "string") return Effect.succeed(choice)
  if (tools === undefined || !tools.some((tool) => LanguageModel.toolName(tool) === choice.tool)) {
    return Effect.fail(
      new AiError.InvalidPrompt({
        description: `the tool choice names ${choice.tool}, which is not among the tools offered`,
        option: "toolChoice"
      })
    )
  }
  return Effect.succeed({ type: "function", function: { name: choice.tool } })
}

const responseFormat = (format: ResponseFormat.ResponseFormat): Effect.Effect<unknown, AiError.InvalidPrompt> =>
  Effect.map(ResponseFormat.resolve(format), (resolved) => {
    if (resolved.type !== "json_schema") return resolved
    const { type, ...jsonSchema } = resolved
    return { type, json_schema: jsonSchema }
  })
