import { Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Schema } from "effect"

const Calculator = Tool.make("calculator", {
  description: "A minimal calculator for basic arithmetic. Call it once per step.",
  parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
  success: Schema.Number
})
const Tools = Toolkit.make(Calculator)
const ToolsLive = Tools.toLayer({
  calculator: ({ a, b, op }) => Effect.succeed(op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b)
})

ToolLoop.generate(Prompt.user("What is (12 + 7) * 3 * 10? Use the calculator for each step."), { toolkit: Tools }).pipe(
  Effect.flatMap((result) => Console.log(result.text)),
  Effect.provide(ToolsLive),
  Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1" })),
  Effect.provide(ResponsesClient.layerConfig()), // OPENAI_API_KEY, OPENAI_BASE_URL
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain
)
