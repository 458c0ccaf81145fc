/**
 * The server `serve` listens with: once closing, a keep-alive connection whose response was in flight
 * when `close()` was called is closed as that response ends, instead of staying open for as long as the
 * client keeps it alive (which kept the process running seconds after SIGTERM); a request body is read one
 * socket read per turn of the event loop, not up to 2 MiB in one turn.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, request } from "node:http"
import type { AddressInfo } from "node:net"
import * as ClosingServer from "../src/internal/closingServer.js"

describe("ClosingServer", () => {
  it("close() completes once the response in flight ends, though the client keeps its connection alive", async () => {
    const server = ClosingServer.make()
    // no idle timeout on the server's side: only the closing rule can end the kept-alive connection
    server.keepAliveTimeout = 0
    let end: () => void = () => undefined
    server.on("request", (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write("data: 1\n\n")
      end = () => response.end("data: 2\n\n")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const agent = new Agent({ keepAlive: true })
    try {
      const { body, socketClosed } = await new Promise<{ body: Promise<string>; socketClosed: Promise<void> }>((resolve, reject) => {
        const outgoing = request({ port: (server.address() as AddressInfo).port, host: "127.0.0.1", agent }, (response) => {
          const socketClosed = new Promise<void>((done) => response.socket.once("close", () => done()))
          let text = ""
          const body = new Promise<string>((done) => {
            response.on("data", (chunk: Buffer) => {
              text += chunk.toString("utf8")
            })
            response.on("end", () => done(text))
          })
          resolve({ body, socketClosed })
        })
        outgoing.on("error", reject)
        outgoing.end()
      })
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      end()
      expect(await body).toBe("data: 1\n\ndata: 2\n\n")
      // the server closed the connection the agent would have kept
      await socketClosed
      await closed
    } finally {
      agent.destroy()
      server.closeAllConnections()
    }
  })

  it("a body sent at once is read one socket read per turn of the event loop", async () => {
    const server = ClosingServer.make()
    const body = Buffer.alloc(4 * 1024 * 1024, "x")
    // turns of the event loop, counted by an immediate that queues itself again
    let turn = 0
    let spinning: NodeJS.Immediate = setImmediate(function spin() {
      turn++
      spinning = setImmediate(spin)
    })
    const perTurn = new Map<number, number>()
    const received = new Promise<number>((resolve) => {
      server.on("request", (incoming, response) => {
        let size = 0
        // as the platform's reader does: every buffered chunk taken as soon as the request says it has one
        incoming.on("readable", () => {
          for (let chunk: Buffer | null = incoming.read(); chunk !== null; chunk = incoming.read()) {
            size += chunk.length
            perTurn.set(turn, (perTurn.get(turn) ?? 0) + chunk.length)
          }
        })
        incoming.on("end", () => {
          response.end()
          resolve(size)
        })
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const outgoing = request({ port: (server.address() as AddressInfo).port, host: "127.0.0.1", method: "POST" })
      outgoing.on("response", (response) => response.resume())
      outgoing.end(body)
      expect(await received).toBe(body.length)
      // one read is at most 64 KiB (libuv's read size), the reader's small first pieces aside
      expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(128 * 1024)
    } finally {
      clearImmediate(spinning)
      server.closeAllConnections()
      server.close()
    }
  })

  it("timeoutsOf: headers within 30 s or the body timeout when shorter; the whole request past the gateway's body timeout", () => {
    expect(ClosingServer.timeoutsOf(120)).toEqual({ headersTimeoutMillis: 30_000, requestTimeoutMillis: 151_000 })
    expect(ClosingServer.timeoutsOf(5)).toEqual({ headersTimeoutMillis: 5_000, requestTimeoutMillis: 11_000 })
    // Node's own 300 s bound on a request would have cut a longer body timeout short
    expect(ClosingServer.timeoutsOf(600).requestTimeoutMillis).toBeGreaterThan(600_000)
    const server = ClosingServer.make(ClosingServer.timeoutsOf(2_147_483))
    expect([server.headersTimeout, server.requestTimeout]).toEqual([30_000, 2_147_514_000])
  })
})
