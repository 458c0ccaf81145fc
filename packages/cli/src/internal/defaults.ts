/**
 * The defaults the verbs' declarations (`commands.ts`) show in `--help`, kept in a module of their own that
 * imports neither `@effect/cli` nor the HTTP stack: the public modules that own them (`Demo`, `Request`,
 * `Protocol`) re-export them, and the declarations read them without loading those modules.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"

/** The prompt of the demo when none is given (`Demo.defaultPrompt`). @internal */
export const DEFAULT_PROMPT = "What is (12 + 7) * 3 * 10? Use the calculator for each step."

/** The model a `request` body names when `--model` is not given (`Request.DEFAULT_MODEL`). @internal */
export const DEFAULT_MODEL = "gpt-5.1"

/**
 * The most responses `serve --store` keeps by default: the server package's
 * `ResponseStore.DEFAULT_MAX_RESPONSES` (`Cli.test.ts` checks they agree), written out here so that the
 * declarations do not load the store.
 *
 * @internal
 */
export const DEFAULT_MAX_RESPONSES = 100_000

/** The protocol from `OPENAI_PROTOCOL` (default `responses`); `Protocol.protocolConfig`. @internal */
export const protocolConfig: Config.Config<"responses" | "chat-completions"> = Config.literal(
  "responses",
  "chat-completions"
)("OPENAI_PROTOCOL").pipe(Config.withDefault("responses" as const))

/** A `--store-ttl` value as a duration (`Serve.parseTtl`, which documents it). @internal */
export const parseTtl = (text: string): Duration.Duration | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(d|h|m|s)?\s*$/.exec(text)
  if (match === null) return undefined
  const value = Number(match[1])
  if (!(value > 0)) return undefined
  const unit = match[2] ?? "s"
  return unit === "d" ? Duration.days(value) : unit === "h" ? Duration.hours(value) : unit === "m" ? Duration.minutes(value) : Duration.seconds(value)
}

/**
 * What is wrong with a `--store` value, `undefined` when it is one `Serve.storeLayer` takes: `none`,
 * `sqlite:PATH` (a path is needed) or `postgres:URL` / `postgresql:…` (a URL is needed). A value that
 * starts with `postgres` is not echoed: it may hold a password. @internal
 */
export const storeProblem = (spec: string): string | undefined => {
  if (spec === "none") return undefined
  if (spec.startsWith("sqlite:") && spec.length > "sqlite:".length) return undefined
  if ((spec.startsWith("postgres:") && spec.length > "postgres:".length) || (spec.startsWith("postgresql:") && spec.length > "postgresql:".length)) {
    return postgresUrl(spec) === undefined
      ? "'postgres:…' is not a PostgreSQL URL (postgres:postgres://USER@HOST:PORT/DATABASE, or postgres://…)"
      : undefined
  }
  const shown = spec.startsWith("postgres") && spec.length > "postgresql:".length ? "postgres:…" : spec
  return `'${shown}' is not none, sqlite:PATH or postgres:URL`
}

/**
 * The PostgreSQL URL of a `--store` value (`postgres:postgres://…`, `postgres://…`, `postgresql://…`):
 * `postgres://` or `postgresql://` then what the URL parser takes; `undefined` when it is not one. @internal
 */
export const postgresUrl = (spec: string): string | undefined => {
  const url = spec.startsWith("postgres:postgres") ? spec.slice("postgres:".length) : spec
  if (!/^postgres(ql)?:\/\//.test(url)) return undefined
  try {
    new URL(url)
    return url
  } catch {
    return undefined
  }
}

/** A PostgreSQL URL as it may be shown: without its password (nor a `password` parameter). @internal */
export const withoutPassword = (url: string): string => {
  const parsed = new URL(url)
  parsed.password = ""
  parsed.searchParams.delete("password")
  parsed.searchParams.delete("sslpassword")
  return parsed.href
}

/** What is wrong with a `--store-ttl` value (see `parseTtl`), `undefined` when it is a duration. @internal */
export const ttlProblem = (text: string): string | undefined =>
  parseTtl(text) === undefined ? `'${text}' is not a duration (30d, 12h, 90m, 3600s, or seconds)` : undefined

/** What is wrong with a `--store-max-responses` value, `undefined` when it is a positive integer. @internal */
export const maxResponsesProblem = (n: number): string | undefined =>
  Number.isInteger(n) && n > 0 ? undefined : `'${n}' is not a positive integer`

/** What is wrong with a `--port` value, `undefined` when it is a port (0, any free port, to 65535). @internal */
export const portProblem = (n: number): string | undefined =>
  Number.isInteger(n) && n >= 0 && n <= 65535 ? undefined : `'${n}' is not a port (allowed: 0 to 65535; 0 picks a free one)`

/**
 * What is wrong with an integer option's value, `undefined` when it is `min` or more; `unit` names what it
 * counts in the message (`seconds`). @internal
 */
export const atLeastProblem = (min: number, unit: string) => (n: number): string | undefined =>
  !Number.isInteger(n)
    ? `'${n}' is not an integer`
    : n < min
    ? `'${n}' is less than ${min} (allowed: ${min} or more ${unit})`
    : undefined

/**
 * The most seconds a timeout the gateway arms with a JS timer may be: 2147483 (about 24.8 days, 2^31-1 ms); a
 * longer `setTimeout` fires after 1 ms. @internal
 */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000)

/**
 * What is wrong with an integer option's value, `undefined` when it is `min` to `max`; `unit` names what it
 * counts in the message. @internal
 */
export const betweenProblem = (min: number, max: number, unit: string) => (n: number): string | undefined =>
  !Number.isInteger(n)
    ? `'${n}' is not an integer`
    : n < min || n > max
    ? `'${n}' is ${n < min ? "less" : "more"} than ${n < min ? min : max} (allowed: ${min} to ${max} ${unit})`
    : undefined

/**
 * The largest `serve --max-body-mb`: 511, the whole MiB within the server package's
 * `Gateway.MAX_BODY_BYTES_LIMIT` (536,870,888 bytes, 512 MiB less 24: V8's longest string, which a body that
 * is no JSON is decoded into whole; `Cli.test.ts` checks they agree), written out here so that the
 * declarations do not load the gateway. @internal
 */
export const MAX_BODY_MB = 511

/** What is wrong with a `--max-body-mb` value, `undefined` when it is 1 to `MAX_BODY_MB`. @internal */
export const maxBodyMbProblem = (n: number): string | undefined => {
  const problem = betweenProblem(1, MAX_BODY_MB, "MiB")(n)
  return problem !== undefined && n > MAX_BODY_MB
    ? `${problem.slice(0, -1)}: Node's longest string, which a body that is no JSON is read into, is 512 MiB less 24 characters)`
    : problem
}

/** What is wrong with a `--upstream` value, `undefined` when it is an http(s) URL. @internal */
export const upstreamProblem = (text: string): string | undefined => {
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
    ? undefined
    : `'${text}' is not an http(s) URL (e.g. http://localhost:11434/v1)`
}

/**
 * What is wrong with a `--host` value, `undefined` when it is not empty: an empty address (`--host "$HOST"`
 * with `HOST` unset) would listen on every interface. @internal
 */
export const hostProblem = (text: string): string | undefined =>
  text.trim() === ""
    ? `the address is empty (give one, e.g. 127.0.0.1, or 0.0.0.0 to listen on every interface)`
    : undefined

/** What is wrong with a `--builtin-tools` value, `undefined` when it is `drop` or `reject`. @internal */
export const builtinToolsProblem = (text: string): string | undefined =>
  text === "drop" || text === "reject" ? undefined : `'${text}' is not drop or reject`

/** One of `serve`'s checked options: its flag and what is wrong with a value (`undefined` when nothing). @internal */
export interface ServeCheck<A> {
  readonly flag: string
  readonly problem: (value: A) => string | undefined
  /** The line a bad value gets, `option FLAG: PROBLEM` (after `effect-responses serve: ` on the command line). */
  readonly message: (value: A | undefined) => string | undefined
}

const serveCheck = <A>(flag: string, problem: (value: A) => string | undefined): ServeCheck<A> => ({
  flag,
  problem,
  message: (value) => {
    const wrong = value === undefined ? undefined : problem(value)
    return wrong === undefined ? undefined : `option ${flag}: ${wrong}`
  }
})

/**
 * The checks of `serve`'s options, their one home: the command line runs each on its option as it reads it
 * (`commands.ts`: a usage error, exit status 2), `Serve.layer` and `Serve.storeLayer` run them on the
 * options they are given (`serveOptionsProblem`: a `ServeSetupError`), with the same words. @internal
 */
export const serveChecks = {
  upstream: serveCheck("--upstream", upstreamProblem),
  port: serveCheck("--port", portProblem),
  host: serveCheck("--host", hostProblem),
  builtinTools: serveCheck("--builtin-tools", builtinToolsProblem),
  upstreamHeadersTimeout: serveCheck("--upstream-headers-timeout", atLeastProblem(1, "seconds")),
  upstreamIdleTimeout: serveCheck("--upstream-idle-timeout", atLeastProblem(1, "seconds")),
  upstreamRetries: serveCheck("--upstream-retries", atLeastProblem(0, "retries")),
  maxInputItems: serveCheck("--max-input-items", atLeastProblem(1, "items")),
  maxBodyMb: serveCheck("--max-body-mb", maxBodyMbProblem),
  requestBodyTimeout: serveCheck("--request-body-timeout", betweenProblem(1, MAX_TIMER_SECONDS, "seconds")),
  clientStallTimeout: serveCheck("--client-stall-timeout", betweenProblem(1, MAX_TIMER_SECONDS, "seconds")),
  shutdownGrace: serveCheck("--shutdown-grace", betweenProblem(0, MAX_TIMER_SECONDS, "seconds")),
  store: serveCheck("--store", storeProblem),
  storeTtl: serveCheck("--store-ttl", ttlProblem),
  storeMaxResponses: serveCheck("--store-max-responses", maxResponsesProblem)
} as const

/** The options of `serve` that `serveChecks` checks; an absent one takes its default, which passes. @internal */
export type ServeChecked = {
  readonly [K in keyof typeof serveChecks]?: (typeof serveChecks)[K] extends ServeCheck<infer A> ? A | undefined : never
}

/** The store's options' first problem (`option FLAG: PROBLEM`), `undefined` when there is none. @internal */
export const storeOptionsProblem = (options: Pick<ServeChecked, "store" | "storeTtl" | "storeMaxResponses">): string | undefined =>
  serveChecks.storeTtl.message(options.storeTtl) ??
    serveChecks.storeMaxResponses.message(options.storeMaxResponses) ??
    serveChecks.store.message(options.store)

/** The first problem of `serve`'s options (`option FLAG: PROBLEM`), `undefined` when there is none. @internal */
export const serveOptionsProblem = (options: ServeChecked): string | undefined =>
  serveChecks.upstream.message(options.upstream) ??
    serveChecks.port.message(options.port) ??
    serveChecks.host.message(options.host) ??
    serveChecks.builtinTools.message(options.builtinTools) ??
    serveChecks.upstreamHeadersTimeout.message(options.upstreamHeadersTimeout) ??
    serveChecks.upstreamIdleTimeout.message(options.upstreamIdleTimeout) ??
    serveChecks.upstreamRetries.message(options.upstreamRetries) ??
    serveChecks.maxInputItems.message(options.maxInputItems) ??
    serveChecks.maxBodyMb.message(options.maxBodyMb) ??
    serveChecks.requestBodyTimeout.message(options.requestBodyTimeout) ??
    serveChecks.clientStallTimeout.message(options.clientStallTimeout) ??
    serveChecks.shutdownGrace.message(options.shutdownGrace) ??
    storeOptionsProblem(options)
