/**
 * The output items of custom tools, client-run built-in tools (shell, apply_patch), MCP approvals and tool
 * search, on the recorded streams: each becomes a typed part, streamed custom tool input arrives once
 * (deltas plus an emptied completing part), and replaying the decoded message gives back the items the
 * server sent. The tool message parts that answer them become the input items the API reference describes.
 */
import { LanguageModel, Message, Part, Prompt, type StreamPart } from "@effect-responses/core"
import { ResponsesOutput, ResponsesRequest, ResponsesStream } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { readFixture } from "./fixtures.js"
import { payloadsOf } from "./utils.js"

interface Item {
  readonly type: string
  readonly [key: string]: unknown
}

/** The payloads of a recording: line-JSON, or the `data:` lines of an SSE file. */
const payloads = (relative: string): ReadonlyArray<string> =>
  relative.endsWith(".sse")
    ? readFixture(relative).split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
    : payloadsOf(relative)

/** The `output` of every `response.completed` of a recording. */
const completedOutputs = (relative: string): ReadonlyArray<ReadonlyArray<Item>> =>
  payloads(relative)
    .map((line) => JSON.parse(line) as { readonly type: string; readonly response?: { readonly output: ReadonlyArray<Item> } })
    .filter((event) => event.type === "response.completed")
    .map((event) => event.response!.output)

const decodeStream = (relative: string) =>
  Stream.runCollect(ResponsesStream.decodeData(Stream.fromIterable(payloads(relative)))).pipe(
    Effect.map((chunk) => Array.from(chunk))
  )

const updates = (elements: ReadonlyArray<StreamPart.StreamPart>) =>
  elements.filter((element): element is StreamPart.PartUpdate => element.type === "part")

/** Decodes a response's output and replays it: the input items must equal the output items. */
const roundTrip = (output: ReadonlyArray<Item>) =>
  Effect.gen(function*() {
    const parts = yield* Effect.forEach(output, ResponsesOutput.fromOutputItem)
    const body = yield* ResponsesRequest.fromPrompt(
      Prompt.make([new Message.AssistantMessage({ role: "assistant", parts })]),
      { model: "m", includeEncryptedReasoning: false }
    )
    return { parts, input: body.input }
  })

describe("typed tool items on the recorded streams", () => {
  it.effect("custom_tool_call: input deltas are CustomToolCallParts, the completing part is emptied", () =>
    Effect.gen(function*() {
      const file = "responses-sse/pai-gpt5-custom-tool-call-input-deltas.sse"
      const slot = updates(yield* decodeStream(file)).filter((update) => update.outputIndex === 1)
      const deltas = slot.filter((update) => update.partial)
      assert.isTrue(deltas.length > 1)
      for (const delta of deltas) {
        assert.strictEqual(delta.part.type, "custom_tool_call")
        const part = delta.part as Part.CustomToolCallPart
        assert.strictEqual(part.callId, "call_2GHkSm2Jm0n7vgXsQEryfGmL")
        assert.strictEqual(part.name, "execute_sql")
      }
      assert.strictEqual(
        deltas.map((update) => (update.part as Part.CustomToolCallPart).input).join(""),
        "SELECT * FROM users LIMIT 5;"
      )
      const last = slot.at(-1)!
      assert.isFalse(last.partial)
      expect(last.part).toStrictEqual(
        new Part.CustomToolCallPart({
          callId: "call_2GHkSm2Jm0n7vgXsQEryfGmL",
          name: "execute_sql",
          input: "",
          attributes: { itemId: "ctc_0e3f1d7b90a3b1d70069580db5e9d08191a1bd569bc6a4ce56", status: "completed" }
        })
      )
      const [output] = completedOutputs(file)
      const { input, parts } = yield* roundTrip(output!.filter((item) => item.type !== "reasoning"))
      assert.strictEqual(parts[0]!.type, "custom_tool_call")
      expect(input).toStrictEqual(output!.filter((item) => item.type !== "reasoning"))
    }))

  it.effect("custom tool input given only in the done item arrives once, whole", () =>
    Effect.gen(function*() {
      const file = "responses-sse/pai-gpt5-custom-tool-call-input-deltas.sse"
      const noDeltas = payloads(file).filter((line) => !line.includes("\"response.custom_tool_call_input.delta\""))
      const elements = yield* Stream.runCollect(ResponsesStream.decodeData(Stream.fromIterable(noDeltas)))
      const slot = updates(Array.from(elements)).filter((update) => update.outputIndex === 1)
      assert.strictEqual(slot.length, 1)
      assert.isFalse(slot[0]!.partial)
      assert.strictEqual((slot[0]!.part as Part.CustomToolCallPart).input, "SELECT * FROM users LIMIT 5;")
      const finished = elements.pipe((chunk) => Array.from(chunk).at(-1)) as StreamPart.ResponseFinished
      assert.strictEqual(finished.finishReason, "tool_calls")
    }))

  it.effect("apply_patch_call: an ApplyPatchCallPart with its create_file operation, replayed exactly", () =>
    Effect.gen(function*() {
      const file = "responses-sse/vai-openai-apply-patch-call.chunks.txt"
      const elements = yield* decodeStream(file)
      const complete = updates(elements).filter((update) => !update.partial)
      assert.strictEqual(complete.length, 1)
      expect(complete[0]!.part).toStrictEqual(
        new Part.ApplyPatchCallPart({
          callId: "call_kA46f91ZwocQyMCKyyZqRyC5",
          operation: {
            type: "create_file",
            path: "shopping-checklist.md",
            diff: "+## Shopping Checklist\n+\n+- [ ] Milk\n+- [ ] Bread\n+- [ ] Eggs\n+- [ ] Fresh fruit\n+- [ ] Coffee\n"
          },
          attributes: { itemId: "apc_0372d86dfc1762fe00692741f3f3dc8190879cba489ff2fc8b", status: "completed" }
        })
      )
      assert.strictEqual((elements.at(-1) as StreamPart.ResponseFinished).finishReason, "tool_calls")
      const [output] = completedOutputs(file)
      const { input } = yield* roundTrip(output!)
      expect(input).toStrictEqual(output)
    }))

  it.effect("a built-in call that does not match its schema but has a call_id: an UnknownPart naming the field, replayed verbatim", () =>
    Effect.gen(function*() {
      const [[patch]] = completedOutputs("responses-sse/vai-openai-apply-patch-call.chunks.txt") as unknown as [[Item & { readonly operation: Record<string, unknown> }]]
      const [[shell]] = completedOutputs("responses-sse/vai-openai-shell-call.chunks.txt") as unknown as [[Item & { readonly action: Record<string, unknown> }]]
      const { path: _path, ...noPath } = patch!.operation
      const cases: ReadonlyArray<readonly [Item, string]> = [
        // a missing path was reported as `at operation.type: Expected "delete_file", actual "create_file"`
        [{ ...patch!, operation: noPath }, "operation.path is missing"],
        [{ ...patch!, operation: { type: "rename_file", path: "a", to: "b" } }, "operation.type: Expected \"create_file\" | \"update_file\" | \"delete_file\", actual \"rename_file\""],
        [{ ...patch!, operation: null }, "operation: Expected an object with type create_file, update_file or delete_file, actual null"],
        [{ ...shell!, action: { ...shell!.action, commands: "ls" } }, "action.commands: Expected ReadonlyArray<string>, actual \"ls\""]
      ]
      for (const [item, malformed] of cases) {
        const { parts, input } = yield* roundTrip([item])
        expect(parts).toStrictEqual([
          new Part.UnknownPart({
            provider: "openai.responses",
            kind: item.type,
            item,
            malformed,
            attributes: { itemId: item.id as string, status: "completed" }
          })
        ])
        expect(input).toStrictEqual([item])
      }
      // without a readable call_id the call cannot be answered: the item is malformed output
      const { call_id: _id, ...noCallId }: Item = { ...patch!, operation: noPath }
      const error = yield* Effect.flip(ResponsesOutput.fromOutputItem(noCallId))
      assert.strictEqual(error.description, "invalid apply_patch_call output item at call_id: is missing")
    }))

  it.effect("shell_call: a ShellCallPart with commands and limits; the follow-up answer is text", () =>
    Effect.gen(function*() {
      const file = "responses-sse/vai-openai-shell-call.chunks.txt"
      const [first, second] = completedOutputs(file)
      const { input, parts } = yield* roundTrip(first!)
      expect(parts).toStrictEqual([
        new Part.ShellCallPart({
          callId: "call_pbxjNs1tMJUahLZKAS9qLtvw",
          commands: ["ls -a ~/Desktop"],
          maxOutputLength: 8912,
          attributes: { itemId: "sh_0434d6d64b12b08900692f639c9f0481959c30e03ca0bb2ef8", status: "completed" }
        })
      ])
      expect(input).toStrictEqual(first)
      assert.strictEqual(second![0]!.type, "message")
      const finishes = (yield* decodeStream(file)).filter((element) => element.type === "response_finished")
      expect(finishes.map((element) => (element as StreamPart.ResponseFinished).finishReason)).toStrictEqual([
        "tool_calls",
        "stop"
      ])
    }))

  it.effect("mcp_approval_request: an McpApprovalRequestPart; the approved call that follows stays an mcp_call", () =>
    Effect.gen(function*() {
      const [request] = completedOutputs("responses-sse/vai-openai-mcp-approval-request.chunks.txt")
      const { input, parts } = yield* roundTrip(request!)
      const approval = parts.find((part): part is Part.McpApprovalRequestPart => part.type === "mcp_approval_request")!
      expect(approval).toStrictEqual(
        new Part.McpApprovalRequestPart({
          approvalRequestId: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe",
          serverLabel: "zip1",
          name: "create_short_url",
          arguments:
            "{\"alias\":\"\",\"description\":\"Shortened link for ai-sdk.dev\",\"max_clicks\":100,\"password\":\"\",\"url\":\"https://ai-sdk.dev/\"}",
          attributes: { itemId: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe" }
        })
      )
      // the approval request comes back exactly as it was sent (the reasoning item without its payload is skipped)
      expect(input.filter((item) => item.type === "mcp_approval_request")).toStrictEqual(
        request!.filter((item) => item.type === "mcp_approval_request")
      )
      const [approved] = completedOutputs("responses-sse/vai-openai-mcp-approved-call.chunks.txt")
      const next = yield* roundTrip(approved!)
      expect(next.parts.map((part) => part.type)).toStrictEqual(["unknown", "unknown", "text"])
    }))

  it.effect("tool_search_call / tool_search_output and a namespaced function call, replayed exactly", () =>
    Effect.gen(function*() {
      const [output] = completedOutputs("responses-sse/vai-openai-tool-search.chunks.txt")
      const parts = yield* Effect.forEach(output!, ResponsesOutput.fromOutputItem)
      const { input } = yield* ResponsesRequest.fromPrompt(
        Prompt.make([
          new Message.AssistantMessage({ role: "assistant", parts }),
          new Message.ToolMessage({
            role: "tool",
            results: [new Part.ToolResultPart({ callId: "call_pddfxhfOx4gY56zn4vIIEbFp", name: "get_weather", output: "72F" })]
          })
        ]),
        { model: "m" }
      )
      expect(parts.map((part) => part.type)).toStrictEqual(["tool_search_call", "tool_search_output", "tool_call"])
      const search = parts[0] as Part.ToolSearchCallPart
      assert.strictEqual(search.execution, "server")
      assert.isUndefined(search.callId)
      expect(search.arguments).toStrictEqual({ paths: ["get_weather"] })
      assert.strictEqual((parts[1] as Part.ToolSearchOutputPart).tools.length, 1)
      const call = parts[2] as Part.ToolCallPart
      assert.strictEqual(call.namespace, "get_weather")
      assert.strictEqual(call.name, "get_weather")
      expect(input.slice(0, 3)).toStrictEqual(output)
      // the streamed function call deltas carry the namespace of the added item
      const deltas = updates(yield* decodeStream("responses-sse/vai-openai-tool-search.chunks.txt"))
        .filter((update) => update.partial && update.part.type === "tool_call")
      assert.isTrue(deltas.length > 0)
      assert.isTrue(deltas.every((update) => (update.part as Part.ToolCallPart).namespace === "get_weather"))
    }))
})

describe("tool message parts -> input items", () => {
  it.effect("each answer becomes the item the API reference describes", () =>
    Effect.gen(function*() {
      const prompt = Prompt.make([
        new Message.AssistantMessage({
          role: "assistant",
          parts: [
            new Part.CustomToolCallPart({ callId: "call_a", name: "execute_sql", input: "SELECT 1" }),
            new Part.ToolCallPart({ callId: "call_b", name: "f", arguments: "{}" }),
            new Part.ShellCallPart({ callId: "call_c", commands: ["ls"] }),
            new Part.ApplyPatchCallPart({ callId: "call_d", operation: { type: "delete_file", path: "a" } }),
            new Part.LocalShellCallPart({ callId: "call_e", command: ["ls"] }),
            new Part.McpApprovalRequestPart({ approvalRequestId: "mcpr_1", serverLabel: "s", name: "t", arguments: "{}" })
          ]
        }),
        new Message.ToolMessage({
          role: "tool",
          results: [
            new Part.ToolResultPart({ callId: "call_a", name: "execute_sql", output: "3 rows", kind: "custom" }),
            new Part.ToolResultPart({ callId: "call_b", name: "f", output: "{}" }),
            new Part.ShellCallOutputPart({
              callId: "call_c",
              output: [
                { stdout: "a\n", stderr: "", outcome: { type: "exit", exitCode: 0 } },
                { stdout: "", stderr: "", outcome: { type: "timeout" } }
              ],
              maxOutputLength: 8912
            }),
            new Part.ApplyPatchCallOutputPart({ callId: "call_d", status: "failed", output: "hunk 1 does not apply" }),
            new Part.LocalShellCallOutputPart({ callId: "call_e", output: "{\"stdout\":\"ok\"}" }),
            new Part.McpApprovalResponsePart({ approvalRequestId: "mcpr_1", approve: false, reason: "not now" })
          ]
        })
      ])
      const body = yield* ResponsesRequest.fromPrompt(prompt, { model: "m" })
      expect(body.input.slice(6)).toStrictEqual([
        { type: "custom_tool_call_output", call_id: "call_a", output: "3 rows" },
        { type: "function_call_output", call_id: "call_b", output: "{}" },
        {
          type: "shell_call_output",
          call_id: "call_c",
          output: [
            { stdout: "a\n", stderr: "", outcome: { type: "exit", exit_code: 0 } },
            { stdout: "", stderr: "", outcome: { type: "timeout" } }
          ],
          max_output_length: 8912
        },
        { type: "apply_patch_call_output", call_id: "call_d", status: "failed", output: "hunk 1 does not apply" },
        { type: "local_shell_call_output", id: "call_e", output: "{\"stdout\":\"ok\"}" },
        { type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: false, reason: "not now" }
      ])
    }))

  it.effect("a result with an empty call id is an InvalidPrompt", () =>
    Effect.gen(function*() {
      const prompt = Prompt.make([
        new Message.ToolMessage({
          role: "tool",
          results: [new Part.ApplyPatchCallOutputPart({ callId: "", status: "completed" })]
        })
      ])
      const error = yield* Effect.flip(ResponsesRequest.fromPrompt(prompt, { model: "m" }))
      assert.strictEqual(error._tag, "InvalidPrompt")
      assert.match(error.description, /apply_patch_call_output has an empty call id/)
    }))

  it.effect("a local_shell_call decodes and replays with its exec action", () =>
    Effect.gen(function*() {
      const item = {
        type: "local_shell_call",
        id: "lsh_1",
        status: "completed",
        call_id: "call_1",
        action: { type: "exec", command: ["ls", "-la"], env: { A: "1" }, timeout_ms: 5000, working_directory: "/tmp" }
      }
      const { input, parts } = yield* roundTrip([item])
      expect(parts[0]).toStrictEqual(
        new Part.LocalShellCallPart({
          callId: "call_1",
          command: ["ls", "-la"],
          env: { A: "1" },
          timeoutMs: 5000,
          workingDirectory: "/tmp",
          attributes: { itemId: "lsh_1", status: "completed" }
        })
      )
      expect(input).toStrictEqual([item])
    }))
})

describe("tool definitions -> tools", () => {
  it.effect("a custom tool with a Lark grammar is sent as the recorded request sent it", () =>
    Effect.gen(function*() {
      const recorded = JSON.parse(readFixture("responses-json/pai-gpt5-custom-tool-lark-grammar.json")) as {
        readonly tools: ReadonlyArray<{ readonly format: { readonly definition: string } }>
      }
      const tool = new LanguageModel.CustomToolDefinition({
        name: "run_sql",
        description: "Execute a constrained SQL SELECT query.",
        format: { type: "grammar", syntax: "lark", definition: recorded.tools[0]!.format.definition }
      })
      const body = yield* ResponsesRequest.fromPrompt(Prompt.user("hi"), { model: "m", tools: [tool], toolChoice: { tool: "run_sql" } })
      expect(body.tools).toStrictEqual(recorded.tools)
      expect(body.tool_choice).toStrictEqual({ type: "custom", name: "run_sql" })
    }))

  it.effect("deferred function tools, a namespace group and client-run built-in tools", () =>
    Effect.gen(function*() {
      const parameters = { type: "object", properties: {}, required: [], additionalProperties: false }
      const namespace = { name: "weather", description: "Weather tools" }
      const body = yield* ResponsesRequest.fromPrompt(Prompt.user("hi"), {
        model: "m",
        tools: [
          new LanguageModel.ToolDefinition({ name: "get_weather", parameters, strict: true, deferLoading: true }),
          new LanguageModel.ToolDefinition({ name: "forecast", parameters, strict: true, namespace }),
          new LanguageModel.ClientToolDefinition({ name: "shell" }),
          new LanguageModel.CustomToolDefinition({ name: "alerts", namespace, deferLoading: true }),
          new LanguageModel.ClientToolDefinition({ name: "apply_patch" })
        ]
      })
      expect(body.tools).toStrictEqual([
        { type: "function", name: "get_weather", parameters, strict: true, defer_loading: true },
        {
          type: "namespace",
          name: "weather",
          description: "Weather tools",
          tools: [
            { type: "function", name: "forecast", parameters, strict: true },
            { type: "custom", name: "alerts", defer_loading: true }
          ]
        },
        { type: "shell" },
        { type: "apply_patch" }
      ])
    }))
})
