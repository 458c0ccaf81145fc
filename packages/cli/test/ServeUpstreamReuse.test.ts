/**
 * The gateway's upstream client over real loopback HTTP: a request written into a reused keep-alive
 * connection that the upstream closes before answering is resent once on another; a request on a fresh
 * connection that is reset is not (a 502 `upstream_closed`, the upstream saw it once).
 */
import { Serve } from "@effect-responses/cli"
import { ScriptedServer } from "@effect-responses/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { Socket } from "node:net"

/**
 * A Chat upstream answering "hi" (a whole `chat.completion`: the requests are not streamed), except the
 * requests `drop` picks by their number on their connection, whose connection it destroys unanswered; its
 * idle connections stay open 60 s, so that its own idle close cannot race the gateway's reuse.
 */
const upstream = (drop: (nth: number) => boolean) =>
  Effect.gen(function*() {
    const dropped = { count: 0 }
    const counts = new WeakMap<Socket, number>()
    const hi = ScriptedServer.completion({ content: "hi" })
    const server = yield* ScriptedServer.make([(request, response, body) => {
      const nth = (counts.get(request.socket) ?? 0) + 1
      counts.set(request.socket, nth)
      if (!drop(nth)) return hi(request, response, body)
      dropped.count++
      request.socket.destroy()
    }], { keepAliveTimeout: 60_000 })
    return { url: server.baseUrl, received: server.received, dropped }
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
      assert.isAtLeast(up.dropped.count, 1)
      assert.strictEqual(up.received.length, 3 + up.dropped.count)
    }))

  it.scoped("a fresh connection reset before any response byte: not resent, a 502 upstream_closed", () =>
    Effect.gen(function*() {
      const up = yield* upstream(() => true)
      const where = yield* serving(up.url)
      const answer = yield* post(where)
      assert.strictEqual(answer.status, 502)
      assert.strictEqual(answer.body.error?.code, "upstream_closed")
      assert.strictEqual(up.received.length, 1)
    }))
})
