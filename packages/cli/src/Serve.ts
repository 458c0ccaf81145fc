/**
 * `effect-responses serve --upstream URL [--port 8787] [--host 127.0.0.1] [--upstream-key-env VAR]
 * [--api-key-env VAR] [--builtin-tools drop|reject] [--upstream-headers-timeout 300]
 * [--upstream-idle-timeout 180] [--upstream-retries 0] [--replay-reasoning-content] [--max-input-items 20000]
 * [--max-body-mb 16] [--request-body-timeout 120] [--client-stall-timeout 60] [--shutdown-grace 5]
 * [--store none|sqlite:PATH|postgres:URL] [--store-ttl 30d] [--store-max-responses N]`: the gateway, a
 * `POST /v1/responses` server (stateless unless `--store`)
 * in front of the Chat Completions backend at `--upstream` (e.g. `http://localhost:11434/v1` for Ollama,
 * `http://localhost:8000/v1` for vLLM). Point a Responses client at `http://HOST:PORT/v1`.
 *
 * - `--upstream-key-env VAR`: the upstream's API key is read from the environment variable `VAR` (never
 *   from the command line, where `ps` would show it).
 * - `--api-key-env VAR`: clients must send `Authorization: Bearer <value of VAR>`; others get a 401. `VAR` is
 *   one variable, whose value may be a comma-separated list of keys (`KEYS=keyA,keyB`), one per tenant, each
 *   trimmed of spaces; an empty entry (`keyA,,keyB`) is refused, naming its place. With `--store`, a
 *   response stored with one key is visible only with that key.
 * - `--store`: `none` (default: stateless), `sqlite:PATH` (an embedded SQLite file, created when missing;
 *   needs the `better-sqlite3` package installed next to the CLI) or `postgres:URL` (a PostgreSQL database
 *   several gateway instances share; a password is better left out of the URL and given as `PGPASSWORD`).
 *   With a store, `store`, `previous_response_id`, `item_reference` and `GET`/`DELETE /v1/responses/{id}`
 *   work (see the server package's `Gateway` module).
 * - `--store-ttl`: how long a stored response is kept (`30d` default; `12h`, `90m`, `3600s`, or seconds).
 * - `--store-max-responses`: at most this many responses are kept (default 100000), counted over all tenants
 *   (one bound for the store, not one per key); the oldest go first.
 * - `--builtin-tools`: `drop` (default) removes built-in tools (`web_search`, …) with a warning, `reject`
 *   answers 400.
 * - `--upstream-headers-timeout SECONDS` (default 300): the longest wait for the upstream's response
 *   headers (a non-streaming upstream call must answer within it); `--upstream-idle-timeout SECONDS`
 *   (default 180): the longest silence between two chunks of the upstream's body (in a stream, SSE
 *   comments such as keep-alive pings are silence too). When one passes, the
 *   upstream request is aborted and the client gets a 504 `upstream_timeout` (before the first byte) or
 *   `response.failed` with `upstream_timeout` (after it).
 * - `--upstream-retries N` (default 0): the gateway's own retries of a failed upstream call before the
 *   first byte. 0 by default because the client's SDK retries already, and the upstream's `retry-after`
 *   and request id are passed on to it. With 0 each request goes upstream once, even when the upstream
 *   closes the connection without answering (a 502 `upstream_closed`: it may have received the request),
 *   except on a reused keep-alive connection closed before any response byte, where the request is resent
 *   once on another connection, not counted as an attempt (the upstream closed it idle as the request went
 *   out: Node's and uvicorn's 5 s keep-alive; as browsers and proxies do);
 *   with N at most N + 1 times, each attempt counted in the access log's `upstream_attempts`. On shutdown
 *   the retries stop: a backoff or `retry-after` wait, or a retry in flight, ends at once and the request
 *   gets its 503 `server_shutting_down` (no attempt is made on the closed upstream client).
 * - `--replay-reasoning-content` (default off): the reasoning items a client sends back (their summary, or
 *   their `reasoning_text` content) go upstream as `reasoning_content` on the assistant message they belong
 *   to (the one holding the calls and text that followed them), as DeepSeek's thinking mode requires on
 *   the turns after a tool call (it answers 400 "The `reasoning_content` in the thinking mode must be passed
 *   back to the API" without it). Off by default, and not chosen by the upstream's host: OpenAI refuses the
 *   field, and the models that need it are served by many hosts (DeepSeek's own, OpenRouter, vLLM…). An
 *   upstream 400 that names `reasoning_content` is logged with a warning naming this flag. Stateless
 *   clients send reasoning back only with an `encrypted_content`: a request whose `include` has
 *   `reasoning.encrypted_content` gets one holding the reasoning text (base64url, not encrypted; see
 *   `ResponsesLifecycle`), which the gateway reads back. The AI SDK's default (`store` unset) sends an
 *   `item_reference` instead, which only `--store` resolves: without `--store`, start-up logs that once as a
 *   warning (`REPLAY_WITHOUT_STORE`).
 * - `--host HOST` (default 127.0.0.1): an address other machines can reach (`0.0.0.0`, `::`, a LAN address)
 *   with `--upstream-key-env` and without `--api-key-env` lets anyone who reaches the gateway spend the
 *   upstream key: start-up logs that once as a warning (`exposedKeyWarning`).
 * - `--max-input-items N` (default 20000): more input items, or more content parts in one item, get a 400
 *   `array_above_max_length`.
 * - `--max-body-mb N` (default 16): a request body larger than N MiB gets a 413 `request_too_large` (by its
 *   `Content-Length`, or as soon as a chunked body passes it). A coding agent's conversation that holds
 *   screenshots (`input_image` data URLs in tool outputs) passes 16 MiB after a few of them; OpenAI takes
 *   larger bodies, so raise it for such clients (the gateway reads a large body in slices, one item at a time).
 *   At most 511 (`Gateway.MAX_BODY_BYTES_LIMIT`: Node's longest string, 512 MiB less 24 characters, which a
 *   body that is no JSON is decoded into whole to name where it fails).
 * - `--request-body-timeout SECONDS` (default 120): a request body that has not arrived whole within it gets
 *   a 408 `request_timeout` and its connection is closed (a client that never ends its body holds nothing);
 *   at most 2147483 (about 24.8 days, the longest a JS timer waits). Request headers must arrive whole
 *   within 30 s, or within this timeout when it is shorter (else a 408 from Node and the connection closed).
 * - `--client-stall-timeout SECONDS` (default 60): a client that accepts none of its response's bytes for
 *   that long (the gateway's writes wait in the connection's buffer and none drains: a client that stopped
 *   reading, a frozen process) has its connection closed and its upstream call aborted (logged as a warning
 *   naming the flag; the access log's outcome `client_closed`), checked every second. The gateway stops
 *   reading the upstream while its client does not read, so `--upstream-idle-timeout` never fires for such a
 *   client: without this bound it held its upstream call, a model server's generation slot, as long as it
 *   kept its connection. A client that reads, however slowly, is never cut; nor is a response waiting for
 *   the upstream (nothing is buffered). At most 2147483.
 * - `--shutdown-grace SECONDS` (default 5; 0 to 2147483): on SIGTERM or Ctrl-C, how long the connections
 *   still open have to end (see below) before they are closed and the process exits.
 *
 * Before it listens it sends one streamed and one whole request through a gateway of the same options to a
 * loopback upstream of its own (nothing reaches `--upstream`, nothing is logged; at most 5 s): a fresh
 * process compiles its code at first use, which made the first client request hold the event loop for tens
 * of milliseconds. Once listening it prints one line, `effect-responses: serving http://HOST:PORT/v1 ->
 * UPSTREAM`, and runs until interrupted (Ctrl-C, SIGTERM: exit 130, 143). On interruption it stops
 * accepting connections, a stream in flight ends with `response.failed` code `server_shutting_down` (its
 * upstream request aborted; a request waiting for its answer gets a 503 with that code), and each
 * kept-alive client connection is closed as its response ends, so that the process exits as soon as its
 * clients have read their answers rather than when their keep-alive runs out (3-4 s with undici, under the
 * `openai` SDK). A connection still open `--shutdown-grace` seconds after the signal (a client that does
 * not read its answer, a request body still arriving) is closed then, and the process exits. A second
 * SIGTERM or Ctrl-C during that wait exits at once, with the status of the first signal (143 or 130),
 * closing every connection as the process ends.
 *
 * @since 0.1.0
 */
import { AiError } from "@effect-responses/core"
import { Gateway, ResponseStore, Upstream } from "@effect-responses/server"
import * as Command from "@effect/cli/Command"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { IncomingMessage } from "node:http"
import * as ClosingServer from "./internal/closingServer.js"
import * as Commands from "./internal/commands.js"
import * as Defaults from "./internal/defaults.js"
import { modelNotFound } from "./internal/modelNotFound.js"
import { pacedBody } from "./internal/pacedBody.js"
import { resendOnReused } from "./internal/resendOnReused.js"
import { warmUp } from "./internal/warmUp.js"

/**
 * The gateway cannot start: an option out of its range or not of its form, in the command line's words
 * (`option --max-body-mb: '0' is less than 1 (allowed: 1 or more MiB)`, `option --upstream: 'x' is not an
 * http(s) URL (…)`), a named environment variable is unset, a store that cannot be opened, or the address
 * cannot be listened on (in use, no permission: the message names `host:port` and the code).
 *
 * @since 0.1.0
 * @category errors
 */
export class ServeSetupError extends Schema.TaggedError<ServeSetupError>("@effect-responses/cli/ServeSetupError")("ServeSetupError", {
  description: Schema.String
}) {
  override get message(): string {
    return this.description
  }
}

/**
 * The settings of `serve`, as parsed from the command line.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions {
  readonly upstream: string
  readonly port: number
  readonly host: string
  readonly upstreamKeyEnv: Option.Option<string>
  readonly apiKeyEnv: Option.Option<string>
  readonly builtinTools: "drop" | "reject"
  /** seconds; default 300 */
  readonly upstreamHeadersTimeout?: number | undefined
  /** seconds; default 180 */
  readonly upstreamIdleTimeout?: number | undefined
  /** default 0 */
  readonly upstreamRetries?: number | undefined
  /** send the reasoning of assistant messages back upstream as `reasoning_content`; default `false` */
  readonly replayReasoningContent?: boolean | undefined
  /** default 20,000 */
  readonly maxInputItems?: number | undefined
  /** MiB; default 16 */
  readonly maxBodyMb?: number | undefined
  /** seconds; default 120 */
  readonly requestBodyTimeout?: number | undefined
  /** seconds a response may wait unread by its client before its connection is closed; default 60 (since 0.2.0) */
  readonly clientStallTimeout?: number | undefined
  /** seconds the connections still open on shutdown have before they are closed; default 5 (since 0.2.0) */
  readonly shutdownGrace?: number | undefined
  readonly store?: string | undefined
  readonly storeTtl?: string | undefined
  readonly storeMaxResponses?: number | undefined
}

/**
 * A `--store-ttl` value as a duration: a number with a unit (`30d`, `12h`, `90m`, `3600s`) or a number of
 * seconds; `undefined` when it is neither or not positive.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseTtl: (text: string) => Duration.Duration | undefined = Defaults.parseTtl

/**
 * The warning `serve --replay-reasoning-content` logs once at start-up without `--store`: a stateless
 * gateway cannot resolve an `item_reference`, so a client that sends its reasoning back only that way (the
 * AI SDK's Responses model on its defaults, `store` unset) gets no `reasoning_content` replayed, and an
 * upstream that requires it refuses the turn after a tool call.
 *
 * @since 0.2.0
 * @category constants
 */
export const REPLAY_WITHOUT_STORE =
  "--replay-reasoning-content without --store: a client that sends reasoning back only as an item_reference " +
  "(the AI SDK on its defaults) gets no reasoning_content replayed; have it send store: false with include " +
  "[\"reasoning.encrypted_content\"], or run the gateway with --store"

/**
 * The `ResponseStore` layer of a `--store` value (`undefined` for `none`), loaded on demand so that a
 * stateless gateway loads no database driver. Fails with `ServeSetupError` for an unknown value or a bad
 * TTL or bound (checked without a store too), in the command line's words (`option --store-ttl: '5x' is not
 * a duration (…)`); the layer fails with one when the database cannot be opened.
 *
 * @since 0.2.0
 * @category layers
 */
export const storeLayer = (
  options: Pick<ServeOptions, "store" | "storeTtl" | "storeMaxResponses">
): Effect.Effect<Layer.Layer<ResponseStore.ResponseStore, ServeSetupError> | undefined, ServeSetupError> =>
  Effect.gen(function*() {
    // the bounds are checked with no store too (they then do nothing): a bad value is refused, never ignored
    const problem = Defaults.storeOptionsProblem(options)
    if (problem !== undefined) return yield* new ServeSetupError({ description: problem })
    const ttl = parseTtl(options.storeTtl ?? "30d") ?? Duration.days(30)
    const maxResponses = options.storeMaxResponses ?? ResponseStore.DEFAULT_MAX_RESPONSES
    const spec = options.store ?? "none"
    if (spec === "none") return undefined
    if (spec.startsWith("sqlite:") && spec.length > "sqlite:".length) {
      const driver = yield* Effect.tryPromise({
        try: () => import("@effect-responses/server/ResponseStoreSqlite"),
        catch: (cause) =>
          new ServeSetupError({
            description: `--store sqlite: the SQLite driver could not be loaded (install better-sqlite3 next to the CLI: npm install better-sqlite3): ${cause instanceof Error ? cause.message : String(cause)}`
          })
      })
      const filename = spec.slice("sqlite:".length)
      return Layer.mapError(driver.layer({ filename, ttl, maxResponses }), (error) =>
        new ServeSetupError({ description: `--store sqlite:${filename}: ${error.description}` }))
    }
    // the checks let through only a PostgreSQL URL besides
    const url = Defaults.postgresUrl(spec) ?? spec
    const driver = yield* Effect.tryPromise({
      try: () => import("@effect-responses/server/ResponseStorePg"),
      catch: (cause) =>
        new ServeSetupError({
          description: `--store postgres: the PostgreSQL driver could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`
        })
    })
    // the cause in the driver's words (connection refused, no such database), the URL without its password
    return Layer.mapError(driver.layer({ url: Redacted.make(url), ttl, maxResponses }), (error) =>
      new ServeSetupError({ description: `--store postgres:${Defaults.withoutPassword(url)}: ${error.description}` }))
  })

/**
 * Whether `host` (a `--host` value) is a loopback address: `localhost`, `127.0.0.0/8`, `::1` (with or without
 * brackets) or `127.x` mapped into IPv6 (`::ffff:127.0.0.1`). Every other address, `0.0.0.0` and `::` above
 * all, can be reached from other machines.
 *
 * @since 0.2.0
 * @category parsing
 */
export const isLoopbackHost = (host: string): boolean => {
  const address = host.toLowerCase().replace(/^\[(.*)\]$/, "$1")
  return address === "localhost" || address === "::1" || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address)
}

/**
 * The warning `serve` logs once at start-up when it listens on an address other machines can reach
 * (`--host` not loopback, see `isLoopbackHost`) with an upstream key (`--upstream-key-env VAR`) and no
 * `--api-key-env`: every request that reaches the gateway is sent upstream with that key, so anyone on the
 * network can spend it.
 *
 * @since 0.2.0
 * @category constants
 */
export const exposedKeyWarning = (host: string, port: number, upstreamKeyEnv: string): string =>
  `--host ${host} without --api-key-env: anyone who can reach ${host.includes(":") ? `[${host}]` : host}:${port} ` +
  `can send requests upstream with the key in ${upstreamKeyEnv}; set --api-key-env VAR so that clients must ` +
  "send a key, or listen on 127.0.0.1"

const secretFrom = (variable: Option.Option<string>, flag: string) =>
  Option.match(variable, {
    onNone: () => Effect.succeed<Redacted.Redacted | undefined>(undefined),
    onSome: (name) =>
      Config.redacted(name).pipe(
        Effect.mapError(() =>
          new ServeSetupError({ description: `${flag} ${name}: the environment variable ${name} is not set` })
        )
      )
  })

/**
 * The upstream's HTTP client: undici's over an agent of its own, as `NodeHttpClient.layerUndici`, without
 * the layer's context merged into every request's (`HttpClient.layerMergedContext`, an `Effect.provide` of
 * about 17 fiber steps per upstream call): the gateway sets no undici options in a context. A request
 * written into a reused keep-alive connection that the upstream closes or resets before any byte of the
 * response is resent once on another (`internal/resendOnReused.ts`, logged at Debug level): the upstream
 * closed it idle as the request went out (Node's and uvicorn's 5 s keep-alive against undici's reuse up to
 * about 4 s, later under load) and never read it. A fresh connection's is not resent. A body of more than
 * 256 KiB is written a piece of 256 KiB per turn of the event loop (`internal/pacedBody.ts`): one socket
 * write of a 10 MB body held the event loop for 13-14 ms.
 */
const upstreamClient = Layer.scoped(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const log = (error: Error) =>
      Runtime.runSync(runtime)(
        Effect.logDebug(`upstream: resending a request once: its reused keep-alive connection closed before any response byte (${error.message})`)
      )
    const agent = yield* NodeHttpClient.makeDispatcher
    return NodeHttpClient.makeUndici(agent.compose(pacedBody, resendOnReused(log)))
  })
)

/**
 * The gateway as a layer: on `NodeHttpServer` at `host:port`, over the Chat Completions upstream, printing
 * the listening line once the port is bound. Fails with `ServeSetupError` (see the module doc) for an
 * option the command line would refuse (checked as it checks it, with its message), and when `host:port`
 * cannot be listened on (`EADDRINUSE`, `EACCES`, …).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ServeOptions) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      // the command line's checks, in its words: a library user's options are checked as its are
      const problem = Defaults.serveOptionsProblem(options)
      if (problem !== undefined) return yield* new ServeSetupError({ description: problem })
      const headersTimeout = options.upstreamHeadersTimeout ?? 300
      const idleTimeout = options.upstreamIdleTimeout ?? 180
      const retries = options.upstreamRetries ?? 0
      const maxInputItems = options.maxInputItems ?? 20_000
      const maxBodyMb = options.maxBodyMb ?? 16
      const bodyTimeout = options.requestBodyTimeout ?? 120
      const stallTimeout = options.clientStallTimeout ?? 60
      const shutdownGrace = options.shutdownGrace ?? 5
      const runtime = yield* Effect.runtime<never>()
      const onStall = (request: IncomingMessage) =>
        Runtime.runSync(runtime)(Effect.logWarning(
          `a client (${request.socket.remoteAddress ?? "?"}) accepted none of its response to ${request.method} ${
            (request.url ?? "").slice(0, 200)
          } for ${stallTimeout} s: its connection is closed and its upstream call aborted (--client-stall-timeout)`
        ))
      const upstreamKey = yield* secretFrom(options.upstreamKeyEnv, "--upstream-key-env")
      const keys = yield* secretFrom(options.apiKeyEnv, "--api-key-env")
      // several comma-separated keys (one variable's value): one tenant each, each trimmed
      const entries = keys !== undefined && Redacted.value(keys).includes(",")
        ? Redacted.value(keys).split(",").map((key) => key.trim())
        : undefined
      const empty = entries === undefined ? -1 : entries.indexOf("")
      if (empty !== -1) {
        const name = Option.getOrElse(options.apiKeyEnv, () => "")
        return yield* new ServeSetupError({
          description: `--api-key-env ${name}: entry ${empty + 1} of ${entries!.length} of ${name} (a comma-separated ` +
            `list of keys) is empty: every request with it would be refused with 401; remove the extra comma`
        })
      }
      const [apiKey, ...apiKeys] = keys === undefined ? [] : entries === undefined ? [keys] : entries.map(Redacted.make)
      const store = yield* storeLayer(options)
      if (upstreamKey !== undefined && keys === undefined && !isLoopbackHost(options.host)) {
        yield* Effect.logWarning(exposedKeyWarning(options.host, options.port, Option.getOrElse(options.upstreamKeyEnv, () => "")))
      }
      if (options.replayReasoningContent === true && store === undefined) {
        yield* Effect.logWarning(REPLAY_WITHOUT_STORE)
      }
      const announce = Layer.effectDiscard(
        Effect.flatMap(HttpServer.HttpServer, (server) => {
          const address = server.address
          // an IPv6 address goes in brackets, as a URL needs it (`http://[::1]:8787/v1`)
          const host = address._tag === "TcpAddress" && address.hostname.includes(":") ? `[${address.hostname}]` : undefined
          const where = address._tag === "TcpAddress" ? `http://${host ?? address.hostname}:${address.port}/v1` : "?"
          return Console.log(`effect-responses: serving ${where} -> ${options.upstream}`)
        })
      )
      // everything is checked before the port is bound, and the line is printed once the gateway serves
      const gatewayOptions = yield* Gateway.validateOptions({
        apiKey,
        apiKeys,
        builtinTools: options.builtinTools,
        maxInputItems,
        maxBodyBytes: maxBodyMb * 1024 * 1024,
        bodyTimeout: Duration.seconds(bodyTimeout)
      })
      // before the port is bound: the first client request does not pay for compiling the gateway's code
      yield* warmUp(gatewayOptions, upstreamClient)
      const gateway = Gateway.layer(gatewayOptions)
      return Layer.flatMap(gateway, () => announce).pipe(
        Layer.provide(Layer.map(
          Upstream.chatCompletions({
            baseUrl: options.upstream,
            apiKey: upstreamKey,
            headersTimeout: Duration.seconds(headersTimeout),
            idleTimeout: Duration.seconds(idleTimeout),
            retry: { times: retries },
            ...(options.replayReasoningContent === true ? { requestOptions: { replayReasoningContent: true } } : {})
          }),
          (context) =>
            Context.add(
              context,
              Upstream.Upstream,
              withHints(Context.get(context, Upstream.Upstream), options.upstream, options.replayReasoningContent === true)
            )
        )),
        Layer.provide(upstreamClient),
        Layer.provide(
          NodeHttpServer.layer(() =>
            ClosingServer.make(ClosingServer.timeoutsOf(bodyTimeout), {
              stallTimeoutMillis: stallTimeout * 1000,
              shutdownGraceMillis: shutdownGrace * 1000,
              onStall
            }), { port: options.port, host: options.host }).pipe(
            Layer.mapError((error) => listenError(options, error.cause))
          )
        ),
        // provided last, so built first: a store that cannot be opened stops the gateway before it listens
        Layer.provide(store ?? Layer.empty)
      )
    })
  )

/**
 * The upstream with a warning logged when it answers 404: the URL tried and, when the answer says the
 * upstream does not know the request's model (`modelNotFound`: OpenAI's `model_not_found` code, or OpenAI's,
 * vLLM's, Ollama's or llama.cpp's wording of it; then also for a 400, as llama.cpp answers it), that it does
 * not know it; else, when `--upstream` has no `/v1`, the hint that it usually needs one (Ollama, vLLM and
 * others serve `…/v1/chat/completions`), or to check `--upstream`; and
 * when, without `--replay-reasoning-content` (`replaying`), it answers 400 about `reasoning_content`
 * (DeepSeek's thinking mode on a turn after a tool call): the hint to pass that flag.
 */
const withHints = (upstream: Upstream.Service, base: string, replaying: boolean): Upstream.Service => {
  const url = `${base.replace(/\/+$/, "")}/chat/completions`
  const hint = /\/v\d+[a-z]*(\/|$)/.test(new URL(base).pathname)
    ? "check --upstream"
    : `--upstream has no /v1: try ${base.replace(/\/+$/, "")}/v1`
  const warn = (error: AiError.AiError) =>
    error._tag === "HttpError" && modelNotFound(error)
      ? Effect.logWarning(
        `the upstream answered ${error.status} to POST ${url}: it does not know the request's model (${
          AiError.capMessage(error.description, 200)
        })`
      )
      : error._tag === "HttpError" && error.status === 404
      ? Effect.logWarning(`the upstream answered 404 to POST ${url}: ${hint}`)
      : !replaying && error._tag === "HttpError" && error.status === 400 && error.description.includes("reasoning_content")
      ? Effect.logWarning(
        "the upstream refused a request for its reasoning_content: start serve with --replay-reasoning-content to " +
          "send the reasoning items clients send back as reasoning_content"
      )
      : Effect.void
  return {
    ...upstream,
    languageModel: (request) =>
      Effect.map(upstream.languageModel(request), (model) => ({
        generate: (prompt, options) => Effect.tapError(model.generate(prompt, options), warn),
        stream: (prompt, options) => Stream.tapError(model.stream(prompt, options), warn)
      }))
  }
}

/** The listen failure (`ServeError`, whose message is empty) as one line naming the address. */
const listenError = (options: ServeOptions, cause: unknown): ServeSetupError => {
  const where = `${options.host.includes(":") ? `[${options.host}]` : options.host}:${options.port}`
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined
  const description = code === "EADDRINUSE"
    ? `cannot listen on ${where}: the address is already in use (EADDRINUSE); pass another --port`
    : code === "EACCES"
    ? `cannot listen on ${where}: permission denied (EACCES); pass a port above 1023`
    : code === "EADDRNOTAVAIL"
    ? `cannot listen on ${where}: no such local address (EADDRNOTAVAIL); check --host`
    : `cannot listen on ${where}: ${cause instanceof Error ? cause.message : String(cause)}`
  return new ServeSetupError({ description })
}

/**
 * The `serve` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Commands.serve.pipe(Command.withHandler((options) => Layer.launch(layer(options))))
