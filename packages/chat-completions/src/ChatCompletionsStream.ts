/**
 * The streaming decoder: a Chat Completions SSE body (`POST /v1/chat/completions` with `stream: true`) ->
 * `StreamPart`s, the same elements the Responses decoder yields, so that `MessageAggregator`, the tool
 * loop and every consumer work unchanged.
 *
 * SSE framing comes from `Framing.makeSseFramer` of `@effect-responses/wire`; every
 * `data:` payload is one `chat.completion.chunk` (or `[DONE]`, or an error object). Payloads are decoded one
 * chunk of the stream at a time, each by direct field reads (no Schema union trials); only the fields used
 * are checked. A chunk that carries one text or reasoning delta, or one piece of the arguments of a tool call
 * already started (only the call's `index` and `function.arguments`), and is written exactly as an earlier
 * such chunk of the same response was, but for that string and a trailing string field the decoder does not
 * read (OpenAI's `obfuscation`), is read without parsing the whole chunk as JSON (since 0.2.0); its
 * elements, and the errors of an invalid one, are the same.
 *
 * ## What each chunk yields
 *
 * | chunk | element |
 * |---|---|
 * | the first chunk with an `id` or a choice | `ResponseStarted {responseId: id, model}`; every later element carries this id |
 * | a chunk with empty `id` and `choices: []` before that (Azure's `prompt_filter_results`) | nothing |
 * | `delta.reasoning_content` (or `delta.reasoning`), non-empty | delta `ReasoningPart {summary: [], text}` |
 * | `delta.content`, non-empty | delta `TextPart {text}` |
 * | `delta.content` as a list of parts (Mistral's Magistral) | its `thinking` parts (their `text` parts joined, or a string `thinking`): delta `ReasoningPart {summary: [], text}`; its `text` parts: delta `TextPart {text}`; a part of another type: nothing, and a warning naming the type (once per type and stream) |
 * | `delta.refusal`, non-empty | delta `RefusalPart {text}` |
 * | `delta.tool_calls[i]` | delta `ToolCallPart {callId, name, arguments: the fragment}`: one per fragment with arguments, one (possibly with `""` arguments) when the call first appears, and one (`""` arguments) per fragment that adds to its name |
 * | `delta.tool_calls[i].extra_content` (Gemini: the thought signature) | its `payload` (`ChatCompletionsOutput.extraContentOf`) on that fragment's delta (one is sent even without arguments) and on the call's completing part |
 * | `delta.annotations` | nothing yet: they travel on the text's completing part |
 * | top-level `citations` (URLs) or `search_results` (`{title, url}`), Perplexity's sources (perplexityai/perplexity-node `StreamChunk`) | nothing yet: the last non-empty list becomes `url_citation` annotations on the text's completing part (`ChatCompletionsOutput.sourceCitation`): one at each `[n]` marker of the text citing source `n` (1-based; `startIndex`/`endIndex` the marker's, found as the text streams, also across deltas), in the text's order, then one without indices for each source no marker cites |
 * | `finish_reason` of choice 0 | nothing yet: kept (the first one wins); `""` is no finish reason (old Ollama sent `"finish_reason": ""` on every chunk, ollama/ollama#4357) |
 * | `usage` (the `choices: []` chunk of `stream_options.include_usage`, or any chunk carrying it; without it, `x_groq.usage`, where Groq's streams of 2024 carried it: vercel/ai#1651) | nothing yet: kept, the last one wins |
 * | a chunk after the finish reason, its `id` the response's or empty (OpenRouter's usage chunk with a `delta: {"content": ""}` choice, LiteLLM's with `delta: {}`, Azure's asynchronous content filter results with `id: ""`) | the same response's: its usage kept, its delta read as above (an empty one yields nothing) |
 * | `[DONE]`, the end of the input after a finish reason, or a choice after the finish reason under another non-empty `id` | the completing part of every output index, in index order, then `ResponseFinished {status, finishReason, incompleteReason?, usage}` |
 * | `{"error": {…}}`, also beside `choices: []` or a `finish_reason: "error"` choice inside an HTTP 200 stream (OpenRouter) | the stream fails with `AiError.StreamErrorEvent` carrying the provider's `code` (numbers as text) and `message`, after the parts of the chunks before it (and of the same chunk's delta) |
 * | a `finish_reason: "error"` choice with an `error` object inside it (`choices[0].error`, OpenRouter) | the same, with that object's `code` and `message` |
 * | a `finish_reason: "error"` choice without an `error` object | the stream fails with `AiError.StreamErrorEvent` saying so (no code), after the parts before it: a failed answer, not a finished one |
 * | a chunk with choices only for `index` > 0 (`n` > 1) | nothing (debug log once): only choice 0 is decoded |
 * | an SSE event named `ping` (`event: ping`, its data a timestamp: old sse-starlette servers' keep-alive) | nothing (debug log) |
 * | an SSE event named `error` with data `{"message", "code"}`, `{"error": {…}}` or a bare text | the stream fails with `AiError.StreamErrorEvent` carrying that message and code, after the parts before it (not `TruncatedStream`) |
 * | a line `error: {json}`, a field the SSE rules do not know (llama.cpp's server before its PR #16109, 2025-09: `error: {"code":400,"message":"…","type":"invalid_request_error"}` then `data: [DONE]`) | the same failure, with that object's `message` and `code`; any other unknown field is ignored, as the rules say |
 *
 * ## Output indices
 *
 * Chat Completions has no output items, so output indices are assigned in order of first appearance:
 * the reasoning, the text, the refusal, and each tool call (keyed by its `index`) get the next index the
 * first time a non-empty delta of theirs (or, for a tool call, any fragment) arrives. Empty strings
 * (`"content": ""`, `"refusal": null`, `"reasoning_content": ""` in first chunks) open no index.
 *
 * ## Tool calls
 *
 * A tool call's `id` and `function.name` come in its first fragment, the `arguments` in pieces after it
 * (OpenAI), or all three in one chunk (xAI, many open-model servers). Some servers split the name across
 * fragments (`edit_ex`, then `isting_file`), others repeat it whole in every fragment: fragments are
 * joined, a repeated name is kept once, and a fragment that starts with the name known so far (a growing
 * name) replaces it. Deltas carry the call id and name known so far; the completing part the final name. A
 * fragment that adds to the name gives a delta even without arguments (since 0.2.0), so that a consumer
 * waiting for the whole name (the gateway writes a call once its name is whole) has it when it grows.
 * A call without an `id` gets a synthetic one (`ChatCompletionsOutput.syntheticCallId`: `call_` and 24
 * random hex digits, new for every call, so that no two responses share one) until a real one arrives; a
 * fragment with a new `id` under an index already used starts a new call (servers that number every call 0).
 * A fragment without `index` is keyed by its place in `tool_calls`; one with neither `id` nor `index` that
 * brings a `function.name` while the call there is named and its arguments so far are one whole JSON value
 * starts a new call too (servers that write each whole call in a chunk of its own, numbering none: before
 * 0.2.0 the calls were glued into one, its arguments `{"command":"ls"}{"command":"pwd"}`); a name in pieces
 * or repeated before the arguments are whole stays the same call's.
 *
 * ## Delta and completing parts (the contract with `MessageAggregator`)
 *
 * Deltas (`partial: true`) hold only new text / arguments, with `attributes.status: "in_progress"`. At the
 * end of the response every output index gets a completing part (`partial: false`) emptied of everything the
 * deltas delivered, which here is all of it: `""` text / arguments, the final `callId` and `name`, the
 * text's annotations, and `attributes.status` (`completed`, or `incomplete` for `length` /
 * `content_filter`). Folding the stream therefore gives what `ChatCompletionsOutput.fromCompletion` gives
 * for the same answer.
 *
 * ## Finish
 *
 * The finish reason maps as `ChatCompletionsOutput.finishReasonFromWire` says (a `stop` with tool calls
 * becomes `tool_calls`); `status` and `incompleteReason` (`max_output_tokens`, `content_filter`) as
 * `ChatCompletionsOutput.statusOf` / `incompleteReasonOf` say. The response ends at `[DONE]` (or the end of
 * the input), not at the finish reason: servers send chunks of the same answer after it (usage, content
 * filter results). A choice arriving after the finish reason starts the next response (captures that hold
 * several) only when its chunk's `id` is non-empty and not the response's (its first non-empty chunk `id`);
 * before 0.2.0 any choice did, which cut OpenRouter's and LiteLLM's usage chunks off into a second, empty
 * response. `[DONE]` without any finish reason finishes with
 * `other` and a warning.
 *
 * ## Errors
 *
 * Malformed JSON, a chunk that is not an object, a `choices` that is neither a list nor `null`, a
 * `delta.content` of choice 0 that is neither a string, a list of parts nor `null` (`42`, dropped silently
 * before), or a tool call fragment with non-string arguments fails with `AiError.MalformedOutput` naming the
 * field (`choices[0].delta.content is a number, …`), the 0-based position of the payload among all payloads
 * of the stream (`[DONE]` and blank payloads count) and an excerpt. A tool call still without a name when the response
 * ends (no `function.name` in any of its fragments: OpenAI always names a call, and a whole completion's
 * call without one is refused too) fails so as well, naming the chunk that opened the call, instead of
 * completing a call of the tool `""`. An input that ends with no chunk at all, or without a
 * finish reason and without `[DONE]` (a body cut short), fails with `AiError.TruncatedStream` (retryable
 * only in the first case: once a chunk arrived, the answer has begun and is not asked for again). Errors
 * always come after the elements of the chunks before them.
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
 * The errors of the decoder: malformed output (bad JSON), a cut-short body (`TruncatedStream`) or an
 * error chunk (`StreamErrorEvent`).
 *
 * @since 0.1.0
 * @category models
 */
export type DecodeError = InternalDecodeError

/** The decoding loop shared by both entry points (`Framing.decodeChannel`) over the chunk state machine. */
const makeChannel = <E>(makeFramer: () => Framing.Framer) =>
  Framing.decodeChannel<StreamPart.StreamPart, DecodeError, E>(makeFramer, () => new Decoder())

/**
 * The decoder as a channel from chunks of `data:` payloads (one chunk JSON per string, e.g. the lines of
 * a line-JSON capture) to chunks of `StreamPart`s. Each run of the channel has its own state.
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
 * `Framing.makeSseFramer` of `@effect-responses/wire` (one pass over each chunk; lines end at
 * LF, CRLF, even split between two pieces, or CR; a leading BOM is dropped), then the chunk state
 * machine, in one synchronous pass per chunk. An event larger than `maxEventSize` UTF-16 code units
 * (default 16 MiB) fails with `MalformedOutput` naming its line; a malformed chunk's `MalformedOutput` names
 * its line too. SSE comments, `id:` and `retry:` fields are ignored; of the `event:` field, only the names
 * `ping` (skipped) and `error` (a failure) are read, and of the fields the SSE rules do not know only a line
 * `error: {json}` (a failure), as the module's table says. At the end of the body, an
 * event whose lines all ended is decoded even without its closing blank line.
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
> => makeChannel<E>(() => makeSseFramer(options?.maxEventSize ?? Framing.DEFAULT_MAX_EVENT_SIZE))

/**
 * The decoder as a channel from chunks of capture text, raw SSE or line-JSON (one chunk JSON per line, as in
 * vercel/ai's `*.chunks.txt` recordings), told apart by the first line that is not blank: an SSE field or
 * comment means SSE, anything else line-JSON (`Framing.makeCaptureFramer` of `@effect-responses/wire`).
 * Raw SSE is framed as a live stream is (`sseChannel`): `event: ping` skipped, `event: error` and
 * llama.cpp's `error: {json}` lines failing with `StreamErrorEvent`. Errors name the line of the input.
 *
 * @since 0.1.0
 * @category decoding
 */
export const captureChannel = <E>(options?: {
  readonly maxEventSize?: number | undefined
}): Channel.Channel<
  Chunk.Chunk<StreamPart.StreamPart>,
  Chunk.Chunk<string>,
  E | DecodeError,
  E,
  unknown,
  unknown
> =>
  makeChannel<E>(() => {
    const maxEventSize = options?.maxEventSize ?? Framing.DEFAULT_MAX_EVENT_SIZE
    return Framing.makeCaptureFramer(maxEventSize, { framer: () => makeSseFramer(maxEventSize), fields: ["error"] })
  })

/**
 * Decodes capture text, raw SSE or line-JSON (see `captureChannel`), into `StreamPart`s.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeCaptureText = <E, R>(
  text: Stream.Stream<string, E, R>,
  options?: { readonly maxEventSize?: number | undefined }
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> =>
  Stream.pipeThroughChannel(text, captureChannel<E>(options))

/**
 * Decodes already-framed `data:` payloads, one chunk JSON per element, into `StreamPart`s. Upstream errors
 * pass through unchanged.
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
 * Decodes an SSE HTTP body (bytes, split anywhere, even inside a UTF-8 sequence) into `StreamPart`s, in
 * one stream stage: the UTF-8 decoding is done in the same pass as the framing and the decoding
 * (`Framing.decodeBytesChannel`, as `ResponsesStream.decodeSse` does; a leading BOM is dropped). A
 * `Stream.decodeText` stage in front took 21 % of the gateway's profile (packages/bench/RESULTS.md,
 * 2026-12-02).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSse = <E, R>(
  body: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<StreamPart.StreamPart, E | DecodeError, R> =>
  Stream.pipeThroughChannel(
    body,
    Framing.decodeBytesChannel<StreamPart.StreamPart, DecodeError, E>(
      () => makeSseFramer(Framing.DEFAULT_MAX_EVENT_SIZE),
      () => new Decoder()
    )
  )
