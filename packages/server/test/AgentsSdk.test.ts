/**
 * The OpenAI Agents SDK (`@openai/agents`, `OpenAIResponsesModel` over the `openai` client) as a coding agent
 * through the gateway, over loopback HTTP, to a scripted Chat Completions upstream: its client-run
 * `apply_patch` tool (`applyPatchTool` with an editor that records the operations), its client-run `shell`
 * tool (`shellTool` with a shell that records the actions) and a namespaced function tool (`toolNamespace`),
 * streamed and not. The SDK runs the whole loop: the gateway's `apply_patch_call` and `shell_call` items must
 * carry an operation its editor takes and an action its shell runs, and the next turns' calls and outputs
 * must reach the upstream as calls and their results.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, applyPatchTool, type Editor, OpenAIResponsesModel, run, setTracingDisabled, type Shell, shellTool } from "@openai/agents"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { callTurn, crmNamespace, textTurn } from "./agentsSdk.js"
import { type Handler } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import type { WireJson as Json } from "./utils.js"

setTracingDisabled(true)

const PATCH = { type: "create_file", path: "hello.txt", diff: "+Hello, world!\n" }

/** The coding agent: apply_patch with a recording editor, shell with a recording shell, and crm.lookup in a namespace. */
const codingAgent = (url: string) => {
  const operations: Array<Json> = []
  const lookups: Array<string> = []
  const actions: Array<Json> = []
  const shell: Shell = {
    run: async (action) => {
      actions.push(action)
      return { output: [{ stdout: "Hello, world!\n", stderr: "", outcome: { type: "exit", exitCode: 0 } }] }
    }
  }
  const editor: Editor = {
    createFile: async (operation) => {
      operations.push(operation)
      return { status: "completed", output: `Created ${operation.path}` }
    },
    updateFile: async (operation) => {
      operations.push(operation)
    },
    deleteFile: async (operation) => {
      operations.push(operation)
    }
  }
  const crm = crmNamespace((id) => lookups.push(id))
  const agent = new Agent({
    name: "coder",
    instructions: "You edit files.",
    model: new OpenAIResponsesModel(new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }), "scripted-model"),
    tools: [applyPatchTool({ editor }), shellTool({ shell }), ...crm]
  })
  return { agent, operations, lookups, actions }
}

const script = (): ReadonlyArray<Handler> => [
  callTurn({ id: "call_patch", name: "apply_patch", args: JSON.stringify(PATCH) }),
  callTurn({ id: "call_shell", name: "shell", args: JSON.stringify({ commands: ["cat hello.txt"], timeout_ms: 5000 }) }),
  callTurn({ id: "call_crm", name: "crm__lookup", args: JSON.stringify({ id: "42" }) }),
  textTurn("Created hello.txt for Ada.")
]

describe("@openai/agents as a coding agent through the gateway", () => {
  for (const stream of [false, true]) {
    it.effect(`apply_patch, shell and a namespaced tool run to a final answer (${stream ? "streamed" : "not streamed"})`, () =>
      withScriptedGateway(script(), {}, (url, received) =>
        Effect.promise(async () => {
          const { actions, agent, lookups, operations } = codingAgent(url)
          let finalOutput: unknown
          if (stream) {
            const result = await run(agent, "Create hello.txt and greet customer 42.", { stream: true })
            await result.completed
            finalOutput = result.finalOutput
          } else {
            finalOutput = (await run(agent, "Create hello.txt and greet customer 42.")).finalOutput
          }
          expect(finalOutput).toBe("Created hello.txt for Ada.")
          expect(operations).toEqual([PATCH])
          expect(lookups).toEqual(["42"])
          expect(actions).toEqual([{ commands: ["cat hello.txt"], timeoutMs: 5000 }])

          expect(received).toHaveLength(4)
          const first = received[0]!.body as Json
          expect(first.stream).toBe(stream)
          const tools = first.tools.map((t: Json) => t.function.name)
          expect(tools).toEqual(["apply_patch", "shell", "crm__lookup"])
          expect(first.tools[0].function.parameters.required).toEqual(["type", "path"])
          // the last turn holds the three calls and their results, in order
          const last = (received[3]!.body as Json).messages as ReadonlyArray<Json>
          const calls = last.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? [])
          expect(calls.map((call: Json) => [call.id, call.function.name])).toEqual([
            ["call_patch", "apply_patch"],
            ["call_shell", "shell"],
            ["call_crm", "crm__lookup"]
          ])
          expect(JSON.parse(calls[0].function.arguments)).toEqual(PATCH)
          expect(JSON.parse(calls[1].function.arguments)).toEqual({ commands: ["cat hello.txt"], timeout_ms: 5000 })
          const results = last.filter((m) => m.role === "tool")
          expect(results.map((m) => [m.tool_call_id, m.content])).toEqual([
            ["call_patch", "Created hello.txt"],
            ["call_shell", "Hello, world!\n\n(exit code 0)"],
            ["call_crm", expect.stringContaining("Customer 42: Ada")]
          ])
        })))
  }
})
