// A small app: `solve` asks the model with a calculator tool and returns the final text. It depends only on
// the LanguageModel service, so its test (app.test.ts) can run it against a recorded session.
import { Prompt } from "@effect-responses/core"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { Effect, Schema } from "effect"

export const Calculator = Tool.make("calculator", {
  description: "A minimal calculator for basic arithmetic. Call it once per step.",
  parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
  success: Schema.Number
})
export const Tools = Toolkit.make(Calculator)
export const ToolsLive = Tools.toLayer({
  calculator: ({ a, b, op }) => Effect.succeed(op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b)
})

export const solve = (question: string) =>
  ToolLoop.generate(Prompt.user(`${question} Use the calculator for each step.`), { toolkit: Tools }).pipe(
    Effect.map((result) => result.text),
    Effect.provide(ToolsLive)
  )
