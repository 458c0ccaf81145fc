/**
 * `effect-responses serve --upstream URL [--port 8787] [--host 127.0.0.1] [--upstream-key-env VAR]
 * [--api-key-env VAR] [--builtin-tools drop|reject]`: the gateway, a stateless `POST /v1/responses` server
 * in front of the Chat Completions backend at `--upstream` (e.g. `http://localhost:11434/v1` for Ollama,
 * `http://localhost:8000/v1` for vLLM). Point a Responses client at `http://HOST:PORT/v1`.
 *
 * - `--upstream-key-env VAR`: the upstream's API key is read from the environment variable `VAR` (never
 *   from the command line, where `ps` would show it).
 * - `--api-key-env VAR`: clients must send `Authorization: Bearer <value of VAR>`; others get a 401.
 * - `--builtin-tools`: `drop` (default) removes built-in tools (`web_search`, …) with a warning, `reject`
 *   answers 400.
 *
 * Once listening it prints one line, `effect-responses: serving http://HOST:PORT/v1 -> UPSTREAM`, and runs
 * until interrupted (Ctrl-C).
 *
 * @since 0.1.0
 */
import { Gateway, Upstream } from "@effect-responses/server"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createServer } from "node:http"

/**
 * The gateway cannot start: the upstream is not an http(s) URL, a named environment variable is unset, or
 * the address cannot be listened on (in use, no permission: the message names `host:port` and the code).
 *
 * @since 0.1.0
 * @category errors
 */
export class ServeSetupError extends Schema.TaggedError<ServeSetupError>()("ServeSetupError", {
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
}

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
 * The gateway as a layer: on `NodeHttpServer` at `host:port`, over the Chat Completions upstream, printing
 * the listening line once the port is bound. Fails with `ServeSetupError` (see the module doc), also when
 * `host:port` cannot be listened on (`EADDRINUSE`, `EACCES`, …).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ServeOptions) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      let url: URL | undefined
      try {
        url = new URL(options.upstream)
      } catch {
        url = undefined
      }
      if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
        return yield* new ServeSetupError({
          description: `--upstream ${options.upstream}: not an http(s) URL (e.g. http://localhost:11434/v1)`
        })
      }
      const upstreamKey = yield* secretFrom(options.upstreamKeyEnv, "--upstream-key-env")
      const apiKey = yield* secretFrom(options.apiKeyEnv, "--api-key-env")
      const announce = Layer.effectDiscard(
        Effect.flatMap(HttpServer.HttpServer, (server) => {
          const address = server.address
          const where = address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}/v1` : "?"
          return Console.log(`effect-responses: serving ${where} -> ${options.upstream}`)
        })
      )
      return Layer.mergeAll(Gateway.layer({ apiKey, builtinTools: options.builtinTools }), announce).pipe(
        Layer.provide(Upstream.chatCompletions({ baseUrl: options.upstream, apiKey: upstreamKey })),
        Layer.provide(NodeHttpClient.layerUndici),
        Layer.provide(
          NodeHttpServer.layer(createServer, { port: options.port, host: options.host }).pipe(
            Layer.mapError((error) => listenError(options, error.cause))
          )
        )
      )
    })
  )

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
export const command = Command.make(
  "serve",
  {
    upstream: Options.text("upstream").pipe(
      Options.withDescription("the Chat Completions backend's base URL, with /v1 (e.g. http://localhost:11434/v1)")
    ),
    port: Options.integer("port").pipe(Options.withDescription("the port to listen on"), Options.withDefault(8787)),
    host: Options.text("host").pipe(Options.withDescription("the address to listen on"), Options.withDefault("127.0.0.1")),
    upstreamKeyEnv: Options.text("upstream-key-env").pipe(
      Options.withDescription("the environment variable holding the upstream's API key"),
      Options.optional
    ),
    apiKeyEnv: Options.text("api-key-env").pipe(
      Options.withDescription("the environment variable holding the key clients must send as a bearer token"),
      Options.optional
    ),
    builtinTools: Options.choice("builtin-tools", ["drop", "reject"]).pipe(
      Options.withDescription("what to do with built-in tools (web_search, file_search, …): drop them, or reject the request"),
      Options.withDefault("drop" as const)
    )
  },
  (options) => Layer.launch(layer(options))
).pipe(Command.withDescription("a stateless /v1/responses gateway in front of a Chat Completions backend"))
