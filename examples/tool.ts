// Your own tool: an Effect Schema for its parameters, result and failure, and its handler provided as a Layer.
// Runs offline: a loopback server replays a recorded gpt-5.1-codex-max session that calls `calculator` three
// times and checks every request the client sends. To talk to the API instead, provide
// `ResponsesClient.layerConfig()` (reads OPENAI_API_KEY, OPENAI_BASE_URL) in place of `Replayed`.
import { Prompt } from "@effect-responses/core"
import { Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayServer } from "@effect-responses/testing"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { NodeContext, NodeHttpClient, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"

class DivisionByZero extends Schema.TaggedError<DivisionByZero>()("DivisionByZero", {}) {}

const Calculator = Tool.make("calculator", {
  description: "A minimal calculator for basic arithmetic. Call it once per step.",
  parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
  success: Schema.Number,
  failure: DivisionByZero // the model reads {"error":{"_tag":"DivisionByZero"}}
})
const Tools = Toolkit.make(Calculator)

// The handlers, as a Layer: parameters arrive decoded; an Effect.fail goes back to the model as an error result.
const ToolsLive = Tools.toLayer({
  calculator: ({ a, b, op }) =>
    Effect.gen(function*() {
      yield* Effect.logDebug(`calculator ${a} ${op} ${b}`)
      if (op === "divide" && b === 0) return yield* new DivisionByZero()
      return op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b
    })
})

const recording = fileURLToPath(
  new URL("../fixtures/responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt", import.meta.url)
)
const Replayed = Layer.unwrapEffect(
  Effect.map(ReplayServer.ReplayServer, (server) => ResponsesClient.layer({ baseUrl: server.baseUrl }))
).pipe(
  Layer.provide(Layer.unwrapEffect(Effect.map(Capture.load(recording), (capture) => ReplayServer.layer({ capture })))),
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(NodeContext.layer)
)

const program = Effect.gen(function*() {
  const result = yield* ToolLoop.generate(
    Prompt.user("What is (12 + 7) * 3 * 10? Use the calculator for each step."),
    { toolkit: Tools }
  )
  yield* Console.log(`${result.steps.length} model calls, answer: ${result.text}`)
})

program.pipe(
  Effect.provide(ToolsLive),
  Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1-codex-max" })),
  Effect.provide(Replayed),
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain
)
