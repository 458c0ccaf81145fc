/**
 * The `LanguageModel` service: one model call, whole (`generate`) or streamed (`stream`), over whichever wire
 * protocol the layer provided speaks. Every call sends the whole prompt; nothing is kept on the server.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as AiError from "./AiError.js"
import type * as ModelResponse from "./ModelResponse.js"
import type * as Prompt from "./Prompt.js"
import type * as ResponseFormat from "./ResponseFormat.js"
import type * as StreamPart from "./StreamPart.js"

/**
 * A group of tools offered under one name (a Responses `namespace` tool): its `name` and the
 * `description` the model reads before it searches or calls the tools in it. Source: API reference,
 * `NamespaceToolParam`.
 *
 * @since 0.2.0
 * @category models
 */
export const ToolNamespace = Schema.Struct({ name: Schema.String, description: Schema.String })

/**
 * @since 0.2.0
 * @category models
 */
export type ToolNamespace = typeof ToolNamespace.Type

/**
 * A local function tool as the model sees it: its `name`, `description`, the JSON Schema of its
 * `parameters` (an object schema), and whether the provider should enforce that schema (`strict`).
 * `namespace` puts it in a tool group; `deferLoading: true` keeps it out of the model's context until a
 * tool search loads it (Responses `defer_loading`; providers without tool search send it as usual).
 *
 * @since 0.1.0
 * @category models
 */
export class ToolDefinition extends Schema.Class<ToolDefinition>("@effect-responses/core/ToolDefinition")({
  name: Schema.String,
  description: Schema.optionalWith(Schema.String, { exact: true }),
  parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  strict: Schema.Boolean,
  namespace: Schema.optionalWith(ToolNamespace, { exact: true }),
  deferLoading: Schema.optionalWith(Schema.Boolean, { exact: true })
}) {}

/**
 * The input format of a custom tool: free text, or text in the language of a grammar (`syntax` `lark`
 * or `regex`, `definition` the grammar itself). Source: API reference, `CustomTextFormatParam` /
 * `CustomGrammarFormatParam`.
 *
 * @since 0.2.0
 * @category models
 */
export const CustomToolFormat = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({
    type: Schema.Literal("grammar"),
    syntax: Schema.Literal("lark", "regex"),
    definition: Schema.String
  })
)

/**
 * @since 0.2.0
 * @category models
 */
export type CustomToolFormat = typeof CustomToolFormat.Type

/**
 * A custom (freeform) tool as the model sees it: a name, a description and the `format` of its input
 * (absent: free text). The model calls it with raw text (a `CustomToolCallPart`), not JSON. Sent on the
 * Responses wire as `{"type":"custom",…}`; a provider without custom tools (Chat Completions) offers it as
 * a function with one string parameter. Source: API reference, `CustomToolParam`.
 *
 * @since 0.2.0
 * @category models
 */
export class CustomToolDefinition extends Schema.Class<CustomToolDefinition>("@effect-responses/core/CustomToolDefinition")({
  type: Schema.tag("custom"),
  name: Schema.String,
  description: Schema.optionalWith(Schema.String, { exact: true }),
  format: Schema.optionalWith(CustomToolFormat, { exact: true }),
  namespace: Schema.optionalWith(ToolNamespace, { exact: true }),
  deferLoading: Schema.optionalWith(Schema.Boolean, { exact: true })
}) {}

/**
 * A built-in tool the client runs for the model: `shell` (`shell_call` items), `apply_patch`
 * (`apply_patch_call`) or `local_shell` (`local_shell_call`), named by `name`. Sent on the Responses wire as
 * `{"type":"<name>"}`; providers without it do not send it. Source: API reference, `FunctionShellToolParam`,
 * `ApplyPatchToolParam`, `LocalShellToolParam`.
 *
 * @since 0.2.0
 * @category models
 */
export class ClientToolDefinition extends Schema.Class<ClientToolDefinition>("@effect-responses/core/ClientToolDefinition")({
  type: Schema.tag("client"),
  name: Schema.Literal("shell", "apply_patch", "local_shell")
}) {}

/**
 * Any tool a call can offer: a function tool, a custom tool, or a client-run built-in tool.
 *
 * @since 0.2.0
 * @category models
 */
export type AnyToolDefinition = ToolDefinition | CustomToolDefinition | ClientToolDefinition

/**
 * The function tools among `tools` (those with `parameters`).
 *
 * @since 0.2.0
 * @category models
 */
export const functionTools = (tools: ReadonlyArray<AnyToolDefinition> | undefined): ReadonlyArray<ToolDefinition> =>
  tools === undefined ? [] : tools.filter((tool): tool is ToolDefinition => tool instanceof ToolDefinition)

/**
 * The name the model calls a tool by (a client-run built-in tool's is its type: `shell`, …).
 *
 * @since 0.2.0
 * @category models
 */
export const toolName = (tool: AnyToolDefinition): string => tool.name

/**
 * The key `mergeTools` merges by: a function or custom tool's namespace (none for a top-level tool) and name
 * (the two share the names the model calls within a namespace: one name cannot be both; the API calls a
 * namespace's tool by its `namespace` and `name`, so `lookup` of namespace `crm`, `lookup` of `billing` and a
 * top-level `lookup` are three tools), `built-in` and the name for a client-run built-in tool, which the API
 * declares by its type alone (`{"type":"apply_patch"}`) and the model calls with an item of its own
 * (`apply_patch_call`), so that a custom tool `apply_patch` (Codex's freeform one) and the built-in
 * `apply_patch` are two tools, as `Toolkit.keyOf` keys them. JSON of the pair, so that no name can stand for
 * another's key.
 */
const mergeKey = (tool: AnyToolDefinition): string =>
  JSON.stringify(
    tool instanceof ClientToolDefinition ? ["built-in", tool.name] : [tool.namespace?.name ?? null, tool.name]
  )

/**
 * `override` merged over `base` by tool name, namespace and kind: a tool of `override` replaces the tool of
 * `base` the model would call by the same name in the same namespace (a function or custom tool replaces a
 * function or custom tool, a client-run built-in the same built-in); the others are kept, those of `base`
 * first. Tools of one name in two namespaces, or in a namespace and at the top level, are two tools: a call's
 * `lookup` of namespace `crm` replaces a layer's `lookup` of `crm`, not its
 * top-level `lookup`. A custom or function tool and a built-in of one name are two tools: a call's custom
 * `apply_patch` is sent beside a layer's built-in `apply_patch`, each called by its own item type
 * (`custom_tool_call`, `apply_patch_call`). `override` absent leaves `base`; `base` absent or empty gives
 * `override` itself (no copy, no set of its names: a gateway's call of 10,000 tools merges them over a
 * layer's none twice per call).
 *
 * @since 0.2.0
 * @category models
 */
export const mergeTools = (
  base: ReadonlyArray<AnyToolDefinition> | undefined,
  override: ReadonlyArray<AnyToolDefinition> | undefined
): ReadonlyArray<AnyToolDefinition> | undefined => {
  if (override === undefined) return base
  if (base === undefined || base.length === 0) return override
  const keys = new Set(override.map(mergeKey))
  return [...base.filter((tool) => !keys.has(mergeKey(tool))), ...override]
}

/**
 * Which tools the model may call: `auto` (its choice), `none`, `required` (at least one), or one named tool.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolChoice = "auto" | "none" | "required" | { readonly tool: string }

/**
 * What a call adds to the prompt: the local tools offered to the model (function, custom and client-run
 * built-in tools), the tool choice, and the format of the answer (`ResponseFormat`: free text, or JSON
 * matching a schema). A layer that cannot send the response format fails the call with
 * `AiError.InvalidPrompt`; none drops it.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly tools?: ReadonlyArray<AnyToolDefinition> | undefined
  readonly toolChoice?: ToolChoice | undefined
  readonly responseFormat?: ResponseFormat.ResponseFormat | undefined
}

/**
 * What a model call can fail with: every `AiError` except those raised around a call, never by one
 * (`ToolError` from running a local tool, `StructuredOutputError` from decoding the answer).
 *
 * @since 0.2.0
 * @category models
 */
export type ModelError = Exclude<AiError.AiError, AiError.ToolError | AiError.StructuredOutputError>

/**
 * The service: `generate` and `stream`, each one model call with the whole prompt.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * One model call, waited for whole. Fails with a `ModelError`.
   */
  readonly generate: (
    prompt: Prompt.Prompt,
    options?: CallOptions
  ) => Effect.Effect<ModelResponse.ModelResponse, ModelError>
  /**
   * One model call, streamed as `StreamPart`s; a failure (a `ModelError`) arrives after the elements that
   * came before it.
   */
  readonly stream: (
    prompt: Prompt.Prompt,
    options?: CallOptions
  ) => Stream.Stream<StreamPart.StreamPart, ModelError>
}

/**
 * The service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class LanguageModel extends Context.Tag("@effect-responses/core/LanguageModel")<LanguageModel, Service>() {}

/**
 * One model call, waited for whole, with the `LanguageModel` of the context (`service.generate`).
 *
 * ```ts
 * const response = yield* LanguageModel.generate(Prompt.make("Say hello"))
 * console.log(response.text)
 * ```
 *
 * Fails with a `ModelError`: whatever the layer's protocol, transport and decoder can fail with.
 *
 * @since 0.2.0
 * @category accessors
 */
export const generate = (
  prompt: Prompt.Prompt,
  options?: CallOptions
): Effect.Effect<ModelResponse.ModelResponse, ModelError, LanguageModel> =>
  Effect.flatMap(LanguageModel, (model) => model.generate(prompt, options))

/**
 * One model call, streamed as `StreamPart`s, with the `LanguageModel` of the context (`service.stream`).
 * Fold the parts with `MessageAggregator` (package `@effect-responses/aggregate`) to get `ModelResponse`s.
 *
 * ```ts
 * LanguageModel.stream(Prompt.make("Say hello")).pipe(Stream.runForEach((part) => Console.log(part.type)))
 * ```
 *
 * Fails with a `ModelError`, after the elements that came before it.
 *
 * @since 0.2.0
 * @category accessors
 */
export const stream = (
  prompt: Prompt.Prompt,
  options?: CallOptions
): Stream.Stream<StreamPart.StreamPart, ModelError, LanguageModel> =>
  Stream.unwrap(Effect.map(LanguageModel, (model) => model.stream(prompt, options)))

/**
 * What `withReference` (and the layers' `withOptions`) apply to: any `Effect` or `Stream`.
 *
 * @since 0.2.0
 * @category models
 */
export type EffectOrStream = Effect.Effect<unknown, unknown, unknown> | Stream.Stream<unknown, unknown, unknown>

/**
 * Runs `self` (an `Effect` or a `Stream`) with `reference` set to `f` of its value around it, the way a
 * layer's per-call options are overridden (`ResponsesLanguageModel.withOptions`,
 * `ChatCompletionsLanguageModel.withOptions`): nested calls see the inner value, so `f` usually merges over
 * the current one. The type of `self` is kept (a `Context.Reference` is never a requirement).
 *
 * @since 0.2.0
 * @category combinators
 */
export const withReference = <Self extends EffectOrStream, Id, A>(
  self: Self,
  reference: Context.Reference<Id, A>,
  f: (current: A) => A
): Self => {
  // The casts only restore `Self`: providing a reference the effect or stream does not require keeps its type.
  if (Predicate.hasProperty(self, Stream.StreamTypeId)) {
    const stream = self as Stream.Stream<unknown, unknown, unknown>
    return Stream.unwrap(Effect.map(reference, (current) => Stream.provideService(stream, reference, f(current)))) as unknown as Self
  }
  const effect = self as Effect.Effect<unknown, unknown, unknown>
  return Effect.flatMap(reference, (current) => Effect.provideService(effect, reference, f(current))) as unknown as Self
}
