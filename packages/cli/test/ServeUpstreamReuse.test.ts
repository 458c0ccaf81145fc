/**
 * The gateway's upstream client over real loopback HTTP: a request written into a reused keep-alive
 * connection that the upstream closes before answering is resent once on another; a request on a fresh
 * connection that is reset is not (a 502 `upstream_closed`, the upstream saw it once). A large body, which
 * the client writes a piece per turn (internal `pacedBody`), reaches the upstream whole and the same at
 * every attempt: resent, and retried (`upstreamRetries`).
 */
import { Serve } from "@effect-responses/cli"
import { ScriptedServer } from "@effect-responses/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { IncomingMessage } from "node:http"
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
    // the framing headers of each request, in the order of `received`
    const framing: Array<{ readonly contentLength: string | undefined; readonly chunked: boolean }> = []
    const hi = ScriptedServer.completion({ content: "hi" })
    const server = yield* ScriptedServer.make([(request, response, body) => {
      framing.push(framingOf(request))
      const nth = (counts.get(request.socket) ?? 0) + 1
      counts.set(request.socket, nth)
      if (!drop(nth)) return hi(request, response, body)
      dropped.count++
      request.socket.destroy()
    }], { keepAliveTimeout: 60_000 })
    return { url: server.baseUrl, received: server.received, dropped, framing }
  })

const framingOf = (request: IncomingMessage) => ({
  contentLength: request.headers["content-length"],
  chunked: request.headers["transfer-encoding"] !== undefined
})

const serving = (upstreamUrl: string, upstreamRetries = 0) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const console = yield* Console.consoleWith(Effect.succeed)
    yield* Layer.build(Serve.layer({
      upstream: upstreamUrl,
      port: 0,
      host: "127.0.0.1",
      upstreamKeyEnv: Option.none(),
      apiKeyEnv: Option.none(),
      builtinTools: "drop",
      upstreamRetries
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

const post = (where: string, request: object = { model: "m", input: "hello", stream: false }) =>
  Effect.promise(() =>
    fetch(`${where}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request)
    }).then(async (response) => ({ status: response.status, body: await response.json() as Answer }))
  )

/** 3 MB of `instructions` (twelve of the client's 256 KiB pieces), with characters of 1 to 4 UTF-8 bytes. */
const large = {
  model: "m",
  input: "hello",
  stream: false,
  instructions: "Plan the change, then édit the files; 改 the tests 🙂. ".repeat(55_000)
}

/**
 * That every request `received` is the same body, whole: the gateway's Chat request, the large `instructions`
 * as its system message, sent with its `content-length` and not chunked.
 */
const sameLargeBodies = (
  received: ReadonlyArray<ScriptedServer.Received>,
  framing: ReadonlyArray<ReturnType<typeof framingOf>>
) => {
  const first = received[0]!.text
  assert.isAbove(Buffer.byteLength(first), 3_000_000)
  const messages = received[0]!.body.messages as ReadonlyArray<{ readonly role: string; readonly content: unknown }>
  assert.deepStrictEqual(messages[0], { role: "system", content: large.instructions })
  for (const request of received) assert.strictEqual(request.text, first)
  for (const headers of framing) {
    assert.deepStrictEqual(headers, { contentLength: String(Buffer.byteLength(first)), chunked: false })
  }
}

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

  it.scoped("a large body resent on another connection: the upstream gets the same bytes whole each time", () =>
    Effect.gen(function*() {
      const up = yield* upstream((nth) => nth === 2)
      const where = yield* serving(up.url)
      for (let i = 0; i < 3; i++) {
        const answer = yield* post(where, large)
        assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      }
      assert.isAtLeast(up.dropped.count, 1)
      assert.strictEqual(up.received.length, 3 + up.dropped.count)
      sameLargeBodies(up.received, up.framing)
    }))

  // live: the retries wait (500 ms, then 1 s) on the clock
  it.scopedLive("a large body retried (upstreamRetries 2) after the upstream dropped it: the same bytes whole at every attempt", () =>
    Effect.gen(function*() {
      // each connection's first request is dropped: the first attempt's and each retry's (on a fresh connection)
      const up = yield* upstream(() => true)
      const where = yield* serving(up.url, 2)
      const answer = yield* post(where, large)
      assert.strictEqual(answer.status, 502)
      assert.strictEqual(up.received.length, 3)
      sameLargeBodies(up.received, up.framing)
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
