/**
 * The command lines of the verbs as `@effect/cli` declares them (arguments, options, defaults,
 * descriptions), without their handlers.
 *
 * The front end (`args.ts`), `--help` and the executable's start read only these declarations: the verbs'
 * modules (`Chat`, `Decode`, `Aggregate`, `Serve`, `Request`), with the HTTP client and server, the
 * decoders and the response store behind them, are loaded when a verb runs (`Cli.command` imports the
 * verb's module on demand), so `effect-responses --help` does not read them. Each verb's module adds its
 * handler to its declaration here (`Chat.command`, …).
 *
 * Nothing here may import a verb's module or a package of the HTTP stack; the constants the declarations
 * show (the demo prompt, the default model, the protocol's configuration) are in `defaults.ts`.
 *
 * @internal
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Effect from "effect/Effect"
import { DEFAULT_MAX_RESPONSES, DEFAULT_MODEL, DEFAULT_PROMPT, protocolConfig, serveChecks } from "./defaults.js"

/**
 * An option whose value is checked by `problem` (what is wrong with it, `undefined` when nothing is): a bad
 * value fails as an invalid value. The front end (`args.ts`) runs the check too, so a bad value is a usage
 * error (its message, the verb's usage, exit status 2), as a bad integer or choice is.
 *
 * @internal
 */
export const checked = <A>(problem: (value: A) => string | undefined) => (self: Options.Options<A>): Options.Options<A> =>
  Options.mapEffect(self, (value) => {
    const wrong = problem(value)
    return wrong === undefined ? Effect.succeed(value) : Effect.fail(ValidationError.invalidValue(HelpDoc.p(wrong)))
  })

/** What is wrong with a `--requests-out` path, `undefined` when it is not empty. @internal */
export const requestsOutProblem = (path: string): string | undefined =>
  path.trim() === "" ? "the path is empty (give a file name)" : undefined

/** The `--protocol` option of `decode` and `aggregate` (`Decode.protocolOption`). @internal */
export const protocolOption = Options.choice("protocol", ["responses", "chat-completions"]).pipe(
  Options.withDescription("the wire protocol of the capture: responses or chat-completions"),
  Options.withDefault("responses" as const)
)

/**
 * The help of `--replay-reasoning-content` (`chat` with `--protocol chat-completions`, and `serve`). Off by
 * default: OpenAI and others refuse an assistant message with a field they do not know.
 *
 * @internal
 */
export const REPLAY_REASONING_CONTENT =
  "send the model's reasoning back upstream as reasoning_content on its assistant messages (Chat Completions; " +
  "DeepSeek's thinking mode refuses a tool turn without it, OpenAI refuses the field)"

/** `chat`. @internal */
export const chat = Command.make("chat", {
  prompt: Args.text({ name: "PROMPT" }).pipe(
    Args.withDescription(`what to ask; several words are joined with spaces (default: "${DEFAULT_PROMPT}")`),
    Args.repeated
  ),
  demo: Options.boolean("demo").pipe(
    Options.withDescription("replay the embedded demo recording (a calculator session answering 570); nothing is sent")
  ),
  replay: Options.text("replay").pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription(
      "replay a capture of consecutive responses (raw SSE or line-JSON) on a loopback server; nothing is sent " +
        "(its MCP approval requests are approved: no MCP tool runs in a replay)"
    ),
    Options.optional
  ),
  model: Options.text("model").pipe(
    Options.withPseudoName("MODEL"),
    Options.withDescription(
      "the model to ask (default: gpt-5.1, gpt-4o-mini with chat-completions; a replay's recorded model)"
    ),
    Options.optional
  ),
  requestsOut: Options.text("requests-out").pipe(
    Options.withPseudoName("FILE"),
    checked(requestsOutProblem),
    Options.withDescription(
      "write every request body sent, as JSON Lines, to this file (a write that fails mid-chat is a warning: the chat goes on unrecorded)"
    ),
    Options.optional
  ),
  protocol: Options.choice("protocol", ["responses", "chat-completions"]).pipe(
    Options.withDescription(
      "the wire protocol: responses (POST /v1/responses) or chat-completions (default: OPENAI_PROTOCOL, else responses)"
    ),
    Options.withFallbackConfig(protocolConfig)
  ),
  replayReasoningContent: Options.boolean("replay-reasoning-content").pipe(
    Options.withDescription(REPLAY_REASONING_CONTENT)
  )
}).pipe(Command.withDescription("a tool-calling conversation with a calculator, streamed to the terminal"))

/** `decode`. @internal */
export const decode = Command.make("decode", {
  input: Args.text({ name: "FILE" }).pipe(
    Args.withDescription("a captured stream (raw SSE or line-JSON), or - for standard input")
  ),
  protocol: protocolOption
}).pipe(Command.withDescription("print the StreamParts of a captured stream, one JSON object per line"))

/** `aggregate`. @internal */
export const aggregate = Command.make("aggregate", {
  input: Args.text({ name: "FILE" }).pipe(
    Args.withDescription("a captured stream (raw SSE or line-JSON) or a JSON body, or - for standard input")
  ),
  protocol: protocolOption
}).pipe(Command.withDescription("print the ModelResponses of a captured stream or JSON body as a JSON array"))

/** `serve`. @internal */
export const serve = Command.make("serve", {
  upstream: Options.text("upstream").pipe(
    checked(serveChecks.upstream.problem),
    Options.withDescription("the Chat Completions backend's base URL, with /v1 (e.g. http://localhost:11434/v1)")
  ),
  port: Options.integer("port").pipe(
    checked(serveChecks.port.problem),
    Options.withDescription("the port to listen on (0 picks a free port)"),
    Options.withDefault(8787)
  ),
  host: Options.text("host").pipe(
    checked(serveChecks.host.problem),
    Options.withDescription(
      "the address to listen on; one other machines can reach (0.0.0.0) with --upstream-key-env and no --api-key-env lets anyone on the network spend the upstream key (a warning is logged at start)"
    ),
    Options.withDefault("127.0.0.1")
  ),
  upstreamKeyEnv: Options.text("upstream-key-env").pipe(
    Options.withDescription("the name of the environment variable holding the upstream's API key, read once at start"),
    Options.optional
  ),
  apiKeyEnv: Options.text("api-key-env").pipe(
    Options.withDescription("the name of one environment variable holding the key clients must send as a bearer token, read once at start; its value may be a comma-separated list of keys (KEYS=keyA,keyB), one per tenant, each trimmed"),
    Options.optional
  ),
  builtinTools: Options.choice("builtin-tools", ["drop", "reject"]).pipe(
    Options.withDescription("what to do with built-in tools (web_search, file_search, …): drop them, or reject the request"),
    Options.withDefault("drop" as const)
  ),
  upstreamHeadersTimeout: Options.integer("upstream-headers-timeout").pipe(
    checked(serveChecks.upstreamHeadersTimeout.problem),
    Options.withDescription("seconds to wait for the upstream's response headers before answering 504"),
    Options.withDefault(300)
  ),
  upstreamIdleTimeout: Options.integer("upstream-idle-timeout").pipe(
    checked(serveChecks.upstreamIdleTimeout.problem),
    Options.withDescription(
      "seconds of upstream silence before giving up: in a stream, keep-alives (SSE comments such as `: keep-alive`, `event: ping`) count as silence; only a chunk of the answer resets it"
    ),
    Options.withDefault(180)
  ),
  replayReasoningContent: Options.boolean("replay-reasoning-content").pipe(
    Options.withDescription(REPLAY_REASONING_CONTENT)
  ),
  upstreamRetries: Options.integer("upstream-retries").pipe(
    checked(serveChecks.upstreamRetries.problem),
    Options.withDescription("the gateway's own retries of a failed upstream call (0: the client's SDK retries)"),
    Options.withDefault(0)
  ),
  maxInputItems: Options.integer("max-input-items").pipe(
    checked(serveChecks.maxInputItems.problem),
    Options.withDescription("the most input items a request may hold, and content parts one item may (more: 400)"),
    Options.withDefault(20_000)
  ),
  maxBodyMb: Options.integer("max-body-mb").pipe(
    checked(serveChecks.maxBodyMb.problem),
    Options.withDescription("the largest request body in MiB (more: 413; 1 to 511); raise it for agents that send images"),
    Options.withDefault(16)
  ),
  requestBodyTimeout: Options.integer("request-body-timeout").pipe(
    checked(serveChecks.requestBodyTimeout.problem),
    Options.withDescription("seconds (1 to 2147483) a request body may take to arrive whole before answering 408"),
    Options.withDefault(120)
  ),
  clientStallTimeout: Options.integer("client-stall-timeout").pipe(
    checked(serveChecks.clientStallTimeout.problem),
    Options.withDescription(
      "seconds (1 to 2147483) a client may leave its response unread (nothing it accepts drains the connection) before the connection is closed and its upstream call aborted"
    ),
    Options.withDefault(60)
  ),
  shutdownGrace: Options.integer("shutdown-grace").pipe(
    checked(serveChecks.shutdownGrace.problem),
    Options.withDescription(
      "seconds (0 to 2147483) the connections still open on SIGTERM or Ctrl-C have to end before they are closed and the process exits (a second signal exits at once)"
    ),
    Options.withDefault(5)
  ),
  store: Options.text("store").pipe(
    checked(serveChecks.store.problem),
    Options.withDescription(
      "where to keep responses for store / previous_response_id / item_reference: none (stateless), sqlite:PATH or postgres:URL (its password best given in the environment variable PGPASSWORD)"
    ),
    Options.withDefault("none")
  ),
  storeTtl: Options.text("store-ttl").pipe(
    checked(serveChecks.storeTtl.problem),
    Options.withDescription("how long a stored response is kept: 30d, 12h, 90m, 3600s"),
    Options.withDefault("30d")
  ),
  storeMaxResponses: Options.integer("store-max-responses").pipe(
    checked(serveChecks.storeMaxResponses.problem),
    Options.withDescription("the most responses kept, over all tenants (one bound for the store); the oldest are deleted first"),
    Options.withDefault(DEFAULT_MAX_RESPONSES)
  )
}).pipe(Command.withDescription("a /v1/responses gateway in front of a Chat Completions backend (stateless unless --store)"))

/** `request`. @internal */
export const request = Command.make("request", {
  input: Args.text({ name: "FILE" }).pipe(
    Args.withDescription("a Prompt in the JSON encoding of core ({\"messages\":[…]}), or - for standard input")
  ),
  model: Options.text("model").pipe(
    Options.withDescription(`the model the body names (default: ${DEFAULT_MODEL})`),
    Options.withDefault(DEFAULT_MODEL)
  ),
  stream: Options.boolean("stream").pipe(Options.withDescription("print the body of a streamed request (stream: true)"))
}).pipe(Command.withDescription("print the Responses request body a Prompt (JSON) becomes"))
