/**
 * The gateway's upstream client over real loopback HTTP: a request written into a reused keep-alive
 * connection that the upstream closes before answering is resent once on another; a request on a fresh
 * connection that is reset is not (a 502 `upstream_closed`, the upstream saw it once).
 */
import { Serve } from "@effect-responses/cli"
import { assert, describe, it } from "@effect/vitest"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"

/** A Chat upstream answering "hi", except the requests `drop` picks (by their number on their connection). */
const upstream = (drop: (nth: number) => boolean) =>
  Effect.gen(function*() {
    const seen = { requests: 0, dropped: 0 }
    const counts = new WeakMap<Socket, number>()
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const nth = (counts.get(request.socket) ?? 0) + 1
      counts.set(request.socket, nth)
      seen.requests++
      if (drop(nth)) {
        seen.dropped++
        request.socket.destroy()
        return
      }
      // the requests are not streamed: the whole chat.completion
      request.resume().on("end", () => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({
          id: "c",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }]
        }))
      })
    })
    server.keepAliveTimeout = 60_000
    const port = yield* Effect.async<number>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as { port: number }).port)))
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
    return { url: `http://127.0.0.1:${port}/v1`, seen }
  })

const serving = (upstreamUrl: string) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const console = yield* Console.consoleWith(Effect.succeed)
    yield* Layer.build(Serve.layer({
      upstream: upstreamUrl,
      port: 0,
      host: "127.0.0.1",
      upstreamKeyEnv: Option.none(),
      apiKeyEnv: Option.none(),
      builtinTools: "drop"
    })).pipe(
      Effect.withConsole({ ...console, log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(args.join(" "))) })
    )
    const line = lines.find((text) => text.startsWith("effect-responses: serving "))!
    return /^effect-responses: serving (\S+) -> /.exec(line)![1]!
  })

/** The parts of a gateway answer these tests read: a Response's first output text, or an error's code. */
interface Answer {
  readonly output?: ReadonlyArray<{ readonly content?: ReadonlyArray<{ readonly text?: string }> }>
  readonly error?: { readonly code?: string }
}

const post = (where: string) =>
  Effect.promise(() =>
    fetch(`${where}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "hello", stream: false })
    }).then(async (response) => ({ status: response.status, body: await response.json() as Answer }))
  )

describe("effect-responses serve: the upstream's keep-alive connections", () => {
  it.scoped("a reused connection closed before any response byte: the request is resent once, the client gets its answer", () =>
    Effect.gen(function*() {
      // every second request of a connection is dropped unanswered, as a server closing it idle would
      const up = yield* upstream((nth) => nth === 2)
      const where = yield* serving(up.url)
      for (let i = 0; i < 3; i++) {
        const answer = yield* post(where)
        assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
        assert.strictEqual(answer.body.output?.[0]?.content?.[0]?.text, "hi")
      }
      assert.isAtLeast(up.seen.dropped, 1)
      assert.strictEqual(up.seen.requests, 3 + up.seen.dropped)
    }))

  it.scoped("a fresh connection reset before any response byte: not resent, a 502 upstream_closed", () =>
    Effect.gen(function*() {
      const up = yield* upstream(() => true)
      const where = yield* serving(up.url)
      const answer = yield* post(where)
      assert.strictEqual(answer.status, 502)
      assert.strictEqual(answer.body.error?.code, "upstream_closed")
      assert.strictEqual(up.seen.requests, 1)
    }))
})
