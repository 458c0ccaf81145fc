/**
 * `ChatCompletionsClient` and `ChatCompletionsLanguageModel` against a fake `HttpClient` that records
 * requests and answers with recorded bodies (pydantic-ai, MIT: see `fixtures/SOURCES.md`).
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { AiError, LanguageModel, Prompt, type StreamPart } from "@effect-responses/core"
import { DroppingServer } from "@effect-responses/testing"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Tracer from "effect/Tracer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { readFixture, TEXT_SSE, TOOL_CALL_SSE } from "./fixtures.js"

const API_KEY = "sk-test-secret-0123456789"

interface Answer {
  readonly status?: number
  readonly headers?: Record<string, string>
  readonly body: string
}

const fakeHttp = (answer: (request: HttpClientRequest.HttpClientRequest, attempt: number) => Answer) => {
  const requests: Array<HttpClientRequest.HttpClientRequest> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      requests.push(request)
      const { body, headers, status } = answer(request, requests.length)
      return HttpClientResponse.fromWeb(request, new Response(body, { status: status ?? 200, headers: headers ?? {} }))
    })
  )
  return { requests, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

const bodyOf = (request: HttpClientRequest.HttpClientRequest): Record<string, unknown> => {
  const body = request.body
  return body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(body.body)) : {}
}

const model = (http: Layer.Layer<HttpClient.HttpClient>, options: ChatCompletionsClient.Options = {}) =>
  ChatCompletionsLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
    Layer.provide(ChatCompletionsClient.layer({ apiKey: Redacted.make(API_KEY), baseUrl: "http://x/v1/", ...options })),
    Layer.provide(http)
  )

const sse = { "content-type": "text/event-stream" }

describe("ChatCompletionsLanguageModel over ChatCompletionsClient", () => {
  it.effect("an error inside an HTTP 200 stream fails the call with the provider's code and message", () =>
    Effect.gen(function*() {
      const body = readFileSync(fileURLToPath(new URL("./captures/error-in-200-stream.sse", import.meta.url)), "utf8")
      const fake = fakeHttp(() => ({ body, headers: sse }))
      const result = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) =>
        Stream.runCollect(lm.stream(Prompt.user("Hi")))).pipe(Effect.provide(model(fake.layer)), Effect.flip)
      assert.instanceOf(result, AiError.StreamErrorEvent)
      assert.strictEqual(result.code, "502")
      assert.include(result.description, "upstream connection reset")
    }))

  it.effect("an in-stream error that echoes the API key does not put it into the error", () =>
    Effect.gen(function*() {
      const recorded = readFileSync(fileURLToPath(new URL("./captures/error-in-200-stream.sse", import.meta.url)), "utf8")
      const body = recorded.replace("upstream connection reset", `key ${API_KEY} was refused upstream`)
      const fake = fakeHttp(() => ({ body, headers: sse }))
      const result = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) =>
        Stream.runCollect(lm.stream(Prompt.user("Hi")))).pipe(Effect.provide(model(fake.layer)), Effect.flip)
      assert.instanceOf(result, AiError.StreamErrorEvent)
      assert.strictEqual(result.description, "Provider returned error: key [redacted] was refused upstream")
      assert.notInclude(result.message, API_KEY)
    }))

  it.effect("a body that ends after chunks without a finish reason or [DONE]: TruncatedStream, not retryable, not sent again", () =>
    Effect.gen(function*() {
      // the recorded get_capital call up to its last argument fragment, then the body ends cleanly
      const events = readFixture(TOOL_CALL_SSE).split("\n\n").filter((event) => event.trim() !== "")
      const cut = events.findIndex((event) => event.includes("\"finish_reason\":\"tool_calls\""))
      assert.isAbove(cut, 1)
      const fake = fakeHttp(() => ({ body: events.slice(0, cut).join("\n\n") + "\n\n", headers: sse }))
      const elements: Array<StreamPart.StreamPart> = []
      const error = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) =>
        Stream.runForEach(lm.stream(Prompt.user("Capital of the UK?")), (element) =>
          Effect.sync(() => void elements.push(element)))).pipe(Effect.provide(model(fake.layer)), Effect.flip)
      assert.instanceOf(error, AiError.TruncatedStream)
      assert.strictEqual(error.responseId, "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl")
      assert.isFalse(error.retryable)
      assert.strictEqual(fake.requests.length, 1)
      // what arrived is kept: the call with all of its arguments
      const [response] = MessageAggregator.fromIterable(elements)
      expect(response!.message.toolCalls.map((call) => [call.name, call.arguments])).toStrictEqual([
        ["get_capital", "{\"country\":\"UK\"}"]
      ])
    }))

  it.effect("an empty 200 body: TruncatedStream without a response, retryable (nothing of an answer came)", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ body: "", headers: sse }))
      const error = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) =>
        Stream.runDrain(lm.stream(Prompt.user("Capital of the UK?")))).pipe(Effect.provide(model(fake.layer)), Effect.flip)
      assert.instanceOf(error, AiError.TruncatedStream)
      assert.isUndefined(error.responseId)
      assert.isTrue(error.retryable)
      // the client itself does not send it again: its retries end where the body begins
      assert.strictEqual(fake.requests.length, 1)
    }))

  it.effect("stream posts to /chat/completions with stream and stream_options.include_usage, bearer key", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ body: readFixture(TOOL_CALL_SSE), headers: sse }))
      const elements = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) =>
        Stream.runCollect(lm.stream(Prompt.user("Capital of the UK?")))).pipe(Effect.provide(model(fake.layer)))
      assert.strictEqual(fake.requests.length, 1)
      const request = fake.requests[0]!
      assert.strictEqual(request.url, "http://x/v1/chat/completions")
      assert.strictEqual(request.headers.authorization, `Bearer ${API_KEY}`)
      expect(bodyOf(request)).toMatchObject({
        model: "gpt-4o-mini",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "Capital of the UK?" }]
      })
      assert.strictEqual(Array.from(elements).at(-1)!.type, "response_finished")
    }))

  it.effect("transformClient wraps the HttpClient of the context (a header added to every request)", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ body: readFixture("chat-json/vai-chat-openai-text.json") }))
      yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(Prompt.user("?"))).pipe(
        Effect.provide(model(fake.layer, {
          transformClient: HttpClient.mapRequest((request) => HttpClientRequest.setHeader(request, "x-team", "search"))
        }))
      )
      assert.strictEqual(fake.requests[0]!.headers["x-team"], "search")
    }))

  it.effect("generate posts stream: false and decodes the chat.completion", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ body: readFixture("chat-json/pai-chat-gpt4o-tool-call.json") }))
      const response = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(Prompt.user("?"))).pipe(
        Effect.provide(model(fake.layer))
      )
      assert.strictEqual(bodyOf(fake.requests[0]!).stream, false)
      assert.isUndefined(bodyOf(fake.requests[0]!).stream_options)
      assert.strictEqual(response.message.toolCalls[0]!.name, "get_user_country")
    }))

  it.effect("a 429 is retried after retry-after-ms, then succeeds", () =>
    Effect.gen(function*() {
      const fake = fakeHttp((_, attempt) =>
        attempt === 1
          ? { status: 429, headers: { "retry-after-ms": "1500" }, body: "{\"error\":{\"message\":\"slow down\",\"code\":\"rate_limit_exceeded\"}}" }
          : { body: readFixture("chat-json/vai-chat-openai-text.json") }
      )
      const fiber = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(Prompt.user("?"))).pipe(
        Effect.provide(model(fake.layer)),
        Effect.fork
      )
      yield* TestClock.adjust(Duration.millis(1499))
      assert.strictEqual(fake.requests.length, 1)
      yield* TestClock.adjust(Duration.millis(1))
      const response = yield* Fiber.join(fiber)
      assert.strictEqual(fake.requests.length, 2)
      assert.strictEqual(response.finishReason, "stop")
    }))

  it.effect("insufficient_quota and 400s are not retried; the key never appears in the error", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({
        status: 429,
        body: "{\"error\":{\"message\":\"You exceeded your current quota\",\"type\":\"insufficient_quota\",\"code\":\"insufficient_quota\"}}"
      }))
      const error = yield* Effect.flip(
        Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(Prompt.user("?"))).pipe(Effect.provide(model(fake.layer)))
      )
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.code, "insufficient_quota")
      assert.strictEqual(fake.requests.length, 1)
      assert.notInclude(JSON.stringify(error) + error.message, API_KEY)
    }))

  it.effect("5xx are retried maxRetries times with exponential backoff, then fail", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ status: 503, body: "" }))
      const fiber = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(Prompt.user("?"))).pipe(
        Effect.provide(model(fake.layer, { retry: { times: 3 } })),
        Effect.flip,
        Effect.fork
      )
      yield* TestClock.adjust(Duration.seconds(30))
      const error = yield* Fiber.join(fiber)
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.status, 503)
      assert.strictEqual(fake.requests.length, 4)
    }))

  it.effect("createStream inside a span: one span, parent of the HTTP request, with the response's id, model, finish reason and usage, ended with the stream", () =>
    Effect.gen(function*() {
      // the HTTP request's own span (`http.client POST`) is the current one here: its parent is ours
      let parent: Tracer.AnySpan | undefined
      const http = HttpClient.make((request) =>
        Effect.map(Effect.orDie(Effect.currentSpan), (span) => {
          parent = Option.getOrUndefined(span.parent)
          return HttpClientResponse.fromWeb(request, new Response(readFixture(TEXT_SSE), { headers: sse }))
        })
      )
      const client = yield* ChatCompletionsClient.make({ baseUrl: "http://x/v1" }).pipe(
        Effect.provideService(HttpClient.HttpClient, http)
      )
      // a span around the call: traced (without one, and no tracer installed, it is untraced: see below)
      yield* Effect.withSpan(Stream.runDrain(client.createStream({ model: "gpt-4o-mini", messages: [] })), "caller")
      const span = parent
      if (span?._tag !== "Span") return assert.fail("the HTTP request has no span of ours above it")
      assert.strictEqual(span.name, "ChatCompletionsClient.createStream")
      assert.strictEqual(span.status._tag, "Ended")
      expect(Object.fromEntries(span.attributes)).toStrictEqual({
        "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.id": "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": 78,
        "gen_ai.usage.output_tokens": 9
      })
    }))

  it.effect("createStream with no tracer installed: untraced (no span, no trace headers) unless inside a span", () =>
    Effect.gen(function*() {
      const sent: Array<{ readonly headers: Record<string, string>; readonly span: Tracer.AnySpan | undefined }> = []
      const http = HttpClient.make((request) =>
        Effect.map(Effect.option(Effect.currentSpan), (span) => {
          sent.push({ headers: { ...request.headers }, span: Option.getOrUndefined(span) })
          return HttpClientResponse.fromWeb(request, new Response(readFixture(TEXT_SSE), { headers: sse }))
        })
      )
      const client = yield* ChatCompletionsClient.make({ baseUrl: "http://x/v1" }).pipe(
        Effect.provideService(HttpClient.HttpClient, http)
      )
      const call = Stream.runCollect(client.createStream({ model: "gpt-4o-mini", messages: [] }))
      const untraced = yield* call
      const [traced, outer] = yield* Effect.withSpan(Effect.zip(call, Effect.orDie(Effect.currentSpan)), "caller")
      // the same parts either way
      expect(untraced).toStrictEqual(traced)
      assert.strictEqual(sent.length, 2)
      assert.isUndefined(sent[0]!.span)
      assert.notProperty(sent[0]!.headers, "traceparent")
      assert.notProperty(sent[0]!.headers, "b3")
      assert.include(sent[1]!.headers["traceparent"], outer.traceId)
      const parent = sent[1]!.span?._tag === "Span" ? Option.getOrUndefined(sent[1]!.span.parent) : undefined
      assert.strictEqual(parent?._tag === "Span" ? parent.name : undefined, "ChatCompletionsClient.createStream")
    }))
})

describe("ChatCompletionsClient on a connection the server closes after reading the request", () => {
  // A loopback server that answers the first request with a recorded completion, then reads every later one
  // whole and drops its connection without an answer (a backend that crashes on a request). The second
  // request goes on the kept-alive connection of the first.
  const droppingServer = DroppingServer.make(readFixture("chat-json/vai-chat-openai-text.json"))
  // undici checks an idle connection for a close already received (one `setImmediate`) before it writes a
  // request on it, and opens another connection for a request that comes meanwhile
  const idleConnectionChecked = Effect.promise(() => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve))))
  const body = { model: "gpt-4.1-nano", messages: [{ role: "user", content: "Hi" }] } as const

  for (const mode of ["create", "createStream"] as const) {
    it.live(`${mode} with retries off: the request reaches the server once, a TransportError closedBeforeResponse`, () =>
      Effect.gen(function*() {
        const server = yield* droppingServer
        const error = yield* Effect.gen(function*() {
          const client = yield* ChatCompletionsClient.ChatCompletionsClient
          yield* client.create(body)
          yield* idleConnectionChecked
          return yield* Effect.flip(mode === "create" ? client.create(body) : Stream.runDrain(client.createStream(body)))
        }).pipe(
          Effect.provide(
            ChatCompletionsClient.layer({ baseUrl: server.baseUrl, retry: { times: 0 } }).pipe(Layer.provide(NodeHttpClient.layerUndici))
          )
        )
        // the server got the second request once, on the first one's connection: not sent again on another
        assert.deepStrictEqual(server.received, ["/v1/chat/completions", "/v1/chat/completions (reused)"])
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual((error as AiError.TransportError).closedBeforeResponse, true)
        assert.include(error.message, "the server closed the connection after the request was sent, before any response")
      }).pipe(Effect.scoped))
  }
})
