/**
 * The HTTP client of the Responses API: `POST {baseUrl}/responses`, whole (`create`) or streamed
 * (`createStream`), over `@effect/platform`'s `HttpClient` (the application provides the platform layer,
 * e.g. `NodeHttpClient.layerUndici`).
 *
 * - The transport (request building, status check, retries, error mapping) is `HttpTransport` of
 *   `@effect-responses/wire`, shared with the Chat Completions client.
 * - The API key (`Redacted`) goes only into the `Authorization: Bearer` header; it never appears in an
 *   error, a log or a span (the `HttpClient` span redacts `authorization`): a key of 8 characters or more
 *   is cut out of every error built from what the server sent (an error body, an in-stream error, an
 *   excerpt of a malformed event) when the server echoes it. Without a key no
 *   `Authorization` header is sent, which suits local servers.
 * - A non-2xx answer fails with `AiError.HttpError`, read from OpenAI's error body
 *   `{"error":{"message","type","param","code"}}`, with the `x-request-id` header as `requestId` and
 *   `retry-after-ms` / `retry-after` as `retryAfter`.
 * - A request that gets no answer, or a body that breaks off, fails with `AiError.TransportError`.
 * - No call waits forever: no response headers within `headersTimeout` (default 10 minutes, per attempt)
 *   fails with a retryable `AiError.TransportError` whose `timeout` is `"headers"`; a body silent longer than
 *   `idleTimeout` between two chunks (default 5 minutes) with one whose `timeout` is `"idle"`, after the
 *   parts that arrived and not retryable once a byte of the body arrived (`bytesReceived`); both abort the
 *   request; `false` turns each off. Error bodies
 *   are read up to 64 KiB.
 * - Retries (`RetryOptions`): exponential backoff with jitter, a bounded number of times, only for
 *   retryable errors (408, 409, 429 rate limits, 5xx, connection failures; never `insufficient_quota` or
 *   another 4xx), waiting what `retry-after-ms` / `retry-after` ask (up to `maxRetryAfter`: a longer wait
 *   returns the error at once), and only before the first byte
 *   of a response body: a stream that breaks off after its first byte is never sent again.
 * - Interrupting the fiber aborts the HTTP request.
 * - Tracing: one span per model call (`chat {model}`, kind `client`) with the OpenTelemetry GenAI
 *   attributes, and the `gen_ai.client.token.usage` / `gen_ai.client.operation.duration` metrics. Message
 *   content goes into the span only with `recordContent: true`.
 *
 * @since 0.1.0
 */
import { AiError, type LanguageModel, type StreamPart } from "@effect-responses/core"
import * as Framing from "@effect-responses/wire/Framing"
import * as HttpTransport from "@effect-responses/wire/HttpTransport"
import { arrayField, isObject, numberField, objectField, stringField } from "@effect-responses/wire/Json"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import type * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as ResponsesOutput from "./ResponsesOutput.js"
import type * as ResponsesRequest from "./ResponsesRequest.js"
import { Decoder, makeSseFramer } from "./internal/decoder.js"
import * as ResponsesStream from "./ResponsesStream.js"

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
   * `POST {baseUrl}/responses` with `body` and `stream: false`; succeeds with the response JSON (decode it
   * with `ResponsesOutput.fromResponse`). Fails with `HttpError`, `TransportError`, `MalformedOutput` (a
   * 2xx body that is not JSON) or `InvalidPrompt` (a body that cannot be encoded as JSON).
   */
  readonly create: (body: ResponsesRequest.RequestBody) => Effect.Effect<unknown, CreateError>
  /**
   * `POST {baseUrl}/responses` with `body` and `stream: true`; the SSE body decoded by
   * `ResponsesStream.decodeSse`. Fails like `create` before the first element, then with the decoder's
   * errors or a `TransportError` when the body breaks off.
   */
  readonly createStream: (body: ResponsesRequest.RequestBody) => Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError>
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
 * `https://api.openai.com/v1`, without the `/responses` path), extra `headers` sent with every request
 * (e.g. `OpenAI-Organization`, `OpenAI-Project`), `retry` (see `RetryOptions`; `{ times: 0 }` turns retries
 * off), `headersTimeout` (time to response headers, per attempt; default 10 minutes), `idleTimeout`
 * (longest silence between two body chunks; default 5 minutes), each `false` for none, `transformClient` (the `HttpClient`
 * of the context in, the one the client sends with out: a proxy, more headers, logging, a retry policy of
 * one's own, e.g. `transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-team", "search"))`;
 * the client's own retries wrap it) and `recordContent` (default `false`: put the instructions, input items and output items into the
 * span as `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`; they may hold
 * personal data).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends HttpTransport.Options {
  readonly recordContent?: boolean | undefined
}

/**
 * How failed requests are retried: up to `times` retries (default 2) after the first attempt, waiting
 * `base` (default 500 ms) times 2 per retry, with jitter, each wait at most `maxDelay` (default 8 s); a
 * `retry-after-ms` / `retry-after` wait is used instead, up to `maxRetryAfter` (default 60 s; a longer one
 * returns the error at once, with its `retryAfter`). Only
 * retryable errors are retried. The options of `HttpTransport.RetryOptions` (`@effect-responses/wire`),
 * shared with the Chat Completions client.
 *
 * @since 0.1.0
 * @category models
 */
export type RetryOptions = HttpTransport.RetryOptions

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
 * The default base URL, `https://api.openai.com/v1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_BASE_URL: string = HttpTransport.DEFAULT_BASE_URL

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
    const transport = yield* HttpTransport.make("/responses", options)
    const { execute, url } = transport
    const recordContent = options.recordContent === true
    const server = serverAttributes(url)

    const metricsOf = taggedMetrics()

    const create = (body: ResponsesRequest.RequestBody): Effect.Effect<unknown, CreateError> =>
      Effect.useSpan(spanName(body), {
        kind: "client",
        attributes: { ...requestAttributes(body, recordContent), ...server }
      }, (span) =>
        Effect.flatMap(Clock.currentTimeMillis, (start) =>
          execute(body, false).pipe(
            Effect.flatMap(transport.readJson),
            Effect.withParentSpan(span),
            Effect.tapError((error) => recorded((seconds, tags) => recordFailure(span, body, error, seconds, tags), start)),
            Effect.tap((json) =>
              recorded((seconds, tags) => {
                const summary = responseSummary(json)
                recordResponse(span, metricsOf(body.model, summary.model), summary, seconds, tags)
                if (recordContent && isObject(json)) span.attribute("gen_ai.output.messages", JSON.stringify(json.output ?? []))
              }, start)
            )
          )))

    // Few stream stages, each one costing a channel per call (the fixed cost of a short answer): the summary
    // of the lifecycle elements for the span and the metrics is taken inside the decoding stage
    // (`Framing.observing`), and the release records it however the stream ends. `Channel.unwrap` where
    // `Stream.unwrap` would spend about 140 fiber steps per call on a one-element stream. The span is given
    // to the request and the release only: `Stream.withSpan` provides it to every effect of the stream, an
    // `Effect.provide` (about 20 fiber steps) per chunk of the body.
    const createStream = (body: ResponsesRequest.RequestBody): Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError> =>
      Stream.fromChannel(Channel.suspend(() => {
        let start = 0
        let summary: ResponseSummary = {}
        const observe = (part: StreamPart.StreamPart): void => {
          if (part.type === "response_started") {
            summary = { ...summary, id: part.responseId, model: part.model }
          } else if (part.type === "response_finished") {
            summary = {
              ...summary,
              id: part.responseId,
              finishReason: part.finishReason,
              inputTokens: part.usage.inputTokens,
              outputTokens: part.usage.outputTokens
            }
          }
        }
        // The release is the channel's finalizer, set before the span is made (made and kept in one
        // uninterruptible step), as in `ChatCompletionsClient`: `Channel.acquireUseRelease` keeps its release
        // in a `Ref`, about 8 fiber steps per call. An untraced call (`HttpTransport.isUntraced`: no tracer
        // installed, no span around it) makes no span, and the transport sends it with tracing off; its
        // metrics are recorded all the same.
        let span: Tracer.Span | undefined
        let begun = false
        const makeSpan = Effect.withFiberRuntime<Tracer.Span | undefined>((fiber) => {
          if (HttpTransport.isUntraced(fiber)) {
            begun = true
            return Effect.succeed(undefined)
          }
          return Effect.uninterruptible(Effect.map(
            Effect.makeSpan(spanName(body), {
              kind: "client",
              attributes: { ...requestAttributes(body, recordContent), ...server },
              captureStackTrace: false
            }),
            (made) => {
              begun = true
              return (span = made)
            }
          ))
        })
        return Channel.ensuringWith(
          Channel.unwrap(Effect.flatMap(makeSpan, (span) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              start = now
              return Effect.map(execute(body, true, span), (response) =>
                // Decoded in the body's own channel (`decodeBody`), not by a stage piped after it; an error
                // event or an excerpt of a malformed one may echo the key, cut out by the decoder itself.
                Stream.toChannel(transport.decodeBody(response, () => decoder(observe, transport.scrubError))))
            }))),
          (exit) => {
            const made = span
            // interrupted before it began: nothing to record
            return !begun ? Effect.void : recorded((seconds, tags, clock) => {
              const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
              if (Option.isSome(failure)) recordFailure(made, body, failure.value, seconds, tags)
              if (summary.finishReason === undefined) {
                if (made !== undefined) annotate(made, summary)
              } else recordResponse(made, metricsOf(body.model, summary.model), summary, seconds, tags)
              made?.end(clock.unsafeCurrentTimeNanos(), exit)
            }, start)
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

/**
 * An `HttpError` from a non-2xx response and its body text: `description`, `errorType`, `code` and `param`
 * from OpenAI's `{"error":{"message","type","param","code"}}` (a `null` field is left out; a body of
 * another shape becomes the description; either cut at `AiError.MAX_MESSAGE` characters, saying how much
 * was cut), `requestId` from `x-request-id`,
 * `retryAfter` from `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date). It is
 * `AiError.httpErrorFromResponse` (core) over an `HttpClientResponse`.
 *
 * @since 0.1.0
 * @category errors
 */
export const httpError = (response: HttpClientResponse.HttpClientResponse, body: string): AiError.HttpError =>
  AiError.httpErrorFromResponse({ status: response.status, headers: response.headers, body })

// ---------------------------------------------------------------------------------------------------------
// telemetry
// ---------------------------------------------------------------------------------------------------------

/**
 * `gen_ai.client.token.usage`: a histogram of the tokens of each model call (OpenTelemetry GenAI metrics),
 * tagged `gen_ai.token.type` (`input` / `output`), `gen_ai.operation.name` (`chat`),
 * `gen_ai.provider.name` (`openai`), `gen_ai.request.model` and `gen_ai.response.model`. Buckets are the
 * convention's (powers of 4 from 1 to 67 108 864 tokens).
 *
 * @since 0.1.0
 * @category metrics
 */
export const tokenUsage = Metric.histogram(
  "gen_ai.client.token.usage",
  MetricBoundaries.fromIterable([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]),
  "Number of input and output tokens used"
)

/**
 * `gen_ai.client.operation.duration`: a histogram of the duration of each model call in seconds, from the
 * request to the whole body (or the end of the stream), tagged like `tokenUsage` (without the token type)
 * and `error.type` (the `AiError` tag) when the call failed. Buckets are the convention's (0.01 s to 81.92 s).
 *
 * @since 0.1.0
 * @category metrics
 */
export const operationDuration = Metric.histogram(
  "gen_ai.client.operation.duration",
  MetricBoundaries.fromIterable([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]),
  "GenAI operation duration, in seconds"
)

/**
 * The `gen_ai.provider.name` this client reports: `openai`.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROVIDER_NAME = "openai" as const

interface ResponseSummary {
  readonly id?: string | undefined
  readonly model?: string | undefined
  readonly finishReason?: string | undefined
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
}

const spanName = (body: ResponsesRequest.RequestBody): string => `chat ${body.model}`

const serverAttributes = (url: string): Record<string, unknown> => {
  try {
    const parsed = new URL(url)
    const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port)
    return { "server.address": parsed.hostname, "server.port": port }
  } catch {
    return {}
  }
}

const requestAttributes = (body: ResponsesRequest.RequestBody, recordContent: boolean): Record<string, unknown> => {
  const attributes: Record<string, unknown> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": PROVIDER_NAME,
    "gen_ai.request.model": body.model
  }
  if (typeof body.temperature === "number") attributes["gen_ai.request.temperature"] = body.temperature
  if (typeof body.top_p === "number") attributes["gen_ai.request.top_p"] = body.top_p
  if (typeof body.max_output_tokens === "number") attributes["gen_ai.request.max_tokens"] = body.max_output_tokens
  if (recordContent) {
    if (body.instructions !== undefined) attributes["gen_ai.system_instructions"] = body.instructions
    attributes["gen_ai.input.messages"] = JSON.stringify(body.input)
  }
  return attributes
}

const responseSummary = (json: unknown): ResponseSummary => {
  if (!isObject(json)) return {}
  const usage = objectField(json, "usage")
  const output = arrayField(json, "output") ?? []
  const status = stringField(json, "status") ?? "completed"
  const incomplete = objectField(json, "incomplete_details")
  return {
    id: stringField(json, "id"),
    model: stringField(json, "model"),
    finishReason: ResponsesOutput.finishReasonOf(
      status,
      incomplete && stringField(incomplete, "reason"),
      ResponsesOutput.hasFunctionCall(output)
    ),
    inputTokens: usage && numberField(usage, "input_tokens"),
    outputTokens: usage && numberField(usage, "output_tokens")
  }
}

/** `ResponsesStream.decodeSse`'s decoding, handing `observe` every element as the decoder yields it. */
const decoder = (
  observe: (part: StreamPart.StreamPart) => void,
  scrub: (error: ResponsesStream.DecodeError) => ResponsesStream.DecodeError
) =>
  Framing.bytesDecoder<StreamPart.StreamPart, ResponsesStream.DecodeError>(
    () => makeSseFramer(ResponsesStream.DEFAULT_MAX_EVENT_SIZE),
    () => Framing.mappingErrors(Framing.observing(new Decoder(), observe), scrub)
  )

/** Sets the response attributes of `summary` on `span`. */
const annotate = (span: Tracer.Span, summary: ResponseSummary): void => {
  if (summary.id !== undefined) span.attribute("gen_ai.response.id", summary.id)
  if (summary.model !== undefined) span.attribute("gen_ai.response.model", summary.model)
  if (summary.finishReason !== undefined) span.attribute("gen_ai.response.finish_reasons", [summary.finishReason])
  if (summary.inputTokens !== undefined) span.attribute("gen_ai.usage.input_tokens", summary.inputTokens)
  if (summary.outputTokens !== undefined) span.attribute("gen_ai.usage.output_tokens", summary.outputTokens)
}

const metricLabels = (requestModel: string, responseModel: string | undefined): Array<MetricLabel.MetricLabel> => [
  MetricLabel.make("gen_ai.operation.name", "chat"),
  MetricLabel.make("gen_ai.provider.name", PROVIDER_NAME),
  MetricLabel.make("gen_ai.request.model", requestModel),
  ...(responseModel === undefined ? [] : [MetricLabel.make("gen_ai.response.model", responseModel)])
]

type Histogram = Metric.Metric<MetricKeyType.MetricKeyType.Histogram, number, MetricState.MetricState.Histogram>

/** The metrics of the answers of one request model and one response model, tagged with their labels. */
interface TaggedMetrics {
  readonly inputTokens: Histogram
  readonly outputTokens: Histogram
  readonly duration: Histogram
}

/**
 * How many (request model, response model) pairs a client keeps tagged metrics for; past that the cache
 * starts over, so that a server naming a new model in every answer cannot grow it without bound.
 */
const MAX_TAGGED_METRICS = 64

/**
 * The tagged metrics of each (request model, response model) pair, made once per pair. A metric tagged anew
 * for every call (`Metric.taggedWithLabels` with a new label array) builds and hashes its metric key on each
 * update to find the histogram in the registry; one made once, updated from a fiber without metric labels of
 * its own, finds it in the metric's own cache (the labels are the same array).
 */
const taggedMetrics = () => {
  const cache = new Map<string, Map<string | undefined, TaggedMetrics>>()
  let size = 0
  return (requestModel: string, responseModel: string | undefined): TaggedMetrics => {
    let byResponseModel = cache.get(requestModel)
    let metrics = byResponseModel?.get(responseModel)
    if (metrics !== undefined) return metrics
    if (size >= MAX_TAGGED_METRICS) {
      cache.clear()
      size = 0
      byResponseModel = undefined
    }
    if (byResponseModel === undefined) {
      byResponseModel = new Map()
      cache.set(requestModel, byResponseModel)
    }
    const labels = metricLabels(requestModel, responseModel)
    metrics = {
      inputTokens: Metric.taggedWithLabels(tokenUsage, [...labels, MetricLabel.make("gen_ai.token.type", "input")]),
      outputTokens: Metric.taggedWithLabels(tokenUsage, [...labels, MetricLabel.make("gen_ai.token.type", "output")]),
      duration: Metric.taggedWithLabels(operationDuration, labels)
    }
    byResponseModel.set(responseModel, metrics)
    size++
    return metrics
  }
}

/**
 * Runs `record` with the seconds since `start` (milliseconds of the fiber's `Clock`), the fiber's metric
 * labels (what `Metric.update` adds to a metric's own) and the clock: the telemetry of a call in one
 * synchronous step, where an effect per attribute and per metric cost about 60 fiber steps per call.
 */
const recorded = (
  record: (seconds: number, tags: ReadonlyArray<MetricLabel.MetricLabel>, clock: Clock.Clock) => void,
  start: number
): Effect.Effect<void> =>
  Effect.clockWith((clock) =>
    FiberRef.getWith(FiberRef.currentMetricLabels, (tags) =>
      Effect.sync(() => record(Math.max(0, clock.unsafeCurrentTimeMillis() - start) / 1000, tags, clock)))
  )

const recordResponse = (
  span: Tracer.Span | undefined,
  metrics: TaggedMetrics,
  summary: ResponseSummary,
  seconds: number,
  tags: ReadonlyArray<MetricLabel.MetricLabel>
): void => {
  if (span !== undefined) annotate(span, summary)
  if (summary.inputTokens !== undefined) metrics.inputTokens.unsafeUpdate(summary.inputTokens, tags)
  if (summary.outputTokens !== undefined) metrics.outputTokens.unsafeUpdate(summary.outputTokens, tags)
  metrics.duration.unsafeUpdate(seconds, tags)
}

const recordFailure = (
  span: Tracer.Span | undefined,
  body: ResponsesRequest.RequestBody,
  error: AiError.AiError,
  seconds: number,
  tags: ReadonlyArray<MetricLabel.MetricLabel>
): void => {
  span?.attribute("error.type", error._tag)
  Metric.taggedWithLabels(operationDuration, [
    ...metricLabels(body.model, undefined),
    MetricLabel.make("error.type", error._tag)
  ]).unsafeUpdate(seconds, tags)
}
