/**
 * The HTTP client of the Chat Completions API: `POST {baseUrl}/chat/completions`, whole (`create`) or
 * streamed (`createStream`), over `@effect/platform`'s `HttpClient` (the application provides the platform
 * layer, e.g. `NodeHttpClient.layerUndici`). It speaks to OpenAI and to every server with the same wire
 * (vLLM, llama.cpp, Ollama, DeepSeek, LM Studio, Azure deployments…).
 *
 * - The transport (request building, status check, retries, error mapping) is `HttpTransport` of
 *   `@effect-responses/wire`, shared with the Responses client.
 * - The API key (`Redacted`) goes only into the `Authorization: Bearer` header; it never appears in an
 *   error, a log or a span (the `HttpClient` span redacts `authorization`): a key of 8 characters or more
 *   is cut out of every error built from what the server sent (an error body, an in-stream error, an
 *   excerpt of a malformed event) when the server echoes it. Without a key no `Authorization` header is sent, which suits local servers.
 * - A non-2xx answer fails with `AiError.HttpError`, read from OpenAI's error body
 *   `{"error":{"message","type","param","code"}}` by the shared `AiError.httpErrorFromResponse`, with the
 *   `x-request-id` header as `requestId` and `retry-after-ms` / `retry-after` as `retryAfter`.
 * - A request that gets no answer, or a body that breaks off, fails with `AiError.TransportError`.
 * - No call waits forever: no response headers within `headersTimeout` (default 10 minutes, per attempt)
 *   fails with a retryable `AiError.TransportError` whose `timeout` is `"headers"`; a body silent longer than
 *   `idleTimeout` between two chunks (default 5 minutes) with one whose `timeout` is `"idle"`, after the
 *   parts that arrived and not retryable once a byte of the body arrived (`bytesReceived`); both abort the
 *   request; `false` turns each off. Error bodies
 *   are read up to 64 KiB.
 * - Retries (`RetryOptions`, the same rules as `ResponsesClient`): a retryable error
 *   (`HttpError` 408 / 409 / 429 / 5xx except `insufficient_quota`, `TransportError`) is retried with
 *   exponential backoff and jitter, or after the `retryAfter` the server asked for (capped). Only before the
 *   first byte of the body: a stream that breaks off later is not re-sent.
 * - Interrupting the fiber aborts the HTTP request.
 * - Tracing: `createStream` runs in a span `ChatCompletionsClient.createStream` (GenAI attributes: the
 *   request's model, the response's id, model, finish reason and token counts) when a tracer is installed or
 *   the call runs inside a span; otherwise (`HttpTransport.isUntraced`, since 0.2.0) it makes no span, and
 *   the request goes without the `HttpClient`'s span and trace headers, whose trace would be recorded nowhere.
 *
 * @since 0.1.0
 */
import type { AiError, LanguageModel, StreamPart } from "@effect-responses/core"
import * as Framing from "@effect-responses/wire/Framing"
import * as HttpTransport from "@effect-responses/wire/HttpTransport"
import { isObject, numberField, objectField, stringField } from "@effect-responses/wire/Json"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Channel from "effect/Channel"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as ChatCompletionsStream from "./ChatCompletionsStream.js"
import type * as ChatCompletionsRequest from "./ChatCompletionsRequest.js"
import { Decoder, makeSseFramer } from "./internal/decoder.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * What `create` can fail with: `HttpError`, `TransportError`, `InvalidPrompt` (a body that cannot be
 * encoded as JSON) and `MalformedOutput` (a 2xx body that is not JSON).
 *
 * @since 0.2.0
 * @category models
 */
export type CreateError = HttpTransport.ExecuteError | AiError.MalformedOutput

/**
 * The client service: one `POST` of a request body, answered whole (`create`) or streamed (`createStream`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * `POST {baseUrl}/chat/completions` with `body` and `stream: false`; succeeds with the `chat.completion`
   * JSON (decode it with `ChatCompletionsOutput.fromCompletion`). Fails with `HttpError`, `TransportError`,
   * `MalformedOutput` (a 2xx body that is not JSON) or `InvalidPrompt` (a body that cannot be encoded).
   */
  readonly create: (body: ChatCompletionsRequest.RequestBody) => Effect.Effect<unknown, CreateError>
  /**
   * `POST {baseUrl}/chat/completions` with `body` and `stream: true`; the SSE body decoded by
   * `ChatCompletionsStream.decodeSse`. Fails like `create` before the first element, then with the
   * decoder's errors or a `TransportError` when the body breaks off.
   */
  readonly createStream: (
    body: ChatCompletionsRequest.RequestBody
  ) => Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError>
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
 * - `retry`: see `RetryOptions` (`{ times: 0 }` turns retries off);
 * - `headersTimeout` (time to response headers, per attempt; default 10 minutes) and `idleTimeout` (longest
 *   silence between two body chunks; default 5 minutes), each `false` for none: see `HttpTransport.Options`;
 * - `transformClient`: the `HttpClient` of the context in, the one the client sends with out (a proxy,
 *   more headers, logging, a retry policy of one's own), e.g.
 *   `transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-team", "search"))`; the client's
 *   own retries wrap it.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = HttpTransport.Options

/**
 * How failed requests are retried (the same options and rules as `ResponsesClient.RetryOptions`; both are
 * `HttpTransport.RetryOptions` of `@effect-responses/wire`): up to `times` retries (default 2) after the
 * first attempt, waiting `base` (default 500 ms) times 2 per retry, with jitter (each wait scaled by a
 * random factor between 0.8 and 1.2), each wait at most `maxDelay` (default 8 s). When the server sends
 * `retry-after-ms` or `retry-after`, that wait is used instead, up to `maxRetryAfter` (default 60 s; a
 * longer one returns the error at once, with its `retryAfter`).
 * Only retryable errors are retried (`AiError`'s `retryable`: 408, 409, 429 except `insufficient_quota`,
 * 5xx, transport errors).
 *
 * @since 0.1.0
 * @category models
 */
export type RetryOptions = HttpTransport.RetryOptions

/**
 * The default base URL, `https://api.openai.com/v1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_BASE_URL: string = HttpTransport.DEFAULT_BASE_URL

/**
 * The retry schedule of `RetryOptions` (see there), fed with the error of each failed attempt; exported so
 * that a caller can use the same policy around other effects. Logs each retry at Debug level with the
 * error's message (which never holds the API key). It is `HttpTransport.retrySchedule`.
 *
 * @since 0.1.0
 * @category retries
 */
export const retrySchedule: (options?: RetryOptions) => Schedule.Schedule<unknown, AiError.AiError> =
  HttpTransport.retrySchedule

/**
 * Builds the service over the `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const transport = yield* HttpTransport.make("/chat/completions", options)

    const create = (body: ChatCompletionsRequest.RequestBody): Effect.Effect<unknown, CreateError> =>
      transport.execute(body, false).pipe(
        Effect.flatMap(transport.readJson),
        Effect.tap((json) => annotateResponse(json)),
        Effect.withSpan("ChatCompletionsClient.create", { attributes: requestAttributes(body) })
      )

    const createStream = (
      body: ChatCompletionsRequest.RequestBody
    ): Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError> =>
      // Few stream stages (each costs a channel per call): the span's attributes are set from inside the
      // decoding stage (`Framing.observing`); `Channel.unwrap`, not `Stream.unwrap`. The span is given to the
      // request only: `Stream.withSpan` provides it to every effect of the stream, an `Effect.provide` (about
      // 20 fiber steps) per chunk of the body. The span is ended by the channel's finalizer, set before the
      // span is made (made and kept in one uninterruptible step), not by `Channel.acquireUseRelease`, whose
      // `Ref` of the release cost about 8 fiber steps per call.
      Stream.fromChannel(Channel.suspend(() => {
        // An untraced call (`HttpTransport.isUntraced`: no tracer installed, no span around it) makes no
        // span and the transport sends it with tracing off, as `ResponsesClient` does.
        let span: Tracer.Span | undefined
        const makeSpan = Effect.withFiberRuntime<Tracer.Span | undefined>((fiber) =>
          HttpTransport.isUntraced(fiber) ? Effect.succeed(undefined) : Effect.uninterruptible(Effect.map(
            Effect.makeSpan("ChatCompletionsClient.createStream", {
              attributes: requestAttributes(body),
              captureStackTrace: false
            }),
            (made) => (span = made)
          ))
        )
        return Channel.ensuringWith(
          Channel.unwrap(Effect.flatMap(makeSpan, (span) =>
            Effect.map(transport.execute(body, true, span), (response) =>
              // Decoded in the body's own channel (`decodeBody`), not by a stage piped after it; an in-stream
              // error or an excerpt of a malformed chunk may echo the key, cut out by the decoder itself.
              Stream.toChannel(transport.decodeBody(response, () =>
                decoder(span === undefined ? undefined : (part) => annotateSpan(span, part), transport.scrubError)
              ))))),
          (exit) => {
            const made = span
            return made === undefined
              ? Effect.void
              : Effect.clockWith((clock) => Effect.sync(() => made.end(clock.unsafeCurrentTimeNanos(), exit)))
          }
        )
      }))

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

/**
 * `ChatCompletionsStream.decodeSse`'s decoding, handing `observe` (when given: a traced call's span) every
 * element as the decoder yields it.
 */
const decoder = (
  observe: ((part: StreamPart.StreamPart) => void) | undefined,
  scrub: (error: ChatCompletionsStream.DecodeError) => ChatCompletionsStream.DecodeError
) =>
  Framing.bytesDecoder<StreamPart.StreamPart, ChatCompletionsStream.DecodeError>(
    () => makeSseFramer(Framing.DEFAULT_MAX_EVENT_SIZE),
    () => Framing.mappingErrors(observe === undefined ? new Decoder() : Framing.observing(new Decoder(), observe), scrub)
  )

/** Adds the span attributes a lifecycle element gives to `attributes`. */
/** Sets the span attributes a streamed element carries (the response's id and model, its finish and usage). */
const annotateSpan = (span: Tracer.Span, part: StreamPart.StreamPart): void => {
  if (part.type === "response_started") {
    span.attribute("gen_ai.response.id", part.responseId)
    span.attribute("gen_ai.response.model", part.model)
  } else if (part.type === "response_finished") {
    span.attribute("gen_ai.response.finish_reasons", [part.finishReason])
    span.attribute("gen_ai.usage.input_tokens", part.usage.inputTokens)
    span.attribute("gen_ai.usage.output_tokens", part.usage.outputTokens)
  }
}
