/**
 * The embedded demo of `effect-responses chat`: a `calculator` tool implemented for real, and the recorded
 * `gpt-5.1-codex-max` session it replays when no `OPENAI_API_KEY` is set
 * (`demo/vai-openai-reasoning-encrypted-multistep.chunks.txt` in this package, recorded by vercel/ai,
 * Apache-2.0: four consecutive responses computing (12 + 7) * 3 * 10 one calculator call at a time).
 *
 * @since 0.1.0
 */
import { Tool, Toolkit } from "@effect-responses/tools"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { fileURLToPath } from "node:url"
import * as Defaults from "./internal/defaults.js"

/**
 * The calculator's parameters, as in the recorded session's tool definition.
 *
 * @since 0.1.0
 * @category tools
 */
export const CalculatorParameters = Schema.Struct({
  a: Schema.Number.annotations({ description: "First operand." }),
  b: Schema.Number.annotations({ description: "Second operand." }),
  op: Schema.Literal("add", "subtract", "multiply", "divide").annotations({
    description: "Arithmetic operation to perform."
  })
})

/**
 * A failure the model can read, e.g. `{"error":"division by zero"}`.
 *
 * @since 0.1.0
 * @category tools
 */
export class CalculatorFailure extends Schema.TaggedError<CalculatorFailure>("@effect-responses/cli/CalculatorFailure")("CalculatorFailure", {
  error: Schema.String
}) {}

/**
 * The `calculator` tool: `{a, b, op}` in, the number out.
 *
 * @since 0.1.0
 * @category tools
 */
export const Calculator = Tool.make("calculator", {
  description: "A minimal calculator for basic arithmetic. Call it once per step.",
  parameters: CalculatorParameters,
  success: Schema.Number,
  failure: CalculatorFailure
})

/**
 * The demo toolkit: just the calculator.
 *
 * @since 0.1.0
 * @category tools
 */
export const CalculatorToolkit = Toolkit.make(Calculator)

/**
 * Computes `a op b`. Division by zero fails with `CalculatorFailure` (an error result for the model, not a
 * crash).
 *
 * @since 0.1.0
 * @category tools
 */
export const calculate = (
  { a, b, op }: typeof CalculatorParameters.Type
): Effect.Effect<number, CalculatorFailure> => {
  switch (op) {
    case "add":
      return Effect.succeed(a + b)
    case "subtract":
      return Effect.succeed(a - b)
    case "multiply":
      return Effect.succeed(a * b)
    case "divide":
      return b === 0 ? Effect.fail(new CalculatorFailure({ error: "division by zero" })) : Effect.succeed(a / b)
  }
}

/**
 * The handlers of the demo toolkit, as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const CalculatorToolkitLive = CalculatorToolkit.toLayer({
  calculator: (params) => calculate(params)
})

/**
 * The prompt of the demo when none is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPrompt: string = Defaults.DEFAULT_PROMPT

/**
 * Where the recording of the demo lives: `demo/` inside this package (shipped with it; an unchanged copy of
 * vercel/ai's `openai-reasoning-encrypted-content.1.chunks.txt`, Apache-2.0, licence text beside it).
 *
 * @since 0.1.0
 * @category constants
 */
export const recordingPath: string = fileURLToPath(
  new URL(
    "../demo/vai-openai-reasoning-encrypted-multistep.chunks.txt",
    import.meta.url
  )
)

/**
 * The result each recorded calculator call must get back, by call id: the recording goes on with 19 as the
 * next call's `a`, then 57, and answers 570. The replay server rejects any other `function_call_output`.
 *
 * @since 0.1.0
 * @category constants
 */
export const expectedResults: ReadonlyMap<string, number> = new Map([
  ["call_AB6AaRZ1FYZB2RwS6A5vbdqn", 19],
  ["call_Q6pW65MUgW9vF59BmItYGos3", 57],
  ["call_Zl5vIMnD7dVAjgU6FkhmiCZh", 570]
])

const resultOf = (output: string): unknown => {
  try {
    const value: unknown = JSON.parse(output)
    return typeof value === "object" && value !== null && "result" in value ? value.result : value
  } catch {
    return output
  }
}

/**
 * The replay server's extra check for the demo: every `function_call_output` of a recorded call carries
 * that call's result (see `expectedResults`).
 *
 * @since 0.1.0
 * @category validation
 */
export const validateResults = (request: { readonly body: Readonly<Record<string, unknown>> }): Option.Option<string> => {
  const input = request.body.input
  if (!Array.isArray(input)) return Option.none()
  for (const item of input) {
    if (typeof item !== "object" || item === null || item.type !== "function_call_output") continue
    const expected = expectedResults.get(item.call_id)
    if (expected !== undefined && resultOf(String(item.output)) !== expected) {
      return Option.some(
        `function_call_output ${String(item.call_id)} carries ${JSON.stringify(item.output)}, but the recorded session was computed with ${expected}`
      )
    }
  }
  return Option.none()
}
