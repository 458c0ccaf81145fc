/**
 * `ReplayEndpoint`, the replay servers' scaffolding, on a loopback Node server.
 */
import { ReplayEndpoint } from "@effect-responses/testing"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { createServer } from "node:http"

const post = (url: string, body: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", body, headers: { "content-type": "application/json" } })
    return { status: response.status, json: (await response.json()) as unknown }
  })

describe("ReplayServer", () => {
  it.scoped("answers accepted requests in order, 400s in OpenAI's error shape, and records every JSON body", () =>
    Effect.gen(function*() {
      const server = yield* ReplayEndpoint.make({
        path: "/things",
        source: "rec.sse",
        responses: 1,
        param: "input",
        check: ({ body }) => body.ok === true ? undefined : { message: "not ok", param: "ok", code: "bad" },
        answer: ({ index }) => HttpServerResponse.unsafeJson({ index })
      })
      const url = `${server.baseUrl}/things`
      assert.deepStrictEqual(yield* post(url, "[1]"), {
        status: 400,
        json: {
          error: { message: "the body must be a JSON object", type: "invalid_request_error", param: "body", code: "invalid_json" }
        }
      })
      assert.deepStrictEqual((yield* post(url, "{\"ok\":false}")).json, {
        error: { message: "not ok", type: "invalid_request_error", param: "ok", code: "bad" }
      })
      assert.deepStrictEqual(yield* post(url, "{\"ok\":true}"), { status: 200, json: { index: 0 } })
      const exhausted = yield* post(url, "{\"ok\":true}")
      assert.strictEqual(exhausted.status, 400)
      assert.deepStrictEqual(exhausted.json, {
        error: {
          message: "the recording rec.sse holds 1 response; request 2 has none",
          type: "invalid_request_error",
          param: "input",
          code: "replay_exhausted"
        }
      })
      assert.deepStrictEqual((yield* server.requests).map((r) => r.index), [0, 0, 1])
    }).pipe(Effect.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))))

  it("argumentsEqual compares JSON texts after parsing", () => {
    assert.isTrue(ReplayEndpoint.argumentsEqual("{\"a\": 1}", "{\"a\":1}"))
    assert.isFalse(ReplayEndpoint.argumentsEqual("{\"a\":1}", "{\"a\":2}"))
    assert.isFalse(ReplayEndpoint.argumentsEqual("{", "{\"a\":1}"))
  })

  it("argumentsEqual accepts \"{}\" (what a correct client sends) for recorded \"\" arguments", () => {
    assert.isTrue(ReplayEndpoint.argumentsEqual("", "{}"))
    assert.isTrue(ReplayEndpoint.argumentsEqual("{}", ""))
    assert.isTrue(ReplayEndpoint.argumentsEqual(" ", "{ }"))
    assert.isFalse(ReplayEndpoint.argumentsEqual("", "{\"a\":1}"))
  })
})
