/**
 * The gateway over a scripted `LanguageModel`: the SSE lifecycle, the Response object, and every
 * OpenAI-shaped error answer.
 */
import {
  AiError,
  LanguageModel,
  Message,
  ModelResponse,
  Part,
  type Prompt,
  StreamPart,
  Usage
} from "@effect-responses/core"
import { ChatCompletionsClient } from "@effect-responses/chat-completions"
import { ResponsesClient } from "@effect-responses/responses"
import { Gateway, Upstream } from "@effect-responses/server"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { constants } from "node:buffer"
import { request as httpRequest } from "node:http"
import { gzipSync } from "node:zlib"
import OpenAI from "openai"
import { captureLogs, checkLifecycle, loopback, parseSse, post, postChunked, readFixture, scriptedModel, withGateway } from "./utils.js"

const id = "chatcmpl-1"
const started = new StreamPart.ResponseStarted({ responseId: id, model: "upstream-model-2025" })
const delta = (outputIndex: number, part: Part.AssistantPart) =>
  new StreamPart.PartUpdate({ responseId: id, outputIndex, partial: true, part })
const complete = (outputIndex: number, part: Part.AssistantPart) =>
  new StreamPart.PartUpdate({ responseId: id, outputIndex, partial: false, part })
const usage = new Usage.Usage({ inputTokens: 20, cachedInputTokens: 4, outputTokens: 9, reasoningTokens: 3, totalTokens: 29 })
const finished = (finishReason: ModelResponse.FinishReason, status = "completed", incompleteReason?: string) =>
  new StreamPart.ResponseFinished({
    responseId: id,
    status,
    finishReason,
    ...(incompleteReason === undefined ? {} : { incompleteReason }),
    usage
  })
const call = (callId: string, name: string, args: string) => new Part.ToolCallPart({ callId, name, arguments: args })

const upstreamOf = (layer: Layer.Layer<LanguageModel.LanguageModel>) =>
  Upstream.fromLanguageModel({ models: ["upstream-model", "meta-llama/Llama-3.1-8B-Instruct"] }).pipe(Layer.provide(layer))

const streamBody = (extra: Record<string, unknown> = {}) => ({ model: "m", input: "hi", stream: true, ...extra })

describe("Gateway (scripted upstream)", () => {
  it.effect("reasoning, text and two interleaved parallel calls: one item at a time, in order", () =>
    Effect.gen(function*() {
      const model = scriptedModel({
        stream: [
          started,
          delta(0, new Part.ReasoningPart({ text: "Think" })),
          delta(0, new Part.ReasoningPart({ text: "ing." })),
          delta(1, new Part.TextPart({ text: "Calling " })),
          delta(1, new Part.TextPart({ text: "tools." })),
          delta(2, call("call_a", "weather", "{\"ci")),
          delta(3, call("call_b", "time", "{\"tz\"")),
          delta(2, call("call_a", "weather", "ty\":\"Oslo\"}")),
          delta(3, call("call_b", "time", ":\"CET\"}")),
          complete(0, new Part.ReasoningPart({})),
          complete(1, new Part.TextPart({ text: "" })),
          complete(2, call("call_a", "weather", "")),
          complete(3, call("call_b", "time", "")),
          finished("tool_calls")
        ]
      })
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        post(`${url}/responses`, streamBody({ tools: [{ type: "function", name: "weather", parameters: {} }] })))
      expect(answer.status).toBe(200)
      expect(answer.headers.get("content-type")).toContain("text/event-stream")
      const frames = parseSse(answer.text)
      const response = checkLifecycle(frames)
      expect(response.status).toBe("completed")
      expect(response.model).toBe("upstream-model-2025")
      const output = response.output as ReadonlyArray<Record<string, unknown>>
      expect(output.map((item) => item.type)).toEqual(["reasoning", "message", "function_call", "function_call"])
      expect(output[0]!.summary).toEqual([{ type: "summary_text", text: "Thinking." }])
      expect(output[2]).toMatchObject({ call_id: "call_a", name: "weather", arguments: "{\"city\":\"Oslo\"}", status: "completed" })
      expect(output[3]).toMatchObject({ call_id: "call_b", name: "time", arguments: "{\"tz\":\"CET\"}" })
      expect(response.usage).toEqual({
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 9,
        output_tokens_details: { reasoning_tokens: 3 },
        total_tokens: 29
      })
      // text streams live: its deltas come before the calls are written
      const types = frames.map((frame) => frame.data.type)
      expect(types.filter((type) => type === "response.output_text.delta")).toHaveLength(2)
      expect(types.indexOf("response.reasoning_summary_text.delta")).toBeLessThan(types.indexOf("response.output_text.delta"))
      // the tools reached the model
      expect(model.calls[0]!.options?.tools?.map((tool) => tool.name)).toEqual(["weather"])
    }))

  it.effect("finish reason length -> response.incomplete (max_output_tokens), open items closed incomplete", () =>
    Effect.gen(function*() {
      const model = scriptedModel({
        stream: [started, delta(0, new Part.TextPart({ text: "Hel" })), finished("length", "incomplete", "max_output_tokens")]
      })
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) => post(`${url}/responses`, streamBody({ max_output_tokens: 16 })))
      const response = checkLifecycle(parseSse(answer.text))
      expect(response.status).toBe("incomplete")
      expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" })
      expect(response.max_output_tokens).toBe(16)
      expect((response.output as ReadonlyArray<Record<string, unknown>>)[0]!.status).toBe("incomplete")
    }))

  it.effect("content_filter -> response.incomplete (content_filter)", () =>
    Effect.gen(function*() {
      const model = scriptedModel({ stream: [started, finished("content_filter", "incomplete")] })
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) => post(`${url}/responses`, streamBody()))
      const response = checkLifecycle(parseSse(answer.text))
      expect(response.incomplete_details).toEqual({ reason: "content_filter" })
    }))

  it.effect("an upstream error mid-stream -> response.failed with a code, and the stream ends", () =>
    Effect.gen(function*() {
      const model = scriptedModel({
        stream: Stream.concat(
          Stream.make(started, delta(0, new Part.TextPart({ text: "partial" }))),
          Stream.fail(new AiError.TransportError({ description: "socket hang up" }))
        )
      })
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) => post(`${url}/responses`, streamBody()))
      expect(answer.status).toBe(200)
      const response = checkLifecycle(parseSse(answer.text))
      expect(response.status).toBe("failed")
      expect(response.error).toMatchObject({ code: "upstream_disconnected" })
    }))

  it.effect("an upstream error before the first byte -> its HTTP status in OpenAI's shape; 5xx -> 502", () =>
    Effect.gen(function*() {
      for (const [status, expected] of [[429, 429], [503, 502], [404, 404]] as const) {
        const failing = Layer.succeed(
          LanguageModel.LanguageModel,
          LanguageModel.LanguageModel.of({
            generate: () => Effect.fail(new AiError.HttpError({ status, description: "upstream says no", code: "some_code" })),
            stream: () => Stream.fail(new AiError.HttpError({ status, description: "upstream says no", code: "some_code" }))
          })
        )
        for (const stream of [true, false]) {
          const answer = yield* withGateway(upstreamOf(failing), {}, (url) =>
            post(`${url}/responses`, streamBody({ stream })))
          expect(answer.status).toBe(expected)
          const error = JSON.parse(answer.text).error
          expect(error).toMatchObject({ code: "some_code" })
          expect(typeof error.message).toBe("string")
          expect(error).toHaveProperty("type")
          expect(error).toHaveProperty("param")
        }
      }
    }))

  it.effect("non-streaming: the Response object with ids, usage details and every parameter echoed", () =>
    Effect.gen(function*() {
      const model = scriptedModel({
        generate: new ModelResponse.ModelResponse({
          id: "chatcmpl-9",
          model: "upstream-model-2025",
          status: "completed",
          finishReason: "tool_calls",
          usage,
          message: new Message.AssistantMessage({
            parts: [new Part.TextPart({ text: "Sure." }), call("call_1", "crm__lookup", "{\"id\":7}")]
          })
        })
      })
      const request = {
        model: "m",
        instructions: "Be brief.",
        input: [{ role: "user", content: "look up 7" }],
        tools: [{
          type: "namespace",
          name: "crm",
          description: "CRM tools",
          tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }]
        }],
        tool_choice: "auto",
        temperature: 0.3,
        top_p: 0.9,
        max_output_tokens: 500,
        parallel_tool_calls: false,
        reasoning: { effort: "low" },
        text: { verbosity: "low" },
        metadata: { trace: "t1" },
        store: false
      }
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) => post(`${url}/responses`, request))
      expect(answer.status).toBe(200)
      const response = JSON.parse(answer.text)
      expect(response).toMatchObject({
        object: "response",
        status: "completed",
        model: "upstream-model-2025",
        instructions: "Be brief.",
        tools: request.tools,
        tool_choice: "auto",
        temperature: 0.3,
        top_p: 0.9,
        max_output_tokens: 500,
        parallel_tool_calls: false,
        reasoning: { effort: "low", summary: null },
        text: { format: { type: "text" }, verbosity: "low" },
        metadata: { trace: "t1" },
        store: false,
        usage: { input_tokens_details: { cached_tokens: 4 }, output_tokens_details: { reasoning_tokens: 3 } }
      })
      expect(response.id).toMatch(/^resp_/)
      expect(typeof response.created_at).toBe("number")
      expect(response.output[0]).toMatchObject({
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Sure.", annotations: [] }]
      })
      expect(response.output[0].id).toMatch(/^msg_/)
      // the flattened namespace tool is mapped back
      expect(response.output[1]).toMatchObject({ type: "function_call", namespace: "crm", name: "lookup", call_id: "call_1" })
      expect(response.output[1].id).toMatch(/^fc_/)
      // the model saw the flattened tool and the instructions as a system message
      const seen = model.calls[0]!
      expect(seen.options?.tools?.map((tool) => tool.name)).toEqual(["crm__lookup"])
      expect((seen.prompt as Prompt.Prompt).messages[0]).toMatchObject({ role: "system", content: "Be brief." })
    }))

  it.effect("bearer auth: 401 in OpenAI's shape without the key, through with it; /health needs none", () =>
    Effect.gen(function*() {
      const model = scriptedModel({ stream: [started, finished("stop")] })
      yield* withGateway(upstreamOf(model.layer), { apiKey: Redacted.make("sekret") }, (url) =>
        Effect.gen(function*() {
          const denied = yield* post(`${url}/responses`, streamBody())
          expect(denied.status).toBe(401)
          expect(JSON.parse(denied.text)).toEqual({
            error: {
              message: "No API key provided: send it as `Authorization: Bearer <key>`.",
              type: "invalid_request_error",
              param: null,
              code: "invalid_api_key"
            }
          })
          const wrong = yield* post(`${url}/responses`, streamBody(), { authorization: "Bearer nope" })
          expect(wrong.status).toBe(401)
          expect(JSON.parse(wrong.text).error.message).toMatch(/^Incorrect API key provided/)
          const allowed = yield* post(`${url}/responses`, streamBody(), { authorization: "Bearer sekret" })
          expect(allowed.status).toBe(200)
          checkLifecycle(parseSse(allowed.text))
          const models = yield* Effect.promise(() => fetch(`${url}/models`))
          expect(models.status).toBe(401)
          const health = yield* Effect.promise(() => fetch(`${url.replace(/\/v1$/, "")}/health`).then((r) => r.json()))
          expect(health).toEqual({ status: "ok" })
          // a HEAD health check (uptime monitors, some load balancers) is answered too, without a key
          const head = yield* Effect.promise(() => fetch(`${url.replace(/\/v1$/, "")}/health`, { method: "HEAD" }))
          expect(head.status).toBe(200)
        }))
    }))

  it.effect("GET /v1/models answers from the upstream; an unknown path is a 404 in OpenAI's shape", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        Effect.gen(function*() {
          const models = yield* Effect.promise(() => fetch(`${url}/models`).then((r) => r.json()))
          expect(models).toMatchObject({
            object: "list",
            data: [{ id: "upstream-model", object: "model" }, { id: "meta-llama/Llama-3.1-8B-Instruct", object: "model" }]
          })
          // the SDK's models.retrieve: the model's entry of the list, or the API's 404
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const model = yield* Effect.promise(() => client.models.retrieve("upstream-model"))
          expect(model).toMatchObject({ id: "upstream-model", object: "model" })
          // an id with a slash, as vLLM serves Hugging Face models: encoded (the SDK) or not
          const slashed = "meta-llama/Llama-3.1-8B-Instruct"
          expect(yield* Effect.promise(() => client.models.retrieve(slashed))).toMatchObject({ id: slashed })
          const raw = yield* Effect.promise(() => fetch(`${url}/models/${slashed}`).then((r) => r.json()))
          expect(raw).toMatchObject({ id: slashed, object: "model" })
          const unknown = yield* Effect.promise(() => fetch(`${url}/models/gpt-nope`))
          expect(unknown.status).toBe(404)
          expect((yield* Effect.promise(() => unknown.json())).error).toEqual({
            message: "The model 'gpt-nope' does not exist",
            type: "invalid_request_error",
            param: "model",
            code: "model_not_found"
          })
          const missing = yield* Effect.promise(() => fetch(`${url}/nothing`))
          expect(missing.status).toBe(404)
          expect((yield* Effect.promise(() => missing.json())).error.message).toContain("/v1/nothing")
        }))
    }))

  it.effect("a base URL without /v1: the gateway's 404 says try /v1/responses, the clients' 404 errors say try …/v1 unless the gateway's answer already names /v1 (one hint)", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        Effect.gen(function*() {
          const base = url.replace(/\/v1$/, "")
          const raw = yield* post(`${base}/responses`, { model: "m", input: "hi" })
          expect(raw.status).toBe(404)
          expect(JSON.parse(raw.text).error.message).toBe(
            "Invalid URL (POST /responses): try /v1/responses (the gateway's base URL ends in /v1)"
          )
          expect(JSON.parse((yield* post(`${base}/models?x=1`, {})).text).error.message).toContain("try /v1/models (")
          // a path the gateway does not serve under /v1 either: no hint
          expect(JSON.parse((yield* post(`${url}/nothing`, {})).text).error.message).toBe("Invalid URL (POST /v1/nothing)")
          const hint = `the base URL has no /v1: try ${base}/v1`
          const responses = yield* Effect.flip(
            Effect.flatMap(ResponsesClient.ResponsesClient, (client) => client.create({ model: "m", store: false, input: [{ type: "message", role: "user", content: "hi" }] })).pipe(
              Effect.provide(ResponsesClient.layer({ baseUrl: `${base}/`, retry: { times: 0 } }))
            )
          )
          assert(responses._tag === "HttpError")
          expect(responses.status).toBe(404)
          // one hint: the gateway's, which already names /v1, and not the client's after it
          expect(responses.message).toBe(
            "HTTP 404: Invalid URL (POST /responses): try /v1/responses (the gateway's base URL ends in /v1) (invalid_request_error)"
          )
          expect(responses.message).not.toContain(hint)
          const chat = yield* Effect.flip(
            Effect.flatMap(ChatCompletionsClient.ChatCompletionsClient, (client) =>
              client.create({ model: "m", messages: [{ role: "user", content: "hi" }] })).pipe(
                Effect.provide(ChatCompletionsClient.layer({ baseUrl: base, retry: { times: 0 } }))
              )
          )
          assert(chat._tag === "HttpError")
          expect(chat.message).toBe(`HTTP 404: Invalid URL (POST /chat/completions): ${hint} (invalid_request_error)`)
          // with a path: the gateway's 404, no hint
          const withPath = yield* Effect.flip(
            Effect.flatMap(ChatCompletionsClient.ChatCompletionsClient, (client) =>
              client.create({ model: "m", messages: [{ role: "user", content: "hi" }] })).pipe(
                Effect.provide(ChatCompletionsClient.layer({ baseUrl: url, retry: { times: 0 } }))
              )
          )
          expect(withPath.message).toBe("HTTP 404: Invalid URL (POST /v1/chat/completions) (invalid_request_error)")
        }).pipe(Effect.provide(NodeHttpClient.layerUndici)))
    }))

  it.effect("a body over the bound -> 413; malformed JSON -> 400 naming the position", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      yield* withGateway(upstreamOf(model.layer), { maxBodyBytes: 1024 }, (url) =>
        Effect.gen(function*() {
          const big = yield* post(`${url}/responses`, { model: "m", input: "x".repeat(2000) })
          expect(big.status).toBe(413)
          expect(JSON.parse(big.text).error).toMatchObject({ type: "invalid_request_error", code: "request_too_large" })
          const bad = yield* post(`${url}/responses`, "{\"model\": \"m\",\n \"input\": }")
          expect(bad.status).toBe(400)
          const error = JSON.parse(bad.text).error
          expect(error.code).toBe("invalid_json")
          expect(error.message).toContain("position 25 (line 2, column 11)")
          expect(model.calls).toHaveLength(0)
        }))
    }))

  it.effect("a body that is no UTF-8 -> 400 invalid_json naming the byte offset, before anything reaches the upstream (it was read as U+FFFD)", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        Effect.gen(function*() {
          const head = new TextEncoder().encode(`{"model":"m","input":"café `)
          // Latin-1's é (0xE9: a three-byte lead, then a space), in a chunk of the request of its own
          const answer = yield* postChunked(`${url}/responses`, [head, new Uint8Array([0xe9]), new TextEncoder().encode(` au lait"}`)])
          expect(answer.status).toBe(400)
          expect(JSON.parse(answer.text)).toEqual({
            error: {
              message: `We could not parse the JSON body of your request: it is not UTF-8 (at byte offset ${head.length}).`,
              type: "invalid_request_error",
              param: null,
              code: "invalid_json"
            }
          })
          // a recorded answer's output items sent back as input, 0xFF in place of its first multi-byte
          // character's lead byte, sent in chunks of 3 bytes
          const recorded = JSON.parse(readFixture("responses-json/pai-gpt5-web-search-url-citations.json")) as { output: Array<object> }
          const body = new TextEncoder().encode(JSON.stringify({ model: "m", input: recorded.output }))
          const first = body.findIndex((byte) => byte >= 0x80)
          body[first] = 0xff
          const chunks: Array<Uint8Array> = []
          for (let from = 0; from < body.length; from += 3) chunks.push(body.subarray(from, from + 3))
          const replayed = yield* postChunked(`${url}/responses`, chunks)
          expect(replayed.status).toBe(400)
          expect(JSON.parse(replayed.text).error.message).toBe(
            `We could not parse the JSON body of your request: it is not UTF-8 (at byte offset ${first}).`
          )
          expect(model.calls).toHaveLength(0)
        }))
    }))

  it.effect("a body that is no JSON answers invalid_json also when an input item before its syntax error is refused", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        Effect.gen(function*() {
          // the input elements are parsed as the decoder reads them: it refuses input[0] before input[2] is parsed
          const text = "{\"model\":\"m\",\"input\":[{\"type\":\"no_such_item\"},{\"role\":\"user\",\"content\":\"a\"},{\"role\": }]}"
          const bad = yield* post(`${url}/responses`, text)
          expect(bad.status).toBe(400)
          const error = JSON.parse(bad.text).error
          expect(error.code).toBe("invalid_json")
          expect(error.message).toContain(`position ${text.indexOf("}]}")}`)
          // without the syntax error, the item is what is refused
          const refused = yield* post(`${url}/responses`, text.replace("{\"role\": }", "2"))
          expect(JSON.parse(refused.text).error).toMatchObject({ code: "unsupported_value", param: "input[0].type" })
          // the same for a refusal of a top-level parameter, read before any input element
          const store = yield* post(`${url}/responses`, text.replace("{", "{\"store\":true,"))
          expect(JSON.parse(store.text).error.code).toBe("invalid_json")
          expect(model.calls).toHaveLength(0)
        }))
    }))

  it.effect("a large item of too many parts: the 400 naming them; with a syntax error among them, invalid_json at its position", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      yield* withGateway(upstreamOf(model.layer), { maxInputItems: 100 }, (url) =>
        Effect.gen(function*() {
          // over 256 KiB: counted, then parsed part by part
          const parts = Array.from({ length: 10_000 }, (_, i) => ({ type: "input_text", text: `part ${i} é😀` }))
          const text = JSON.stringify({ model: "m", input: [{ role: "user", content: "q" }, { role: "user", content: parts }] })
          const refused = yield* post(`${url}/responses`, text)
          expect(refused.status).toBe(400)
          expect(JSON.parse(refused.text).error).toEqual({
            message:
              "Invalid 'input[1].content': array too long. Expected an array with maximum length 100, but got an array with length 10000 instead.",
            type: "invalid_request_error",
            param: "input[1].content",
            code: "array_above_max_length"
          })
          // the parts are counted before they are parsed, but a body that is no JSON still answers as such
          const malformed = text.replace(`"part 9000 é😀"}`, `"part 9000 é😀" 1}`)
          const bad = yield* post(`${url}/responses`, malformed)
          expect(bad.status).toBe(400)
          const error = JSON.parse(bad.text).error
          expect(error.code).toBe("invalid_json")
          const position = malformed.indexOf(" 1}")
          expect(error.message).toContain(`position ${position + 1}`)
          expect(model.calls).toHaveLength(0)
        }))
    }))

  it.effect("the 16 MiB default: a 17 MiB body is refused with 413", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        post(`${url}/responses`, { model: "m", input: "x".repeat(17 * 1024 * 1024) }))
      expect(answer.status).toBe(413)
    }))

  it.effect("a compressed body (content-encoding gzip) -> 415 naming the encoding, not a JSON syntax error", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        Effect.promise(async () => {
          const response = await fetch(`${url}/responses`, {
            method: "POST",
            headers: { "content-type": "application/json", "content-encoding": "gzip" },
            body: gzipSync(JSON.stringify({ model: "m", input: "hi" }))
          })
          return { status: response.status, text: await response.text() }
        }))
      expect(answer.status).toBe(415)
      expect(JSON.parse(answer.text)).toEqual({
        error: {
          message: "The request body's content-encoding gzip is not supported: send the body uncompressed.",
          type: "invalid_request_error",
          param: null,
          code: "unsupported_content_encoding"
        }
      })
      expect(model.calls).toHaveLength(0)
    }))

  it.effect("a chunked body over the 16 MiB default -> 413 in OpenAI's shape, not a connection reset", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      const mib = new Uint8Array(1024 * 1024).fill(0x78)
      function* body() {
        yield "{\"model\":\"m\",\"input\":\""
        for (let i = 0; i < 17; i++) yield mib
        yield "\"}"
      }
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) => postChunked(`${url}/responses`, body()))
      expect(answer.status).toBe(413)
      expect(JSON.parse(answer.text)).toEqual({
        error: {
          message: expect.stringContaining("16777216 bytes"),
          type: "invalid_request_error",
          param: null,
          code: "request_too_large"
        }
      })
      expect(model.calls).toHaveLength(0)
    }))

  it.effect("a chunked body within the bound is read whole", () =>
    Effect.gen(function*() {
      const model = scriptedModel({ stream: [started, finished("stop")] })
      const answer = yield* withGateway(upstreamOf(model.layer), { maxBodyBytes: 1024 }, (url) =>
        postChunked(`${url}/responses`, ["{\"model\":\"m\",", "\"input\":\"hi\",", "\"stream\":true}"]))
      expect(answer.status).toBe(200)
      checkLifecycle(parseSse(answer.text))
    }))

  it.effect("what a stateless bridge cannot honour: 400 naming the parameter", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      yield* withGateway(upstreamOf(model.layer), { builtinTools: "reject" }, (url) =>
        Effect.gen(function*() {
          const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
            [{ previous_response_id: "resp_1" }, "previous_response_id"],
            [{ store: true }, "store"],
            [{ tools: [{ type: "web_search" }] }, "tools[0]"],
            [{ input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].id"]
          ]
          for (const [extra, param] of cases) {
            const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", ...extra })
            expect(answer.status).toBe(400)
            const error = JSON.parse(answer.text).error
            assert.strictEqual(error.param, param)
            expect(error.type).toBe("invalid_request_error")
          }
          expect(model.calls).toHaveLength(0)
        }))
    }))

  it.effect("an unreachable / disconnected upstream: the client gets a generic message, the log keeps the URL and the cause", () =>
    Effect.gen(function*() {
      const url = "http://127.0.0.1:40007/v1/chat/completions"
      const refused = new AiError.TransportError({ description: "Transport: connect ECONNREFUSED 127.0.0.1:40007", url })
      const midStream = scriptedModel({
        stream: Stream.concat(Stream.make(started, delta(0, new Part.TextPart({ text: "partial" }))), Stream.fail(refused))
      })
      const captured = captureLogs()
      const failed = yield* withGateway(upstreamOf(midStream.layer), {}, (base) => post(`${base}/responses`, streamBody())).pipe(
        Effect.provide(captured.layer)
      )
      const response = checkLifecycle(parseSse(failed.text))
      expect(response.error).toEqual({ code: "upstream_disconnected", message: Gateway.UPSTREAM_DISCONNECTED })
      expect(failed.text).not.toContain("127.0.0.1")
      expect(captured.logs.some((line) => line.startsWith("WARN") && line.includes(url) && line.includes("ECONNREFUSED"))).toBe(true)

      const before = Layer.succeed(
        LanguageModel.LanguageModel,
        LanguageModel.LanguageModel.of({ generate: () => Effect.fail(refused), stream: () => Stream.fail(refused) })
      )
      for (const stream of [true, false]) {
        const answer = yield* withGateway(upstreamOf(before), {}, (base) => post(`${base}/responses`, streamBody({ stream })))
        expect(answer.status).toBe(502)
        expect(JSON.parse(answer.text).error).toEqual({
          message: "the upstream model server could not be reached",
          type: "server_error",
          param: null,
          code: "upstream_unreachable"
        })
      }
    }))

  it.effect("on a server other than Node's (a web handler) the stream is written as an Effect Stream: the same events", () =>
    Effect.gen(function*() {
      const model = scriptedModel({
        stream: [
          started,
          delta(0, new Part.TextPart({ text: "Hel" })),
          delta(0, new Part.TextPart({ text: "lo" })),
          complete(0, new Part.TextPart({ text: "" })),
          finished("stop")
        ]
      })
      const { dispose, handler } = HttpApp.toWebHandlerLayer(Gateway.router(), upstreamOf(model.layer))
      const answer = yield* Effect.promise(async () => {
        const response = await handler(
          new Request("http://gateway.invalid/v1/responses", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(streamBody())
          })
        )
        return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
      }).pipe(Effect.ensuring(Effect.promise(dispose)))
      expect(answer.status).toBe(200)
      expect(answer.type).toContain("text/event-stream")
      const response = checkLifecycle(parseSse(answer.text))
      expect(response.status).toBe("completed")
      expect(response.output).toMatchObject([{ type: "message", status: "completed", content: [{ text: "Hello" }] }])
    }))

  it.effect("1 MB of instructions echoed by response.created and by a whole answer: written in pieces, not as one", () =>
    Effect.gen(function*() {
      const instructions = `é😀 "x"\n${"i".repeat(1_000_000)}`
      const model = scriptedModel({
        // one part per upstream chunk: response.created is written before any event that repeats an item
        stream: Stream.rechunk(
          Stream.make(started, delta(0, new Part.TextPart({ text: "ok" })), complete(0, new Part.TextPart({ text: "" })), finished("stop")),
          1
        ),
        generate: new ModelResponse.ModelResponse({
          id: "chatcmpl-1",
          model: "upstream-model",
          status: "completed",
          finishReason: "stop",
          usage,
          message: new Message.AssistantMessage({ parts: [new Part.TextPart({ text: "ok" })] })
        })
      })
      // the handler on a request other than Node's: its body is an Effect Stream whose elements are the pieces
      const pieces = (body: object) =>
        Effect.gen(function*() {
          const request = new Request("http://gateway.invalid/v1/responses", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body)
          })
          const response = yield* Gateway.createResponse().pipe(
            Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(request)),
            Effect.provide(upstreamOf(model.layer))
          )
          assert.strictEqual(response.body._tag, "Stream")
          const chunks = response.body._tag === "Stream" ? Chunk.toReadonlyArray(yield* Stream.runCollect(response.body.stream)) : []
          return { chunks, text: Buffer.concat(chunks).toString("utf8") }
        })
      const streamed = yield* pieces(streamBody({ instructions }))
      const whole = yield* pieces({ model: "m", input: "hi", instructions })
      const frames = parseSse(streamed.text)
      expect(frames.find((frame) => frame.event === "response.created")?.data).toMatchObject({ response: { instructions } })
      expect(checkLifecycle(frames).instructions).toBe(instructions)
      expect(JSON.parse(whole.text)).toMatchObject({ instructions, output: [{ content: [{ text: "ok" }] }] })
      // pieces of about 64 Ki characters each (the JSON escaping of a slice), none of the whole megabyte
      for (const { chunks } of [streamed, whole]) {
        expect(chunks.length).toBeGreaterThan(10)
        expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(300_000)
      }
    }))

  it.effect("a client that reads slowly: the stream waits for it and arrives whole (about 10 MB, read after 300 ms)", () =>
    Effect.gen(function*() {
      // 200 deltas of 10,000 characters: 2 MB of text, repeated by the done events: more than the socket and
      // the loopback connection buffer, so the body's writer has to wait for the client's reads
      const piece = "0123456789".repeat(1_000)
      const model = scriptedModel({
        stream: [
          started,
          ...Array.from({ length: 200 }, () => delta(0, new Part.TextPart({ text: piece }))),
          complete(0, new Part.TextPart({ text: "" })),
          finished("stop")
        ]
      })
      const text = yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        Effect.async<string>((resume) => {
          const request = httpRequest(`${url}/responses`, { method: "POST", headers: { "content-type": "application/json" } }, (response) => {
            response.pause()
            setTimeout(() => {
              const chunks: Array<Buffer> = []
              response.on("data", (chunk: Buffer) => chunks.push(chunk))
              response.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
              response.resume()
            }, 300)
          })
          request.end(JSON.stringify(streamBody()))
        }))
      const frames = parseSse(text)
      const response = checkLifecycle(frames)
      expect(response.status).toBe("completed")
      expect(frames.find((frame) => frame.event === "response.output_text.done")?.data["text"]).toBe(piece.repeat(200))
    }))

  it.effect("no usage from the upstream -> usage null, not zeros (streamed and whole)", () =>
    Effect.gen(function*() {
      const none = new StreamPart.ResponseFinished({ responseId: id, status: "completed", finishReason: "stop", usage: Usage.empty })
      const model = scriptedModel({
        stream: [started, delta(0, new Part.TextPart({ text: "Hi" })), none],
        generate: new ModelResponse.ModelResponse({
          id,
          model: "upstream-model-2025",
          status: "completed",
          finishReason: "stop",
          usage: Usage.empty,
          message: new Message.AssistantMessage({ parts: [new Part.TextPart({ text: "Hi" })] })
        })
      })
      yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        Effect.gen(function*() {
          const streamed = checkLifecycle(parseSse((yield* post(`${url}/responses`, streamBody())).text))
          expect(streamed.status).toBe("completed")
          expect(streamed.usage).toBeNull()
          const whole = JSON.parse((yield* post(`${url}/responses`, { model: "m", input: "hi" })).text)
          expect(whole.status).toBe("completed")
          expect(whole.usage).toBeNull()
        }))
    }))

  it.effect("a number past a double's range (1e400, parsed as Infinity) is a 400 invalid_value naming it, not null upstream", () =>
    Effect.gen(function*() {
      const model = scriptedModel({ stream: [started, finished("stop")] })
      const shell = '{"type":"shell_call","call_id":"c1","action":{"commands":["ls"],"timeout_ms":1e400}}'
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        ['"temperature":1e400', "temperature", "Infinity"],
        ['"top_p":-1e400', "top_p", "-Infinity"],
        ['"max_output_tokens":1e400', "max_output_tokens", "Infinity"],
        ['"max_tool_calls":1e999', "max_tool_calls", "Infinity"],
        ['"top_logprobs":-1e400', "top_logprobs", "-Infinity"],
        [`"tools":[{"type":"shell"}],"input":[${shell}]`, "input[0].action.timeout_ms", "Infinity"]
      ]
      yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        Effect.gen(function*() {
          for (const [field, param, actual] of cases) {
            for (const stream of [false, true]) {
              const answer = yield* post(`${url}/responses`, `{"model":"m","input":"hi","store":false,"stream":${stream},${field}}`)
              expect(answer.status, field).toBe(400)
              expect(JSON.parse(answer.text), field).toEqual({
                error: {
                  message: `Invalid '${param}': number out of range. Expected a finite number, but got ${actual} instead.`,
                  type: "invalid_request_error",
                  param,
                  code: "invalid_value"
                }
              })
            }
          }
          // finite numbers go on as they are (temperature within its 0 to 2, OutOfRange.test)
          const within = yield* post(`${url}/responses`, '{"model":"m","input":"hi","store":false,"stream":true,"temperature":15e-1}')
          expect(within.status).toBe(200)
          expect(checkLifecycle(parseSse(within.text))).toMatchObject({ status: "completed", temperature: 1.5 })
        }))
      expect(model.calls.length).toBe(1)
    }))

  it.effect("accepted parameters the upstream cannot use: one debug line per request naming them", () =>
    Effect.gen(function*() {
      const model = scriptedModel({ stream: [started, finished("stop")] })
      const captured = captureLogs()
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        post(`${url}/responses`, streamBody({ temperature: 0.5, metadata: { a: "b" }, max_tool_calls: 3, frobnicate: 1 }))).pipe(
          Effect.provide(captured.layer)
        )
      expect(answer.status).toBe(200)
      checkLifecycle(parseSse(answer.text))
      const unused = captured.logs.filter((line) => line.includes("not used by the upstream"))
      expect(unused).toEqual([
        "DEBUG: request parameters accepted but not used by the upstream (echoed only): temperature, max_tool_calls, metadata"
      ])
      expect(captured.logs).toContain("DEBUG: unknown top-level fields ignored: frobnicate")
    }))

  it.effect("text.format reaches the LanguageModel as the call's responseFormat", () =>
    Effect.gen(function*() {
      const model = scriptedModel({ stream: [started, finished("stop")] })
      const captured = captureLogs()
      const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }
      const answer = yield* withGateway(upstreamOf(model.layer), {}, (url) =>
        post(`${url}/responses`, streamBody({ text: { format: { type: "json_schema", name: "city", schema, strict: true } } }))).pipe(
          Effect.provide(captured.layer)
        )
      expect(answer.status).toBe(200)
      expect(model.calls[0]!.options?.responseFormat).toEqual({ type: "json", name: "city", schema, strict: true })
      expect(captured.logs.filter((line) => line.includes("not used by the upstream"))).toEqual([])
    }))

  it.effect("an empty API key fails at startup instead of answering 401 to everything", () =>
    Effect.gen(function*() {
      const model = scriptedModel({})
      for (const key of ["", "  ", " sekret"]) {
        const error = yield* Layer.launch(
          Gateway.layer({ apiKey: Redacted.make(key) }).pipe(Layer.provide(upstreamOf(model.layer)), Layer.provide(loopback))
        ).pipe(Effect.flip)
        expect(error._tag).toBe("GatewayOptionsError")
        expect(error.message).toContain("API key")
      }
    }))

  it.effect("a maxBodyBytes past Node's longest string fails at startup: such a body could not be read", () =>
    Effect.gen(function*() {
      expect(yield* Gateway.validateOptions({ maxBodyBytes: Gateway.MAX_BODY_BYTES_LIMIT })).toEqual({
        maxBodyBytes: 536_870_888
      })
      const error = yield* Effect.flip(Gateway.validateOptions({ maxBodyBytes: Gateway.MAX_BODY_BYTES_LIMIT + 1 }))
      expect(error.message).toBe(
        "maxBodyBytes must be at most 536870888 (Node's longest string, which a body that is no JSON is decoded " +
          "into whole, is that many characters), not 536870889"
      )
      // the bound is this Node's own
      expect(Gateway.MAX_BODY_BYTES_LIMIT).toBe(constants.MAX_STRING_LENGTH)
    }))
})
