/**
 * An upstream that answers a redirect (3xx: an `http://` upstream for a host that redirects to `https://`,
 * a proxy that moves a path) gets a 502 `upstream_error` naming the status, the target and the base URL to
 * set, never the 3xx itself (which blamed the client, `invalid_request_error`, with the body "HTTP status
 * 302" and no target); the redirect is never followed, so the upstream key goes nowhere else. The clients'
 * `HttpError` (the transport both share) names the target too.
 */
import { ScriptedServer } from "@effect-responses/testing"
import { ChatCompletionsClient } from "@effect-responses/chat-completions"
import { describe, expect, it } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { post } from "./utils.js"

const KEY = "sk-upstream-secret-123456"

const redirect = (status: number, location: string): ScriptedServer.Handler => (_request, response) => {
  response.writeHead(status, { location })
  response.end()
}

describe("an upstream redirect", () => {
  for (const stream of [false, true]) {
    it.effect(`302 to another base URL${stream ? ", streamed" : ""}: a 502 upstream_error naming the status, the target and the base URL to set; not followed`, () =>
      Effect.gen(function*() {
        // where the upstream redirects: it must get nothing, the key least of all
        const target = yield* ScriptedServer.make([ScriptedServer.completion({ content: "never" })])
        const location = `${target.baseUrl}/chat/completions`
        yield* withScriptedGateway(
          [redirect(302, location)],
          { upstream: { apiKey: Redacted.make(KEY) } },
          (url, received) =>
            Effect.gen(function*() {
              const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
              expect(answer.status).toBe(502)
              expect(answer.headers.get("location")).toBeNull()
              expect(JSON.parse(answer.text)).toEqual({
                error: {
                  message:
                    `the upstream failed: the server answered HTTP 302, a redirect to ${location}, which is not followed (the request and its key go to the configured base URL only): set the base URL to ${target.baseUrl}`,
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

  it.effect("307 to a relative path elsewhere, and a 301 without a location: named as they are", () =>
    withScriptedGateway(
      [redirect(307, "/elsewhere/chat/completions?x=1"), (_request, response) => {
        response.writeHead(301)
        response.end()
      }],
      {},
      (url) =>
        Effect.gen(function*() {
          const first = JSON.parse((yield* post(`${url}/responses`, { model: "m", input: "hi" })).text).error
          expect(first.message).toBe(
            "the upstream failed: the server answered HTTP 307, a redirect to /elsewhere/chat/completions?x=1, which is not followed (the request and its key go to the configured base URL only): check the base URL (its scheme, host and path): the server redirected it"
          )
          const second = yield* post(`${url}/responses`, { model: "m", input: "hi" })
          expect(second.status).toBe(502)
          expect(JSON.parse(second.text).error).toMatchObject({
            message:
              "the upstream failed: the server answered HTTP 301, a redirect (no location header), which is not followed (the request and its key go to the configured base URL only)",
            code: "upstream_error"
          })
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
})
