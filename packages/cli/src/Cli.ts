/**
 * The `effect-responses` command line.
 *
 * Standard output carries only each verb's result (JSON for `decode`, `aggregate` and `request`, the
 * conversation for `chat`): log lines go to standard error (`logger`), warnings and above by default.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Cause from "effect/Cause"
import * as PlatformError from "@effect/platform/Error"
import * as Terminal from "@effect/platform/Terminal"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Args from "./internal/args.js"
import * as Commands from "./internal/commands.js"
import * as Version from "./internal/version.js"

const DESCRIPTION = "a typed, streaming, Effect-native toolkit for OpenAI's Responses API"

/**
 * The handler of a verb whose module is imported when the verb runs (`load`), so that neither `--help` nor
 * another verb reads it: the modules of `chat` and `serve` bring the HTTP client and server, `serve` the
 * response store.
 */
const lazily = <A, E, R>(
  load: () => Promise<{ readonly command: { readonly handler: (args: A) => Effect.Effect<void, E, R> } }>
) =>
(args: A): Effect.Effect<void, E, R> => Effect.flatMap(Effect.promise(load), (module) => module.command.handler(args))

const verbs = [
  Commands.chat.pipe(Command.withHandler(lazily(() => import("./Chat.js")))),
  Commands.decode.pipe(Command.withHandler(lazily(() => import("./Decode.js")))),
  Commands.aggregate.pipe(Command.withHandler(lazily(() => import("./Aggregate.js")))),
  Commands.serve.pipe(Command.withHandler(lazily(() => import("./Serve.js")))),
  Commands.request.pipe(Command.withHandler(lazily(() => import("./Request.js"))))
] as const

/**
 * The root command and its verbs (`Chat.command`, `Decode.command`, …). Each verb's module is imported
 * when the verb runs, not before: `--help` and `--version` do not load the HTTP client, the server or the
 * decoders.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("effect-responses").pipe(
  Command.withDescription(DESCRIPTION),
  Command.withSubcommands(verbs)
)

/**
 * The version of the command line: the package's version (`scripts/packages.mjs` keeps it in step).
 *
 * @since 0.2.0
 * @category constants
 */
export const VERSION: string = Version.VERSION

/**
 * What the help of each verb shows beyond its options: the environment variables it reads and examples.
 */
const helpExtras: Record<string, Args.HelpExtra> = {
  chat: {
    environment: [
      ["OPENAI_API_KEY", "the API key: chat asks the live API (OPENAI_BASE_URL, or https://api.openai.com/v1)"],
      ["OPENAI_BASE_URL", "the server to ask, e.g. http://localhost:8787/v1 or a local model; without OPENAI_API_KEY no key is sent"],
      ["OPENAI_PROTOCOL", "responses or chat-completions, when --protocol is not given"],
      ["NO_COLOR", "when set, no colours even on a terminal"]
    ],
    notes: [
      "Without --demo or --replay, chat asks the server of OPENAI_BASE_URL, or the live API with OPENAI_API_KEY;",
      "with neither set it replays the recorded demo session and says so on stderr. A replay answers its",
      "recorded question only: a different PROMPT or --model is refused."
    ],
    examples: [
      "effect-responses chat --demo",
      "OPENAI_API_KEY=sk-... effect-responses chat what is 17 times 23",
      "OPENAI_BASE_URL=http://localhost:8787/v1 effect-responses chat --model llama3.2 \"12 + 7?\"",
      "effect-responses chat --replay fixtures/responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt"
    ]
  },
  decode: {
    examples: [
      "effect-responses decode fixtures/responses-sse/vai-openai-shell-call.chunks.txt",
      "curl -sN ... https://api.openai.com/v1/responses | effect-responses decode -",
      "effect-responses decode --protocol chat-completions fixtures/chat-sse/opy-chat-gpt4o-parallel-tool-calls.sse"
    ]
  },
  aggregate: {
    examples: [
      "effect-responses aggregate fixtures/responses-sse/vai-openai-shell-call.chunks.txt",
      "effect-responses aggregate - < response.json"
    ]
  },
  serve: {
    environment: [
      ["VAR of --upstream-key-env", "the upstream's API key, read once at start (never from the command line)"],
      ["VAR of --api-key-env", "the key clients must send as a bearer token, or a comma-separated list of keys (VAR=keyA,keyB; spaces around each trimmed)"],
      ["PGPASSWORD", "with --store postgres:URL, the database password when the URL holds none"],
      ["NO_COLOR", "when set, no colours in this help even on a terminal"]
    ],
    examples: [
      "effect-responses serve --upstream http://localhost:11434/v1",
      "OLLAMA_KEY=... effect-responses serve --upstream https://example.com/v1 --upstream-key-env OLLAMA_KEY --port 9000"
    ]
  },
  request: {
    examples: [
      "echo '{\"messages\":[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}' | effect-responses request - --stream"
    ]
  }
}

// The verbs as the front end reads them from their `@effect/cli` commands (options, arguments, defaults),
// with their help's extra sections.
const specs: ReadonlyArray<Args.VerbSpec> = verbs.map((verb) => {
  const spec = Args.verbSpec(verb as Command.Command<string, never, unknown, unknown>)
  const extra = helpExtras[spec.name] ?? {}
  return { ...spec, environment: extra.environment ?? [], examples: extra.examples ?? [], notes: extra.notes ?? [] }
})

const rootExtra: Args.HelpExtra = {
  environment: [
    ["OPENAI_API_KEY", "chat: the API key of the live API"],
    ["OPENAI_BASE_URL", "chat: the server to ask (a key is optional then)"],
    ["OPENAI_PROTOCOL", "chat: responses or chat-completions"],
    ["NO_COLOR", "no colours, even on a terminal"]
  ],
  examples: [
    "effect-responses chat --demo",
    "effect-responses aggregate fixtures/responses-sse/vai-openai-shell-call.chunks.txt",
    "effect-responses serve --upstream http://localhost:11434/v1"
  ],
  notes: [
    "Exit status: 0 done (also when the reader of stdout goes away, e.g. | head), 1 failed, 2 bad command",
    "line, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM)."
  ]
}

/**
 * The help of the whole command (`verb` undefined) or of one verb; plain text unless `colour`.
 *
 * @since 0.2.0
 * @category running
 */
export const help = (verb: string | undefined, colour = false): string => {
  const spec = specs.find((s) => s.name === verb)
  return spec === undefined
    ? Args.rootHelp(specs, DESCRIPTION, VERSION, rootExtra, colour)
    : Args.verbHelp(spec, colour)
}

/**
 * Runs the command line on `argv` (as `process.argv`: node and the script first), as already put in
 * canonical order by the front end (`main`).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) => Command.run(command, { name: "effect-responses", version: VERSION })(argv)

// Line breaks and other control characters (and U+2028/U+2029), escaped as in a JSON string: a log entry's
// text may carry what a server answered (an upstream's error body), which must not start a line of its own
// (a forged log line) nor reach a terminal as an escape sequence.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000a-\u001f\u007f\u2028\u2029]/g

const escapeControl = (character: string): string =>
  character === "\n" ? "\\n" : character === "\r" ? "\\r" : `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`

/**
 * The logger of the command line: one line per entry on standard error,
 * `effect-responses: warning: <message>`, `level` and above (default: warnings; debug and info hidden).
 * Line breaks and other control characters in the text are escaped (`\n`, `\r`, `\u001b`), so that an
 * entry stays one line whatever it quotes. `write` defaults to `process.stderr`.
 *
 * @since 0.1.0
 * @category logging
 */
export const logger = (
  write: (text: string) => void = (text) => void process.stderr.write(text),
  level: LogLevel.LogLevel = LogLevel.Warning
): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ cause, logLevel, message }) => {
        const parts = Array.isArray(message) ? message : [message]
        let text = parts.map((part) => typeof part === "string" ? part : JSON.stringify(part)).join(" ")
        if (!Cause.isEmpty(cause)) text += ` (${errorMessage(cause)})`
        write(`effect-responses: ${logLevel._tag.toLowerCase()}: ${text.replace(CONTROL_CHARACTERS, escapeControl)}\n`)
      })
    ),
    Logger.minimumLogLevel(level)
  )

const describe = (error: unknown, depth: number): string => {
  if (typeof error !== "object" || error === null) return String(error)
  const fields = error as { readonly message?: unknown; readonly _tag?: unknown; readonly reason?: unknown; readonly cause?: unknown }
  if (typeof fields.message === "string" && fields.message.trim() !== "") return fields.message
  const name = typeof fields._tag === "string" ? fields._tag : error instanceof Error ? error.name : "error"
  const reason = typeof fields.reason === "string" ? ` ${fields.reason}` : ""
  const cause = fields.cause !== undefined && depth < 4 ? `: ${describe(fields.cause, depth + 1)}` : ""
  return `${name}${reason}${cause}`
}

/**
 * The one-line message of a failure: the error's message, or, when it has none (as some platform errors),
 * its `_tag`, `reason` and the message of its `cause`. Never empty.
 *
 * @since 0.1.0
 * @category running
 */
export const errorMessage = (cause: Cause.Cause<unknown>): string => {
  const text = describe(Cause.squash(cause), 0).replace(/\s*\n\s*/g, " ").trim()
  return text === "" ? "failed" : text
}

/**
 * The wizard talks on standard error (its questions, the terminal's `display`, and what `@effect/cli` prints
 * around them with `Console.log`), so that standard output carries only the output of the command it
 * builds, and may be redirected: `effect-responses --wizard > out.jsonl`. Its answers come from standard
 * input, which must be a terminal.
 */
const onStandardError = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Terminal.Terminal> =>
  Effect.flatMap(Effect.console, (console) =>
    effect.pipe(
      Effect.withConsole({ ...console, log: console.error, unsafe: { ...console.unsafe, log: console.unsafe.error } }),
      Effect.updateService(Terminal.Terminal, (terminal) => ({
        ...terminal,
        columns: Effect.sync(() => process.stderr.columns ?? 0),
        rows: Effect.sync(() => process.stderr.rows ?? 0),
        isTTY: Effect.sync(() => process.stderr.isTTY === true),
        display: (text: string) =>
          Effect.async<void, PlatformError.PlatformError>((resume) => {
            process.stderr.write(text, (error) =>
              resume(
                error
                  ? Effect.fail(
                    new PlatformError.SystemError({
                      module: "Terminal",
                      method: "display",
                      reason: "Unknown",
                      description: "cannot write to standard error",
                      cause: error
                    })
                  )
                  : Effect.void
              ))
          })
      }))
    ))

const LEVELS: Record<Args.LogLevelName, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/**
 * The exit status of a command line that cannot be run (an unknown option or command, a missing or
 * invalid value): 2, as getopt-based tools use.
 *
 * @since 0.2.0
 * @category running
 */
export const USAGE_ERROR = 2

// A verb's refusal of its command line itself (options that do not go together, `Chat.ChatSetupError`'s
// `commandLine`): exit status 2, as the front end's refusals.
const isCommandLineError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { readonly commandLine?: unknown }).commandLine === true

/**
 * The command line as the executable runs it.
 *
 * - The front end reads `argv` against each verb's options first: an argument starting with `-` that is
 *   not an option of the verb fails as an unknown option, with the verb's usage; options come in any order
 *   around the positional arguments; `--log-level LEVEL` and `--help` are read anywhere. A bad command line
 *   is two lines on standard error (`effect-responses: <what is wrong>`, `usage: …`) and exit status 2.
 * - `--help` prints plain text (bold headers only on a terminal, and not with `NO_COLOR`).
 * - `--wizard` reads its answers from standard input, which must be a terminal (else it fails at once,
 *   exit status 2), and asks its questions on standard error: standard output may be redirected, and gets
 *   only the output of the command the wizard builds.
 * - The verb runs with the standard-error `logger`; a failure is one line on standard error,
 *   `effect-responses: <message>`, and exit status 1; options the verb refuses together (an error whose
 *   `commandLine` is `true`, as `Chat.ChatSetupError`'s) are a bad command line: `effect-responses <verb>:
 *   <message>`, the verb's usage, exit status 2.
 *
 * @since 0.1.0
 * @category running
 */
export const main = (argv: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    const parsed = Args.parse(argv, specs)
    switch (parsed._tag) {
      case "Version":
        return Effect.sync(() => {
          process.stdout.write(`${VERSION}\n`)
        })
      case "Help":
        return Effect.sync(() => {
          process.stdout.write(help(parsed.verb?.name, Args.useColour(process.stdout)))
        })
      case "UsageError":
        return Effect.sync(() => {
          process.exitCode = USAGE_ERROR
          const usage = parsed.verb === undefined ? "effect-responses COMMAND [options]" : Args.usageLine(parsed.verb)
          const more = parsed.verb === undefined ? "effect-responses --help" : `effect-responses ${parsed.verb.name} --help`
          const who = parsed.verb === undefined ? "effect-responses" : `effect-responses ${parsed.verb.name}`
          process.stderr.write(`${who}: ${parsed.message}\nusage: ${usage}\n(more: ${more})\n`)
        })
      case "Run": {
        const wizard = parsed.argv.includes("--wizard")
        if (wizard && process.stdin.isTTY !== true) {
          return Effect.sync(() => {
            process.exitCode = USAGE_ERROR
            process.stderr.write(
              "effect-responses: --wizard reads its answers from a terminal, and standard input is not one\n"
            )
          })
        }
        return run(parsed.argv).pipe(
          wizard ? onStandardError : identity,
          Effect.catchAllCause((cause) =>
            Effect.sync(() => {
              process.exitCode = 1
              const failure = Cause.failureOption(cause)
              if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return
              if (failure._tag === "Some" && isCommandLineError(failure.value)) {
                // options that do not go together: a bad command line, as an unknown option is
                process.exitCode = USAGE_ERROR
                const verb = specs.find((spec) => spec.name === parsed.argv[2])
                if (verb !== undefined) {
                  process.stderr.write(
                    `effect-responses ${verb.name}: ${errorMessage(cause)}\nusage: ${Args.usageLine(verb)}\n` +
                      `(more: effect-responses ${verb.name} --help)\n`
                  )
                  return
                }
              }
              process.stderr.write(`effect-responses: ${errorMessage(cause)}\n`)
            })
          ),
          Effect.provide(logger(undefined, LEVELS[parsed.logLevel ?? "warning"]))
        )
      }
    }
  })
