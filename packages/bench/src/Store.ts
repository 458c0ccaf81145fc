/**
 * The gateway's load with a store: streamed responses per second through the gateway on a loopback port,
 * stateless (`none`), with a SQLite file and with a PostgreSQL server, over an in-memory upstream (a
 * `LanguageModel` answering every call with the same text in `deltas` text deltas), so that what is
 * measured is the gateway and its store, not a model.
 *
 * Every client loop runs two-turn conversations: a new response (stored), then one continuing it by
 * `previous_response_id` (the chain read back, the new response stored). `concurrency` loops run at once
 * until `streams` streamed responses were read; each must end with `response.completed` and the expected
 * text. PostgreSQL needs a server: the one `EFFECT_RESPONSES_TEST_PG_URL` names (as for the store tests), else a
 * throwaway cluster of its own (`scripts/postgres.sh start` in a state directory of its own, as `npm test`
 * starts one, stopped and removed at the end); when neither can be had, the row says why (PostgreSQL's
 * binaries missing, the server not starting).
 *
 * @since 0.1.0
 */
import { LanguageModel, Part, StreamPart, Usage } from "@effect-responses/core"
import { Gateway, type ResponseStore, Upstream } from "@effect-responses/server"
import * as ResponseStorePg from "@effect-responses/server/ResponseStorePg"
import * as ResponseStoreSqlite from "@effect-responses/server/ResponseStoreSqlite"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The run's size: `streams` streamed responses in all, `concurrency` client loops at once, `deltas` text
 * deltas per response.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly streams: number
  readonly concurrency: number
  readonly deltas: number
}

/**
 * One mode's result: streams per second (wall time over all streams), or why it was not measured.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly mode: "none" | "sqlite" | "postgres"
  readonly streams: number
  readonly seconds: number
  readonly streamsPerSecond: number
  readonly skipped?: string | undefined
}

const DELTA = "lorem "

const upstream = (deltas: number) =>
  Upstream.fromLanguageModel({ models: ["bench"] }).pipe(
    Layer.provide(Layer.succeed(
      LanguageModel.LanguageModel,
      LanguageModel.LanguageModel.of({
        generate: () => Effect.dieMessage("bench: streams only"),
        stream: () => {
          const responseId = "bench"
          const parts: Array<StreamPart.StreamPart> = [new StreamPart.ResponseStarted({ responseId, model: "bench" })]
          for (let i = 0; i < deltas; i++) {
            parts.push(new StreamPart.PartUpdate({ responseId, outputIndex: 0, partial: true, part: new Part.TextPart({ text: DELTA }) }))
          }
          parts.push(new StreamPart.PartUpdate({ responseId, outputIndex: 0, partial: false, part: new Part.TextPart({ text: "" }) }))
          parts.push(new StreamPart.ResponseFinished({ responseId, status: "completed", finishReason: "stop", usage: Usage.empty }))
          return Stream.fromIterable(parts)
        }
      })
    ))
  )

const postgresScript = fileURLToPath(new URL("../../../scripts/postgres.sh", import.meta.url))

const postgresSh = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile("bash", [postgresScript, ...args], { env }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout.trim())
      else reject(new Error(stderr.trim() || error.message))
    })
  })

/**
 * The PostgreSQL server of the store section: `EFFECT_RESPONSES_TEST_PG_URL`'s, else a throwaway cluster
 * (`scripts/postgres.sh start` in a state directory of its own; `stop` stops and removes it, and a watcher
 * process does should this process be killed first), else why there is none.
 */
const postgresServer = async (): Promise<
  { readonly url: string; readonly stop: () => Promise<void> } | { readonly skipped: string }
> => {
  const fromEnv = process.env.EFFECT_RESPONSES_TEST_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") return { url: fromEnv, stop: async () => {} }
  // in /tmp, which PostgreSQL's user can enter when the bench runs as root
  const state = mkdtempSync("/tmp/effect-responses-pg-bench-")
  const env = { ...process.env, EFFECT_RESPONSES_PG_STATE: state }
  let url: string
  try {
    url = await postgresSh(["start"], env)
  } catch (error) {
    // start may fail after pg_ctl started the server (createdb failing, pg_ctl's 60 s wait running out while
    // the server goes on starting): stop it first, so that no server is left running without its directory
    await postgresSh(["stop"], env).catch(() => {})
    rmSync(state, { recursive: true, force: true })
    return {
      skipped: `no server: EFFECT_RESPONSES_TEST_PG_URL is unset and scripts/postgres.sh start failed (${
        (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ")
      })`
    }
  }
  const watcher = spawn(
    "bash",
    ["-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; exec bash "$0" stop`, postgresScript],
    { env, detached: true, stdio: "ignore" }
  )
  watcher.unref()
  return {
    url,
    stop: async () => {
      if (watcher.pid !== undefined) {
        try {
          process.kill(-watcher.pid)
        } catch {
          // already gone
        }
      }
      await postgresSh(["stop"], env).catch(() => undefined)
    }
  }
}

/** Reads one streamed response; its id. Throws when it is not `response.completed` with the expected text. */
const streamOnce = async (url: string, body: unknown, expected: string): Promise<string> => {
  const response = await fetch(`${url}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`store bench: HTTP ${response.status}: ${text.slice(0, 300)}`)
  const frames = text.split("\n\n").filter((frame) => frame.trim() !== "")
  const last = frames[frames.length - 1] ?? ""
  const data = JSON.parse(last.slice(last.indexOf("data: ") + 6)) as {
    readonly type: string
    readonly response: { readonly id: string; readonly output: ReadonlyArray<{ readonly content?: ReadonlyArray<{ readonly text?: string }> }> }
  }
  const answer = data.response.output[0]?.content?.[0]?.text
  if (data.type !== "response.completed" || answer !== expected) {
    throw new Error(`store bench: the stream ended with ${data.type} and ${JSON.stringify(answer?.slice(0, 40))}`)
  }
  return data.response.id
}

const run = async (
  mode: Result["mode"],
  store: Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError> | undefined,
  options: Options
): Promise<Result> => {
  const runtime = ManagedRuntime.make(
    Gateway.layer().pipe(
      Layer.provide(upstream(options.deltas)),
      Layer.provide(store ?? Layer.empty),
      // a long keep-alive: fetch reuses sockets, and one the server closes at its 5 s default just as a
      // request goes out fails that request on a loaded machine
      Layer.provideMerge(NodeHttpServer.layer(() => {
        const server = createServer()
        server.keepAliveTimeout = 120_000
        return server
      }, { port: 0, host: "127.0.0.1" })),
      // stderr, warnings up: the access log lines (info, one per request) would fill the report and cost time
      Layer.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.stringLogger))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )
  try {
    const url = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => {
      const address = server.address
      return address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}/v1` : "?"
    }))
    const expected = DELTA.repeat(options.deltas)
    const stored = store !== undefined
    // warm-up
    await streamOnce(url, { model: "bench", input: "warm up", stream: true, store: stored }, expected)
    let left = options.streams
    const loop = async () => {
      while (left > 0) {
        left -= 2
        const first = await streamOnce(url, { model: "bench", input: "Hello", stream: true, store: stored }, expected)
        const continued = store === undefined
          ? { model: "bench", input: [{ role: "user", content: "Hello" }, { role: "assistant", content: expected }, { role: "user", content: "More" }], stream: true, store: false }
          : { model: "bench", input: "More", previous_response_id: first, stream: true }
        await streamOnce(url, continued, expected)
      }
    }
    const start = performance.now()
    await Promise.all(Array.from({ length: options.concurrency }, loop))
    const seconds = (performance.now() - start) / 1000
    const streams = options.streams + (left < 0 ? -left : 0)
    return { mode, streams, seconds, streamsPerSecond: streams / seconds }
  } finally {
    await runtime.dispose()
  }
}

/**
 * Measures streams per second stateless, with SQLite and with PostgreSQL (see the module doc). Fails when a
 * stream is wrong.
 *
 * @since 0.1.0
 * @category measuring
 */
export const measure = async (options: Options, progress: (message: string) => void = () => {}): Promise<ReadonlyArray<Result>> => {
  const results: Array<Result> = []
  progress(`store: ${options.streams} streams, ${options.concurrency} at once, stateless`)
  results.push(await run("none", undefined, options))
  const dir = mkdtempSync(join(tmpdir(), "effect-responses-bench-"))
  try {
    progress("store: SQLite")
    results.push(await run("sqlite", ResponseStoreSqlite.layer({ filename: join(dir, "bench.db") }), options))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const server = await postgresServer()
  if ("skipped" in server) {
    progress(`store: PostgreSQL not measured: ${server.skipped}`)
    results.push({ mode: "postgres", streams: 0, seconds: 0, streamsPerSecond: 0, skipped: server.skipped })
  } else {
    try {
      progress("store: PostgreSQL")
      results.push(await run("postgres", ResponseStorePg.layer({ url: Redacted.make(server.url) }), options))
    } finally {
      await server.stop()
    }
  }
  return results
}
