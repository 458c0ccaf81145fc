import { LanguageModel, Prompt, Tool, Toolkit } from "@effect/ai"
import { EffectAiLanguageModel, EffectAiPrompt } from "@effect-responses/effect-ai"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Schema } from "effect"

// An app written against @effect/ai: a toolkit and generateText, step by step
const Calculator = Tool.make("calculator", {
  description: "A minimal calculator for basic arithmetic. Call it once per step.",
  parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
  success: Schema.Number
})
const Tools = Toolkit.make(Calculator)
const ToolsLive = Tools.toLayer({
  calculator: ({ a, b, op }) => Effect.succeed(op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b)
})

const program = Effect.gen(function*() {
  let history = Prompt.make("What is (12 + 7) * 3 * 10? Use the calculator for each step.")
  for (let step = 1; step <= 5; step++) {
    const response = yield* LanguageModel.generateText({ prompt: history, toolkit: Tools })
    // fromResponseParts keeps the reasoning's encrypted content and item ids for the next call
    history = Prompt.merge(history, EffectAiPrompt.fromResponseParts(response.content))
    if (response.finishReason !== "tool-calls") return yield* Console.log(response.text)
  }
})

// The one layer that changes: @effect/ai's LanguageModel backed by effect-responses
const Model = EffectAiLanguageModel.layer.pipe(
  Layer.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1" })),
  Layer.provide(ResponsesClient.layerConfig()), // OPENAI_API_KEY, OPENAI_BASE_URL
  Layer.provide(NodeHttpClient.layerUndici)
)

program.pipe(Effect.provide(ToolsLive), Effect.provide(Model), NodeRuntime.runMain)
