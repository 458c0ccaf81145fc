/**
 * The HTTP transport of an OpenAI-style JSON endpoint (`POST {baseUrl}/responses`,
 * `POST {baseUrl}/chat/completions`), over `@effect/platform`'s `HttpClient` (the application provides the
 * platform layer, e.g. `NodeHttpClient.layerUndici`). The protocol clients add their request bodies,
 * decoders and telemetry on top.
 *
 * - The API key (`Redacted`) goes only into the `Authorization: Bearer` header, and is cut out of any
 *   error body that echoes it; it never appears in an error. Without a key no `Authorization` header is
 *   sent, which suits local servers.
 * - A non-2xx answer fails with `AiError.HttpError`, read from OpenAI's error body
 *   `{"error":{"message","type","param","code"}}` by `AiError.httpErrorFromResponse`, with the
 *   `x-request-id` header as `requestId` and `retry-after-ms` / `retry-after` as `retryAfter`.
 * - A request that gets no answer, or a body that breaks off, fails with `AiError.TransportError`.
 * - Retries (`RetryOptions`, `retrySchedule`): only retryable errors, and only before the first byte of a
 *   2xx body: a stream that breaks off after its first byte is never sent again.
 * - Interrupting the fiber aborts the HTTP request.
 *
 * @since 0.1.0
 */
import { AiError } from "@effect-responses/core"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * How failed requests are retried: up to `times` retries (default 2) after the first attempt, waiting
 * `base` (default 500 ms) times 2 per retry, with jitter (each wait scaled by a random factor between 0.8
 * and 1.2), each wait at most `maxDelay` (default 8 s). When the server sends `retry-after-ms` or
 * `retry-after`, that wait is used instead, capped at `maxRetryAfter` (default 60 s). Only retryable errors
 * are retried (`AiError`'s `retryable`: 408, 409, 429 except `insufficient_quota`, 5xx, transport errors).
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryOptions {
  readonly times?: number | undefined
  readonly base?: Duration.DurationInput | undefined
  readonly maxDelay?: Duration.DurationInput | undefined
  readonly maxRetryAfter?: Duration.DurationInput | undefined
}

/**
 * The transport's settings: `apiKey` (optional: none means no `Authorization` header), `baseUrl` (default
 * `DEFAULT_BASE_URL`, without the endpoint path; trailing slashes are dropped), extra `headers` sent with
 * every request (e.g. `OpenAI-Organization`, Azure's `api-key`) and `retry` (see `RetryOptions`;
 * `{ times: 0 }` turns retries off).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly apiKey?: Redacted.Redacted | undefined
  readonly baseUrl?: string | undefined
  readonly headers?: { readonly [name: string]: string } | undefined
  readonly retry?: RetryOptions | undefined
}

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
   * (a non-2xx status, its body read whole), `TransportError` (no answer) or `InvalidPrompt` (a body that
   * cannot be encoded as JSON), after the retries `RetryOptions` allow.
   */
  readonly execute: (
    body: object,
    stream: boolean
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, AiError.AiError>
  /**
   * The whole body of a response as JSON. Fails with `TransportError` when the body breaks off, or
   * `MalformedOutput` (with an excerpt of the text) when it is not JSON.
   */
  readonly readJson: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<unknown, AiError.AiError>
  /** The body of a response as bytes, a break-off failing with `TransportError`. */
  readonly bodyStream: (
    response: HttpClientResponse.HttpClientResponse
  ) => Stream.Stream<Uint8Array, AiError.TransportError>
}

/**
 * The default base URL, `https://api.openai.com/v1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1"

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
    Schedule.whileInput((error: AiError.AiError) => error.retryable),
    Schedule.modifyDelayEffect(([[, attempt], error], delay) => {
      const wait = error.retryAfter === undefined
        ? Duration.min(delay, maxDelay)
        : Duration.min(error.retryAfter, maxRetryAfter)
      return Effect.as(Effect.logDebug(`retry ${attempt + 1} in ${Duration.format(wait)} after: ${error.message}`), wait)
    })
  )
}

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
 * The transport of endpoint `path` (e.g. `/chat/completions`) over the `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (path: string, options: Options = {}): Effect.Effect<HttpTransport, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (httpClient) => {
    const url = endpointUrl(options.baseUrl, path)
    const schedule = retrySchedule(options.retry)
    // A server that echoes the key in an error body must not put it into the error.
    const secret = options.apiKey === undefined ? "" : Redacted.value(options.apiKey)
    const scrub = (text: string): string => secret === "" ? text : text.split(secret).join("[redacted]")

    const request = (body: object, stream: boolean) => {
      let request = HttpClientRequest.post(url).pipe(
        HttpClientRequest.setHeader("accept", stream ? "text/event-stream" : "application/json")
      )
      if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
      if (options.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, options.apiKey)
      return HttpClientRequest.bodyJson(request, { ...body, stream }).pipe(
        Effect.mapError((error) =>
          new AiError.InvalidPrompt({ description: `the request body cannot be encoded as JSON: ${error.reason._tag}` })
        )
      )
    }

    // The only place that retries, so a retry always comes before the first byte of a 2xx body (an error
    // body is read whole before it is judged).
    const execute = (
      body: object,
      stream: boolean
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, AiError.AiError> =>
      Effect.flatMap(request(body, stream), (request) =>
        httpClient.execute(request).pipe(
          Effect.mapError((error): AiError.AiError => transportError(error, url)),
          Effect.flatMap((response) =>
            response.status >= 200 && response.status < 300 ? Effect.succeed(response) : Effect.flatMap(
              Effect.orElseSucceed(response.text, () => ""),
              (text) =>
                Effect.fail(
                  AiError.httpErrorFromResponse({ status: response.status, headers: response.headers, body: scrub(text) })
                )
            )
          ),
          Effect.retry(schedule)
        ))

    const readJson = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<unknown, AiError.AiError> =>
      Effect.mapError(response.text, (error): AiError.AiError => transportError(error, url)).pipe(
        Effect.flatMap((text) =>
          Effect.try({
            try: (): unknown => JSON.parse(text),
            catch: (error) =>
              new AiError.MalformedOutput({
                description: `the response body is not JSON: ${error instanceof Error ? error.message : String(error)}`,
                excerpt: AiError.excerpt(text)
              })
          })
        )
      )

    const bodyStream = (
      response: HttpClientResponse.HttpClientResponse
    ): Stream.Stream<Uint8Array, AiError.TransportError> =>
      Stream.mapError(response.stream, (error) => transportError(error, url))

    return { url, execute, readJson, bodyStream }
  })

// ---------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------

/**
 * The `TransportError` of a request to `url` that got no HTTP answer or whose body broke off: the
 * `HttpClientError` reason, then its description (or its cause's message).
 *
 * @since 0.1.0
 * @category errors
 */
export const transportError = (error: HttpClientError.HttpClientError, url: string): AiError.TransportError => {
  const cause = error.cause instanceof Error ? error.cause.message : undefined
  const description = [error.reason, error.description ?? cause].filter((s) => s !== undefined).join(": ")
  return new AiError.TransportError({ description, url })
}
