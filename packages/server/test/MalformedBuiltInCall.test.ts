/**
 * A call of a client-run built-in (`shell`, `apply_patch`, `local_shell`) whose arguments are no call of it
 * reaches the client as the `function_call` it was (the gateway loses nothing), and the client's tool loop
 * (`ToolLoop` over `ResponsesLanguageModel`, toolkit of the built-ins) answers it naming the field that is
 * wrong, as the Responses decoder names a malformed built-in item's field, so the model can call again; the
 * handlers never run. The calls are those a coding agent's upstream sent through `effect-responses serve`
 * (`{"commands":"notalist"}`, an `update_file` without `diff`); a scripted loopback upstream answers.
 */
import { Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { completion } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"

const BuiltIns = Toolkit.make(Tool.shell, Tool.applyPatch, Tool.localShell)

const CALLS = [
  { id: "call_s", name: "shell", arguments: "{\"commands\":\"notalist\"}" },
  { id: "call_a", name: "apply_patch", arguments: "{\"type\":\"update_file\",\"path\":\"x.txt\"}" },
  { id: "call_l", name: "local_shell", arguments: "{\"command\":\"ls\",\"working_directory\":\".\"}" },
  { id: "call_t", name: "shell", arguments: "{\"commands\":[\"ls\"],\"timeout_ms\":-1}" }
]

describe("a built-in's call with arguments that are no call of it, through the gateway", () => {
  it.effect("comes back as a function call, and the tool loop's answer names the wrong field (nothing runs)", () => {
    const ran: Array<string> = []
    const live = BuiltIns.toLayer({
      shell: (call) => Effect.sync(() => ran.push(call.callId)).pipe(Effect.as([])),
      apply_patch: (call) => Effect.sync(() => ran.push(call.callId)).pipe(Effect.as({ status: "completed" as const })),
      local_shell: (call) => Effect.sync(() => ran.push(call.callId)).pipe(Effect.as(""))
    })
    return withScriptedGateway([
      completion({
        content: null,
        tool_calls: CALLS.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }))
      }, "tool_calls"),
      completion({ content: "done" })
    ], {}, (url, received) =>
      Effect.gen(function*() {
        const result = yield* ToolLoop.generate(Prompt.user("Fix x.txt"), { toolkit: BuiltIns }).pipe(
          Effect.provide(live),
          Effect.provide(ResponsesLanguageModel.layer({ model: "m" })),
          Effect.provide(ResponsesClient.layer({ baseUrl: url, retry: { times: 0 } })),
          Effect.provide(NodeHttpClient.layerUndici)
        )
        expect(result.text).toBe("done")
        expect(ran).toEqual([])
        // the gateway's no-loss rule: each call reached the client as the function call it was
        const first = result.steps[0]!.message.parts.filter((part) => part.type === "tool_call")
        expect(first.map((part) => [part.callId, part.name, part.arguments])).toEqual(CALLS.map((call) => [call.id, call.name, call.arguments]))
        const messages = received[1]!.body.messages as ReadonlyArray<{ role: string; tool_call_id?: string; content?: string }>
        const answers = messages.filter((message) => message.role === "tool").map((message) => [message.tool_call_id, JSON.parse(message.content!).error])
        expect(answers).toEqual([
          ["call_s", "invalid arguments for tool \"shell\": commands: Expected ReadonlyArray<string>, actual \"notalist\"; nothing was run"],
          ["call_a", "invalid arguments for tool \"apply_patch\": diff is missing; nothing was run"],
          ["call_l", "invalid arguments for tool \"local_shell\": command: Expected ReadonlyArray<string>, actual \"ls\"; nothing was run"],
          ["call_t", "invalid arguments for tool \"shell\": timeout_ms: Expected a non-negative number, actual -1; nothing was run"]
        ])
      }))
  })
})
