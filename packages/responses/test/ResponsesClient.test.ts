/**
 * `ResponsesClient` against a fake `HttpClient` that records requests and answers with recorded bodies
 * (vercel/ai, Apache-2.0; pydantic-ai, MIT: see `fixtures/SOURCES.md`).
 */
import { AiError, type StreamPart } from "@effect-responses/core"
import { type ResponsesRequest, ResponsesClient } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { MULTISTEP, readFixture } from "./fixtures.js"
import { bySlot, collectSettled, foldSlot, payloadsOf, sseText } from "./utils.js"

const API_KEY = "sk-test-secret-0123456789"

interface Answer {
  readonly status?: number
  readonly headers?: Record<string, string>
  readonly body: BodyInit | null
}

/** A fake HttpClient: records every request and answers with `answer`. */
const fakeHttp = (answer: (request: HttpClientRequest.HttpClientRequest) => Answer) => {
  const requests: Array<HttpClientRequest.HttpClientRequest> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      requests.push(request)
      const { body, headers, status } = answer(request)
      return HttpClientResponse.fromWeb(request, new Response(body, { status: status ?? 200, headers: headers ?? {} }))
    })
  )
  return { requests, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

const bodyOf = (request: HttpClientRequest.HttpClientRequest): unknown => {
  const body = request.body
  assert.strictEqual(body._tag, "Uint8Array")
  return body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(body.body)) : undefined
}

const requestBody: ResponsesRequest.RequestBody = {
  model: "gpt-5.1-codex-max",
  input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "What is 12 + 7?" }] }],
  store: false,
  include: ["reasoning.encrypted_content"]
}

const withClient = <A, E>(
  effect: (client: ResponsesClient.Service) => Effect.Effect<A, E>,
  http: Layer.Layer<HttpClient.HttpClient>,
  options: ResponsesClient.Options = { apiKey: Redacted.make(API_KEY) }
) =>
  Effect.flatMap(ResponsesClient.ResponsesClient, effect).pipe(
    Effect.provide(ResponsesClient.layer(options).pipe(Layer.provide(http)))
  )

const sse = { "content-type": "text/event-stream" }

describe("ResponsesClient", () => {
  it.effect("createStream posts the body with stream: true and decodes the SSE answer", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ body: sseText(payloadsOf(MULTISTEP).slice(94)), headers: sse }))
      const { elements, error } = yield* withClient((client) => collectSettled(client.createStream(requestBody)), fake.layer)
      assert.isUndefined(error)
      expect(elements.map((e) => e.type)).toStrictEqual([
        "response_started",
        ...Array.from({ length: 9 }, () => "part"),
        "response_finished"
      ])
      assert.strictEqual(foldSlot(bySlot(elements)[0]!).text, "The final result is **570**.")
      const finished = elements.at(-1) as StreamPart.ResponseFinished
      assert.strictEqual(finished.finishReason, "stop")

      assert.strictEqual(fake.requests.length, 1)
      const request = fake.requests[0]!
      assert.strictEqual(request.method, "POST")
      assert.strictEqual(request.url, "https://api.openai.com/v1/responses")
      assert.strictEqual(request.headers["authorization"], `Bearer ${API_KEY}`)
      assert.strictEqual(request.headers["accept"], "text/event-stream")
      expect(bodyOf(request)).toStrictEqual({ ...requestBody, stream: true })
    }))

  it.effect("create posts with stream: false to the configured base URL and returns the JSON", () =>
    Effect.gen(function*() {
      const text = readFixture("responses-json/pai-gpt4o-text.json")
      const fake = fakeHttp(() => ({ body: text, headers: { "content-type": "application/json" } }))
      const json = yield* withClient((client) => client.create(requestBody), fake.layer, {
        baseUrl: "http://localhost:8080/v1/"
      })
      expect(json).toStrictEqual(JSON.parse(text))
      const request = fake.requests[0]!
      assert.strictEqual(request.url, "http://localhost:8080/v1/responses")
      assert.isUndefined(request.headers["authorization"])
      expect(bodyOf(request)).toStrictEqual({ ...requestBody, stream: false })
    }))

  it.effect("transformClient wraps the HttpClient of the context: its headers reach the server, the retries wrap it", () =>
    Effect.gen(function*() {
      const text = readFixture("responses-json/pai-gpt4o-text.json")
      let attempts = 0
      const fake = fakeHttp(() =>
        ++attempts === 1
          ? { status: 503, body: "{\"error\":{\"message\":\"busy\"}}" }
          : { body: text, headers: { "content-type": "application/json" } }
      )
      const seen: Array<string> = []
      const json = yield* withClient((client) => client.create(requestBody), fake.layer, {
        retry: { base: Duration.millis(0) },
        transformClient: (client) =>
          client.pipe(
            HttpClient.mapRequest(HttpClientRequest.setHeader("x-team", "search")),
            HttpClient.tapRequest((request) => Effect.sync(() => seen.push(request.url)))
          )
      })
      expect(json).toStrictEqual(JSON.parse(text))
      assert.deepStrictEqual(fake.requests.map((request) => request.headers["x-team"]), ["search", "search"])
      assert.strictEqual(seen.length, 2)
    }))

  it.effect("a 400 gives an HttpError from OpenAI's error body, with the request id", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({
        status: 400,
        body: readFixture("responses-json/pai-error-400-model-not-found.json"),
        headers: { "content-type": "application/json", "x-request-id": "req_123" }
      }))
      for (const run of [
        (client: ResponsesClient.Service) => client.create(requestBody),
        (client: ResponsesClient.Service) => Stream.runDrain(client.createStream(requestBody))
      ]) {
        const error = yield* Effect.flip(withClient(run, fake.layer))
        assert.instanceOf(error, AiError.HttpError)
        const http = error as AiError.HttpError
        assert.strictEqual(http.status, 400)
        assert.strictEqual(http.code, "model_not_found")
        assert.strictEqual(http.errorType, "invalid_request_error")
        assert.strictEqual(http.param, "model")
        assert.strictEqual(http.description, "The requested model 'gpt-5.2-proo' does not exist.")
        assert.strictEqual(http.requestId, "req_123")
        assert.isFalse(http.retryable)
        assert.isUndefined(http.retryAfter)
      }
    }))

  it.effect("a 429 with retry-after-ms gives retryAfter; insufficient_quota is not retryable", () =>
    Effect.gen(function*() {
      const quota = fakeHttp(() => ({
        status: 429,
        body: readFixture("responses-json/vai-openai-error-insufficient-quota.json"),
        headers: { "retry-after-ms": "1500" }
      }))
      const error = (yield* Effect.flip(withClient((client) => client.create(requestBody), quota.layer))) as AiError.HttpError
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.code, "insufficient_quota")
      assert.isTrue(Duration.equals(error.retryAfter!, Duration.millis(1500)))
      assert.isFalse(error.retryable)

      const rateLimited = fakeHttp(() => ({
        status: 429,
        body: JSON.stringify({ error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" } }),
        headers: { "retry-after": "2" }
      }))
      const limited = (yield* Effect.flip(
        withClient((client) => client.create(requestBody), rateLimited.layer, { retry: { times: 0 } })
      )) as AiError.HttpError
      assert.isTrue(limited.retryable)
      assert.isTrue(Duration.equals(limited.retryAfter!, Duration.seconds(2)))
      assert.isUndefined(limited.param)
    }))

  it.effect("the Authorization header carries the key; errors never do", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ status: 401, body: "Unauthorized: bad key" }))
      const error = yield* Effect.flip(withClient((client) => client.create(requestBody), fake.layer))
      assert.strictEqual(fake.requests[0]!.headers["authorization"], `Bearer ${API_KEY}`)
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual((error as AiError.HttpError).description, "Unauthorized: bad key")
      for (const rendered of [error.message, String(error), JSON.stringify(error)]) {
        assert.notInclude(rendered, API_KEY)
      }

      const failing = HttpClient.make((request) =>
        Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause: new Error("connect ECONNREFUSED") }))
      )
      const transport = yield* Effect.flip(
        withClient((client) => client.create(requestBody), Layer.succeed(HttpClient.HttpClient, failing), {
          apiKey: Redacted.make(API_KEY),
          retry: { times: 0 }
        })
      )
      assert.instanceOf(transport, AiError.TransportError)
      assert.include(transport.message, "ECONNREFUSED")
      assert.isTrue(transport.retryable)
      for (const rendered of [transport.message, String(transport), JSON.stringify(transport)]) {
        assert.notInclude(rendered, API_KEY)
      }
    }))

  it.effect("a body that breaks off mid-stream fails with TransportError after the parts that arrived", () =>
    Effect.gen(function*() {
      const head = new TextEncoder().encode(sseText(payloadsOf(MULTISTEP).slice(94, 100)))
      const fake = fakeHttp(() => ({
        headers: sse,
        body: (() => {
          let pulls = 0
          // Erroring in `start` would drop the queued bytes: break off on the second read instead.
          return new ReadableStream<Uint8Array>({
            pull(controller) {
              if (pulls++ === 0) controller.enqueue(head)
              else controller.error(new Error("socket hang up"))
            }
          })
        })()
      }))
      const { elements, error } = yield* withClient((client) => collectSettled(client.createStream(requestBody)), fake.layer)
      expect(elements.map((e) => e.type)).toStrictEqual(["response_started", "part", "part"])
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual(error.bytesReceived, head.length)
      assert.isFalse(error.retryable)
    }))

  it.effect("a body that ends after output without a terminal event: TruncatedStream, not retryable, not sent again", () =>
    Effect.gen(function*() {
      // a recorded response's first events, then the body ends cleanly
      const fake = fakeHttp(() => ({ headers: sse, body: sseText(payloadsOf(MULTISTEP).slice(94, 100)) }))
      const { elements, error } = yield* withClient((client) => collectSettled(client.createStream(requestBody)), fake.layer)
      expect(elements.map((e) => e.type)).toStrictEqual(["response_started", "part", "part"])
      assert.instanceOf(error, AiError.TruncatedStream)
      assert.strictEqual(error.responseId, elements[0]!.responseId)
      assert.isFalse(error.retryable)
      assert.strictEqual(fake.requests.length, 1)
    }))

  it.effect("an empty 200 body: TruncatedStream without a response, retryable (nothing of an answer came)", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ headers: sse, body: "" }))
      const { elements, error } = yield* withClient((client) => collectSettled(client.createStream(requestBody)), fake.layer)
      expect(elements).toStrictEqual([])
      assert.instanceOf(error, AiError.TruncatedStream)
      assert.isUndefined(error.responseId)
      assert.isTrue(error.retryable)
      // the client itself does not send it again: its retries end where the body begins
      assert.strictEqual(fake.requests.length, 1)
    }))

  it.effect("a stream's error event that echoes the API key does not put it into the error", () =>
    Effect.gen(function*() {
      const recorded = payloadsOf("responses-sse/vai-openai-error-event-response-failed.chunks.txt")
      const echoed = recorded.map((payload) =>
        payload.replace("You exceeded your current quota", `Key ${API_KEY} exceeded its current quota`)
      )
      assert.notDeepEqual(echoed, recorded)
      const fake = fakeHttp(() => ({ body: sseText(echoed), headers: sse }))
      const { error } = yield* withClient((client) => collectSettled(client.createStream(requestBody)), fake.layer)
      assert.instanceOf(error, AiError.StreamErrorEvent)
      assert.strictEqual(error.code, "insufficient_quota")
      assert.include(error.description, "Key [redacted] exceeded its current quota")
      for (const rendered of [error.message, String(error), JSON.stringify(error)]) {
        assert.notInclude(rendered, API_KEY)
      }
    }))

  it.effect("layerConfig reads OPENAI_API_KEY and OPENAI_BASE_URL; the key is optional", () =>
    Effect.gen(function*() {
      const fake = fakeHttp(() => ({ body: readFixture("responses-json/pai-gpt4o-text.json") }))
      const run = Effect.flatMap(ResponsesClient.ResponsesClient, (client) => client.create(requestBody)).pipe(
        Effect.provide(ResponsesClient.layerConfig().pipe(Layer.provide(fake.layer)))
      )
      yield* run.pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["OPENAI_API_KEY", API_KEY], ["OPENAI_BASE_URL", "http://127.0.0.1:9/v1"]]))
        )
      )
      yield* run.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
      assert.strictEqual(fake.requests[0]!.url, "http://127.0.0.1:9/v1/responses")
      assert.strictEqual(fake.requests[0]!.headers["authorization"], `Bearer ${API_KEY}`)
      assert.strictEqual(fake.requests[1]!.url, "https://api.openai.com/v1/responses")
      assert.isUndefined(fake.requests[1]!.headers["authorization"])
    }))
})
