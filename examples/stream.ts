// Streaming a tool loop to the terminal with ToolLoop.stream: reasoning summaries, tool-call arguments and
// answer text are written as their deltas arrive, each output item on its own line, each character once.
// Runs offline against the recorded calculator session (see tool.ts for a live client).
import { Prompt } from "@effect-responses/core"
import { Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayServer } from "@effect-responses/testing"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { NodeContext, NodeHttpClient, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema, Stream } from "effect"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"

const Calculator = Tool.make("calculator", {
  description: "A minimal calculator for basic arithmetic. Call it once per step.",
  parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
  success: Schema.Number
})
const Tools = Toolkit.make(Calculator)
const ToolsLive = Tools.toLayer({
  calculator: ({ a, b, op }) => Effect.succeed(op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b)
})

// Turns one loop event into terminal text. A delta (`partial: true`) holds only new text; the completing part
// of an item (`partial: false`) holds only what the deltas did not deliver (often nothing), so writing both
// shows every character once. A part with `replace: true` supersedes what its output item showed.
let slot = ""
const render = (event: ToolLoop.Event): string => {
  switch (event.type) {
    case "part": {
      const { part } = event
      const key = `${event.responseId}/${event.outputIndex}/${event.contentIndex ?? 0}`
      const label = part.type === "reasoning" ? "reasoning: " : part.type === "tool_call" ? `tool call: ${part.name} ` : "answer: "
      const head = key !== slot ? `\n${label}` : event.replace === true ? `\n${label}(corrected) ` : ""
      slot = key
      const body = part.type === "text" || part.type === "refusal"
        ? part.text
        : part.type === "reasoning"
        ? part.summary.join("")
        : part.type === "tool_call"
        ? part.arguments
        : ""
      return head + body
    }
    case "tool_result":
      slot = ""
      // a function tool's result; built-in tools (shell, apply_patch) answer with their own output parts
      return event.result.type === "tool_result"
        ? `\ntool result: ${event.result.name} = ${event.result.output}`
        : `\n${event.result.type}`
    case "loop_finished":
      return `\n(${event.steps} model calls, ${event.usage.totalTokens} tokens)\n`
    default:
      return ""
  }
}

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

ToolLoop.stream(Prompt.user("What is (12 + 7) * 3 * 10? Use the calculator for each step."), { toolkit: Tools }).pipe(
  Stream.map(render),
  Stream.runForEach((text) => Effect.sync(() => process.stdout.write(text))),
  Effect.provide(ToolsLive),
  Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1-codex-max", reasoning: { summary: "auto" } })),
  Effect.provide(Replayed),
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain
)
