/**
 * MCP approvals through the tool loop, over the Responses model and the recorded gpt-5-mini session with a
 * hosted MCP server that needs approval (vercel/ai, Apache-2.0: see `fixtures/SOURCES.md`): response 1
 * (`vai-openai-mcp-approval-request.chunks.txt`) ends with an `mcp_approval_request`; response 2
 * (`vai-openai-mcp-approved-call.chunks.txt`) is the server's answer once approved (the `mcp_call`, then
 * the text). The loop asks the `McpApprovals` service and sends its decision as an `mcp_approval_response`
 * after the first response's items, handed back verbatim; without the service it returns the request.
 */
import { Message, Part, Prompt } from "@effect-responses/core"
import { BuiltInTool, Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayHttpClient } from "@effect-responses/testing"
import { McpApprovals, Toolkit, ToolLoop } from "@effect-responses/tools"
import * as HttpClient from "@effect/platform/HttpClient"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"

type Json = { readonly [key: string]: unknown }

const fixture = (name: string) => new URL(`../../../fixtures/responses-sse/${name}`, import.meta.url)
const REQUEST = fixture("vai-openai-mcp-approval-request.chunks.txt")
const APPROVED = fixture("vai-openai-mcp-approved-call.chunks.txt")

const completed = (url: URL) =>
  readFileSync(url, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Json)
    .find((event) => event.type === "response.completed")!.response as {
      readonly output: ReadonlyArray<Json>
      readonly tools: ReadonlyArray<Json>
    }
const first = completed(REQUEST)
const APPROVAL_REQUEST_ID = "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe"

const capture = Effect.runSync(
  Capture.parse(`${readFileSync(REQUEST, "utf8").trimEnd()}\n${readFileSync(APPROVED, "utf8")}`, "mcp approval session")
)

const Zip1 = BuiltInTool.mcp({
  serverLabel: "zip1",
  serverUrl: "https://zip1.io/mcp",
  serverDescription: "Link shortener",
  requireApproval: "always"
})

const NoTools = Toolkit.make()

const model = (client: HttpClient.HttpClient) =>
  ResponsesLanguageModel.layer({ model: "gpt-5-mini", builtInTools: [Zip1] }).pipe(
    Layer.provide(ResponsesClient.layer()),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
  )

const prompt = Prompt.user("Shorten the link https://ai-sdk.dev/ with at most 100 clicks.")

describe("MCP approvals through the tool loop (recorded hosted MCP server needing approval)", () => {
  it.effect("the approval service's decision goes back as an mcp_approval_response; the loop runs to the answer", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayHttpClient.make(capture)
      const result = yield* ToolLoop.generate(prompt, { toolkit: NoTools }).pipe(
        Effect.provide(McpApprovals.byName({ approve: ["create_short_url"], serverLabel: "zip1" })),
        Effect.provide(model(replay.client))
      )
      assert.include(result.text, "https://zip1.io/UDKvlw")
      assert.strictEqual(result.steps.length, 2)
      const [request1, request2] = replay.requests.map((request) => request.body as Json)
      // the MCP tool goes out as the recorded request sent it (the API echoes its request's tools)
      expect((request1!.tools as ReadonlyArray<Json>)[0]).toStrictEqual(
        Object.fromEntries(Object.entries(first.tools[0]!).filter(([, value]) => value !== null))
      )
      const input = request2!.input as ReadonlyArray<Json>
      // the question; mcp_list_tools and the request verbatim (the reasoning item has no encrypted content
      // to hand back); the decision
      expect(input.slice(1)).toStrictEqual([
        first.output[0],
        first.output[2],
        { type: "mcp_approval_response", approval_request_id: APPROVAL_REQUEST_ID, approve: true }
      ])
      // the transcript keeps the decision in a tool message
      const tool = result.transcript.messages[2]!
      assert.strictEqual(tool.role, "tool")
      expect(tool.role === "tool" ? tool.results : []).toStrictEqual([
        new Part.McpApprovalResponsePart({ approvalRequestId: APPROVAL_REQUEST_ID, approve: true })
      ])
    }))

  it.effect("a denial goes back with its reason; ToolLoop.stream emits it as a ToolResult", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayHttpClient.make(capture)
      const events = Array.from(
        yield* Stream.runCollect(ToolLoop.stream(prompt, { toolkit: NoTools })).pipe(
          Effect.provide(McpApprovals.byName({ approve: ["create_short_url"], serverLabel: "another-server" })),
          Effect.provide(model(replay.client))
        )
      )
      const reason = "tool create_short_url of MCP server zip1 is not approved"
      const results = events.filter((event) => event.type === "tool_result")
      expect(results.map((event) => event.type === "tool_result" ? event.result : undefined)).toStrictEqual([
        new Part.McpApprovalResponsePart({ approvalRequestId: APPROVAL_REQUEST_ID, approve: false, reason })
      ])
      const input = (replay.requests[1]!.body as Json).input as ReadonlyArray<Json>
      expect(input.at(-1)).toStrictEqual({
        type: "mcp_approval_response",
        approval_request_id: APPROVAL_REQUEST_ID,
        approve: false,
        reason
      })
    }))

  it.effect("without an approvals service the loop returns the request to the caller", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayHttpClient.make(capture)
      const result = yield* ToolLoop.generate(prompt, { toolkit: NoTools }).pipe(Effect.provide(model(replay.client)))
      assert.strictEqual(replay.requests.length, 1)
      const calls = result.response.message.clientCalls
      assert.strictEqual(calls.length, 1)
      expect(calls[0]).toMatchObject({
        type: "mcp_approval_request",
        approvalRequestId: APPROVAL_REQUEST_ID,
        serverLabel: "zip1",
        name: "create_short_url"
      })
      // the caller answers it and goes on: the same decision the service would have sent
      const answered = Prompt.append(
        result.transcript,
        new Message.ToolMessage({ results: [McpApprovals.respond(calls[0] as Part.McpApprovalRequestPart, { approve: true })] })
      )
      const next = yield* ToolLoop.generate(answered, { toolkit: NoTools }).pipe(Effect.provide(model(replay.client)))
      assert.include(next.text, "https://zip1.io/UDKvlw")
      expect(((replay.requests[1]!.body as Json).input as ReadonlyArray<Json>).at(-1)).toStrictEqual({
        type: "mcp_approval_response",
        approval_request_id: APPROVAL_REQUEST_ID,
        approve: true
      })
    }))
})

describe("McpApprovals", () => {
  const request = (name: string, serverLabel = "zip1") =>
    new Part.McpApprovalRequestPart({ approvalRequestId: `mcpr_${name}`, serverLabel, name, arguments: "{}" })

  it.effect("byName approves the listed tools (of the named server) and denies everything else", () =>
    Effect.gen(function*() {
      const answers = yield* McpApprovals.answer([
        request("create_short_url"),
        request("delete_url"),
        request("create_short_url", "other"),
        request("purge")
      ]).pipe(Effect.provide(McpApprovals.byName({ approve: ["create_short_url", "purge"], deny: ["purge"], serverLabel: "zip1" })))
      expect(answers.map((answer) => [answer.approvalRequestId, answer.approve])).toStrictEqual([
        ["mcpr_create_short_url", true],
        ["mcpr_delete_url", false],
        ["mcpr_create_short_url", false],
        ["mcpr_purge", false]
      ])
      assert.strictEqual(answers[1]!.reason, "tool delete_url of MCP server zip1 is not approved")
    }))

  it.effect("layer takes a decision that uses services", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const layer = McpApprovals.layer((request) =>
        Effect.sync(() => {
          asked.push(`${request.serverLabel}/${request.name}`)
          return { approve: request.name.startsWith("read_"), reason: "asked" }
        })
      )
      const answers = yield* McpApprovals.answer([request("read_file"), request("write_file")]).pipe(Effect.provide(layer))
      expect(answers.map((answer) => answer.approve)).toStrictEqual([true, false])
      expect(asked).toStrictEqual(["zip1/read_file", "zip1/write_file"])
      const denied = yield* McpApprovals.answer([request("x")]).pipe(Effect.provide(McpApprovals.denyAll()))
      assert.strictEqual(denied[0]!.reason, "MCP tool calls are not approved")
      const approved = yield* McpApprovals.answer([request("x")]).pipe(Effect.provide(McpApprovals.approveAll))
      assert.isTrue(approved[0]!.approve)
      assert.isTrue(Option.isNone(Option.fromNullable(approved[0]!.reason)))
    }))
})
