/**
 * A tool call cut off by a broken upstream stream, through the gateway to real clients: the scripted Chat
 * Completions upstream (`ScriptedServer` of `@effect-responses/testing`) sends part of a call's arguments
 * and ends its stream with no `finish_reason` and no `[DONE]` (or its connection breaks). The gateway
 * answers `response.failed`; the call gets its argument deltas and nothing that closes it (no `.done`, no
 * `response.output_item.done`, not in the failed response's `output`), so that no client runs it: the
 * `openai` SDK's `.done` listeners, the AI SDK's `tool-call` part (which `streamText` runs tools on), the
 * Agents SDK's run (which runs the calls of a terminal response's `output`, the failed one's too).
 */
import { createOpenAI } from "@ai-sdk/openai"
import { AiError, LanguageModel, Part, Prompt, StreamPart } from "@effect-responses/core"
import { MessageAggregator } from "@effect-responses/aggregate"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Upstream } from "@effect-responses/server"
import { describe, expect, it } from "@effect/vitest"
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import OpenAI, { APIError } from "openai"
import { z } from "zod"
import { type Handler, sse, textChunk, toolChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, type Frame, parseSse, post, readFixture, scriptedModel, withGateway, type WireJson as Json } from "./utils.js"

setTracingDisabled(true)

/** `get_weather({"city":"Pa` and the end of the stream: no finish_reason, no `[DONE]`. */
const CUT_ARGUMENTS = "{\"city\":\"Pa"
/** The custom tool `exec` (offered upstream as a function of one string `input`), its input cut off. */
const CUT_INPUT = "{\"input\":\"rm -rf /tmp/build"

const weather = { type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }
const exec = { type: "custom", name: "exec", description: "runs a shell command line" }

/** Ends its stream after the call's first arguments, as the tester's upstream did. */
const ended = (name: string, args: string): Handler => sse(toolChunk({ index: 0, id: "call_1", name, arguments: args }))

/** Breaks its connection after the call's first arguments. */
const broken = (name: string, args: string): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.write(toolChunk({ index: 0, id: "call_1", name, arguments: args }), () => setTimeout(() => response.socket?.destroy(), 50))
}

const cases = [
  { what: "a function call", tool: weather, name: "get_weather", args: CUT_ARGUMENTS, itemType: "function_call", arrived: CUT_ARGUMENTS },
  { what: "a custom tool call", tool: exec, name: "exec", args: CUT_INPUT, itemType: "custom_tool_call", arrived: "rm -rf /tmp/build" }
] as const

/** The events that close an item (or a part of one): none may name the cut call. */
const closing = (frames: ReadonlyArray<Frame>) =>
  frames.filter((frame) => frame.data.type.endsWith(".done")).map((frame) => frame.data.type)

/** What the deltas of the call gave. */
const streamed = (frames: ReadonlyArray<Frame>) =>
  frames
    .filter((frame) =>
      frame.data.type === "response.function_call_arguments.delta" || frame.data.type === "response.custom_tool_call_input.delta"
    )
    .map((frame) => frame.data.delta as string)
    .join("")

describe("a tool call cut off by a broken upstream stream, through the gateway", () => {
  for (const c of cases) {
    for (const [how, handler] of [["the stream ends", ended], ["the connection breaks", broken]] as const) {
      it.effect(`${c.what} (${how}): its deltas, no .done, no output_item.done, response.failed with no output`, () =>
        withScriptedGateway([handler(c.name, c.args)], {}, (url) =>
          Effect.gen(function*() {
            const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools: [c.tool] })
            const frames = parseSse(answer.text)
            const response = checkLifecycle(frames)
            expect(response.status).toBe("failed")
            expect(frames.find((frame) => frame.data.type === "response.output_item.added")?.data.item).toMatchObject({ type: c.itemType })
            expect(streamed(frames)).toBe(c.arrived)
            expect(closing(frames)).toEqual([])
            expect(response.output).toEqual([])
          })))
    }
  }

  it.effect("text before the cut call is finished (it stays in the failed output); the call is not", () =>
    withScriptedGateway([sse(textChunk("Let me check. "), toolChunk({ index: 0, id: "call_1", name: "get_weather", arguments: CUT_ARGUMENTS }))], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools: [weather] })
        const frames = parseSse(answer.text)
        const response = checkLifecycle(frames)
        expect(response.status).toBe("failed")
        expect(response.output).toMatchObject([{ type: "message", status: "completed", content: [{ text: "Let me check. " }] }])
        expect(frames.filter((frame) => frame.data.type === "response.output_item.done")).toHaveLength(1)
        expect(closing(frames)).not.toContain("response.function_call_arguments.done")
      })))

  for (const c of cases) {
    it.effect(`openai SDK, responses.stream(): ${c.what} cut off fires no .done listener; finalResponse() throws the error event's APIError`, () =>
      withScriptedGateway([ended(c.name, c.args)], {}, (url) =>
        Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const stream = client.responses.stream({ model: "m", input: "hi", tools: [c.tool] as Array<OpenAI.Responses.Tool> })
          const done: Array<string> = []
          stream.on("response.function_call_arguments.done", (event) => done.push(`arguments.done ${event.arguments}`))
          stream.on("response.custom_tool_call_input.done", (event) => done.push(`input.done ${event.input}`))
          stream.on("response.output_item.done", (event) => done.push(`output_item.done ${event.item.type}`))
          const final = await stream.finalResponse().then((response) => response, (error: unknown) => error)
          expect(done).toEqual([])
          // the `error` event before `response.failed` (as OpenAI sends them) stops the stream with an APIError
          expect(final).toBeInstanceOf(APIError)
          expect((final as APIError).message).toContain("the upstream failed: truncated stream")
        })))
  }

  for (const c of cases) {
    it.effect(`AI SDK (@ai-sdk/openai responses model), doStream: ${c.what} cut off gives no tool-call part, an error part and finish "error"`, () =>
      withScriptedGateway([ended(c.name, c.args)], {}, (url) =>
        Effect.promise(async () => {
          const model = createOpenAI({ baseURL: url, apiKey: "k" }).responses("m")
          const tools = c.tool.type === "function"
            ? [{ type: "function" as const, name: "get_weather", inputSchema: weather.parameters as never }]
            : [{ type: "provider" as const, id: "openai.custom" as const, name: "exec", args: { name: "exec", description: exec.description } }]
          const { stream } = await model.doStream({ prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }], tools })
          const parts: Array<Json> = []
          for await (const part of stream as unknown as AsyncIterable<Json>) parts.push(part)
          const types = parts.map((part) => part.type)
          expect(types).not.toContain("tool-call")
          expect(types).not.toContain("tool-input-end")
          expect(types).toContain("error")
          expect(parts.find((part) => part.type === "finish")?.finishReason).toMatchObject({ unified: "error" })
        })))
  }

  // arguments that parse (the stream ends before the call's finish_reason) as well as cut JSON: the Agents SDK
  // would run the former from the failed response's `output`
  for (const args of [CUT_ARGUMENTS, "{\"city\":\"Paris\"}"]) {
    it.effect(`@openai/agents, a streamed run: a function call whose stream ends after ${args} is not run, the run fails`, () =>
      withScriptedGateway([ended("get_weather", args)], {}, (url, received) =>
        Effect.promise(async () => {
          const calls: Array<string> = []
          const agent = new Agent({
            name: "weather",
            instructions: "Answer with the weather.",
            model: new OpenAIResponsesModel(new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }), "m"),
            tools: [tool({
              name: "get_weather",
              description: "The weather in a city.",
              parameters: z.object({ city: z.string() }),
              execute: async ({ city }) => {
                calls.push(city)
                return `Sunny in ${city}`
              }
            })]
          })
          const outcome = await (async () => {
            const result = await run(agent, "Weather in Paris?", { stream: true, maxTurns: 2 })
            await result.completed
            return result.error ?? result.finalOutput
          })().then((value) => value, (error: unknown) => error)
          expect(calls).toEqual([])
          expect(outcome).toBeInstanceOf(Error)
          expect(received.length).toBeGreaterThanOrEqual(1)
        })))
  }
})

/**
 * A finished item that waits behind an unfinished one when the response fails: the upstream (any
 * `LanguageModel`) completed the call at output index 1, but the one at index 0 never finished, either
 * unwritten (its name, `get`, could still grow into the custom tool `get_file`'s) or being written (its
 * deltas went out). The finished call is written whole and is in the failed response's `output`.
 */
describe("a finished item waiting behind an unfinished one at response.failed", () => {
  const id = "resp_up"
  const delta = (outputIndex: number, part: Part.AssistantPart) => new StreamPart.PartUpdate({ responseId: id, outputIndex, partial: true, part })
  const complete = (outputIndex: number, part: Part.AssistantPart) => new StreamPart.PartUpdate({ responseId: id, outputIndex, partial: false, part })
  const call = (callId: string, name: string, args: string) => new Part.ToolCallPart({ callId, name, arguments: args })
  const broke = new AiError.TransportError({ description: "Transport: socket hang up", url: "http://upstream.invalid/v1" })
  const lookup = { type: "function", name: "lookup", parameters: { type: "object", properties: { id: { type: "string" } } } }
  const get = { type: "function", name: "get", parameters: { type: "object", properties: { path: { type: "string" } } } }
  const getFile = { type: "custom", name: "get_file", description: "reads a file" }
  const tools = [get, getFile, lookup]
  /** The upstream: `first` (the unfinished call at index 0), then `lookup` complete at index 1, then the stream breaks. */
  const upstream = (first: string) =>
    Upstream.fromLanguageModel({ models: ["m"] }).pipe(Layer.provide(
      scriptedModel({
        stream: Stream.concat(
          Stream.make(
            new StreamPart.ResponseStarted({ responseId: id, model: "m" }),
            delta(0, call("call_0", first, "{\"path\":\"/et")),
            delta(1, call("call_1", "lookup", "{\"id\":")),
            delta(1, call("call_1", "lookup", "\"7\"}")),
            complete(1, call("call_1", "lookup", ""))
          ),
          Stream.fail(broke)
        )
      }).layer
    ))
  const cases = [
    { what: "unwritten (its name may still grow)", first: "get", firstWritten: false },
    { what: "being written (its deltas went out)", first: "get_weather", firstWritten: true }
  ] as const

  for (const c of cases) {
    it.effect(`the unfinished call ${c.what}: the finished call is written whole and is in output; the unfinished one gets no .done`, () =>
      withGateway(upstream(c.first), {}, (url) =>
        Effect.gen(function*() {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools: [...tools, { ...get, name: "get_weather" }] })
          const frames = parseSse(answer.text)
          const response = checkLifecycle(frames)
          expect(response.status).toBe("failed")
          expect(response.output).toMatchObject([{ type: "function_call", call_id: "call_1", name: "lookup", arguments: "{\"id\":\"7\"}", status: "completed" }])
          const added = frames.filter((frame) => frame.data.type === "response.output_item.added")
          expect(added.map((frame) => [(frame.data.item as Json).call_id, frame.data.output_index])).toEqual(
            c.firstWritten ? [["call_0", 0], ["call_1", 1]] : [["call_1", 0]]
          )
          const done = frames.filter((frame) => frame.data.type === "response.function_call_arguments.done")
          expect(done.map((frame) => frame.data.arguments)).toEqual(["{\"id\":\"7\"}"])
          expect(frames.filter((frame) => frame.data.type === "response.output_item.done").map((frame) => (frame.data.item as Json).call_id))
            .toEqual(["call_1"])
        })))

    it.effect(`openai SDK, responses.stream(): the unfinished call ${c.what}: the finished call's .done fires, then finalResponse() throws the error event's APIError`, () =>
      withGateway(upstream(c.first), {}, (url) =>
        Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const stream = client.responses.stream({ model: "m", input: "hi", tools: [...tools, { ...get, name: "get_weather" }] as Array<OpenAI.Responses.Tool> })
          const done: Array<string> = []
          stream.on("response.function_call_arguments.done", (event) => done.push(`arguments.done ${event.arguments}`))
          stream.on("response.output_item.done", (event) => done.push(`output_item.done ${event.output_index}`))
          const final = await stream.finalResponse().then((response) => response, (error: unknown) => error)
          expect(done).toEqual(["arguments.done {\"id\":\"7\"}", `output_item.done ${c.firstWritten ? 1 : 0}`])
          expect(final).toBeInstanceOf(APIError)
        })))

    it.effect(`AI SDK (@ai-sdk/openai responses model), doStream: the unfinished call ${c.what}: a tool-call part for the finished call only`, () =>
      withGateway(upstream(c.first), {}, (url) =>
        Effect.promise(async () => {
          const model = createOpenAI({ baseURL: url, apiKey: "k" }).responses("m")
          const { stream } = await model.doStream({
            prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
            tools: [lookup, get, { ...get, name: "get_weather" }].map((tool) => ({
              type: "function" as const,
              name: tool.name,
              inputSchema: tool.parameters as never
            }))
          })
          const parts: Array<Json> = []
          for await (const part of stream as unknown as AsyncIterable<Json>) parts.push(part)
          expect(parts.filter((part) => part.type === "tool-call").map((part) => [part.toolCallId, part.toolName, part.input])).toEqual([
            ["call_1", "lookup", "{\"id\":\"7\"}"]
          ])
          expect(parts.find((part) => part.type === "finish")?.finishReason).toMatchObject({ unified: "error" })
        })))
  }
})

/**
 * A tool call cut by the output limit: the recorded `pai-chat-gpt4omini-tool-call-deltas-usage.sse` (gpt-4o-mini
 * calling `get_capital`) after its fourth chunk (`{"country":"`), then its finish chunk with `finish_reason:
 * "length"` in place of `tool_calls`, its usage chunk and `[DONE]`. The upstream finished, so the gateway keeps
 * the API's shape for a response that reached `max_output_tokens` mid-call (the AI SDK's Responses model
 * accepts a cut call's `output_item.done` with status `incomplete` or `in_progress` since OpenAI sends it so):
 * the call gets `function_call_arguments.done` and `output_item.done` with the arguments so far and status
 * `incomplete`, and the response ends with `response.incomplete`, `incomplete_details.reason:
 * "max_output_tokens"`. A client tells the cut call by that status (`ToolLoop` runs no such call).
 */
describe("a tool call cut by max_output_tokens (finish_reason length), through the gateway", () => {
  const blocks = readFixture("chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse").split("\n\n").filter((block) => block.trim() !== "")
  const finishAt = blocks.findIndex((block) => block.includes("\"finish_reason\":\"tool_calls\""))
  const cut = [...blocks.slice(0, 4), blocks[finishAt]!.replace("\"finish_reason\":\"tool_calls\"", "\"finish_reason\":\"length\""), ...blocks.slice(finishAt + 1)]
    .map((block) => `${block}\n\n`)
  const capital = { type: "function", name: "get_capital", parameters: { type: "object", properties: { country: { type: "string" } } } }

  it.effect("raw SSE: the call's arguments.done and output_item.done (status incomplete) with the arguments so far, then response.incomplete", () =>
    withScriptedGateway([sse(...cut)], {}, (url) =>
      Effect.gen(function*() {
        expect(finishAt).toBeGreaterThan(4)
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools: [capital] })
        const frames = parseSse(answer.text)
        const response = checkLifecycle(frames)
        expect(response.status).toBe("incomplete")
        expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" })
        expect(response.output).toMatchObject([{ type: "function_call", name: "get_capital", arguments: "{\"country\":\"", status: "incomplete" }])
        expect(frames.find((frame) => frame.data.type === "response.function_call_arguments.done")?.data.arguments).toBe("{\"country\":\"")
      })))

  it.effect("ResponsesLanguageModel through the gateway: the call part has status incomplete, the response incomplete / max_output_tokens / length", () =>
    withScriptedGateway([sse(...cut)], {}, (url) =>
      Effect.gen(function*() {
        const model = yield* LanguageModel.LanguageModel
        const [response] = yield* MessageAggregator.aggregate(model.stream(Prompt.user("hi")))
        expect([response!.status, response!.incompleteReason, response!.finishReason]).toEqual(["incomplete", "max_output_tokens", "length"])
        expect(response!.message.clientCalls).toMatchObject([
          { type: "tool_call", name: "get_capital", arguments: "{\"country\":\"", attributes: { status: "incomplete" } }
        ])
      }).pipe(
        Effect.provide(ResponsesLanguageModel.layer({ model: "m" })),
        Effect.provide(ResponsesClient.layer({ baseUrl: url, retry: { times: 0 } })),
        Effect.provide(NodeHttpClient.layerUndici)
      )))
})
