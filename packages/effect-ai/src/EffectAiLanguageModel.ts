/**
 * `@effect/ai`'s `LanguageModel` (the v3 line, `@effect/ai` 0.37) backed by ours: an app written against
 * `@effect/ai` (`LanguageModel.generateText`, `generateObject`, `streamText`, toolkits) swaps the
 * `@effect/ai-openai` layer for this one and gets our decoder, reasoning replay, retries, timeouts and
 * spans, over the Responses API or Chat Completions, whichever core `LanguageModel` layer is provided below.
 *
 * ```ts
 * import { LanguageModel } from "@effect/ai"
 * import { EffectAiLanguageModel } from "@effect-responses/effect-ai"
 * import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
 *
 * const Model = EffectAiLanguageModel.layer.pipe(
 *   Layer.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1" })),
 *   Layer.provide(ResponsesClient.layerConfig()),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * const response = yield* LanguageModel.generateText({ prompt: "Say hello" }).pipe(Effect.provide(Model))
 * ```
 *
 * A call: the `@effect/ai` prompt becomes ours (`EffectAiPrompt.toPrompt`); the toolkit's tools become
 * function tools (`parameters`: the tool's JSON Schema, `strict` when it fits OpenAI's strict subset);
 * the tool choice is passed as it is (`{ oneOf, mode }` becomes `mode`, the tools already narrowed by
 * `@effect/ai`), and none is sent without tools; `generateObject`'s format becomes
 * `ResponseFormat.json(schema, { name: objectName })`, a text format leaves the layer's format as it is.
 * The answer comes back as `EffectAiResponse` describes, errors as `EffectAiError` describes.
 * Provider-defined tools of other providers (`OpenAiTool.WebSearch`, …) fail with `MalformedInput`: offer
 * built-in tools with the Responses layer's `builtInTools` option instead; their items come back in the
 * parts' metadata and go back to the API with the next prompt. Per-call options of our layers
 * (`ResponsesLanguageModel.withOptions`) apply around `@effect/ai` calls as around ours.
 *
 * @since 0.2.0
 */
import { AiError, LanguageModel, ResponseFormat } from "@effect-responses/core"
import type * as AiErrorModule from "@effect/ai/AiError"
import * as AiLanguageModel from "@effect/ai/LanguageModel"
import * as Tool from "@effect/ai/Tool"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as EffectAiError from "./EffectAiError.js"
import * as EffectAiPrompt from "./EffectAiPrompt.js"
import * as EffectAiResponse from "./EffectAiResponse.js"

/**
 * The tool definition of a user-defined `@effect/ai` tool: its name, description and the JSON Schema of
 * its parameters, strict when that schema fits OpenAI's strict subset (`ResponseFormat.strictIncompatibility`).
 * Fails with `AiError.InvalidPrompt` for a provider-defined tool.
 *
 * @since 0.2.0
 * @category conversions
 */
export const toolDefinition = (tool: Tool.Any): Effect.Effect<LanguageModel.ToolDefinition, AiError.InvalidPrompt> => {
  if (Tool.isProviderDefined(tool)) {
    return Effect.fail(
      new AiError.InvalidPrompt({
        description: `the provider-defined tool ${tool.name} (${tool.id}) is not supported: offer built-in tools ` +
          "with the Responses layer's builtInTools option"
      })
    )
  }
  const parameters: { readonly [key: string]: unknown } = { ...Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast) }
  const description = tool.description ?? Tool.getDescriptionFromSchemaAst(tool.parametersSchema.ast)
  return Effect.succeed(
    new LanguageModel.ToolDefinition({
      name: tool.name,
      ...(description === undefined ? {} : { description }),
      parameters,
      strict: ResponseFormat.strictIncompatibility(parameters) === undefined
    })
  )
}

/**
 * Our call options of `@effect/ai`'s provider options: the tools, the tool choice (none without tools) and
 * the response format (see the module doc). Fails with `AiError.InvalidPrompt` for a provider-defined tool.
 *
 * @since 0.2.0
 * @category conversions
 */
export const callOptions = (
  options: AiLanguageModel.ProviderOptions
): Effect.Effect<LanguageModel.CallOptions, AiError.InvalidPrompt> =>
  Effect.map(Effect.forEach(options.tools, toolDefinition), (tools): LanguageModel.CallOptions => {
    const choice = options.toolChoice
    const toolChoice: LanguageModel.ToolChoice = typeof choice === "string"
      ? choice
      : "tool" in choice
      ? { tool: choice.tool }
      : choice.mode ?? "auto"
    const format = options.responseFormat
    return {
      ...(tools.length > 0 ? { tools, toolChoice } : {}),
      ...(format.type === "json" ? { responseFormat: ResponseFormat.json(format.schema, { name: format.objectName }) } : {})
    }
  })

/**
 * Builds `@effect/ai`'s `LanguageModel` service over our `LanguageModel` in the context (see the module
 * doc). `generateText` makes one `generate` call, `streamText` one `stream` call; `@effect/ai` runs the
 * toolkit's handlers and decodes the parts.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: Effect.Effect<AiLanguageModel.Service, never, LanguageModel.LanguageModel> = Effect.gen(function*() {
  const model = yield* LanguageModel.LanguageModel
  const request = (options: AiLanguageModel.ProviderOptions) =>
    Effect.all([EffectAiPrompt.toPrompt(options.prompt), callOptions(options)])
  const fail = (method: string) => (error: LanguageModel.ModelError): AiErrorModule.AiError =>
    EffectAiError.fromModelError(error, method)
  return yield* AiLanguageModel.make({
    generateText: (options) =>
      request(options).pipe(
        Effect.flatMap(([prompt, call]) => model.generate(prompt, call)),
        Effect.flatMap(EffectAiResponse.fromResponse),
        Effect.mapError(fail("generateText"))
      ),
    streamText: (options) =>
      request(options).pipe(
        Effect.map(([prompt, call]) => model.stream(prompt, call)),
        Stream.unwrap,
        EffectAiResponse.toStreamParts,
        Stream.mapError(fail("streamText"))
      )
  })
})

/**
 * The `@effect/ai` `LanguageModel` layer over our `LanguageModel` (provide a Responses or Chat Completions
 * layer below it).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<AiLanguageModel.LanguageModel, never, LanguageModel.LanguageModel> = Layer.effect(
  AiLanguageModel.LanguageModel,
  make
)
