// Type-checked by scripts/consumer-test.sh with plain `tsc` (strict, NodeNext, skipLibCheck false) in a
// fresh project that installed the packed tarballs: the published .d.ts files must hold under a
// consumer's own flags.
import { LanguageModel, Prompt, type ModelResponse } from "@effect-responses/core"
import { MessageAggregator } from "@effect-responses/aggregate"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { Gateway, Upstream } from "@effect-responses/server"
import { EffectAiLanguageModel, EffectAiPrompt } from "@effect-responses/effect-ai"
import * as AiLanguageModel from "@effect/ai/LanguageModel"
import { Framing } from "@effect-responses/wire"
import * as Demo from "@effect-responses/cli/Demo"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Schema, Stream } from "effect"

const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Number
})
const Math = Toolkit.make(Add)
const MathLive = Math.toLayer({ add: ({ a, b }) => Effect.succeed(a + b) })

const responses = ResponsesLanguageModel.layer({ model: "gpt-5.1" }).pipe(
  Layer.provide(ResponsesClient.layer({ baseUrl: "http://127.0.0.1:1/v1" })),
  Layer.provide(NodeHttpClient.layerUndici)
)
const chat = ChatCompletionsLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
  Layer.provide(ChatCompletionsClient.layer({ baseUrl: "http://127.0.0.1:1/v1" })),
  Layer.provide(NodeHttpClient.layerUndici)
)

export const loop: Effect.Effect<string, unknown> = ToolLoop.generate(Prompt.user("1 + 2?"), { toolkit: Math }).pipe(
  Effect.map((result) => result.text),
  Effect.provide(MathLive),
  Effect.provide(responses)
)

export const streamed: Effect.Effect<ReadonlyArray<ModelResponse.ModelResponse>, unknown> = Effect.flatMap(
  LanguageModel.LanguageModel,
  (model) => MessageAggregator.aggregate(model.stream(Prompt.user("hi")))
).pipe(Effect.provide(chat))

export const demo: Effect.Effect<number, never> = Effect.sync(() => Demo.expectedResults.size)
export const framing: typeof Framing = Framing
export const gateway: unknown = [Gateway.layer, Upstream.fromLanguageModel, Stream.empty]

// An @effect/ai app over the Responses layer, its history built by EffectAiPrompt
export const effectAi: Effect.Effect<string, unknown> = AiLanguageModel.generateText({ prompt: "hi" }).pipe(
  Effect.map((response) => `${response.text} ${EffectAiPrompt.fromResponseParts(response.content).content.length}`),
  Effect.provide(EffectAiLanguageModel.layer.pipe(Layer.provide(responses)))
)
