/**
 * Proof with real clients: the gateway over the Chat Completions model, against a loopback Chat
 * Completions server replaying recordings of `fixtures/chat-sse/` (openai-python, Apache-2.0;
 * pydantic-ai, MIT: see `SOURCES.md`). Clients: the official `openai` SDK, `@openai/agents`, this project's
 * `ResponsesLanguageModel`, and raw `fetch` (every streamed body passes `checkLifecycle`).
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { ChatCapture, ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { LanguageModel, type ModelResponse, Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { Gateway, Upstream } from "@effect-responses/server"
import { ChatReplayServer } from "@effect-responses/testing"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import OpenAI from "openai"
import { z } from "zod"
import { checkLifecycle, type Frame, loopback, parseSse, post, readFixture, serverUrl, type WireJson as Json } from "./utils.js"

setTracingDisabled(true)

const TEXT = "chat-sse/pai-chat-gpt4omini-text-usage.sse"
const TOOL_CALL = "chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse"
const PARALLEL = "chat-sse/opy-chat-gpt4o-parallel-tool-calls.sse"
const REASONING = "chat-sse/pai-chat-deepseek-reasoning-content.sse"
const LENGTH = "chat-sse/opy-chat-gpt4o-finish-length.sse"
const REFUSAL = "chat-sse/opy-chat-gpt4o-refusal-deltas.sse"
const STRICT_TOOL = "chat-sse/opy-chat-gpt4o-strict-tool-call.sse"

/** The replay server for the recordings, in order (one recorded response per request). */
const replayOf = (...fixtures: ReadonlyArray<string>) =>
  Layer.unwrapEffect(
    Effect.map(
      ChatCapture.parse(fixtures.map(readFixture).join("\n"), fixtures.join(" + ")),
      (capture) => ChatReplayServer.layer({ capture })
    ).pipe(Effect.orDie)
  ).pipe(Layer.provide(Layer.fresh(loopback)))

const chatUpstream = Layer.unwrapEffect(
  Effect.map(ChatReplayServer.ChatReplayServer, (replay) => Upstream.chatCompletions({ baseUrl: replay.baseUrl, retry: { times: 0 } }))
).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** Runs `body` with the gateway over a Chat Completions upstream replaying `fixtures`. */
const withChatGateway = <A, E>(
  fixtures: ReadonlyArray<string>,
  body: (baseUrl: string) => Effect.Effect<A, E, ChatReplayServer.ChatReplayServer>
) => withChatReplay(replayOf(...fixtures), body)

/** Runs `body` with the gateway over a Chat Completions upstream replaying the capture `text` (hand-made SSE). */
const withChatGatewayText = <A, E>(
  text: string,
  body: (baseUrl: string) => Effect.Effect<A, E, ChatReplayServer.ChatReplayServer>
) =>
  withChatReplay(
    Layer.unwrapEffect(
      Effect.map(ChatCapture.parse(text, "hand-made"), (capture) => ChatReplayServer.layer({ capture })).pipe(Effect.orDie)
    ).pipe(Layer.provide(Layer.fresh(loopback))),
    body
  )

const withChatReplay = <A, E>(
  replay: Layer.Layer<ChatReplayServer.ChatReplayServer, unknown>,
  body: (baseUrl: string) => Effect.Effect<A, E, ChatReplayServer.ChatReplayServer>
) =>
  Effect.gen(function*() {
    const url = yield* serverUrl
    return yield* body(`${url}/v1`)
  }).pipe(
    Effect.provide(
      Gateway.layer().pipe(
        Layer.provideMerge(chatUpstream),
        Layer.provideMerge(loopback),
        Layer.provideMerge(replay)
      )
    ),
    Effect.scoped
  )

/** A hand-made Chat Completions stream: one chunk per delta, then one with `finishReason`, then `[DONE]`. */
const chatSse = (deltas: ReadonlyArray<Json>, finishReason: string): string =>
  deltas.map((delta) => ({ delta, finish_reason: null as string | null }))
    .concat([{ delta: {}, finish_reason: finishReason }])
    .map(({ delta, finish_reason }) =>
      `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason }] })}\n\n`
    )
    .join("")
    .concat("data: [DONE]\n\n")

/**
 * Reasoning and text taking turns, a tool call, text after it, then reasoning again (`reasoning_content`, then
 * the `reasoning` field vLLM writes), one chunk each: the tester's stream (hand-made, no recording has it).
 */
const INTERLEAVED = chatSse([
  { role: "assistant", reasoning_content: "R1 " },
  { content: "T1 " },
  { reasoning_content: "R2 " },
  { content: "T2 " },
  { tool_calls: [{ index: 0, id: "cA", type: "function", function: { name: "shell_command", arguments: "{\"command\":\"ls\"}" } }] },
  { content: "T3 after call" },
  { reasoning: "R3 via reasoning field" }
], "tool_calls")

/** No lone surrogate (`String.prototype.isWellFormed`, not in this project's lib). */
const wellFormed = (text: string): boolean => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)

const openai = (baseURL: string) => new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 })

const framesOfEvents = (events: ReadonlyArray<{ readonly type: string; readonly sequence_number: number }>): ReadonlyArray<Frame> =>
  events.map((data) => ({ event: data.type, data }))

describe("the gateway over the Chat Completions model (loopback replay upstream)", () => {
  it.effect("raw SSE of every recording passes the event-order check", () =>
    Effect.gen(function*() {
      for (const fixture of [TEXT, TOOL_CALL, PARALLEL, REASONING, LENGTH, REFUSAL, STRICT_TOOL]) {
        const response = yield* withChatGateway([fixture], (url) =>
          Effect.map(post(`${url}/responses`, { model: "gpt-4o-mini", input: "hi", stream: true }), (answer) => {
            expect(answer.status, fixture).toBe(200)
            return checkLifecycle(parseSse(answer.text))
          }))
        expect(response.status, fixture).toBe(fixture === LENGTH ? "incomplete" : "completed")
      }
    }))

  it.effect("openai SDK: responses.create (non-streaming)", () =>
    withChatGateway([TEXT], (url) =>
      Effect.promise(async () => {
        const response = await openai(url).responses.create({ model: "gpt-4o-mini", input: "What is the capital of the UK?" })
        expect(response.output_text).toBe("The capital of the UK is London.")
        expect(response.status).toBe("completed")
        expect(response.model).toBe("gpt-4o-mini-2024-07-18")
        expect(response.usage?.input_tokens).toBeGreaterThan(0)
        expect(response.usage?.input_tokens_details.cached_tokens).toBe(0)
        expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(0)
      })))

  it.effect("openai SDK: responses.stream() and finalResponse(), reasoning_content as a reasoning summary", () =>
    withChatGateway([REASONING], (url) =>
      Effect.promise(async () => {
        const stream = openai(url).responses.stream({ model: "deepseek-reasoner", input: "think" })
        const events: Array<{ type: string; sequence_number: number }> = []
        for await (const event of stream) events.push(event)
        const final = await stream.finalResponse()
        checkLifecycle(framesOfEvents(events))
        expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"])
        const reasoning = final.output[0]
        expect(reasoning?.type === "reasoning" && reasoning.summary[0]!.text.length).toBeGreaterThan(100)
        expect(final.output_text.length).toBeGreaterThan(0)
        expect(events.filter((event) => event.type === "response.reasoning_summary_text.delta").length).toBeGreaterThan(10)
      })))

  it.effect("openai SDK: a full tool round trip (function call -> function_call_output -> final text)", () =>
    withChatGateway([TOOL_CALL, TEXT], (url) =>
      Effect.gen(function*() {
        const client = openai(url)
        const tools = [{
          type: "function" as const,
          name: "get_capital",
          description: "The capital of a country",
          parameters: { type: "object", properties: { country: { type: "string" } }, required: ["country"] },
          strict: false
        }]
        const first = yield* Effect.promise(() =>
          client.responses.create({ model: "gpt-4o-mini", input: "Capital of the UK?", tools, store: false })
        )
        const call = first.output.find((item) => item.type === "function_call")
        expect(call).toBeDefined()
        if (call?.type !== "function_call") return
        expect(call.name).toBe("get_capital")
        const second = yield* Effect.promise(() =>
          client.responses.create({
            model: "gpt-4o-mini",
            tools,
            input: [
              { role: "user", content: "Capital of the UK?" },
              call,
              { type: "function_call_output", call_id: call.call_id, output: "London" }
            ]
          })
        )
        expect(second.output_text).toBe("The capital of the UK is London.")
        const requests = yield* Effect.flatMap(ChatReplayServer.ChatReplayServer, (replay) => replay.requests)
        expect(requests).toHaveLength(2)
        expect(requests[1]!.body.messages).toContainEqual({ role: "tool", tool_call_id: call.call_id, content: "London" })
      })))

  it.effect("@openai/agents: an agent with a function tool runs through the gateway to a final answer", () =>
    withChatGateway([TOOL_CALL, TEXT], (url) =>
      Effect.promise(async () => {
        const calls: Array<string> = []
        const getCapital = tool({
          name: "get_capital",
          description: "The capital of a country",
          parameters: z.object({ country: z.string() }),
          execute: async ({ country }) => {
            calls.push(country)
            return "London"
          }
        })
        const agent = new Agent({
          name: "geography",
          instructions: "Answer with the tool.",
          model: new OpenAIResponsesModel(openai(url), "gpt-4o-mini"),
          tools: [getCapital]
        })
        const result = await run(agent, "What is the capital of the UK?")
        expect(calls).toHaveLength(1)
        expect(result.finalOutput).toBe("The capital of the UK is London.")
      })))

  it.effect("parameters with a Chat Completions field are forwarded; echo-only and unknown ones are not", () =>
    withChatGateway([TEXT], (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, {
          model: "gpt-4o-mini",
          input: "hi",
          safety_identifier: "hashed-user",
          user: "legacy-user",
          prompt_cache_key: "cache-1",
          service_tier: "flex",
          text: { verbosity: "low" },
          metadata: { trace: "t1" },
          max_tool_calls: 2,
          frobnicate: 1
        })
        expect(answer.status, answer.text).toBe(200)
        expect(JSON.parse(answer.text)).toMatchObject({
          user: "legacy-user",
          safety_identifier: "hashed-user",
          prompt_cache_key: "cache-1",
          service_tier: "flex",
          metadata: { trace: "t1" },
          max_tool_calls: 2
        })
        const requests = yield* Effect.flatMap(ChatReplayServer.ChatReplayServer, (replay) => replay.requests)
        const body = requests[0]!.body as Record<string, unknown>
        expect(body).toMatchObject({ user: "hashed-user", prompt_cache_key: "cache-1", service_tier: "flex", verbosity: "low" })
        for (const field of ["metadata", "max_tool_calls", "frobnicate", "safety_identifier"]) expect(body).not.toHaveProperty(field)
      })).pipe(
        Effect.zipRight(withChatGateway([TEXT], (url) =>
          Effect.gen(function*() {
            const legacy = yield* post(`${url}/responses`, { model: "gpt-4o-mini", input: "hi", user: "legacy-user" })
            expect(legacy.status).toBe(200)
            const requests = yield* Effect.flatMap(ChatReplayServer.ChatReplayServer, (replay) => replay.requests)
            expect((requests[0]!.body as Record<string, unknown>).user).toBe("legacy-user")
          })))
      ))

  it.effect("text written after a tool call, then reasoning: the output items follow the upstream's order (raw SSE, the openai SDK's accumulator)", () =>
    Effect.gen(function*() {
      const tools = [{ type: "function" as const, name: "shell_command", parameters: { type: "object", properties: {} }, strict: false }]
      const expected = [
        ["reasoning", "R1 "],
        ["message", "T1 "],
        ["reasoning", "R2 "],
        ["message", "T2 "],
        ["function_call", "{\"command\":\"ls\"}"],
        ["message", "T3 after call"],
        ["reasoning", "R3 via reasoning field"]
      ]
      const shape = (output: ReadonlyArray<Json>) =>
        output.map((item) => [item.type, item.type === "function_call" ? item.arguments : (item.summary ?? item.content)[0].text])
      const streamed = yield* withChatGatewayText(INTERLEAVED, (url) =>
        Effect.map(post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools }), (answer) =>
          checkLifecycle(parseSse(answer.text))))
      expect(shape(streamed.output as ReadonlyArray<Json>)).toEqual(expected)
      const final = yield* withChatGatewayText(INTERLEAVED, (url) =>
        Effect.promise(async () => {
          const stream = openai(url).responses.stream({ model: "m", input: "hi", tools })
          const events: Array<{ type: string; sequence_number: number }> = []
          for await (const event of stream) events.push(event)
          checkLifecycle(framesOfEvents(events))
          return (await stream.finalResponse()).output as ReadonlyArray<Json>
        }))
      expect(shape(final)).toEqual(expected)
    }))

  it.effect("a surrogate pair split across two chunks (\\ud83d, then \\ude00): no delta holds half a pair, the deltas join to the text", () =>
    Effect.gen(function*() {
      const pieces = ["a", "b", "\ud83d", "\ude00 é", "c\ud83d", "\ude01"]
      const whole = pieces.join("")
      const sse = chatSse([{ role: "assistant", reasoning_content: "r\ud83d" }, { reasoning_content: "\ude02" }, ...pieces.map((content) => ({ content }))], "stop")
      const frames = yield* withChatGatewayText(sse, (url) =>
        Effect.map(post(`${url}/responses`, { model: "m", input: "hi", stream: true }), (answer) => parseSse(answer.text)))
      const response = checkLifecycle(frames)
      const deltas = (type: string) => frames.filter((frame) => frame.data.type === type).map((frame) => frame.data.delta as string)
      for (const delta of [...deltas("response.output_text.delta"), ...deltas("response.reasoning_summary_text.delta")]) {
        expect(wellFormed(delta), JSON.stringify(delta)).toBe(true)
      }
      expect(deltas("response.output_text.delta").join("")).toBe(whole)
      expect(deltas("response.reasoning_summary_text.delta").join("")).toBe("r\ud83d\ude02")
      const output = response.output as ReadonlyArray<Json>
      expect(output.map((item) => item.type === "message" ? item.content[0].text : item.summary[0].text)).toEqual(["r\ud83d\ude02", whole])
    }))

  it.effect("xAI usage through the gateway: reasoning inside output_tokens, total = input + output", () =>
    withChatGateway(["chat-sse/vai-chat-xai-reasoning-tool-call.chunks.txt"], (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "grok-3-mini", input: "hi", stream: true })
        const response = checkLifecycle(parseSse(answer.text))
        expect(response.usage).toEqual({
          input_tokens: 307,
          input_tokens_details: { cached_tokens: 306 },
          output_tokens: 253,
          output_tokens_details: { reasoning_tokens: 227 },
          total_tokens: 560
        })
      })))

  it.effect("ResponsesLanguageModel through the gateway gives the ModelResponse the chat model gives directly", () =>
    Effect.gen(function*() {
      // only ids differ (resp_/msg_/fc_ against the upstream's), and reasoning_content arrives as a summary
      const normalize = (response: ModelResponse.ModelResponse) => ({
        model: response.model,
        status: response.status,
        finishReason: response.finishReason,
        incompleteReason: response.incompleteReason,
        usage: response.usage,
        parts: response.message.parts.map((part) => {
          const { attributes: _attributes, ...rest } = part
          if (rest.type === "reasoning") return { type: "reasoning", text: rest.text ?? rest.summary.join("") }
          return rest
        })
      })
      const prompt = Prompt.user("hi")
      for (const fixture of [TEXT, TOOL_CALL, PARALLEL, REASONING, LENGTH, REFUSAL]) {
        for (const mode of ["generate", "stream"] as const) {
          const call = Effect.flatMap(LanguageModel.LanguageModel, (model) =>
            mode === "generate"
              ? model.generate(prompt)
              : Effect.map(MessageAggregator.aggregate(model.stream(prompt)), (responses) => responses[0]!))
          const direct = yield* call.pipe(
            Effect.provide(ChatCompletionsLanguageModel.layer({ model: "m" })),
            Effect.provide(
              Layer.unwrapEffect(
                Effect.map(ChatReplayServer.ChatReplayServer, (replay) =>
                  ChatCompletionsClient.layer({ baseUrl: replay.baseUrl, retry: { times: 0 } }))
              )
            ),
            Effect.provide(replayOf(fixture)),
            Effect.provide(NodeHttpClient.layerUndici),
            Effect.scoped
          )
          const viaGateway = yield* withChatGateway([fixture], (url) =>
            call.pipe(
              Effect.provide(ResponsesLanguageModel.layer({ model: "m" })),
              Effect.provide(ResponsesClient.layer({ baseUrl: url })),
              Effect.provide(NodeHttpClient.layerUndici)
            ))
          expect(normalize(viaGateway), `${fixture} (${mode})`).toEqual(normalize(direct))
        }
      }
    }))
})

// ---------------------------------------------------------------------------------------------------------
// a hand-driven upstream: model list, errors, and a stream that never ends
// ---------------------------------------------------------------------------------------------------------

interface RawUpstream {
  readonly baseUrl: string
  readonly closed: Promise<void>
}

/**
 * A loopback Chat Completions server: `/v1/models` lists one model; a POST answers by `mode`: `hang` writes one
 * chunk and never ends, `fail500` answers 500, a function's SSE text is the answer.
 */
const rawUpstream = (mode: "hang" | "fail500" | (() => string)) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<RawUpstream & { readonly server: ReturnType<typeof createServer> }>((resolve) => {
        let onClosed: () => void = () => {}
        const closed = new Promise<void>((done) => {
          onClosed = done
        })
        const server = createServer((request: IncomingMessage, response: ServerResponse) => {
          if (request.method === "GET" && request.url === "/v1/models") {
            response.writeHead(200, { "content-type": "application/json" })
            response.end(JSON.stringify({ object: "list", data: [{ id: "local-model", object: "model" }] }))
            return
          }
          request.resume()
          if (typeof mode === "function") {
            response.writeHead(200, { "content-type": "text/event-stream" })
            response.end(mode())
            return
          }
          if (mode === "fail500") {
            response.writeHead(500, { "content-type": "application/json" })
            response.end(JSON.stringify({ error: { message: "boom", type: "server_error", param: null, code: null } }))
            return
          }
          response.on("close", () => onClosed())
          response.writeHead(200, { "content-type": "text/event-stream" })
          const chunk = {
            id: "chatcmpl-x",
            object: "chat.completion.chunk",
            created: 0,
            model: "local-model",
            choices: [{ index: 0, delta: { role: "assistant", content: "Hello" }, finish_reason: null }]
          }
          response.write(`data: ${JSON.stringify(chunk)}\n\n`)
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ baseUrl: `http://127.0.0.1:${port}/v1`, closed, server })
        })
      })
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

const withRawGateway = <A, E>(mode: "hang" | "fail500" | (() => string), body: (url: string, upstream: RawUpstream) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const upstream = yield* rawUpstream(mode)
    return yield* Effect.gen(function*() {
      const url = yield* serverUrl
      return yield* body(`${url}/v1`, upstream)
    }).pipe(
      Effect.provide(
        Gateway.layer().pipe(
          Layer.provide(Upstream.chatCompletions({ baseUrl: upstream.baseUrl, retry: { times: 0 } })),
          Layer.provide(NodeHttpClient.layerUndici),
          Layer.provideMerge(loopback)
        )
      )
    )
  }).pipe(Effect.scoped)

describe("the gateway over a hand-driven Chat Completions upstream", () => {
  it.effect("GET /v1/models is passed through", () =>
    withRawGateway("fail500", (url) =>
      Effect.promise(async () => {
        const models = await openai(url).models.list()
        expect(models.data.map((model) => model.id)).toEqual(["local-model"])
      })))

  it.effect("an upstream 5xx before the first byte -> 502 in OpenAI's shape", () =>
    withRawGateway("fail500", (url) =>
      Effect.gen(function*() {
        for (const stream of [true, false]) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
          expect(answer.status).toBe(502)
          expect(JSON.parse(answer.text).error).toMatchObject({ type: "server_error", message: expect.stringContaining("boom") })
        }
      })))

  it.effect("a client that disconnects cancels the upstream request", () =>
    withRawGateway("hang", (url, upstream) =>
      Effect.promise(async () => {
        const controller = new AbortController()
        const response = await fetch(`${url}/responses`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", input: "hi", stream: true }),
          signal: controller.signal
        })
        expect(response.status).toBe(200)
        const reader = response.body!.getReader()
        let seen = ""
        while (!seen.includes("response.output_text.delta")) {
          const { done, value } = await reader.read()
          if (done) break
          seen += new TextDecoder().decode(value)
        }
        expect(seen).toContain("\"delta\":\"Hello\"")
        controller.abort()
        await upstream.closed
      })))
})



// ---------------------------------------------------------------------------------------------------------
// the order of items when text, refusal, reasoning and tool calls interleave
// ---------------------------------------------------------------------------------------------------------

/** An output item as `[kind, text]`: a message's kind is its part's (`output_text`, `refusal`). */
const itemShape = (item: Json): [string, string] => {
  switch (item.type) {
    case "function_call":
      return ["function_call", item.arguments]
    case "reasoning":
      return ["reasoning", item.summary.map((part: Json) => part.text).join("")]
    case "message":
      return [item.content[0].type, item.content.map((part: Json) => part.text ?? part.refusal).join("")]
    default:
      return [item.type, JSON.stringify(item)]
  }
}

/**
 * A random Chat Completions stream of 2 to 10 chunks from a seeded generator (a linear congruential one: the
 * same streams every run), each chunk one `reasoning_content`, `reasoning`, `content` or `refusal` delta, or
 * `tool_calls` beginning a call or continuing the arguments of one begun earlier, sometimes two calls in one
 * chunk (parallel calls, as OpenAI numbers them); every piece of text is a tag `<k>` of its chunk. With the
 * items the Responses API would write for it: each call one `function_call` at its first chunk, its
 * arguments joined; each run of text, refusal or reasoning one item, a run ending at a delta of any other
 * item; in the order the items began.
 */
const randomStreams = (seed: number, count: number) => {
  let state = seed
  const below = (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff
    return Math.floor((state / 0x80000000) * n)
  }
  return Array.from({ length: count }, () => {
    const deltas: Array<Json> = []
    const expected: Array<[string, string]> = []
    const calls: Array<[string, string]> = []
    let live: [string, string] | undefined
    const call = (index: number, tag: string): Json => {
      if (index < calls.length) {
        calls[index]![1] += tag
        return { index, function: { arguments: tag } }
      }
      const item: [string, string] = ["function_call", tag]
      calls.push(item)
      expected.push(item)
      return { index, id: `call_${index}`, type: "function", function: { name: "shell_command", arguments: tag } }
    }
    const length = 2 + below(9)
    for (let k = 0; k < length; k++) {
      const tag = `<${k}>`
      const choice = below(6)
      const delta: { [key: string]: unknown } = k === 0 ? { role: "assistant" } : {}
      if (choice < 4) {
        const [field, kind] = ([["reasoning_content", "reasoning"], ["reasoning", "reasoning"], ["content", "output_text"], [
          "refusal",
          "refusal"
        ]] as const)[choice]!
        delta[field] = tag
        if (live !== undefined && live[0] === kind) {
          live[1] += tag
        } else {
          live = [kind, tag]
          expected.push(live)
        }
      } else {
        live = undefined
        const first = call(calls.length === 0 || below(2) === 0 ? calls.length : below(calls.length), tag)
        delta.tool_calls = below(4) === 0 ? [first, call(calls.length, `<${k}b>`)] : [first]
      }
      deltas.push(delta)
    }
    return { deltas, expected, sse: chatSse(deltas, calls.length > 0 ? "tool_calls" : "stop") }
  })
}

describe("the order of items when a Chat Completions stream interleaves text, reasoning and tool calls", () => {
  const tools = [{ type: "function" as const, name: "shell_command", parameters: { type: "object", properties: {} }, strict: false }]

  /** The output of `sse` through the gateway, raw SSE (through `checkLifecycle`) and the openai SDK's accumulator. */
  const outputsOf = (streams: ReadonlyArray<{ readonly sse: string }>) => {
    let current = ""
    return withRawGateway(() => current, (url) =>
      Effect.forEach(streams, ({ sse }) =>
        Effect.gen(function*() {
          current = sse
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools })
          const raw = (checkLifecycle(parseSse(answer.text)).output as ReadonlyArray<Json>).map(itemShape)
          const sdk = yield* Effect.promise(async () => {
            const stream = openai(url).responses.stream({ model: "m", input: "hi", tools })
            const events: Array<{ type: string; sequence_number: number }> = []
            for await (const event of stream) events.push(event)
            checkLifecycle(framesOfEvents(events))
            return ((await stream.finalResponse()).output as ReadonlyArray<Json>).map(itemShape)
          })
          return { raw, sdk }
        })))
  }

  it.effect("text and reasoning after a tool call: each a new item in the upstream's order, not merged behind the call", () =>
    Effect.gen(function*() {
      const sse = chatSse([
        { role: "assistant", tool_calls: [{ index: 0, id: "call_0", type: "function", function: { name: "shell_command", arguments: "{}" } }] },
        { reasoning_content: "R1" },
        { content: "T2" },
        { reasoning_content: "R3" },
        { content: "T4" }
      ], "tool_calls")
      const [{ raw, sdk }] = yield* outputsOf([{ sse }])
      const expected = [["function_call", "{}"], ["reasoning", "R1"], ["output_text", "T2"], ["reasoning", "R3"], ["output_text", "T4"]]
      expect(raw).toEqual(expected)
      expect(sdk).toEqual(expected)
    }))

  it.effect("200 seeded random interleavings: the items the Responses API would write, raw and through the openai SDK", () =>
    Effect.gen(function*() {
      const streams = randomStreams(11, 200)
      const outputs = yield* outputsOf(streams)
      const wrong = streams.flatMap((stream, i) => {
        const { raw, sdk } = outputs[i]!
        const same = JSON.stringify(raw) === JSON.stringify(stream.expected) && JSON.stringify(sdk) === JSON.stringify(stream.expected)
        return same ? [] : [{ deltas: stream.deltas, expected: stream.expected, raw, sdk }]
      })
      expect(wrong.slice(0, 3)).toEqual([])
      expect(wrong.length).toBe(0)
    }), 120_000)
})
