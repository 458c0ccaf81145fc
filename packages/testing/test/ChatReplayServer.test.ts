/**
 * `ChatReplayServer` on a loopback Node server: a raw SSE chat capture is served as recorded.
 */
import { ChatCapture } from "@effect-responses/chat-completions"
import { ChatReplayServer } from "@effect-responses/testing"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createServer } from "node:http"

const post = (url: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } })
    return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
  })

// llama.cpp's server before its PR #16109: an error as a field of its own, then [DONE]
const LLAMA = "error: {\"code\":400,\"message\":\"the request exceeds the available context size\",\"type\":\"invalid_request_error\"}\n\ndata: [DONE]\n\n"
const PINGED = "event: ping\ndata: 2026-12-03 14:00:00.000000\n\n" +
  "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n"

describe("ChatReplayServer", () => {
  it.effect("serves a raw SSE capture's frames as recorded; a non-streamed request for an error response gets the error and its code as status", () =>
    Effect.gen(function*() {
      for (const [text, streamed] of [[LLAMA, true], [PINGED, true], [LLAMA, false]] as const) {
        const capture = yield* ChatCapture.parse(text, "capture.sse")
        // a server of its own for each capture
        const answer = yield* Effect.scoped(
          Effect.flatMap(ChatReplayServer.make({ capture }), (server) =>
            post(`${server.baseUrl}/chat/completions`, { model: "m", messages: [{ role: "user", content: "hi" }], stream: streamed }))
        ).pipe(Effect.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
        if (streamed) {
          assert.strictEqual(answer.status, 200, answer.text)
          // the ping kept where it came, no [DONE] added where the capture has none
          assert.strictEqual(answer.text, text)
        } else {
          assert.strictEqual(answer.status, 400)
          assert.deepStrictEqual(JSON.parse(answer.text), {
            error: { code: 400, message: "the request exceeds the available context size", type: "invalid_request_error" }
          })
        }
      }
    }))
})
