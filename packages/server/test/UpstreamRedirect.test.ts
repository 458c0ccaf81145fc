/**
 * An upstream that answers a redirect (3xx: an `http://` upstream for a host that redirects to `https://`,
 * a proxy that moves a path) gets a 502 `upstream_error` naming the status, never the 3xx itself (which
 * blamed the client, `invalid_request_error`, with the body "HTTP status 302"), nor the target (which may
 * carry credentials or a signed query: the log's), with `x-should-retry: false` and no `retry-after`; the
 * redirect is never followed, so the upstream key goes nowhere else. The clients' `HttpError` (the
 * transport both share) names the target and the base URL to set.
 */
import { ScriptedServer } from "@effect-responses/testing"
import { ChatCompletionsClient } from "@effect-responses/chat-completions"
import { AiError } from "@effect-responses/core"
import { describe, expect, it } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Gateway from "../src/Gateway.js"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { post } from "./utils.js"

const KEY = "sk-upstream-secret-123456"

const redirect = (status: number, location: string, headers: Record<string, string> = {}): ScriptedServer.Handler =>
(_request, response) => {
  response.writeHead(status, { location, ...headers })
  response.end()
}

const clientMessage = (status: number) =>
  `the upstream failed: it answered HTTP ${status}, which the gateway does not follow: ${Gateway.UPSTREAM_REDIRECTED}`

describe("an upstream redirect", () => {
  for (const stream of [false, true]) {
    it.effect(`302 to another base URL${stream ? ", streamed" : ""}: a 502 upstream_error naming the status, not to be retried; not followed`, () =>
      Effect.gen(function*() {
        // where the upstream redirects: it must get nothing, the key least of all
        const target = yield* ScriptedServer.make([ScriptedServer.completion({ content: "never" })])
        const location = `${target.baseUrl}/chat/completions`
        yield* withScriptedGateway(
          [redirect(302, location, { "retry-after": "5", "x-request-id": "req_1" })],
          { upstream: { apiKey: Redacted.make(KEY) } },
          (url, received) =>
            Effect.gen(function*() {
              const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
              expect(answer.status).toBe(502)
              expect(answer.headers.get("location")).toBeNull()
              expect(answer.headers.get("retry-after")).toBeNull()
              expect(answer.headers.get("x-should-retry")).toBe("false")
              expect(answer.headers.get("x-request-id")).toBe("req_1")
              expect(JSON.parse(answer.text)).toEqual({
                error: {
                  message: clientMessage(302),
                  type: "server_error",
                  param: null,
                  code: "upstream_error"
                }
              })
              expect(received).toHaveLength(1)
              expect(target.received).toHaveLength(0)
            })
        )
      }).pipe(Effect.scoped))
  }

  it.effect("a 307 whose target carries credentials and a signed query, a 301 without a location, a 304: the client gets the status only", () =>
    withScriptedGateway(
      [
        redirect(307, "http://admin:hunter2@10.0.0.5:8080/internal/chat/completions?X-Amz-Signature=abc"),
        (_request, response) => {
          response.writeHead(301)
          response.end()
        },
        (_request, response) => {
          response.writeHead(304)
          response.end()
        }
      ],
      {},
      (url) =>
        Effect.gen(function*() {
          for (const status of [307, 301, 304]) {
            const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
            expect(answer.status).toBe(502)
            expect(answer.text).not.toContain("hunter2")
            expect(answer.text).not.toContain("10.0.0.5")
            expect(JSON.parse(answer.text).error).toEqual({
              message: clientMessage(status),
              type: "server_error",
              param: null,
              code: "upstream_error"
            })
          }
        })
    ))

  it.effect("ChatCompletionsClient's HttpError names the status, the target and the base URL to set (what `effect-responses chat` prints)", () =>
    Effect.gen(function*() {
      const target = yield* ScriptedServer.make([ScriptedServer.completion({ content: "never" })])
      const upstream = yield* ScriptedServer.make([redirect(302, `${target.baseUrl}/chat/completions`)])
      const client = yield* ChatCompletionsClient.make({ baseUrl: upstream.baseUrl, apiKey: Redacted.make(KEY), retry: { times: 0 } })
      const error = yield* Effect.flip(Stream.runDrain(client.createStream({ model: "m", messages: [{ role: "user", content: "hi" }] })))
      expect(error._tag).toBe("HttpError")
      expect(error.message).toBe(
        `HTTP 302: the server answered HTTP 302, a redirect to ${target.baseUrl}/chat/completions, which is not followed (the request and its key go to the configured base URL only): set the base URL to ${target.baseUrl}`
      )
      expect(target.received).toHaveLength(0)
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))

  it.effect("a target holding the key, as it is or percent-encoded: the clients' HttpError and its hint show neither", () =>
    Effect.gen(function*() {
      const key = "sk-up/stream+secret=123456"
      const upstream = yield* ScriptedServer.make([
        redirect(307, `https://h.example/${key}/v1/chat/completions`),
        redirect(307, `https://h.example/${encodeURIComponent(key)}/v1/chat/completions`)
      ])
      const client = yield* ChatCompletionsClient.make({ baseUrl: upstream.baseUrl, apiKey: Redacted.make(key), retry: { times: 0 } })
      for (let i = 0; i < 2; i++) {
        const error = yield* Effect.flip(Stream.runDrain(client.createStream({ model: "m", messages: [{ role: "user", content: "hi" }] })))
        expect(error.message).toBe(
          "HTTP 307: the server answered HTTP 307, a redirect to https://h.example/[redacted]/v1/chat/completions, which is not followed (the request and its key go to the configured base URL only): set the base URL to https://h.example/[redacted]/v1"
        )
      }
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))

  it("x-should-retry (the gateway's false on a redirect's 502): HttpError.retryable says what the server said", () => {
    const of = (status: number, shouldRetry?: string) =>
      AiError.httpErrorFromResponse({ status, headers: shouldRetry === undefined ? {} : { "x-should-retry": shouldRetry }, body: "" })
    expect([of(502).retryable, of(502, "false").retryable, of(400).retryable, of(400, "true").retryable]).toEqual([true, false, false, true])
  })

  it("AiError.httpErrorFromResponse: a relative target, a redirect without a location, a 304 that is no redirect", () => {
    const descriptionOf = (status: number, headers: Record<string, string>) =>
      AiError.httpErrorFromResponse({ status, headers, body: "" }).description
    expect(descriptionOf(307, { location: "/elsewhere/chat/completions?x=1" })).toBe(
      "the server answered HTTP 307, a redirect to /elsewhere/chat/completions?x=1, which is not followed (the request and its key go to the configured base URL only)"
    )
    expect(descriptionOf(301, {})).toBe(
      "the server answered HTTP 301, a redirect (no location header), which is not followed (the request and its key go to the configured base URL only)"
    )
    expect(descriptionOf(304, {})).toBe("the server answered HTTP 304, which is no answer to this request")
  })
})
