/**
 * The protocol switch: one `LanguageModel` layer over either wire protocol, chosen by value or by
 * configuration (`OPENAI_PROTOCOL`: `responses`, the default, or `chat-completions`). Everything above the
 * `LanguageModel` (the part model, `MessageAggregator`, `ToolLoop`) is the same for both.
 *
 * ```ts
 * Effect.provide(program, Protocol.layerConfig({ model: "gpt-4o-mini" })).pipe(
 *   Effect.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * It lives here, not in `core`, because it depends on both protocol packages.
 *
 * @since 0.1.0
 */
import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import type { LanguageModel } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Defaults from "./internal/defaults.js"

/**
 * The wire protocols: `responses` (`POST /v1/responses`) and `chat-completions`
 * (`POST /v1/chat/completions`).
 *
 * @since 0.1.0
 * @category models
 */
export const Protocol = Schema.Literal("responses", "chat-completions")

/**
 * @since 0.1.0
 * @category models
 */
export type Protocol = typeof Protocol.Type

/**
 * What `layer` takes:
 *
 * - `protocol`: which wire to speak;
 * - `model`: the model name, for both;
 * - `apiKey`, `baseUrl`, `headers`, `retry` (`{ times, base, maxDelay, maxRetryAfter }`): the HTTP client
 *   settings, for both;
 * - `responses`: further `ResponsesLanguageModel` options, used when `protocol` is `responses`;
 * - `chatCompletions`: further `ChatCompletionsLanguageModel` options, used when it is `chat-completions`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly protocol: Protocol
  readonly model: string
  readonly apiKey?: Redacted.Redacted | undefined
  readonly baseUrl?: string | undefined
  readonly headers?: { readonly [name: string]: string } | undefined
  readonly retry?: ChatCompletionsClient.RetryOptions | undefined
  readonly responses?: Omit<ResponsesLanguageModel.Options, "model"> | undefined
  readonly chatCompletions?: Omit<ChatCompletionsLanguageModel.Options, "model"> | undefined
}

/**
 * The `LanguageModel` layer of `options.protocol`, with its HTTP client; the application provides the
 * `HttpClient` (e.g. `NodeHttpClient.layerUndici`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> => {
  const client = { apiKey: options.apiKey, baseUrl: options.baseUrl, headers: options.headers, retry: options.retry }
  switch (options.protocol) {
    case "responses":
      return ResponsesLanguageModel.layer({ ...options.responses, model: options.model }).pipe(
        Layer.provide(ResponsesClient.layer(client))
      )
    case "chat-completions":
      return ChatCompletionsLanguageModel.layer({ ...options.chatCompletions, model: options.model }).pipe(
        Layer.provide(ChatCompletionsClient.layer(client))
      )
  }
}

/**
 * The protocol from configuration: `OPENAI_PROTOCOL` (`responses` or `chat-completions`, default
 * `responses`).
 *
 * @since 0.1.0
 * @category config
 */
export const protocolConfig: Config.Config<Protocol> = Defaults.protocolConfig

/**
 * The default configuration of `layerConfig`: `OPENAI_PROTOCOL` (see `protocolConfig`), `OPENAI_MODEL`
 * (required unless `overrides.model` is given), `OPENAI_API_KEY` (redacted, optional), `OPENAI_BASE_URL`
 * (optional; each client's default otherwise) and `OPENAI_MAX_RETRIES` (optional).
 *
 * @since 0.1.0
 * @category config
 */
export const config = (overrides: Partial<Options> = {}): Config.Config<Options> =>
  Config.all({
    protocol: overrides.protocol === undefined ? protocolConfig : Config.succeed(overrides.protocol),
    model: overrides.model === undefined ? Config.nonEmptyString("OPENAI_MODEL") : Config.succeed(overrides.model),
    apiKey: Config.option(Config.redacted("OPENAI_API_KEY")),
    baseUrl: Config.option(Config.string("OPENAI_BASE_URL")),
    maxRetries: Config.option(Config.integer("OPENAI_MAX_RETRIES"))
  }).pipe(
    Config.map(({ apiKey, baseUrl, maxRetries, model, protocol }): Options => ({
      apiKey: Option.getOrUndefined(apiKey),
      baseUrl: Option.getOrUndefined(baseUrl),
      ...(Option.isSome(maxRetries) ? { retry: { times: maxRetries.value } } : {}),
      ...overrides,
      protocol,
      model
    }))
  )

/**
 * The `LanguageModel` layer with its protocol and settings from `effect/Config` (see `config`); fields of
 * `overrides` win over the configuration. Fails with a `ConfigError` when the configuration is invalid
 * (e.g. `OPENAI_PROTOCOL=soap`) or the model is missing.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  overrides: Partial<Options> = {}
): Layer.Layer<LanguageModel.LanguageModel, ConfigError.ConfigError, HttpClient.HttpClient> =>
  Layer.unwrapEffect(Effect.map(config(overrides), layer))
