/**
 * The HTTP client of the Responses API: `POST {baseUrl}/responses`, whole (`create`) or streamed
 * (`createStream`), over `@effect/platform`'s `HttpClient` (the application provides the platform layer,
 * e.g. `NodeHttpClient.layerUndici`).
 *
 * - The API key (`Redacted`) goes only into the `Authorization: Bearer` header; it never appears in an
 *   error, a log or a span (the `HttpClient` span redacts `authorization`). Without a key no
 *   `Authorization` header is sent, which suits local servers.
 * - A non-2xx answer fails with `AiError.HttpError`, read from OpenAI's error body
 *   `{"error":{"message","type","param","code"}}`, with the `x-request-id` header as `requestId` and
 *   `retry-after-ms` / `retry-after` as `retryAfter`.
 * - A request that gets no answer, or a body that breaks off, fails with `AiError.TransportError`.
 * - Interrupting the fiber aborts the HTTP request.
 *
 * Retries are not done here yet; `AiError`s say whether they are `retryable`, and a retry may wrap `create`,
 * or `createStream` before its first element.
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
import * as Stream from "effect/Stream"
import { isObject, numberField, objectField, stringField } from "./internal/json.js"
import type * as ResponsesRequest from "./ResponsesRequest.js"
import * as ResponsesStream from "./ResponsesStream.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * `POST {baseUrl}/responses` with `body` and `stream: false`; succeeds with the response JSON (decode it
   * with `ResponsesOutput.fromResponse`). Fails with `HttpError`, `TransportError`, `MalformedOutput` (a
   * 2xx body that is not JSON) or `InvalidPrompt` (a body that cannot be encoded as JSON).
   */
  readonly create: (body: ResponsesRequest.RequestBody) => Effect.Effect<unknown, AiError.AiError>
  /**
   * `POST {baseUrl}/responses` with `body` and `stream: true`; the SSE body decoded by
   * `ResponsesStream.decodeSse`. Fails like `create` before the first element, then with the decoder's
   * errors or a `TransportError` when the body breaks off.
   */
  readonly createStream: (body: ResponsesRequest.RequestBody) => Stream.Stream<StreamPart.StreamPart, AiError.AiError>
}

/**
 * The service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ResponsesClient extends Context.Tag("@effect-responses/responses/ResponsesClient")<
  ResponsesClient,
  Service
>() {}

/**
 * The client's settings: `apiKey` (optional: none means no `Authorization` header), `baseUrl` (default
 * `https://api.openai.com/v1`, without the `/responses` path), and extra `headers` sent with every request
 * (e.g. `OpenAI-Organization`, `OpenAI-Project`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly apiKey?: Redacted.Redacted | undefined
  readonly baseUrl?: string | undefined
  readonly headers?: { readonly [name: string]: string } | undefined
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
 * Builds the service over the `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const httpClient = yield* HttpClient.HttpClient
    const url = `${(options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "")}/responses`

    const request = (body: ResponsesRequest.RequestBody, stream: boolean) =>
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

    // Sends the request and checks the status: the place where a retry before the first byte belongs.
    const execute = (
      body: ResponsesRequest.RequestBody,
      stream: boolean
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, AiError.AiError> =>
      request(body, stream).pipe(
        Effect.flatMap((request) =>
          Effect.mapError(httpClient.execute(request), (error): AiError.AiError => transportError(error, url))
        ),
        Effect.flatMap((response) =>
          response.status >= 200 && response.status < 300 ? Effect.succeed(response) : Effect.flatMap(
            Effect.orElseSucceed(response.text, () => ""),
            (text) => Effect.fail(httpError(response, text))
          )
        )
      )

    const create = (body: ResponsesRequest.RequestBody): Effect.Effect<unknown, AiError.AiError> =>
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
        Effect.withSpan("ResponsesClient.create", { attributes: requestAttributes(body) })
      )

    const createStream = (body: ResponsesRequest.RequestBody): Stream.Stream<StreamPart.StreamPart, AiError.AiError> =>
      Stream.unwrap(
        Effect.map(execute(body, true), (response) =>
          ResponsesStream.decodeSse(
            Stream.mapError(response.stream, (error): AiError.AiError => transportError(error, url))
          ))
      ).pipe(
        Stream.mapChunksEffect(annotateStreamParts),
        Stream.withSpan("ResponsesClient.createStream", { attributes: requestAttributes(body) })
      )

    return { create, createStream } satisfies Service
  })

/**
 * The service from explicit options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ResponsesClient, never, HttpClient.HttpClient> =>
  Layer.effect(ResponsesClient, make(options))

/**
 * The default configuration: `OPENAI_API_KEY` (redacted, optional) and `OPENAI_BASE_URL` (default
 * `https://api.openai.com/v1`).
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Options> = Config.all({
  apiKey: Config.option(Config.redacted("OPENAI_API_KEY")),
  baseUrl: Config.string("OPENAI_BASE_URL").pipe(Config.withDefault(DEFAULT_BASE_URL))
}).pipe(Config.map(({ apiKey, baseUrl }): Options => ({ apiKey: Option.getOrUndefined(apiKey), baseUrl })))

/**
 * The service from `effect/Config` (by default `config`: `OPENAI_API_KEY`, `OPENAI_BASE_URL`). Fails with
 * a `ConfigError` when the configuration is invalid.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Config.Config<Options> = config
): Layer.Layer<ResponsesClient, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Layer.effect(ResponsesClient, Effect.flatMap(options, make))

// ---------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------

const transportError = (
  error: HttpClientError.HttpClientError,
  url: string
): AiError.TransportError => {
  const cause = error.cause instanceof Error ? error.cause.message : undefined
  const description = [error.reason, error.description ?? cause].filter((s) => s !== undefined).join(": ")
  return new AiError.TransportError({ description, url })
}

/**
 * An `HttpError` from a non-2xx response and its body text: `description`, `errorType`, `code` and `param`
 * from OpenAI's `{"error":{"message","type","param","code"}}` (a `null` field is left out; a body of
 * another shape becomes the description, cut to 200 characters), `requestId` from `x-request-id`,
 * `retryAfter` from `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date).
 *
 * @since 0.1.0
 * @category errors
 */
export const httpError = (response: HttpClientResponse.HttpClientResponse, body: string): AiError.HttpError => {
  let error: { readonly [key: string]: unknown } | undefined
  try {
    const json: unknown = JSON.parse(body)
    if (isObject(json)) error = objectField(json, "error") ?? json
  } catch {
    error = undefined
  }
  const message = error && stringField(error, "message")
  const errorType = error && stringField(error, "type")
  const code = error && (stringField(error, "code") ?? numberToString(numberField(error, "code")))
  const param = error && stringField(error, "param")
  const requestId = response.headers["x-request-id"]
  const retryAfter = retryAfterOf(response.headers)
  return new AiError.HttpError({
    status: response.status,
    description: message ?? (body.trim() === "" ? `HTTP status ${response.status}` : AiError.excerpt(body.trim())),
    ...(errorType === undefined ? {} : { errorType }),
    ...(code === undefined ? {} : { code }),
    ...(param === undefined ? {} : { param }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(retryAfter === undefined ? {} : { retryAfter })
  })
}

const numberToString = (n: number | undefined): string | undefined => n === undefined ? undefined : String(n)

const retryAfterOf = (headers: { readonly [name: string]: string | undefined }): Duration.Duration | undefined => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined) {
    const value = Number.parseFloat(ms)
    if (Number.isFinite(value) && value >= 0) return Duration.millis(value)
  }
  const seconds = headers["retry-after"]
  if (seconds !== undefined) {
    const value = Number(seconds)
    if (seconds.trim() !== "" && Number.isFinite(value) && value >= 0) return Duration.seconds(value)
    const date = Date.parse(seconds)
    if (Number.isFinite(date)) return Duration.millis(Math.max(0, date - Date.now()))
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// spans
// ---------------------------------------------------------------------------------------------------------

const requestAttributes = (body: ResponsesRequest.RequestBody): Record<string, unknown> => ({
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
    const input = numberField(usage, "input_tokens")
    const output = numberField(usage, "output_tokens")
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
