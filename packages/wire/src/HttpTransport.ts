/**
 * The HTTP transport of an OpenAI-style JSON endpoint (`POST {baseUrl}/responses`,
 * `POST {baseUrl}/chat/completions`), over `@effect/platform`'s `HttpClient` (the application provides the
 * platform layer, e.g. `NodeHttpClient.layerUndici`). The protocol clients add their request bodies,
 * decoders and telemetry on top.
 *
 * - The API key (`Redacted`) goes only into the `Authorization: Bearer` header, and is cut out of any
 *   error body that echoes it (a key of at least `MIN_SECRET_LENGTH` characters: see `scrubSecret`); it
 *   never appears in an error. Without a key no `Authorization` header is sent, which suits local servers.
 * - A non-2xx answer fails with `AiError.HttpError`, read from OpenAI's error body
 *   `{"error":{"message","type","param","code"}}` (or Gemini's list holding one such object) by
 *   `AiError.httpErrorFromResponse`, with the
 *   `x-request-id` header as `requestId` and `retry-after-ms` / `retry-after` as `retryAfter`. Only the
 *   first `MAX_ERROR_BODY_BYTES` of an error body are read: a server that answers a 100 MB error costs
 *   64 KiB (the message of a JSON body cut there is read from what was read, else the description says
 *   the body was cut). A message or body is kept up to `AiError.MAX_MESSAGE` characters, saying how much
 *   was cut. A 404 from a base URL that has no path (`http://127.0.0.1:8787`, for a server that serves
 *   `…/v1/responses`) says so in its description: `the base URL has no /v1: try http://127.0.0.1:8787/v1`
 *   (`noPathHint`), unless the server's answer already names `/v1` (the gateway's 404 does). A redirect
 *   (3xx) is never followed (the request and its key go to the base URL only): its `HttpError` names the
 *   status and the `location`, with the base URL to set when the target is the same endpoint elsewhere
 *   (`redirectHint`: `http://` for a host that redirects to `https://`).
 * - A body in a `content-encoding` (a server or proxy that compresses though the client did not ask) is
 *   decoded as it is read, as fetch-based SDKs do: `gzip` (`x-gzip`) and `deflate` with the web
 *   `DecompressionStream`, `br` with Node's zlib. Every bound above and below counts decoded bytes, so a
 *   small compressed body cannot be made to hold more than a plain one. A body `fetch` already decoded
 *   (a `FetchHttpClient` answer, which keeps the header) is not decoded twice. Any other coding (or a list
 *   of them) fails with `AiError.MalformedOutput` naming it (`the server answered HTTP 200 with
 *   content-encoding compress, which this client does not decode (…)`), the body not read.
 * - A request that gets no answer, or a body that breaks off, fails with `AiError.TransportError`.
 * - No call waits forever (`Options.headersTimeout`, default 10 minutes; `Options.idleTimeout`, default 5
 *   minutes; `false` turns each off): no response headers in time, or a body silent for too long between
 *   two chunks, fail with a `TransportError` whose `timeout` says which (`headers` / `idle`), and abort the
 *   request. In an event stream keep-alives are silence, so a server that only keeps the connection alive
 *   cannot hold a call either: decoded (`decodeBody`), only what the decoder decodes counts (comment lines
 *   such as `: ping` and `: OPENROUTER PROCESSING`, `event: ping`, events without data and events the
 *   decoder skips do not); as bytes (`bodyStream`), only chunks with something of an event in them. An error body must also arrive whole within the headers timeout of
 *   its attempt, and a non-streaming answer's body within another one from its headers (`readJson`), so
 *   that a server trickling a body a byte at a time, each within the idle timeout, cannot hold a call: both
 *   fail as a headers timeout (a whole answer's with `bytesReceived`, the bytes of its body that had
 *   arrived, since 0.2.0: as with the idle timeout, not retryable after its first byte). A non-streaming answer's body is read up to `Options.maxJsonBytes` (default
 *   `DEFAULT_MAX_JSON_BYTES`, 64 MiB); a larger one fails with `MalformedOutput`, the rest not read. A
 *   headers timeout is retried like any transport error. A body that stalls or breaks off
 *   fails after the chunks that arrived, with `bytesReceived` set; after its first byte the error is not
 *   retryable (`retryable` false: the model has begun its answer, a second request is a second answer).
 *   The idle timeout is one timer per body, moved on at every chunk (not a race per read), and counts only
 *   the server's silence, not the time a slow consumer takes.
 * - A streamed request answered 2xx with a body that is plainly not an event stream (`content-type`
 *   `text/html`, or JSON) fails with `AiError.MalformedOutput` naming the content type, with an excerpt.
 * - Retries (`RetryOptions`, `retrySchedule`): only retryable errors, and only before the first byte of a
 *   2xx body: a stream that breaks off after its first byte is never sent again. Apart from them a request
 *   is never sent twice: with retries off (`{ times: 0 }`) each call is one HTTP request. A connection that
 *   the server closes or resets after the request was written and before any response (undici's "other
 *   side closed", `ECONNRESET`, `EPIPE`) fails with a `TransportError` whose `closedBeforeResponse` is
 *   `true`: the client cannot tell a server that closed an idle kept-alive connection as the request went
 *   out from one that read the request and then died, so the request may have been received (as RFC 9110
 *   section 9.2.2 says, a client must not resend a POST it cannot know was not applied). A request that was
 *   never written is not this transport's to resend: undici sends a queued request on another connection
 *   itself when the one it waited for closes, and checks an idle connection for a close already received
 *   before writing on it.
 * - Interrupting the fiber aborts the HTTP request.
 *
 * @since 0.1.0
 */
import { AiError } from "@effect-responses/core"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import { constTrue } from "effect/Function"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import type * as Framing from "./Framing.js"
import * as ContentEncoding from "./internal/contentEncoding.js"
import { asBytes, asEventBytes, watchBody } from "./internal/idleTimeout.js"
import { jsonBytes } from "./internal/jsonBody.js"
import * as Timer from "./internal/timer.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * How failed requests are retried: up to `times` retries (default 2) after the first attempt, waiting
 * `base` (default 500 ms) times 2 per retry, with jitter (each wait scaled by a random factor between 0.8
 * and 1.2), each wait at most `maxDelay` (default 8 s). When the server sends `retry-after-ms` or
 * `retry-after`, that wait is used instead; one longer than `maxRetryAfter` (default 60 s) is not waited
 * for: the error is returned at once, with its `retryAfter` (a server that says "in an hour" would answer
 * the same to a retry a minute later, and the caller is not held meanwhile). Only retryable errors
 * are retried (`AiError`'s `retryable`: 408, 409, 429 except `insufficient_quota`, 5xx, transport errors).
 * `onRetry`, when given, runs before each wait with the retry's number (1 for the first retry), the wait
 * and the error that caused it (e.g. for a command line to say that it waits, and how long).
 *
 * `stop` (since 0.2.0), when given, is an effect that completes when retrying must end (the app shutting
 * down: `Upstream.chatCompletions` of the server package completes its own as its layer is released). Once it
 * has, a failed attempt is not retried, and a wait between attempts, or a retry's attempt in flight (its
 * HTTP request aborted), is cut short: the call fails at once with the last failed attempt's error. It is
 * watched only from an attempt's failure on (a call whose first attempt succeeds never looks at it), and not
 * at all with `times: 0`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryOptions {
  readonly times?: number | undefined
  readonly base?: Duration.DurationInput | undefined
  readonly maxDelay?: Duration.DurationInput | undefined
  readonly maxRetryAfter?: Duration.DurationInput | undefined
  readonly onRetry?:
    | ((retry: { readonly attempt: number; readonly wait: Duration.Duration; readonly error: AiError.AiError }) => Effect.Effect<void>)
    | undefined
  readonly stop?: Effect.Effect<void> | undefined
}

/**
 * The transport's settings: `apiKey` (optional: none means no `Authorization` header), `baseUrl` (default
 * `DEFAULT_BASE_URL`, without the endpoint path; trailing slashes are dropped), extra `headers` sent with
 * every request (e.g. `OpenAI-Organization`, Azure's `api-key`), `retry` (see `RetryOptions`;
 * `{ times: 0 }` turns retries off), `headersTimeout` (the longest wait for the response headers of one
 * attempt; default `DEFAULT_HEADERS_TIMEOUT`, 10 minutes; `false` for none), `idleTimeout` (the longest
 * silence between two chunks of a response body, streamed or not, where in an event stream keep-alives,
 * such as SSE comments and pings, are silence too; default `DEFAULT_IDLE_TIMEOUT`, 5 minutes; `false`
 * for none) and `transformClient` (the `HttpClient` of the context in, the one the
 * transport sends with out: for a proxy, more headers, logging or a retry policy of one's own; the
 * transport's own retries and timeouts wrap what it returns) and `maxJsonBytes` (the largest body
 * `readJson` reads, in bytes; default `DEFAULT_MAX_JSON_BYTES`, 64 MiB).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly apiKey?: Redacted.Redacted | undefined
  readonly baseUrl?: string | undefined
  readonly headers?: { readonly [name: string]: string } | undefined
  readonly retry?: RetryOptions | undefined
  readonly headersTimeout?: Duration.DurationInput | false | undefined
  readonly idleTimeout?: Duration.DurationInput | false | undefined
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
  readonly maxJsonBytes?: number | undefined
}

/**
 * The default headers timeout (the longest wait for response headers, per attempt): 10 minutes, as the
 * official OpenAI SDKs use; a non-streaming call answers only once the whole response is generated, which
 * a reasoning model may take minutes to do.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_HEADERS_TIMEOUT: Duration.Duration = Duration.minutes(10)

/**
 * The default idle timeout (the longest silence between two chunks of a response body): 5 minutes. A
 * stream sends events far more often; a silence that long is a stalled
 * connection.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_IDLE_TIMEOUT: Duration.Duration = Duration.minutes(5)

/**
 * The shortest API key cut out of error text (characters): 8. A shorter key (a local server's
 * `OPENAI_API_KEY=x`) is no secret, and cutting it out would mangle every message that holds its letters
 * ("upstream exploded" would become "upstream e[redacted]ploded").
 *
 * @since 0.2.0
 * @category constants
 */
export const MIN_SECRET_LENGTH = 8

/**
 * `text` with every occurrence of `secret`, and of its percent-encoded form (`encodeURIComponent`: a key
 * in a URL, such as a redirect's target), replaced by `[redacted]` when `secret` is at least
 * `MIN_SECRET_LENGTH` characters long; else `text` unchanged.
 *
 * @since 0.2.0
 * @category errors
 */
export const scrubSecret = (text: string, secret: string): string => {
  if (secret.length < MIN_SECRET_LENGTH) return text
  const scrubbed = text.split(secret).join("[redacted]")
  const encoded = encodeURIComponent(secret)
  return encoded === secret ? scrubbed : scrubbed.split(encoded).join("[redacted]")
}

/**
 * `error` with `secret` cut out of every text field (`description`, `excerpt`, `param`, …) as `scrubSecret`
 * cuts it; the same error when no field holds it (or the secret is shorter than `MIN_SECRET_LENGTH`). For
 * errors built from what a server sent (a stream's `error` event, a failed response, an excerpt of a
 * malformed event), which may echo the request's key.
 *
 * @since 0.2.0
 * @category errors
 */
export const scrubError = <E extends AiError.AiError>(error: E, secret: string): E => {
  if (secret.length < MIN_SECRET_LENGTH) return error
  let changed = false
  const fields: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(error)) {
    const scrubbed = typeof value === "string" ? scrubSecret(value, secret) : value
    fields[name] = scrubbed
    if (scrubbed !== value) changed = true
  }
  if (!changed) return error
  const ErrorClass = error.constructor as new(fields: Record<string, unknown>, disableValidation: boolean) => E
  return new ErrorClass(fields, true)
}

/** A timeout option: `false` or an infinite duration for none, `undefined` for the default. */
const timeoutOf = (
  input: Duration.DurationInput | false | undefined,
  fallback: Duration.Duration
): Duration.Duration | undefined => {
  if (input === false) return undefined
  const duration = input === undefined ? fallback : Duration.decode(input)
  return Duration.isFinite(duration) ? duration : undefined
}

/**
 * What sending a request can fail with: `HttpError` (a non-2xx status), `TransportError` (no answer, or a
 * timeout), `InvalidPrompt` (a body that cannot be encoded as JSON), `MalformedOutput` (a streamed request
 * answered 2xx with another content type than an event stream).
 *
 * @since 0.2.0
 * @category models
 */
export type ExecuteError = AiError.HttpError | AiError.TransportError | AiError.InvalidPrompt | AiError.MalformedOutput

/**
 * A transport bound to one endpoint.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpTransport {
  /** The endpoint's URL: the base URL, then the path. */
  readonly url: string
  /**
   * `POST {url}` with `{ ...body, stream }` as JSON and `accept: text/event-stream` (streamed) or
   * `application/json`; succeeds with a 2xx response whose body is not read yet. Fails with `HttpError`
   * (a non-2xx status, its body read whole), `TransportError` (no answer), `InvalidPrompt` (a body that
   * cannot be encoded as JSON) or `MalformedOutput` (a streamed request answered without an event stream),
   * after the retries `RetryOptions` allow (`ExecuteError`). `parent`, when given, is the span the request's
   * own span (the `HttpClient`'s) and the retries' logs go under, as with
   * `Effect.withParentSpan(execute(body, stream), parent)`, which costs about 25 fiber steps more per call
   * (here it is set in the fiber of each attempt's headers timeout, where nothing has to be restored).
   */
  readonly execute: (
    body: object,
    stream: boolean,
    parent?: Tracer.AnySpan
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, ExecuteError>
  /**
   * The whole body of a response as JSON, the API key cut out of it when the server echoes it (a failed
   * response's `error.message`, say: the errors made from it must not hold the key). Fails with
   * `TransportError` when the body breaks off, goes silent for the idle timeout (`timeout` `idle`) or has
   * not arrived whole within the headers timeout (`timeout` `headers`), each with `bytesReceived`, the
   * bytes of the body that had arrived (the headers timeout's since 0.2.0), or `MalformedOutput` (with an excerpt of the text) when it is not JSON or is larger than
   * `Options.maxJsonBytes` (the rest of it is not read).
   */
  readonly readJson: (
    response: HttpClientResponse.HttpClientResponse
  ) => Effect.Effect<unknown, AiError.TransportError | AiError.MalformedOutput>
  /**
   * The body of a streamed response (an event stream) as bytes, a break-off or a silence longer than the
   * idle timeout failing with `TransportError` (with `bytesReceived`: not retryable after the first byte)
   * after the chunks that arrived. Chunks that hold nothing of an event (only SSE comment lines, such as
   * keep-alive pings, and blank lines) are handed on but do not count as activity: a server that only
   * pings fails with the idle timeout too.
   */
  readonly bodyStream: (
    response: HttpClientResponse.HttpClientResponse
  ) => Stream.Stream<Uint8Array, AiError.TransportError>
  /**
   * The body of a streamed response (an event stream) decoded as it is read by a decoder that
   * `makeDecoder` makes for it (e.g. `Framing.bytesDecoder`): `bodyStream` and its failures and timeouts,
   * with the decoder's steps taken in the body's own channel rather than in a stage piped after it (one
   * channel executor per call less, and no hand-off per chunk). The idle timeout counts only what the
   * decoder decodes: keep-alives of any kind (comments, `event: ping`, events without data, events the
   * decoder skips such as `data: {}` in a Chat Completions stream) are silence.
   *
   * @since 0.2.0
   */
  readonly decodeBody: <A, D>(
    response: HttpClientResponse.HttpClientResponse,
    makeDecoder: () => Framing.BytesDecoder<A, D>
  ) => Stream.Stream<A, AiError.TransportError | D>
  /**
   * `error` with the API key cut out of its text (`scrubError`): for the errors a protocol client builds
   * from what the server sent.
   */
  readonly scrubError: <E extends AiError.AiError>(error: E) => E
}

/**
 * The default base URL, `https://api.openai.com/v1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1"

/**
 * How much of a non-2xx answer's body is read (64 KiB): enough for any error object, and a bound on what a
 * misbehaving server can make its client hold.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024

/**
 * The default bound on a non-streaming answer's body read by `readJson` (`Options.maxJsonBytes`): 64 MiB,
 * four times the largest event a stream decoder takes (16 MiB) and far above any model's whole answer. A
 * larger body fails with `MalformedOutput` once the bound is passed, instead of being held whole (a
 * server's 400 MB answer took 1.3 GB, and one over V8's longest string, about 512 MiB, was a defect).
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_MAX_JSON_BYTES = 64 * 1024 * 1024

/**
 * Up to `max` bytes of `stream` as text (UTF-8), with `…` appended when the body was longer; the rest of
 * the body is not read (ending the stream releases the connection). Fails as `stream` fails; to keep the
 * text read until an error instead, end the stream there (`Stream.catchAll(stream, () => Stream.empty)`,
 * as the transport does for error bodies).
 *
 * @since 0.2.0
 * @category constructors
 */
export const readBounded = <E, R>(stream: Stream.Stream<Uint8Array, E, R>, max: number): Effect.Effect<string, E, R> =>
  Effect.map(readPrefix(stream, max), ({ cut, text }) => cut ? `${text}…` : text)

/** Up to `max` bytes of `stream` as text (UTF-8), and whether the body was longer (`readBounded`). */
const readPrefix = <E, R>(
  stream: Stream.Stream<Uint8Array, E, R>,
  max: number
): Effect.Effect<{ readonly text: string; readonly cut: boolean }, E, R> =>
  Effect.suspend(() => {
    const decoder = new TextDecoder()
    let text = ""
    let size = 0
    let cut = false
    return Stream.runForEachWhile(stream, (chunk) =>
      Effect.sync(() => {
        const room = max - size
        if (chunk.length > room) {
          text += decoder.decode(chunk.subarray(0, room), { stream: true })
          cut = true
        } else {
          text += decoder.decode(chunk, { stream: true })
        }
        size += Math.min(chunk.length, room)
        return !cut
      })).pipe(Effect.map(() => ({ text: text + decoder.decode(), cut })))
  })

/** `stream` ended at its first error: an error body that breaks off is judged on what arrived. */
const untilError = <A, E, R>(stream: Stream.Stream<A, E, R>): Stream.Stream<A, never, R> =>
  Stream.catchAll(stream, () => Stream.empty)

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

/**
 * The retry schedule of `RetryOptions` (see there), fed with the error of each failed attempt; usable
 * around other effects too. Logs each retry at Debug level with the error's message (which never holds the
 * API key).
 *
 * @since 0.1.0
 * @category retries
 */
export const retrySchedule = (options: RetryOptions = {}): Schedule.Schedule<unknown, AiError.AiError> => {
  const maxDelay = Duration.decode(options.maxDelay ?? "8 seconds")
  const maxRetryAfter = Duration.decode(options.maxRetryAfter ?? "60 seconds")
  return Schedule.exponential(options.base ?? "500 millis", 2).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(Math.max(0, options.times ?? 2))),
    Schedule.intersect(Schedule.identity<AiError.AiError>()),
    Schedule.whileInput((error: AiError.AiError) =>
      error.retryable && (error.retryAfter === undefined || Duration.lessThanOrEqualTo(error.retryAfter, maxRetryAfter))
    ),
    Schedule.modifyDelayEffect(([[, attempt], error], delay) => {
      const wait = error.retryAfter ?? Duration.min(delay, maxDelay)
      const logged = Effect.logDebug(`retry ${attempt + 1} in ${Duration.format(wait)} after: ${error.message}`)
      const told = options.onRetry === undefined
        ? logged
        : Effect.zipRight(logged, options.onRetry({ attempt: attempt + 1, wait, error }))
      return Effect.as(told, wait)
    })
  )
}

/**
 * `Effect.retry(attempt, schedule)`, with the schedule run only once an attempt failed: its driver and state
 * cost about 30 fiber steps per call, a call that succeeds at once (every call, mostly) included. The first
 * failure is handed to the schedule as its first attempt's, so it waits and counts as `Effect.retry` would
 * (with no retries, `times: 0`, it stops at once). The retries (their logs, `onRetry`) run under `parent`
 * when given. With `stop` (`RetryOptions.stop`), the retries race it: once it completes, the wait or the
 * attempt in flight is interrupted and the last attempt's error returned (checked first, so a failure that
 * comes after `stop`, such as the shutdown's own abort of the attempt, is returned without a wait).
 */
const retriedAfterFailure = <A, E>(
  attempt: Effect.Effect<A, E>,
  schedule: Schedule.Schedule<unknown, E>,
  parent: Tracer.AnySpan | undefined,
  stop: Effect.Effect<void> | undefined
): Effect.Effect<A, E> =>
  Effect.catchAll(attempt, (error) => {
    let first = true
    let last = error
    const retried = Effect.retry(
      Effect.suspend(() => {
        if (!first) return Effect.tapError(attempt, (error) => Effect.sync(() => (last = error)))
        first = false
        return Effect.fail(error)
      }),
      schedule
    )
    // `stop` first: when it has already completed, its side wins before the schedule waits
    const stoppable = stop === undefined
      ? retried
      : Effect.raceFirst(Effect.zipRight(stop, Effect.suspend(() => Effect.fail(last))), retried)
    return parent === undefined ? stoppable : Effect.withParentSpan(stoppable, parent)
  })

/**
 * The URL of endpoint `path` (e.g. `/responses`) under `baseUrl` (default `DEFAULT_BASE_URL`), trailing
 * slashes of the base URL dropped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const endpointUrl = (baseUrl: string | undefined, path: string): string =>
  `${(baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "")}${path}`

/**
 * The hint for a 404 from a base URL that has no path (`http://127.0.0.1:8787` where the server serves
 * `http://127.0.0.1:8787/v1/responses`): `the base URL has no /v1: try http://127.0.0.1:8787/v1`, the
 * rule `effect-responses serve` applies to its `--upstream`. `undefined` for a base URL with a path (the
 * default, `https://api.openai.com/v1`, included) or one that is not a URL. The transport adds it to the
 * description of the `HttpError` of a 404 (`AiError.httpErrorFromResponse`'s `hint`): OpenAI answers such a
 * request `404 Invalid URL (POST /responses)`. A 404 whose body already names `/v1` gets none, so that one
 * hint is given: the gateway's own 404 says `try /v1/responses (the gateway's base URL ends in /v1)`.
 *
 * @since 0.2.0
 * @category errors
 */
export const noPathHint = (baseUrl: string | undefined): string | undefined => {
  if (baseUrl === undefined) return undefined
  let parsed: URL
  try {
    parsed = new URL(baseUrl)
  } catch {
    return undefined
  }
  if ((parsed.pathname !== "/" && parsed.pathname !== "") || parsed.search !== "") return undefined
  return `the base URL has no /v1: try ${baseUrl.replace(/\/+$/, "")}/v1`
}

/**
 * The hint for a redirect (a 3xx answer, never followed: the request and its key go to the base URL only)
 * from endpoint `url` (`endpointUrl`, ending in `path`, e.g. `/chat/completions`) to `location` (the
 * answer's `location` header, relative or absolute): when the target, resolved against `url`, is the same
 * endpoint under another base (`http://host/v1/chat/completions` redirected to
 * `https://host/v1/chat/completions`), `set the base URL to https://host/v1`; else `check the base URL
 * (its scheme, host and path): the server redirected it`. `undefined` without a `location` or for one that
 * is not a URL. The transport adds it to the description of the `HttpError` of a 3xx
 * (`AiError.httpErrorFromResponse`'s `hint`), whose description names the status and the `location`.
 *
 * @since 0.2.0
 * @category errors
 */
export const redirectHint = (url: string, path: string, location: string | undefined): string | undefined => {
  if (location === undefined || location.trim() === "") return undefined
  let target: URL
  try {
    target = new URL(location.trim(), url)
  } catch {
    return undefined
  }
  const pathname = target.pathname.replace(/\/+$/, "")
  if (target.search === "" && pathname.endsWith(path) && (target.protocol === "http:" || target.protocol === "https:")) {
    const base = `${target.origin}${pathname.slice(0, pathname.length - path.length)}`
    if (base !== url.slice(0, url.length - path.length)) return `set the base URL to ${AiError.capMessage(base, 500)}`
  }
  return "check the base URL (its scheme, host and path): the server redirected it"
}

/**
 * The transport of endpoint `path` (e.g. `/chat/completions`) over the `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (path: string, options: Options = {}): Effect.Effect<HttpTransport, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (contextClient) => {
    const httpClient = options.transformClient === undefined ? contextClient : options.transformClient(contextClient)
    const url = endpointUrl(options.baseUrl, path)
    const hint404 = noPathHint(options.baseUrl)
    const schedule = retrySchedule(options.retry)
    // no retries: nothing to stop
    const stop = (options.retry?.times ?? 2) > 0 ? options.retry?.stop : undefined
    const headersTimeout = timeoutOf(options.headersTimeout, DEFAULT_HEADERS_TIMEOUT)
    const idleTimeout = timeoutOf(options.idleTimeout, DEFAULT_IDLE_TIMEOUT)
    // A server that echoes the key in an error body must not put it into the error.
    const secret = options.apiKey === undefined ? "" : Redacted.value(options.apiKey)
    const scrub = (text: string): string => scrubSecret(text, secret)
    const failed = (error: HttpClientError.HttpClientError, bytesReceived?: number) =>
      scrubError(transportError(error, url, bytesReceived), secret)
    // `answered`: the headers had arrived, and an error body or a whole answer was what did not come in time;
    // `bytesReceived`: for a whole answer, how many bytes of its body had arrived
    const headersTimeoutError = (after: Duration.Duration, answered: boolean, bytesReceived?: number) =>
      new AiError.TransportError({
        description: answered
          ? `the response body did not arrive whole within ${
            Duration.format(after)
          } (the headers timeout, which bounds an error body and a whole answer too)`
          : `no response headers within ${Duration.format(after)} (the headers timeout)`,
        url,
        timeout: "headers",
        ...(bytesReceived === undefined ? {} : { bytesReceived })
      })
    const idleTimeoutError = (after: Duration.Duration, bytesReceived: number, events: boolean) =>
      new AiError.TransportError({
        description: events
          ? `the event stream sent no event for ${
            Duration.format(after)
          } (the idle timeout; keep-alives such as comments and pings do not count)`
          : `the response body was silent for ${Duration.format(after)} (the idle timeout)`,
        url,
        timeout: "idle",
        bytesReceived
      })
    // One idle timer for the whole body, not a race per read (see internal/idleTimeout): of an event stream,
    // only what holds an event counts (for a decoder: what it decodes to), keep-alives do not.
    const body = <A, D>(
      response: HttpClientResponse.HttpClientResponse,
      events: boolean,
      makeDecoder: () => Framing.BytesDecoder<A, D>
    ): Stream.Stream<A, AiError.TransportError | D> =>
      watchBody(response, idleTimeout, failed, (bytes) => idleTimeoutError(idleTimeout!, bytes, events), makeDecoder)
    const rawBody = (response: HttpClientResponse.HttpClientResponse) => body(response, false, () => asBytes)
    const bodyStream = (response: HttpClientResponse.HttpClientResponse) => body(response, true, asEventBytes)
    const decodeBody = <A, D>(response: HttpClientResponse.HttpClientResponse, makeDecoder: () => Framing.BytesDecoder<A, D>) =>
      body(response, true, makeDecoder)
    // An error body (or a body that is not an event stream) is read until its first error, for what it says.
    const errorBody = (response: HttpClientResponse.HttpClientResponse): Stream.Stream<Uint8Array> =>
      untilError(rawBody(response))
    // `effect` within the headers timeout, if any, with `parent` as its parent span when given: set in the
    // timeout's fiber, which ends with `effect`, so nothing has to be restored after it; without one, an
    // untraced call (`isUntraced`) runs with tracing off, turned off only where it is on (the gateway's
    // request fiber has it off already: a `FiberRef` set copies the fiber's `FiberRefs`). `answered` tells the
    // error whether the headers had come
    const timed = <A, E>(
      effect: Effect.Effect<A, E>,
      answered: () => boolean,
      parent?: Tracer.AnySpan,
      bytesReceived?: () => number
    ): Effect.Effect<A, E | AiError.TransportError> => {
      if (headersTimeout === undefined) {
        return parent === undefined
          ? Effect.withFiberRuntime<A, E>((fiber) => tracesUntraced(fiber) ? Effect.withTracerEnabled(effect, false) : effect)
          : Effect.withParentSpan(effect, parent)
      }
      // in the timeout's fiber, which ends with `effect`: nothing to restore
      const spanned = parent === undefined
        ? Effect.withFiberRuntime<A, E>((fiber) =>
          tracesUntraced(fiber) ? Effect.zipRight(FiberRef.set(FiberRef.currentTracerEnabled, false), effect) : effect
        )
        : Effect.zipRight(FiberRef.update(FiberRef.currentContext, (context) => Context.add(context, Tracer.ParentSpan, parent)), effect)
      return within(spanned, headersTimeout, () => headersTimeoutError(headersTimeout, answered(), bytesReceived?.()))
    }
    // A 2xx answer as it is (a streamed one that is plainly no event stream fails), any other read for what it says.
    const judge = (
      response: HttpClientResponse.HttpClientResponse,
      stream: boolean
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, ExecuteError> => {
      if (response.status >= 200 && response.status < 300) {
        const type = response.headers["content-type"] ?? ""
        if (!stream || !notAnEventStream(type)) return Effect.succeed(response)
        return Effect.flatMap(readBounded(errorBody(response), 200), (text) =>
          Effect.fail(
            new AiError.MalformedOutput({
              description: `the server answered HTTP ${response.status} with content-type ${type} instead of an event stream`,
              excerpt: AiError.excerpt(scrub(text))
            })
          ))
      }
      return Effect.flatMap(
        readPrefix(errorBody(response), MAX_ERROR_BODY_BYTES),
        ({ cut, text }) => {
          const body = scrub(text)
          // a server that already points at /v1 (the gateway's own 404 does) gets no second hint
          // a redirect's target is named in the error and its hint: never the key, as a body's echo of it is not
          const location = response.headers["location"] === undefined ? undefined : scrub(response.headers["location"])
          const hint = response.status === 404 && hint404 !== undefined && !body.includes("/v1")
            ? hint404
            : response.status >= 300 && response.status < 400
            ? redirectHint(url, path, location)
            : undefined
          return Effect.fail(AiError.httpErrorFromResponse({
            status: response.status,
            headers: location === undefined ? response.headers : { ...response.headers, location },
            body,
            ...(cut ? { cutAt: MAX_ERROR_BODY_BYTES } : {}),
            ...(hint === undefined ? {} : { hint })
          }))
        }
      )
    }
    // One attempt, within the headers timeout from sending to an answer judged: the headers and, for an
    // error, its body read (a server that trickles its error body a byte at a time, each within the idle
    // timeout, cannot hold the call past it). One HTTP request: only the retry schedule sends it again.
    const send = (request: HttpClientRequest.HttpClientRequest, stream: boolean, parent: Tracer.AnySpan | undefined) =>
      Effect.suspend(() => {
        let answered = false
        return timed(
          Effect.flatMap(Effect.mapError(httpClient.execute(request), (error) => failed(error)), (response) => {
            answered = true
            if (response.headers["content-encoding"] === undefined) return judge(response, stream)
            return Effect.flatMap(ContentEncoding.decoded(response), (decoded) =>
              decoded._tag === "Readable"
                ? judge(decoded.response, stream)
                // the body is not read: ending it at once releases the connection
                : Effect.zipRight(
                  readBounded(errorBody(response), 0),
                  Effect.fail(
                    new AiError.MalformedOutput({
                      description: `the server answered HTTP ${response.status} with content-encoding ${
                        AiError.excerpt(decoded.encoding.replace(/[^\x20-\x7e]/g, "?"), 40)
                      }, which this client does not decode (it decodes gzip, deflate and br)`
                    })
                  )
                ))
          }),
          () => answered,
          parent
        )
      })

    const request = (body: object, stream: boolean) => {
      let request = HttpClientRequest.post(url).pipe(
        HttpClientRequest.setHeader("accept", stream ? "text/event-stream" : "application/json")
      )
      if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
      if (options.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, options.apiKey)
      // written in slices with yields between them: a large prompt does not hold the event loop meanwhile
      return jsonBytes({ ...body, stream }).pipe(
        Effect.map((bytes) => HttpClientRequest.bodyUint8Array(request, bytes, "application/json")),
        Effect.mapError(() => new AiError.InvalidPrompt({ description: "the request body cannot be encoded as JSON: JsonError" }))
      )
    }

    // The only place that retries, so a retry always comes before the first byte of a 2xx body (an error
    // body is read whole before it is judged).
    const execute = (
      body: object,
      stream: boolean,
      parent?: Tracer.AnySpan
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, ExecuteError> =>
      Effect.flatMap(request(body, stream), (request) => retriedAfterFailure(send(request, stream, parent), schedule, parent, stop))

    // the whole body within the headers timeout (again, from its headers): a trickled answer cannot hold the call;
    // past it, the error says how many bytes of the body had arrived (`bytesReceived`), as the idle timeout's does
    const readJson = (
      response: HttpClientResponse.HttpClientResponse
    ): Effect.Effect<unknown, AiError.TransportError | AiError.MalformedOutput> =>
      Effect.suspend(() => {
        const read = { bytes: 0 }
        return timed(readText(response, read), constTrue, undefined, () => read.bytes)
      }).pipe(
        Effect.flatMap((text) =>
          Effect.try({
            // The key's characters need no escaping in a JSON string: cut out of the text, the JSON stays valid.
            try: (): unknown => JSON.parse(secret.length >= MIN_SECRET_LENGTH && text.includes(secret) ? scrub(text) : text),
            catch: (error) =>
              new AiError.MalformedOutput({
                description: `the response body (content-type ${response.headers["content-type"] ?? "none"}) is not JSON: ${
                  error instanceof Error ? error.message : String(error)
                }`,
                excerpt: AiError.excerpt(scrub(text))
              })
          })
        )
      )

    const maxJsonBytes = options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES
    // at most `maxJsonBytes` of the body: past them the stream ends (its request aborted), not read whole
    // `read.bytes`: the bytes of the body read so far
    const readText = (
      response: HttpClientResponse.HttpClientResponse,
      read: { bytes: number }
    ): Effect.Effect<string, AiError.TransportError | AiError.MalformedOutput> =>
      Effect.suspend(() => {
        const decoder = new TextDecoder()
        let text = ""
        return Stream.runForEach(rawBody(response), (chunk) => {
          read.bytes += chunk.length
          if (read.bytes > maxJsonBytes) {
            return Effect.fail(
              new AiError.MalformedOutput({
                description: `the response body (content-type ${
                  response.headers["content-type"] ?? "none"
                }) is larger than ${maxJsonBytes} bytes (maxJsonBytes): the rest was not read`,
                excerpt: AiError.excerpt(scrub(AiError.cutText(text, 200)))
              })
            )
          }
          text += decoder.decode(chunk, { stream: true })
          return Effect.void
        }).pipe(Effect.map(() => text + decoder.decode()))
      })

    return { url, execute, readJson, bodyStream, decodeBody, scrubError: <E extends AiError.AiError>(error: E) => scrubError(error, secret) }
  })

/** Effect's own tracer, the one in use when no tracer is installed: its spans are recorded nowhere. */
let nativeTracer: Tracer.Tracer | undefined

/**
 * Whether a call made in `fiber` is untraced: no tracer is installed (Effect's own tracer is in use, whose
 * spans are recorded nowhere) and no span is around the call (no parent span, nor a trace continued from an
 * incoming request's headers). Such a call is made with tracing off: no span of its own, and no span of the
 * `HttpClient` (with its URL and headers as attributes) nor `traceparent` / `b3` headers of an unrecorded
 * trace sent; its metrics are recorded as ever. Under an installed tracer, or inside a span, every call is
 * traced. The gateway applies the same rule to the requests it serves.
 *
 * @since 0.2.0
 * @category tracing
 */
export const isUntraced = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean => {
  nativeTracer ??= Effect.runSync(Effect.tracer)
  return fiber.currentSpan === undefined && fiber.currentTracer === nativeTracer
}

/** Whether `fiber` is untraced (`isUntraced`) with tracing still on: what `timed` turns off. */
const tracesUntraced = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  isUntraced(fiber) && fiber.getFiberRef(FiberRef.currentTracerEnabled)

/**
 * `effect` failing with `onTimeout()` when it has not ended within `duration` (of the fiber's `Clock`),
 * interrupted then (for a request: aborted) before the timeout is reported. What `Effect.timeoutFail` does,
 * but the timer is a timer of its own (internal/timer: a `setTimeout` on the live clock, a fiber on another),
 * cancelled without waiting for it when `effect` ends first, where `Effect.timeoutFail` races two forked
 * fibers under a parent and awaits the loser's interruption: on the client path's empty call 1,312 -> 992
 * fiber steps with the idle timeout's change (packages/bench/RESULTS.md).
 */
const within = <A, E, E2>(
  effect: Effect.Effect<A, E>,
  duration: Duration.Duration,
  onTimeout: () => E2
): Effect.Effect<A, E | E2> =>
  Effect.uninterruptibleMask((restore) =>
    // the fiber ends with `effect`'s exit, not its failure: a failure is handed on here, and a daemon fiber
    // that fails is logged as "Fiber terminated with an unhandled error"
    // `Effect.clockWith` and `flatMap`, not an `Effect.zip` of the clock and the fork (about 10 fiber steps)
    Effect.clockWith((clock) => Effect.flatMap(Effect.forkDaemon(restore(Effect.exit(effect))), (fiber) =>
      restore(Effect.async<A, E | E2>((resume) => {
        let done = false
        const cancelTimer = Timer.after(clock, Duration.toMillis(duration), () => {
          if (done) return
          done = true
          // the request is aborted before the timeout is reported
          resume(Effect.zipRight(Fiber.interrupt(fiber), Effect.fail(onTimeout())))
        })
        fiber.addObserver((exit) => {
          if (done) return
          done = true
          cancelTimer()
          resume(Exit.isSuccess(exit) ? exit.value : Exit.failCause(exit.cause))
        })
        return Effect.suspend(() => {
          done = true
          cancelTimer()
          return Fiber.interrupt(fiber)
        })
      }))
    )))

/** Whether a 2xx answer to a streamed request is plainly something else: an HTML page, or JSON. */
const notAnEventStream = (contentType: string): boolean => {
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return type === "text/html" || type === "application/json" || type.endsWith("+json")
}

// ---------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------

/**
 * The `TransportError` of a request to `url` that got no HTTP answer or whose body broke off: the
 * `HttpClientError` reason, then its description (or its cause's message); `bytesReceived`, when given, is
 * how much of the response body had arrived (after the first byte the error is not retryable). Without
 * `bytesReceived`, a connection that the server closed or reset before any response (undici's
 * `SocketError`, "other side closed", or an `ECONNRESET` / `EPIPE`, in the error or its causes, as
 * `fetch`'s `TypeError` holds undici's) gives `closedBeforeResponse: true`, said in the description: the
 * request was written, and may have been received.
 *
 * @since 0.1.0
 * @category errors
 */
export const transportError = (
  error: HttpClientError.HttpClientError,
  url: string,
  bytesReceived?: number
): AiError.TransportError => {
  const cause = error.cause instanceof Error ? error.cause.message : undefined
  const description = [error.reason, error.description ?? cause].filter((s) => s !== undefined).join(": ")
  if (bytesReceived !== undefined) return new AiError.TransportError({ description, url, bytesReceived })
  return closedBeforeResponse(error)
    ? new AiError.TransportError({
      description: `the server closed the connection after the request was sent, before any response (${description})`,
      url,
      closedBeforeResponse: true
    })
    : new AiError.TransportError({ description, url })
}

/** The codes of a connection the server closed or reset once it was open (undici's `SocketError`, Node's). */
const CLOSED_CODES: ReadonlySet<unknown> = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"])

/**
 * Whether a request failed on a connection that the server closed or reset before any response (see
 * `transportError`). A reset during a TLS handshake ("… before secure TLS connection was established")
 * came before the request was written: not such a close.
 */
const closedBeforeResponse = (error: HttpClientError.HttpClientError): boolean => {
  if (error._tag !== "RequestError" || error.reason !== "Transport") return false
  for (let cause: unknown = error.cause, depth = 0; typeof cause === "object" && cause !== null && depth < 3; depth++) {
    const fields = cause as { readonly code?: unknown; readonly message?: unknown; readonly cause?: unknown }
    if (CLOSED_CODES.has(fields.code)) return !(typeof fields.message === "string" && fields.message.includes("TLS"))
    cause = fields.cause
  }
  return false
}
