/**
 * A Chat Completions server may stream a tool call's `function.name` in pieces (`get_` in one chunk,
 * `capital` in the next) before its arguments. The call's `response.output_item.added` carries the whole
 * name: it waits until the call's first arguments, a part of another tool call's index, or the end of the
 * choice. Before, it carried the first piece (`get_`) while `.done` and `response.completed` had the whole
 * name, and the `openai` SDK's accumulator (`accumulateResponse`, which keeps the item as added) gave a
 * response other than `response.completed`.
 *
 * On the recorded `pai-chat-gpt4omini-tool-call-deltas-usage.sse` (gpt-4o-mini's `get_capital` call, its
 * arguments in five deltas) with the name chunk split in two, and on hand-made streams (the tester's
 * `split-name`: the second piece with the whole arguments; parallel calls; a namespaced `crm__` + `lookup`;
 * a custom tool and `apply_patch`, mapped back by name), through the gateway to a scripted loopback upstream.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator.js"
import { finishChunks, type Handler, sse, textChunk, toolChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, parseSse, post, readFixture, type WireJson as Json } from "./utils.js"

const RECORDING = "chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse"

/** The recording with its first chunk's name `get_capital` split: `get_` there, `capital` in a chunk of its own. */
const recordedSplit: Handler = (_request, response) => {
  const blocks = readFixture(RECORDING).split("\n\n").filter((block) => block.trim() !== "")
  const first = JSON.parse(blocks[0]!.slice("data: ".length))
  const call = first.choices[0].delta.tool_calls[0]
  expect(call.function.name).toBe("get_capital")
  call.function.name = "get_"
  const rest = structuredClone(first)
  rest.choices[0].delta = { tool_calls: [{ index: 0, function: { name: "capital", arguments: "" } }] }
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.end([`data: ${JSON.stringify(first)}`, `data: ${JSON.stringify(rest)}`, ...blocks.slice(1)].map((block) => `${block}\n\n`).join(""))
}

const fn = (name: string) => ({ type: "function", name, parameters: { type: "object", properties: {} } })
const APPLY_PATCH_ARGS = JSON.stringify({ type: "create_file", path: "a.txt", diff: "+hi\n" })

interface Case {
  readonly what: string
  readonly tools: ReadonlyArray<unknown>
  readonly upstream: Handler
  /** the terminal output's items: type, namespace, name, arguments (or input) */
  readonly expected: ReadonlyArray<ReadonlyArray<unknown>>
}

const CASES: ReadonlyArray<Case> = [
  {
    what: "the recorded get_capital call, its name in two chunks",
    tools: [fn("get_capital")],
    upstream: recordedSplit,
    expected: [["function_call", undefined, "get_capital", "{\"country\":\"UK\"}"]]
  },
  {
    what: "get_ + weather, the second piece with the whole arguments (the tester's split-name)",
    tools: [fn("get_weather")],
    upstream: sse(
      toolChunk({ id: "call_sn", name: "get_", arguments: "" }),
      toolChunk({ name: "weather", arguments: "{\"city\":\"Oslo\"}" }),
      finishChunks("tool_calls")
    ),
    expected: [["function_call", undefined, "get_weather", "{\"city\":\"Oslo\"}"]]
  },
  {
    what: "text, then get_ + weather without arguments, ended by the choice's end",
    tools: [fn("get_weather")],
    upstream: sse(
      textChunk("Let me check. "),
      toolChunk({ id: "call_sn", name: "get_", arguments: "" }),
      toolChunk({ name: "weather", arguments: "" }),
      finishChunks("tool_calls")
    ),
    expected: [["message", undefined, undefined, undefined], ["function_call", undefined, "get_weather", "{}"]]
  },
  {
    what: "two parallel calls, the first one's name whole when the second begins",
    tools: [fn("get_weather"), fn("get_time")],
    upstream: sse(
      toolChunk({ index: 0, id: "call_a", name: "get_", arguments: "" }),
      toolChunk({ index: 0, name: "weather", arguments: "" }),
      toolChunk({ index: 1, id: "call_b", name: "get_", arguments: "" }),
      toolChunk({ index: 1, name: "time", arguments: "" }),
      toolChunk({ index: 0, arguments: "{\"city\":\"Oslo\"}" }),
      toolChunk({ index: 1, arguments: "{\"zone\":\"CET\"}" }),
      finishChunks("tool_calls")
    ),
    expected: [
      ["function_call", undefined, "get_weather", "{\"city\":\"Oslo\"}"],
      ["function_call", undefined, "get_time", "{\"zone\":\"CET\"}"]
    ]
  },
  {
    what: "a namespaced crm__ + lookup",
    tools: [{ type: "namespace", name: "crm", tools: [fn("lookup")] }],
    upstream: sse(
      toolChunk({ id: "call_ns", name: "crm__", arguments: "" }),
      toolChunk({ name: "lookup", arguments: "" }),
      toolChunk({ arguments: "{\"id\":\"7\"}" }),
      finishChunks("tool_calls")
    ),
    expected: [["function_call", "crm", "lookup", "{\"id\":\"7\"}"]]
  },
  {
    what: "a custom tool run_ + sql",
    tools: [{ type: "custom", name: "run_sql", description: "runs SQL" }],
    upstream: sse(
      toolChunk({ id: "call_c", name: "run_", arguments: "" }),
      toolChunk({ name: "sql", arguments: "" }),
      toolChunk({ arguments: "{\"input\":\"select 1\"}" }),
      finishChunks("tool_calls")
    ),
    expected: [["custom_tool_call", undefined, "run_sql", "select 1"]]
  },
  {
    what: "the client-run apply_patch, apply_ + patch",
    tools: [{ type: "apply_patch" }],
    upstream: sse(
      toolChunk({ id: "call_p", name: "apply_", arguments: "" }),
      toolChunk({ name: "patch", arguments: "" }),
      toolChunk({ arguments: APPLY_PATCH_ARGS }),
      finishChunks("tool_calls")
    ),
    expected: [["apply_patch_call", undefined, undefined, undefined]]
  }
]

const summary = (item: Json): ReadonlyArray<unknown> => [item.type, item.namespace, item.name, item.arguments ?? item.input]

describe("a tool call whose name the upstream streams in pieces", () => {
  for (const { expected, tools, upstream, what } of CASES) {
    it.effect(`${what}: output_item.added carries the whole name, and the SDK's accumulator gives response.completed`, () =>
      withScriptedGateway([upstream, upstream], {}, (url) =>
        Effect.gen(function*() {
          // the raw stream: every call's `output_item.added` names it as the terminal response does
          const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", tools, stream: true })
          expect(streamed.status, streamed.text).toBe(200)
          const frames = parseSse(streamed.text)
          const terminal = checkLifecycle(frames)
          const output = terminal.output as ReadonlyArray<Json>
          expect(output.map(summary)).toEqual(expected)
          const added = frames.filter((frame) => frame.data.type === "response.output_item.added")
            .map((frame) => frame.data.item as Json)
          for (const item of added) {
            const done = output.find((candidate) => candidate.id === item.id)!
            expect([item.namespace, item.name]).toEqual([done.namespace, done.name])
          }

          // the official SDK: the accumulated events equal the terminal response
          const sdk = yield* Effect.promise(async () => {
            const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
            const stream = client.responses.stream({ model: "m", input: "hi", tools: tools as Array<OpenAI.Responses.Tool> })
            const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
            stream.on("event", (event) => events.push(event))
            await stream.finalResponse()
            let snapshot: OpenAI.Responses.Response | undefined
            for (const event of events.slice(0, -1)) snapshot = accumulateResponse(event, snapshot)
            const last = events[events.length - 1]!
            return { accumulated: snapshot!, completed: last.type === "response.completed" ? last.response : undefined }
          })
          expect(sdk.completed).toBeDefined()
          expect(sdk.accumulated.output).toEqual(sdk.completed?.output)
        })))
  }
})
