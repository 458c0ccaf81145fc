/**
 * An upstream function call whose arguments are JSON whitespace alone (`"  "`, `"\n"`, in one delta or
 * several) reaches the client as `"{}"`, as one with empty arguments does: the official `openai` SDK parses
 * a strict tool's arguments in `finalResponse()` (`JSON.parse`), which throws on whitespace as on `""`.
 * The streamed deltas, the `.done` event, `response.output_item.done` and the terminal response agree:
 * accumulating every event before `response.completed` (the SDK's `accumulateResponse`) gives its `output`.
 * Arguments with whitespace around JSON are kept as they came.
 *
 * On the recorded `pai-chat-gpt4omini-tool-call-deltas-usage.sse` (gpt-4o-mini's `get_capital` call, its
 * arguments in five deltas), with those deltas changed, through the gateway to a scripted loopback upstream.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator.js"
import { completion, type Handler } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, parseSse, post, readFixture, type WireJson as Json } from "./utils.js"

const RECORDING = "chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse"

/** The recording with its argument deltas (after the first chunk's `""`) replaced by `deltas`. */
const withArguments = (deltas: ReadonlyArray<string>): string => {
  const blocks = readFixture(RECORDING).split("\n\n").filter((block) => block.trim() !== "")
  const isDelta = (block: string) => block.includes("\"arguments\"") && !block.includes("\"name\"")
  const first = blocks.findIndex(isDelta)
  const template = JSON.parse(blocks[first]!.slice("data: ".length))
  const frames = deltas.map((delta) => {
    const chunk = structuredClone(template)
    chunk.choices[0].delta.tool_calls[0].function.arguments = delta
    return `data: ${JSON.stringify(chunk)}`
  })
  return [...blocks.slice(0, first), ...frames, ...blocks.filter((block, index) => index > first && !isDelta(block))]
    .map((block) => `${block}\n\n`).join("")
}

/**
 * The recorded call with argument `deltas`: streamed (the changed recording) when the request asks for a
 * stream, else a whole completion of the call with the deltas joined.
 */
const answer = (deltas: ReadonlyArray<string>): Handler => (request, response, body) => {
  if (body.stream === true) {
    response.writeHead(200, { "content-type": "text/event-stream" })
    response.end(withArguments(deltas))
    return
  }
  completion({
    content: null,
    tool_calls: [{ id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", type: "function", function: { name: "get_capital", arguments: deltas.join("") } }]
  }, "tool_calls")(request, response, body)
}

/** The recorded call's tool, strict: the SDK parses its arguments. */
const TOOLS = [{
  type: "function" as const,
  name: "get_capital",
  parameters: { type: "object", properties: { country: { type: "string" } }, required: ["country"], additionalProperties: false },
  strict: true
}]

const CASES: ReadonlyArray<{ readonly what: string; readonly deltas: ReadonlyArray<string>; readonly expected: string }> = [
  { what: "two spaces", deltas: ["  "], expected: "{}" },
  { what: "a line feed", deltas: ["\n"], expected: "{}" },
  { what: "whitespace in five deltas", deltas: [" ", "\n", "", "\t", "\r\n"], expected: "{}" },
  { what: "whitespace, then the recorded JSON", deltas: [" ", "\n", "{\"", "country", "\":\"", "UK", "\"}"], expected: " \n{\"country\":\"UK\"}" }
]

describe("an upstream call whose arguments are whitespace alone", () => {
  for (const { deltas, expected, what } of CASES) {
    it.effect(`${what}: the client gets ${JSON.stringify(expected)}, streamed and whole, and the SDK parses it`, () =>
      withScriptedGateway([answer(deltas), answer(deltas), answer(deltas)], {}, (url) =>
        Effect.gen(function*() {
          // the raw stream: deltas add up to the `.done` arguments, which the done item and the terminal output hold
          const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", tools: TOOLS, stream: true })
          const frames = parseSse(streamed.text)
          const terminal = checkLifecycle(frames)
          const output = terminal.output as ReadonlyArray<Json>
          expect(output).toHaveLength(1)
          expect(output[0]).toMatchObject({ type: "function_call", name: "get_capital", arguments: expected })
          const deltaText = frames.filter((frame) => frame.data.type === "response.function_call_arguments.delta")
            .map((frame) => frame.data.delta).join("")
          expect(deltaText).toBe(expected)

          // the official SDK: finalResponse() parses the strict tool's arguments; the accumulated events equal
          // the terminal response's output
          const sdk = yield* Effect.promise(async () => {
            const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
            const stream = client.responses.stream({ model: "m", input: "hi", tools: TOOLS })
            const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
            stream.on("event", (event) => events.push(event))
            const final = await stream.finalResponse()
            let snapshot: OpenAI.Responses.Response | undefined
            for (const event of events.slice(0, -1)) snapshot = accumulateResponse(event, snapshot)
            const last = events[events.length - 1]!
            return { final, accumulated: snapshot!, completed: last.type === "response.completed" ? last.response : undefined }
          })
          expect(sdk.final.output[0]).toMatchObject({ type: "function_call", arguments: expected })
          expect(sdk.accumulated.output).toEqual(sdk.completed?.output)

          // not streamed: the same arguments
          const whole = yield* post(`${url}/responses`, { model: "m", input: "hi", tools: TOOLS })
          expect(((JSON.parse(whole.text) as Json).output as ReadonlyArray<Json>)[0]).toMatchObject({ arguments: expected })
        })))
  }
})

describe("a client's function_call whose arguments are whitespace alone", () => {
  it.effect("goes upstream with arguments {}, as one with empty arguments does; JSON with whitespace around it as it is", () => {
    const args = ["", "  ", "\n", " \t\r\n", " {\"country\":\"UK\"}\n"]
    return withScriptedGateway([completion({ content: "London." })], {}, (url, received) =>
      Effect.gen(function*() {
        const input = [
          { role: "user", content: "Capital?" },
          ...args.flatMap((text, index) => [
            { type: "function_call", call_id: `call_${index}`, name: "get_capital", arguments: text },
            { type: "function_call_output", call_id: `call_${index}`, output: "London" }
          ])
        ]
        const answer = yield* post(`${url}/responses`, { model: "m", input, tools: TOOLS })
        expect(answer.status, answer.text).toBe(200)
        const messages = received[0]!.body.messages as ReadonlyArray<Json>
        const sent = messages.flatMap((message) => (message.tool_calls as ReadonlyArray<{ function: { arguments: string } }> | undefined) ?? [])
          .map((call) => call.function.arguments)
        expect(sent).toEqual(["{}", "{}", "{}", "{}", " {\"country\":\"UK\"}\n"])
      }))
  })
})

describe("an upstream call whose arguments are not JSON (finish_reason tool_calls)", () => {
  // kept as the model sent them (every item the model sends is kept), in a completed item: the README says
  // that the SDK's finalResponse() then throws for a strict tool, and how to read such a response
  it.effect("kept as sent, completed, streamed and whole; the SDK's create() returns it, finalResponse() throws (README)", () =>
    withScriptedGateway([answer(["{\"country\": \"U"]), answer(["{\"country\": \"U"]), answer(["{\"country\": \"U"])], {}, (url) =>
      Effect.gen(function*() {
        const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", tools: TOOLS, stream: true })
        const terminal = checkLifecycle(parseSse(streamed.text))
        expect(terminal.status).toBe("completed")
        expect((terminal.output as ReadonlyArray<Json>)[0]).toMatchObject({ arguments: "{\"country\": \"U", status: "completed" })
        const sdk = yield* Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const created = await client.responses.create({ model: "m", input: "hi", tools: TOOLS })
          const thrown = await client.responses.stream({ model: "m", input: "hi", tools: TOOLS }).finalResponse().then(
            () => undefined,
            (error: unknown) => error
          )
          return { created, thrown }
        })
        expect(sdk.created.output[0]).toMatchObject({ type: "function_call", arguments: "{\"country\": \"U" })
        expect(sdk.thrown).toBeInstanceOf(OpenAI.OpenAIError)
        expect(sdk.thrown).not.toBeInstanceOf(OpenAI.APIError)
      })))
})
