/**
 * The streaming decoder: a Responses SSE body (`POST /v1/responses` with `stream: true`), or a recorded
 * capture of one, -> `StreamPart`s.
 *
 * ## Framing
 *
 * Three inputs, all decoded incrementally (constant memory in the length of the stream, bounded by the size
 * of one event):
 *
 * - **SSE** (`decodeSse`, `decodeSseText`, `sseChannel`): framed by `Framing.makeSseFramer`, one pass over each chunk.
 *   Lines end at LF, CRLF or a lone CR (also when a chunk ends between `\r` and `\n`); a leading BOM is
 *   dropped; `event:` + `data:` frames and data-only frames are read alike (the JSON `type` is
 *   authoritative: the `event:` name only names an event whose data is no JSON object with a `type`, in its
 *   `MalformedOutput`); `event: ping` is a keep-alive whatever its data (old sse-starlette servers send a
 *   timestamp), skipped with a debug log (since 0.2.0); multi-line `data:` fields are joined with `\n`;
 *   comments (`: OPENROUTER PROCESSING`), `id:` and `retry:` are ignored; a `[DONE]` payload is skipped.
 *   At the end of the input, an event whose lines all ended is dispatched even without its blank line; a
 *   last line cut off before its line ending is dropped (the stream was cut: see `TruncatedStream`).
 * - **line-JSON** (`decodeLines`, `decodeLinesText`, `linesChannel`): one JSON event per line, as in
 *   vercel/ai's `*.chunks.txt` recordings; blank lines are skipped, the last line needs no line ending.
 * - **either** (`decodeCapture`, `decodeCaptureText`, `captureChannel`): the format is chosen by the first
 *   line that is not blank (after a BOM), by the rule `Capture` uses: an SSE field (`event:`, `data:`, `id:`,
 *   `retry:`) or a comment (`:`) means SSE, anything else line-JSON (so text of neither format fails on its
 *   first line as malformed JSON).
 * - already-framed payloads (`decodeData`, `channel`): one JSON event per element.
 *
 * One event (an SSE event's data, or a line) larger than `maxEventSize` UTF-16 code units (default 16 MiB)
 * fails with `MalformedOutput` instead of growing memory. Errors of text input carry the 1-based `line`
 * where the offending event's data starts.
 *
 * ## What each event yields
 *
 * Every event of the `ResponseStreamEvent` catalogue of the OpenAI OpenAPI description is recognised; events
 * are picked by a `switch` on their `type`, and only the fields used are checked (added fields are fine).
 * A delta event written exactly as the delta event before it, but for its `delta` string, its
 * `sequence_number` and a trailing `obfuscation` string (which the decoder does not read), is read without
 * parsing the whole event as JSON (since 0.2.0); its elements, and the errors of an invalid one, are the same.
 *
 * | event | element |
 * |---|---|
 * | `response.created` | `ResponseStarted {responseId, model}`; every later element carries this `responseId` (also when a proxy rotates ids) |
 * | `response.in_progress`, `response.queued` | nothing (they start the response only when `response.created` was missing) |
 * | `response.output_item.added` | nothing: the output index starts being tracked (item id, status, phase, call id, name) |
 * | `response.output_text.delta` | delta `TextPart {text: delta}` of the event's `content_index` |
 * | `response.output_text.annotation.added` | delta `TextPart {text: "", annotations: [annotation]}` of the event's `content_index` (offsets as sent: into that content part's text) |
 * | `response.refusal.delta` | delta `RefusalPart {text: delta}` of the event's `content_index` |
 * | `response.reasoning_summary_text.delta` | delta `ReasoningPart {summary}` (see the summary convention) |
 * | `response.reasoning_text.delta` | delta `ReasoningPart {summary: [], text: delta}` |
 * | `response.function_call_arguments.delta` | delta `ToolCallPart {callId, name, arguments: delta}` (call id and name from the added item) |
 * | `response.custom_tool_call_input.delta` | delta `CustomToolCallPart {callId, name, input: delta}` (call id, name and namespace from the added item) |
 * | hosted-tool progress: `response.{web_search_call,file_search_call,code_interpreter_call,mcp_call,mcp_list_tools}.{in_progress,searching,interpreting,completed,failed}` | delta `UnknownPart {kind: item type, item: the event verbatim, attributes.status: the announced status}` |
 * | progress without an `output_index`, `response.compaction.*` and other progress events outside the catalogue | nothing; debug log, never fatal (the item itself arrives with `output_item.done` or the terminal snapshot) |
 * | tool input deltas: `response.code_interpreter_call_code.delta`, `response.mcp_call_arguments.delta`, `response.shell_call_command.{added,delta}`, `response.shell_call_output_content.delta`, `response.apply_patch_call_operation_diff.delta` | delta `UnknownPart {kind: item type, item: the event verbatim}` (the `delta` fields concatenate to the item's code / input / arguments) |
 * | `response.image_generation_call.{in_progress,generating,completed}` | delta `MediaPart {mediaType}` without content, with the status |
 * | `response.image_generation_call.partial_image` | delta `MediaPart {mediaType, data: partial_image_b64}`: a preview |
 * | `response.output_item.done` | the completing part or the complete part (below) |
 * | `response.completed`, `response.incomplete` | the parts the snapshot adds (see "The terminal snapshot"), then `ResponseFinished {status, finishReason, incompleteReason?, usage}`; incomplete -> `length` for `max_output_tokens`, `content_filter` for `content_filter`, `other` for any other reason (an open set: `max_messages` and newer values are kept as sent, never an error) |
 * | `response.failed` | the stream fails with `AiError.ResponseFailed` |
 * | `error` (flat `{code, message, param}` or nested `{error: {…}}`) | the stream fails with `AiError.StreamErrorEvent` |
 * | `*.done` snapshots, `content_part.*`, `reasoning_summary_part.*` | nothing: `response.output_item.done` brings their content again |
 * | `response.audio.*`, `response.audio.transcript.*` | nothing (they have no output index, so no part to update); debug log |
 * | any type outside the catalogue (`keepalive`, future ones) | nothing; `Effect.logDebug`, never fatal |
 *
 * Deltas carry the attributes of the added item (`itemId`, and `status`/`phase` as then known, the status
 * updated by hosted-tool progress).
 *
 * ## Delta, completing and complete parts (the contract with `MessageAggregator`)
 *
 * Every `PartUpdate` addresses the slot `(responseId, outputIndex)`, and, for a `message` item, the content part
 * `contentIndex` (the events' `content_index`; absent on the updates of content part 0): a message of several
 * content parts (`[output_text, refusal]`, two `output_text`) is one part per content part, as
 * `ResponsesOutput.decodeOutputItemParts` decodes its done item, and each content part is emptied, completed
 * or replaced on its own, the first update of a replacing snapshot being the one that replaces the item.
 *
 * 1. **Delta** — `partial: true`, holds only NEW content: `TextPart.text` / `annotations`,
 *    `RefusalPart.text`, `ToolCallPart.arguments`, `CustomToolCallPart.input`, `ReasoningPart.text`, or `ReasoningPart.summary` as in 2.
 *    No payload; `callId` / `name` of a tool call delta come from the added item. Partial `UnknownPart`s
 *    and `MediaPart`s are progress previews: each stands for the item until the next.
 * 2. **Summary deltas** — a delta of the reasoning summary part `summary_index = k` is a `ReasoningPart`
 *    whose `summary` has length `k + 1`: entries `0 … k-1` are `""`, entry `k` is the delta text. Appending is
 *    element-wise: `slot.summary[i] += part.summary[i]` for every `i` of the part, the slot's array growing
 *    as needed.
 * 3. **Completing part** — at `response.output_item.done` of an item that received deltas: `partial: false`,
 *    built from the done item (`ResponsesOutput.decodeOutputItemParts`: one per content part of a message) and EMPTIED of what the deltas delivered:
 *    `text` / `arguments` / reasoning `text` minus the delivered prefix (usually `""`); `summary` with one
 *    entry per summary part of the done item, each minus its delivered prefix (usually all `""`);
 *    `annotations` minus those `annotation.added` delivered. It brings the payload (`encrypted_content`,
 *    which usually arrives only here), the final attributes (`status: "completed"`…) and the final
 *    `callId` / `name`.
 * 4. **Complete part** — `partial: false`, the whole part, for items that had no text delta: hosted tools,
 *    media, reasoning without summary events, arguments given only in `.done`, text given only in
 *    `output_text.done`. It replaces whatever previews its slot held.
 * 5. **Replacing snapshot** — when the done item contradicts its deltas (it does not start with what they
 *    delivered, or is of another type, or a content part that received deltas is missing from it), a warning
 *    is logged and the WHOLE snapshot is sent with `partial: false, replace: true` (a message: one update per
 *    content part, in order): the snapshot wins, and the fold replaces the item instead of appending.
 *
 * 6. **Terminal snapshot** — slots are keyed by output index, never by item id (compatible servers rotate
 *    item ids between events); an event for an index no `output_item.added` announced starts the slot (debug
 *    log). At `response.completed` / `response.incomplete`, the snapshot's `response.output` is reconciled
 *    with what the stream delivered, before `ResponseFinished`. Each snapshot item is matched to an output
 *    index of the stream by item id, else by position when the item types agree, else to the next unmatched
 *    index of the same item type. An item the stream never announced is sent complete (at its snapshot
 *    position, or after the last index the stream used when that one is taken); an item left open (deltas,
 *    no `output_item.done`) gets its completing part from the snapshot, as in 3 and 5; an item completed
 *    without any content gets the snapshot's part whole with `replace: true`. Nothing already delivered is
 *    sent again, so OpenAI's streams, whose snapshot repeats the done items, get no extra part. A function
 *    call only in the snapshot makes the finish reason `tool_calls`.
 *
 * The fold (`MessageAggregator`) therefore gives the done items, and a UI that
 * concatenates the text it receives (honouring `replace`) shows every character exactly once.
 *
 * ## Errors
 *
 * Malformed JSON, or an event missing a field it needs, fails with `AiError.MalformedOutput` naming the
 * 0-based position of the payload among all payloads of the stream (`[DONE]` and `event: ping` count), the
 * event type when known (the JSON `type`, else, for SSE, the `event:` name the frame has), the line for text
 * input, and a bounded excerpt; so does a part event before the first
 * `response.created` (part events between two responses are skipped with a debug log). A stream that ends
 * while a response is open, or before any response started, fails with `AiError.TruncatedStream`
 * (retryable only in the second case: once a response began, its answer is not asked for again). Errors
 * always come after the elements of the events before them, so `MessageAggregator.aggregateSettled` keeps
 * the transcript that arrived.
 *
 * @since 0.1.0
 */
import type { StreamPart } from "@effect-responses/core"
import * as Framing from "@effect-responses/wire/Framing"
import type * as Channel from "effect/Channel"
import type * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"
import { type DecodeError as InternalDecodeError, Decoder, makeSseFramer } from "./internal/decoder.js"

/**
 * The errors of the decoder: `MalformedOutput` (bad JSON, missing fields, an event over the size bound),
 * `TruncatedStream` (no terminal event), `StreamErrorEvent` (an `error` event) or `ResponseFailed`.
 *
 * @since 0.1.0
 * @category models
 */
export type DecodeError = InternalDecodeError

/**
 * Options of the text decoders. `maxEventSize`: the largest event (SSE event data, or one line of
 * line-JSON) accepted, in UTF-16 code units; default 16 MiB.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  readonly maxEventSize?: number | undefined
}

/**
 * The default bound on one event: 16 MiB (UTF-16 code units).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_EVENT_SIZE = Framing.DEFAULT_MAX_EVENT_SIZE

/** The decoding loop shared by every entry point (`Framing.decodeChannel`) over the event state machine. */
const makeChannel = <E>(makeFramer: () => Framing.Framer) =>
  Framing.decodeChannel<StreamPart.StreamPart, DecodeError, E>(makeFramer, () => new Decoder())

/** The same from bytes, UTF-8 decoded in the same pass (`Framing.decodeBytesChannel`). */
const makeBytesChannel = <E>(makeFramer: () => Framing.Framer) =>
  Framing.decodeBytesChannel<StreamPart.StreamPart, DecodeError, E>(makeFramer, () => new Decoder())

const sseFramer = (options: DecodeOptions | undefined) => () =>
  makeSseFramer(options?.maxEventSize ?? DEFAULT_MAX_EVENT_SIZE)

const lineFramer = (options: DecodeOptions | undefined) => () =>
  Framing.makeLineFramer(options?.maxEventSize ?? DEFAULT_MAX_EVENT_SIZE)

const captureFramer = (options: DecodeOptions | undefined) => () => {
  const maxEventSize = options?.maxEventSize ?? DEFAULT_MAX_EVENT_SIZE
  return Framing.makeCaptureFramer(maxEventSize, { framer: () => makeSseFramer(maxEventSize) })
}

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
> => makeChannel<E>(Framing.makeDataFramer)

/**
 * The decoder as a channel from chunks of SSE text (split anywhere) to chunks of `StreamPart`s: framing by
 * `Framing.makeSseFramer` (one pass over each chunk; lines end at
 * LF, CRLF or CR), then the event state machine, in one synchronous pass per chunk. An event larger than
 * `maxEventSize` fails with `MalformedOutput`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const sseChannel = <E>(options?: DecodeOptions): Channel.Channel<
  Chunk.Chunk<StreamPart.StreamPart>,
  Chunk.Chunk<string>,
  E | DecodeError,
  E,
  unknown,
  unknown
> => makeChannel<E>(sseFramer(options))

/**
 * The decoder as a channel from chunks of line-JSON text (one JSON event per line, split anywhere) to
 * chunks of `StreamPart`s. A line longer than `maxEventSize` fails with `MalformedOutput`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const linesChannel = <E>(options?: DecodeOptions): Channel.Channel<
  Chunk.Chunk<StreamPart.StreamPart>,
  Chunk.Chunk<string>,
  E | DecodeError,
  E,
  unknown,
  unknown
> => makeChannel<E>(lineFramer(options))

/**
 * The decoder as a channel from chunks of capture text, raw SSE or line-JSON, told apart by the first line
 * that is not blank: an SSE field or comment means SSE, anything else line-JSON.
 *
 * @since 0.1.0
 * @category decoding
 */
export const captureChannel = <E>(options?: DecodeOptions): Channel.Channel<
  Chunk.Chunk<StreamPart.StreamPart>,
  Chunk.Chunk<string>,
  E | DecodeError,
  E,
  unknown,
  unknown
> => makeChannel<E>(captureFramer(options))

/**
 * Decodes already-framed `data:` payloads, one JSON event per element (for instance the `data` of SSE
 * events framed elsewhere) into `StreamPart`s. Upstream errors pass through unchanged.
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
  text: Stream.Stream<string, E, R>,
  options?: DecodeOptions
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> => Stream.pipeThroughChannel(text, sseChannel<E>(options))

/**
 * Decodes an SSE HTTP body (bytes, split anywhere, even inside a UTF-8 sequence) into `StreamPart`s: UTF-8
 * decoding, framing and the event state machine in one pass per chunk of bytes.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSse = <E, R>(
  body: Stream.Stream<Uint8Array, E, R>,
  options?: DecodeOptions
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> =>
  Stream.pipeThroughChannel(body, makeBytesChannel<E>(sseFramer(options)))

/**
 * Decodes line-JSON text (one JSON event per line, split anywhere) into `StreamPart`s (see `linesChannel`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeLinesText = <E, R>(
  text: Stream.Stream<string, E, R>,
  options?: DecodeOptions
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> =>
  Stream.pipeThroughChannel(text, linesChannel<E>(options))

/**
 * Decodes line-JSON bytes (UTF-8, split anywhere) into `StreamPart`s.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeLines = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  options?: DecodeOptions
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> =>
  Stream.pipeThroughChannel(bytes, makeBytesChannel<E>(lineFramer(options)))

/**
 * Decodes capture text, raw SSE or line-JSON (see `captureChannel`), into `StreamPart`s.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeCaptureText = <E, R>(
  text: Stream.Stream<string, E, R>,
  options?: DecodeOptions
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> =>
  Stream.pipeThroughChannel(text, captureChannel<E>(options))

/**
 * Decodes the bytes of a capture, raw SSE or line-JSON (UTF-8, split anywhere), into `StreamPart`s: the
 * entry point for files of any size, read as a byte stream.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeCapture = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  options?: DecodeOptions
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> =>
  Stream.pipeThroughChannel(bytes, makeBytesChannel<E>(captureFramer(options)))
