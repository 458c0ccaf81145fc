/**
 * Custom tools and the client-run built-ins end to end over real HTTP: `ToolLoop` -> `ResponsesLanguageModel`
 * -> undici -> the loopback `ReplayServer` replaying captures written for these tests (`test/captures/`,
 * invented ids, events and items shaped as the API reference and the recordings show them), with the
 * reference handlers on a temporary directory. What the loop sends back is read from the requests the
 * server received.
 */
import { Prompt } from "@effect-responses/core"
import { BuiltInTool, Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayServer } from "@effect-responses/testing"
import { ApplyPatch, McpApprovals, Shell, Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { Demo, Request } from "@effect-responses/cli"
import { assert, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { mkdtempSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { capturePath } from "./fixtures.js"

const session = (name: string, builtInTools: ReadonlyArray<BuiltInTool.BuiltInTool> = []) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const capture = yield* Capture.load(capturePath(name))
    return Layer.unwrapEffect(
      Effect.map(ReplayServer.ReplayServer, (server) =>
        ResponsesLanguageModel.layer({ model: "gpt-5.1", builtInTools }).pipe(
          Layer.provide(ResponsesClient.layer({ baseUrl: server.baseUrl })),
          Layer.provideMerge(Layer.succeed(ReplayServer.ReplayServer, server))
        ))
    ).pipe(
      Layer.provide(ReplayServer.layer({ capture })),
      Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(NodeHttpClient.layerUndici)
    )
  })).pipe(Layer.provide(NodeContext.layer))

type Item = Readonly<Record<string, unknown>>

const inputs = Effect.map(
  Effect.flatMap(ReplayServer.ReplayServer, (server) => server.requests),
  (requests) => requests.map((request) => request.body.input as ReadonlyArray<Item>)
)

describe("client-run tools over the loopback replay server", () => {
  it.effect("a custom tool with a Lark grammar: streamed input, raw text in, custom_tool_call_output out", () =>
    Effect.gen(function*() {
      const events = yield* ToolLoop.stream(Prompt.user("What is (12 + 7) * 3 * 10?"), { toolkit: Demo.ReplayToolkit }).pipe(
        Stream.runCollect,
        Effect.provide(Demo.ReplayToolkitLive)
      )
      const last = Array.from(events).at(-1)!
      assert.strictEqual(last.type === "loop_finished" && last.finalText, "(12 + 7) * 3 * 10 = **570**.")
      const [first, second] = yield* inputs
      assert.strictEqual(first!.length, 1)
      // the call handed back as it came, then its answer
      expect(second!.slice(1)).toStrictEqual([
        {
          type: "custom_tool_call",
          id: "ctc_custom_evaluate_1",
          status: "completed",
          call_id: "call_custom_evaluate_1",
          name: "evaluate",
          input: "(12 + 7) * 3 * 10"
        },
        { type: "custom_tool_call_output", call_id: "call_custom_evaluate_1", output: "570" }
      ])
      const requests = yield* Effect.flatMap(ReplayServer.ReplayServer, (server) => server.requests)
      expect((requests[0]!.body.tools as ReadonlyArray<Item>).find((tool) => tool.type === "custom")).toStrictEqual({
        type: "custom",
        name: "evaluate",
        description: Demo.Evaluate.description,
        format: { type: "grammar", syntax: "lark", definition: Demo.EXPRESSION_GRAMMAR }
      })
    }).pipe(Effect.provide(session("custom-tool-evaluate.chunks.txt"))))

  it.effect("apply_patch: a file created then updated (V4A) in a temporary directory, each outcome sent back", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "apply-patch-replay-"))
      const Tools = Toolkit.make(Tool.applyPatch)
      const result = yield* ToolLoop.generate(Prompt.user("Start a todo list"), { toolkit: Tools }).pipe(
        Effect.provide(Tools.toLayer({ apply_patch: ApplyPatch.handler({ root }) }))
      )
      assert.strictEqual(result.text, "I created `notes/todo.md`, checked off milk and added eggs.")
      assert.strictEqual(readFileSync(join(root, "notes/todo.md"), "utf8"), "# Todo\n\n- [x] milk\n- [ ] bread\n- [ ] eggs\n")
      const [, second, third] = yield* inputs
      expect(second!.at(-1)).toStrictEqual({
        type: "apply_patch_call_output",
        call_id: "call_apply_patch_1",
        status: "completed",
        output: "created notes/todo.md"
      })
      expect(third!.filter((item) => item.type === "apply_patch_call_output")).toStrictEqual([
        second!.at(-1),
        { type: "apply_patch_call_output", call_id: "call_apply_patch_2", status: "completed", output: "updated notes/todo.md" }
      ])
      // the calls are handed back as they came, each before its output
      expect(third!.map((item) => item.type)).toStrictEqual([
        "message",
        "apply_patch_call",
        "apply_patch_call_output",
        "apply_patch_call",
        "apply_patch_call_output"
      ])
      // `request` shows the same items for the loop's transcript (its Prompt JSON), the final answer after them
      const body = yield* Request.requestBody(
        JSON.stringify(Schema.encodeSync(Prompt.Prompt)(result.transcript)),
        "transcript.json",
        { model: "gpt-5.1" }
      )
      expect(body.input.slice(0, -1)).toStrictEqual(third)
      expect(body.input.at(-1)).toMatchObject({ type: "message", role: "assistant", id: "msg_apply_patch_3" })
    }).pipe(Effect.provide(session("apply-patch-todo.chunks.txt"))))

  it.effect("shell: the reference handler runs the commands, the one past the call's timeout_ms is killed", () =>
    Effect.gen(function*() {
      const cwd = mkdtempSync(join(tmpdir(), "shell-replay-"))
      const Tools = Toolkit.make(Tool.shell)
      const result = yield* ToolLoop.generate(Prompt.user("Run them"), { toolkit: Tools }).pipe(
        Effect.provide(Tools.toLayer({ shell: Shell.handler({ cwd }) }))
      )
      assert.strictEqual(result.text, "The first command printed `started`; the second one timed out.")
      const [, second] = yield* inputs
      expect(second!.at(-1)).toStrictEqual({
        type: "shell_call_output",
        call_id: "call_shell_timeout_1",
        output: [
          { stdout: "started\n", stderr: "", outcome: { type: "exit", exit_code: 0 } },
          { stdout: "", stderr: "", outcome: { type: "timeout" } }
        ],
        max_output_length: 4096
      })
    }).pipe(Effect.provide(session("shell-timeout.chunks.txt"))))

  it.effect("a hosted tool search loads the math namespace: the search items, the namespaced call and its output go back", () =>
    Effect.gen(function*() {
      const capture = yield* Capture.load(capturePath("tool-search-power.chunks.txt")).pipe(Effect.provide(NodeContext.layer))
      const recordedOutput = Capture.outputItems(capture.responses[0]!)
      const result = yield* ToolLoop.generate(Prompt.user("What is 2 to the power of 10?"), { toolkit: Demo.ReplayToolkit }).pipe(
        Effect.provide(Demo.ReplayToolkitLive)
      )
      assert.strictEqual(result.text, "2 to the power of 10 is **1024**.")
      const requests = yield* Effect.flatMap(ReplayServer.ReplayServer, (server) => server.requests)
      // the deferred tool goes out in its namespace, beside the hosted tool search
      const tools = requests[0]!.body.tools as ReadonlyArray<Item>
      expect(tools.filter((tool) => tool.type === "tool_search")).toStrictEqual([{ type: "tool_search" }])
      expect(tools.find((tool) => tool.type === "namespace")).toMatchObject({
        name: "math",
        tools: [{ type: "function", name: "power", defer_loading: true }]
      })
      const [, second] = yield* inputs
      // tool_search_call, tool_search_output and the call with its namespace verbatim, then the output
      expect(second!.slice(1, 4)).toStrictEqual(recordedOutput)
      expect(recordedOutput[2]).toMatchObject({ type: "function_call", name: "power", namespace: "math" })
      expect(second!.slice(4)).toStrictEqual([{ type: "function_call_output", call_id: "call_power_1", output: "1024" }])
      // `request` shows the same items for the loop's transcript (its Prompt JSON), the final answer after them
      const body = yield* Request.requestBody(
        JSON.stringify(Schema.encodeSync(Prompt.Prompt)(result.transcript)),
        "transcript.json",
        { model: "gpt-5.4" }
      )
      expect(body.input.slice(0, -1)).toStrictEqual(second)
      expect(body.input.at(-1)).toMatchObject({ type: "message", role: "assistant", id: "msg_tool_search_power_2" })
    }).pipe(Effect.provide(session("tool-search-power.chunks.txt", [BuiltInTool.toolSearch()]))))

  it.effect("an MCP approval round trip: the approval goes back after the request, the answer follows the mcp_call", () =>
    Effect.gen(function*() {
      const capture = yield* Capture.load(capturePath("mcp-approval-weather.chunks.txt")).pipe(Effect.provide(NodeContext.layer))
      const recordedOutput = Capture.outputItems(capture.responses[0]!)
      const result = yield* ToolLoop.generate(Prompt.user("What is the weather in Paris tomorrow?"), { toolkit: Demo.ReplayToolkit }).pipe(
        Effect.provide(Demo.ReplayToolkitLive),
        Effect.provide(McpApprovals.approveAll)
      )
      assert.strictEqual(result.text, "Tomorrow in Paris: sunny, 21 °C.")
      expect(Capture.outputItems(capture.responses[1]!).find((item) => item.type === "mcp_call")).toMatchObject({
        approval_request_id: "mcpr_mcp_weather_1",
        output: "Paris, tomorrow: sunny, 21 °C"
      })
      const [, second] = yield* inputs
      // mcp_list_tools and the approval request verbatim, then the approval
      expect(second!.slice(1)).toStrictEqual([
        ...recordedOutput,
        { type: "mcp_approval_response", approval_request_id: "mcpr_mcp_weather_1", approve: true }
      ])
      // `request` shows the same items for the loop's transcript (its Prompt JSON), the final answer after them
      const body = yield* Request.requestBody(
        JSON.stringify(Schema.encodeSync(Prompt.Prompt)(result.transcript)),
        "transcript.json",
        { model: "gpt-5.1" }
      )
      expect(body.input.slice(0, second!.length)).toStrictEqual(second)
      expect(body.input.slice(second!.length).map((item: Item) => item.type)).toStrictEqual([
        "mcp_list_tools",
        "mcp_call",
        "message"
      ])
    }).pipe(Effect.provide(session("mcp-approval-weather.chunks.txt"))))
})
