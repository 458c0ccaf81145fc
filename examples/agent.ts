// A coding agent's client-run tools: apply_patch applied under a workspace directory, shell commands run in
// it, both handlers provided as a Layer. Running what a model wrote is the application's decision: here, a
// throwaway directory, a timeout per command and one per tool call.
import { Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ApplyPatch, Shell, Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const workspace = mkdtempSync(join(tmpdir(), "agent-"))
const Agent = Toolkit.make(Tool.applyPatch, Tool.shell)
const AgentLive = Agent.toLayer({
  apply_patch: ApplyPatch.handler({ root: workspace }),
  shell: Shell.handler({ cwd: workspace, timeoutMs: 10_000 })
})

ToolLoop.generate(Prompt.user("Start a todo list in notes/todo.md"), { toolkit: Agent, timeout: "1 minute" }).pipe(
  Effect.flatMap((result) => Console.log(`${result.text}\n${readFileSync(join(workspace, "notes/todo.md"), "utf8")}`)),
  Effect.provide(AgentLive),
  Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1" })),
  Effect.provide(ResponsesClient.layerConfig()), // OPENAI_API_KEY, OPENAI_BASE_URL
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain
)
