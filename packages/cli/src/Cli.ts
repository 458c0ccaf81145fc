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
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Aggregate from "./Aggregate.js"
import * as Chat from "./Chat.js"
import * as Decode from "./Decode.js"
import * as Request from "./Request.js"
import * as Serve from "./Serve.js"

/**
 * The root command and its verbs.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("effect-responses").pipe(
  Command.withDescription("a typed, streaming, Effect-native toolkit for OpenAI's Responses API"),
  Command.withSubcommands([Chat.command, Decode.command, Aggregate.command, Serve.command, Request.command])
)

/**
 * The options that take no value: a lone `-` after one of them is the standard-input argument, not its
 * value.
 */
const FLAGS = new Set(["--stream", "--help", "-h", "--version", "--wizard"])

/**
 * `argv` with a lone `-` (standard input, the positional argument of `decode`, `aggregate` and `request`)
 * moved after the options, where `@effect/cli` reads it: its parser stops matching options at an argument
 * starting with `-`, so `request - --stream` would leave `--stream` unknown. A `-` right after an option
 * that takes a value (`--model -`) is that value and stays; nothing after `--` moves.
 *
 * @since 0.1.0
 * @category running
 */
export const normalizeArgs = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const end = argv.indexOf("--")
  const options = end === -1 ? argv : argv.slice(0, end)
  const rest = end === -1 ? [] : argv.slice(end)
  const moved: Array<string> = []
  const kept: Array<string> = []
  options.forEach((arg, i) => {
    const previous = i === 0 ? undefined : options[i - 1]!
    const isValue = previous !== undefined && previous.startsWith("-") && previous !== "-" &&
      !previous.includes("=") && !FLAGS.has(previous)
    if (arg === "-" && i >= 2 && !isValue) moved.push(arg)
    else kept.push(arg)
  })
  return [...kept, ...moved, ...rest]
}

/**
 * Runs the command line on `argv` (as `process.argv`: node and the script first).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) =>
  Command.run(command, { name: "effect-responses", version: "0.1.0" })(normalizeArgs(argv))

/**
 * The logger of the command line: one line per entry on standard error,
 * `effect-responses: warning: <message>`, warnings and above (debug and info hidden). `write` defaults to
 * `process.stderr`.
 *
 * @since 0.1.0
 * @category logging
 */
export const logger = (
  write: (text: string) => void = (text) => void process.stderr.write(text)
): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ cause, logLevel, message }) => {
        const parts = Array.isArray(message) ? message : [message]
        let text = parts.map((part) => typeof part === "string" ? part : JSON.stringify(part)).join(" ")
        if (!Cause.isEmpty(cause)) text += ` (${errorMessage(cause)})`
        write(`effect-responses: ${logLevel._tag.toLowerCase()}: ${text}\n`)
      })
    ),
    Logger.minimumLogLevel(LogLevel.Warning)
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
 * The command line as the executable runs it: `run` with the standard-error `logger`; a failure is one
 * line on standard error, `effect-responses: <message>`, and exit status 1 (an invalid command line is
 * reported by `@effect/cli` itself).
 *
 * @since 0.1.0
 * @category running
 */
export const main = (argv: ReadonlyArray<string>) =>
  run(argv).pipe(
    Effect.catchAllCause((cause) =>
      Effect.sync(() => {
        process.exitCode = 1
        const failure = Cause.failureOption(cause)
        if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return
        process.stderr.write(`effect-responses: ${errorMessage(cause)}\n`)
      })
    ),
    Effect.provide(logger())
  )
