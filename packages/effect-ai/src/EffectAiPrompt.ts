/**
 * `@effect/ai` prompts as ours (`toPrompt`), and `@effect/ai` response parts as the prompt that hands them
 * back without loss (`fromResponseParts`).
 *
 * | `@effect/ai` | ours |
 * | --- | --- |
 * | system message | `SystemMessage` |
 * | user `text` / `file` | `TextPart` / `MediaPart` (`data`: a `URL` or an `http(s):` / `data:` string is the `url`; bytes or any other string are base64 `data`) |
 * | assistant `text`, `reasoning`, `tool-call` (not provider-executed), `file` | `TextPart`, `ReasoningPart`, `ToolCallPart` (`params` as JSON text), `MediaPart` |
 * | assistant provider-executed `tool-call` / `tool-result` | nothing: the built-in tool's own item comes back through the carried parts (below) |
 * | tool `tool-result` | `ToolResultPart` in a `ToolMessage` (`result` as JSON text unless it is a string; `isFailure` -> `isError`) |
 *
 * A part whose `options` carry the whole part under `"effect-responses"` (what `EffectAiResponse` puts in
 * the metadata, copied over by `fromResponseParts`) becomes that part again, as it came from the API (the
 * carried part wins over the visible content: a stream whose final snapshot contradicted its deltas showed
 * other text than the item holds): item ids, the reasoning's encrypted content and summary entries,
 * annotations, phases and a tool call's `payload` (Gemini's thought signature, which Gemini refuses the next
 * turn without) survive the round trip, and the parts without an `@effect/ai` counterpart carried
 * along (`preceding`, `following`) are put back in place. To change what goes back, drop the `options`.
 *
 * What `@effect/ai`'s own prompt model loses: its `Prompt.fromResponseParts`, and so its `Chat`, builds
 * parts from the visible content alone and drops the metadata. A reasoning model's reasoning then goes back
 * without its encrypted content, so the Responses layer leaves it out (the API rejects unsigned reasoning)
 * and the model reasons again from scratch; item ids, citations, built-in tool items and tool calls'
 * payloads (so a Gemini 3 tool loop over Chat Completions is refused on its second turn) are lost too. Build
 * the next prompt with this module's `fromResponseParts` (keeping the history yourself, or writing it into a
 * `Chat`'s `history`) to keep them.
 *
 * @since 0.2.0
 */
import { AiError, Message, Part, Prompt } from "@effect-responses/core"
import * as AiPrompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Carried, METADATA_KEY } from "./EffectAiResponse.js"

const decodePart = Schema.decodeUnknownOption(Part.AssistantPart)

const carriedOf = (options: AiPrompt.ProviderOptions | undefined): Carried | undefined => {
  const carried = options?.[METADATA_KEY]
  return carried === undefined ? undefined : carried as Carried
}

const partsOf = (values: ReadonlyArray<unknown> | undefined): Array<Part.AssistantPart> => {
  const out: Array<Part.AssistantPart> = []
  for (const value of values ?? []) {
    const part = decodePart(value)
    if (Option.isSome(part)) out.push(part.value)
  }
  return out
}

const carriedPart = (carried: Carried | undefined): Part.AssistantPart | undefined =>
  carried?.part === undefined ? undefined : Option.getOrUndefined(decodePart(carried.part))

const textOf = (value: unknown): string => typeof value === "string" ? value : JSON.stringify(value) ?? "null"

const URL_LIKE = /^(https?|data):/i

const mediaOf = (part: AiPrompt.FilePart): Part.MediaPart => {
  const data = part.data
  const source = data instanceof URL
    ? { url: data.href }
    : data instanceof Uint8Array
    ? { data: Encoding.encodeBase64(data) }
    : URL_LIKE.test(data)
    ? { url: data }
    : { data }
  return new Part.MediaPart({
    mediaType: part.mediaType,
    ...source,
    ...(part.fileName === undefined ? {} : { filename: part.fileName })
  })
}

const assistantParts = (part: AiPrompt.AssistantMessagePart): Array<Part.AssistantPart> => {
  const carried = carriedOf(part.options)
  const original = carriedPart(carried)
  const out = partsOf(carried?.preceding)
  switch (part.type) {
    case "text":
      if (original?.type === "text" || original?.type === "refusal") out.push(original)
      else if (part.text !== "" || carried === undefined) out.push(new Part.TextPart({ text: part.text }))
      break
    case "reasoning":
      out.push(original?.type === "reasoning" ? original : new Part.ReasoningPart({ summary: [part.text] }))
      break
    case "tool-call":
      if (part.providerExecuted) break
      out.push(
        original?.type === "tool_call"
          ? original
          : new Part.ToolCallPart({ callId: part.id, name: part.name, arguments: JSON.stringify(part.params) })
      )
      break
    case "file":
      out.push(original?.type === "media" ? original : mediaOf(part))
      break
    case "tool-result":
      break
  }
  out.push(...partsOf(carried?.following))
  return out
}

/**
 * Our prompt of an `@effect/ai` prompt (see the module's table). Fails with `AiError.InvalidPrompt` when a
 * part cannot be made (an invalid value the schemas of `Part` reject).
 *
 * @since 0.2.0
 * @category conversions
 */
export const toPrompt = (prompt: AiPrompt.Prompt): Effect.Effect<Prompt.Prompt, AiError.InvalidPrompt> =>
  Effect.try({
    try: () =>
      Prompt.make(prompt.content.map((message): Message.Message => {
        switch (message.role) {
          case "system":
            return new Message.SystemMessage({ content: message.content })
          case "user":
            return new Message.UserMessage({
              parts: message.content.map((part) =>
                part.type === "text" ? new Part.TextPart({ text: part.text }) : mediaOf(part)
              )
            })
          case "assistant":
            return new Message.AssistantMessage({ parts: message.content.flatMap(assistantParts) })
          case "tool":
            return new Message.ToolMessage({
              results: message.content.map((part) =>
                new Part.ToolResultPart({
                  callId: part.id,
                  name: part.name,
                  output: textOf(part.result),
                  isError: part.isFailure
                })
              )
            })
        }
      })),
    catch: (error) =>
      new AiError.InvalidPrompt({
        description: `the @effect/ai prompt cannot be mapped: ${error instanceof Error ? error.message : String(error)}`
      })
  })

const withCarried = (carried: Carried | undefined): { readonly options?: AiPrompt.ProviderOptions } =>
  carried === undefined ? {} : { options: { [METADATA_KEY]: { ...carried } } }

const carriedOfMetadata = (metadata: Response.ProviderMetadata): Carried | undefined => {
  const carried = metadata[METADATA_KEY]
  return carried === undefined ? undefined : carried as Carried
}

/**
 * The prompt that hands a response back: what `@effect/ai`'s `Prompt.fromResponseParts` gives (an
 * assistant message of the text, reasoning, tool call and provider-executed tool result parts, then a tool
 * message of the other tool results), with each part's `"effect-responses"` metadata copied to its
 * `options`, and the parts a `finish` part carries (`following`) attached to the last assistant part, so
 * that `toPrompt` gives back the response's items exactly. Streamed parts are joined as `@effect/ai` joins
 * them, with the metadata of each `text-end` / `reasoning-end`.
 *
 * ```ts
 * const response = yield* LanguageModel.generateText({ prompt: history, toolkit })
 * history = Prompt.merge(history, EffectAiPrompt.fromResponseParts(response.content))
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromResponseParts = (parts: ReadonlyArray<Response.AnyPart>): AiPrompt.Prompt => {
  const assistant: Array<AiPrompt.AssistantMessagePart> = []
  const tool: Array<AiPrompt.ToolResultPart> = []
  // the text of each streamed text or reasoning part, by id, from its start to its end
  const open = new Map<string, string>()
  const take = (id: string): string => {
    const text = open.get(id) ?? ""
    open.delete(id)
    return text
  }
  let following: ReadonlyArray<unknown> = []
  for (const part of parts) {
    switch (part.type) {
      case "text":
      case "reasoning":
        assistant.push(AiPrompt.makePart(part.type, { text: part.text, ...withCarried(carriedOfMetadata(part.metadata)) }))
        break
      case "text-start":
      case "reasoning-start":
        open.set(part.id, "")
        break
      case "text-delta":
      case "reasoning-delta":
        if (open.has(part.id)) open.set(part.id, open.get(part.id) + part.delta)
        break
      case "text-end":
        assistant.push(AiPrompt.makePart("text", { text: take(part.id), ...withCarried(carriedOfMetadata(part.metadata)) }))
        break
      case "reasoning-end":
        assistant.push(
          AiPrompt.makePart("reasoning", { text: take(part.id), ...withCarried(carriedOfMetadata(part.metadata)) })
        )
        break
      case "tool-call":
        assistant.push(AiPrompt.makePart("tool-call", {
          id: part.id,
          name: part.providerName ?? part.name,
          params: part.params,
          providerExecuted: part.providerExecuted ?? false,
          ...withCarried(carriedOfMetadata(part.metadata))
        }))
        break
      case "tool-result": {
        const result = AiPrompt.makePart("tool-result", {
          id: part.id,
          name: part.providerName ?? part.name,
          isFailure: part.isFailure,
          result: part.encodedResult,
          providerExecuted: part.providerExecuted ?? false
        })
        if (part.providerExecuted) assistant.push(result)
        else tool.push(result)
        break
      }
      case "file":
        assistant.push(AiPrompt.makePart("file", {
          mediaType: part.mediaType,
          data: part.data,
          ...withCarried(carriedOfMetadata(part.metadata))
        }))
        break
      case "finish":
        following = [...following, ...(carriedOfMetadata(part.metadata)?.following ?? [])]
        break
    }
  }
  if (following.length > 0) {
    const last = assistant.length - 1
    const target = last >= 0 && assistant[last]!.type !== "tool-result" ? assistant[last]! : undefined
    if (target === undefined) {
      assistant.push(AiPrompt.makePart("text", { text: "", options: { [METADATA_KEY]: { following } } }))
    } else {
      const carried = carriedOf(target.options) ?? {}
      assistant[last] = { ...target, options: { ...target.options, [METADATA_KEY]: { ...carried, following } } }
    }
  }
  const messages: Array<AiPrompt.Message> = []
  if (assistant.length > 0) messages.push(AiPrompt.makeMessage("assistant", { content: assistant }))
  if (tool.length > 0) messages.push(AiPrompt.makeMessage("tool", { content: tool }))
  return AiPrompt.fromMessages(messages)
}
