/**
 * `serve` on an address it cannot listen on, in process: one clear line naming the address and the code.
 */
import { Serve } from "@effect-responses/cli"
import { assert, describe, it } from "@effect/vitest"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { mkdtempSync, rmSync } from "node:fs"
import { connect, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
/** What `--max-body-mb N` over its bound gets: the bound, and why there is one. */
const MAX_BODY_MB_OVER = (n: number) =>
  `option --max-body-mb: '${n}' is more than 511 (allowed: 1 to 511 MiB: Node's longest string, which a body that ` +
  `is no JSON is read into, is 512 MiB less 24 characters)`


describe("effect-responses serve", () => {
  it.scoped("a busy port fails with ServeSetupError naming host:port and EADDRINUSE", () =>
    Effect.gen(function*() {
      const busy = createServer()
      const port = yield* Effect.async<number>((resume) => {
        busy.listen(0, "127.0.0.1", () => resume(Effect.succeed((busy.address() as { port: number }).port)))
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => busy.close()))
      const error = yield* Effect.flip(Layer.build(Serve.layer({
        upstream: "http://127.0.0.1:9/v1",
        port,
        host: "127.0.0.1",
        upstreamKeyEnv: Option.none(),
        apiKeyEnv: Option.none(),
        builtinTools: "drop"
      })))
      assert.strictEqual(error._tag, "ServeSetupError")
      assert.strictEqual(
        error.message,
        `cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE); pass another --port`
      )
    }))
})

describe("effect-responses serve: the address line and the body bound", () => {
  const base = {
    upstream: "http://127.0.0.1:9/v1",
    port: 0,
    upstreamKeyEnv: Option.none(),
    apiKeyEnv: Option.none(),
    builtinTools: "drop" as const
  }
  const serving = (options: Serve.ServeOptions) =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const console = yield* Console.consoleWith(Effect.succeed)
      yield* Layer.build(Serve.layer(options)).pipe(
        Effect.withConsole({ ...console, log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(args.join(" "))) })
      )
      const line = lines.find((text) => text.startsWith("effect-responses: serving "))
      assert.isDefined(line)
      return /^effect-responses: serving (\S+) -> /.exec(line!)![1]!
    })

  it.scoped("an IPv6 host is printed in brackets, a URL a client can use", () =>
    Effect.gen(function*() {
      const where = yield* serving({ ...base, host: "::1" })
      assert.match(where, /^http:\/\/\[::1\]:\d+\/v1$/)
      const health = yield* Effect.promise(() => fetch(where.replace(/\/v1$/, "/health")))
      assert.strictEqual(health.status, 200)
    }))

  it.scoped("--max-body-mb bounds the request body: 413 above it, read below it", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ model: "m", input: "x".repeat(2 * 1024 * 1024) })
      const post = (where: string) =>
        Effect.promise(() =>
          fetch(`${where}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body })
            .then(async (response) => ({ status: response.status, text: await response.text() }))
        )
      const small = yield* post(yield* serving({ ...base, host: "127.0.0.1", maxBodyMb: 1 }))
      assert.strictEqual(small.status, 413)
      assert.strictEqual(JSON.parse(small.text).error.message, "The request body is larger than 1048576 bytes.")
      // the default (16 MiB) reads it: the upstream (port 9) is not there, so a 502, not a 413
      const large = yield* post(yield* serving({ ...base, host: "127.0.0.1" }))
      assert.strictEqual(large.status, 502)
    }))

  it.scoped("half-sent request headers: a 408 and the connection closed within --request-body-timeout when it is under 30 s (Node's default held them 60-90 s)", () =>
    Effect.gen(function*() {
      const where = new URL(yield* serving({ ...base, host: "127.0.0.1", requestBodyTimeout: 1 }))
      const answer = yield* Effect.promise(() =>
        new Promise<string>((resolve) => {
          const socket = connect(Number(where.port), where.hostname)
          let text = ""
          socket.on("data", (data) => (text += data.toString()))
          socket.on("close", () => resolve(text))
          socket.write("POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: appl")
        })
      )
      assert.match(answer, /^HTTP\/1\.1 408 /)
    }))

  it.effect("an option out of range stops Serve.layer before it binds, in the command line's words (Cli.test.ts)", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Partial<Serve.ServeOptions>, string]> = [
        [{ port: 99999 }, "option --port: '99999' is not a port (allowed: 0 to 65535; 0 picks a free one)"],
        [{ port: -5 }, "option --port: '-5' is not a port (allowed: 0 to 65535; 0 picks a free one)"],
        [{ host: "" }, "option --host: the address is empty (give one, e.g. 127.0.0.1, or 0.0.0.0 to listen on every interface)"],
        [{ builtinTools: "foo" as "drop" }, "option --builtin-tools: 'foo' is not drop or reject"],
        [{ upstreamRetries: -1 }, "option --upstream-retries: '-1' is less than 0 (allowed: 0 or more retries)"],
        [{ maxInputItems: 0 }, "option --max-input-items: '0' is less than 1 (allowed: 1 or more items)"],
        [{ maxBodyMb: 0 }, "option --max-body-mb: '0' is less than 1 (allowed: 1 to 511 MiB)"],
        [{ maxBodyMb: 512 }, MAX_BODY_MB_OVER(512)],
        [{ maxBodyMb: 1.5 }, "option --max-body-mb: '1.5' is not an integer"],
        [{ upstreamHeadersTimeout: 0 }, "option --upstream-headers-timeout: '0' is less than 1 (allowed: 1 or more seconds)"],
        [{ upstreamIdleTimeout: 0 }, "option --upstream-idle-timeout: '0' is less than 1 (allowed: 1 or more seconds)"],
        [{ requestBodyTimeout: -3 }, "option --request-body-timeout: '-3' is less than 1 (allowed: 1 to 2147483 seconds)"],
        [{ requestBodyTimeout: 2147484 }, "option --request-body-timeout: '2147484' is more than 2147483 (allowed: 1 to 2147483 seconds)"],
        [{ clientStallTimeout: 0 }, "option --client-stall-timeout: '0' is less than 1 (allowed: 1 to 2147483 seconds)"],
        [{ shutdownGrace: 2147484 }, "option --shutdown-grace: '2147484' is more than 2147483 (allowed: 0 to 2147483 seconds)"],
        [{ upstream: "notaurl" }, "option --upstream: 'notaurl' is not an http(s) URL (e.g. http://localhost:11434/v1)"],
        [{ store: "foo" }, "option --store: 'foo' is not none, sqlite:PATH or postgres:URL"],
        [{ storeTtl: "5x" }, "option --store-ttl: '5x' is not a duration (30d, 12h, 90m, 3600s, or seconds)"],
        [{ storeMaxResponses: 0 }, "option --store-max-responses: '0' is not a positive integer"]
      ]
      for (const [options, message] of cases) {
        const error = yield* Effect.flip(Layer.build(Serve.layer({ ...base, host: "127.0.0.1", ...options })).pipe(Effect.scoped))
        assert.strictEqual(error._tag, "ServeSetupError", message)
        assert.strictEqual(error.message, message)
      }
    }))
})

describe("effect-responses serve --replay-reasoning-content", () => {
  const base = {
    upstream: "http://127.0.0.1:9/v1",
    port: 0,
    host: "127.0.0.1",
    upstreamKeyEnv: Option.none(),
    apiKeyEnv: Option.none(),
    builtinTools: "drop" as const,
    replayReasoningContent: true
  }
  /** The warnings logged while `serve` with `options` starts. */
  const warnings = (options: Serve.ServeOptions) =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") lines.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      yield* Layer.build(Serve.layer(options)).pipe(Effect.provide(Logger.add(logger)))
      return lines
    })

  it.scoped("without --store: one start-up warning that item_reference clients get no reasoning_content", () =>
    Effect.gen(function*() {
      const lines = yield* warnings(base)
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(lines[0], Serve.REPLAY_WITHOUT_STORE)
      assert.include(lines[0], "--replay-reasoning-content without --store")
      assert.include(lines[0], "item_reference (the AI SDK on its defaults)")
      assert.include(lines[0], "store: false with include [\"reasoning.encrypted_content\"], or run the gateway with --store")
    }))

  it.scoped("with --store, or without the flag: no warning", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "effect-responses-serve-warn-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      assert.deepStrictEqual(yield* warnings({ ...base, store: `sqlite:${join(dir, "responses.db")}` }), [])
      assert.deepStrictEqual(yield* warnings({ ...base, replayReasoningContent: false }), [])
    }))
})

describe("effect-responses serve --host beyond loopback with an upstream key", () => {
  const variable = "EFFECT_RESPONSES_TEST_EXPOSED_UPSTREAM_KEY"
  const base = {
    upstream: "http://127.0.0.1:9/v1",
    port: 0,
    host: "0.0.0.0",
    upstreamKeyEnv: Option.some(variable),
    apiKeyEnv: Option.none(),
    builtinTools: "drop" as const
  }
  /** The warnings logged while `serve` with `options` starts (the upstream key set in its variable). */
  const warnings = (options: Serve.ServeOptions) =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") lines.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          process.env[variable] = "sk-upstream"
          process.env[`${variable}_CLIENTS`] = "client-key"
        }),
        () =>
          Effect.sync(() => {
            delete process.env[variable]
            delete process.env[`${variable}_CLIENTS`]
          })
      )
      yield* Layer.build(Serve.layer(options)).pipe(Effect.provide(Logger.add(logger)))
      return lines
    })

  it.scoped("0.0.0.0, the key, no --api-key-env: one start-up warning naming the address and the key's variable", () =>
    Effect.gen(function*() {
      const lines = yield* warnings(base)
      assert.deepStrictEqual(lines, [Serve.exposedKeyWarning("0.0.0.0", 0, variable)])
      assert.include(lines[0], "--host 0.0.0.0 without --api-key-env: anyone who can reach 0.0.0.0:0")
      assert.include(lines[0], `with the key in ${variable}`)
    }))

  it.scoped("loopback, a client key, or no upstream key: no warning", () =>
    Effect.gen(function*() {
      for (const host of ["127.0.0.1", "localhost", "::1"]) assert.deepStrictEqual(yield* warnings({ ...base, host }), [], host)
      assert.deepStrictEqual(yield* warnings({ ...base, apiKeyEnv: Option.some(`${variable}_CLIENTS`) }), [])
      assert.deepStrictEqual(yield* warnings({ ...base, upstreamKeyEnv: Option.none() }), [])
    }))

  it("isLoopbackHost: loopback names and addresses only", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", "::ffff:127.0.0.1"]) {
      assert.isTrue(Serve.isLoopbackHost(host), host)
    }
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "example.com", "127.0.0.1.example.com"]) {
      assert.isFalse(Serve.isLoopbackHost(host), host)
    }
  })
})

describe("effect-responses serve --api-key-env: a comma-separated list of keys", () => {
  const variable = "EFFECT_RESPONSES_SERVE_LISTEN_TEST_KEYS"
  const setup = (value: string) =>
    Effect.acquireRelease(Effect.sync(() => void (process.env[variable] = value)), () => Effect.sync(() => void delete process.env[variable])).pipe(
      Effect.zipRight(Effect.flip(Layer.build(Serve.layer({
        upstream: "http://127.0.0.1:9/v1",
        port: 0,
        host: "127.0.0.1",
        upstreamKeyEnv: Option.none(),
        apiKeyEnv: Option.some(variable),
        builtinTools: "drop"
      }))))
    )

  it.scoped("an empty entry is refused, naming its place in the list (not 'the key is empty')", () =>
    Effect.gen(function*() {
      const error = yield* setup("keyA,,keyB")
      assert.strictEqual(error._tag, "ServeSetupError")
      assert.strictEqual(
        error.message,
        `--api-key-env ${variable}: entry 2 of 3 of ${variable} (a comma-separated list of keys) is empty: every request with it would be refused with 401; remove the extra comma`
      )
      const trailing = yield* setup("keyA, ")
      assert.include(trailing.message, `entry 2 of 2 of ${variable}`)
    }))
})
