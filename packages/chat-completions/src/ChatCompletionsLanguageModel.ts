/**
 * The core `LanguageModel` service over the Chat Completions API: `Prompt` -> request body
 * (`ChatCompletionsRequest.fromPrompt`) -> `ChatCompletionsClient` -> `ModelResponse`
 * (`ChatCompletionsOutput.fromCompletion`) or `StreamPart`s (`ChatCompletionsStream`). The part model, the
 * aggregator and the tool loop work over it unchanged.
 *
 * ```ts
 * Effect.provide(program, ChatCompletionsLanguageModel.layer({ model: "gpt-4o-mini" })).pipe(
 *   Effect.provide(ChatCompletionsClient.layerConfig()),   // OPENAI_API_KEY, OPENAI_BASE_URL
 *   Effect.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * @since 0.1.0
 */
import { LanguageModel, Message, ModelResponse, Part, type Prompt, StreamPart } from "@effect-responses/core"
import * as Channel from "effect/Channel"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ChatCompletionsClient from "./ChatCompletionsClient.js"
import * as ChatCompletionsOutput from "./ChatCompletionsOutput.js"
import * as ChatCompletionsRequest from "./ChatCompletionsRequest.js"

/**
 * The layer's request options: the model and every `ChatCompletionsRequest.RequestOptions` field. `tools`
 * and `toolChoice` given here are defaults that each call's `CallOptions` merge over.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = ChatCompletionsRequest.RequestOptions

/**
 * Per-call overrides of the layer's options: any `Options` field, `model` included.
 *
 * @since 0.2.0
 * @category models
 */
export type OptionsOverride = { readonly [K in keyof Options]?: Options[K] }

/**
 * The overrides in effect for the Chat Completions model calls of the current fiber (default: none). Set
 * it with `withOptions`, which merges over what is already set.
 *
 * @since 0.2.0
 * @category references
 */
export class CurrentOptions extends Context.Reference<CurrentOptions>()(
  "@effect-responses/chat-completions/ChatCompletionsLanguageModel/CurrentOptions",
  { defaultValue: (): OptionsOverride => ({}) }
) {}

/**
 * `override` merged over `base`: a field set in `override` wins, except that `extraBody` merges one level
 * deep and `tools` merge by name, namespace and kind (`LanguageModel.mergeTools`: an override tool replaces the base tool
 * the model calls by the same name in the same namespace, a built-in tool only the same built-in; base tools come first). A field set to `undefined` in `override` leaves the base's.
 *
 * @since 0.2.0
 * @category combinators
 */
export const mergeOptions: {
  (override: OptionsOverride): <O extends OptionsOverride>(base: O) => O
  <O extends OptionsOverride>(base: O, override: OptionsOverride): O
} = dual(2, <O extends OptionsOverride>(base: O, override: OptionsOverride): O => {
  const out: Record<string, unknown> = { ...base }
  for (const key of Object.keys(override) as Array<keyof OptionsOverride>) {
    const value = override[key]
    if (value === undefined) continue
    if (key === "extraBody") out[key] = { ...base.extraBody, ...override.extraBody }
    else if (key === "tools") out[key] = LanguageModel.mergeTools(base.tools, override.tools)
    else out[key] = value
  }
  return out as O
})

/**
 * Runs `self` (an `Effect` or a `Stream`, e.g. a `ToolLoop.generate`) with `overrides` merged over the
 * options of every Chat Completions model call it makes (`mergeOptions`; nested `withOptions` merge inner
 * over outer), as `ResponsesLanguageModel.withOptions` does for the Responses layer.
 *
 * ```ts
 * ToolLoop.generate(prompt, { toolkit }).pipe(
 *   ChatCompletionsLanguageModel.withOptions({ temperature: 0, maxOutputTokens: 500 })
 * )
 * ```
 *
 * @since 0.2.0
 * @category combinators
 */
export const withOptions: {
  (overrides: OptionsOverride): <Self extends EffectOrStream>(self: Self) => Self
  <Self extends EffectOrStream>(self: Self, overrides: OptionsOverride): Self
} = dual(
  2,
  <Self extends EffectOrStream>(self: Self, overrides: OptionsOverride): Self =>
    LanguageModel.withReference(self, CurrentOptions, (current) => mergeOptions(current, overrides))
)

/**
 * What `withOptions` applies to: any `Effect` or `Stream`.
 *
 * @since 0.2.0
 * @category models
 */
export type EffectOrStream = LanguageModel.EffectOrStream

/**
 * The request options of one call: the layer's `options` with the call's `tools` merged over them by name,
 * namespace and kind (`LanguageModel.mergeTools`: a call tool replaces a layer tool of the same name, namespace and kind; the
 * others are kept, layer tools first), the
 * call's `toolChoice` replacing the layer's when given, and the call's `responseFormat` replacing the
 * layer's (sent as `response_format`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeCallOptions = (
  options: Options,
  call: LanguageModel.CallOptions | undefined
): ChatCompletionsRequest.RequestOptions => call === undefined ? options : mergeCall(options, call)

const mergeCall = <O extends OptionsOverride>(options: O, call: LanguageModel.CallOptions): O => ({
  ...options,
  tools: LanguageModel.mergeTools(options.tools, call.tools),
  toolChoice: call.toolChoice ?? options.toolChoice,
  responseFormat: call.responseFormat ?? options.responseFormat
})

/**
 * The input of a custom tool call from the complete arguments of the function call standing for it
 * (`ChatCompletionsRequest.customToolFunction`): the `input` string (`CUSTOM_TOOL_INPUT`) when the
 * arguments are a JSON object holding one; else the only string property of such an object (a model that
 * named the parameter otherwise); else the string, when the arguments are one JSON string; else the
 * arguments text itself (a model that wrote the input bare).
 *
 * With `cut: true` (a call the output token limit cut off: `finish_reason: "length"`, the part's status
 * `incomplete`), arguments that never became whole JSON but begin as the envelope `{"input": "` give the
 * part of the input string that arrived, decoded (`{"input":"rm -rf /tm` -> `rm -rf /tm`; an escape cut
 * in the middle is left out), not the envelope's raw text; arguments that do not begin so are still the
 * input as written.
 *
 * @since 0.2.0
 * @category custom tools
 */
export const customToolInput = (args: string, options?: { readonly cut?: boolean | undefined }): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(args)
  } catch {
    // not JSON: the text is the input, or, for a cut call, what arrived of the envelope's string
    return options?.cut === true ? cutEnvelopeInput(args) ?? args : args
  }
  if (typeof parsed === "string") return parsed
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
    const record = parsed as { readonly [key: string]: unknown }
    const input = record[ChatCompletionsRequest.CUSTOM_TOOL_INPUT]
    if (typeof input === "string") return input
    const strings = Object.values(record).filter((value): value is string => typeof value === "string")
    if (strings.length === 1) return strings[0]!
  }
  return args
}

/** Any beginning of the envelope `{"input": "` (whitespace where JSON allows it), and what follows its quote. */
const ENVELOPE_PREFIX = new RegExp(
  `^\\s*(?:\\{\\s*(?:"(?:${
    [...ChatCompletionsRequest.CUSTOM_TOOL_INPUT].reduceRight(
      (rest, c) => `${c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:${rest})?`,
      `"\\s*(?::\\s*(?:"([\\s\\S]*))?)?`
    )
  })?)?)?$`
)

const ESCAPES: Readonly<Record<string, string>> = { "\"": "\"", "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }

/**
 * The decoded beginning of the `input` string of arguments cut inside the envelope `{"input": "…`: `""`
 * when the cut came before the string; `undefined` when the arguments are no such beginning (or the
 * string closed, which leaves whole-JSON questions to `JSON.parse`).
 */
const cutEnvelopeInput = (args: string): string | undefined => {
  const match = ENVELOPE_PREFIX.exec(args)
  if (match === null) return undefined
  const text = match[1] ?? ""
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "\"") return undefined
    if (c !== "\\") {
      out += c
      continue
    }
    const next = text[i + 1]
    if (next === undefined) break
    if (next === "u") {
      const hex = text.slice(i + 2, i + 6)
      if (hex.length < 4) break
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) return undefined
      out += String.fromCharCode(parseInt(hex, 16))
      i += 5
      continue
    }
    const escaped = ESCAPES[next]
    if (escaped === undefined) return undefined
    out += escaped
    i++
  }
  return out
}

/**
 * A call of a function that stands for a custom tool (`ChatCompletionsRequest.customToolAsFunction`) ->
 * the `CustomToolCallPart` it means, its `input` read from the arguments by `customToolInput` (its payload,
 * such as Gemini's thought signature, kept); a call with status `incomplete` (cut by the output token
 * limit) gets what arrived of its input, not the cut envelope.
 *
 * @since 0.2.0
 * @category custom tools
 */
export const customToolCall = (part: Part.ToolCallPart): Part.CustomToolCallPart =>
  new Part.CustomToolCallPart({
    callId: part.callId,
    name: part.name,
    input: customToolInput(part.arguments, { cut: part.attributes.status === "incomplete" }),
    ...(part.payload === undefined ? {} : { payload: part.payload }),
    attributes: part.attributes
  }, true)

const customNames = (tools: ReadonlyArray<LanguageModel.AnyToolDefinition> | undefined): ReadonlySet<string> =>
  new Set(
    (tools ?? []).filter((tool) => tool instanceof LanguageModel.CustomToolDefinition).map((tool) => tool.name)
  )

const mapResponse = (names: ReadonlySet<string>) => (response: ModelResponse.ModelResponse): ModelResponse.ModelResponse =>
  names.size === 0 || !response.message.parts.some((part) => part.type === "tool_call" && names.has(part.name))
    ? response
    : new ModelResponse.ModelResponse({
      ...response,
      message: new Message.AssistantMessage({
        role: "assistant",
        parts: response.message.parts.map((part) =>
          part.type === "tool_call" && names.has(part.name) ? customToolCall(part) : part
        )
      }, true)
    }, true)

/**
 * The stream with the calls of custom tools mapped back: their argument deltas are held (JSON of the
 * `input` parameter is not the input), and at the complete part one complete `CustomToolCallPart` is sent.
 */
const mapStream = (names: ReadonlySet<string>) =>
<E>(stream: Stream.Stream<StreamPart.StreamPart, E>): Stream.Stream<StreamPart.StreamPart, E> => {
  if (names.size === 0) return stream
  return Stream.suspend(() => {
    const held = new Map<string, { name: string; args: string }>()
    return Stream.mapConcat(stream, (element): ReadonlyArray<StreamPart.StreamPart> => {
      if (element.type !== "part" || element.part.type !== "tool_call") return [element]
      const part = element.part
      const key = `${element.responseId}/${element.outputIndex}`
      const entry = held.get(key)
      if (entry === undefined && !names.has(part.name)) return [element]
      const name = part.name !== "" ? part.name : entry?.name ?? ""
      const args = element.replace === true ? part.arguments : (entry?.args ?? "") + part.arguments
      if (element.partial) {
        held.set(key, { name, args })
        return []
      }
      held.delete(key)
      const whole = new Part.ToolCallPart({ ...part, name, arguments: args }, true)
      return [
        new StreamPart.PartUpdate({
          responseId: element.responseId,
          outputIndex: element.outputIndex,
          partial: false,
          part: customToolCall(whole)
        }, true)
      ]
    })
  })
}

/**
 * Builds the `LanguageModel` service over the `ChatCompletionsClient` in the context (see `fromClient`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<LanguageModel.Service, never, ChatCompletionsClient.ChatCompletionsClient> =>
  Effect.map(ChatCompletionsClient.ChatCompletionsClient, (client) => fromClient(client, options))

/**
 * The `LanguageModel` service over `client`, what `make` builds over the client in the context: for a
 * caller that holds the client and builds a model per request (the gateway, for each request's options),
 * without providing it each time.
 *
 * - `generate` sends the request with `stream: false` and decodes the `chat.completion` body with
 *   `ChatCompletionsOutput.fromCompletion`.
 * - `stream` sends it with `stream: true` and, unless `includeUsage` is `false`,
 *   `stream_options: {include_usage: true}`, and decodes the SSE body (`ChatCompletionsStream`).
 * - Custom tools (which Chat Completions lacks) are offered as functions with one string parameter
 *   (`ChatCompletionsRequest.customToolAsFunction`); calls of them come back as `CustomToolCallPart`s
 *   (`customToolCall`), in a stream as one complete part once the call's arguments are whole (a call cut
 *   by `finish_reason: "length"`: status `incomplete`, its `input` what arrived of the string, decoded).
 *
 * Each call's options: the layer's `options`, then the `withOptions` overrides of the calling fiber
 * (`CurrentOptions`), then the call's `CallOptions`. Both fail with `InvalidPrompt` before any request when
 * the prompt cannot be mapped, then with the client's and the decoder's errors (`LanguageModel.ModelError`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromClient = (client: ChatCompletionsClient.Service, options: Options): LanguageModel.Service => {
  const requestBody = (overrides: OptionsOverride, prompt: Prompt.Prompt, call: LanguageModel.CallOptions | undefined) =>
    ChatCompletionsRequest.fromPrompt(prompt, mergeCallOptions(mergeOptions(options, overrides), call))

  const generate = (
    prompt: Prompt.Prompt,
    call?: LanguageModel.CallOptions
  ): Effect.Effect<ModelResponse.ModelResponse, LanguageModel.ModelError> =>
    CurrentOptions.pipe(
      Effect.flatMap((overrides) => requestBody(overrides, prompt, call)),
      Effect.flatMap((body) => client.create({ ...body, stream: false })),
      Effect.flatMap(ChatCompletionsOutput.fromCompletion),
      Effect.map(mapResponse(customNames(mergeCallOptions(options, call).tools)))
    )

  const stream = (
    prompt: Prompt.Prompt,
    call?: LanguageModel.CallOptions
  ): Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError> =>
    // `Channel.unwrap`: `Stream.unwrap` costs about 140 fiber steps per call more. The overrides are read
    // once (an `Effect.zip` of the body and the overrides cost about 12 fiber steps more).
    Stream.fromChannel(Channel.unwrap(Effect.flatMap(CurrentOptions, (overrides) =>
      Effect.map(requestBody(overrides, prompt, call), (body) =>
        Stream.toChannel(client.createStream(
          (overrides.includeUsage ?? options.includeUsage) === false
            ? { ...body, stream: true }
            : { ...body, stream: true, stream_options: { include_usage: true } }
        )))))).pipe(mapStream(customNames(mergeCallOptions(options, call).tools)))

  return LanguageModel.LanguageModel.of({ generate, stream })
}

/**
 * The `LanguageModel` layer over the Chat Completions API, with the layer-wide request `options`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<LanguageModel.LanguageModel, never, ChatCompletionsClient.ChatCompletionsClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))

/**
 * The default configuration: the model from `OPENAI_MODEL` (required), every other option unset.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Options> = Config.map(Config.nonEmptyString("OPENAI_MODEL"), (model) => ({ model }))

/**
 * The `LanguageModel` layer with its options from `effect/Config` (by default `config`). Fails with a
 * `ConfigError` when the configuration is invalid or missing.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Config.Config<Options> = config
): Layer.Layer<LanguageModel.LanguageModel, ConfigError.ConfigError, ChatCompletionsClient.ChatCompletionsClient> =>
  Layer.effect(LanguageModel.LanguageModel, Effect.flatMap(options, make))
