/**
 * `HttpTransport` against a fake `HttpClient` that records requests and answers with canned bodies.
 */
import { AiError } from "@effect-responses/core"
import { HttpTransport } from "@effect-responses/wire"
import * as Cooperative from "@effect-responses/wire/Cooperative"
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"

const API_KEY = "sk-test-secret-0123456789"

const fakeHttp = (answers: ReadonlyArray<{ readonly status: number; readonly body: string }>) => {
  const requests: Array<HttpClientRequest.HttpClientRequest> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      const { body, status } = answers[Math.min(requests.length, answers.length - 1)]!
      requests.push(request)
      return HttpClientResponse.fromWeb(request, new Response(body, { status }))
    })
  )
  return { requests, client }
}

describe("HttpTransport", () => {
  it("endpointUrl drops trailing slashes of the base URL and defaults to OpenAI", () => {
    assert.strictEqual(HttpTransport.endpointUrl("http://localhost:8000/v1//", "/chat/completions"), "http://localhost:8000/v1/chat/completions")
    assert.strictEqual(HttpTransport.endpointUrl(undefined, "/responses"), "https://api.openai.com/v1/responses")
  })

  it("noPathHint: only for a base URL without a path", () => {
    assert.strictEqual(HttpTransport.noPathHint("http://127.0.0.1:8787/"), "the base URL has no /v1: try http://127.0.0.1:8787/v1")
    assert.strictEqual(HttpTransport.noPathHint("http://127.0.0.1:8787"), "the base URL has no /v1: try http://127.0.0.1:8787/v1")
    for (const base of [undefined, "https://api.openai.com/v1", "http://h/openai", "http://h/?api-version=1", "not a url"]) {
      assert.strictEqual(HttpTransport.noPathHint(base), undefined)
    }
  })

  it("redirectHint: the base URL to set when the target is the same endpoint elsewhere, else to check it", () => {
    const url = "http://h/v1/chat/completions"
    assert.strictEqual(HttpTransport.redirectHint(url, "/chat/completions", "https://h/v1/chat/completions"), "set the base URL to https://h/v1")
    assert.strictEqual(HttpTransport.redirectHint(url, "/chat/completions", "/api/v1/chat/completions"), "set the base URL to http://h/api/v1")
    const check = "check the base URL (its scheme, host and path): the server redirected it"
    for (const location of ["https://h/login?next=1", "http://h/v1/chat/completions", "ftp://h/v1/chat/completions"]) {
      assert.strictEqual(HttpTransport.redirectHint(url, "/chat/completions", location), check)
    }
    assert.strictEqual(HttpTransport.redirectHint(url, "/chat/completions", undefined), undefined)
    assert.strictEqual(HttpTransport.redirectHint(url, "/chat/completions", " "), undefined)
  })

  it.effect("a 404 from a base URL without a path: the hint after the description, every field of the error kept; none when the answer names /v1 already", () =>
    Effect.gen(function*() {
      // the recorded error body (an unknown model), answered as a 404 with a request id and a retry-after
      const recorded = readFileSync(new URL("../../../fixtures/responses-json/pai-error-400-model-not-found.json", import.meta.url), "utf8")
      const gateway404 = JSON.stringify({
        error: { message: "Invalid URL (POST /responses): try /v1/responses (the gateway's base URL ends in /v1)", type: "invalid_request_error", param: null, code: null }
      })
      const answers = [recorded, gateway404]
      let n = 0
      const client = HttpClient.make((request) =>
        Effect.sync(() =>
          HttpClientResponse.fromWeb(
            request,
            new Response(answers[n++], { status: 404, headers: { "x-request-id": "req_404", "retry-after": "2" } })
          )
        )
      )
      const transport = yield* HttpTransport.make("/responses", { baseUrl: "http://127.0.0.1:8787" }).pipe(
        Effect.provideService(HttpClient.HttpClient, client)
      )
      const first = yield* Effect.flip(transport.execute({ model: "gpt-5.2-proo" }, false))
      assert(first._tag === "HttpError")
      assert.strictEqual(
        first.description,
        "The requested model 'gpt-5.2-proo' does not exist.: the base URL has no /v1: try http://127.0.0.1:8787/v1"
      )
      assert.deepStrictEqual(
        [first.status, first.errorType, first.code, first.param, first.requestId, Duration.toMillis(first.retryAfter!)],
        [404, "invalid_request_error", "model_not_found", "model", "req_404", 2000]
      )
      // the gateway's own 404 points at /v1: one hint, its own
      const second = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert(second._tag === "HttpError")
      assert.strictEqual(second.description, "Invalid URL (POST /responses): try /v1/responses (the gateway's base URL ends in /v1)")
    }))

  it.effect("execute sends the body with `stream`, the accept header and the bearer key; readJson parses", () =>
    Effect.gen(function*() {
      const http = fakeHttp([{ status: 200, body: "{\"id\":\"x\"}" }])
      const transport = yield* HttpTransport.make("/responses", { apiKey: Redacted.make(API_KEY) }).pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      const json = yield* Effect.flatMap(transport.execute({ model: "m" }, true), transport.readJson)
      assert.deepStrictEqual(json, { id: "x" })
      const request = http.requests[0]!
      assert.strictEqual(request.url, "https://api.openai.com/v1/responses")
      assert.strictEqual(request.headers["accept"], "text/event-stream")
      assert.strictEqual(request.headers["authorization"], `Bearer ${API_KEY}`)
    }))

  it.effect("execute's parent span is the parent of the request's span, with or without the headers timeout, on a retry too", () =>
    Effect.gen(function*() {
      for (const headersTimeout of [undefined, false] as const) {
        // the HTTP request's own span (`http.client POST`) is the current one in the client: its parent's name
        const parents: Array<string | undefined> = []
        const client = HttpClient.make((request) =>
          Effect.map(Effect.orDie(Effect.currentSpan), (span) => {
            const parent = Option.getOrUndefined(span.parent)
            parents.push(parent?._tag === "Span" ? parent.name : undefined)
            return HttpClientResponse.fromWeb(request, new Response("", { status: parents.length === 1 ? 503 : 200 }))
          })
        )
        // the retry's own work (its log, `onRetry`) is under the span too
        const onRetry = () =>
          Effect.map(Effect.option(Effect.currentParentSpan), (span) => {
            parents.push(Option.isSome(span) && span.value._tag === "Span" ? `retry under ${span.value.name}` : undefined)
          })
        const transport = yield* HttpTransport.make("/responses", { headersTimeout, retry: { times: 1, base: "1 second", onRetry } }).pipe(
          Effect.provideService(HttpClient.HttpClient, client)
        )
        const fiber = yield* Effect.fork(Effect.flatMap(Effect.makeSpan("the call"), (span) => transport.execute({}, true, span)))
        yield* TestClock.adjust("2 seconds")
        const response = yield* Fiber.join(fiber)
        assert.strictEqual(response.status, 200)
        assert.deepStrictEqual(parents, ["the call", "retry under the call", "the call"], `headersTimeout ${headersTimeout}`)
      }
    }))

  it.effect("a large body is sent as the bytes of JSON.stringify (written in slices); one that cannot be written is InvalidPrompt", () =>
    Effect.gen(function*() {
      const http = fakeHttp([{ status: 200, body: "{}" }])
      const transport = yield* HttpTransport.make("/chat/completions", {}).pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      // elements JSON.stringify writes as null, keys it leaves out, non-ASCII text, a toJSON element; about
      // 700 KB, so several slices of text and of the copy into one body
      const messages: Array<unknown> = Array.from({ length: 5000 }, (_, i) =>
        i % 7 === 0 ? undefined : { role: "tool", tool_call_id: `call_${i}`, content: `${"é𝄞 ".repeat(20)}"${i}"\n`, skip: undefined })
      messages[3] = new Date(0)
      const body = { model: "m", messages, drop: () => 1, tools: [{ type: "function" }] }
      yield* transport.execute(body, true)
      const sent = http.requests[0]!.body
      assert.strictEqual(sent._tag, "Uint8Array")
      if (sent._tag === "Uint8Array") {
        assert.strictEqual(sent.contentType, "application/json")
        assert.strictEqual(new TextDecoder().decode(sent.body), JSON.stringify({ ...body, stream: true }))
      }
      const cyclic: { [key: string]: unknown } = {}
      cyclic.self = cyclic
      const error = yield* Effect.flip(transport.execute({ model: "m", messages: [...messages, cyclic] }, true))
      assert.instanceOf(error, AiError.InvalidPrompt)
      // a small body (no array written in slices) likewise, and its bytes those of JSON.stringify
      const small = { model: "m", input: [{ content: "é𝄞\"\n", skip: undefined }, undefined], drop: () => 1 }
      yield* transport.execute(small, true)
      const smallSent = http.requests[1]!.body
      assert.strictEqual(smallSent._tag === "Uint8Array" && new TextDecoder().decode(smallSent.body), JSON.stringify({ ...small, stream: true }))
      assert.instanceOf(yield* Effect.flip(transport.execute({ model: "m", messages: [cyclic] }, true)), AiError.InvalidPrompt)
      assert.strictEqual(http.requests.length, 2)
    }))

  it.effect("an object of many keys deep in a large body has its keys enumerated once", () =>
    Effect.gen(function*() {
      const http = fakeHttp([{ status: 200, body: "{}" }])
      const transport = yield* HttpTransport.make("/chat/completions", {}).pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      // a schema's `properties` of 3,000 keys, four levels down: the walk that finds what is small met it
      // once per level above it, each time enumerating all of its keys
      const target = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`p${i}`, { type: "string" }]))
      let enumerations = 0
      const properties = new Proxy(target, {
        ownKeys: (object) => {
          enumerations++
          return Reflect.ownKeys(object)
        }
      })
      const body = (properties: object) => ({
        model: "m",
        messages: [{ role: "user", content: "q" }],
        response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "object", properties } } }
      })
      yield* transport.execute(body(properties), false)
      const sent = http.requests[0]!.body
      assert.strictEqual(sent._tag === "Uint8Array" && new TextDecoder().decode(sent.body), JSON.stringify({ ...body(target), stream: false }))
      assert.strictEqual(enumerations, 1)
    }))

  it.effect("long strings and nested large arrays are written in slices, with the bytes of JSON.stringify", () =>
    Effect.gen(function*() {
      const http = fakeHttp(Array.from({ length: 3 }, () => ({ status: 200, body: "{}" })))
      const transport = yield* HttpTransport.make("/chat/completions", {}).pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      // a slice of a long string is 256 Ki characters: a surrogate pair, a lone half and escapes at and
      // around every such boundary of strings of several slices
      const slice = 256 * 1024
      const at = (n: number, text: string) => `${"a".repeat(n)}${text}${"b".repeat(slice + 10)}`
      const strings = [
        ...[slice - 2, slice - 1, slice].map((n) => at(n, "😀😀")),
        ...[slice - 1, slice].flatMap((n) => [at(n, "\ud800x"), at(n, "\udc00x"), at(n, "\udbff\udbff\udfff"), at(n, "\"\\\n\u0001")]),
        "é😀\ud800\"\\\n\u0001\u2028 x".repeat(60_000)
      ]
      // a few messages, one of them with thousands of parts (nested arrays, skipped keys, nulls, a Date)
      const parts: Array<unknown> = Array.from({ length: 3000 }, (_, i) =>
        i % 9 === 0 ? undefined : { type: "text", text: `${"é𝄞 ".repeat(30)}"${i}"`, skip: undefined, f: () => 1 })
      parts[5] = new Date(0)
      parts[6] = [[1, [2, strings[0]]], { deep: { deeper: [strings[3], undefined] } }]
      const bodies = [
        { model: "m", messages: strings.map((content) => ({ role: "user", content })) },
        { model: "m", messages: [{ role: "system", content: "s" }, { role: "user", content: parts }], drop: undefined },
        { model: "m", instructions: strings[1], nested: { a: { b: strings[2] } } }
      ]
      for (const [index, body] of bodies.entries()) {
        yield* transport.execute(body, true)
        const sent = http.requests[index]!.body
        assert.strictEqual(sent._tag, "Uint8Array")
        if (sent._tag === "Uint8Array") {
          assert.isTrue(Buffer.from(sent.body).equals(Buffer.from(JSON.stringify({ ...body, stream: true }))), `body ${index}`)
        }
      }
      // a cycle or a bigint deep in a large value cannot be written
      const cyclic: { [key: string]: unknown } = { text: strings[4] }
      cyclic.self = { again: [cyclic] }
      for (const content of [cyclic, [{ text: strings[4] }, { n: 1n }]]) {
        const error = yield* Effect.flip(transport.execute({ model: "m", messages: [{ role: "user", content }] }, true))
        assert.instanceOf(error, AiError.InvalidPrompt)
      }
      assert.strictEqual(http.requests.length, 3)
    }))

  it.effect("a long string whose JSON text the fiber knows (Cooperative.currentJsonTexts) is sent as that text, copied; others escaped", () =>
    Effect.gen(function*() {
      const http = fakeHttp([{ status: 200, body: "{}" }])
      const transport = yield* HttpTransport.make("/chat/completions", {}).pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      const known = "é😀 \"x\" ".repeat(100_000)
      const other = "o".repeat(300_000)
      // the text as the fiber knows it, in pieces: spelled with an escape JSON.stringify does not write
      // (`\u00e9`), so the bytes sent show that it was copied, not escaped again
      const text = JSON.stringify(known).replace("é", "\\u00e9")
      const bytes = new TextEncoder().encode(text)
      const pieces = [bytes.subarray(0, 5), bytes.subarray(5, 400_000), bytes.subarray(400_000)]
      const body = { model: "m", messages: [{ role: "system", content: known }, { role: "user", content: other }] }
      yield* transport.execute(body, true).pipe(
        Effect.locally(Cooperative.currentJsonTexts, [{ value: known, bytes: pieces }])
      )
      const sent = http.requests[0]!.body
      assert.strictEqual(sent._tag, "Uint8Array")
      if (sent._tag === "Uint8Array") {
        const expected = JSON.stringify({ ...body, stream: true }).replace(JSON.stringify(known), text)
        assert.isTrue(Buffer.from(sent.body).equals(Buffer.from(expected)))
      }
      // found by value: the same string, or an equal one made elsewhere
      const entry = { value: known, bytes: pieces }
      assert.strictEqual(Cooperative.findJsonText([entry], known), entry)
      assert.strictEqual(Cooperative.findJsonText([entry], "é😀 \"x\" ".repeat(100_000)), entry)
      assert.strictEqual(Cooperative.findJsonText([{ value: known, bytes: pieces }], other), undefined)
    }))

  it.effect("retry.stop: once it completes, a wait between attempts and a retry in flight end at once with the last attempt's error; a failure after it is not retried", () =>
    Effect.gen(function*() {
      const overloaded = JSON.stringify({ error: { message: "overloaded", type: "server_error", code: null } })
      // every request answered 503 after `answered` of them; the others never answered (an attempt in flight)
      const run = (answered: number) =>
        Effect.gen(function*() {
          const requests: Array<HttpClientRequest.HttpClientRequest> = []
          let interrupted = 0
          const client = HttpClient.make((request) => {
            requests.push(request)
            return requests.length <= answered
              ? Effect.succeed(HttpClientResponse.fromWeb(request, new Response(overloaded, { status: 503 })))
              : Effect.onInterrupt(Effect.never, () => Effect.sync(() => interrupted++))
          })
          const stop = yield* Deferred.make<void>()
          const transport = yield* HttpTransport.make("/responses", {
            retry: { times: 5, base: "10 seconds", stop: Deferred.await(stop) }
          }).pipe(Effect.provideService(HttpClient.HttpClient, client))
          return { requests, interrupted: () => interrupted, stop, transport }
        })
      // waiting 10 s after the first 503: stopped 1 s into the wait, nothing more is sent
      const waiting = yield* run(Infinity)
      const first = yield* Effect.fork(Effect.flip(waiting.transport.execute({}, false)))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(waiting.requests.length, 1)
      yield* Deferred.succeed(waiting.stop, undefined)
      const error = yield* Fiber.join(first)
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual((error as AiError.HttpError).status, 503)
      assert.strictEqual(waiting.requests.length, 1)
      // the retry in flight (its request never answered) is interrupted; the error is the 503 before it
      const inFlight = yield* run(1)
      const second = yield* Effect.fork(Effect.flip(inFlight.transport.execute({}, false)))
      yield* TestClock.adjust("15 seconds")
      assert.strictEqual(inFlight.requests.length, 2)
      yield* Deferred.succeed(inFlight.stop, undefined)
      assert.strictEqual(((yield* Fiber.join(second)) as AiError.HttpError).status, 503)
      assert.strictEqual(inFlight.interrupted(), 1)
      assert.strictEqual(inFlight.requests.length, 2)
      // stopped before the first attempt failed (a shutdown that aborts it): no retry, no wait
      const stopped = yield* run(Infinity)
      yield* Deferred.succeed(stopped.stop, undefined)
      assert.strictEqual(((yield* Effect.flip(stopped.transport.execute({}, false))) as AiError.HttpError).status, 503)
      assert.strictEqual(stopped.requests.length, 1)
    }))

  it.effect("a 4xx fails with HttpError from OpenAI's error body, the echoed key cut out, without a retry", () =>
    Effect.gen(function*() {
      const http = fakeHttp([{
        status: 401,
        body: JSON.stringify({ error: { message: `bad key ${API_KEY}`, type: "invalid_request_error", code: "invalid_api_key" } })
      }])
      const transport = yield* HttpTransport.make("/responses", { apiKey: Redacted.make(API_KEY) }).pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      const error = yield* Effect.flip(transport.execute({ model: "m" }, false))
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.message.includes(API_KEY), false)
      assert.include(error.message, "bad key [redacted]")
      assert.strictEqual(http.requests.length, 1)
    }))

  it.effect("a 4xx whose body is a list holding an error (Gemini's OpenAI compatibility) fails with its message, code and status", () =>
    Effect.gen(function*() {
      const message = "Function call is missing a thought_signature in functionCall parts. This is required for tools to " +
        "work correctly, and missing thought_signature may lead to degraded model performance."
      const http = fakeHttp([{
        status: 400,
        body: JSON.stringify([{ error: { code: 400, message, status: "INVALID_ARGUMENT" } }])
      }])
      const transport = yield* HttpTransport.make("/chat/completions", {}).pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      const error = yield* Effect.flip(transport.execute({ model: "m" }, true))
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual(error.description, message)
      assert.strictEqual(error.code, "400")
      assert.strictEqual(error.errorType, "INVALID_ARGUMENT")
    }))

  it.effect("a 2xx body that is not JSON fails with MalformedOutput", () =>
    Effect.gen(function*() {
      const http = fakeHttp([{ status: 200, body: "<html>" }])
      const transport = yield* HttpTransport.make("/responses").pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      const error = yield* Effect.flip(Effect.flatMap(transport.execute({}, false), transport.readJson))
      assert.instanceOf(error, AiError.MalformedOutput)
    }))

  it.effect("readJson reads at most maxJsonBytes: a larger answer, even valid JSON, fails with MalformedOutput, the rest unread", () =>
    Effect.gen(function*() {
      // a whole answer of 40 pieces of 100 bytes (valid JSON, 4,000 bytes) against a bound of 1,000 bytes
      const pieces = [`{"id":"c","content":"${"x".repeat(79)}`, ...Array.from({ length: 38 }, () => "x".repeat(100)), `${"x".repeat(98)}"}`]
      assert.doesNotThrow(() => JSON.parse(pieces.join("")))
      let pulled = 0
      let cancelled = false
      const body = new ReadableStream<Uint8Array>({
        pull: (controller) => {
          const piece = pieces[pulled++]
          if (piece === undefined) controller.close()
          else controller.enqueue(new TextEncoder().encode(piece))
        },
        cancel: () => {
          cancelled = true
        }
      }, { highWaterMark: 0 })
      const client = HttpClient.make((request) =>
        Effect.sync(() =>
          HttpClientResponse.fromWeb(request, new Response(body, { headers: { "content-type": "application/json" } }))
        )
      )
      const transport = yield* HttpTransport.make("/chat/completions", { maxJsonBytes: 1000 }).pipe(
        Effect.provideService(HttpClient.HttpClient, client)
      )
      const error = yield* Effect.flip(Effect.flatMap(transport.execute({}, false), transport.readJson))
      assert.instanceOf(error, AiError.MalformedOutput)
      assert.include(error.message, "larger than 1000 bytes")
      assert.isTrue(cancelled)
      assert.isBelow(pulled, 15)
      assert.strictEqual(HttpTransport.DEFAULT_MAX_JSON_BYTES, 64 * 1024 * 1024)
    }))

  describe("bodyStream", () => {
    const bytes = (text: string) => new TextEncoder().encode(text)
    /** A body that gives `pieces`, then ends (`end: "close"`) or breaks off; `cancelled` says whether it was cancelled. */
    const body = (pieces: ReadonlyArray<string>, end: "close" | "error") => {
      let next = 0
      const state = { cancelled: false }
      const stream = new ReadableStream<Uint8Array>({
        pull: (controller) => {
          const piece = pieces[next++]
          if (piece !== undefined) controller.enqueue(bytes(piece))
          else if (end === "close") controller.close()
          else controller.error(new Error("connection reset"))
        },
        cancel: () => {
          state.cancelled = true
        }
      }, { highWaterMark: 0 })
      return { stream, state }
    }
    const transportOver = (answer: (request: HttpClientRequest.HttpClientRequest) => HttpClientResponse.HttpClientResponse) =>
      HttpTransport.make("/responses", { idleTimeout: false }).pipe(
        Effect.provideService(HttpClient.HttpClient, HttpClient.make((request) => Effect.sync(() => answer(request))))
      )
    const text = (chunks: Chunk.Chunk<Uint8Array>) => Chunk.toReadonlyArray(chunks).map((c) => new TextDecoder().decode(c))

    it.effect("gives a web Response's chunks as they come, and does not cancel a body read to its end", () =>
      Effect.gen(function*() {
        const { stream, state } = body(["data: 1\n\n", "data: 2\n\n"], "close")
        const transport = yield* transportOver((request) => HttpClientResponse.fromWeb(request, new Response(stream)))
        const response = yield* transport.execute({}, true)
        assert.deepStrictEqual(text(yield* Stream.runCollect(transport.bodyStream(response))), ["data: 1\n\n", "data: 2\n\n"])
        assert.isFalse(state.cancelled)
      }))

    it.effect("cancels the body (which aborts the request) when the stream is left early", () =>
      Effect.gen(function*() {
        const { stream, state } = body(["a", "b", "c"], "close")
        const transport = yield* transportOver((request) => HttpClientResponse.fromWeb(request, new Response(stream)))
        const response = yield* transport.execute({}, true)
        assert.deepStrictEqual(text(yield* Stream.runCollect(Stream.take(transport.bodyStream(response), 1))), ["a"])
        assert.isTrue(state.cancelled)
      }))

    it.effect("a body that breaks off fails with a TransportError after the chunks that came", () =>
      Effect.gen(function*() {
        const { stream } = body(["a"], "error")
        const transport = yield* transportOver((request) => HttpClientResponse.fromWeb(request, new Response(stream)))
        const response = yield* transport.execute({}, true)
        const seen: Array<string> = []
        const error = yield* Effect.flip(
          Stream.runForEach(transport.bodyStream(response), (chunk) => Effect.sync(() => seen.push(new TextDecoder().decode(chunk))))
        )
        assert.deepStrictEqual(seen, ["a"])
        assert.instanceOf(error, AiError.TransportError)
        assert.include(error.message, "connection reset")
      }))

    it.effect("a response of another kind (here one with a stream of its own) is read through its stream", () =>
      Effect.gen(function*() {
        const { stream, state } = body(["never read"], "close")
        const transport = yield* transportOver((request) => {
          const web = HttpClientResponse.fromWeb(request, new Response(stream))
          return Object.create(web, { stream: { value: Stream.make(bytes("own "), bytes("stream")) } })
        })
        const response = yield* transport.execute({}, true)
        assert.deepStrictEqual(text(yield* Stream.runCollect(transport.bodyStream(response))), ["own ", "stream"])
        assert.isFalse(state.cancelled)
      }))
  })
})
