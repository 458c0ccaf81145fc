/**
 * The streaming decoder: a Responses SSE body (`POST /v1/responses` with `stream: true`) -> `StreamPart`s.
 *
 * SSE framing comes from the `@effect/experimental/Sse` parser; every `data:` payload is one JSON event
 * (`[DONE]`, sent by some non-OpenAI servers, is ignored). Events are decoded one chunk at a time, each
 * picked by a `switch` on its `type`; only the fields used are checked.
 *
 * ## What each event yields
 *
 * | event | element |
 * |---|---|
 * | `response.created` | `ResponseStarted {responseId, model}`; every later element carries this `responseId` (also when a proxy rotates ids) |
 * | `response.in_progress`, `response.queued` | nothing (they start the response only when `response.created` was missing) |
 * | `response.output_item.added` | nothing: the output index starts being tracked (item id, status, phase, call id, name) |
 * | `response.output_text.delta` | delta `TextPart {text: delta}` |
 * | `response.refusal.delta` | delta `RefusalPart {text: delta}` |
 * | `response.reasoning_summary_text.delta` | delta `ReasoningPart {summary}` (see the summary convention) |
 * | `response.reasoning_text.delta` | delta `ReasoningPart {summary: [], text: delta}` |
 * | `response.function_call_arguments.delta` | delta `ToolCallPart {callId, name, arguments: delta}` (call id and name from the added item) |
 * | `response.output_item.done` | the completing part or the complete part (below) |
 * | `response.completed`, `response.incomplete` | `ResponseFinished {status, finishReason, incompleteReason?, usage}` |
 * | `response.failed` | the stream fails with `AiError.ResponseFailed` |
 * | `error` (flat or nested `error`) | the stream fails with `AiError.StreamErrorEvent` |
 * | `*.done`, `content_part.*`, `reasoning_summary_part.*`, `output_text.annotation.added` | nothing: the done item brings their content |
 * | any other type (`keepalive`, hosted-tool progress, deltas of hosted tools…) | nothing; `Effect.logDebug` |
 *
 * Deltas carry the attributes of the added item (`itemId`, and `status`/`phase` as then known).
 *
 * ## Delta, completing and complete parts (the contract with `MessageAggregator`)
 *
 * Every `PartUpdate` addresses the slot `(responseId, outputIndex)`.
 *
 * 1. **Delta** — `partial: true`, holds only NEW content: `TextPart.text`, `RefusalPart.text`,
 *    `ToolCallPart.arguments`, `ReasoningPart.text`, or `ReasoningPart.summary` as in 2. No payload, no
 *    annotations; `callId` / `name` of a tool call delta come from the added item.
 * 2. **Summary deltas** — a delta of the reasoning summary part `summary_index = k` is a `ReasoningPart`
 *    whose `summary` has length `k + 1`: entries `0 … k-1` are `""`, entry `k` is the delta text. Appending is
 *    element-wise: `slot.summary[i] += part.summary[i]` for every `i` of the part, the slot's array growing
 *    as needed. `""` entries change nothing; a new summary part starts when the first delta with a higher
 *    index arrives.
 * 3. **Completing part** — at `response.output_item.done` of an item that received deltas: `partial: false`,
 *    built from the done item (`ResponsesOutput.decodeOutputItem`) and EMPTIED of what the deltas delivered:
 *    `text` / `arguments` / reasoning `text` minus the delivered prefix (usually `""`); `summary` with one
 *    entry per summary part of the done item, each minus its delivered prefix (usually all `""`). It brings
 *    the payload (`encrypted_content` of the done item), the final attributes (`status: "completed"`…), the
 *    annotations (they travel ONLY here, never on deltas) and the final `callId` / `name`.
 * 4. **Complete part** — `partial: false`, the whole part, for items that had no delta: hosted tools, media,
 *    reasoning without summary events, arguments given only in `.done`, text given only in
 *    `output_text.done`. It arrives in a slot that is still empty.
 *
 * The fold (DESIGN section 4, `MessageAggregator`): a `partial: true` part of the slot's type appends
 * (`text`, `arguments`, reasoning `text` concatenated, `summary` element-wise), takes the newest
 * attributes and the payload only when present; a `partial: false` part arriving in a slot that deltas of
 * the same type have been filling is the completing part and is folded by the same rule, which closes the
 * slot; any other `partial: false` part replaces its slot (an empty slot, in practice). Concatenating what a
 * UI receives therefore shows every character exactly once, and the fold gives the done items.
 *
 * When a done item does not start with what its deltas delivered (a server bug or an edited recording,
 * such as the anonymised Azure fixture; never seen in OpenAI's own recordings) the decoder logs a warning
 * and sends the WHOLE snapshot as the completing part (the snapshot wins over the deltas). A fold that
 * merges completing parts then holds deltas + snapshot; telling it to replace instead needs a signal
 * `PartUpdate` does not have yet.
 *
 * ## Errors
 *
 * Malformed JSON, or an event missing a field it needs, fails with `AiError.MalformedOutput` naming the
 * 0-based position of the payload among all payloads of the stream (`[DONE]` and blank payloads count), the
 * event type when known, and an excerpt; so does a part event before the first `response.created` (part
 * events between two responses are skipped with a debug log). A stream that ends while a response is
 * open, or before any response started, fails with `MalformedOutput` ("stream ended without a terminal
 * event"). Errors always come after the elements of the events before them.
 *
 * @since 0.1.0
 */
import { AiError, type StreamPart } from "@effect-responses/core"
import * as Sse from "@effect/experimental/Sse"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type DecodeError as InternalDecodeError, Decoder, type LogEntry } from "./internal/decoder.js"

/**
 * The errors of the decoder: malformed output (bad JSON, missing fields, no terminal event), a stream
 * `error` event, or `response.failed`.
 *
 * @since 0.1.0
 * @category models
 */
export type DecodeError = InternalDecodeError

const runLogs = (logs: ReadonlyArray<LogEntry>): Effect.Effect<void> =>
  Effect.forEach(
    logs,
    (entry) => entry.level === "Debug" ? Effect.logDebug(entry.message) : Effect.logWarning(entry.message),
    { discard: true }
  )

type DecoderChannel<E> = Channel.Channel<
  Chunk.Chunk<StreamPart.StreamPart>,
  Chunk.Chunk<string>,
  E | DecodeError,
  E,
  unknown,
  unknown
>

/**
 * The decoding loop shared by both entry points: `frame` turns one input string into the `data:` payloads
 * it completes (all of it for already-framed input; what the SSE parser completes for SSE text), and every
 * payload goes through the same event state machine. One synchronous pass per chunk; the elements of a
 * chunk are written before the error that ends it, if any.
 */
const makeChannel = <E>(
  frame: (input: string, payloads: Array<string>) => AiError.MalformedOutput | undefined
): DecoderChannel<E> =>
  Channel.suspend(() => {
    const decoder = new Decoder()
    const payloads: Array<string> = []
    const emit = (
      out: Array<StreamPart.StreamPart>,
      error: DecodeError | undefined,
      next: DecoderChannel<E>
    ): DecoderChannel<E> => {
      let result: DecoderChannel<E> = error === undefined ? next : Channel.fail(error)
      if (out.length > 0) result = Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), result)
      const logs = decoder.takeLogs()
      if (logs.length > 0) result = Channel.zipRight(Channel.fromEffect(runLogs(logs)), result)
      return result
    }
    const loop: DecoderChannel<E> = Channel.readWithCause({
      onInput: (input: Chunk.Chunk<string>) => {
        const out: Array<StreamPart.StreamPart> = []
        let error: DecodeError | undefined
        for (const text of input) {
          error = frame(text, payloads)
          for (let i = 0; error === undefined && i < payloads.length; i++) error = decoder.feed(payloads[i]!, out)
          payloads.length = 0
          if (error !== undefined) break
        }
        return emit(out, error, loop)
      },
      onFailure: (cause) => Channel.failCause(cause),
      onDone: () => emit([], decoder.end(), Channel.void)
    })
    return loop
  })

/**
 * The decoder as a channel from chunks of `data:` payloads (one JSON event per string) to chunks of
 * `StreamPart`s. Each run of the channel has its own state.
 *
 * @since 0.1.0
 * @category decoding
 */
export const channel = <E>(): Channel.Channel<
  Chunk.Chunk<StreamPart.StreamPart>,
  Chunk.Chunk<string>,
  E | DecodeError,
  E,
  unknown,
  unknown
> =>
  makeChannel((data, payloads) => {
    payloads.push(data)
    return undefined
  })

/**
 * The decoder as a channel from chunks of SSE text (split anywhere) to chunks of `StreamPart`s: framing by
 * the `@effect/experimental/Sse` parser (`Sse.makeParser`, the parser `Sse.makeChannel` runs), then the
 * event state machine, in one synchronous pass per chunk. `Sse.makeChannel` itself is not used: it hands
 * events over through a mailbox (a fiber hand-off every few events, which dominated decoding time) and
 * turns an oversized event into a defect; here an event larger than `maxEventSize` UTF-16 code units
 * (default 16 MiB) fails with `MalformedOutput`. SSE comments and `retry:` / `id:` fields are ignored;
 * the `event:` name is ignored too (the JSON `type` is authoritative).
 *
 * @since 0.1.0
 * @category decoding
 */
export const sseChannel = <E>(options?: {
  readonly maxEventSize?: number | undefined
}): Channel.Channel<
  Chunk.Chunk<StreamPart.StreamPart>,
  Chunk.Chunk<string>,
  E | DecodeError,
  E,
  unknown,
  unknown
> =>
  Channel.suspend(() => {
    let sink: Array<string> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event") sink.push(event.data)
    }, { maxEventSize: options?.maxEventSize ?? DEFAULT_MAX_EVENT_SIZE })
    return makeChannel<E>((text, payloads) => {
      sink = payloads
      // The parser rescans its buffer from the start for every line of one `feed` (quadratic in the size
      // of what is fed at once: about 1.4 s for a 194 KB body fed whole); fed one line at a time it is
      // linear. Lines end at "\n"; a lone "\r" line ending is still framed by the parser, only slower.
      let start = 0
      let error: Sse.SseError | undefined
      while (error === undefined && start < text.length) {
        const newline = text.indexOf("\n", start)
        const end = newline === -1 ? text.length : newline + 1
        error = parser.feed(start === 0 && end === text.length ? text : text.slice(start, end))
        start = end
      }
      return error === undefined ? undefined : new AiError.MalformedOutput({
        description: `an SSE event exceeds ${error.cause.maxEventSize} characters`
      })
    })
  })

const DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024

/**
 * Decodes already-framed `data:` payloads, one JSON event per element (for instance the lines of a
 * line-JSON capture, or the `data` of SSE events framed elsewhere) into `StreamPart`s. Upstream errors pass
 * through unchanged.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeData = <E, R>(
  data: Stream.Stream<string, E, R>
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> => Stream.pipeThroughChannel(data, channel<E>())

/**
 * Decodes SSE text (UTF-8 already decoded, split anywhere) into `StreamPart`s (see `sseChannel`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSseText = <E, R>(
  text: Stream.Stream<string, E, R>
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> => Stream.pipeThroughChannel(text, sseChannel<E>())

/**
 * Decodes an SSE HTTP body (bytes, split anywhere, even inside a UTF-8 sequence) into `StreamPart`s.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSse = <E, R>(
  body: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> => decodeSseText(Stream.decodeText(body))
