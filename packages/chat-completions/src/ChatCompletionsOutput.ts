/**
 * Chat Completions answers -> the core part model: a `chat.completion` body -> `ModelResponse`, and the
 * pieces the streaming decoder shares with it (usage, finish reason, status, annotations).
 *
 * A choice's message becomes, in this order (the order the stream decoder assigns output indices in for
 * the usual streams): a `ReasoningPart {text}` from `reasoning_content` (DeepSeek, xAI, vLLM…; also the
 * `reasoning` field some servers use), a `TextPart` from `content` (with its `url_citation` annotations),
 * a `RefusalPart` from `refusal`, and one `ToolCallPart` per entry of `tool_calls` (a legacy
 * `function_call` counts as one call; a call without an `id` gets a new `syntheticCallId()`; a call's
 * `extra_content`, where Gemini's OpenAI compatibility puts the thought signature it must get back, becomes
 * the part's payload: `extraContentOf`). A `content` that is a list of parts (Mistral's reasoning models,
 * Magistral: `[{"type":"thinking","thinking":[{"type":"text","text":…}]},{"type":"text","text":…}]`) gives
 * its `text` parts' text to the `TextPart` and its `thinking` parts' text (their `text` parts joined, or a
 * string) to the `ReasoningPart`; a part of any other type keeps nothing and is logged as a warning, once
 * per type. Empty strings make no part. Chat Completions has no item ids, so
 * parts carry only `attributes.status` (`completed`, or `incomplete` when the choice stopped for `length` /
 * `content_filter`). Only the first choice (`index` 0) is read. A failed answer in an HTTP 200 body (a
 * `finish_reason` of `"error"`, or an error object as the body: OpenRouter) fails with
 * `AiError.ResponseFailed` carrying the provider's message and code. A message with tool calls whose
 * `finish_reason` is `stop` (Ollama, older vLLM) finishes with `tool_calls`.
 *
 * Source: the OpenAI API reference, "The chat completion object" (`CreateChatCompletionResponse`).
 *
 * @since 0.1.0
 */
import { AiError, Message, ModelResponse, Part, UnsafePart, Usage } from "@effect-responses/core"
import { arrayField, isObject, type JsonObject, numberField, objectField, stringField } from "@effect-responses/wire/Json"
import * as Effect from "effect/Effect"
import { placeCitations } from "./internal/citationMarkers.js"
import { contentParts, ignoredWarning, jsonTypeOf } from "./internal/content.js"
import { errorFields, isError } from "./internal/errorObject.js"

/**
 * The finish reason of a choice's `finish_reason`: `stop`, `length`, `tool_calls` (also the legacy
 * `function_call`) and `content_filter` map to themselves; Mistral's `model_length` (the answer reached the
 * model's context length) is `length`, a truncation like it; anything else (`null` included) is `other`.
 * (Mistral's OpenAPI lists `stop`, `length`, `model_length`, `error` and `tool_calls`; `error` fails the
 * answer before this mapping, see `fromCompletion` and `ChatCompletionsStream`.)
 *
 * @since 0.1.0
 * @category decoding
 */
export const finishReasonFromWire = (finishReason: unknown): ModelResponse.FinishReason => {
  switch (finishReason) {
    case "stop":
    case "length":
    case "tool_calls":
    case "content_filter":
      return finishReason
    case "function_call":
      return "tool_calls"
    case "model_length":
      return "length"
    default:
      return "other"
  }
}

/**
 * The response `status` a finish reason implies, in the Responses vocabulary the part model uses:
 * `incomplete` for `length` and `content_filter`, else `completed`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const statusOf = (finishReason: ModelResponse.FinishReason): string =>
  finishReason === "length" || finishReason === "content_filter" ? "incomplete" : "completed"

/**
 * The `incompleteReason` a finish reason implies, in the Responses vocabulary (so that a Responses
 * encoder, such as the gateway's, can pass it on): `max_output_tokens` for `length`, `content_filter` for
 * `content_filter`, else none.
 *
 * @since 0.1.0
 * @category decoding
 */
export const incompleteReasonOf = (finishReason: ModelResponse.FinishReason): string | undefined =>
  finishReason === "length" ? "max_output_tokens" : finishReason === "content_filter" ? "content_filter" : undefined

/**
 * A Chat Completions `usage` object -> `Usage`: `prompt_tokens` -> `inputTokens`,
 * `prompt_tokens_details.cached_tokens` -> `cachedInputTokens`, `completion_tokens` (plus the reasoning
 * tokens when the server counts them apart, see below) -> `outputTokens`,
 * `completion_tokens_details.reasoning_tokens` -> `reasoningTokens`, and `totalTokens` = input + output.
 * Missing counts are 0; extra fields (xAI's `cost_in_usd_ticks`, DeepSeek's `prompt_cache_hit_tokens`) are
 * ignored. Anything but an object is `Usage.empty`.
 *
 * `Usage` counts the reasoning tokens as part of the output tokens (as the Responses `usage` object does).
 * OpenAI, Azure and DeepSeek do so in `completion_tokens` too (recorded: `total_tokens` = `prompt_tokens` +
 * `completion_tokens`, with `reasoning_tokens` <= `completion_tokens`). xAI does not: its `completion_tokens`
 * leaves the reasoning out, and its `total_tokens` adds it (recorded in
 * the vercel/ai recording `vai-chat-xai-reasoning-tool-call.chunks.txt`: `prompt_tokens` 307,
 * `completion_tokens` 26, `reasoning_tokens` 227, `total_tokens` 560 = 307 + 26 + 227). So the reasoning
 * tokens are added to `completion_tokens` when the server's own total says they were left out
 * (`total_tokens` = prompt + completion + reasoning, and not prompt + completion), or, without a total, when
 * they exceed `completion_tokens` (which an inclusive count cannot). `totalTokens` is then always input +
 * output, whatever the server's total said.
 *
 * @since 0.1.0
 * @category decoding
 */
export const usageFromWire = (usage: unknown): Usage.Usage => {
  if (!isObject(usage)) return Usage.empty
  const inputTokens = numberField(usage, "prompt_tokens") ?? 0
  const completionTokens = numberField(usage, "completion_tokens") ?? 0
  const promptDetails = objectField(usage, "prompt_tokens_details")
  const completionDetails = objectField(usage, "completion_tokens_details")
  const reasoningTokens = (completionDetails && numberField(completionDetails, "reasoning_tokens")) ?? 0
  const total = numberField(usage, "total_tokens")
  const reasoningApart = reasoningTokens > 0 && (
    total === undefined
      ? reasoningTokens > completionTokens
      : total === inputTokens + completionTokens + reasoningTokens && total !== inputTokens + completionTokens
  )
  const outputTokens = reasoningApart ? completionTokens + reasoningTokens : completionTokens
  // numbers all (`numberField`), what the class's schema takes: built without its validation
  return UnsafePart.usage(
    inputTokens,
    (promptDetails && numberField(promptDetails, "cached_tokens")) ?? 0,
    outputTokens,
    reasoningTokens,
    inputTokens + outputTokens
  )
}

/**
 * A Chat Completions message annotation -> a core annotation: `{type:"url_citation", url_citation:{url,
 * title, start_index, end_index}}` becomes `UrlCitation`; any other value is kept verbatim as `other`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const annotationFromWire = (annotation: unknown): Part.Annotation => {
  const citation = isObject(annotation) && annotation.type === "url_citation"
    ? objectField(annotation, "url_citation")
    : undefined
  const url = citation && stringField(citation, "url")
  if (citation === undefined || url === undefined) return { type: "other", value: annotation }
  const title = stringField(citation, "title")
  const startIndex = numberField(citation, "start_index")
  const endIndex = numberField(citation, "end_index")
  return {
    type: "url_citation",
    url,
    ...(title === undefined ? {} : { title }),
    ...(startIndex === undefined ? {} : { startIndex }),
    ...(endIndex === undefined ? {} : { endIndex })
  }
}

/**
 * One of Perplexity's sources -> a `url_citation` annotation without indices: an entry of its top-level
 * `citations` (a URL) or `search_results` (`{title, url, date?, snippet?}`), as its `StreamChunk` and
 * completion have them (perplexityai/perplexity-node). Anything else is `undefined`. The text cites source
 * `n` (1-based) by `[n]` markers: the stream decoder and `fromCompletion` place one such annotation at each
 * marker (since 0.2.0; `startIndex` at its `[`, `endIndex` just after its `]`, UTF-16 offsets into the text),
 * and keep this form, without indices, for a source no marker cites.
 *
 * @since 0.2.0
 * @category decoding
 */
export const sourceCitation = (source: unknown): Part.Annotation | undefined => {
  if (typeof source === "string") return source === "" ? undefined : { type: "url_citation", url: source }
  if (!isObject(source)) return undefined
  const url = stringField(source, "url")
  if (url === undefined || url === "") return undefined
  const title = stringField(source, "title")
  return { type: "url_citation", url, ...(title === undefined || title === "" ? {} : { title }) }
}

/**
 * The reasoning text of a message or a delta: `reasoning_content`, else `reasoning` (a string).
 *
 * @since 0.1.0
 * @category decoding
 */
export const reasoningTextOf = (message: JsonObject): string | undefined => {
  const text = message.reasoning_content
  if (typeof text === "string") return text
  const other = message.reasoning
  return typeof other === "string" ? other : undefined
}

const malformed = (description: string, json: unknown) =>
  new AiError.MalformedOutput({ description, excerpt: AiError.excerpt(safeStringify(json)) })

/** `ResponseFailed` with the `message` and `code` of an error object (`otherwise` when it has no message). */
const failed = (responseId: string, error: unknown, otherwise: string): AiError.ResponseFailed => {
  const { code, description } = errorFields(error)
  return new AiError.ResponseFailed({
    responseId,
    description: description ?? otherwise,
    ...(code === undefined ? {} : { code })
  })
}

const safeStringify = (json: unknown): string => {
  try {
    return JSON.stringify(json) ?? String(json)
  } catch {
    return String(json)
  }
}

/**
 * Decodes a `chat.completion` body (the answer to a request with `stream: false`) into a `ModelResponse`:
 * `id`, `model`, the first choice's message as the parts above, its finish reason (status and
 * incomplete reason as `statusOf` / `incompleteReasonOf` say), and the usage.
 *
 * Fails with `AiError.ResponseFailed` when the answer failed though its HTTP status was 200: the body is an
 * error object (`{"error": {"message", "code"}}`, OpenRouter; an `error` beside the choices too), or the
 * first choice's `finish_reason` is `"error"`; the error's `message` and `code` (numbers as text) come from
 * that object, or from one inside the choice (`choices[0].error`); without any, the description says so.
 * Fails with `AiError.MalformedOutput` when the body is not an object with a string `id` and a `choices`
 * list whose first entry has a `message` object, when that message's `content` is neither a string, a list of
 * parts nor `null` (`42`: the description names the field and its type, where the answer was dropped
 * silently before), or when a tool call lacks its `function.name`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const fromCompletion = (
  json: unknown
): Effect.Effect<ModelResponse.ModelResponse, AiError.MalformedOutput | AiError.ResponseFailed> =>
  Effect.suspend((): Effect.Effect<ModelResponse.ModelResponse, AiError.MalformedOutput | AiError.ResponseFailed> => {
    if (!isObject(json)) return Effect.fail(malformed("the chat.completion body is not a JSON object", json))
    const id = stringField(json, "id")
    // an error object in an HTTP 200 body (OpenRouter: `{"error":{"message","code"}}`, or beside the choices)
    if (isError(json.error)) return Effect.fail(failed(id ?? "", json.error, "the body is an error object"))
    const choices = arrayField(json, "choices")
    if (id === undefined || choices === undefined) {
      return Effect.fail(malformed("the chat.completion body has no string id or no choices list", json))
    }
    const choice = choices.find((c) => isObject(c) && (numberField(c, "index") ?? 0) === 0) ?? choices[0]
    if (isObject(choice) && choice.finish_reason === "error") {
      // a failed answer, not a finished one; its error object inside the choice (OpenRouter), or none
      return Effect.fail(
        failed(id, choice.error, "the server ended the answer with finish_reason \"error\" and no error object")
      )
    }
    const message = isObject(choice) ? objectField(choice, "message") : undefined
    if (!isObject(choice) || message === undefined) {
      return Effect.fail(malformed("the first choice of the chat.completion body has no message", json))
    }
    const wrong = message.content
    if (wrong !== undefined && wrong !== null && typeof wrong !== "string" && !Array.isArray(wrong)) {
      return Effect.fail(
        malformed(`choices[0].message.content of the chat.completion body is ${jsonTypeOf(wrong)}, not a string, a list of parts or null`, json)
      )
    }
    const calls = arrayField(message, "tool_calls") ??
      (isObject(message.function_call) ? [{ id: "", function: message.function_call }] : [])
    const wireReason = finishReasonFromWire(choice.finish_reason)
    // Some servers (Ollama, older vLLM) say `stop` for a message that calls tools.
    const finishReason = wireReason === "stop" && calls.length > 0 ? "tool_calls" : wireReason
    const status = statusOf(finishReason)
    const attributes: Part.Attributes = { status }
    const parts: Array<Part.AssistantPart> = []
    // `content` as a list of parts (Mistral's Magistral): its `thinking` parts are reasoning, `text` parts text.
    const listed = Array.isArray(message.content) ? contentParts(message.content) : undefined
    const reasoning = (reasoningTextOf(message) ?? "") + (listed?.reasoning ?? "")
    if (reasoning !== "") {
      parts.push(new Part.ReasoningPart({ summary: [], text: reasoning, attributes }))
    }
    const content = stringField(message, "content") ?? listed?.text
    if (content !== undefined && content !== "") {
      const annotations = (arrayField(message, "annotations") ?? []).map(annotationFromWire)
      // Perplexity's sources, top-level `citations` or `search_results`: at their `[n]` markers in the text
      const sources = arrayField(json, "citations") ?? arrayField(json, "search_results")
      if (sources !== undefined) annotations.push(...placeCitations(content, sources, sourceCitation))
      parts.push(new Part.TextPart({ text: content, annotations, attributes }))
    }
    const refusal = stringField(message, "refusal")
    if (refusal !== undefined && refusal !== "") parts.push(new Part.RefusalPart({ text: refusal, attributes }))
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index]
      const fn = isObject(call) ? objectField(call, "function") : undefined
      const name = fn && stringField(fn, "name")
      if (!isObject(call) || fn === undefined || name === undefined) {
        return Effect.fail(malformed(`tool call ${index} of the chat.completion body has no function.name`, json))
      }
      const payload = extraContentOf(call)
      parts.push(
        new Part.ToolCallPart({
          callId: stringField(call, "id") || syntheticCallId(),
          name,
          arguments: stringField(fn, "arguments") ?? "",
          ...(payload === undefined ? {} : { payload }),
          attributes
        })
      )
    }
    const incompleteReason = incompleteReasonOf(finishReason)
    const response = Effect.succeed(
      new ModelResponse.ModelResponse({
        id,
        model: stringField(json, "model") ?? "",
        status,
        finishReason,
        ...(incompleteReason === undefined ? {} : { incompleteReason }),
        usage: usageFromWire(json.usage),
        message: new Message.AssistantMessage({ role: "assistant", parts }, true)
      }, true)
    )
    return listed === undefined || listed.ignored.length === 0 ? response : Effect.zipRight(
      Effect.forEach(listed.ignored, (type) => Effect.logWarning(`${ignoredWarning(type)} in response ${id}`), {
        discard: true
      }),
      response
    )
  })

/**
 * The call id given to a tool call that came without one (some open-model servers omit it): `call_` and 24
 * random hex digits, new for every call. Unique across responses, not only within a message: a client that
 * keeps the call ids it has handled across turns (the OpenAI Agents SDK) took a second turn's `call_0` for
 * the first turn's and never ran it, when these ids were `call_<index>`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const syntheticCallId = (): string => `call_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`

/**
 * `"chat-completions"`: the `provider` of the `OpaquePayload`s this package makes (a tool call's
 * `extra_content`). `ChatCompletionsRequest` sends a payload back only when it carries this name.
 *
 * @since 0.2.0
 * @category payloads
 */
export const PROVIDER = "chat-completions" as const

/**
 * `"extra_content"`: the `kind` of the `OpaquePayload` holding a tool call's `extra_content`, its `data` the
 * JSON text of the object.
 *
 * @since 0.2.0
 * @category payloads
 */
export const EXTRA_CONTENT = "extra_content" as const

/**
 * The payload of a tool call's `extra_content` (the call as it came, in a message's `tool_calls` or a
 * delta's), or `undefined` when the call has none or it is not a JSON object. Gemini's OpenAI
 * compatibility puts the call's thought signature there,
 * `"extra_content":{"google":{"thought_signature":"…"}}`, and refuses the next turn (400 "Function call is
 * missing a thought_signature in functionCall parts") unless the assistant message's tool call carries it
 * back (ai.google.dev/gemini-api/docs/thought-signatures, "OpenAI compatibility"). The payload (provider
 * `PROVIDER`, kind `EXTRA_CONTENT`, data the object's JSON text) goes on the call's part, and
 * `ChatCompletionsRequest` sends it back as the tool call's `extra_content`.
 *
 * @since 0.2.0
 * @category payloads
 */
export const extraContentOf = (call: JsonObject): Part.OpaquePayload | undefined => {
  const extra = call.extra_content
  return isObject(extra)
    ? new Part.OpaquePayload({ provider: PROVIDER, kind: EXTRA_CONTENT, data: JSON.stringify(extra) }, true)
    : undefined
}
