/**
 * The gateway: a stateless `POST /v1/responses` server in front of any `LanguageModel` (the `Upstream` in
 * the context; `effect-responses serve` uses a Chat Completions backend), on `@effect/platform`'s
 * `HttpRouter`.
 *
 * | route | answer |
 * |---|---|
 * | `POST /v1/responses` | the request decoded (`ResponsesRequestDecoder`), the upstream called; `stream: true` -> the SSE lifecycle (`ResponsesLifecycle`), else the Response object |
 * | `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items`, `DELETE /v1/responses/{id}` | with a `ResponseStore`: the stored response, a page of its input items, its deletion (see "State"); without one: 404 |
 * | `GET /v1/models` | the upstream's answer, passed through |
 * | `GET /v1/models/{id}` | that model's object in the upstream's list, else 404 `model_not_found` |
 * | `GET /health` (and `HEAD`) | `{"status":"ok"}` (no key needed) |
 * | anything else | 404 |
 *
 * Every error body has OpenAI's shape `{"error":{"message","type","param","code"}}`:
 *
 * - 401 `invalid_api_key` when `apiKey` is set and the request lacks `Authorization: Bearer <apiKey>`;
 * - 413 `request_too_large` for a body over `maxBodyBytes` (default 16 MiB), by `Content-Length` (at once;
 *   one declared more than 64 MiB past the bound is not read, its 413 has `connection: close` and the
 *   connection is closed after it; a smaller one is drained as below) or, for a
 *   chunked body, as soon as the bound is passed, while the client may still send (the rest of the body is
 *   read and discarded in the background, up to 64 MiB and until `bodyTimeout`, so that the answer reaches
 *   the client instead of a connection reset). A connection closed after a 413 under a client still
 *   sending (a body refused by its `Content-Length` past the drain bound, more than 64 MiB drained, a
 *   drain not ended at `bodyTimeout`) is closed without a reset on Node's server: nothing more is read,
 *   the server's side is ended after the 413 (a FIN), and the socket destroyed when the client closes or
 *   2 s later, so that a client that stops at a failed write (undici, the `openai` SDK) has read the 413;
 * - 415 `unsupported_content_encoding` for a compressed body (`content-encoding` other than `identity`);
 * - 408 `request_timeout` for a body that has not arrived whole within `bodyTimeout` (default 120 s), sent
 *   with `connection: close` (a client that never ends its body cannot hold a request open);
 * - 400 `invalid_json` for malformed JSON, naming the position (0-based offset, line, column), and for a
 *   body that is no UTF-8 (RFC 8259 §8.1; as `TextDecoder` with `fatal: true` decides), naming the 0-based
 *   byte offset of the first sequence that is not (it was read as U+FFFD), each chunk checked as it is read
 *   within `maxBodyBytes`;
 * - 400 `nesting_too_deep` for JSON nested deeper than `maxJsonDepth` (default 64) objects and arrays,
 *   checked on the text before it is parsed;
 * - 400 `object_above_max_properties` for an object of more than
 *   `ResponsesRequestDecoder.MAX_OBJECT_PROPERTIES` (5,000) members anywhere in the body (a schema's
 *   `properties`), naming the top-level parameter holding it (`text`, `tools[3]`), and 400
 *   `array_above_max_length` (param `tools`) for more than `ResponsesRequestDecoder.MAX_TOOLS` (10,000)
 *   tools, and `array_above_max_length` for an array of more than `ResponsesRequestDecoder.MAX_ARRAY_ELEMENTS`
 *   (100,000, or `maxInputItems` when larger) elements anywhere in the body, naming the top-level parameter
 *   holding it, all checked on the text before it is parsed;
 * - 400 `array_above_max_length` (param `input`) for more than `maxInputItems` input items (default
 *   20,000), and (param `input[i].content`, `input[i].output`) for more content parts than that in one item;
 * - 400 from the decoder for what a stateless bridge cannot honour, naming the parameter;
 * - an upstream error before the first byte: the upstream's 4xx status and error (when its body names no
 *   type, OpenAI's for the status: `requests` and code `rate_limit_exceeded` for a 429, else
 *   `invalid_request_error`; the inner message of Ollama's and FastAPI's error bodies, see
 *   `AiError.httpErrorFromResponse`), 502 for an upstream 5xx,
 *   502 `upstream_error` with `x-should-retry: false` for an upstream redirect (3xx, never followed, so the
 *   upstream key goes nowhere else), its message naming the status (`UPSTREAM_REDIRECTED`; the target and
 *   the base URL to set, `HttpTransport.redirectHint`, go to the log only),
 *   502 `upstream_auth_failed` for an upstream 401 or 403 (the gateway's upstream key, not the client's:
 *   `UPSTREAM_AUTH_FAILED`); an error the upstream sent inside its answer before any output (an error
 *   event or chunk, llama.cpp's `error: {"code":400,…}` line, a 200 error body) is answered the same way
 *   when its code is a 4xx status (its message, code and param as sent), else 502,
 *   an unreachable upstream (`upstream_unreachable`, with the generic `UPSTREAM_UNREACHABLE` message: the
 *   upstream's URL and the socket error go to the log only), a connection the upstream closed after the
 *   request was sent and before any response (`upstream_closed`, `UPSTREAM_CLOSED`: it may have received
 *   the request, which is not sent again unless retries are on), a connection that broke off after part of the
 *   upstream's body arrived (`upstream_disconnected`, `UPSTREAM_DISCONNECTED`) or an unreadable answer; 504
 *   `upstream_timeout` when the upstream's headers timeout or idle timeout passed (`TransportError.timeout`,
 *   see `Upstream.ChatCompletionsOptions`); 400 `invalid_prompt` when the upstream protocol cannot carry the
 *   prompt, its `param` `input` (a tool output that other messages separate from its call is caught before,
 *   by the decoder, naming the output's `input[i]`, when the upstream says so: `Upstream.Service.readsToolOutputsApart`), or `text.format` /
 *   `tool_choice` / `tools` when `InvalidPrompt.option` names the call option at fault. An error the upstream
 *   sends inside its answer with an HTTP status as its code (`{"error":{"code":500,…}}`) gets a word code
 *   (`upstream_error`, or for a 4xx that status with `code` null; after the first byte `server_error` or
 *   `rate_limit_exceeded`), the number in the message. An upstream HTTP error passes its
 *   `x-request-id` on, and the wait it asked for (`AiError.retryAfterFromHeaders`: its `retry-after-ms`,
 *   else its `retry-after`) as both `retry-after-ms` and `retry-after` (whole seconds, rounded up: 250 ms
 *   is `retry-after: 1`), as headers of the answer;
 * - 500 `server_error` for a defect in the gateway itself (logged at error level with its cause), never a
 *   hung or empty answer.
 *
 * Each request gets one access log line at info level once its answer was written (`accessLog`: method,
 * path, status, model, whether it streamed, duration, upstream attempts; no bodies, no keys); a client that
 * went away before its answer began is logged with status 499 (client closed request), one that left a
 * stream (or a large non-streamed body, written in pieces) before its end with the 200 and
 * `outcome=client_closed`.
 *
 * Every message is capped (`MAX_MESSAGE_CHARS`, with how much was cut): an upstream that answers a 100 MB
 * error reaches neither the client nor the log whole (the transport reads 64 KiB of it in the first place).
 *
 * Streaming starts only once the upstream's first element arrived, so that errors before it keep their
 * HTTP status; an upstream error, timeout or disconnect later becomes `response.failed` (`responseErrorOf`)
 * and the stream ends (`server_shutting_down` when the gateway is shutting down, a 503 before the stream
 * began: `SHUTTING_DOWN`). A client that disconnects interrupts the response, which aborts the upstream
 * request. A response whose upstream reported no usage has `usage: null` (see `ResponsesLifecycle`).
 * Events are serialized one at a time as the socket takes them (small ones grouped), so that the terminal
 * events of a large answer, which each repeat its text, are never all held at once; a non-streamed
 * answer's JSON is written in pieces the same way when its text is large.
 *
 * ## State
 *
 * Stateless by default. With a `ResponseStore` in the context (`ResponseStoreSqlite`, `ResponseStorePg`):
 *
 * - `store: true`, or `store` left out (the API's default, which clients that chain turns rely on), saves
 *   the request's input items (a string input as a user message; every item given an `id` when it has
 *   none), the output items and the Response object, before the answer (non-streamed) or the terminal event
 *   (streamed) is written; `store: false` saves nothing. A response that cannot be saved is answered all the
 *   same, with `store: false` (non-streamed: the 200's Response; streamed: `response.completed`'s), and the
 *   store's error is logged at error level.
 * - `previous_response_id` puts the stored conversation before the request's input: for each response of
 *   the chain, oldest first, its input items then its output items (`instructions` are not carried over,
 *   as in the API). An id that is not stored for the request's key gets 400 `previous_response_not_found`
 *   ("Previous response with id '…' not found."); so does a stored id whose chain lost an earlier response
 *   (deleted, or past its retention), the message naming the id sent, then the missing one.
 * - An `item_reference` input item is replaced by the stored item with that id; an unknown id gets 404
 *   ("Item with id '…' not found.", `param` `input[i]`).
 * - Each bearer key (`apiKey`, `apiKeys`) is a tenant: a response or item stored with one key is not found
 *   with another.
 * - `background: true`, `conversation` and the others below stay refused (`conversation` with a message
 *   saying the store keeps responses, not conversations, and naming `previous_response_id`).
 *
 * ## Request parameters
 *
 * Nothing a client sends is dropped silently: each `CreateResponse` parameter is
 * forwarded, echoed only (accepted; the Response object shows it; one debug log line per request names
 * those the request set), or refused with a 400 naming it. Over the Chat Completions upstream
 * (`Upstream.chatCompletions`):
 *
 * | parameter | treatment |
 * |---|---|
 * | `model`, `input`, `instructions`, `tools`, `tool_choice`, `stream` | forwarded (any upstream); `tool_choice` `auto` / `none` with no tool to send left out, one forcing a call with nothing to call or naming an undeclared tool a 400 (`ResponsesRequestDecoder`) |
 * | `temperature`, `top_p`, `max_output_tokens`, `parallel_tool_calls`, `reasoning.effort`, `text.format`, `text.verbosity`, `prompt_cache_key`, `service_tier`, `safety_identifier` / `user` | forwarded (`Upstream.FORWARDED_TO_CHAT_COMPLETIONS`; `safety_identifier`, else `user`, becomes `user`) |
 * | `metadata`, `reasoning.summary`, `max_tool_calls`, `prompt_cache_retention`, `prompt_cache_options`, `include` (but logprobs), `top_logprobs: 0`, `stream_options`, `store: false`, `background: false`, `truncation: "disabled"`, `user` when `safety_identifier` is set too | echoed only |
 * | `previous_response_id`, `store: true`, `item_reference` items | with a `ResponseStore`: see "State"; without: 400 (`ResponsesRequestDecoder`; `item_reference` items to reasoning excepted) |
 * | `conversation`, `prompt`, `background: true`, `truncation: "auto"`, `context_management`, `moderation`, `top_logprobs` > 0, `include: ["message.output_text.logprobs"]`, built-in tools under `reject` | 400 (`ResponsesRequestDecoder`) |
 * | `metadata` past the API's bounds (`ResponsesRequestDecoder.METADATA_BOUNDS`) | 400 `object_above_max_properties` / `string_above_max_length` naming it |
 * | any other top-level field | ignored, named in a debug log line (client metadata: ignored, not refused) |
 *
 * Tools: function tools are forwarded; custom (freeform) tools as functions of one string parameter, their
 * calls written back as `custom_tool_call` items; the client-run `apply_patch`, `shell` and `local_shell`
 * tools as functions taking their operation and action, their calls written back as `apply_patch_call`,
 * `shell_call` and `local_shell_call` items;
 * namespaced tools flattened (`crm__lookup`), their calls
 * written back with their `namespace`; a name the upstream would refuse (over 64 characters, or with
 * characters outside `a-z A-Z 0-9 _ -`) sent shortened with a hash (`ResponsesRequestDecoder.upstreamName`,
 * the same in every turn), its calls written back under the declared name; `additional_tools` and `tool_search_output` items add to the tool
 * list. `defer_loading` tools: with a client-run `tool_search` tool the upstream is offered the tools no
 * search needs to load and a `tool_search` function, its calls written back as `tool_search_call` items for
 * the client to run; with a hosted one (which cannot run over Chat Completions) every tool; either way a call
 * of a deferred tool no search loaded comes after a `tool_search_call` and `tool_search_output`
 * (`execution: "server"`) loading it, so that a client checking that (the Agents SDK) takes the call (see
 * `ResponsesRequestDecoder` and `ResponsesLifecycle`).
 *
 * `max_tool_calls` is echoed only because it bounds calls to built-in tools ("The maximum number of total
 * calls to built-in tools that can be processed in a response", `ResponseProperties` in the API
 * reference), and the gateway runs none: the bound always holds; function calls are the client's to run.
 * `reasoning.summary` has no Chat Completions field; the upstream's reasoning text is returned as the
 * summary anyway. Log probabilities are refused rather than forwarded: the part model carries none, so the
 * client would get `logprobs: []` whatever the upstream returned. Over `Upstream.fromLanguageModel` only
 * the first row is forwarded; the second is echoed only.
 *
 * @since 0.1.0
 */
import { AiError, type LanguageModel } from "@effect-responses/core"
import * as ResponsesRequestDecoder from "./ResponsesRequestDecoder.js"
import * as Headers from "@effect/platform/Headers"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { lineAndColumn, syntaxErrorPosition } from "./internal/jsonPosition.js"
import * as JsonSlices from "./internal/jsonSlices.js"
import { currentJsonTexts, type JsonText, yieldToIo } from "@effect-responses/wire/Cooperative"
import { capMessage } from "./internal/limits.js"
import * as GatewayState from "./internal/gatewayState.js"
import * as RequestBody from "./internal/requestBody.js"
import * as SseBody from "./internal/sseBody.js"
import { Utf8Check } from "./internal/utf8Check.js"
import * as ResponseStore from "./ResponseStore.js"
import * as ResponsesLifecycle from "./ResponsesLifecycle.js"
import * as Upstream from "./Upstream.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * The gateway's settings:
 *
 * - `apiKey`: the bearer token clients must send (none: no check);
 * - `apiKeys`: more bearer tokens clients may send, one per tenant: with a `ResponseStore`, what a request
 *   with one key stored is visible only to requests with the same key (`apiKey` is a tenant too);
 * - `builtinTools`: `drop` (default) or `reject` built-in tools (see `ResponsesRequestDecoder`);
 * - `inputFiles`: how the upstream takes `input_file` content (default `["data", "id"]`);
 * - `maxBodyBytes`: the request body bound in bytes (default `MAX_BODY_BYTES`, 16 MiB; at most
 *   `MAX_BODY_BYTES_LIMIT`, 512 MiB less 24 bytes);
 * - `maxInputItems`: the bound on input items (default `ResponsesRequestDecoder.MAX_INPUT_ITEMS`, 20,000);
 * - `maxJsonDepth`: the bound on the nesting of objects and arrays in the body (default `MAX_JSON_DEPTH`,
 *   64);
 * - `bodyTimeout`: the longest a request body may take to arrive whole (default `BODY_TIMEOUT`, 120 s);
 *   past it the answer is a 408 `request_timeout`; one longer than 2^31-1 ms (about 24.8 days, the longest a
 *   JS timer waits) or infinite is no bound, as for the upstream's timeouts;
 * - `accessLog`: one info line per request (default `true`, see `accessLog`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly apiKey?: Redacted.Redacted | undefined
  readonly apiKeys?: ReadonlyArray<Redacted.Redacted> | undefined
  readonly builtinTools?: ResponsesRequestDecoder.BuiltinToolsPolicy | undefined
  readonly inputFiles?: ReadonlyArray<ResponsesRequestDecoder.FileInput> | undefined
  readonly maxBodyBytes?: number | undefined
  readonly maxInputItems?: number | undefined
  readonly maxJsonDepth?: number | undefined
  readonly bodyTimeout?: Duration.DurationInput | undefined
  readonly accessLog?: boolean | undefined
}

/**
 * The default bound on JSON nesting: 64 levels of objects and arrays (a request's deepest legitimate
 * values, tool parameter schemas, rarely pass 15).
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_JSON_DEPTH = 64

/**
 * The default of `Options.bodyTimeout`, the longest a request body may take to arrive whole: 120 seconds
 * (the largest body the default bound allows, 16 MiB, at about 140 KB/s).
 *
 * @since 0.2.0
 * @category constants
 */
export const BODY_TIMEOUT: Duration.Duration = Duration.seconds(120)

/**
 * The default request body bound: 16 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024

/**
 * The largest `Options.maxBodyBytes`: 536,870,888 bytes (512 MiB less 24), V8's longest string on 64-bit
 * platforms (Node's `buffer.constants.MAX_STRING_LENGTH`, 2^29 - 24 UTF-16 code units). A body that is no
 * JSON is decoded whole into one string to name where its syntax fails, and a string value of the body is
 * one string: past this length either throws (`RangeError: Invalid string length`) instead of answering. A
 * body decodes to at most as many code units as it has bytes, so a body within the bound always fits.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_BODY_BYTES_LIMIT = 2 ** 29 - 24

/**
 * An error the gateway answers with: HTTP `status` and OpenAI's `{"error":{"message","type","param",
 * "code"}}` (`description`, `errorType`, `param`, `code`), plus response `headers` (e.g. the upstream's
 * `retry-after` and `x-request-id`).
 *
 * @since 0.1.0
 * @category errors
 */
export class GatewayError extends Schema.TaggedError<GatewayError>("@effect-responses/server/GatewayError")("GatewayError", {
  status: Schema.Number,
  description: Schema.String,
  errorType: Schema.String,
  param: Schema.NullOr(Schema.String),
  code: Schema.NullOr(Schema.String),
  headers: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { exact: true })
}) {
  override get message(): string {
    return `HTTP ${this.status}: ${this.description}`
  }

  /**
   * The error as an HTTP response.
   *
   * @since 0.1.0
   */
  get response(): HttpServerResponse.HttpServerResponse {
    return HttpServerResponse.unsafeJson(
      { error: { message: capMessage(this.description), type: this.errorType, param: this.param, code: this.code } },
      this.headers === undefined ? { status: this.status } : { status: this.status, headers: Headers.fromInput(this.headers) }
    )
  }
}

/** The request parameter a Responses client set for each call option `AiError.InvalidPrompt.option` names. */
const PROMPT_OPTION_PARAM: Record<NonNullable<AiError.InvalidPrompt["option"]>, string> = {
  responseFormat: "text.format",
  toolChoice: "tool_choice",
  tools: "tools"
}

/**
 * The gateway's answer to an `AiError` of the upstream before the first byte (see the module doc).
 *
 * @since 0.1.0
 * @category errors
 */
export const fromAiError = (error: AiError.AiError): GatewayError => {
  switch (error._tag) {
    case "HttpError": {
      const headers = passedOnHeaders(error)
      if (error.status === 401 || error.status === 403) {
        // the gateway's own upstream credentials, not the client's key: a 401 would send the client to
        // check a key that the gateway accepted
        return new GatewayError({
          status: 502,
          description: capMessage(`${UPSTREAM_AUTH_FAILED} (HTTP ${error.status}): ${error.description}`),
          errorType: "server_error",
          param: null,
          code: "upstream_auth_failed",
          ...(headers === undefined ? {} : { headers })
        })
      }
      // a redirect (3xx, not followed: the upstream URL is the operator's to fix) is the upstream's failure,
      // as a 5xx is: never passed on as a 3xx the client would take for the gateway's own. Its target (which
      // may carry credentials, a signed query or an internal host) and the base URL to set are for the
      // operator's log (`logUpstreamError`), not the client; and the client's SDK is told not to retry a
      // misconfiguration (`x-should-retry: false`, no `retry-after`)
      if (error.status < 400) {
        return new GatewayError({
          status: 502,
          description: `the upstream failed: it answered HTTP ${error.status}, which the gateway does not follow: ${UPSTREAM_REDIRECTED}`,
          errorType: "server_error",
          param: null,
          code: "upstream_error",
          headers: {
            "x-should-retry": "false",
            ...(error.requestId === undefined ? {} : { "x-request-id": capMessage(error.requestId, 200) })
          }
        })
      }
      return new GatewayError({
        status: error.status >= 500 ? 502 : error.status,
        description: capMessage(error.status >= 500 ? `the upstream failed: ${error.description}` : error.description),
        errorType: error.errorType ?? openAiErrorType(error.status, error.code),
        param: error.param ?? null,
        code: error.code ?? (error.status >= 500 ? "upstream_error" : error.status === 429 ? "rate_limit_exceeded" : null),
        ...(headers === undefined ? {} : { headers })
      })
    }
    case "TransportError":
      if (error.timeout !== undefined) {
        return new GatewayError({
          status: 504,
          description: upstreamTimeoutMessage(error.timeout),
          errorType: "server_error",
          param: null,
          code: "upstream_timeout"
        })
      }
      // the upstream closed the connection after the request was written, before any response: it was
      // reached, and may have received the request (the transport does not send it again on its own)
      if (error.closedBeforeResponse === true) {
        return new GatewayError({
          status: 502,
          description: UPSTREAM_CLOSED,
          errorType: "server_error",
          param: null,
          code: "upstream_closed"
        })
      }
      // the upstream's headers arrived (`bytesReceived` is set, 0 or more bytes of the body read before
      // anything reached the client): it was reached, and broke off
      return error.bytesReceived !== undefined
        ? new GatewayError({
          status: 502,
          description: UPSTREAM_DISCONNECTED,
          errorType: "server_error",
          param: null,
          code: "upstream_disconnected"
        })
        : new GatewayError({
          status: 502,
          description: UPSTREAM_UNREACHABLE,
          errorType: "server_error",
          param: null,
          code: "upstream_unreachable"
        })
    case "InvalidPrompt":
      return new GatewayError({
        status: 400,
        description: `the gateway cannot send this request upstream: ${error.description}`,
        errorType: "invalid_request_error",
        param: error.option === undefined ? "input" : PROMPT_OPTION_PARAM[error.option],
        code: "invalid_prompt"
      })
    case "ToolError":
      return new GatewayError({
        status: 500,
        description: error.message,
        errorType: "server_error",
        param: null,
        code: "server_error"
      })
    case "StreamErrorEvent":
    case "ResponseFailed":
      // an error the upstream sent inside its answer (llama.cpp's `error: {"code":400,…}` line, an error
      // chunk or a 200 error body) with a 4xx code: answered as the same error in an HTTP 4xx would be
      // (an HTTP status as its code, as llama.cpp and OpenRouter send it, is no code of OpenAI's: said in the message)
      if (error.code !== undefined && /^4\d\d$/.test(error.code)) {
        return fromAiError(
          new AiError.HttpError({
            status: Number(error.code),
            description: error.description,
            ...(error._tag === "StreamErrorEvent" && error.param !== undefined ? { param: error.param } : {})
          })
        )
      }
      return new GatewayError({
        status: 502,
        description: capMessage(`the upstream failed: ${error.message}`),
        errorType: "server_error",
        param: null,
        code: error.code === undefined || isStatusCode(error.code) ? "upstream_error" : error.code
      })
    case "MalformedOutput":
    case "TruncatedStream":
      return new GatewayError({
        status: 502,
        description: capMessage(`the upstream failed: ${error.message}`),
        errorType: "server_error",
        param: null,
        code: "upstream_error"
      })
  }
  // errors added to `AiError` later (e.g. structured output checks): the upstream's answer was unusable
  return new GatewayError({
    status: 502,
    description: capMessage(`the upstream failed: ${String((error as { readonly message?: unknown }).message ?? "unknown error")}`),
    errorType: "server_error",
    param: null,
    code: "upstream_error"
  })
}

/**
 * The `type` OpenAI gives an error of HTTP `status`, for an upstream error whose body named none (a
 * plain-text or HTML body, Ollama's `{"error":"…"}`, FastAPI's `{"detail":…}`): the statuses of the API
 * reference's error codes (platform.openai.com/docs/guides/error-codes) and the OpenAI SDKs' error classes by
 * status. 429 (rate limit, "Rate limit reached for requests") is `requests`, the type of OpenAI's own 429
 * body (`{"type":"requests","code":"rate_limit_exceeded"}`), with code `rate_limit_exceeded`: never the
 * client's request at fault; 5xx (500 server error, 503 overloaded) is `server_error`; 400, 404, 409, 413,
 * 422 and any other 4xx are `invalid_request_error`, as OpenAI types them (401 and 403, the gateway's own
 * upstream credentials, are answered apart: `UPSTREAM_AUTH_FAILED`). A 429 of code `insufficient_quota` is
 * typed `insufficient_quota`, as OpenAI's own quota body is.
 */
const openAiErrorType = (status: number, code: string | undefined): string =>
  status === 429
    ? code === "insufficient_quota" ? "insufficient_quota" : "requests"
    : status >= 500
    ? "server_error"
    : "invalid_request_error"

/**
 * What a client is told when the upstream could not be reached (`TransportError`: connection refused, a name
 * that does not resolve, a TLS failure). The detail (the upstream's URL, the socket error) stays in the
 * gateway's log: the upstream's address is the operator's business, not the client's.
 *
 * @since 0.1.0
 * @category errors
 */
export const UPSTREAM_UNREACHABLE = "the upstream model server could not be reached"

/**
 * What a client is told, with a 502 `upstream_closed`, when the upstream closed or reset the connection
 * after the request was sent and before any response (`TransportError.closedBeforeResponse`): the upstream
 * was reached and may have received the request, so the gateway does not send it again unless
 * `Upstream.ChatCompletionsOptions.retry` allows retries (each one counted in the access log's
 * `upstream_attempts`). The detail goes to the log.
 *
 * @since 0.2.0
 * @category errors
 */
export const UPSTREAM_CLOSED = "the upstream model server closed the connection before answering"

/**
 * What a client is told, before the upstream's own message, when the upstream refused the gateway's
 * credentials (an HTTP 401 or 403 before the first byte): the gateway never forwards the client's key, so
 * the client gets a 502 `upstream_auth_failed`, not the upstream's 401, which would send it to check a key
 * the gateway accepted. The operator fixes the upstream key (`serve --upstream-key-env`).
 *
 * @since 0.2.0
 * @category errors
 */
export const UPSTREAM_AUTH_FAILED = "the upstream model server refused the gateway's credentials"

/**
 * What a client is told after the status when the upstream answered a 3xx (a redirect, which the gateway
 * never follows, so its upstream key goes nowhere else): the client gets a 502 `upstream_error` with
 * `x-should-retry: false` (a misconfiguration does not pass with a retry). The target (the `location`
 * header, which may carry credentials, a signed query or an internal host) and the base URL to set
 * (`HttpTransport.redirectHint`) go to the gateway's log only; the operator fixes `serve --upstream`.
 *
 * @since 0.2.0
 * @category errors
 */
export const UPSTREAM_REDIRECTED = "the gateway's upstream URL needs fixing (the gateway's log names the target)"

/**
 * What a client is told when the upstream's connection broke off after the response began streaming (a
 * `TransportError` mid-stream), or after its response headers arrived (a 502 before the first byte to the
 * client: a whole answer cut off, or a stream that ended before its first event); the detail goes to the log.
 *
 * @since 0.2.0
 * @category errors
 */
export const UPSTREAM_DISCONNECTED = "the upstream model server's connection broke off before the response was complete"

/**
 * What a client whose request is in flight is told when the gateway shuts down (its `layer` released, as
 * `effect-responses serve` does on SIGTERM or Ctrl-C): a `response.failed` with code `server_shutting_down`
 * and this message once its stream began, else a 503 with that code; the upstream request is aborted. Without it the shutdown's closing of the upstream
 * connection would read as the upstream's fault (`UPSTREAM_DISCONNECTED`).
 *
 * @since 0.2.0
 * @category errors
 */
export const SHUTTING_DOWN = "the gateway is shutting down: the response was cut off; send the request again"

/** The answer to a request whose upstream call failed while the gateway shuts down: 503 `server_shutting_down`. */
const shuttingDownError = new GatewayError({
  status: 503,
  description: SHUTTING_DOWN,
  errorType: "server_error",
  param: null,
  code: "server_shutting_down"
})

/** Whether the gateway serving a request is being released (`layer`): set by its first finalizer. */
class ShuttingDown extends Context.Tag("@effect-responses/server/Gateway/ShuttingDown")<
  ShuttingDown,
  { readonly now: () => boolean }
>() {}

const shuttingDownLayer = Layer.scoped(
  ShuttingDown,
  Effect.suspend(() => {
    let closing = false
    return Effect.as(Effect.addFinalizer(() => Effect.sync(() => (closing = true))), { now: () => closing })
  })
)

/**
 * The message of an upstream timeout: `headers` (no response headers within the headers timeout, or an
 * error body or a whole answer that did not arrive within it either) or `idle`
 * (the upstream sent nothing, or only keep-alives, for longer than the idle timeout).
 *
 * `wholeAnswerBytes` (since 0.2.0), for a whole (not streamed) answer whose headers arrived: how many bytes
 * of its body had arrived when the timeout passed. The message then says that the headers came and the
 * answer stopped after those bytes, incomplete (or that none of it came), whichever timeout passed first:
 * not that the upstream did not answer (`headers`) or sent only keep-alives (`idle`).
 *
 * @since 0.2.0
 * @category errors
 */
export const upstreamTimeoutMessage = (kind: "headers" | "idle", wholeAnswerBytes?: number): string =>
  kind === "headers"
    ? wholeAnswerBytes === undefined
      ? "the upstream model server did not answer within the gateway's headers timeout (which bounds its headers, and an error body or a whole answer too)"
      : wholeAnswerBytes === 0
      ? "the upstream model server sent its headers but none of its answer within the gateway's headers timeout (which bounds a whole answer too)"
      : `the upstream model server sent its headers, then stopped after ${wholeAnswerBytes} ${
        wholeAnswerBytes === 1 ? "byte" : "bytes"
      } of an incomplete answer: the answer did not arrive whole within the gateway's headers timeout (which bounds a whole answer too)`
    : wholeAnswerBytes === undefined
    ? "the upstream model server sent nothing, or only keep-alives, for longer than the gateway's idle timeout"
    : wholeAnswerBytes === 0
    ? "the upstream model server sent its headers but none of its answer, and then nothing for longer than the gateway's idle timeout"
    : `the upstream model server stopped after ${wholeAnswerBytes} ${
      wholeAnswerBytes === 1 ? "byte" : "bytes"
    } of an incomplete answer, and sent nothing more for longer than the gateway's idle timeout`

/**
 * `fromAiError` for a whole (not streamed) answer: a timeout after its headers (the idle timeout, or the
 * headers timeout, which bounds the whole body too) says how much of the body had arrived
 * (`upstreamTimeoutMessage`), since its bytes are the answer's, never keep-alives.
 */
const fromWholeAnswerError = (error: AiError.AiError): GatewayError =>
  error._tag === "TransportError" && error.timeout !== undefined && error.bytesReceived !== undefined
    ? new GatewayError({
      status: 504,
      description: upstreamTimeoutMessage(error.timeout, error.bytesReceived),
      errorType: "server_error",
      param: null,
      code: "upstream_timeout"
    })
    : fromAiError(error)

/**
 * The headers of an upstream HTTP error passed on to the client: the upstream's wait as `retry-after-ms`
 * and as `retry-after` in whole seconds rounded up (a wait under a second is never `0`), `x-request-id`.
 */
const passedOnHeaders = (error: AiError.HttpError): Record<string, string> | undefined => {
  const headers: Record<string, string> = {}
  if (error.retryAfter !== undefined) {
    const millis = Math.max(0, Math.round(Duration.toMillis(error.retryAfter)))
    headers["retry-after-ms"] = String(millis)
    headers["retry-after"] = String(Math.ceil(millis / 1000))
  }
  if (error.requestId !== undefined) headers["x-request-id"] = capMessage(error.requestId, 200)
  return Object.keys(headers).length === 0 ? undefined : headers
}

/**
 * The `response.failed` error of an `AiError` met mid-stream: `rate_limit_exceeded` for an upstream 429,
 * the upstream's own code for its error events (`server_error`, or `rate_limit_exceeded` for 429, when that
 * code is an HTTP status), `upstream_timeout` (`upstreamTimeoutMessage`) when a
 * timeout of the transport passed, `upstream_closed` (`UPSTREAM_CLOSED`) for a connection closed before any
 * response, `upstream_disconnected` (`UPSTREAM_DISCONNECTED`) for a connection that
 * broke off, `upstream_error` for an answer that is malformed or cut short (as before the first byte), else
 * `server_error`. Messages are capped (`MAX_MESSAGE_CHARS`); the detail of a transport
 * error goes to the log only (see `logUpstreamError`).
 *
 * @since 0.1.0
 * @category errors
 */
export const responseErrorOf = (error: AiError.AiError): ResponsesLifecycle.ResponseError => {
  switch (error._tag) {
    case "HttpError":
      return { code: error.status === 429 ? "rate_limit_exceeded" : "server_error", message: capMessage(error.message) }
    case "StreamErrorEvent":
    case "ResponseFailed":
      // an HTTP status as the code (`{"error":{"code":500,…}}`): a word code of the API's; the message keeps the number
      return error.code !== undefined && isStatusCode(error.code)
        ? { code: error.code === "429" ? "rate_limit_exceeded" : "server_error", message: capMessage(error.message) }
        : { code: error.code ?? "server_error", message: capMessage(error.message) }
    case "TransportError":
      if (error.closedBeforeResponse === true) return { code: "upstream_closed", message: UPSTREAM_CLOSED }
      return error.timeout === undefined
        ? { code: "upstream_disconnected", message: UPSTREAM_DISCONNECTED }
        : { code: "upstream_timeout", message: upstreamTimeoutMessage(error.timeout) }
    case "MalformedOutput":
    case "TruncatedStream":
      // the upstream's answer was unusable: the code of the same fault before the first byte (`fromAiError`)
      return { code: "upstream_error", message: capMessage(`the upstream failed: ${error.message}`) }
    default:
      return { code: "server_error", message: capMessage(error.message) }
  }
}

/** Whether an upstream error's code is a number (an HTTP status, as llama.cpp and OpenRouter put in `error.code`). */
const isStatusCode = (code: string): boolean => /^\d+$/.test(code)

/**
 * Logs an upstream error with its detail (a warning, capped at `MAX_MESSAGE_CHARS`): what the client is
 * not shown (`UPSTREAM_UNREACHABLE`) is kept here for the operator. With `responseId` (since 0.2.0), the
 * line names the response it broke (`upstream error (resp_…): …`), as the access log line does.
 *
 * @since 0.1.0
 * @category errors
 */
export const logUpstreamError = (error: AiError.AiError, responseId?: string): Effect.Effect<void> =>
  Effect.logWarning(`upstream error${responseId === undefined ? "" : ` (${responseId})`}: ${capMessage(error.message)}`)

/**
 * The longest message the gateway puts into an answer or a log line (2,000 characters); longer ones are
 * cut, saying how much was cut.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_MESSAGE_CHARS = 2000

const refusedKey = (description: string) =>
  new GatewayError({ status: 401, description, errorType: "invalid_request_error", param: null, code: "invalid_api_key" })

const missingApiKey = refusedKey("No API key provided: send it as `Authorization: Bearer <key>`.")

const invalidApiKey = refusedKey("Incorrect API key provided. Send it as `Authorization: Bearer <key>`.")

// ---------------------------------------------------------------------------------------------------------
// request handling
// ---------------------------------------------------------------------------------------------------------

/** Compares in time independent of where the strings differ. */
const constantTimeEqual = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  for (let i = 0; i < b.length; i++) diff |= (a.charCodeAt(i % Math.max(a.length, 1)) || 0) ^ b.charCodeAt(i)
  return diff === 0
}

const keysOf = (options: Options): ReadonlyArray<Redacted.Redacted> => [
  ...(options.apiKey === undefined ? [] : [options.apiKey]),
  ...(options.apiKeys ?? [])
]

const tenants = new Map<string, Promise<string>>()

/**
 * The tenant of a bearer key: the hex SHA-256 digest of the key (the store never holds a key), `""` when
 * the gateway has no keys.
 */
const tenantOf = (key: string): Effect.Effect<string> =>
  Effect.promise(() => {
    let tenant = tenants.get(key)
    if (tenant === undefined) {
      tenant = globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)).then((digest) =>
        Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("")
      )
      tenants.set(key, tenant)
    }
    return tenant
  })

/** Checks the bearer key (every configured key is compared, in time independent of the match); its tenant. */
const authorize = (request: HttpServerRequest.HttpServerRequest, options: Options): Effect.Effect<string, GatewayError> => {
  const keys = keysOf(options)
  if (keys.length === 0) return Effect.succeed("")
  const header = Option.getOrUndefined(Headers.get(request.headers, "authorization")) ?? ""
  const match = /^Bearer\s+(.+)$/i.exec(header.trim())
  if (match === null) return Effect.fail(header.trim() === "" ? missingApiKey : invalidApiKey)
  let found: string | undefined
  for (const key of keys) if (constantTimeEqual(match[1]!, Redacted.value(key))) found = Redacted.value(key)
  return found === undefined ? Effect.fail(invalidApiKey) : tenantOf(found)
}

const tooLarge = (limit: number, close = false) =>
  new GatewayError({
    status: 413,
    description: `The request body is larger than ${limit} bytes.`,
    errorType: "invalid_request_error",
    param: null,
    code: "request_too_large",
    // a body refused by its content-length is never read: the connection cannot serve another request
    ...(close ? { headers: { connection: "close" } } : {})
  })

const unsupportedEncoding = (encoding: string) =>
  new GatewayError({
    status: 415,
    description: `The request body's content-encoding ${capMessage(encoding, 100)} is not supported: send the body uncompressed.`,
    errorType: "invalid_request_error",
    param: null,
    code: "unsupported_content_encoding"
  })

/**
 * How many bytes past the bound a body is read and discarded, after the 413, before the gateway closes the
 * connection (64 MiB): a client that streams on without end has its connection torn down.
 */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024

/**
 * The body's chunks of bytes, failing with 413 past `limit` bytes: at once by `content-length`, else (a chunked
 * body) as soon as the limit is passed while reading. A body refused by its `content-length` is answered at
 * once: when it declares more than `MAX_DRAIN_BYTES` past the bound it is not read at all, its 413 carries
 * `connection: close` and the connection is closed once the 413 is written (Node's server read and
 * discarded the declared bytes on a kept-alive connection: a `content-length: 1000000000` with no body held
 * its socket open); a smaller one is read and discarded in the background as below (until the body timeout),
 * so that a client still sending gets the 413, not a reset. A chunked body past the bound is answered while the client may still
 * be sending, and the rest of the body is read and discarded in the background (up to `MAX_DRAIN_BYTES`,
 * and until the body timeout) instead of ending the read: ending it destroys Node's request, which resets
 * the connection before the 413 is written (curl: "Connection reset by peer"). A client that reads while
 * it sends (curl, undici) gets the 413 at once and stops; one that ends its body within the drain bound
 * keeps a usable connection; one that sends more than that after the bound, or that stops sending without
 * ending its body (at the body timeout), has its connection closed. Every such close after the 413 is a
 * lingering one on Node's server (`RequestBody.closeLingering`, `lingerAfterAnswer`): the 413 written, reading
 * stopped, a FIN, and the socket destroyed when the client closes or `RequestBody.LINGER_MILLIS` (2 s) later.
 * Destroyed at once with the client's bytes unread, the connection was reset on the client's next segment,
 * and undici (fetch, the `openai` SDK) failed with EPIPE ("fetch failed", "Connection error.") before it read
 * the 413: 1-2 of 3 tries of a body 65-70 MiB past the bound against `serve`. A compressed body (a
 * `content-encoding` other than `identity`) is read whole the same way (within the bound) and refused with
 * 415, which names the encoding (read as JSON, it was "invalid JSON at position 0").
 */
const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number, timeout: Duration.Duration) =>
  Effect.gen(function*() {
    const declared = Number(Option.getOrUndefined(Headers.get(request.headers, "content-length")) ?? "0")
    if (Number.isFinite(declared) && declared > limit) {
      // within the drain bound: read and discarded in the background, as a chunked body past the bound is
      // (closed at once, a client still sending, as fetch does, got EPIPE instead of the 413: 9 times in 10
      // for 17 MiB); past it, the body is not read at all and the connection is closed after the 413
      if (declared > limit + MAX_DRAIN_BYTES) {
        RequestBody.lingerAfterAnswer(request)
        return yield* tooLarge(limit, true)
      }
      RequestBody.discard(request, limit + MAX_DRAIN_BYTES, Duration.toMillis(timeout))
      return yield* tooLarge(limit)
    }
    const encoding = Option.getOrUndefined(Headers.get(request.headers, "content-encoding"))?.trim().toLowerCase()
    const encoded = encoding !== undefined && encoding !== "" && encoding !== "identity"
    const chunks: Array<Uint8Array> = []
    let size = 0
    // each chunk within the bound checked as it arrives (a native decoder; bytes read one by one only past
    // a refusal), so that bytes that are no UTF-8 are never read as U+FFFD
    const utf8 = new Utf8Check()
    yield* RequestBody.forEachChunk(request, (chunk) => {
      size += chunk.length
      if (size <= limit && !encoded) {
        chunks.push(chunk)
        utf8.feed(chunk)
      }
      return size <= limit
    }, Duration.toMillis(timeout), MAX_DRAIN_BYTES).pipe(
      Effect.catchTags({
        RequestError: (error) =>
          Effect.fail(
            new GatewayError({
              status: 400,
              description: `The request body could not be read: ${error.message}`,
              errorType: "invalid_request_error",
              param: null,
              code: "invalid_body"
            })
          ),
        BodyTimeout: () =>
          Effect.fail(
            new GatewayError({
              status: 408,
              description: `The request body did not arrive whole within ${Duration.format(timeout)} (${size} bytes arrived).`,
              errorType: "invalid_request_error",
              param: null,
              code: "request_timeout",
              // the rest of the body is not read: the connection cannot serve another request
              headers: { connection: "close" }
            })
          )
      })
    )
    if (size > limit) {
      chunks.length = 0
      return yield* tooLarge(limit)
    }
    if (encoded) return yield* unsupportedEncoding(encoding)
    const notUtf8At = utf8.end()
    if (notUtf8At !== -1) {
      chunks.length = 0
      return yield* notUtf8(notUtf8At)
    }
    // the chunks as read: `JsonSlices` decodes the body piece by piece (one string or buffer of it all costs
    // tens of milliseconds at once)
    return chunks
  })

/**
 * Parses a request body as JSON. Fails with a 400 `invalid_json` `GatewayError` naming the 0-based offset,
 * line and column of the first character that is not JSON.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parseJson = (text: string): Either.Either<unknown, GatewayError> => {
  try {
    return Either.right(JSON.parse(text))
  } catch {
    const position = Math.max(syntaxErrorPosition(text), 0)
    const { column, line } = lineAndColumn(text, position)
    return Either.left(
      new GatewayError({
        status: 400,
        description: `We could not parse the JSON body of your request: invalid JSON at position ${position} (line ${line}, column ${column}).`,
        errorType: "invalid_request_error",
        param: null,
        code: "invalid_json"
      })
    )
  }
}

/**
 * The body of a non-streamed answer: the Response object's JSON with a `content-length` when it is one
 * piece (`ResponsesLifecycle.toJsonPieces`), else written a piece of about 64 Ki characters at a time, so
 * that a large answer's text stands in memory once (in the object), not again as one JSON string and as
 * its bytes, yielding to other requests every few milliseconds (`SseBody.pieceStream`). `onLeft` runs when
 * the client leaves before the last piece was written. A first piece of a whole piece's size may not be the
 * last: other requests are served before the second is made (the echo of 10,000 tools: 1-2 ms each, after
 * the upstream's answer was read and the Response object made). A long string whose JSON text the request's
 * fiber knows (`Cooperative.currentJsonTexts`: a 10 MB `instructions` echoed) is written as that text.
 */
const jsonAnswer = (
  object: ResponsesLifecycle.ResponseObject,
  onLeft: () => void
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  // the upstream's answer was read and the Response object made in this turn: other requests are served
  // before the first piece is made
  Effect.zipRight(yieldToIo, FiberRef.get(currentJsonTexts)).pipe(Effect.flatMap((texts) => {
    const pieces = ResponsesLifecycle.toJsonPieces(object, JSON_PIECE_CHARS, texts)
    const first = pieces.next()
    const one = first.done ? "" : first.value
    const rest = () => {
      const second = pieces.next()
      if (second.done) return HttpServerResponse.text(one, { contentType: "application/json" })
      return HttpServerResponse.stream(SseBody.pieceStream(SseBody.encoded([one, second.value], pieces), onLeft), {
        contentType: "application/json"
      })
    }
    // a piece shorter than a whole one is the last (`toJsonPieces` cuts only once a piece is whole)
    return one.length < JSON_PIECE_CHARS ? Effect.succeed(rest()) : Effect.andThen(yieldToIo, rest)
  }))

/** The size of a non-streamed answer's pieces (`ResponsesLifecycle.toJsonPieces`' default), in characters. */
const JSON_PIECE_CHARS = 64 * 1024

/** Logs a defect of the gateway at error level, its message capped (`MAX_MESSAGE_CHARS`). */
const logDefect = (cause: Cause.Cause<unknown>): Effect.Effect<void> => {
  const squashed = Cause.squash(cause)
  const text = squashed instanceof Error ? squashed.stack ?? squashed.message : String(squashed)
  return Effect.logError(`gateway defect: ${capMessage(text)}`)
}

const internalError = new GatewayError({
  status: 500,
  description: "The gateway failed while handling your request; the failure is logged.",
  errorType: "server_error",
  param: null,
  code: "server_error"
})

/**
 * A body that is no UTF-8, worded as the gateway's (and OpenAI's) "We could not parse the JSON body of your
 * request", with the byte offset of the first sequence that is no UTF-8 (`Utf8Check`).
 */
const notUtf8 = (offset: number) =>
  new GatewayError({
    status: 400,
    description: `We could not parse the JSON body of your request: it is not UTF-8 (at byte offset ${offset}).`,
    errorType: "invalid_request_error",
    param: null,
    code: "invalid_json"
  })

const tooDeep = (limit: number, offset: number) =>
  new GatewayError({
    status: 400,
    description: `The JSON body of your request is nested more than ${limit} levels deep (at position ${offset}).`,
    errorType: "invalid_request_error",
    param: null,
    code: "nesting_too_deep"
  })

/** A decoder's `RequestError` as the gateway answers it: a 400 naming the parameter. */
const badRequest = (error: ResponsesRequestDecoder.RequestError) =>
  new GatewayError({ status: 400, description: error.description, errorType: "invalid_request_error", param: error.param, code: error.code })

/**
 * An object of more than `MAX_OBJECT_PROPERTIES` members, found by the pass over the body (`wide`: the
 * top-level parameter holding it), worded as the API words its bound on `metadata`'s properties; an array
 * of more than `maxElements` elements (`MAX_ARRAY_ELEMENTS`, or `maxInputItems` when larger) as it words
 * its array bounds.
 */
const tooManyProperties = (wide: NonNullable<JsonSlices.Scan["wide"]>, maxElements: number) => {
  const max = ResponsesRequestDecoder.MAX_OBJECT_PROPERTIES
  const param = wide.key === undefined ? null : wide.index === undefined ? wide.key : `${wide.key}[${wide.index}]`
  if (wide.kind === "array") {
    return new GatewayError({
      status: 400,
      description: `Invalid ${param === null ? "request body" : `'${param}'`}: array too long. Expected an array with maximum length ${maxElements}, but got an array with more than ${maxElements} elements instead.`,
      errorType: "invalid_request_error",
      param,
      code: "array_above_max_length"
    })
  }
  return new GatewayError({
    status: 400,
    description: `Invalid ${param === null ? "request body" : `'${param}'`}: too many properties. Expected an object with at most ${max} properties, but got an object with more than ${max} properties instead.`,
    errorType: "invalid_request_error",
    param,
    code: "object_above_max_properties"
  })
}

const callOptions = (request: ResponsesRequestDecoder.DecodedRequest): LanguageModel.CallOptions => ({
  ...(request.tools.length === 0 ? {} : { tools: request.tools }),
  ...(request.toolChoice === undefined ? {} : { toolChoice: request.toolChoice })
})

/**
 * The handler of `POST /v1/responses` (see the module doc). Never fails: every error is an OpenAI-shaped
 * answer.
 *
 * @since 0.1.0
 * @category handlers
 */
export const createResponse = (
  options: Options = {}
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | Upstream.Upstream> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const tenant = yield* authorize(request, options)
    const body = yield* readBody(
      request,
      options.maxBodyBytes ?? MAX_BODY_BYTES,
      Duration.decode(options.bodyTimeout ?? BODY_TIMEOUT)
    )
    const maxDepth = options.maxJsonDepth ?? MAX_JSON_DEPTH
    // nesting checked and `input` elements found in one pass; parsed element by element (yielding)
    const maxElements = Math.max(ResponsesRequestDecoder.MAX_ARRAY_ELEMENTS, options.maxInputItems ?? 0)
    const found = yield* JsonSlices.scan(body, maxDepth, undefined, undefined, ResponsesRequestDecoder.MAX_OBJECT_PROPERTIES, maxElements)
    if (found.deepAt >= 0) return yield* tooDeep(maxDepth, found.deepAt)
    // bounds that would otherwise cost a long stretch of parsing and writing, checked before anything is parsed
    if (found.wide !== undefined) return yield* tooManyProperties(found.wide, maxElements)
    const tools = found.tools === undefined ? 0 : found.tools.items.length / 2
    if (tools > ResponsesRequestDecoder.MAX_TOOLS) {
      return yield* Effect.mapError(ResponsesRequestDecoder.tooManyTools(tools), badRequest)
    }
    const store = yield* Effect.serviceOption(ResponseStore.ResponseStore)
    const upstream = yield* Upstream.Upstream
    const decoderOptions: ResponsesRequestDecoder.Options = {
      builtinTools: options.builtinTools,
      inputFiles: options.inputFiles,
      maxInputItems: options.maxInputItems,
      // what the upstream never reads is not kept alive in the prompt while the request runs
      encryptedReasoning: upstream.readsEncryptedReasoning === false ? "drop" : "keep",
      itemAttributes: upstream.readsItemAttributes === false ? "drop" : "keep",
      imageFileIds: upstream.readsImageFileIds !== false,
      toolOutputsApart: upstream.readsToolOutputsApart !== false
    }
    // the access log names the model and streaming once the body is parsed, also for a request refused after
    const record = yield* FiberRef.get(Upstream.currentCallRecord)
    const noteRequest = (json: unknown) => {
      if (record === undefined || !GatewayState.isObject(json)) return
      if (typeof json.model === "string") record.model = json.model
      if (typeof json.stream === "boolean") record.streamed = json.stream
    }
    // the JSON text of the body's long strings parsed in slices: the upstream's request body and the echo
    // copy it instead of escaping the string (see `Cooperative.JsonText`), for this request's fiber
    const texts: Array<JsonText> = []
    yield* FiberRef.set(currentJsonTexts, texts)
    let prepared: GatewayState.Prepared | undefined
    let decoding: Effect.Effect<ResponsesRequestDecoder.DecodedRequest, ResponsesRequestDecoder.RequestError | GatewayError>
    if (Option.isSome(store)) {
      const json = yield* JsonSlices.parse(body, found, parseJson, undefined, texts)
      noteRequest(json)
      prepared = GatewayState.isObject(json)
        ? yield* GatewayState.prepare(store.value, tenant, json).pipe(Effect.mapError((fields) => new GatewayError(fields)))
        : undefined
      decoding = ResponsesRequestDecoder.decode(prepared === undefined ? json : prepared.body, decoderOptions)
    } else {
      // the `input` elements parsed as the decoder reads them, each garbage once decoded (only the prompt is
      // kept): the young generation's collections no longer copy the whole parsed body while the request runs
      const parsed = yield* JsonSlices.parseLazily(body, found, parseJson, undefined, texts)
      noteRequest(parsed.body)
      const input = parsed.input
      decoding = input === undefined
        ? ResponsesRequestDecoder.decode(parsed.body, decoderOptions)
        // a body that is no JSON answers as such, whatever the decoder found before its syntax error
        : ResponsesRequestDecoder.decodeElements(parsed.body, input, decoderOptions).pipe(
          Effect.tapErrorTag("RequestError", () => input.rest)
        )
    }
    const decodedRequest = yield* decoding.pipe(
      Effect.catchTag("RequestError", (error) => {
        // with `previous_response_id` the decoder read the stored items first: name the client's own
        const { description, param } = prepared === undefined
          ? error
          : GatewayState.clientTerms(prepared, error.param, error.description)
        return Effect.fail(
          new GatewayError({ status: 400, description, errorType: "invalid_request_error", param, code: error.code })
        )
      })
    )
    const decoded: ResponsesRequestDecoder.DecodedRequest = prepared === undefined ? decodedRequest : {
      ...decodedRequest,
      echo: { ...decodedRequest.echo, store: prepared.store, previous_response_id: prepared.previousResponseId }
    }
    // Saves the response when asked to; a store that fails does not cost the client the model's answer: it
    // gets the answer with `store: false` (it was not stored), the operator an error log line
    const save = (
      response: ResponsesLifecycle.ResponseObject
    ): Effect.Effect<ResponsesLifecycle.ResponseObject | undefined> =>
      prepared === undefined || Option.isNone(store)
        ? Effect.succeed(undefined)
        : GatewayState.save(store.value, tenant, prepared, response).pipe(
          Effect.as(undefined),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logError(`the response ${response.id} was not stored (answered with store: false): ${error.description}`),
              { ...response, store: false }
            )
          )
        )
    yield* annotateSpan({ "gen_ai.request.model": decoded.model, "gen_ai.operation.name": "chat" })
    const responseId = ResponsesLifecycle.makeId("resp")
    if (record !== undefined) {
      record.model = decoded.model
      record.streamed = decoded.stream
      record.responseId = responseId
    }
    const model = yield* upstream.languageModel(decoded)
    const unused = upstream.unusedParameters(decoded)
    if (unused.length > 0) {
      yield* Effect.logDebug(`request parameters accepted but not used by the upstream (echoed only): ${unused.join(", ")}`)
    }
    const lifecycleOptions: ResponsesLifecycle.Options = {
      responseId,
      createdAt: Math.floor(Date.now() / 1000),
      model: decoded.model,
      request: decoded
    }
    const shuttingDown = yield* Effect.serviceOption(ShuttingDown).pipe(
      Effect.map(Option.match({ onNone: () => () => false, onSome: (service) => service.now }))
    )
    // An upstream call's failure, logged: the upstream's, or the gateway's shutdown (which closes the
    // upstream connection first); before the answer began, an HTTP error, after, a `response.failed`.
    const byShutdown = (error: AiError.AiError): Effect.Effect<boolean> =>
      shuttingDown()
        ? Effect.as(Effect.logInfo(`a request in flight ended: ${SHUTTING_DOWN}`), true)
        : Effect.as(logUpstreamError(error, responseId), false)
    const failed = (error: AiError.AiError): Effect.Effect<never, GatewayError> =>
      Effect.flatMap(byShutdown(error), (down) =>
        Effect.fail(down ? shuttingDownError : decoded.stream ? fromAiError(error) : fromWholeAnswerError(error)))
    const midStreamError = (error: AiError.AiError): Effect.Effect<ResponsesLifecycle.ResponseError> =>
      Effect.map(byShutdown(error), (down) => down ? { code: "server_shutting_down", message: SHUTTING_DOWN } : responseErrorOf(error))
    if (!decoded.stream) {
      const response = yield* model.generate(decoded.prompt, callOptions(decoded)).pipe(Effect.catchAll(failed))
      const object = ResponsesLifecycle.fromModelResponse(lifecycleOptions, response)
      if (record !== undefined) record.outcome = object.status
      const unsaved = yield* save(object)
      // a body written in pieces that its client left before the last one: as a stream's (below)
      return yield* jsonAnswer(unsaved ?? object, () => {
        if (record !== undefined && !shuttingDown()) record.outcome = CLIENT_CLOSED
      })
    }
    const scope = yield* Scope.make()
    return yield* Effect.gen(function*() {
      // the channel's pull, not `Stream.toPull`'s, which wraps every pull's error in an `Option` and matches
      // its `Either` (four fiber steps per upstream chunk: 29 -> 25); made in `scope` directly (`toPullIn`),
      // not by `toPull` under `Scope.extend`, which provides the scope to the effect (17 fiber steps)
      const pull = yield* Channel.toPullIn(Stream.toChannel(model.stream(decoded.prompt, callOptions(decoded))), scope)
      const first = yield* pull.pipe(
        Effect.catchAll(failed),
        Effect.flatMap(Either.match({
          onLeft: () =>
            Effect.fail(
              new GatewayError({
                status: 502,
                description: "the upstream answered with an empty stream",
                errorType: "server_error",
                param: null,
                code: "upstream_error"
              })
            ),
          onRight: Effect.succeed
        }))
      )
      const onTerminal = (response: ResponsesLifecycle.ResponseObject) =>
        Effect.zipRight(
          Effect.sync(() => {
            if (record !== undefined) record.outcome = response.status
          }),
          save(response)
        )
      return yield* SseBody.response(request, {
        lifecycle: ResponsesLifecycle.make(lifecycleOptions),
        first,
        pull,
        scope,
        midStreamError,
        onTerminal,
        onDefect: logDefect,
        jsonTexts: texts,
        // a body dropped as the gateway shuts down keeps the outcome its `response.failed` gave
        onLeft: () => {
          if (record !== undefined && !shuttingDown()) record.outcome = CLIENT_CLOSED
        }
      })
    }).pipe(Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit)))
  }).pipe(
    Effect.catchAll((error) => Effect.succeed(error.response)),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.as(logDefect(cause), internalError.response)
    ),
    spannedWhenTraced("Gateway.createResponse")
  )

/**
 * `Effect.annotateCurrentSpan(values)`, left out when there is no current span (a request with tracing
 * off), where it would build a `NoSuchElementException`, its stack trace included, and drop it.
 */
const annotateSpan = (values: Record<string, unknown>): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => fiber.currentSpan === undefined ? Effect.void : Effect.annotateCurrentSpan(values))

/**
 * `effect` in a span `name` when the fiber traces; with tracing off (`untracedRequests`), as it is. A span
 * made with tracing off is a no-op span, recorded nowhere, but a current span all the same: the upstream
 * client, finding one, took the call for a traced one (`HttpTransport.isUntraced`) and made its own no-op
 * spans under it (39 fiber steps of a streamed request's 538 with this span's own, packages/bench/RESULTS.md,
 * "the gateway's CPU per request, round 5").
 */
const spannedWhenTraced = (name: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(effect, name) : effect
  )

/**
 * The handler of `GET /v1/models`: the upstream's answer, passed through (status, content type, body);
 * 502 when the upstream cannot be reached.
 *
 * @since 0.1.0
 * @category handlers
 */
export const listModels = (
  options: Options = {}
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | Upstream.Upstream> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* authorize(request, options)
    const upstream = yield* Upstream.Upstream
    const answer = yield* upstream.listModels.pipe(Effect.tapError(logUpstreamError), Effect.mapError(fromAiError))
    return HttpServerResponse.text(answer.body, { status: answer.status, contentType: answer.contentType })
  }).pipe(Effect.catchAll((error) => Effect.succeed(error.response)))

/** A path's rest as an id: percent-decoded once (`a%2Fb` is `a/b`), kept as it is when that fails. */
const decodePathId = (rest: string): string => {
  try {
    return decodeURIComponent(rest)
  } catch {
    return rest
  }
}

/**
 * The handler of `GET /v1/models/{id}` (the SDKs' `models.retrieve`): the model object of that id in the
 * upstream's model list (`Upstream.Service.listModels`), else 404 `model_not_found` as the API answers
 * ("The model '…' does not exist"). An upstream answer that is no list is passed through as it is. The id
 * may hold slashes (Hugging Face names such as `meta-llama/Llama-3.1-8B-Instruct`), encoded or not.
 *
 * @since 0.2.0
 * @category handlers
 */
export const retrieveModel = (
  options: Options = {}
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext | Upstream.Upstream
> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* authorize(request, options)
    const id = decodePathId((yield* HttpRouter.params)["*"] ?? "")
    const upstream = yield* Upstream.Upstream
    const answer = yield* upstream.listModels.pipe(Effect.tapError(logUpstreamError), Effect.mapError(fromAiError))
    let list: unknown
    try {
      list = answer.status === 200 ? JSON.parse(answer.body) : undefined
    } catch {
      list = undefined
    }
    const data = GatewayState.isObject(list) && Array.isArray(list.data) ? list.data : undefined
    if (data === undefined) return HttpServerResponse.text(answer.body, { status: answer.status, contentType: answer.contentType })
    const model: unknown = data.find((entry) => GatewayState.isObject(entry) && entry.id === id)
    if (model === undefined) {
      return yield* new GatewayError({
        status: 404,
        description: `The model '${capMessage(id, 200)}' does not exist`,
        errorType: "invalid_request_error",
        param: "model",
        code: "model_not_found"
      })
    }
    return HttpServerResponse.unsafeJson(model)
  }).pipe(Effect.catchAll((error) => Effect.succeed(error.response)))

/**
 * A handler of the stored responses' routes: with the `ResponseStore` in the context, `use` with the
 * store, the request's tenant, the path's `id` and the query; without one, 404 naming the id (nothing is
 * stored). Never fails: every error is an OpenAI-shaped answer.
 */
const storedResponseRoute = <A>(
  options: Options,
  use: (
    store: ResponseStore.Service,
    tenant: string,
    id: string,
    query: URLSearchParams
  ) => Effect.Effect<A, GatewayState.ErrorFields>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext
> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const tenant = yield* authorize(request, options)
    const id = (yield* HttpRouter.params).id ?? ""
    const store = yield* Effect.serviceOption(ResponseStore.ResponseStore)
    if (Option.isNone(store)) {
      const notFound = GatewayState.responseNotFound(id)
      return yield* new GatewayError({
        ...notFound,
        description: `${notFound.description.slice(0, -1)}: this gateway keeps no responses (it runs without a response store).`
      })
    }
    const query = new URL(request.url, "http://gateway").searchParams
    const answer = yield* use(store.value, tenant, id, query).pipe(Effect.mapError((fields) => new GatewayError(fields)))
    return HttpServerResponse.unsafeJson(answer)
  }).pipe(Effect.catchAll((error) => Effect.succeed(error.response)))

/**
 * The handler of `GET /v1/responses/{id}`: the stored Response object (404 when it is not stored for the
 * request's key, expired, or the gateway has no `ResponseStore`: then the message says it keeps no
 * responses). The query's `include` is accepted: the
 * stored object holds everything the gateway produced; `stream=true` (replaying a background response's
 * events) is refused with 400, as the gateway runs no background responses.
 *
 * @since 0.2.0
 * @category handlers
 */
export const getResponse = (options: Options = {}) =>
  storedResponseRoute(options, (store, tenant, id, query) =>
    query.get("stream") === "true"
      ? Effect.fail<GatewayState.ErrorFields>({
        status: 400,
        description: "This gateway does not run background responses, so there are no events to stream: leave out 'stream'.",
        errorType: "invalid_request_error",
        param: "stream",
        code: "unsupported_value"
      })
      : GatewayState.getResponse(store, tenant, id))

/**
 * The handler of `GET /v1/responses/{id}/input_items`: a page of the response's input items
 * (`{object: "list", data, first_id, last_id, has_more}`; query `limit` 1 to 100, default 20, `order`
 * `asc` / `desc` (default), `after` an item id); 400 `invalid_value` for a bad `limit` or `order`, or an
 * `after` that is no input item of the response (the API reference does not say what it answers then), 404 as
 * `getResponse`. Source: the API reference, "List input items".
 *
 * @since 0.2.0
 * @category handlers
 */
export const listInputItems = (options: Options = {}) =>
  storedResponseRoute(options, GatewayState.listInputItems)

/**
 * The handler of `DELETE /v1/responses/{id}`: deletes the stored response and its items, answering
 * `{id, object: "response", deleted: true}`; 404 as `getResponse`.
 *
 * @since 0.2.0
 * @category handlers
 */
export const deleteResponse = (options: Options = {}) =>
  storedResponseRoute(options, (store, tenant, id) => GatewayState.deleteResponse(store, tenant, id))

/**
 * The gateway's routes (see the module doc), with OpenAI-shaped 404s for any other path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const router = (options: Options = {}) =>
  HttpRouter.empty.pipe(
    HttpRouter.post("/v1/responses", createResponse(options)),
    HttpRouter.get("/v1/responses/:id", getResponse(options)),
    HttpRouter.get("/v1/responses/:id/input_items", listInputItems(options)),
    HttpRouter.del("/v1/responses/:id", deleteResponse(options)),
    HttpRouter.get("/v1/models", listModels(options)),
    // a wildcard: model ids hold slashes (`meta-llama/Llama-3.1-8B-Instruct`), sent encoded or not
    HttpRouter.get("/v1/models/*", retrieveModel(options)),
    HttpRouter.get("/health", HttpServerResponse.unsafeJson({ status: "ok" })),
    // what uptime monitors and some load balancers check with (Node's server sends no body to a HEAD)
    HttpRouter.head("/health", HttpServerResponse.unsafeJson({ status: "ok" })),
    HttpRouter.all("*", 
      Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        new GatewayError({
          status: 404,
          description: `Invalid URL (${request.method} ${request.url})${withoutV1Hint(request.url)}`,
          errorType: "invalid_request_error",
          param: null,
          code: null
        }).response))
  )

/**
 * For a path the gateway serves under `/v1` asked without it (`POST /responses`, a client whose base URL is
 * `http://host:8787` rather than `http://host:8787/v1`): `: try /v1/responses` (the query left out).
 */
const withoutV1Hint = (url: string): string => {
  const path = url.split("?")[0]!
  return /^\/(responses|models)(\/|$)/.test(path) ? `: try /v1${path} (the gateway's base URL ends in /v1)` : ""
}

/** The access log's `outcome` of a stream its client left before its end (as status 499's "client closed request"). */
const CLIENT_CLOSED = "client_closed"

/**
 * The access log middleware: one info line per request once its answer was written (for a stream, when
 * it ended), `access: METHOD PATH STATUS model=… stream=… duration=…ms upstream_attempts=… response=…
 * outcome=…`; `model` and `stream` for `POST /v1/responses` once the body was decoded, `upstream_attempts`
 * when the upstream counts them, `response` (the response's id) once the upstream call began and
 * `outcome` (the response's final status: `completed`, `incomplete`, `failed`, which a stream reports after
 * its 200) once it finished (`Upstream.CallRecord`), `client_closed` for a stream, or a non-streamed body
 * written in pieces (over about 64 Ki characters), its client left before reading its end (the answer cut off, whatever the response's status came to), `-` where unknown. The gateway's warnings about an
 * upstream error name the same response id. No bodies, no headers, no keys. A
 * request whose handling ended without an answer has the status the platform gives it: 499 ("client
 * closed request", as nginx logs it) when its client went away before the answer began (which aborts the
 * upstream call), 503 when the server interrupted it; a stream or a body written in pieces that its client
 * left is logged with the 200 already sent and `outcome=client_closed`.
 *
 * @since 0.2.0
 * @category middleware
 */
export const accessLog = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const record: Upstream.CallRecord = {
      model: undefined,
      streamed: undefined,
      attempts: undefined,
      responseId: undefined,
      outcome: undefined
    }
    const start = performance.now()
    const line = (status: number | string) =>
      `access: ${request.method} ${capMessage(request.url, 200)} ${status} model=${
        record.model === undefined ? "-" : JSON.stringify(capMessage(record.model, 100))
      } stream=${record.streamed ?? "-"} duration=${Math.round(performance.now() - start)}ms upstream_attempts=${
        record.attempts ?? "-"
      } response=${record.responseId ?? "-"} outcome=${record.outcome ?? "-"}`
    // set in the request's own fiber (the platform runs each request in a fiber of its own), which ends with
    // it: `Effect.locally` would restore the previous value around `app` (about 16 fiber steps a request)
    yield* FiberRef.set(Upstream.currentCallRecord, record)
    const response = yield* app.pipe(
      Effect.tapErrorCause((cause) => Effect.logInfo(line(HttpServerError.causeResponseStripped(cause)[0].status)))
    )
    // the platform writes the answer (a stream to its end) inside `app`, so it is complete here
    yield* Effect.logInfo(line(response.status))
    return response
  })

/**
 * Gateway options that cannot serve: an `apiKey` that is empty (e.g. `--api-key-env VAR` with `VAR` set
 * to `""`) or has leading or trailing white space, which no `Authorization` header can carry, so that every
 * request would get a 401; a `maxBodyBytes`, `maxInputItems` or `maxJsonDepth` that is not a positive
 * integer; a `maxBodyBytes` over `MAX_BODY_BYTES_LIMIT`.
 *
 * @since 0.1.0
 * @category errors
 */
export class GatewayOptionsError
  extends Schema.TaggedError<GatewayOptionsError>("@effect-responses/server/GatewayOptionsError")("GatewayOptionsError", {
    description: Schema.String
  })
{
  override get message(): string {
    return this.description
  }
}

/**
 * Checks `options` before serving (see `GatewayOptionsError`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const validateOptions = (options: Options): Effect.Effect<Options, GatewayOptionsError> => {
  for (const apiKey of keysOf(options)) {
    const key = Redacted.value(apiKey)
    if (key.trim() === "") {
      return Effect.fail(
        new GatewayOptionsError({
          description:
            "the gateway's API key is empty (is the variable named by --api-key-env set to \"\"?): every request would be refused with 401; set a non-empty key, or serve without one"
        })
      )
    }
    if (key.trim() !== key) {
      return Effect.fail(
        new GatewayOptionsError({
          description:
            "the gateway's API key starts or ends with white space, which no `Authorization: Bearer` header can carry: every request would be refused with 401; remove it"
        })
      )
    }
  }
  for (const name of ["maxBodyBytes", "maxInputItems", "maxJsonDepth"] as const) {
    const value = options[name]
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      return Effect.fail(new GatewayOptionsError({ description: `${name} must be a positive integer, not ${value}` }))
    }
  }
  if (options.maxBodyBytes !== undefined && options.maxBodyBytes > MAX_BODY_BYTES_LIMIT) {
    return Effect.fail(
      new GatewayOptionsError({
        description: `maxBodyBytes must be at most ${MAX_BODY_BYTES_LIMIT} (Node's longest string, which a body that is ` +
          `no JSON is decoded into whole, is that many characters), not ${options.maxBodyBytes}`
      })
    )
  }
  return Effect.succeed(options)
}

/** Effect's own tracer, the one in use when no tracer is installed: its spans are recorded nowhere. */
let nativeTracer: unknown
const isNativeTracer = (tracer: unknown): boolean => {
  nativeTracer ??= Effect.runSync(Effect.tracer)
  return tracer === nativeTracer
}

/** Whether a request carries no trace context (`traceparent`, `b3`, `x-b3-*`): nothing to continue. */
const untraced = (request: HttpServerRequest.HttpServerRequest): boolean =>
  Option.isNone(HttpTraceContext.fromHeaders(request.headers))

/**
 * With no tracer installed, a request without trace context runs with tracing off: no server span (the
 * platform's tracer middleware, its URL and headers as attributes), no spans of the gateway and its
 * upstream client, no trace headers sent upstream. Those spans went nowhere, and they cost 71 of 599 fiber
 * steps and a few per cent of the CPU of a one-delta streamed request (packages/bench/RESULTS.md, "the
 * gateway's CPU per request, round 3"). A request with trace context is traced as before (its trace
 * continues upstream).
 */
const withoutUnrecordedSpans = <A, E, R>(serve: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.locallyWith(serve, HttpMiddleware.currentTracerDisabledWhen, (disabled) => (request) =>
    disabled(request) || untraced(request))

/** The middleware half of `withoutUnrecordedSpans`: Effect's spans off for a request without trace context. */
const untracedRequests = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    // set in the request's own fiber, which ends with it (see `accessLog`)
    untraced(request) ? Effect.zipRight(FiberRef.set(FiberRef.currentTracerEnabled, false), app) : app)

/**
 * Serves the gateway on the `HttpServer` in the context (e.g. `NodeHttpServer.layer(createServer, {port:
 * 8787, host: "127.0.0.1"})`), over the `Upstream` in the context. Fails with `GatewayOptionsError`, before
 * serving anything, when the options cannot serve (`validateOptions`). Once the layer is being released (the
 * app shuts down), a request in flight whose upstream call then ends in an error (the upstream connection
 * closed by the shutdown) gets `server_shutting_down` (`SHUTTING_DOWN`): `response.failed` once its stream
 * began, else a 503; logged at info rather than as an upstream error.
 *
 * Spans: with a tracer installed (in the context the layer is built in), each request has the platform's
 * server span, `Gateway.createResponse` and the upstream client's spans. With none, a request without trace
 * context (`traceparent`, `b3`, `x-b3-*`) makes no spans and sends no trace headers upstream (spans
 * of Effect's own tracer are recorded nowhere); one with trace context is traced as with a tracer, so that
 * its trace continues upstream.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<never, GatewayOptionsError, HttpServer.HttpServer | Upstream.Upstream> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const valid = yield* validateOptions(options)
      const untracedUnlessTraced = isNativeTracer(yield* Effect.tracer)
      const app = router(valid)
      const serve = valid.accessLog === false
        ? (untracedUnlessTraced ? HttpServer.serve(app, untracedRequests) : HttpServer.serve(app))
        : HttpServer.serve(app, untracedUnlessTraced ? (app) => accessLog(untracedRequests(app)) : accessLog)
      return Layer.provide(untracedUnlessTraced ? withoutUnrecordedSpans(serve) : serve, shuttingDownLayer)
    })
  )
