/**
 * The gateway's read of a request body on Node's HTTP server (`forEachChunk`), over real loopback HTTP: the
 * body is paused after each `turnBytes` bytes until the next turn of the event loop, and the chunks read are
 * the bytes sent, in order.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createServer, type IncomingMessage, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { forEachChunk, TURN_BYTES } from "../src/internal/requestBody.js"
import { readFixture } from "./utils.js"

/** A recorded answer's output items sent back as input, repeated to about `bytes` bytes of JSON. */
const recordedBody = (bytes: number): Uint8Array => {
  const recorded = JSON.parse(readFixture("responses-json/pai-gpt5-web-search-url-citations.json")) as { output: Array<object> }
  const one = JSON.stringify(recorded.output).length
  const input = Array.from({ length: Math.ceil(bytes / one) }, () => recorded.output).flat()
  return new TextEncoder().encode(JSON.stringify({ model: "gpt-5", input }))
}

/**
 * Sends `body` in one write to a loopback server that reads it with `forEachChunk(turnBytes)`: the chunks
 * read, each with the number of the event loop's turn it came in (a `setImmediate` chain counts turns).
 */
const readOverLoopback = (body: Uint8Array, turnBytes?: number) =>
  Effect.async<ReadonlyArray<{ readonly chunk: Uint8Array; readonly turn: number }>, unknown>((resume) => {
    let turn = 0
    let counting = true
    const count = () => {
      turn++
      if (counting) setImmediate(count)
    }
    const read: Array<{ chunk: Uint8Array; turn: number }> = []
    const server = createServer((incoming: IncomingMessage, response) => {
      const request = { source: incoming } as unknown as HttpServerRequest.HttpServerRequest
      Effect.runPromise(forEachChunk(request, (chunk) => {
        read.push({ chunk: Uint8Array.from(chunk), turn })
        return true
      }, 60_000, undefined, turnBytes)).then(
        () => response.end("ok"),
        (error) => {
          response.statusCode = 500
          response.end(String(error))
        }
      )
    })
    server.listen(0, "127.0.0.1", () => {
      count()
      const { port } = server.address() as AddressInfo
      const client = httpRequest({ port, host: "127.0.0.1", method: "POST", headers: { "content-length": body.length } }, (answer) => {
        answer.resume()
        answer.on("end", () => {
          counting = false
          server.close()
          resume(answer.statusCode === 200 ? Effect.succeed(read) : Effect.fail(new Error(`HTTP ${answer.statusCode}`)))
        })
      })
      client.on("error", (error) => resume(Effect.fail(error)))
      client.end(body)
    })
  })

const joined = (chunks: ReadonlyArray<{ readonly chunk: Uint8Array }>): Uint8Array => {
  const all = new Uint8Array(chunks.reduce((sum, { chunk }) => sum + chunk.length, 0))
  let at = 0
  for (const { chunk } of chunks) {
    all.set(chunk, at)
    at += chunk.length
  }
  return all
}

describe("forEachChunk on Node's HTTP server", () => {
  it.effect("a body paused after every chunk: one chunk per turn of the event loop, the bytes sent, in order", () =>
    Effect.gen(function*() {
      const body = recordedBody(2 * 1024 * 1024)
      const read = yield* readOverLoopback(body, 1)
      assert.deepStrictEqual(joined(read), body)
      assert.isAbove(read.length, 4)
      for (let i = 1; i < read.length; i++) assert.isAbove(read[i]!.turn, read[i - 1]!.turn, `chunk ${i} came in the turn of chunk ${i - 1}`)
    }))

  it.effect("the default bound: at most TURN_BYTES and one chunk read in a turn, the bytes sent, in order", () =>
    Effect.gen(function*() {
      const body = recordedBody(8 * 1024 * 1024)
      const read = yield* readOverLoopback(body)
      assert.deepStrictEqual(joined(read), body)
      const perTurn = new Map<number, number>()
      for (const { chunk, turn } of read) perTurn.set(turn, (perTurn.get(turn) ?? 0) + chunk.length)
      const most = Math.max(...perTurn.values())
      const largestChunk = Math.max(...read.map(({ chunk }) => chunk.length))
      assert.isAtMost(most, TURN_BYTES + largestChunk)
    }))
})
