import { Demo, Protocol } from "@effect-responses/cli"
import { Prompt } from "@effect-responses/core"
import { ToolLoop } from "@effect-responses/tools"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"

// The CLI's demo calculator over the protocol chosen by OPENAI_PROTOCOL (responses | chat-completions)
ToolLoop.generate(Prompt.user(Demo.defaultPrompt), { toolkit: Demo.CalculatorToolkit }).pipe(
  Effect.flatMap((result) => Console.log(result.text)),
  Effect.provide(Demo.CalculatorToolkitLive),
  Effect.provide(Protocol.layerConfig({ model: "gpt-5.1" })), // OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain
)
