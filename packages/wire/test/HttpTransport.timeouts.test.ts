/**
 * No call waits forever, no error body is read whole, and the API key is cut out of errors only when it is
 * long enough to be a secret: `HttpTransport` against fake `HttpClient`s that never answer, stall mid-body
 * or send an endless error body. Time is the `TestClock`'s.
 */
import { AiError } from "@effect-responses/core"
import { DroppingServer } from "@effect-responses/testing"
import { Framing, HttpTransport } from "@effect-responses/wire"
import { assert, describe, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"

/** A client that never answers; counts attempts and the attempts that were aborted (interrupted). */
const silentServer = () => {
  const state = { attempts: 0, aborted: 0 }
  const client = HttpClient.make(() =>
    Effect.suspend(() => {
      state.attempts++
      return Effect.never
    }).pipe(Effect.onInterrupt(() => Effect.sync(() => state.aborted++)))
  )
  return { state, client }
}

/**
 * A client answering `status` with a body that sends `first` and then `rest` chunks (forever when `rest` is
 * `Infinity`), then stalls (or ends, with `end`).
 */
const streamingServer = (options: {
  readonly status: number
  readonly first: Uint8Array
  readonly rest?: number
  readonly chunk?: Uint8Array
  readonly end?: boolean
  /** Answer with a response that has a stream of its own (not the platform's web `Response` wrapper). */
  readonly own?: boolean
}) => {
  const state = { pulledBytes: 0, cancelled: false }
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(options.first)
          state.pulledBytes += options.first.length
        },
        pull(controller) {
          if (options.rest === undefined || sent >= options.rest) {
            if (options.end === true) controller.close()
            return options.end === true ? undefined : new Promise<void>(() => {})
          }
          sent++
          controller.enqueue(options.chunk!)
          state.pulledBytes += options.chunk!.length
          return undefined
        },
        cancel() {
          state.cancelled = true
        }
      })
      const web = HttpClientResponse.fromWeb(request, new Response(body, { status: options.status }))
      return options.own === true ? Object.create(web, { stream: { value: web.stream } }) : web
    })
  )
  return { state, client }
}

/** Lets real asynchronous work (a web stream's reads) happen while the test clock stands still. */
const realPause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 30)))

/**
 * A client answering 200 with an event stream whose chunks the test writes (`push`), one at a time; with
 * `own`, a response with a stream of its own (not the platform's web `Response` wrapper).
 */
const pushServer = (own: boolean) => {
  const state = { cancelled: false }
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          controller = c
        },
        cancel() {
          state.cancelled = true
        }
      })
      const web = HttpClientResponse.fromWeb(
        request,
        new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } })
      )
      return own ? Object.create(web, { stream: { value: web.stream } }) : web
    })
  )
  const push = (text: string) =>
    Effect.zipRight(Effect.sync(() => controller!.enqueue(new TextEncoder().encode(text))), realPause)
  return { state, client, push }
}

const transportOver = (client: HttpClient.HttpClient, options: HttpTransport.Options = {}) =>
  HttpTransport.make("/responses", { retry: { times: 0 }, ...options }).pipe(
    Effect.provideService(HttpClient.HttpClient, client)
  )

/**
 * Keep-alives as real servers send them: a comment, a named ping with a timestamp (old sse-starlette), a
 * ping without data, an event the decoder skips (`{}`), fields that dispatch no event, a line of spaces.
 */
const keepAlives = [
  ": ping\n\n",
  "event: ping\r\ndata: 2026-12-03 14:00:00.000000\r\n\r\n",
  "event: ping\n\n",
  "data: {}\n\n",
  "id: 5\n\n",
  "retry: 1000\n\n",
  "data:\n\n",
  "  \n\n"
]

/**
 * A decoder of an event stream of JSON objects that skips `event: ping`, empty data (`data:` dispatches an
 * event of no data by the SSE rules) and empty objects, as the Chat Completions decoder does.
 */
const keepAliveSkipping = () =>
  Framing.bytesDecoder(
    () => Framing.makeSseFramer(Framing.DEFAULT_MAX_EVENT_SIZE, (event, data) => (event === "ping" ? undefined : data)),
    (): Framing.PayloadDecoder<unknown, never> => ({
      feed: (data, out) => {
        if (data === "") return undefined
        const value = JSON.parse(data) as object
        if (Object.keys(value).length > 0) out.push(value)
        return undefined
      },
      end: () => undefined,
      takeLogs: () => []
    })
  )

describe("HttpTransport timeouts", () => {
  it.effect("a server that never sends headers fails with a retryable headers timeout after 10 minutes, aborting the request", () =>
    Effect.gen(function*() {
      const server = silentServer()
      const transport = yield* transportOver(server.client)
      const fiber = yield* Effect.fork(transport.execute({ model: "m" }, true))
      yield* TestClock.adjust("9 minutes")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 minute")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual(error.timeout, "headers")
      assert.isTrue(error.retryable)
      assert.include(error.message, "10m")
      assert.include(error.message, "https://api.openai.com/v1/responses")
      assert.strictEqual(server.state.aborted, 1)
    }))

  it.effect("an error body or a whole answer that does not arrive within the headers timeout fails as one, saying the body was late", () =>
    Effect.gen(function*() {
      for (const [status, stream] of [[500, true], [200, false]] as const) {
        // headers at once, then a body that stalls (the idle timeout far off)
        const server = streamingServer({ status, first: new TextEncoder().encode("{\"error\":") })
        const transport = yield* transportOver(server.client, { headersTimeout: "30 seconds", idleTimeout: "1 hour" })
        const call = stream
          ? transport.execute({ model: "m" }, true)
          : Effect.flatMap(transport.execute({ model: "m" }, false), transport.readJson)
        const fiber = yield* Effect.fork(call)
        yield* realPause
        yield* TestClock.adjust("30 seconds")
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual(error.timeout, "headers")
        assert.include(error.message, "the response body did not arrive whole within 30s")
        assert.notInclude(error.message, "no response headers")
      }
    }))

  it.effect("the request timeout is per attempt, and retried as the retry options say", () =>
    Effect.gen(function*() {
      const server = silentServer()
      const transport = yield* transportOver(server.client, {
        headersTimeout: "30 seconds",
        retry: { times: 2, base: "1 second" }
      })
      const fiber = yield* Effect.fork(transport.execute({ model: "m" }, false))
      for (let i = 0; i < 20; i++) yield* TestClock.adjust("10 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual(error.timeout, "headers")
      assert.strictEqual(server.state.attempts, 3)
      assert.strictEqual(server.state.aborted, 3)
    }))

  it.live("on the live clock both timeouts are timers of their own: no headers in time, then a stalled body, fail", () =>
    Effect.gen(function*() {
      const silent = silentServer()
      const quiet = yield* transportOver(silent.client, { headersTimeout: "50 millis" })
      const headers = yield* Effect.flip(quiet.execute({ model: "m" }, true))
      assert.instanceOf(headers, AiError.TransportError)
      assert.strictEqual(headers.timeout, "headers")
      assert.strictEqual(silent.state.aborted, 1)
      const stalled = streamingServer({ status: 200, first: new TextEncoder().encode("data: {}\n\n") })
      const transport = yield* transportOver(stalled.client, { idleTimeout: "50 millis" })
      const response = yield* transport.execute({ model: "m" }, true)
      const idle = yield* Effect.flip(Stream.runDrain(transport.bodyStream(response)))
      assert.strictEqual(idle.timeout, "idle")
      assert.strictEqual(idle.bytesReceived, 10)
      assert.isTrue(stalled.state.cancelled)
    }))

  it.effect("headersTimeout: false waits as long as it takes", () =>
    Effect.gen(function*() {
      const server = silentServer()
      const transport = yield* transportOver(server.client, { headersTimeout: false })
      const fiber = yield* Effect.fork(transport.execute({ model: "m" }, true))
      yield* TestClock.adjust("3 hours")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(server.state.aborted, 1)
    }))

  for (const kind of ["a web Response", "a body of its own"] as const) {
    it.effect(`a body that stalls fails with an idle timeout after the bytes that arrived, cancelling the body (${kind})`, () =>
      Effect.gen(function*() {
        const server = streamingServer({ own: kind === "a body of its own", status: 200, first: new TextEncoder().encode("data: {}\n\n") })
        const transport = yield* transportOver(server.client, { idleTimeout: "30 seconds" })
        const response = yield* transport.execute({ model: "m" }, true)
        const received: Array<Uint8Array> = []
        const fiber = yield* Effect.fork(
          Stream.runForEach(transport.bodyStream(response), (chunk) => Effect.sync(() => received.push(chunk)))
        )
        yield* realPause
        assert.strictEqual(received.length, 1)
        yield* TestClock.adjust("29 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
        yield* TestClock.adjust("1 second")
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit))
        const error = yield* Effect.flip(exit)
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual(error.timeout, "idle")
        assert.strictEqual(error.bytesReceived, 10)
        assert.isFalse(error.retryable)
        assert.include(error.message, "after 10 bytes of the body")
        yield* realPause
        assert.isTrue(server.state.cancelled)
      }))
  }

  it.effect("a body silent from its start fails with a retryable idle timeout (no byte arrived)", () =>
    Effect.gen(function*() {
      const server = streamingServer({ status: 200, first: new Uint8Array(0) })
      const transport = yield* transportOver(server.client, { idleTimeout: "30 seconds" })
      const response = yield* transport.execute({ model: "m" }, true)
      const fiber = yield* Effect.fork(Stream.runDrain(transport.bodyStream(response)))
      yield* realPause
      yield* TestClock.adjust("30 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual(error.timeout, "idle")
      assert.strictEqual(error.bytesReceived, 0)
      assert.isTrue(error.retryable)
    }))

  for (const kind of ["a web Response", "a body of its own"] as const) {
    it.effect(`the idle timeout counts the server's silence, not the time a slow consumer takes (${kind})`, () =>
      Effect.gen(function*() {
        const chunk = new TextEncoder().encode("data: {}\n\n")
        const server = streamingServer({ own: kind === "a body of its own", status: 200, first: chunk, rest: 39, chunk, end: true })
        const transport = yield* transportOver(server.client, { idleTimeout: "30 seconds" })
        const response = yield* transport.execute({ model: "m" }, true)
        let received = 0
        const fiber = yield* Effect.fork(
          Stream.runForEach(transport.bodyStream(response), () =>
            Effect.zipRight(Effect.sleep("1 minute"), Effect.sync(() => received++)))
        )
        for (let i = 0; i < 40; i++) {
          yield* realPause
          yield* TestClock.adjust("1 minute")
        }
        yield* Fiber.join(fiber)
        assert.strictEqual(received, 40)
      }))
  }

  for (const kind of ["a web Response", "a body of its own"] as const) {
    it.effect(`an event stream that only pings (SSE comments) after its first event fails with the idle timeout (${kind})`, () =>
      Effect.gen(function*() {
        const server = pushServer(kind === "a body of its own")
        const transport = yield* transportOver(server.client, { idleTimeout: "30 seconds" })
        const response = yield* transport.execute({ model: "m" }, true)
        let received = 0
        const fiber = yield* Effect.fork(
          Stream.runForEach(transport.bodyStream(response), (chunk) => Effect.sync(() => (received += chunk.length)))
        )
        yield* server.push("data: {}\n\n")
        // a keep-alive comment every 10 seconds, as a server sends while its model works
        for (let i = 0; i < 2; i++) {
          yield* TestClock.adjust("10 seconds")
          yield* server.push(": ping\n\n")
        }
        yield* TestClock.adjust("9 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
        yield* TestClock.adjust("1 second")
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual(error.timeout, "idle")
        // the comments were handed on all the same
        assert.strictEqual(received, 26)
        assert.strictEqual(error.bytesReceived, 26)
        assert.include(error.message, "no event for 30s")
        yield* realPause
        assert.isTrue(server.state.cancelled)
      }))

    it.effect(`an event stream that only pings from its start fails with the idle timeout (${kind})`, () =>
      Effect.gen(function*() {
        const server = pushServer(kind === "a body of its own")
        const transport = yield* transportOver(server.client, { idleTimeout: "30 seconds" })
        const response = yield* transport.execute({ model: "m" }, true)
        const fiber = yield* Effect.fork(Stream.runDrain(transport.bodyStream(response)))
        for (let i = 0; i < 3; i++) {
          yield* server.push(": OPENROUTER PROCESSING\r\n\r\n")
          yield* TestClock.adjust("10 seconds")
        }
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual(error.timeout, "idle")
      }))

    it.effect(`a decoded event stream: only what the decoder decodes is activity, keep-alives of every kind are not (${kind})`, () =>
      Effect.gen(function*() {
        const server = pushServer(kind === "a body of its own")
        const transport = yield* transportOver(server.client, { idleTimeout: "30 seconds" })
        const response = yield* transport.execute({ model: "m" }, true)
        const decoded: Array<unknown> = []
        const fiber = yield* Effect.fork(
          Stream.runForEach(transport.decodeBody(response, keepAliveSkipping), (element) => Effect.sync(() => decoded.push(element)))
        )
        yield* server.push("data: {\"n\":1}\n\n")
        yield* TestClock.adjust("10 seconds")
        yield* server.push("data: {\"n\":2}\n\n") // decoded at 10 s: deadline 40 s
        // then keep-alives only, every 3 seconds
        for (const keepAlive of keepAlives) {
          yield* TestClock.adjust("3 seconds")
          yield* server.push(keepAlive)
        }
        yield* TestClock.adjust(`${29 - 3 * keepAlives.length} seconds`)
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
        yield* TestClock.adjust("1 second")
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual(error.timeout, "idle")
        assert.deepStrictEqual(decoded, [{ n: 1 }, { n: 2 }])
        yield* realPause
        assert.isTrue(server.state.cancelled)
      }))

    it.effect(`an event split across chunks is activity, a comment split across chunks is not (${kind})`, () =>
      Effect.gen(function*() {
        const server = pushServer(kind === "a body of its own")
        const transport = yield* transportOver(server.client, { idleTimeout: "30 seconds" })
        const response = yield* transport.execute({ model: "m" }, true)
        const decoder = new TextDecoder()
        let text = ""
        const fiber = yield* Effect.fork(
          Stream.runForEach(transport.bodyStream(response), (chunk) => Effect.sync(() => (text += decoder.decode(chunk))))
        )
        yield* server.push("data: {\"n\":1}\n\n: pi") // an event, then the start of a comment: deadline 30 s
        yield* TestClock.adjust("20 seconds")
        yield* server.push("ng\r\n\r\nda") // the comment's rest, then a field line begins: deadline 50 s
        yield* TestClock.adjust("20 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
        yield* server.push("ta: {}\n\n: p") // the field line's rest: deadline 70 s
        yield* TestClock.adjust("20 seconds")
        yield* server.push("ing\n\n") // only the comment's rest: the deadline stays at 70 s
        yield* TestClock.adjust("9 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
        yield* TestClock.adjust("1 second")
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.strictEqual(error.timeout, "idle")
        assert.strictEqual(text, "data: {\"n\":1}\n\n: ping\r\n\r\ndata: {}\n\n: ping\n\n")
      }))
  }

  it.effect("a body that breaks off after its first byte fails with a transport error that is not retryable", () =>
    Effect.gen(function*() {
      let pulls = 0
      const client = HttpClient.make((request) =>
        Effect.succeed(HttpClientResponse.fromWeb(
          request,
          new Response(
            new ReadableStream<Uint8Array>({
              pull(controller) {
                if (pulls++ === 0) controller.enqueue(new TextEncoder().encode("data: {}\n\n"))
                else controller.error(new Error("socket hang up"))
              }
            }),
            { status: 200, headers: { "content-type": "text/event-stream" } }
          )
        ))
      )
      const transport = yield* transportOver(client)
      const response = yield* transport.execute({ model: "m" }, true)
      const received: Array<Uint8Array> = []
      const error = yield* Effect.flip(
        Stream.runForEach(transport.bodyStream(response), (chunk) => Effect.sync(() => received.push(chunk)))
      )
      assert.strictEqual(received.length, 1)
      assert.instanceOf(error, AiError.TransportError)
      assert.isUndefined(error.timeout)
      assert.strictEqual(error.bytesReceived, 10)
      assert.isFalse(error.retryable)
    }))

  it.effect("readJson of a body that stalls fails with the idle timeout too (default 5 minutes)", () =>
    Effect.gen(function*() {
      const server = streamingServer({ status: 200, first: new TextEncoder().encode("{\"id\":") })
      const transport = yield* transportOver(server.client)
      const response = yield* transport.execute({ model: "m" }, false)
      const fiber = yield* Effect.fork(transport.readJson(response))
      yield* realPause
      yield* TestClock.adjust("5 minutes")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual(error.timeout, "idle")
    }))
})

/**
 * A loopback `node:http` server that answers every request with `answer` (given its response); the server's
 * base URL and whether the client closed the request's connection before the answer ended.
 */
const nodeServer = (answer: (response: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly baseUrl: string; readonly state: { closedEarly: boolean } }>((resume) => {
      const state = { closedEarly: false }
      const server = createServer((request, response) => {
        request.resume()
        response.on("close", () => {
          if (!response.writableFinished) state.closedEarly = true
        })
        answer(response)
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, state, server })))
    }),
    (handle) => Effect.sync(() => (handle as unknown as { readonly server: { closeAllConnections(): void; close(): void } }).server.closeAllConnections())
  )

const nodeClients = [
  ["undici", NodeHttpClient.layerUndici],
  ["node:http", NodeHttpClient.layer]
] as const

/**
 * The Node `Readable` of a response of `@effect/platform-node`'s clients: undici's body, or `node:http`'s
 * `IncomingMessage` (the response itself may be the `HttpClient`'s interruptible wrapper of it).
 */
const nodeBody = (response: HttpClientResponse.HttpClientResponse): Readable => {
  const inner = (response as { readonly original?: HttpClientResponse.HttpClientResponse }).original ?? response
  const source = (inner as unknown as { readonly source: Readable | { readonly body: Readable } }).source
  return source instanceof Readable ? source : source.body
}

/** Waits, in real time, until `done()` (a Node socket's events happen while the test clock stands still). */
const until = (done: () => boolean): Effect.Effect<void> =>
  Effect.suspend(() => (done() ? Effect.void : Effect.zipRight(realPause, until(done))))

describe("HttpTransport over @effect/platform-node's clients (a Node body)", () => {
  for (const [kind, layer] of nodeClients) {
    it.scoped(`a body that stalls fails with an idle timeout after the bytes that arrived, closing the request (${kind})`, () =>
      Effect.gen(function*() {
        const server = yield* nodeServer((response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.write("data: {}\n\n")
        })
        const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
        const transport = yield* transportOver(client, { idleTimeout: "30 seconds", baseUrl: server.baseUrl })
        const response = yield* transport.execute({ model: "m" }, true)
        const received: Array<Uint8Array> = []
        const fiber = yield* Effect.fork(
          Stream.runForEach(transport.bodyStream(response), (chunk) => Effect.sync(() => received.push(chunk)))
        )
        yield* until(() => received.length === 1)
        yield* TestClock.adjust("29 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
        yield* TestClock.adjust("1 second")
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual(error.timeout, "idle")
        assert.strictEqual(error.bytesReceived, 10)
        yield* until(() => server.state.closedEarly)
      }))

    it.scoped(`an event stream that only pings after its first event fails with the idle timeout, closing the request (${kind})`, () =>
      Effect.gen(function*() {
        const pings: Array<NodeJS.Timeout> = []
        const server = yield* nodeServer((response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.write("data: {}\n\n")
          pings.push(setInterval(() => response.write(": ping\n\n"), 5))
          response.on("close", () => pings.forEach(clearInterval))
        })
        const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
        const transport = yield* transportOver(client, { idleTimeout: "30 seconds", baseUrl: server.baseUrl })
        const response = yield* transport.execute({ model: "m" }, true)
        let received = 0
        const fiber = yield* Effect.fork(
          Stream.runForEach(transport.bodyStream(response), (chunk) => Effect.sync(() => (received += chunk.length)))
        )
        for (let i = 0; i < 3; i++) {
          const before = received
          // pings arrive while the test clock stands still, then it moves on
          yield* until(() => received >= before + 16)
          if (i < 2) assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
          yield* TestClock.adjust("10 seconds")
        }
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual(error.timeout, "idle")
        yield* until(() => server.state.closedEarly)
      }))

    it.scoped(`a decoded event stream that only sends keep-alives after its first event fails with the idle timeout, closing the request (${kind})`, () =>
      Effect.gen(function*() {
        const timers: Array<NodeJS.Timeout> = []
        let sent = 0
        const server = yield* nodeServer((response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.write("data: {\"n\":1}\n\n")
          timers.push(setInterval(() => response.write(keepAlives[sent++ % keepAlives.length]), 5))
          response.on("close", () => timers.forEach(clearInterval))
        })
        const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
        const transport = yield* transportOver(client, { idleTimeout: "30 seconds", baseUrl: server.baseUrl })
        const response = yield* transport.execute({ model: "m" }, true)
        const decoded: Array<unknown> = []
        const fiber = yield* Effect.fork(
          Stream.runForEach(transport.decodeBody(response, keepAliveSkipping), (element) => Effect.sync(() => decoded.push(element)))
        )
        for (let i = 0; i < 3; i++) {
          const before = sent
          // every kind of keep-alive arrives while the test clock stands still, then it moves on
          yield* until(() => sent >= before + keepAlives.length)
          if (i < 2) assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
          yield* TestClock.adjust("10 seconds")
        }
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.instanceOf(error, AiError.TransportError)
        assert.strictEqual(error.timeout, "idle")
        assert.deepStrictEqual(decoded, [{ n: 1 }])
        yield* until(() => server.state.closedEarly)
      }))

    it.scoped(`a body written in pieces arrives whole and in order; one left early closes the request (${kind})`, () =>
      Effect.gen(function*() {
        const pieces = Array.from({ length: 20 }, (_, i) => `data: {"n":${i}}\n\n`)
        const server = yield* nodeServer((response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          let next = 0
          const write = () => {
            if (next === pieces.length) return void response.end()
            response.write(pieces[next++])
            // far longer than the 50 ms a body left early is read on for its end before it is aborted
            setTimeout(write, 50)
          }
          write()
        })
        const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
        const transport = yield* transportOver(client, { idleTimeout: "30 seconds", baseUrl: server.baseUrl })
        const decoder = new TextDecoder()
        let text = ""
        yield* Stream.runForEach(
          transport.bodyStream(yield* transport.execute({ model: "m" }, true)),
          (chunk) => Effect.sync(() => (text += decoder.decode(chunk, { stream: true })))
        )
        assert.strictEqual(text, pieces.join(""))
        assert.isFalse(server.state.closedEarly)
        yield* Stream.runDrain(Stream.take(transport.bodyStream(yield* transport.execute({ model: "m" }, true)), 1))
        yield* until(() => server.state.closedEarly)
      }))

    it.scoped(`a body left right after its last bytes, before its end was seen, ends instead of being aborted (${kind})`, () =>
      Effect.gen(function*() {
        const server = yield* nodeServer((response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.end("data: {}\n\ndata: [DONE]\n\n")
        })
        const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
        const transport = yield* transportOver(client, { idleTimeout: "30 seconds", baseUrl: server.baseUrl })
        const response = yield* transport.execute({ model: "m" }, true)
        // the consumer stops at the chunk that holds the last bytes, as a decoder stops at `[DONE]`
        yield* Stream.runDrain(Stream.take(transport.bodyStream(response), 1))
        const body = nodeBody(response)
        yield* until(() => body.readableEnded || body.destroyed)
        assert.isTrue(body.readableEnded)
        assert.isNull(body.errored)
        assert.isFalse(server.state.closedEarly)
      }))

    it.scoped(`a body left at [DONE] whose end comes in a later write ends instead of being aborted: its connection is reused (${kind})`, () =>
      Effect.gen(function*() {
        const server = yield* nodeServer((response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          // the end of the chunked body in a write of its own, a moment later (as Python's servers send it,
          // over a network)
          response.write("data: {}\n\ndata: [DONE]\n\n", () => setTimeout(() => response.end(), 2))
        })
        const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
        const transport = yield* transportOver(client, { idleTimeout: "30 seconds", baseUrl: server.baseUrl })
        for (let round = 0; round < 5; round++) {
          const response = yield* transport.execute({ model: "m" }, true)
          yield* Stream.runDrain(Stream.take(transport.bodyStream(response), 1))
          const body = nodeBody(response)
          yield* until(() => body.readableEnded || body.destroyed)
          assert.isTrue(body.readableEnded, `round ${round}`)
          assert.isNull(body.errored)
        }
        assert.isFalse(server.state.closedEarly)
      }))

    it.scoped(`a body left at [DONE] whose end was written while the loop was blocked past the grace ends: its connection is reused (${kind})`, () =>
      Effect.gen(function*() {
        let answer: ServerResponse | undefined
        const server = yield* nodeServer((response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.write("data: {}\n\ndata: [DONE]\n\n")
          answer = response
        })
        const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
        const transport = yield* transportOver(client, { idleTimeout: "30 seconds", baseUrl: server.baseUrl })
        const response = yield* transport.execute({ model: "m" }, true)
        yield* Stream.runDrain(Stream.take(transport.bodyStream(response), 1))
        // the end goes out now, in a write of its own; then the process is held past the grace of the body
        // left before its end (a machine short of cores, a long task on the loop): the end waits in the socket
        answer!.end()
        const blockedUntil = Date.now() + 150
        while (Date.now() < blockedUntil) {
          // busy: no timer, no I/O until it passes
        }
        const body = nodeBody(response)
        yield* until(() => body.readableEnded || body.destroyed)
        assert.isTrue(body.readableEnded)
        assert.isNull(body.errored)
        assert.isFalse(server.state.closedEarly)
      }))

    it.scoped(`a body that breaks off fails with a transport error that is no timeout (${kind})`, () =>
      Effect.gen(function*() {
        const server = yield* nodeServer((response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.write("data: {}\n\n", () => setTimeout(() => response.socket?.destroy(), 20))
        })
        const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
        const transport = yield* transportOver(client, { idleTimeout: "30 seconds", baseUrl: server.baseUrl })
        const response = yield* transport.execute({ model: "m" }, true)
        const error = yield* Effect.flip(Stream.runDrain(transport.bodyStream(response)))
        assert.instanceOf(error, AiError.TransportError)
        assert.isUndefined(error.timeout)
        assert.strictEqual(error.bytesReceived, 10)
      }))
  }
})

describe("HttpTransport on a connection the server closes after reading the request", () => {
  // undici checks an idle connection for a close already received (one `setImmediate`) before it writes a
  // request on it, and opens another connection for a request that comes meanwhile: after it, the next
  // request goes on the kept-alive connection
  const idleConnectionChecked = Effect.promise(() => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve))))
  // A backend that crashes on a request: it answers the first `answered` requests (counted over all
  // connections), then reads each later one whole and closes its connection (or resets it) without an
  // answer. The second request goes on the kept-alive connection of the first.
  const closingServer = (answered: number, drop: "close" | "reset" = "close") => DroppingServer.make("{}", { answered, drop })
  for (const [kind, layer] of [["undici", NodeHttpClient.layerUndici], ["fetch", FetchHttpClient.layer]] as const) {
    for (const how of ["close", "reset"] as const) {
      it.scoped(`with retries off the request is sent once: closedBeforeResponse (${kind}, ${how})`, () =>
        Effect.gen(function*() {
          const server = yield* closingServer(1, how)
          const client = Context.get(yield* Layer.build(layer), HttpClient.HttpClient)
          const transport = yield* transportOver(client, { baseUrl: server.baseUrl })
          const first = yield* transport.execute({ model: "m" }, false)
          assert.deepStrictEqual(yield* transport.readJson(first), {})
          yield* idleConnectionChecked
          const error = yield* Effect.flip(transport.execute({ model: "m" }, true))
          // the server got the second request once, on the first one's connection: not sent again on another
          assert.deepStrictEqual(server.received, ["/v1/responses", "/v1/responses (reused)"])
          assert.instanceOf(error, AiError.TransportError)
          assert.strictEqual((error as AiError.TransportError).closedBeforeResponse, true)
          assert.include(error.message, "the server closed the connection after the request was sent, before any response")
        }))
    }
  }

  it.live("with 2 retries the request is sent at most 3 times (each a retry of the schedule)", () =>
    Effect.gen(function*() {
      const server = yield* closingServer(1)
      const client = Context.get(yield* Layer.build(NodeHttpClient.layerUndici), HttpClient.HttpClient)
      const retries: Array<number> = []
      const transport = yield* transportOver(client, {
        baseUrl: server.baseUrl,
        retry: { times: 2, base: "1 millis", onRetry: ({ attempt }) => Effect.sync(() => void retries.push(attempt)) }
      })
      yield* transport.execute({ model: "m" }, false).pipe(Effect.flatMap(transport.readJson))
      yield* idleConnectionChecked
      const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert.deepStrictEqual(server.received, ["/v1/responses", "/v1/responses (reused)", "/v1/responses", "/v1/responses"])
      assert.strictEqual((error as AiError.TransportError).closedBeforeResponse, true)
      assert.deepStrictEqual(retries, [1, 2])
    }).pipe(Effect.scoped))

  it.scoped("a new connection closed before any response is not sent again: a transport error", () =>
    Effect.gen(function*() {
      const server = yield* closingServer(0)
      const client = Context.get(yield* Layer.build(NodeHttpClient.layerUndici), HttpClient.HttpClient)
      const transport = yield* transportOver(client, { baseUrl: server.baseUrl })
      const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert.deepStrictEqual(server.received, ["/v1/responses"])
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual((error as AiError.TransportError).closedBeforeResponse, true)
    }))

  it.scoped("a refused connection is no close before a response (the server was not reached)", () =>
    Effect.gen(function*() {
      const server = createServer()
      const port = yield* Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          server.close(() => resume(Effect.succeed(port)))
        })
      })
      const client = Context.get(yield* Layer.build(NodeHttpClient.layerUndici), HttpClient.HttpClient)
      const transport = yield* transportOver(client, { baseUrl: `http://127.0.0.1:${port}/v1` })
      const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert.instanceOf(error, AiError.TransportError)
      assert.strictEqual((error as AiError.TransportError).closedBeforeResponse, undefined)
    }))
})

describe("HttpTransport error bodies", () => {
  it.effect("an endless error body is read up to 64 KiB, not whole, and its message capped", () =>
    Effect.gen(function*() {
      const chunk = new TextEncoder().encode("x".repeat(16 * 1024))
      const server = streamingServer({
        status: 500,
        first: new TextEncoder().encode("{\"error\":{\"message\":\""),
        rest: 6400, // 100 MiB if read whole
        chunk
      })
      const transport = yield* transportOver(server.client)
      const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.status, 500)
      // the message is not whole in the 64 KiB read: the description says the body was cut
      assert.match(error.description, /^the error body was cut at 65536 bytes: \{"error":\{"message":"x{1950,}… \(\d+ more characters\)$/)
      assert.isAtMost(error.description.length, AiError.MAX_MESSAGE + 100)
      assert.isBelow(server.state.pulledBytes, 256 * 1024)
      yield* realPause
      assert.isTrue(server.state.cancelled)
    }))

  it.effect("a long JSON error message is capped at MAX_MESSAGE characters", () =>
    Effect.gen(function*() {
      const message = "m".repeat(50_000)
      const client = HttpClient.make((request) =>
        Effect.succeed(
          HttpClientResponse.fromWeb(request, new Response(JSON.stringify({ error: { message } }), { status: 400 }))
        )
      )
      const transport = yield* transportOver(client)
      const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.description, `${message.slice(0, AiError.MAX_MESSAGE)}… (48000 more characters)`)
    }))

  it.effect("an error body over 64 KiB: the message read from its prefix; a plain-text body cut at MAX_MESSAGE with its count", () =>
    Effect.gen(function*() {
      const message = "Unsupported value: 'messages[0].role' does not support 'system' with this model."
      const bodies = [
        [JSON.stringify({ error: { message, type: "invalid_request_error", detail: "d".repeat(100_000) } }), "application/json", message],
        ["t".repeat(3000), "text/plain", `${"t".repeat(AiError.MAX_MESSAGE)}… (1000 more characters)`]
      ] as const
      for (const [body, type, description] of bodies) {
        const client = HttpClient.make((request) =>
          Effect.succeed(HttpClientResponse.fromWeb(request, new Response(body, { status: 400, headers: { "content-type": type } })))
        )
        const transport = yield* transportOver(client)
        const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
        assert.instanceOf(error, AiError.HttpError)
        assert.strictEqual(error.description, description)
      }
    }))
})

describe("HttpTransport redaction", () => {
  const answering = (message: string) =>
    HttpClient.make((request) =>
      Effect.succeed(HttpClientResponse.fromWeb(request, new Response(JSON.stringify({ error: { message } }), { status: 500 })))
    )

  it.effect("a short key (a local server's OPENAI_API_KEY=x) is no secret: messages stay whole", () =>
    Effect.gen(function*() {
      const transport = yield* transportOver(answering("upstream exploded"), { apiKey: Redacted.make("x") })
      const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.description, "upstream exploded")
    }))

  it.effect("a real key echoed by the server is cut out", () =>
    Effect.gen(function*() {
      const key = "sk-proj-abcdefghijklmnop0123456789"
      const transport = yield* transportOver(answering(`key ${key} rejected`), { apiKey: Redacted.make(key) })
      const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.description, "key [redacted] rejected")
    }))

  it.effect("a 2xx JSON body that echoes the key (a failed response's message) is read with the key cut out", () =>
    Effect.gen(function*() {
      const key = "sk-proj-abcdefghijklmnop0123456789"
      const failed = { id: "resp_invented_1", status: "failed", error: { code: "server_error", message: `key ${key} hit a fault` } }
      const client = HttpClient.make((request) =>
        Effect.succeed(HttpClientResponse.fromWeb(request, new Response(JSON.stringify(failed), { status: 200 })))
      )
      const transport = yield* transportOver(client, { apiKey: Redacted.make(key) })
      const json = yield* Effect.flatMap(transport.execute({ model: "m" }, false), transport.readJson)
      assert.deepStrictEqual(json, { ...failed, error: { ...failed.error, message: "key [redacted] hit a fault" } })
    }))

  it("scrubError cuts the key out of every text field of an error built from what a server sent", () => {
    const key = "sk-proj-abcdefghijklmnop0123456789"
    const event = new AiError.StreamErrorEvent({ description: `Incorrect API key provided: ${key}`, code: "invalid_api_key" })
    const scrubbed = HttpTransport.scrubError(event, key)
    assert.instanceOf(scrubbed, AiError.StreamErrorEvent)
    assert.strictEqual(scrubbed.description, "Incorrect API key provided: [redacted]")
    assert.strictEqual(scrubbed.code, "invalid_api_key")
    assert.notInclude(scrubbed.message, key)
    const malformed = new AiError.MalformedOutput({ description: "bad event", excerpt: `{"key":"${key}"}` })
    assert.strictEqual(HttpTransport.scrubError(malformed, key).excerpt, "{\"key\":\"[redacted]\"}")
    assert.strictEqual(HttpTransport.scrubError(event, "x"), event)
  })

  it("scrubSecret leaves text alone for keys shorter than MIN_SECRET_LENGTH", () => {
    assert.strictEqual(HttpTransport.scrubSecret("upstream exploded", "x"), "upstream exploded")
    assert.strictEqual(HttpTransport.scrubSecret("a 12345678 b", "12345678"), "a [redacted] b")
    // a key in a URL (a redirect's target) may come percent-encoded
    assert.strictEqual(
      HttpTransport.scrubSecret("https://h/sk%2Fkey%2B123/v1 sk/key+123", "sk/key+123"),
      "https://h/[redacted]/v1 [redacted]"
    )
  })
})
