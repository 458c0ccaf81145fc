/**
 * The HTTP client of the Chat Completions API: `POST {baseUrl}/chat/completions`, whole (`create`) or
 * streamed (`createStream`), over `@effect/platform`'s `HttpClient` (the application provides the platform
 * layer, e.g. `NodeHttpClient.layerUndici`). It speaks to OpenAI and to every server with the same wire
 * (vLLM, llama.cpp, Ollama, DeepSeek, LM Studio, Azure deployments…).
 *
 * - The API key (`Redacted`) goes only into the `Authorization: Bearer` header; it never appears in an
 *   error, a log or a span (the `HttpClient` span redacts `authorization`). Without a key no
 *   `Authorization` header is sent, which suits local servers.
 * - A non-2xx answer fails with `AiError.HttpError`, read from OpenAI's error body
 *   `{"error":{"message","type","param","code"}}` by the shared `AiError.httpErrorFromResponse`, with the
 *   `x-request-id` header as `requestId` and `retry-after-ms` / `retry-after` as `retryAfter`.
 * - A request that gets no answer, or a body that breaks off, fails with `AiError.TransportError`.
 * - Retries (DESIGN section 5, `RetryOptions`, the same rules as the Responses client): a retryable error
 *   (`HttpError` 408 / 409 / 429 / 5xx except `insufficient_quota`, `TransportError`) is retried with
 *   exponential backoff and jitter, or after the `retryAfter` the server asked for (capped). Only before the
 *   first byte of the body: a stream that breaks off later is not re-sent.
 * - Interrupting the fiber aborts the HTTP request.
 *
 * @since 0.1.0
 */
import { AiError, type StreamPart } from "@effect-responses/core"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as Chunk from "effect/Chunk"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as ChatCompletionsStream from "./ChatCompletionsStream.js"
import type * as ChatCompletionsRequest from "./ChatCompletionsRequest.js"
import { isObject, numberField, objectField, stringField } from "./internal/json.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * `POST {baseUrl}/chat/completions` with `body` and `stream: false`; succeeds with the `chat.completion`
   * JSON (decode it with `ChatCompletionsOutput.fromCompletion`). Fails with `HttpError`, `TransportError`,
   * `MalformedOutput` (a 2xx body that is not JSON) or `InvalidPrompt` (a body that cannot be encoded).
   */
  readonly create: (body: ChatCompletionsRequest.RequestBody) => Effect.Effect<unknown, AiError.AiError>
  /**
   * `POST {baseUrl}/chat/completions` with `body` and `stream: true`; the SSE body decoded by
   * `ChatCompletionsStream.decodeSse`. Fails like `create` before the first element, then with the
   * decoder's errors or a `TransportError` when the body breaks off.
   */
  readonly createStream: (
    body: ChatCompletionsRequest.RequestBody
  ) => Stream.Stream<StreamPart.StreamPart, AiError.AiError>
}

/**
 * The service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ChatCompletionsClient extends Context.Tag("@effect-responses/chat-completions/ChatCompletionsClient")<
  ChatCompletionsClient,
  Service
>() {}

/**
 * The client's settings:
 *
 * - `apiKey` (optional: none means no `Authorization` header);
 * - `baseUrl` (default `https://api.openai.com/v1`, without the `/chat/completions` path; e.g.
 *   `http://localhost:11434/v1` for Ollama, `http://localhost:8000/v1` for vLLM);
 * - `headers` sent with every request (e.g. `OpenAI-Organization`, Azure's `api-key`);
 * - `retry`: see `RetryOptions` (`{ times: 0 }` turns retries off).
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
 * How failed requests are retried (the same options and rules as `ResponsesClient.RetryOptions`): up to
 * `times` retries (default 2) after the first attempt, waiting `base` (default 500 ms) times 2 per retry,
 * with jitter (each wait scaled by a random factor between 0.8 and 1.2), each wait at most `maxDelay`
 * (default 8 s). When the server sends `retry-after-ms` or `retry-after`, that wait is used instead, capped
 * at `maxRetryAfter` (default 60 s). Only retryable errors are retried (`AiError`'s `retryable`: 408, 409,
 * 429 except `insufficient_quota`, 5xx, transport errors).
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
 * The default base URL, `https://api.openai.com/v1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1"

/**
 * The retry schedule of `RetryOptions` (see there), fed with the error of each failed attempt; exported so
 * that a caller can use the same policy around other effects. Logs each retry at Debug level with the
 * error's message (which never holds the API key).
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
 * Builds the service over the `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const httpClient = yield* HttpClient.HttpClient
    const url = `${(options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "")}/chat/completions`
    const schedule = retrySchedule(options.retry)

    const request = (body: ChatCompletionsRequest.RequestBody, stream: boolean) =>
      Effect.gen(function*() {
        let request = HttpClientRequest.post(url).pipe(
          HttpClientRequest.setHeader("accept", stream ? "text/event-stream" : "application/json")
        )
        if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
        if (options.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, options.apiKey)
        return yield* HttpClientRequest.bodyJson(request, { ...body, stream }).pipe(
          Effect.mapError((error) =>
            new AiError.InvalidPrompt({ description: `the request body cannot be encoded as JSON: ${error.reason._tag}` })
          )
        )
      })

    // Sends the request and checks the status, retried as the schedule says: before the first byte only.
    const execute = (
      body: ChatCompletionsRequest.RequestBody,
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
                  AiError.httpErrorFromResponse({ status: response.status, headers: response.headers, body: text })
                )
            )
          ),
          Effect.retry(schedule)
        ))

    const create = (body: ChatCompletionsRequest.RequestBody): Effect.Effect<unknown, AiError.AiError> =>
      execute(body, false).pipe(
        Effect.flatMap((response) => Effect.mapError(response.text, (error) => transportError(error, url))),
        Effect.flatMap((text) =>
          Effect.try({
            try: (): unknown => JSON.parse(text),
            catch: (error) =>
              new AiError.MalformedOutput({
                description: `the response body is not JSON: ${error instanceof Error ? error.message : String(error)}`,
                excerpt: AiError.excerpt(text)
              })
          })
        ),
        Effect.tap((json) => annotateResponse(json)),
        Effect.withSpan("ChatCompletionsClient.create", { attributes: requestAttributes(body) })
      )

    const createStream = (
      body: ChatCompletionsRequest.RequestBody
    ): Stream.Stream<StreamPart.StreamPart, AiError.AiError> =>
      Stream.unwrap(
        Effect.map(execute(body, true), (response) =>
          ChatCompletionsStream.decodeSse(
            Stream.mapError(response.stream, (error): AiError.AiError => transportError(error, url))
          ))
      ).pipe(
        Stream.mapChunksEffect(annotateStreamParts),
        Stream.withSpan("ChatCompletionsClient.createStream", { attributes: requestAttributes(body) })
      )

    return { create, createStream } satisfies Service
  })

/**
 * The service from explicit options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ChatCompletionsClient, never, HttpClient.HttpClient> =>
  Layer.effect(ChatCompletionsClient, make(options))

/**
 * The default configuration: `OPENAI_API_KEY` (redacted, optional), `OPENAI_BASE_URL` (default
 * `https://api.openai.com/v1`) and `OPENAI_MAX_RETRIES` (optional: `retry.times`, default 2).
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Options> = Config.all({
  apiKey: Config.option(Config.redacted("OPENAI_API_KEY")),
  baseUrl: Config.string("OPENAI_BASE_URL").pipe(Config.withDefault(DEFAULT_BASE_URL)),
  maxRetries: Config.option(Config.integer("OPENAI_MAX_RETRIES"))
}).pipe(
  Config.map(({ apiKey, baseUrl, maxRetries }): Options => ({
    apiKey: Option.getOrUndefined(apiKey),
    baseUrl,
    ...(Option.isSome(maxRetries) ? { retry: { times: maxRetries.value } } : {})
  }))
)

/**
 * The service from `effect/Config` (by default `config`). Fails with a `ConfigError` when the
 * configuration is invalid.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Config.Config<Options> = config
): Layer.Layer<ChatCompletionsClient, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Layer.effect(ChatCompletionsClient, Effect.flatMap(options, make))

// ---------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------

const transportError = (error: HttpClientError.HttpClientError, url: string): AiError.TransportError => {
  const cause = error.cause instanceof Error ? error.cause.message : undefined
  const description = [error.reason, error.description ?? cause].filter((s) => s !== undefined).join(": ")
  return new AiError.TransportError({ description, url })
}

// ---------------------------------------------------------------------------------------------------------
// spans
// ---------------------------------------------------------------------------------------------------------

const requestAttributes = (body: ChatCompletionsRequest.RequestBody): Record<string, unknown> => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.system": "openai",
  "gen_ai.request.model": body.model
})

const annotateResponse = (json: unknown): Effect.Effect<void> => {
  if (!isObject(json)) return Effect.void
  const usage = objectField(json, "usage")
  const attributes: Record<string, unknown> = {}
  const id = stringField(json, "id")
  const model = stringField(json, "model")
  if (id !== undefined) attributes["gen_ai.response.id"] = id
  if (model !== undefined) attributes["gen_ai.response.model"] = model
  if (usage !== undefined) {
    const input = numberField(usage, "prompt_tokens")
    const output = numberField(usage, "completion_tokens")
    if (input !== undefined) attributes["gen_ai.usage.input_tokens"] = input
    if (output !== undefined) attributes["gen_ai.usage.output_tokens"] = output
  }
  return Effect.annotateCurrentSpan(attributes)
}

// One effect per chunk, not per element: deltas are the hot path.
const annotateStreamParts = (
  chunk: Chunk.Chunk<StreamPart.StreamPart>
): Effect.Effect<Chunk.Chunk<StreamPart.StreamPart>> => {
  const attributes: Record<string, unknown> = {}
  let found = false
  for (const part of chunk) {
    if (part.type === "response_started") {
      found = true
      attributes["gen_ai.response.id"] = part.responseId
      attributes["gen_ai.response.model"] = part.model
    } else if (part.type === "response_finished") {
      found = true
      attributes["gen_ai.response.finish_reasons"] = [part.finishReason]
      attributes["gen_ai.usage.input_tokens"] = part.usage.inputTokens
      attributes["gen_ai.usage.output_tokens"] = part.usage.outputTokens
    }
  }
  return found ? Effect.as(Effect.annotateCurrentSpan(attributes), chunk) : Effect.succeed(chunk)
}
