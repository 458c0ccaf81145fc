/**
 * The encoding side of the Responses protocol: `StreamPart`s of any `LanguageModel` -> the official
 * Responses streaming lifecycle (the API reference's "Streaming events" of responses), and the Response object it ends with.
 *
 * ```
 * response.created, response.in_progress,
 * per output item, in output order, each closed before the next opens:
 *   response.output_item.added
 *   text:      content_part.added, output_text.delta*, output_text.done, content_part.done
 *   refusal:   content_part.added, refusal.delta*, refusal.done, content_part.done
 *   reasoning: per summary part: reasoning_summary_part.added, reasoning_summary_text.delta*,
 *              reasoning_summary_text.done, reasoning_summary_part.done
 *   function:  function_call_arguments.delta*, function_call_arguments.done (with `name`)
 *   custom:    custom_tool_call_input.delta*, custom_tool_call_input.done
 *   response.output_item.done
 * then exactly one of response.completed / response.incomplete / error + response.failed
 * ```
 *
 * Every event has `type` and `sequence_number` (from 0, rising by one); text events carry `logprobs: []`.
 * Output indices are assigned in the order items are opened, without gaps.
 *
 * - **Ordering.** The upstream may interleave parts of several output indices (parallel tool calls of a
 *   Chat Completions stream do). One item is written at a time: parts of other indices are buffered and
 *   written, whole so far, when their turn comes: in the order the upstream began them (the first part of
 *   each), as the Responses API writes items in the order the model produced them. An item closes at its
 *   completing part (`partial: false`), at the end of the response, or, for text, refusal and reasoning
 *   (which Chat Completions writes one after the other), as soon as another item receives a delta, so that
 *   the next one streams live; one waiting unwritten behind another item (a Chat Completions tool call stays
 *   open to the end of the stream, since more argument chunks may come) is over then too. Content that still
 *   arrives for an item closed or over early opens a new item, after every item begun before it (a tool
 *   call, reasoning, text, reasoning: call, reasoning, message, reasoning): nothing is dropped or merged
 *   across another item.
 * - **Content parts.** A `LanguageModel` upstream's message of several content parts (`PartUpdate.contentIndex`,
 *   a `ResponsesLanguageModel` upstream's `output_text` beside a `refusal`) is written as one message item
 *   per content part, in order. A later content part's deltas do not close the earlier one: the upstream's
 *   `response.output_item.done` completes (and may replace) all of them at once, so the later one's deltas
 *   are kept and written when the earlier one has closed. Streaming the later part live and keeping the
 *   replacing snapshot's guarantee (below: the `.done` events carry the final content, and accumulating the
 *   events gives the terminal response) cannot both hold: writing the later part live means first closing
 *   the earlier part's item (an item's `response.output_item.done` before the next item's events, or, in one
 *   item of several parts, `content_part.done` before the next part's `content_part.added`), whose `.done`
 *   events then carry its text before the upstream's `response.output_item.done`, the only place a
 *   contradiction of it reaches the gateway (`ResponsesStream` reads an item's final content there, not from
 *   `content_part.done`), arrives; an `output_item.done` of the openai SDK's accumulator sets the item as it
 *   is, so nothing after it can correct the text. The guarantee is kept: the later part is written, whole
 *   so far and then live, once the upstream's done item has come. The way to both would be `ResponsesStream`
 *   completing (or replacing) a content part at the upstream's own `response.content_part.done`, which
 *   comes before the next part is added and in the recorded contradiction
 *   (`vai-azure-gpt54-multi-summary-encrypted.chunks.txt`) already carries the final text; a done item
 *   contradicting an earlier `content_part.done` would still not be honoured. At a failure, a content part
 *   whose next one began is finished (see "Failure mid-item").
 * - **Replacing snapshots.** A part with `replace: true` (the upstream's final snapshot of an item, its
 *   `response.output_item.done`, contradicted its deltas: `StreamPart.PartUpdate`) is honoured as
 *   `MessageAggregator` folds it: the snapshot wins. Deltas already written cannot be taken back, so the
 *   stream is made for a client that accumulates it (the `openai` SDK's `accumulateResponse`: deltas
 *   appended, then the `.done` events' text, content part and item set over them) to end with the
 *   snapshot, and never to hold a text twice, as the API's own `.done` events carry an item's final text:
 *   when the snapshot extends what was written, the rest is written as deltas; otherwise nothing more is
 *   written as deltas, and the item's `.done` events (`output_text.done`, `refusal.done`,
 *   `content_part.done`, `function_call_arguments.done`, `reasoning_summary_text.done`, and
 *   `response.output_item.done`) carry the snapshot's content, as does the terminal response's `output`. A
 *   summary part closed before the snapshot came keeps its `.done` events; `response.output_item.done`
 *   holds the snapshot's summary. A snapshot whose content part is a refusal where text was written (or
 *   the reverse) ends the item without the text `.done` event, which would contradict the content part the
 *   client holds (the `openai` SDK throws on it): `content_part.done` and the item bring the new part. A
 *   snapshot of content part 0 drops the message's later content parts not written yet (those it has come
 *   after it). Before, the snapshot's text was appended to the text written, or written as one more item:
 *   the client held both.
 * - **Reasoning.** Summary texts become summary parts; raw reasoning text (`ReasoningPart.text`, e.g. a
 *   Chat Completions `reasoning_content`) becomes summary part 0. `encrypted_content` is kept when the
 *   upstream sent one. Otherwise, when the request's `include` has `reasoning.encrypted_content`, an item
 *   with raw reasoning text gets `encrypted_content` = `effect-responses.reasoning.v1.` + the base64url (no
 *   padding) of the text's UTF-8, in `response.output_item.done` and the terminal response alike: clients
 *   that keep no state send reasoning back only with an `encrypted_content` (the AI SDK with `store:
 *   false`, `ResponsesRequest`), and `ResponsesRequestDecoder` reads the text out of it again, so that a
 *   backend that wants its reasoning back (`reasoning_content`, DeepSeek) gets it on the next turn.
 *   Nothing is encrypted: the text is the one the summary shows.
 * - **Call ids.** A call whose part has a Chat Completions `extra_content` payload (Gemini 3's thought
 *   signature, which Gemini refuses the next turn without) gets the call id `<upstream id>__extra_content__<
 *   base64url of the extra_content JSON>`: the gateway keeps no state, and the call id is what every client
 *   sends back with the call and its output (`ResponsesRequestDecoder` splits it again). The payload comes with
 *   the call's first delta, so the id is the same from `response.output_item.added` on.
 * - **Names in pieces.** A call is not written before its name is whole: a Chat Completions server may
 *   stream `function.name` in pieces (`get_`, then `weather`; `crm__`, then `lookup`) before the arguments,
 *   and `response.output_item.added` carries the whole name (clients dispatch on it; the `openai` SDK's
 *   accumulator keeps it, so its result would differ from `response.completed`). The call's
 *   `response.output_item.added` waits until its first arguments, a part of another item (another tool
 *   call's index), or its completing part (the end of the choice); before 0.2.0 it carried the first piece.
 * - **Empty arguments.** A function call whose upstream sent no arguments (`""`), or JSON whitespace alone
 *   (`"  "`, `"\n"`: spaces, tabs, line feeds, carriage returns, in any number of deltas), gets `"{}"` (one
 *   `function_call_arguments.delta` and the `.done`), which clients parse as JSON: the official SDK's
 *   `finalResponse()` parses a strict tool's arguments (`JSON.parse`), which throws on `""` and on
 *   whitespace alike. Whitespace is held back while nothing else came, so the deltas add up to the `.done`
 *   arguments and the item (a replacing snapshot of whitespace alone, after other arguments were written:
 *   the `.done` events carry `"{}"`); arguments with whitespace around JSON are kept as they came. The API
 *   writes no such arguments; `"{}"` is what a call without arguments is everywhere else (`ChatCompletionsRequest`
 *   sends `""` arguments back upstream as `"{}"`).
 * - **Custom tools.** A call of a function that stands for a custom tool
 *   (`ResponsesRequestDecoder.DecodedRequest.customTools`, presented upstream with one string parameter
 *   `input`) is written as a `custom_tool_call` item (`ctc_…`) with its `input`: the `input` string is
 *   decoded from the arguments' JSON as they stream and written as `response.custom_tool_call_input.delta`
 *   events, then `response.custom_tool_call_input.done` with the whole input (an upstream that wrote the
 *   input bare, not as JSON, gets it whole at the end). A `CustomToolCallPart` of a `LanguageModel` upstream
 *   is written the same way (`ctc_…`, its `namespace` kept when it names one): its `input` is appended, as
 *   `MessageAggregator` folds it (a delta brings new input, and so does the completing part after deltas:
 *   the rest, usually `""`; a complete part without deltas brings it all), each part's input a
 *   `response.custom_tool_call_input.delta`.
 * - **apply_patch.** A call of the function that stands for the client-run `apply_patch` tool
 *   (`ResponsesRequestDecoder.DecodedRequest.applyPatch`) is written as an `apply_patch_call` item (`apc_…`)
 *   whose `operation` is the call's arguments (`{type, path, diff}`), whole when the call is complete
 *   (`response.output_item.added` and `.done`, no deltas); arguments that are no such operation leave it a
 *   function call.
 * - **shell.** A call of the function that stands for the client-run `shell` tool
 *   (`ResponsesRequestDecoder.DecodedRequest.shell`) is written as a `shell_call` item (`sh_…`) whose
 *   `action` is the call's arguments (`{commands, timeout_ms, max_output_length}`, the limits `null` when
 *   absent), when the call is complete, as the API streams one (`vai-openai-shell-call.chunks.txt`):
 *   `response.output_item.added` with no commands, then per command `response.shell_call_command.added`,
 *   `.delta` and `.done`, then `response.output_item.done`; arguments that are no such action leave it a
 *   function call.
 * - **local_shell.** A call of the function that stands for the client-run `local_shell` tool
 *   (`ResponsesRequestDecoder.DecodedRequest.localShell`) is written as a `local_shell_call` item (`lsh_…`)
 *   whose `action` is the call's arguments as an exec action (`{type: "exec", command, timeout_ms,
 *   working_directory, env, user}`, `null` or `{}` for what the call left out; API reference,
 *   `LocalShellToolCall`), when the call is complete: `response.output_item.added` (status `in_progress`)
 *   and `.done`, both with the whole action, since the API defines no events of its own for it;
 *   arguments that are no such action leave it a function call.
 * - **tool_search.** When the request declares a client-run `tool_search` tool, a call of the function
 *   presenting it (`ResponsesRequestDecoder.DecodedRequest.toolSearch`) is written as a `tool_search_call`
 *   item (`tsc_…`, `execution: "client"`) whose `arguments` are the call's, when the call is complete:
 *   `response.output_item.added` with `arguments` `{}`, then `.done`, as the API streams one
 *   (`vai-openai-tool-search.chunks.txt`); arguments that are no JSON object leave it a function call.
 * - **Deferred tools.** A call of a tool declared with `defer_loading` that no search loaded
 *   (`ResponsesRequestDecoder.DecodedRequest.deferredTools`) comes after a search loading it, once per tool
 *   and response, written as the API writes its hosted search (`vai-openai-tool-search.chunks.txt`): a
 *   `tool_search_call` (`tsc_…`, `arguments: {paths: [path]}`) and a `tool_search_output` (`tso_…`,
 *   `tools`: the tool as the request declared it), both `execution: "server"` and `call_id: null`, each
 *   `response.output_item.added` then `.done`. A client that fails a call of a deferred tool not loaded
 *   (the Agents SDK) takes the call; a call whose name arrives in pieces waits until its name is whole.
 * - **Namespaces.** A function or custom tool call whose name is a flattened namespace tool
 *   (`ResponsesRequestDecoder.DecodedRequest.namespacedTools`: the flattened `crm__lookup`, the dotted
 *   `crm.lookup`, or an unambiguous bare `lookup`) is written with its `namespace` and name. The call of a
 *   top-level tool a search loaded (a search of the response, or a `tool_search_output` of the input:
 *   `DecodedRequest.searchedTools`) is written, as the API writes it (`vai-openai-tool-search.chunks.txt`),
 *   with the tool's own name as its `namespace`, after `name`.
 * - **Renamed tools.** A call of a top-level tool whose name the upstream was offered renamed (too long, or
 *   with characters function names cannot hold: `ResponsesRequestDecoder.upstreamName`,
 *   `DecodedRequest.renamedTools`) is written with the name the client declared.
 * - **Terminal event.** `ResponseFinished` with status `completed` -> `response.completed`; status
 *   `incomplete` or finish reason `length` / `content_filter` -> `response.incomplete` with
 *   `incomplete_details.reason` (`max_output_tokens` / `content_filter`), open items closed as
 *   `incomplete`; `fail` -> an `error` event, then `response.failed` with `error: {code, message}`. The terminal response carries
 *   the full `output` and `usage` (`input_tokens_details.cached_tokens`,
 *   `output_tokens_details.reasoning_tokens`).
 * - **Error event.** A failed response's `response.failed` comes right after an `error` event, as OpenAI
 *   sends them (`vai-openai-error-event-response-failed.chunks.txt`): `{type: "error", sequence_number,
 *   code, message, param: null, error: {type, code, message, param: null}}`, the API reference's
 *   `ResponseErrorEvent` members (`code`, `message`, `param`) and the recording's nested `error` (its
 *   `type` is the code, as in the recording). Clients stop on it: the `openai` SDK's stream throws
 *   `APIError` for an event with an `error` member, so `@openai/agents` fails the run; without it the
 *   stream just ended, `finalResponse()` gave the failed response, and the Agents SDK asked again until
 *   its max turns.
 * - **Failure mid-item.** At `response.failed` (an upstream that broke off, stalled or sent an error) an
 *   item the upstream never completed gets no `.done` event and no `response.output_item.done`, and is left
 *   out of the failed response's `output`: what arrived of it was written as deltas, nothing more. Clients
 *   act on those events (the AI SDK emits a tool call at `output_item.done`, the `openai` SDK calls its
 *   `function_call_arguments.done` listeners, Codex runs a call at `output_item.done`) and the Agents SDK
 *   runs the calls of a failed response's `output`: a call cut off (`{"city":"Pa`) must reach none of them.
 *   Text, refusal and reasoning are treated alike, so that `output` holds only what was finished (the API
 *   reference's `response.failed` shape allows any `output`; OpenAI's own recorded failure has `[]`).
 *   Items closed before the failure (text followed by a call) stay in `output` as written. So does a
 *   message's content part whose next content part began (a `ResponsesLanguageModel` upstream, whose
 *   lifecycle completes a content part before it adds the next, the API reference's
 *   `response.content_part.done` then `response.content_part.added`): it was waiting for the upstream's
 *   `response.output_item.done` (see "Content parts"), and is closed at the failure, `completed`, its text
 *   what its deltas gave; the next content part is then written, what arrived of it as deltas, and left open
 *   (before, the first was left out of `output` and the next one's deltas were never written). An item the
 *   upstream completed that waited behind an unfinished one (parts of another index are written in turn, and
 *   a function call whose name may still grow into a custom tool's waits unwritten) is written whole at the
 *   failure, after the unfinished one's deltas, at the next output index, and is in `output`: the one left
 *   open is the only item that gets no `.done` (the `openai` SDK's accumulator indexes items by the order
 *   they were added, which stays gapless).
 * - **No usage.** When the upstream reported no usage (its `ResponseFinished.usage` is all zeros, which is
 *   what a decoder gives when none came, e.g. a Chat Completions stream without its usage chunk), `usage`
 *   stays `null` rather than claiming zero tokens. The API reference does not require `usage` in the
 *   Response object (the OpenAPI description's `Response` lists it outside `required`), and
 *   OpenAI itself writes `usage: null` while none is known (`response.created`, `response.in_progress` and
 *   `response.queued` in the recorded Responses streams, e.g. `pai-gpt4o-background-queued-stream.sse`), so `null` is the value clients
 *   already meet (the `openai` SDK reads it as `usage?: ResponseUsage`).
 *
 * The encoder is a small mutable state machine, used by one fiber at a time; events are plain JSON objects
 * (this project produces them, so no decoding schema is involved). This module holds the response's own
 * events (created, in progress, the terminal one); which item is written when lives in
 * `internal/lifecycle/ordering`, the events of one item in `internal/lifecycle/itemEvents`, and the JSON
 * of items in `internal/lifecycle/items`. Source: the OpenAI API reference, "Streaming events" of the
 * Responses API.
 *
 * @since 0.1.0
 */
import { findJsonText, type JsonText } from "@effect-responses/wire/Cooperative"
import type { ModelResponse, StreamPart } from "@effect-responses/core"
import * as ItemEvents from "./internal/lifecycle/itemEvents.js"
import { reported, usageToWire } from "./internal/lifecycle/items.js"
import * as Ordering from "./internal/lifecycle/ordering.js"
import { TextDelta } from "./internal/lifecycle/textDelta.js"
import type * as ResponsesRequestDecoder from "./ResponsesRequestDecoder.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * One streaming event: a JSON object with `type` and `sequence_number`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Event {
  readonly type: string
  readonly sequence_number: number
  readonly [key: string]: unknown
}

/**
 * The Response object (JSON), as `POST /v1/responses` answers it and the lifecycle events carry it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResponseObject {
  readonly id: string
  readonly object: "response"
  readonly created_at: number
  readonly status: string
  readonly model: string
  readonly output: ReadonlyArray<unknown>
  readonly usage: unknown
  readonly [key: string]: unknown
}

/**
 * The error of a failed response (`response.failed`, `response.error`): OpenAI's `code` (e.g.
 * `server_error`, `rate_limit_exceeded`) and a human message.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResponseError {
  readonly code: string
  readonly message: string
}

/**
 * What the encoder needs to know about the response: its `responseId` (`resp_…`), `createdAt` (Unix
 * seconds), the `model` it reports (the upstream's, else the requested one), and the decoded request (for
 * the echoed parameters, the namespace map, the tools whose calls are written as their own items, and
 * `options.include`: whether reasoning text goes back in `encrypted_content`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly responseId: string
  readonly createdAt: number
  readonly model: string
  readonly request:
    & Pick<ResponsesRequestDecoder.DecodedRequest, "echo" | "namespacedTools">
    & Partial<
      Pick<
        ResponsesRequestDecoder.DecodedRequest,
        | "customTools"
        | "applyPatch"
        | "shell"
        | "localShell"
        | "toolSearch"
        | "deferredTools"
        | "searchedTools"
        | "renamedTools"
        | "options"
      >
    >
}

/**
 * A new id with the given prefix (`resp`, `msg`, `rs`, `fc`): the prefix, `_`, and 32 hex digits.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeId = (prefix: string): string => `${prefix}_${globalThis.crypto.randomUUID().replaceAll("-", "")}`

// ---------------------------------------------------------------------------------------------------------
// the encoder
// ---------------------------------------------------------------------------------------------------------

/**
 * The lifecycle encoder of one response. Every method appends the events it produces to `out`.
 *
 * - `start`: `response.created` and `response.in_progress`; `model` replaces the model of the options
 *   when given (the upstream's `ResponseStarted.model`).
 * - `push`: one upstream element (`ResponseStarted` is ignored after `start`).
 * - `fail`: an `error` event, then `response.failed` (nothing once a terminal event was written).
 * - `end`: the upstream ended; writes `response.failed` (`server_error`) when it ended without
 *   `ResponseFinished`.
 * - `response`: the Response object as it stands (the final one after the terminal event).
 * - `terminated`: whether the terminal event was written.
 *
 * @since 0.1.0
 * @category models
 */
export interface Encoder {
  readonly start: (out: Array<Event>, model?: string) => void
  readonly push: (part: StreamPart.StreamPart, out: Array<Event>) => void
  readonly fail: (error: ResponseError, out: Array<Event>) => void
  readonly end: (out: Array<Event>) => void
  readonly response: () => ResponseObject
  readonly terminated: () => boolean
}

/**
 * A new encoder for one response.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Encoder => {
  let model = options.model
  let status = "in_progress"
  let terminated = false
  let usage: unknown = null
  let incompleteDetails: unknown = null
  let error: unknown = null
  let completedAt: number | null = null
  const writer = ItemEvents.make(options.request, makeId)
  const ordering = Ordering.make(writer, options.request, makeId)
  const emit = writer.emit

  // `Object.assign`, not an object literal that spreads the echo and adds the fields: on Node 20 the literal
  // took about 45 µs per snapshot (three per streamed response), `Object.assign` about 2 µs, the same keys
  // in the same order
  const response = (): ResponseObject =>
    Object.assign({}, options.request.echo, {
      id: options.responseId,
      object: "response" as const,
      created_at: options.createdAt,
      status,
      background: false,
      completed_at: completedAt,
      error,
      incomplete_details: incompleteDetails,
      model,
      output: writer.output.slice(),
      usage
    })

  const onFinished = (finished: StreamPart.ResponseFinished, out: Array<Event>) => {
    const incompleteReason = finished.incompleteReason ??
      (finished.finishReason === "length"
        ? "max_output_tokens"
        : finished.finishReason === "content_filter"
        ? "content_filter"
        : undefined)
    const incomplete = finished.status === "incomplete" || incompleteReason !== undefined
    if (finished.status === "failed") {
      fail({ code: "server_error", message: "the upstream model reported a failed response" }, out)
      return
    }
    ordering.closeAll(incomplete ? "incomplete" : "completed", out)
    usage = reported(finished.usage) ? usageToWire(finished.usage) : null
    terminated = true
    if (incomplete) {
      status = "incomplete"
      incompleteDetails = { reason: incompleteReason ?? "max_output_tokens" }
      emit(out, "response.incomplete", { response: response() })
    } else {
      status = "completed"
      completedAt = Math.floor(Date.now() / 1000)
      emit(out, "response.completed", { response: response() })
    }
  }

  const fail = (failure: ResponseError, out: Array<Event>) => {
    if (terminated) return
    ordering.closeFinished(out)
    terminated = true
    status = "failed"
    error = { code: failure.code, message: failure.message }
    // the `error` event first, as OpenAI sends it: clients stop on it (the `openai` SDK throws `APIError` for
    // an event with an `error` member, so the Agents SDK fails the run instead of asking again)
    emit(out, "error", {
      code: failure.code,
      message: failure.message,
      param: null,
      error: { type: failure.code, code: failure.code, message: failure.message, param: null }
    })
    emit(out, "response.failed", { response: response() })
  }

  return {
    start: (out, upstreamModel) => {
      if (upstreamModel !== undefined && upstreamModel !== "") model = upstreamModel
      emit(out, "response.created", { response: response() })
      emit(out, "response.in_progress", { response: response() })
    },
    push: (part, out) => {
      if (terminated) return
      switch (part.type) {
        case "part":
          ordering.push(part, out)
          break
        case "response_finished":
          onFinished(part, out)
          break
        case "response_started":
          break
      }
    },
    fail,
    end: (out) => {
      if (!terminated) fail({ code: "server_error", message: "the upstream stream ended without finishing the response" }, out)
    },
    response,
    terminated: () => terminated
  }
}

// ---------------------------------------------------------------------------------------------------------
// whole responses and SSE
// ---------------------------------------------------------------------------------------------------------

/**
 * The Response object of a whole `ModelResponse` (the non-streaming answer): its parts written as output
 * items, in order, through the same encoder, with usage and status (`completed` or `incomplete`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromModelResponse = (options: Options, modelResponse: ModelResponse.ModelResponse): ResponseObject => {
  const encoder = make(options)
  const sink: Array<Event> = []
  encoder.start(sink, modelResponse.model)
  const parts = modelResponse.message.parts
  for (let index = 0; index < parts.length; index++) {
    encoder.push({ type: "part", responseId: options.responseId, outputIndex: index, partial: false, part: parts[index]! } as StreamPart.PartUpdate, sink)
  }
  encoder.push(
    {
      type: "response_finished",
      responseId: options.responseId,
      status: modelResponse.status,
      finishReason: modelResponse.finishReason,
      ...(modelResponse.incompleteReason === undefined ? {} : { incompleteReason: modelResponse.incompleteReason }),
      usage: modelResponse.usage
    } as StreamPart.ResponseFinished,
    sink
  )
  return encoder.response()
}

/**
 * Events framed as an SSE body: `event: <type>`, `data: <json>` and a blank line each (the `event:` name
 * equals the payload's `type`).
 *
 * @since 0.1.0
 * @category encoding
 */
export const toSse = (events: ReadonlyArray<Event>): string => {
  let out = ""
  for (const event of events) {
    // a text delta, the most frequent event, from its template (the same characters)
    out += event instanceof TextDelta ? event.sse() : `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
  }
  return out
}

/**
 * The SSE text of `events` (what `toSse` gives, character for character) in pieces of about `pieceChars`
 * characters (default 64 Ki), for an answer too large to hold as one string: small frames are grouped
 * into a piece, a frame of more than about `pieceChars` characters is written a member or an element at a
 * time (the echo of a request's 10,000 tools in `response.created`), and a string value longer than
 * `pieceChars` (the text an `output_text.done` or `response.completed` repeats, large arguments) as the
 * JSON escaping of consecutive slices of it (never cutting a surrogate pair), so that no piece, and no
 * intermediate string, is the size of the answer. A piece exceeds `pieceChars` only by the escaping of a
 * slice (at most 6 characters per character) or by the JSON of one member or element of about
 * `pieceChars` characters (strings counted unescaped). A long string of `texts` (the request's, whose JSON
 * text is known: `Cooperative.JsonText`) is written as that text, decoded a slice at a time, not escaped.
 *
 * @since 0.2.0
 * @category encoding
 */
export function* toSsePieces(
  events: ReadonlyArray<Event>,
  pieceChars: number = 64 * 1024,
  texts: ReadonlyArray<JsonText> = []
): Generator<string> {
  const out = { text: "" }
  for (const event of events) {
    out.text += `event: ${event.type}\ndata: `
    yield* appendJson(out, event, pieceChars, texts)
    out.text += "\n\n"
    if (out.text.length >= pieceChars) {
      yield out.text
      out.text = ""
    }
  }
  if (out.text !== "") yield out.text
}

/**
 * The text of `JSON.stringify(value)` (character for character) in pieces of about `pieceChars` characters
 * (default 64 Ki), as `toSsePieces` writes an event: for a Response object too large to hold as one string
 * (the body of a non-streamed answer). A value whose JSON is about `pieceChars` characters or fewer
 * (strings counted unescaped) is one piece. `texts` as in `toSsePieces`.
 *
 * @since 0.2.0
 * @category encoding
 */
export function* toJsonPieces(
  value: object,
  pieceChars: number = 64 * 1024,
  texts: ReadonlyArray<JsonText> = []
): Generator<string> {
  const out = { text: "" }
  yield* appendJson(out, value, pieceChars, texts)
  if (out.text !== "") yield out.text
}

/**
 * Appends the JSON text of `value` to `out.text` (exactly `JSON.stringify(value)`): at once when its text is
 * about `pieceChars` characters or less (`sizeOf`), else a run of elements or a member at a time, and a
 * string longer than `pieceChars` as the escaping of a slice at a time, yielding `out.text` (and emptying
 * it) whenever it reached `pieceChars`. So no stretch of stringifying is longer than about a piece's: the
 * echo of 10,000 tools (1.7 MB) was one `JSON.stringify` of 10-20 ms. A string of `texts` is its known
 * JSON text, decoded a slice at a time (escaping it would read it whole: see `Cooperative.JsonText`).
 */
function* appendJson(
  out: { text: string },
  value: unknown,
  pieceChars: number,
  texts: ReadonlyArray<JsonText>
): Generator<string> {
  if (isShort(value, pieceChars)) {
    out.text += JSON.stringify(value)
    return
  }
  if (typeof value === "string") {
    const known = findJsonText(texts, value)
    if (known !== undefined) {
      const decoder = new TextDecoder()
      for (const bytes of known.bytes) {
        for (let at = 0; at < bytes.length; at += pieceChars) {
          out.text += decoder.decode(bytes.subarray(at, at + pieceChars), { stream: true })
          if (out.text.length >= pieceChars) {
            yield out.text
            out.text = ""
          }
        }
      }
      out.text += decoder.decode()
      return
    }
    out.text += "\""
    for (let start = 0; start < value.length;) {
      let end = Math.min(start + pieceChars, value.length)
      // a surrogate pair cut in two would be escaped as two lone halves (`\ud83d`): cut before it (after it,
      // in a one-character slice)
      if (end < value.length && isHighSurrogate(value.charCodeAt(end - 1)) && isLowSurrogate(value.charCodeAt(end))) {
        end += end - start > 1 ? -1 : 1
      }
      const escaped = JSON.stringify(value.slice(start, end))
      out.text += escaped.slice(1, escaped.length - 1)
      start = end
      if (out.text.length >= pieceChars) {
        yield out.text
        out.text = ""
      }
    }
    out.text += "\""
    return
  }
  if (Array.isArray(value)) {
    yield* appendElements(out, value, pieceChars, texts)
    return
  }
  // a plain object (`isShort` is true of every other value)
  const fields = value as { readonly [key: string]: unknown }
  out.text += "{"
  let first = true
  for (const key of Object.keys(fields)) {
    const field = fields[key]
    // what `JSON.stringify` leaves out of an object
    if (field === undefined || typeof field === "function" || typeof field === "symbol") continue
    out.text += `${first ? "" : ","}${JSON.stringify(key)}:`
    first = false
    if (isShort(field, pieceChars)) out.text += JSON.stringify(field)
    else yield* appendJson(out, field, pieceChars, texts)
    if (out.text.length >= pieceChars) {
      yield out.text
      out.text = ""
    }
  }
  out.text += "}"
}

/**
 * The elements of `array` appended as `appendJson` does, a run of them at a time: one `JSON.stringify` of
 * about a quarter of `pieceChars` characters' worth of elements (so that a piece passes `pieceChars` by
 * little; an element per call cost twice the whole array's one `JSON.stringify`); an element longer than
 * that on its own, by `appendJson`.
 */
function* appendElements(
  out: { text: string },
  array: ReadonlyArray<unknown>,
  pieceChars: number,
  texts: ReadonlyArray<JsonText>
): Generator<string> {
  out.text += "["
  const target = Math.max(1, pieceChars >> 2)
  // the elements of the next run, guessed from the last run's size
  let count = 16
  for (let start = 0; start < array.length;) {
    const end = Math.min(array.length, start + count)
    // `slice` keeps holes, which `JSON.stringify` writes as `null` as it does in the whole array
    const run = array.slice(start, end)
    const size = sizeOf(run, target)
    if (size > target && end - start > 1) {
      count = (end - start) >> 1
      continue
    }
    if (start > 0) out.text += ","
    if (size > target) {
      const element = array[start]
      // what `JSON.stringify` writes as `null` in an array
      if (element === undefined || typeof element === "function" || typeof element === "symbol") out.text += "null"
      else yield* appendJson(out, element, pieceChars, texts)
    } else {
      const json = JSON.stringify(run)
      out.text += json.slice(1, json.length - 1)
      count = Math.max(1, Math.min(4 * (end - start), Math.floor((end - start) * target / Math.max(size, 1))))
    }
    start = end
    if (out.text.length >= pieceChars) {
      yield out.text
      out.text = ""
    }
  }
  out.text += "]"
}

/**
 * Whether `value`'s JSON text is about `limit` characters or less, or it is no string, array or plain
 * object (then `appendJson` gives it to `JSON.stringify` whole).
 */
const isShort = (value: unknown, limit: number): boolean =>
  typeof value === "string"
    ? value.length <= limit
    : typeof value !== "object" || value === null || isOpaque(value) || sizeOf(value, limit) <= limit

/**
 * The length of the JSON text of `value` (plain JSON), estimated (strings counted unescaped, a number as 8
 * characters), or a number above `limit` once the estimate passes it: no more than about `limit`
 * characters' worth of `value` is read. An opaque object (`isOpaque`) counts as 8 characters.
 */
const sizeOf = (value: unknown, limit: number): number => {
  let size = 0
  const add = (value: unknown): boolean => {
    if (typeof value === "string") {
      size += value.length + 2
      return size > limit
    }
    if (typeof value !== "object" || value === null || isOpaque(value)) {
      size += 8
      return size > limit
    }
    size += 2
    if (Array.isArray(value)) {
      for (const item of value) if (add(item) || ++size > limit) return true
      return false
    }
    for (const key in value) {
      size += key.length + 4
      if (add((value as Record<string, unknown>)[key])) return true
    }
    return size > limit
  }
  add(value)
  return size
}

/**
 * An object `appendJson` gives to `JSON.stringify` whole: one with a `toJSON` method, and any but an array
 * and a plain object (a boxed primitive, which `JSON.stringify` writes as its value; an instance of a class).
 */
const isOpaque = (value: object): boolean => {
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return true
  if (Array.isArray(value)) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype !== Object.prototype && prototype !== null
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

