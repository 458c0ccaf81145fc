/**
 * Two upstream tool calls of one response with the same id (`dup` at index 0 and 1: OpenAI never sends
 * that, a local server may) come back with call ids unique within the response, as the API's are: the
 * first `dup`, the later `dup_2`, in `output_item.added`, `.done` and the terminal response alike. The client
 * sends them back as they are, and they go upstream so on the next turn: each output paired with its own call.
 * Before, both came back as `dup`, and their outputs could not be told apart.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator.js"
import { completion, finishChunks, type Handler, sse, toolChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, parseSse, post, type WireJson as Json } from "./utils.js"

const TOOLS = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }]

const twoCalls: Handler = (request, response, body) =>
  body.stream === true
    ? sse(
      toolChunk({ index: 0, id: "dup", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }),
      toolChunk({ index: 1, id: "dup", name: "get_weather", arguments: "{\"city\":\"Rome\"}" }),
      finishChunks("tool_calls")
    )(request, response, body)
    : completion({
      content: null,
      tool_calls: [
        { id: "dup", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
        { id: "dup", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Rome\"}" } }
      ]
    }, "tool_calls")(request, response, body)

const callIds = (output: ReadonlyArray<unknown>) => (output as ReadonlyArray<Json>).map((item) => item.call_id)

describe("two upstream tool calls with one id", () => {
  it.effect("the later gets <id>_2, streamed (every event) and whole, and the SDK's accumulated events agree; the next turn sends them upstream as the client has them", () =>
    withScriptedGateway([twoCalls, twoCalls, twoCalls, completion({ content: "Sunny both." })], {}, (url, received) =>
      Effect.gen(function*() {
        const streamed = yield* post(`${url}/responses`, { model: "m", input: "weather?", tools: TOOLS, stream: true })
        const frames = parseSse(streamed.text)
        const terminal = checkLifecycle(frames)
        expect(callIds(terminal.output as ReadonlyArray<unknown>)).toEqual(["dup", "dup_2"])
        for (const type of ["response.output_item.added", "response.output_item.done"]) {
          expect(frames.filter((frame) => frame.data.type === type).map((frame) => (frame.data.item as Json).call_id)).toEqual(["dup", "dup_2"])
        }

        const whole = yield* post(`${url}/responses`, { model: "m", input: "weather?", tools: TOOLS })
        expect(callIds((JSON.parse(whole.text) as Json).output as ReadonlyArray<unknown>)).toEqual(["dup", "dup_2"])

        const sdk = yield* Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const stream = client.responses.stream({ model: "m", input: "weather?", tools: TOOLS })
          let snapshot: OpenAI.Responses.Response | undefined
          stream.on("event", (event) => {
            if (event.type !== "response.completed") snapshot = accumulateResponse(event, snapshot)
          })
          const final = await stream.finalResponse()
          return { final, snapshot: snapshot! }
        })
        expect(callIds(sdk.final.output)).toEqual(["dup", "dup_2"])
        expect(callIds(sdk.snapshot.output)).toEqual(["dup", "dup_2"])

        // the next turn: the calls and their outputs as the client has them
        const input = [
          { role: "user", content: "weather?" },
          ...(JSON.parse(whole.text) as Json).output as ReadonlyArray<Json>,
          { type: "function_call_output", call_id: "dup", output: "Paris: sunny" },
          { type: "function_call_output", call_id: "dup_2", output: "Rome: sunny" }
        ]
        const next = yield* post(`${url}/responses`, { model: "m", input, tools: TOOLS })
        expect(next.status, next.text).toBe(200)
        const messages = (received[3]!.body as Json).messages as ReadonlyArray<Json>
        expect((messages[1]!.tool_calls as ReadonlyArray<Json>).map((call) => call.id)).toEqual(["dup", "dup_2"])
        expect(messages.slice(2).map((message) => [message.role, message.tool_call_id, message.content])).toEqual([
          ["tool", "dup", "Paris: sunny"],
          ["tool", "dup_2", "Rome: sunny"]
        ])
      })))
})
