/**
 * `ResponsesClient` errors, retries and cancellation: every recorded error body (pydantic-ai, MIT;
 * vercel/ai, Apache-2.0: see `fixtures/SOURCES.md`) becomes a typed `HttpError`; retries run on the
 * `TestClock` (no real sleeps); interrupting the caller closes the connection of a loopback server.
 */
import { AiError } from "@effect-responses/core"
import { type ResponsesRequest, ResponsesClient } from "@effect-responses/responses"
import { DroppingServer } from "@effect-responses/testing"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { createServer } from "node:http"
import { MULTISTEP, readFixture } from "./fixtures.js"
import { payloadsOf, sseText } from "./utils.js"

const requestBody: ResponsesRequest.RequestBody = {
  model: "gpt-4o",
  input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
  store: false
}

const OK = readFixture("responses-json/pai-gpt4o-text.json")

interface Answer {
  readonly status?: number
  readonly headers?: Record<string, string>
  readonly body?: BodyInit
  readonly fail?: string
}

/** A fake HttpClient answering the n-th request with `answers[n]` (the last one repeats). */
const scripted = (answers: ReadonlyArray<Answer>) => {
  let count = 0
  const client = HttpClient.make((request) =>
    Effect.suspend(() => {
      const answer = answers[Math.min(count, answers.length - 1)]!
      count++
      if (answer.fail !== undefined) {
        return Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause: new Error(answer.fail) }))
      }
      return Effect.succeed(
        HttpClientResponse.fromWeb(
          request,
          new Response(answer.body ?? OK, { status: answer.status ?? 200, headers: answer.headers ?? {} })
        )
      )
    })
  )
  return { count: () => count, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

/**
 * Timeouts off: these tests watch the `TestClock`'s pending sleeps to see the retry waits, and a timeout
 * timer is a sleep too (the timeouts have their own tests in the wire package).
 */
const NO_TIMEOUTS = { headersTimeout: false, idleTimeout: false } as const

const create = (http: Layer.Layer<HttpClient.HttpClient>, options: ResponsesClient.Options = {}) =>
  Effect.flatMap(ResponsesClient.ResponsesClient, (client) => client.create(requestBody)).pipe(
    Effect.provide(ResponsesClient.layer({ ...NO_TIMEOUTS, ...options }).pipe(Layer.provide(http)))
  )

/**
 * `createStream` with a 1-minute idle timeout, forked: the parts received so far, and the fiber ending with
 * the stream's error.
 */
const streamUntilFailure = (http: Layer.Layer<HttpClient.HttpClient>) =>
  Effect.gen(function*() {
    const received: Array<unknown> = []
    const fiber = yield* Effect.flatMap(ResponsesClient.ResponsesClient, (client) =>
      Stream.runForEach(client.createStream(requestBody), (part) => Effect.sync(() => received.push(part)))).pipe(
        Effect.provide(ResponsesClient.layer({ idleTimeout: "1 minute" }).pipe(Layer.provide(http))),
        Effect.flip,
        Effect.fork
      )
    return { fiber, received }
  })

/** Lets the forked call run until it sleeps (or ends). */
const settle = Effect.gen(function*() {
  for (let i = 0; i < 50 && (yield* TestClock.sleeps()).length === 0; i++) yield* Effect.yieldNow()
})

const errorBody = (code: string, type = "requests") => JSON.stringify({ error: { message: "Rate limit reached", type, param: null, code } })

describe("ResponsesClient errors", () => {
  const cases: ReadonlyArray<readonly [string, number, Partial<AiError.HttpError>]> = [
    ["responses-json/pai-error-400-decimal-below-min.json", 400, { code: "decimal_below_min_value", param: "temperature", errorType: "invalid_request_error" }],
    ["responses-json/pai-error-400-model-not-found.json", 400, { code: "model_not_found", param: "model", errorType: "invalid_request_error" }],
    ["responses-json/pai-error-400-reasoning-without-following-item.json", 400, { param: "input", errorType: "invalid_request_error" }],
    ["responses-json/vai-openai-error-400-no-tool-call-for-output.json", 400, { param: "input", errorType: "invalid_request_error" }],
    ["responses-json/vai-openai-error-400-temperature-unsupported.json", 400, { param: "temperature", errorType: "invalid_request_error" }],
    ["responses-json/vai-openai-error-insufficient-quota.json", 429, { code: "insufficient_quota", errorType: "insufficient_quota" }],
    ["chat-json/pai-chat-error-400-o1mini-system-role.json", 400, { code: "unsupported_value", param: "messages[0].role", errorType: "invalid_request_error" }],
    ["chat-json/vai-chat-error-400-max-tokens-unsupported.json", 400, { code: "unsupported_parameter", param: "max_tokens", errorType: "invalid_request_error" }]
  ]
  for (const [file, status, expected] of cases) {
    it.effect(`${file} -> HttpError ${status} with type, code, param, message and request id; not retried`, () =>
      Effect.gen(function*() {
        const text = readFixture(file)
        const http = scripted([{ status, body: text, headers: { "x-request-id": "req_abc123" } }])
        const error = yield* Effect.flip(create(http.layer))
        assert.instanceOf(error, AiError.HttpError)
        const httpError = error as AiError.HttpError
        const wire = (JSON.parse(text) as { readonly error: { readonly message: string; readonly code: string | null } }).error
        expect({
          status: httpError.status,
          description: httpError.description,
          errorType: httpError.errorType,
          code: httpError.code,
          param: httpError.param,
          requestId: httpError.requestId
        }).toStrictEqual({
          status,
          description: wire.message,
          errorType: expected.errorType,
          code: expected.code,
          param: expected.param,
          requestId: "req_abc123"
        })
        assert.isFalse(httpError.retryable)
        assert.strictEqual(http.count(), 1)
        // One line, status first, then the server's words, then the details that identify the request.
        assert.notInclude(httpError.message, "\n")
        assert.isTrue(httpError.message.startsWith(`HTTP ${status}: ${wire.message}`))
        assert.include(httpError.message, "request req_abc123")
      }))
  }
})

describe("ResponsesClient retries", () => {
  it.effect("retryable statuses are retried with backoff until an answer comes", () =>
    Effect.gen(function*() {
      for (const status of [408, 409, 429, 500, 502, 503]) {
        const http = scripted([
          { status, body: status === 429 ? errorBody("rate_limit_exceeded") : "" },
          { status, body: "" },
          {}
        ])
        const fiber = yield* Effect.fork(create(http.layer))
        yield* settle
        assert.strictEqual(http.count(), 1, `status ${status}`)
        // First wait: 500 ms with a jitter of 0.8 to 1.2.
        yield* TestClock.adjust("399 millis")
        assert.strictEqual(http.count(), 1)
        yield* TestClock.adjust("201 millis")
        yield* settle
        assert.strictEqual(http.count(), 2)
        yield* TestClock.adjust("1200 millis")
        const json = yield* Fiber.join(fiber)
        assert.strictEqual(http.count(), 3)
        assert.strictEqual((json as { readonly id: string }).id, "resp_68c2e8c147ac819491bcd667055eadbc02e845978fbbb592")
      }
    }))

  it.effect("connection failures are retried", () =>
    Effect.gen(function*() {
      const http = scripted([{ fail: "connect ECONNREFUSED" }, {}])
      const fiber = yield* Effect.fork(create(http.layer))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      assert.strictEqual(http.count(), 2)
    }))

  it.effect("other 4xx and insufficient_quota fail at once, without waiting", () =>
    Effect.gen(function*() {
      for (const answer of [
        { status: 400, body: "" },
        { status: 401, body: "" },
        { status: 404, body: "" },
        { status: 422, body: "" },
        { status: 429, body: readFixture("responses-json/vai-openai-error-insufficient-quota.json"), headers: { "retry-after": "1" } }
      ]) {
        const http = scripted([answer, {}])
        const error = yield* Effect.flip(create(http.layer))
        assert.instanceOf(error, AiError.HttpError)
        assert.strictEqual(http.count(), 1)
      }
    }))

  it.effect("retry-after-ms and retry-after set the wait, up to maxRetryAfter (60 s) included", () =>
    Effect.gen(function*() {
      const waits: ReadonlyArray<readonly [Record<string, string>, number]> = [
        [{ "retry-after-ms": "3000" }, 3000],
        [{ "retry-after": "7" }, 7000],
        [{ "retry-after": "60" }, 60_000]
      ]
      for (const [headers, wait] of waits) {
        const http = scripted([{ status: 429, body: errorBody("rate_limit_exceeded"), headers }, {}])
        const fiber = yield* Effect.fork(create(http.layer))
        yield* settle
        yield* TestClock.adjust(wait - 1)
        assert.strictEqual(http.count(), 1, JSON.stringify(headers))
        yield* TestClock.adjust(1)
        yield* Fiber.join(fiber)
        assert.strictEqual(http.count(), 2)
      }
    }))

  it.effect("a retry-after longer than maxRetryAfter is not waited for: the error comes back at once, with its retryAfter", () =>
    Effect.gen(function*() {
      for (const headers of [{ "retry-after": "3600" }, { "retry-after-ms": "61000" }]) {
        const http = scripted([{ status: 429, body: errorBody("rate_limit_exceeded"), headers }, {}])
        const error = yield* Effect.flip(create(http.layer))
        assert.instanceOf(error, AiError.HttpError)
        assert.strictEqual(http.count(), 1, JSON.stringify(headers))
        assert.isTrue(error.retryable)
        assert.isAbove(Duration.toMillis(error.retryAfter!), 60_000)
      }
      const longer = scripted([{ status: 429, body: errorBody("rate_limit_exceeded"), headers: { "retry-after": "90" } }, {}])
      const fiber = yield* Effect.fork(create(longer.layer, { retry: { maxRetryAfter: "2 minutes" } }))
      yield* settle
      yield* TestClock.adjust("90 seconds")
      yield* Fiber.join(fiber)
      assert.strictEqual(longer.count(), 2)
    }))

  it.effect("the number of retries is bounded and configurable; times: 0 turns them off", () =>
    Effect.gen(function*() {
      const http = scripted([{ status: 500, body: "" }])
      const fiber = yield* Effect.fork(create(http.layer, { retry: { times: 3, base: "1 second", maxDelay: "2 seconds" } }))
      yield* TestClock.adjust("1 minute")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(http.count(), 4)

      const off = scripted([{ status: 500, body: "" }, {}])
      yield* Effect.flip(create(off.layer, { retry: { times: 0 } }))
      assert.strictEqual(off.count(), 1)
    }))

  it.effect("a stream that stalls mid-body fails with an idle timeout after the parts that arrived, not sent again", () =>
    Effect.gen(function*() {
      const head = new TextEncoder().encode(sseText(payloadsOf(MULTISTEP).slice(94, 100)))
      let pulls = 0
      const http = scripted([{
        headers: { "content-type": "text/event-stream" },
        body: new ReadableStream<Uint8Array>({
          pull(controller) {
            if (pulls++ === 0) controller.enqueue(head)
            else return new Promise<void>(() => {})
          }
        })
      }, {}])
      const { fiber, received } = yield* streamUntilFailure(http.layer)
      yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 50)))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual(error.timeout, "idle")
      assert.strictEqual(error.bytesReceived, head.length)
      assert.isFalse(error.retryable)
      assert.isAbove(received.length, 0)
      assert.strictEqual(http.count(), 1)
    }))

  it.effect("event: ping keep-alives are skipped whatever their data, and are silence to the idle timeout", () =>
    Effect.gen(function*() {
      const frames = readFixture("responses-sse/pai-gpt4omini-text-logprobs.sse").split("\n\n")
      const ping = "event: ping\ndata: 2026-12-03 14:00:00.000000"
      const sse = { "content-type": "text/event-stream" }
      const stream = (http: Layer.Layer<HttpClient.HttpClient>) =>
        Effect.flatMap(ResponsesClient.ResponsesClient, (client) =>
          Stream.runCollect(client.createStream(requestBody))).pipe(
            Effect.map(Chunk.toReadonlyArray),
            Effect.provide(ResponsesClient.layer({ idleTimeout: "1 minute" }).pipe(Layer.provide(http)))
          )
      // the recording, then the same with pings after its second delta and before its end: the same parts
      const plain = yield* stream(scripted([{ headers: sse, body: frames.join("\n\n") }]).layer)
      const pinged = [...frames.slice(0, 7), ping, "event: ping\ndata: ping", ...frames.slice(7, -2), ping, ...frames.slice(-2)]
      expect(yield* stream(scripted([{ headers: sse, body: pinged.join("\n\n") }]).layer)).toStrictEqual(plain)
      // a server that pings every 40 s after two deltas: the idle timeout (1 minute) still ends the call
      let controller: ReadableStreamDefaultController<Uint8Array> | undefined
      const http = scripted([{
        headers: sse,
        body: new ReadableStream<Uint8Array>({
          start(c) {
            controller = c
            c.enqueue(new TextEncoder().encode(`${frames.slice(0, 7).join("\n\n")}\n\n`))
          }
        })
      }])
      const { fiber, received } = yield* streamUntilFailure(http.layer)
      const realPause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 50)))
      yield* realPause
      yield* TestClock.adjust("40 seconds")
      controller!.enqueue(new TextEncoder().encode(`${ping}\n\n`))
      yield* realPause
      yield* TestClock.adjust("20 seconds")
      const error = yield* Fiber.join(fiber)
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual(error.timeout, "idle")
      // the parts of the two deltas arrived: started, the message's deltas
      expect(received).toStrictEqual(plain.slice(0, received.length))
      assert.isAbove(received.length, 2)
    }))

  it.effect("a stream that breaks off after its first byte is not sent again", () =>
    Effect.gen(function*() {
      const head = new TextEncoder().encode(sseText(payloadsOf(MULTISTEP).slice(94, 100)))
      let pulls = 0
      const http = scripted([{
        headers: { "content-type": "text/event-stream" },
        body: new ReadableStream<Uint8Array>({
          pull(controller) {
            if (pulls++ === 0) controller.enqueue(head)
            else controller.error(new Error("socket hang up"))
          }
        })
      }, {}])
      const error = yield* Effect.flatMap(ResponsesClient.ResponsesClient, (client) =>
        Stream.runDrain(client.createStream(requestBody))).pipe(
          Effect.provide(ResponsesClient.layer(NO_TIMEOUTS).pipe(Layer.provide(http.layer))),
          Effect.flip
        )
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual(http.count(), 1)
      assert.isTrue(Chunk.isEmpty(yield* TestClock.sleeps()))
    }))
})

describe("ResponsesClient cancellation", () => {
  it.live("interrupting the calling fiber closes the connection to the server", () =>
    Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      const address = server.address
      assert.strictEqual(address._tag, "TcpAddress")
      const port = address._tag === "TcpAddress" ? address.port : 0
      for (const mode of ["create", "createStream"] as const) {
        yield* Effect.scoped(Effect.gen(function*() {
          const arrived = yield* Deferred.make<void>()
          const closed = yield* Deferred.make<void>()
          yield* server.serve(
            Effect.gen(function*() {
              yield* Deferred.succeed(arrived, undefined)
              if (mode === "createStream") {
                // Headers and a first event, then nothing: the client is reading the body when interrupted.
                // The body stream never ends by itself: it stops only when the connection closes.
                return HttpServerResponse.stream(
                  Stream.concat(Stream.make(new TextEncoder().encode(sseText(payloadsOf(MULTISTEP).slice(0, 2)))), Stream.never)
                    .pipe(Stream.ensuring(Deferred.succeed(closed, undefined))),
                  { contentType: "text/event-stream" }
                )
              }
              return yield* Effect.never
            }).pipe(
              Effect.onInterrupt(() => Deferred.succeed(closed, undefined)),
              // The handler fiber inherits the runtime flags of the test fiber that called `serve`.
              Effect.interruptible
            )
          )
          const call = Effect.flatMap(
            ResponsesClient.ResponsesClient,
            (client) => mode === "create" ? client.create(requestBody) : Stream.runDrain(client.createStream(requestBody))
          ).pipe(
            Effect.provide(
              ResponsesClient.layer({ baseUrl: `http://127.0.0.1:${port}/v1`, retry: { times: 0 } }).pipe(
                Layer.provide(NodeHttpClient.layerUndici)
              )
            )
          )
          const fiber = yield* Effect.fork(call)
          yield* Deferred.await(arrived)
          yield* Fiber.interrupt(fiber)
          // The server's handler is interrupted only when its connection closes.
          yield* Deferred.await(closed)
        }))
      }
    }).pipe(
      Effect.scoped,
      Effect.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    ))
})

describe("ResponsesClient on a connection the server closes after reading the request", () => {
  // A loopback server that answers the first request with a recorded response, then reads every later one
  // whole and drops its connection without an answer (a backend that crashes on a request). The second
  // request goes on the kept-alive connection of the first.
  const droppingServer = DroppingServer.make(OK)
  // undici checks an idle connection for a close already received (one `setImmediate`) before it writes a
  // request on it, and opens another connection for a request that comes meanwhile
  const idleConnectionChecked = Effect.promise(() => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve))))

  for (const mode of ["create", "createStream"] as const) {
    it.live(`${mode} with retries off: the request reaches the server once, a TransportError closedBeforeResponse`, () =>
      Effect.gen(function*() {
        const server = yield* droppingServer
        const error = yield* Effect.gen(function*() {
          const client = yield* ResponsesClient.ResponsesClient
          yield* client.create(requestBody)
          yield* idleConnectionChecked
          return yield* Effect.flip(mode === "create" ? client.create(requestBody) : Stream.runDrain(client.createStream(requestBody)))
        }).pipe(
          Effect.provide(
            ResponsesClient.layer({ baseUrl: server.baseUrl, retry: { times: 0 } }).pipe(Layer.provide(NodeHttpClient.layerUndici))
          )
        )
        // the server got the second request once, on the first one's connection: not sent again on another
        assert.deepStrictEqual(server.received, ["/v1/responses", "/v1/responses (reused)"])
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual((error as AiError.TransportError).closedBeforeResponse, true)
        assert.include(error.message, "the server closed the connection after the request was sent, before any response")
      }).pipe(Effect.scoped))
  }
})
