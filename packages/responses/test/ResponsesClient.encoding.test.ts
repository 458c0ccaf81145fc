/**
 * `ResponsesClient` against a loopback server that compresses its answers whatever the request asks
 * (`content-encoding` gzip, deflate, br: a server or proxy ignoring `accept-encoding: identity`): the recorded
 * answers read as they read plain, streamed and not, through Node's undici client (which decodes nothing)
 * and `fetch` (which decodes by itself); a coding the client does not know fails naming it.
 */
import { ResponsesClient, type ResponsesRequest } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib"
import { readFixture } from "./fixtures.js"

const SSE = readFixture("responses-sse/pai-gpt4omini-text-logprobs.sse")
const JSON_BODY = readFixture("responses-json/pai-gpt4o-text.json")

const requestBody: ResponsesRequest.RequestBody = {
  model: "gpt-4o-mini",
  input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
  store: false
}

const compress = (encoding: string, body: string): Uint8Array =>
  encoding === "gzip"
    ? gzipSync(body)
    : encoding === "deflate"
    ? deflateSync(body)
    : encoding === "br"
    ? brotliCompressSync(body)
    : encoding === "identity"
    ? Buffer.from(body)
    : gzipSync(body)

/** A loopback server answering every request with the fixture (SSE when asked to stream) in `encoding`, in small writes. */
const compressingServer = (encoding: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly close: () => void }>((resume) => {
      const server = createServer((request, response) => {
        let text = ""
        request.on("data", (chunk: Buffer) => text += chunk.toString())
        request.on("end", () => {
          const stream = JSON.parse(text).stream === true
          const bytes = compress(encoding, stream ? SSE : JSON_BODY)
          response.writeHead(200, {
            "content-type": stream ? "text/event-stream" : "application/json",
            ...(encoding === "identity" ? {} : { "content-encoding": encoding })
          })
          // in pieces: the decoder is fed a compressed body chunk by chunk
          for (let i = 0; i < bytes.length; i += 97) response.write(bytes.subarray(i, i + 97))
          response.end()
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
          close: () => server.close()
        })))
    }),
    (server) => Effect.sync(server.close)
  )

const answers = (encoding: string, http: Layer.Layer<HttpClient.HttpClient>) =>
  Effect.gen(function*() {
    const server = yield* compressingServer(encoding)
    return yield* Effect.flatMap(ResponsesClient.ResponsesClient, (client) =>
      Effect.all({
        whole: client.create(requestBody),
        parts: Effect.map(Stream.runCollect(client.createStream(requestBody)), Chunk.toArray)
      })).pipe(
        Effect.provide(ResponsesClient.layer({ baseUrl: server.url, retry: { times: 0 } })),
        Effect.provide(http)
      )
  }).pipe(Effect.scoped)

describe("ResponsesClient and a compressed answer (content-encoding)", () => {
  it.effect("gzip, deflate and br: the recorded answers read as they do plain, streamed and not, over undici and fetch", () =>
    Effect.gen(function*() {
      const plain = yield* answers("identity", NodeHttpClient.layerUndici)
      assert.deepStrictEqual(plain.whole, JSON.parse(JSON_BODY))
      expect(plain.parts.length).toBeGreaterThan(10)
      for (const encoding of ["gzip", "deflate", "br"]) {
        const decoded = yield* answers(encoding, NodeHttpClient.layerUndici)
        assert.deepStrictEqual(decoded.whole, plain.whole, encoding)
        assert.deepStrictEqual(decoded.parts, plain.parts, encoding)
      }
      // fetch decodes the body itself and keeps the header: not decoded twice
      const fetched = yield* answers("gzip", FetchHttpClient.layer)
      assert.deepStrictEqual(fetched.whole, plain.whole)
      assert.deepStrictEqual(fetched.parts, plain.parts)
    }))

  it.effect("a coding it does not decode fails with MalformedOutput naming it, no bytes of the body in the message", () =>
    Effect.gen(function*() {
      const server = yield* compressingServer("compress")
      const [whole, streamed] = yield* Effect.flatMap(ResponsesClient.ResponsesClient, (client) =>
        Effect.all([
          Effect.flip(client.create(requestBody)),
          Effect.flip(Stream.runDrain(client.createStream(requestBody)))
        ])).pipe(
          Effect.provide(ResponsesClient.layer({ baseUrl: server.url, retry: { times: 0 } })),
          Effect.provide(NodeHttpClient.layerUndici)
        )
      for (const error of [whole, streamed]) {
        expect(error._tag).toBe("MalformedOutput")
        expect(error.message).toContain("content-encoding compress")
        expect(error.message).not.toMatch(/[\u0000-\u0008\u001f\ufffd]/)
      }
    }).pipe(Effect.scoped))
})
