/**
 * Our model's answers as `@effect/ai` response parts: a whole `ModelResponse` as the encoded parts of
 * `@effect/ai`'s `generateText` (`fromResponse`), and a stream of `StreamPart`s as the encoded stream parts of
 * its `streamText` (`toStreamParts`).
 *
 * | our part | `@effect/ai` part |
 * | --- | --- |
 * | `TextPart` | `text` (streamed: `text-start`, `text-delta`s, `text-end`), then a `source` per URL or file citation |
 * | `RefusalPart` | `text` with empty text; the refusal text in the metadata's `refusal` |
 * | `ReasoningPart` | `reasoning` (streamed: `reasoning-start`, `reasoning-delta`s, `reasoning-end`): the summary entries joined by a blank line, or the raw reasoning text |
 * | `ToolCallPart` | `tool-call` with the parsed JSON arguments as `params` (streamed: `tool-params-start`, `tool-params-delta`s, `tool-params-end`, then `tool-call`) |
 * | `MediaPart` with base64 `data` | `file` |
 * | any other part (built-in tool items, custom tool calls, shell and apply_patch calls, MCP approval requests, unknown items) | none: carried in the metadata of the next part (`preceding`), or of the `finish` part when none follows (`following`) |
 * | `ResponseStarted` | `response-metadata` (`id`, `modelId`) |
 * | `ResponseFinished` | `finish`: the finish reason (`tool_calls` -> `tool-calls`, `content_filter` -> `content-filter`) and the usage |
 *
 * Every part that ends an output item carries that item's whole part, encoded (the public JSON of
 * `Part`), under the metadata key `"effect-responses"` (`Carried`): item ids, status, the reasoning's
 * encrypted content and its summary entries, annotations, a tool call's `payload` (Gemini's thought
 * signature, its `extra_content` over Chat Completions). `EffectAiPrompt` reads it back from the prompt
 * parts' `options`, so a conversation goes back to the API exactly as it came. `@effect/ai`'s `tool-call`
 * part has no field of its own for such data (`id`, `name`, `params`, `providerName`, `providerExecuted`,
 * and `metadata`), so the metadata is where it goes; `@effect/ai`'s own `Prompt.fromResponseParts` keeps no
 * metadata and loses it, with the encrypted reasoning: use `EffectAiPrompt.fromResponseParts`.
 *
 * @since 0.2.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { AiError, type ModelResponse, Part, StreamPart, type Usage } from "@effect-responses/core"
import * as IdGenerator from "@effect/ai/IdGenerator"
import type * as Response from "@effect/ai/Response"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * The key of this provider's entry in a part's `metadata` (response parts) and `options` (prompt parts).
 *
 * @since 0.2.0
 * @category metadata
 */
export const METADATA_KEY = "effect-responses"

/**
 * What a part carries under `METADATA_KEY`: `part`, the whole part of the output item it ends (the JSON
 * encoding of `Part.AssistantPart`); `preceding`, the parts without an `@effect/ai` counterpart that came
 * before it in the response; on a `finish` part, `following`, those that came after the last item with a
 * counterpart, plus the response's `responseId`, `status` and `incompleteReason`. A refusal also has its
 * text in `refusal`.
 *
 * @since 0.2.0
 * @category metadata
 */
export interface Carried {
  readonly [key: string]: unknown
  readonly part?: unknown
  readonly preceding?: ReadonlyArray<unknown>
  readonly following?: ReadonlyArray<unknown>
  readonly refusal?: string
  readonly responseId?: string
  readonly status?: string
  readonly incompleteReason?: string
}

const encodePart = Schema.encodeSync(Part.AssistantPart)

const metadata = (carried: Carried): { readonly [METADATA_KEY]: Carried } => ({ [METADATA_KEY]: carried })

/**
 * The text an `@effect/ai` reasoning part shows for a reasoning part: its summary entries (the empty ones
 * left out) joined by a blank line, or its raw reasoning text when it has no summary.
 *
 * @since 0.2.0
 * @category conversions
 */
export const reasoningText = (part: Part.ReasoningPart): string => {
  const summary = part.summary.filter((entry) => entry !== "")
  return summary.length > 0 ? summary.join("\n\n") : part.text ?? ""
}

/**
 * The `@effect/ai` finish reason of ours.
 *
 * @since 0.2.0
 * @category conversions
 */
export const finishReason = (reason: ModelResponse.FinishReason): Response.FinishReason => {
  switch (reason) {
    case "tool_calls":
      return "tool-calls"
    case "content_filter":
      return "content-filter"
    default:
      return reason
  }
}

const usageOf = (usage: Usage.Usage): typeof Response.Usage.Encoded => ({
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens,
  totalTokens: usage.totalTokens,
  reasoningTokens: usage.reasoningTokens,
  cachedInputTokens: usage.cachedInputTokens
})

/**
 * The JSON value of a tool call's arguments (`""` is `{}`). Fails with `AiError.MalformedOutput` when the
 * arguments are not JSON.
 */
const paramsOf = (part: Part.ToolCallPart): Effect.Effect<unknown, AiError.MalformedOutput> =>
  Effect.try({
    try: (): unknown => part.arguments.trim() === "" ? {} : JSON.parse(part.arguments),
    catch: () =>
      new AiError.MalformedOutput({
        description: `the arguments of tool call ${part.callId} (${part.name}) are not JSON`,
        excerpt: AiError.excerpt(part.arguments)
      })
  })

/** The `source` parts of a text part's citations. */
const sources = (
  part: Part.TextPart,
  ids: IdGenerator.Service
): Effect.Effect<Array<Response.UrlSourcePartEncoded | Response.DocumentSourcePartEncoded>> =>
  Effect.forEach(part.annotations.filter((a) => a.type === "url_citation" || a.type === "file_citation"), (annotation) =>
    Effect.map(ids.generateId(), (id): Response.UrlSourcePartEncoded | Response.DocumentSourcePartEncoded =>
      annotation.type === "url_citation"
        ? { type: "source", sourceType: "url", id, url: annotation.url, title: annotation.title ?? annotation.url }
        : {
          type: "source",
          sourceType: "document",
          id,
          mediaType: "text/plain",
          title: annotation.type === "file_citation" ? annotation.filename ?? annotation.fileId : "",
          ...(annotation.type === "file_citation" && annotation.filename !== undefined
            ? { fileName: annotation.filename }
            : {})
        }))

/** Whether a part has an `@effect/ai` counterpart (see the module's table). */
const hasCounterpart = (part: Part.AssistantPart): boolean =>
  part.type === "text" || part.type === "refusal" || part.type === "reasoning" || part.type === "tool_call" ||
  (part.type === "media" && part.data !== undefined)

/**
 * The `@effect/ai` response parts of a whole response: `response-metadata`, the parts of the message (see
 * the module's table), `finish`. Fails with `AiError.MalformedOutput` when a tool call's arguments are not
 * JSON. Ids of `source` parts come from `@effect/ai`'s `IdGenerator`.
 *
 * @since 0.2.0
 * @category conversions
 */
export const fromResponse = (
  response: ModelResponse.ModelResponse
): Effect.Effect<Array<Response.PartEncoded>, AiError.MalformedOutput, IdGenerator.IdGenerator> =>
  Effect.gen(function*() {
    const ids = yield* IdGenerator.IdGenerator
    const out: Array<Response.PartEncoded> = [{ type: "response-metadata", id: response.id, modelId: response.model }]
    let pending: Array<unknown> = []
    const carry = (part: Part.AssistantPart, extra: Partial<Carried> = {}) => {
      const carried = metadata({
        part: encodePart(part),
        ...(pending.length > 0 ? { preceding: pending } : {}),
        ...extra
      })
      pending = []
      return carried
    }
    for (const part of response.message.parts) {
      if (!hasCounterpart(part)) {
        pending.push(encodePart(part))
        continue
      }
      switch (part.type) {
        case "text":
          out.push({ type: "text", text: part.text, metadata: carry(part) }, ...(yield* sources(part, ids)))
          break
        case "refusal":
          out.push({ type: "text", text: "", metadata: carry(part, { refusal: part.text }) })
          break
        case "reasoning":
          out.push({ type: "reasoning", text: reasoningText(part), metadata: carry(part) })
          break
        case "tool_call":
          out.push({ type: "tool-call", id: part.callId, name: part.name, params: yield* paramsOf(part), metadata: carry(part) })
          break
        case "media":
          out.push({ type: "file", mediaType: part.mediaType, data: part.data ?? "", metadata: carry(part) })
          break
      }
    }
    out.push({
      type: "finish",
      reason: finishReason(response.finishReason),
      usage: usageOf(response.usage),
      metadata: metadata(finished(response.id, response.status, response.incompleteReason, pending))
    })
    return out
  })

const finished = (
  responseId: string,
  status: string,
  incompleteReason: string | undefined,
  following: ReadonlyArray<unknown>
): Carried => ({
  responseId,
  status,
  ...(incompleteReason === undefined ? {} : { incompleteReason }),
  ...(following.length > 0 ? { following } : {})
})

/** One output item of a stream being turned into `@effect/ai` stream parts. */
interface Slot {
  readonly id: string
  /** The fold of this item's updates alone, for its whole part at the end. */
  state: MessageAggregator.State
  /** Whether the `*-start` part went out. */
  started: boolean
  /** The text, reasoning text or arguments the deltas showed so far. */
  shown: string
  /** The index of the reasoning summary entry the last delta belonged to. */
  summaryIndex: number
}

/** The last non-empty entry of a summary delta and its index. */
const summaryDelta = (summary: ReadonlyArray<string>): readonly [number, string] | undefined => {
  for (let index = summary.length - 1; index >= 0; index--) {
    if (summary[index] !== "") return [index, summary[index]!]
  }
  return undefined
}

/**
 * Our model stream as `@effect/ai` stream parts (see the module's table): the deltas of text, reasoning and
 * function call arguments as they come, each output item's end part with the item's whole part in its
 * metadata. A completing part that contradicts the deltas (`replace: true`) cannot take back what the deltas
 * showed: its whole part is in the end part's metadata, and the text the deltas showed stays as it was.
 * Deltas of other parts (refusals, custom tool call input, previews of built-in tools) are not streamed:
 * those parts come whole at their end. Fails as `stream` does, and with `AiError.MalformedOutput` when a
 * tool call's arguments are not JSON.
 *
 * @since 0.2.0
 * @category conversions
 */
export const toStreamParts = <E, R>(
  stream: Stream.Stream<StreamPart.StreamPart, E, R>
): Stream.Stream<Response.StreamPartEncoded, E | AiError.MalformedOutput, R | IdGenerator.IdGenerator> =>
  Stream.unwrap(Effect.map(IdGenerator.IdGenerator, (ids) =>
    Stream.suspend(() => {
      const slots = new Map<string, Slot>()
      const pending = new Map<string, Array<unknown>>()
      const takePending = (responseId: string): Array<unknown> => {
        const parts = pending.get(responseId) ?? []
        pending.delete(responseId)
        return parts
      }

      const onUpdate = (
        update: StreamPart.PartUpdate
      ): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.MalformedOutput> =>
        Effect.gen(function*() {
          const carry = (whole: Part.AssistantPart, extra: Partial<Carried> = {}) => {
            const preceding = takePending(update.responseId)
            return metadata({ part: encodePart(whole), ...(preceding.length > 0 ? { preceding } : {}), ...extra })
          }
          const key = `${update.responseId}/${update.outputIndex}${update.contentIndex === undefined ? "" : `/${update.contentIndex}`}`
          const part = update.part
          let slot = slots.get(key)
          if (slot === undefined) {
            slot = {
              id: part.type === "tool_call" && part.callId !== "" ? part.callId : key,
              state: MessageAggregator.step(
                MessageAggregator.empty,
                new StreamPart.ResponseStarted({ responseId: update.responseId, model: "" }, true)
              ),
              started: false,
              shown: "",
              summaryIndex: 0
            }
            slots.set(key, slot)
          }
          slot.state = MessageAggregator.step(slot.state, update)
          const out: Array<Response.StreamPartEncoded> = []
          const id = slot.id
          if (update.partial) {
            switch (part.type) {
              case "text":
                if (!slot.started) out.push({ type: "text-start", id })
                if (part.text !== "") out.push({ type: "text-delta", id, delta: part.text })
                slot.shown += part.text
                break
              case "reasoning": {
                if (!slot.started) out.push({ type: "reasoning-start", id })
                let delta = part.text ?? ""
                const entry = summaryDelta(part.summary)
                if (entry !== undefined) {
                  delta = (entry[0] > slot.summaryIndex && slot.shown !== "" ? "\n\n" : "") + entry[1]
                  slot.summaryIndex = entry[0]
                }
                if (delta !== "") out.push({ type: "reasoning-delta", id, delta })
                slot.shown += delta
                break
              }
              case "tool_call":
                if (!slot.started) {
                  out.push({ type: "tool-params-start", id, name: part.name, providerExecuted: false })
                }
                if (part.arguments !== "") out.push({ type: "tool-params-delta", id, delta: part.arguments })
                slot.shown += part.arguments
                break
              default:
                return out
            }
            slot.started = true
            return out
          }
          slots.delete(key)
          const [response] = MessageAggregator.done(slot.state)
          const whole = response?.message.parts[0] ?? part
          const rest = (full: string) => full.startsWith(slot.shown) ? full.slice(slot.shown.length) : ""
          switch (whole.type) {
            case "text": {
              if (!slot.started) out.push({ type: "text-start", id })
              const delta = rest(whole.text)
              if (delta !== "") out.push({ type: "text-delta", id, delta })
              out.push({ type: "text-end", id, metadata: carry(whole) }, ...(yield* sources(whole, ids)))
              return out
            }
            case "refusal":
              out.push({ type: "text-start", id }, { type: "text-end", id, metadata: carry(whole, { refusal: whole.text }) })
              return out
            case "reasoning": {
              if (!slot.started) out.push({ type: "reasoning-start", id })
              const delta = rest(reasoningText(whole))
              if (delta !== "") out.push({ type: "reasoning-delta", id, delta })
              out.push({ type: "reasoning-end", id, metadata: carry(whole) })
              return out
            }
            case "tool_call": {
              const params = yield* paramsOf(whole)
              const callId = whole.callId
              if (!slot.started) out.push({ type: "tool-params-start", id: callId, name: whole.name, providerExecuted: false })
              const delta = rest(whole.arguments)
              if (delta !== "") out.push({ type: "tool-params-delta", id: slot.started ? id : callId, delta })
              out.push(
                { type: "tool-params-end", id: slot.started ? id : callId },
                { type: "tool-call", id: callId, name: whole.name, params, metadata: carry(whole) }
              )
              return out
            }
            default:
              if (hasCounterpart(whole) && whole.type === "media") {
                out.push({ type: "file", mediaType: whole.mediaType, data: whole.data ?? "", metadata: carry(whole) })
              } else {
                const held = pending.get(update.responseId) ?? []
                held.push(encodePart(whole))
                pending.set(update.responseId, held)
              }
              return out
          }
        })

      return stream.pipe(
        Stream.mapEffect((element): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.MalformedOutput> => {
          switch (element.type) {
            case "response_started":
              return Effect.succeed([{ type: "response-metadata", id: element.responseId, modelId: element.model }])
            case "part":
              return onUpdate(element)
            case "response_finished":
              return Effect.succeed([{
                type: "finish",
                reason: finishReason(element.finishReason),
                usage: usageOf(element.usage),
                metadata: metadata(
                  finished(element.responseId, element.status, element.incompleteReason, takePending(element.responseId))
                )
              }])
          }
        }),
        Stream.flattenIterables
      )
    })))
