/**
 * What the gateway forwards to: the `LanguageModel` to call for each decoded request, the request
 * parameters that upstream does not use, and the answer to `GET /v1/models`.
 *
 * - `fromLanguageModel`: any core `LanguageModel` in the context (a `ResponsesLanguageModel`, a fake, an
 *   `@effect/ai` model through `@effect-responses/effect-ai`, …). The prompt (`input`, `instructions`), the
 *   tools, the tool choice and `text.format` (as the call's `responseFormat`) reach it (the
 *   `LanguageModel` interface takes nothing else per call); the other request parameters are accepted and
 *   echoed only.
 * - `chatCompletions` (the default of `effect-responses serve`): a Chat Completions backend (vLLM,
 *   llama.cpp, Ollama, DeepSeek, OpenAI…) at `baseUrl`, called with the request's own parameters where Chat
 *   Completions has a field for them (`FORWARDED_TO_CHAT_COMPLETIONS`, see `chatRequestOptions`); the
 *   others are accepted and echoed only. `GET /v1/models` is passed through to `{baseUrl}/models`.
 *
 * | Responses parameter | Chat Completions field |
 * |---|---|
 * | `model`, `input` + `instructions`, `tools`, `tool_choice`, `stream` | `model`, `messages`, `tools`, `tool_choice`, `stream` |
 * | `temperature`, `top_p` | the same |
 * | `max_output_tokens` | `max_completion_tokens` (or `max_tokens` by `maxTokensParameter`) |
 * | `parallel_tool_calls` | the same (sent with tools only) |
 * | `reasoning.effort` | `reasoning_effort` |
 * | `text.format` | `response_format` |
 * | `text.verbosity` | `verbosity` |
 * | `safety_identifier`, else `user` | `user` (the field Chat Completions servers have long known; `safety_identifier` replaces `user` in the API reference, so it wins when both are set) |
 * | `prompt_cache_key` | `prompt_cache_key` |
 * | `service_tier` | `service_tier` |
 *
 * Each is sent only when the request set it, so a backend never sees a field its client did not ask for.
 *
 * @since 0.1.0
 */
import { AiError, LanguageModel, type ResponseFormat } from "@effect-responses/core"
import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import type { ChatCompletionsRequest } from "@effect-responses/chat-completions"
import type * as ResponsesRequestDecoder from "./ResponsesRequestDecoder.js"
import { readBounded, transportError } from "@effect-responses/wire/HttpTransport"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"

/**
 * The body of an answer passed through as it came: HTTP `status`, `contentType` and the body text.
 *
 * @since 0.1.0
 * @category models
 */
export interface RawAnswer {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The model to call for one decoded request. */
  readonly languageModel: (
    request: ResponsesRequestDecoder.DecodedRequest
  ) => Effect.Effect<LanguageModel.Service>
  /**
   * The parameters the request set (`DecodedRequest.parameters`) that this upstream does not use: accepted
   * and echoed only.
   */
  readonly unusedParameters: (request: ResponsesRequestDecoder.DecodedRequest) => ReadonlyArray<string>
  /**
   * The answer to `GET /v1/models`; fails with `TransportError` when the upstream cannot be reached (or,
   * for `chatCompletions`, does not answer within its timeouts).
   */
  readonly listModels: Effect.Effect<RawAnswer, AiError.TransportError>
  /**
   * Whether this upstream's models read the encrypted content of reasoning items (a `ReasoningPart`'s
   * payload). `false` lets the gateway leave it out of the prompt while decoding
   * (`ResponsesRequestDecoder.Options.encryptedReasoning`); absent, it is kept.
   *
   * @since 0.2.0
   */
  readonly readsEncryptedReasoning?: boolean | undefined
  /**
   * Whether this upstream reads the ids, statuses and phases of input items (a part's `attributes`).
   * `false` lets the gateway leave them out of the prompt while decoding
   * (`ResponsesRequestDecoder.Options.itemAttributes`); absent, they are kept.
   *
   * @since 0.2.0
   */
  readonly readsItemAttributes?: boolean | undefined
  /**
   * Whether this upstream takes images given by file id (a `MediaPart` with only `fileId`). `false` lets
   * the gateway refuse an `input_image` with a `file_id` with a 400 naming it
   * (`ResponsesRequestDecoder.Options.imageFileIds`); absent, it is passed on.
   *
   * @since 0.2.0
   */
  readonly readsImageFileIds?: boolean | undefined
  /**
   * Whether this upstream takes a tool output that other messages separate from its call. `false` (Chat
   * Completions, which wants each tool message right after the assistant message holding its call) lets the
   * gateway refuse such an output with a 400 naming the client's `input[i]`
   * (`ResponsesRequestDecoder.Options.toolOutputsApart`); absent, the prompt goes on as it is.
   *
   * @since 0.2.0
   */
  readonly readsToolOutputsApart?: boolean | undefined
}

/**
 * What the gateway's access log learns about one request while it is handled: the requested `model`,
 * whether it `streamed`, how many HTTP requests went `attempts` to the upstream (counted by
 * `chatCompletions`, retries included; `undefined` for an upstream that does not count them), the
 * `responseId` of the response it answers with and that response's `outcome` (its final `status`:
 * `completed`, `incomplete` or `failed`; `client_closed` for a stream, or a non-streamed body written in
 * pieces, its client left before reading its end; `undefined` when no response was finished).
 *
 * @since 0.2.0
 * @category models
 */
export interface CallRecord {
  model: string | undefined
  streamed: boolean | undefined
  attempts: number | undefined
  responseId: string | undefined
  outcome: string | undefined
}

/**
 * The `CallRecord` of the request being handled (set by the gateway around each request; `undefined`
 * outside one).
 *
 * @since 0.2.0
 * @category references
 */
export const currentCallRecord: FiberRef.FiberRef<CallRecord | undefined> = FiberRef.unsafeMake<CallRecord | undefined>(
  undefined
)

/**
 * The service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Upstream extends Context.Tag("@effect-responses/server/Upstream")<Upstream, Service>() {}

/**
 * The model list `fromLanguageModel` answers `GET /v1/models` with: `{"object":"list","data":[{id,
 * object:"model", created: 0, owned_by:"effect-responses"}]}`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const modelList = (models: ReadonlyArray<string>): RawAnswer => ({
  status: 200,
  contentType: "application/json",
  body: JSON.stringify({
    object: "list",
    data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "effect-responses" }))
  })
})

/**
 * The request parameters every upstream uses: the prompt, the tools and the tool choice, the model name
 * and whether to stream.
 *
 * @since 0.1.0
 * @category constants
 */
export const FORWARDED_TO_ANY: ReadonlyArray<string> = ["model", "input", "instructions", "tools", "tool_choice", "stream"]

/**
 * The request parameters a `fromLanguageModel` upstream uses: those of `FORWARDED_TO_ANY` and `text.format`
 * (the call's `responseFormat`).
 *
 * @since 0.2.0
 * @category constants
 */
export const FORWARDED_TO_LANGUAGE_MODEL: ReadonlyArray<string> = [...FORWARDED_TO_ANY, "text.format"]

/**
 * The request parameters (as `DecodedRequest.parameters` names them) a Chat Completions upstream uses (see
 * the module doc for the fields they become); `user` only when `safety_identifier` is not set too.
 *
 * @since 0.1.0
 * @category constants
 */
export const FORWARDED_TO_CHAT_COMPLETIONS: ReadonlyArray<string> = [
  ...FORWARDED_TO_ANY,
  "temperature",
  "top_p",
  "max_output_tokens",
  "parallel_tool_calls",
  "reasoning.effort",
  "text.format",
  "text.verbosity",
  "safety_identifier",
  "user",
  "prompt_cache_key",
  "service_tier"
]

/**
 * The parameters of `request` outside `forwarded`, in request order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unusedParameters = (
  request: Pick<ResponsesRequestDecoder.DecodedRequest, "parameters">,
  forwarded: ReadonlyArray<string>
): ReadonlyArray<string> => request.parameters.filter((name) => !forwarded.includes(name))

const chatUnused = (request: ResponsesRequestDecoder.DecodedRequest): ReadonlyArray<string> => {
  const unused = unusedParameters(request, FORWARDED_TO_CHAT_COMPLETIONS)
  // `user` goes upstream only when `safety_identifier` does not take its place
  return request.parameters.includes("safety_identifier") && request.parameters.includes("user")
    ? request.parameters.filter((name) => name === "user" || unused.includes(name))
    : unused
}

/**
 * `model` with `format` as the response format of every call that sets none itself.
 */
const withResponseFormat = (
  model: LanguageModel.Service,
  format: ResponseFormat.ResponseFormat | undefined
): LanguageModel.Service => {
  if (format === undefined) return model
  const call = (options: LanguageModel.CallOptions | undefined): LanguageModel.CallOptions => ({
    ...options,
    responseFormat: options?.responseFormat ?? format
  })
  return LanguageModel.LanguageModel.of({
    generate: (prompt, options) => model.generate(prompt, call(options)),
    stream: (prompt, options) => model.stream(prompt, call(options))
  })
}

/**
 * The upstream made of the `LanguageModel` in the context: every request goes to it (its model is the
 * one the layer was built with), with the request's `text.format` as each call's `responseFormat` (a
 * layer that cannot honour it fails the call with `InvalidPrompt`, answered 400). `GET /v1/models` lists
 * `models` (default none).
 *
 * @since 0.1.0
 * @category layers
 */
export const fromLanguageModel = (
  options: { readonly models?: ReadonlyArray<string> | undefined } = {}
): Layer.Layer<Upstream, never, LanguageModel.LanguageModel> =>
  Layer.effect(
    Upstream,
    Effect.map(LanguageModel.LanguageModel, (model) =>
      Upstream.of({
        languageModel: (request) => Effect.succeed(withResponseFormat(model, request.options.textFormat)),
        unusedParameters: (request) => unusedParameters(request, FORWARDED_TO_LANGUAGE_MODEL),
        listModels: Effect.succeed(modelList(options.models ?? []))
      }))
  )

/**
 * The settings of a Chat Completions upstream:
 *
 * - `baseUrl` (with `/v1`, without `/chat/completions`);
 * - `apiKey` (sent as a bearer token; none for local servers);
 * - `retry`: the gateway's own retries before the first byte (`ChatCompletionsClient.RetryOptions`),
 *   default `{ times: 0 }`: the error (with the upstream's `retry-after` and request id) goes back to the
 *   client, whose SDK retries itself; retrying here too multiplies the attempts (an SDK's 3 attempts times
 *   the gateway's 3 make 9 upstream calls for one failing request). Once the layer is being released (the
 *   gateway shuts down) no call is retried any more: a wait between attempts, or a retry in flight, ends at
 *   once with the last attempt's error (`RetryOptions.stop`, raced with the `stop` given here, if any), so
 *   that a request in flight gets its `server_shutting_down` answer without waiting out the backoff;
 * - `headersTimeout`: the longest wait for the upstream's response headers (default `HEADERS_TIMEOUT`,
 *   300 s; a non-streaming upstream that sends its headers with the whole answer must answer within it);
 * - `idleTimeout`: the longest silence between two chunks of the upstream's body, keep-alives (SSE
 *   comments, `event: ping`, chunks that hold no output such as `data: {}`) counting as silence (default
 *   `IDLE_TIMEOUT`, 180 s);
 * - `requestOptions`: fixed request options merged under each request's own (e.g. `maxTokensParameter:
 *   "max_tokens"` for older servers, `replayReasoningContent: true` for DeepSeek-style backends that want
 *   `reasoning_content` back, `extraBody`).
 *
 * A timeout aborts the upstream request and fails with a `TransportError` whose `timeout` says which: the
 * gateway answers 504 `upstream_timeout` before the first byte, `response.failed` with `upstream_timeout`
 * after it. Every upstream request asks for an uncompressed answer (`accept-encoding: identity`): the
 * gateway's HTTP client does not decompress, and a server asked for nothing may compress as it likes. An
 * answer compressed all the same (a proxy that ignores the header) is decoded by the transport when it is
 * `gzip`, `deflate` or `br` (`HttpTransport`); another coding fails as a 502 naming it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatCompletionsOptions {
  readonly baseUrl: string
  readonly apiKey?: Redacted.Redacted | undefined
  readonly retry?: ChatCompletionsClient.RetryOptions | undefined
  readonly headersTimeout?: Duration.DurationInput | undefined
  readonly idleTimeout?: Duration.DurationInput | undefined
  readonly requestOptions?: Partial<ChatCompletionsRequest.RequestOptions> | undefined
}

/**
 * The default headers timeout of a Chat Completions upstream: 300 seconds.
 *
 * @since 0.2.0
 * @category constants
 */
export const HEADERS_TIMEOUT: Duration.Duration = Duration.seconds(300)

/**
 * The default idle timeout of a Chat Completions upstream (the longest silence between two chunks of its
 * body, where in a stream keep-alives, such as SSE comments and pings, are silence too): 180 seconds.
 *
 * @since 0.2.0
 * @category constants
 */
export const IDLE_TIMEOUT: Duration.Duration = Duration.seconds(180)

/**
 * The Chat Completions request options of one decoded request (see the module doc for what is
 * forwarded), over `defaults`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const chatRequestOptions = (
  request: ResponsesRequestDecoder.DecodedRequest,
  defaults: Partial<ChatCompletionsRequest.RequestOptions> = {}
): ChatCompletionsRequest.RequestOptions => {
  const options = request.options
  const format = options.textFormat
  const user = options.safetyIdentifier ?? options.user
  return {
    ...defaults,
    model: request.model,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.topP === undefined ? {} : { topP: options.topP }),
    ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
    ...(options.parallelToolCalls === undefined ? {} : { parallelToolCalls: options.parallelToolCalls }),
    ...(options.reasoningEffort === undefined ? {} : { reasoningEffort: options.reasoningEffort }),
    ...(format === undefined || format.type === "text" ? {} : { responseFormat: format }),
    ...(options.verbosity === undefined ? {} : { verbosity: options.verbosity }),
    ...(user === undefined ? {} : { user }),
    ...(options.promptCacheKey === undefined ? {} : { promptCacheKey: options.promptCacheKey }),
    ...(options.serviceTier === undefined ? {} : { serviceTier: options.serviceTier })
  }
}

/** The bound on the upstream's model list (`GET /v1/models`): 4 MiB. */
const MAX_MODELS_BYTES = 4 * 1024 * 1024

/** The headers asking an upstream for an uncompressed answer (RFC 9110: with no `accept-encoding`, any coding is fine). */
const UNCOMPRESSED = { "accept-encoding": "identity" } as const

/**
 * The upstream over a Chat Completions backend (see the module doc), on the `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category layers
 */
export const chatCompletions = (
  options: ChatCompletionsOptions
): Layer.Layer<Upstream, never, HttpClient.HttpClient> =>
  Layer.scoped(
    Upstream,
    Effect.gen(function*() {
      const httpClient = yield* HttpClient.HttpClient
      // completed as the layer is released (the gateway shutting down): retries stop (see `retry` above)
      const released = yield* Deferred.make<void>()
      yield* Effect.addFinalizer(() => Deferred.succeed(released, undefined))
      const retry = options.retry ?? { times: 0 }
      const stop = retry.stop === undefined
        ? Deferred.await(released)
        : Effect.raceFirst(Deferred.await(released), retry.stop)
      // every HTTP request to the upstream (retries included) counts in the request's `CallRecord`
      const counting = HttpClient.tapRequest(httpClient, () =>
        Effect.map(FiberRef.get(currentCallRecord), (record) => {
          if (record !== undefined) record.attempts = (record.attempts ?? 0) + 1
        }))
      const client = yield* ChatCompletionsClient.make({
        baseUrl: options.baseUrl,
        apiKey: options.apiKey,
        headers: UNCOMPRESSED,
        retry: { ...retry, stop },
        headersTimeout: options.headersTimeout ?? HEADERS_TIMEOUT,
        idleTimeout: options.idleTimeout ?? IDLE_TIMEOUT
      }).pipe(Effect.provideService(HttpClient.HttpClient, counting))
      const modelsUrl = `${options.baseUrl.replace(/\/+$/, "")}/models`
      const listModels = Effect.gen(function*() {
        let request = HttpClientRequest.setHeaders(HttpClientRequest.get(modelsUrl), UNCOMPRESSED)
        if (options.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, options.apiKey)
        // the error's reason and its cause (`connect ECONNREFUSED …`), as a model call's transport errors have them
        const response = yield* httpClient.execute(request).pipe(
          Effect.mapError((error) => transportError(error, modelsUrl)),
          Effect.timeoutFail({
            duration: options.headersTimeout ?? HEADERS_TIMEOUT,
            onTimeout: () =>
              new AiError.TransportError({ description: "no response headers in time", url: modelsUrl, timeout: "headers" })
          })
        )
        const body = yield* readBounded(response.stream, MAX_MODELS_BYTES).pipe(
          Effect.mapError((error) => transportError(error, modelsUrl)),
          Effect.timeoutFail({
            duration: options.idleTimeout ?? IDLE_TIMEOUT,
            onTimeout: () => new AiError.TransportError({ description: "the model list did not arrive in time", url: modelsUrl, timeout: "idle" })
          })
        )
        return {
          status: response.status,
          contentType: response.headers["content-type"] ?? "application/json",
          body
        }
      }).pipe(Effect.scoped)
      return Upstream.of({
        // the model over the client, not `make` under `Effect.provideService` (about 17 fiber steps a request)
        languageModel: (request) =>
          Effect.succeed(ChatCompletionsLanguageModel.fromClient(client, chatRequestOptions(request, options.requestOptions))),
        unusedParameters: chatUnused,
        listModels,
        // a Chat Completions request has no field for it (`ChatCompletionsRequest` sends reasoning, when at
        // all, as its text)
        readsEncryptedReasoning: false,
        // nor for an item's id, status or phase
        readsItemAttributes: false,
        // `image_url` takes a URL or a data URL, never a file id
        readsImageFileIds: false,
        // a tool message must follow the assistant message holding its call (`ChatCompletionsRequest.PAIRING_RULES`)
        readsToolOutputsApart: false
      })
    })
  )
