/**
 * DeepSeek's thinking mode behind the stateless gateway with `replayReasoningContent`: after a tool call it
 * refuses a turn whose assistant message lacks its `reasoning_content` (400 "Missing `reasoning_content`
 * field …"). Clients that keep no state send a reasoning item back only with an `encrypted_content`, so a
 * request that asks for one (`include: ["reasoning.encrypted_content"]`) gets the reasoning text in the
 * gateway's own token, and the gateway reads it back: two-step tool loops of the AI SDK's responses model
 * (`@ai-sdk/openai`, driven as `ai`'s `generateText` / `streamText` drive it: `ai` itself is not a
 * dependency here) and of `ToolLoop` over `ResponsesLanguageModel`, streamed and not; the token on the
 * wire; tokens the gateway did not make; and the stored (`item_reference`) path, which sends the text once.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import * as ResponseStoreSqlite from "@effect-responses/server/ResponseStoreSqlite"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { completion, finishChunks, type Handler, reasoningChunk, type Received, sse, textChunk, toolChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, parseSse, post, type WireJson as Json } from "./utils.js"

/** The model's reasoning before its tool call (not ASCII only: the token carries UTF-8). */
const THINKING = "I should call a tool: météo ☀️ 🌧"
const TOKEN = `effect-responses.reasoning.v1.${Buffer.from(THINKING, "utf8").toString("base64url")}`
const ANSWER = "Sunny in Paris."

/**
 * DeepSeek as its thinking mode answers: reasoning then a call of `get_weather`; after the tool's answer,
 * reasoning then text; a request holding an assistant message with tool calls and no `reasoning_content`
 * gets DeepSeek's 400.
 */
const deepseek: Handler = (request, response, body) => {
  const messages = body.messages as ReadonlyArray<Json>
  const bad = messages.findIndex((m) => m.role === "assistant" && m.tool_calls && typeof m.reasoning_content !== "string")
  if (bad >= 0) {
    response.writeHead(400, { "content-type": "application/json" })
    response.end(JSON.stringify({
      error: {
        message: `Missing \`reasoning_content\` field in the assistant message at message index ${bad}.`,
        type: "invalid_request_error",
        param: null,
        code: "invalid_request_error"
      }
    }))
    return
  }
  const stream = body.stream === true
  if (messages.at(-1)?.role === "tool") {
    return (stream
      ? sse(reasoningChunk("Got it."), textChunk(ANSWER), finishChunks())
      : completion({ reasoning_content: "Got it.", content: ANSWER }))(request, response, body)
  }
  const call = { id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }
  return (stream
    ? sse(
      reasoningChunk(THINKING.slice(0, 9)),
      reasoningChunk(THINKING.slice(9)),
      toolChunk({ id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }),
      finishChunks("tool_calls")
    )
    : completion({ reasoning_content: THINKING, content: null, tool_calls: [call] }, "tool_calls"))(request, response, body)
}

const REPLAY = { upstream: { requestOptions: { replayReasoningContent: true } } } as const
const ENCRYPTED = ["reasoning.encrypted_content"]
const WEATHER = {
  type: "function" as const,
  name: "get_weather",
  description: "weather",
  strict: false,
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
}

/** The `reasoning_content` of each assistant message of the last upstream request. */
const replayed = (received: ReadonlyArray<Received>) =>
  (received.at(-1)!.body.messages as ReadonlyArray<Json>).filter((m) => m.role === "assistant").map((m) => m.reasoning_content)

/** The AI SDK's responses model over the gateway at `url`. */
const aiSdkModel = (url: string) => createOpenAI({ baseURL: url, apiKey: "k" }).responses("deepseek-v4")

type AiSdkModel = ReturnType<typeof aiSdkModel>
type AiSdkPrompt = Parameters<AiSdkModel["doGenerate"]>[0]["prompt"]
type AiSdkContent = Awaited<ReturnType<AiSdkModel["doGenerate"]>>["content"]

/** One step's content from `doStream`, assembled as `ai`'s `streamText` does (reasoning and tool calls). */
const streamedContent = async (model: AiSdkModel, options: Parameters<AiSdkModel["doStream"]>[0]) => {
  const { stream } = await model.doStream(options)
  const content: Array<Json> = []
  const reasoning = new Map<string, { type: "reasoning"; text: string; providerMetadata: unknown }>()
  let text = ""
  for await (const part of stream as unknown as AsyncIterable<Json>) {
    if (part.type === "error") throw new Error(`error part: ${JSON.stringify(part.error)}`)
    if (part.type === "reasoning-start") {
      const item = { type: "reasoning" as const, text: "", providerMetadata: part.providerMetadata as unknown }
      reasoning.set(part.id, item)
      content.push(item)
    }
    if (part.type === "reasoning-delta") reasoning.get(part.id)!.text += part.delta
    if (part.type === "reasoning-end" && part.providerMetadata !== undefined) {
      reasoning.get(part.id)!.providerMetadata = part.providerMetadata
    }
    if (part.type === "text-delta") text += part.delta
    if (part.type === "tool-call") content.push(part)
  }
  if (text !== "") content.push({ type: "text", text })
  return content as unknown as AiSdkContent
}

/**
 * A two-step tool loop of the AI SDK's responses model, as `ai` runs one: step 1, the tool run, then step 2
 * with the step's content handed back (`toResponseMessages`: each part's `providerMetadata` as its
 * `providerOptions`, tool inputs parsed) and the tool's result. The final text, and the warnings of step 2.
 */
const aiSdkLoop = async (url: string, stream: boolean, openai: { readonly [key: string]: string | boolean | Array<string> }) => {
  const model = aiSdkModel(url)
  const base = {
    tools: [{ type: "function" as const, name: "get_weather", description: "weather", inputSchema: WEATHER.parameters }],
    providerOptions: { openai }
  }
  const run = (prompt: AiSdkPrompt) =>
    stream ? streamedContent(model, { ...base, prompt }) : model.doGenerate({ ...base, prompt }).then((result) => result.content)
  const prompt: AiSdkPrompt = [{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }]
  const first = await run(prompt)
  const assistant: Array<Json> = []
  const results: Array<Json> = []
  for (const part of first as ReadonlyArray<Json>) {
    if (part.type === "reasoning") assistant.push({ type: "reasoning", text: part.text, providerOptions: part.providerMetadata })
    if (part.type === "tool-call") {
      const input = JSON.parse(part.input)
      const { toolCallId, toolName } = part
      assistant.push({ type: "tool-call", toolCallId, toolName, input, providerOptions: part.providerMetadata })
      results.push({ type: "tool-result", toolCallId, toolName, output: { type: "text", value: `sunny in ${input.city}` } })
    }
  }
  expect(results).toHaveLength(1)
  const second = await run([
    ...prompt,
    { role: "assistant", content: assistant },
    { role: "tool", content: results }
  ] as AiSdkPrompt)
  return (second as ReadonlyArray<Json>).filter((part) => part.type === "text").map((part) => part.text).join("")
}

const GetWeather = Tool.make("get_weather", {
  description: "weather",
  parameters: { city: Schema.String },
  success: Schema.String
})
const Weather = Toolkit.make(GetWeather)
const WeatherLive = Weather.toLayer({ get_weather: ({ city }) => Effect.succeed(`sunny in ${city}`) })

/** `ToolLoop` over `ResponsesLanguageModel` (its defaults: `store: false`, the `include`) at `url`. */
const toolLoop = (url: string, stream: boolean) => {
  const prompt = Prompt.user("Weather in Paris?")
  const provide = <A, E, R>(loop: Effect.Effect<A, E, R>) =>
    loop.pipe(
      Effect.provide(WeatherLive),
      Effect.provide(ResponsesLanguageModel.layer({ model: "deepseek-v4" })),
      Effect.provide(ResponsesClient.layer({ baseUrl: url, retry: { times: 0 } })),
      Effect.provide(NodeHttpClient.layerUndici)
    )
  return stream
    ? provide(ToolLoop.stream(prompt, { toolkit: Weather }).pipe(
      Stream.runCollect,
      Effect.map((events) => {
        const last = Array.from(events).at(-1)!
        return last.type === "loop_finished" ? last.finalText : ""
      })
    ))
    : provide(Effect.map(ToolLoop.generate(prompt, { toolkit: Weather }), (result) => result.text))
}

describe("reasoning handed back through the stateless gateway (replayReasoningContent)", () => {
  for (const stream of [true, false]) {
    it.effect(`with the include, the ${stream ? "streamed" : "whole"} reasoning item carries the text in encrypted_content`, () =>
      withScriptedGateway([deepseek], REPLAY, (url) =>
        Effect.gen(function*() {
          const request = { model: "deepseek-v4", input: "Weather in Paris?", tools: [WEATHER], stream, store: false }
          const responseOf = (text: string): Json => stream ? checkLifecycle(parseSse(text)) : JSON.parse(text)
          const asked = yield* post(`${url}/responses`, { ...request, include: ENCRYPTED })
          expect(asked.status, asked.text).toBe(200)
          const reasoning = responseOf(asked.text).output[0]
          expect(reasoning).toMatchObject({
            type: "reasoning",
            summary: [{ type: "summary_text", text: THINKING }],
            encrypted_content: TOKEN
          })
          if (stream) {
            const done = parseSse(asked.text).map((frame) => frame.data as Json).filter((data) =>
              data.type === "response.output_item.done" && data.item.type === "reasoning"
            )
            expect(done.map((data) => data.item)).toEqual([reasoning])
          }
          const silent = yield* post(`${url}/responses`, request)
          expect(responseOf(silent.text).output[0].summary[0].text).toBe(THINKING)
          expect(responseOf(silent.text).output[0]).not.toHaveProperty("encrypted_content")
        })))
  }

  it.effect("the openai SDK's stream accumulator keeps the token, and a turn that sends the output back is answered", () =>
    withScriptedGateway([deepseek], REPLAY, (url, received) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const input: Array<OpenAI.Responses.ResponseInputItem> = [{ role: "user", content: "Weather in Paris?" }]
        const base = { model: "deepseek-v4", tools: [WEATHER], store: false, include: ["reasoning.encrypted_content" as const] }
        const first = await client.responses.stream({ ...base, input }).finalResponse()
        expect(first.output[0]).toMatchObject({ type: "reasoning", encrypted_content: TOKEN })
        const call = first.output.find((item) => item.type === "function_call")!
        const second = await client.responses.create({
          ...base,
          input: [...input, ...first.output as Array<OpenAI.Responses.ResponseInputItem>, {
            type: "function_call_output",
            call_id: call.call_id,
            output: "sunny"
          }]
        })
        expect(second.output_text).toBe(ANSWER)
        expect(replayed(received)).toEqual([THINKING])
      })))

  it.effect("a reasoning item holding only the gateway's token replays its text; other encrypted_content as before", () =>
    withScriptedGateway([completion({ content: "ok" })], REPLAY, (url, received) =>
      Effect.gen(function*() {
        const turn = (reasoning: Json) =>
          post(`${url}/responses`, {
            model: "deepseek-v4",
            tools: [WEATHER],
            input: [
              { role: "user", content: "Weather in Paris?" },
              { type: "reasoning", id: "rs_1", ...reasoning },
              { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
              { type: "function_call_output", call_id: "call_1", output: "sunny" }
            ]
          })
        const cases: ReadonlyArray<readonly [Json, string | undefined]> = [
          // the token alone (a client that keeps no summary), and beside the summary (no doubling)
          [{ summary: [], encrypted_content: TOKEN }, THINKING],
          [{ summary: [{ type: "summary_text", text: THINKING }], encrypted_content: TOKEN }, THINKING],
          // OpenAI's encrypted reasoning: the summary, as before
          [{ summary: [{ type: "summary_text", text: "sum" }], encrypted_content: "gAAAAABpPDIVOKrsHNZ0Gws" }, "sum"],
          // the prefix over something the gateway did not write (not canonical base64url; not UTF-8): dropped
          [{ summary: [], encrypted_content: "effect-responses.reasoning.v1.SGk=" }, undefined],
          [{ summary: [], encrypted_content: "effect-responses.reasoning.v1._w" }, undefined],
          [{ summary: [], encrypted_content: "effect-responses.reasoning.v1." }, undefined]
        ]
        for (const [reasoning, expected] of cases) {
          const answer = yield* turn(reasoning)
          expect(answer.status, answer.text).toBe(200)
          expect(replayed(received), JSON.stringify(reasoning)).toEqual([expected])
        }
      })))

  for (const stream of [false, true]) {
    it.effect(`AI SDK (${stream ? "doStream" : "doGenerate"}), store: false with the include: step 2 is answered`, () =>
      withScriptedGateway([deepseek], REPLAY, (url, received) =>
        Effect.promise(async () => {
          const text = await aiSdkLoop(url, stream, { store: false, include: ENCRYPTED })
          expect(text).toBe(ANSWER)
          expect(received).toHaveLength(2)
          expect(replayed(received)).toEqual([THINKING])
        })))

    it.effect(`ToolLoop.${stream ? "stream" : "generate"} over ResponsesLanguageModel: step 2 is answered`, () =>
      withScriptedGateway([deepseek], REPLAY, (url, received) =>
        Effect.gen(function*() {
          expect(yield* toolLoop(url, stream)).toBe(ANSWER)
          expect(received).toHaveLength(2)
          expect(replayed(received)).toEqual([THINKING])
        })))
  }

  it.effect("the AI SDK's default (store unset: an item_reference to the reasoning) needs a store, which sends the text once", () =>
    Effect.gen(function*() {
      const refused = yield* withScriptedGateway([deepseek], REPLAY, (url) =>
        Effect.promise(() => aiSdkLoop(url, false, {}).then(() => undefined, (error: unknown) => error)))
      expect(String(refused)).toContain("Missing `reasoning_content`")
      const filename = join(mkdtempSync(join(tmpdir(), "effect-responses-reasoning-")), "responses.db")
      for (const openai of [{}, { store: true, include: ENCRYPTED }]) {
        yield* withScriptedGateway([deepseek], { ...REPLAY, store: ResponseStoreSqlite.layer({ filename }) }, (url, received) =>
          Effect.promise(async () => {
            expect(await aiSdkLoop(url, true, openai)).toBe(ANSWER)
            expect(replayed(received), JSON.stringify(openai)).toEqual([THINKING])
          }))
      }
    }))
})
