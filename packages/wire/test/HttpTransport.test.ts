/**
 * `HttpTransport` against a fake `HttpClient` that records requests and answers with canned bodies.
 */
import { AiError } from "@effect-responses/core"
import { HttpTransport } from "@effect-responses/wire"
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

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

  it.effect("a 2xx body that is not JSON fails with MalformedOutput", () =>
    Effect.gen(function*() {
      const http = fakeHttp([{ status: 200, body: "<html>" }])
      const transport = yield* HttpTransport.make("/responses").pipe(
        Effect.provideService(HttpClient.HttpClient, http.client)
      )
      const error = yield* Effect.flip(Effect.flatMap(transport.execute({}, false), transport.readJson))
      assert.instanceOf(error, AiError.MalformedOutput)
    }))
})
