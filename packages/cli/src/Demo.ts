/**
 * The embedded demo of `effect-responses chat`: a `calculator` tool implemented for real, and the recorded
 * `gpt-5.1-codex-max` session it replays when no `OPENAI_API_KEY` is set
 * (`demo/vai-openai-reasoning-encrypted-multistep.chunks.txt` in this package, recorded by vercel/ai,
 * Apache-2.0: four consecutive responses computing (12 + 7) * 3 * 10 one calculator call at a time).
 *
 * A `--replay FILE` of another capture gets the tools of `ReplayToolkit`: the calculator, a custom tool
 * `evaluate` (an arithmetic expression as raw text, with a Lark grammar), `math.power` (a function tool in
 * the namespace `math`, deferred until a hosted tool search loads it), and the client-run built-ins
 * `apply_patch` (applied for real, in a temporary directory made for the chat and removed after it), `shell`
 * and `local_shell` (stand-ins that run nothing: running commands a model wrote is an application's
 * decision, and a replay needs an answer, not its effect). A capture of a Codex-style session, whose model
 * calls `apply_patch` as a freeform custom tool (a `custom_tool_call` with a whole V4A patch as its input),
 * gets `FreeformReplayToolkit` instead: the same tools with that custom `apply_patch` beside the built-in one,
 * both applied in one temporary directory.
 *
 * @since 0.1.0
 */
import type { Part } from "@effect-responses/core"
import { ApplyPatch, Tool, Toolkit } from "@effect-responses/tools"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as NodePath from "node:path"
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

/**
 * The Lark grammar of `evaluate`'s input: numbers, `+ - * /` and parentheses (the `llguidance` dialect the
 * API reference names for custom tool grammars).
 *
 * @since 0.2.0
 * @category tools
 */
export const EXPRESSION_GRAMMAR = `start: expr
expr: term (("+" | "-") term)*
term: factor (("*" | "/") factor)*
factor: NUMBER | "(" expr ")"
%import common.NUMBER
%ignore " "`

/**
 * The `evaluate` custom tool: an arithmetic expression in, its value out (as text), e.g.
 * `(12 + 7) * 3 * 10` -> `570`. An expression it cannot read is a failure the model reads.
 *
 * @since 0.2.0
 * @category tools
 */
export const Evaluate = Tool.custom("evaluate", {
  description: "Evaluates an arithmetic expression (numbers, + - * / and parentheses) and answers its value.",
  format: { type: "grammar", syntax: "lark", definition: EXPRESSION_GRAMMAR },
  failure: CalculatorFailure
})

/**
 * Evaluates an expression of `EXPRESSION_GRAMMAR` (no `eval`: a small recursive-descent reader). Fails with
 * `CalculatorFailure` on anything else, or a division by zero.
 *
 * @since 0.2.0
 * @category tools
 */
export const evaluate = (input: string): Effect.Effect<string, CalculatorFailure> =>
  Effect.suspend(() => {
    const tokens = input.match(/\d+(?:\.\d+)?|[-+*/()]|\S/g) ?? []
    let at = 0
    const fail = (why: string) => {
      throw new CalculatorFailure({ error: `cannot evaluate ${JSON.stringify(input)}: ${why}` })
    }
    const factor = (): number => {
      const token = tokens[at++]
      if (token === "(") {
        const value = expr()
        if (tokens[at++] !== ")") fail("a parenthesis is not closed")
        return value
      }
      if (token === "-") return -factor()
      if (token === undefined || !/^\d/.test(token)) fail(token === undefined ? "it ends too early" : `unexpected ${JSON.stringify(token)}`)
      return Number(token)
    }
    const term = (): number => {
      let value = factor()
      while (tokens[at] === "*" || tokens[at] === "/") {
        const op = tokens[at++]
        const right = factor()
        if (op === "/" && right === 0) fail("division by zero")
        value = op === "*" ? value * right : value / right
      }
      return value
    }
    const expr = (): number => {
      let value = term()
      while (tokens[at] === "+" || tokens[at] === "-") value = tokens[at++] === "+" ? value + term() : value - term()
      return value
    }
    try {
      const value = expr()
      if (at < tokens.length) fail(`unexpected ${JSON.stringify(tokens[at])}`)
      return Effect.succeed(String(value))
    } catch (error) {
      if (error instanceof CalculatorFailure) return Effect.fail(error)
      throw error
    }
  })

/**
 * The `math` namespace of the demo's deferred tools (a tool search loads them by this name).
 *
 * @since 0.2.0
 * @category tools
 */
export const MathNamespace = Tool.namespace("math", "More arithmetic, loaded by a tool search when needed.")

/**
 * The `power` tool of the `math` namespace, deferred (`deferLoading`: the model sees it once a tool search
 * loads the namespace): `{base, exponent}` in, `base ** exponent` out. Its handler is keyed `math.power`.
 *
 * @since 0.2.0
 * @category tools
 */
export const Power = Tool.make("power", {
  description: "Raises base to the power exponent.",
  parameters: {
    base: Schema.Number.annotations({ description: "The base." }),
    exponent: Schema.Number.annotations({ description: "The exponent." })
  },
  success: Schema.Number,
  namespace: MathNamespace,
  deferLoading: true
})

/**
 * The tools of a `chat --replay` of a Responses capture: the calculator, `evaluate` (custom), `math.power`
 * (namespaced and deferred, for a hosted tool search), and the client-run built-ins `shell`, `apply_patch`
 * and `local_shell`.
 *
 * @since 0.2.0
 * @category tools
 */
export const ReplayToolkit = Toolkit.make(Calculator, Evaluate, Power, Tool.shell, Tool.applyPatch, Tool.localShell)

/**
 * What the stand-in `shell` and `local_shell` handlers answer for every command: nothing runs.
 *
 * @since 0.2.0
 * @category constants
 */
export const NOT_RUN = "not run (effect-responses chat does not run the model's commands)"

/**
 * The temporary directory a replay's patches are applied in: made when the toolkit layer is built and
 * removed with it.
 */
const replayRoot = Effect.acquireRelease(
  Effect.promise(() => Fs.mkdtemp(NodePath.join(Os.tmpdir(), "effect-responses-chat-"))),
  (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
)

/** The handlers both replay toolkits share (all but `apply_patch`). */
const sharedReplayHandlers = {
  calculator: (params: typeof CalculatorParameters.Type) => calculate(params),
  evaluate: (input: string) => evaluate(input),
  "math.power": ({ base, exponent }: { readonly base: number; readonly exponent: number }) =>
    Effect.succeed(base ** exponent),
  shell: (call: Part.ShellCallPart) =>
    Effect.succeed(call.commands.map(() => ({ stdout: "", stderr: NOT_RUN, outcome: { type: "exit", exitCode: 126 } as const }))),
  local_shell: () => Effect.succeed(JSON.stringify({ stdout: "", stderr: NOT_RUN, exit_code: 126 }))
}

/**
 * The handlers of `ReplayToolkit`, as a layer: the calculator, `evaluate` and `math.power` for real; `apply_patch` with
 * `ApplyPatch.handler` over a temporary directory made when the layer is built and removed with it;
 * `shell` and `local_shell` as stand-ins answering `NOT_RUN` (exit code 126, "cannot execute") for every
 * command.
 *
 * @since 0.2.0
 * @category layers
 */
export const ReplayToolkitLive = ReplayToolkit.toLayer(Effect.map(replayRoot, (root) => ({
  ...sharedReplayHandlers,
  apply_patch: ApplyPatch.handler({ root })
})))

/**
 * `apply_patch` as Codex declares it: a freeform custom tool whose input is a whole patch in the V4A format
 * (`*** Begin Patch`, `*** Add File:` / `*** Update File:` (with `*** Move to:`) / `*** Delete File:`
 * sections, `*** End Patch`), not JSON. Its answer is the log of the changes, one line each (`created
 * notes/todo.md`); a patch that does not apply fails with the `PatchError`'s message, which the model reads
 * as `{"error": <message>}`.
 *
 * @since 0.2.0
 * @category tools
 */
export const FreeformApplyPatch = Tool.custom("apply_patch", {
  description: "Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON: " +
    "send the whole patch, from *** Begin Patch to *** End Patch.",
  failure: Schema.String
})

/**
 * The tools of a `chat --replay` of a capture whose model calls `apply_patch` as a freeform custom tool
 * (`FreeformApplyPatch`, as Codex declares it): `ReplayToolkit` with that custom tool beside the client-run
 * built-in `apply_patch`, so a capture calling both forms gets both answered (a `custom_tool_call` reaches
 * the custom tool, an `apply_patch_call` the built-in, whose handler is keyed `built-in:apply_patch`, see
 * `Tool.HandlerKey`).
 *
 * @since 0.2.0
 * @category tools
 */
export const FreeformReplayToolkit = Toolkit.make(
  Calculator,
  Evaluate,
  Power,
  Tool.shell,
  FreeformApplyPatch,
  Tool.applyPatch,
  Tool.localShell
)

/**
 * The handlers of `FreeformReplayToolkit`, as a layer: those of `ReplayToolkitLive`, with the custom
 * `apply_patch` applying its input with `ApplyPatch.applyPatchText` and the built-in one with
 * `ApplyPatch.handler`, both under one temporary directory made when the layer is built and removed with it
 * (the directory rules of the built-in's handler: paths relative to it, none may leave it), so a patch of
 * either form sees the files the other made. A patch stops at the first change that fails; the changes
 * before it stay applied.
 *
 * @since 0.2.0
 * @category layers
 */
export const FreeformReplayToolkitLive = FreeformReplayToolkit.toLayer(Effect.map(replayRoot, (root) => ({
  ...sharedReplayHandlers,
  apply_patch: (input: string) =>
    ApplyPatch.applyPatchText(root, input).pipe(Effect.mapError((error) => error.message)),
  "built-in:apply_patch": ApplyPatch.handler({ root })
})))
