/**
 * A reference handler for the `shell` and `local_shell` tools: runs the model's commands with `/bin/sh -c`
 * (a `shell_call`'s commands) or as an argument vector (a `local_shell_call`) in a working directory, each
 * with a timeout (the call's `timeout_ms`, else the handler's default) and a bound on the output it keeps
 * (the call's `max_output_length`, else the handler's default: characters of standard output and of
 * standard error each; the rest is dropped as it arrives, never held).
 *
 * Running commands a model wrote is the application's decision, with the application's safeguards
 * (a sandbox, a container, an approval step): this handler runs what it is given.
 *
 * @since 0.2.0
 */
import { AiError, type Part } from "@effect-responses/core"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { constants as osConstants } from "node:os"

/**
 * How commands run: in `cwd` (default the process's), at most `timeoutMs` milliseconds each when the call
 * gives none (default `DEFAULT_TIMEOUT_MS`), keeping at most `maxOutputLength` characters of each stream
 * when the call gives none (default `DEFAULT_MAX_OUTPUT_LENGTH`), with `env` added to the environment.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly cwd?: string | undefined
  readonly timeoutMs?: number | undefined
  readonly maxOutputLength?: number | undefined
  readonly env?: { readonly [name: string]: string } | undefined
}

/**
 * The default timeout of one command: 60 000 ms.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_TIMEOUT_MS = 60_000

/**
 * The default bound on the characters kept of one command's standard output (and, apart, of its
 * standard error): 16 384.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_MAX_OUTPUT_LENGTH = 16_384

/**
 * The marker appended to output cut at its bound, for the model to read.
 *
 * @since 0.2.0
 * @category constants
 */
export const TRUNCATED = "\n[output truncated]"

/**
 * How long, in milliseconds, `run` keeps reading after the command's process ended (or was killed at its
 * timeout) while something it started still holds its standard output or error: 100. What was already
 * written by then is kept; the rest is not waited for.
 *
 * @since 0.2.0
 * @category constants
 */
export const DRAIN_MS = 100

/**
 * Runs one command: `command` a string for `/bin/sh -c`, or an argument vector run directly. Never fails:
 * a command that cannot start gives exit code 127 and the reason on standard error; one that outlives its
 * timeout is killed with what it started (SIGKILL to its process group) and gives the `timeout` outcome.
 * One killed by a signal gives exit code 128 + the signal's number, as shells report it (137 for SIGKILL,
 * 143 for SIGTERM): the API's `exit` outcome (`shell_call_output`) has `exit_code` only, no signal field.
 *
 * The command ends when its own process exits, not when its output pipes close: a job it left in the
 * background (`server & echo started`) keeps running, and the result (exit 0, `started`) comes at once,
 * with what was written until `DRAIN_MS` after the exit; the job's later output is read and dropped (its
 * writes do not fail). The timeout holds likewise: a process that left the command's process group
 * (`setsid`) and still holds the pipes does not delay the `timeout` outcome (it is not killed: it is out of
 * the group's reach). A background job should write to a file (`server > log 2>&1 &`).
 *
 * @since 0.2.0
 * @category running
 */
export const run = (
  command: string | ReadonlyArray<string>,
  options: Options & { readonly timeoutMs: number; readonly maxOutputLength: number }
): Effect.Effect<Part.ShellCommandOutput> =>
  Effect.async<Part.ShellCommandOutput>((resume) => {
    const [file, args] = typeof command === "string" ? ["/bin/sh", ["-c", command]] : [command[0] ?? "", command.slice(1)]
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env === undefined ? process.env : { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      // its own process group, so that a timeout kills what the command started too
      detached: true
    })
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }
    let stdout = ""
    let stderr = ""
    let cutOut = false
    let cutErr = false
    let timedOut = false
    let settled = false
    const keep = (current: string, text: string): [string, boolean] => {
      const room = options.maxOutputLength - current.length
      if (room <= 0) return [current, true]
      return text.length > room ? [current + AiError.cutText(text, room), true] : [current + text, false]
    }
    // decoded as a stream: a character whose bytes two reads split is one character, not two U+FFFD
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      const [next, cut] = keep(stdout, chunk)
      stdout = next
      cutOut ||= cut
    })
    child.stderr.on("data", (chunk: string) => {
      const [next, cut] = keep(stderr, chunk)
      stderr = next
      cutErr ||= cut
    })
    let drain: ReturnType<typeof setTimeout> | undefined
    let outcome: Part.ShellOutcome | undefined
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      clearTimeout(drain)
      // what the command left behind may hold the pipes for long: their output is read and dropped, and the
      // pipes no longer keep this process alive
      for (const stream of [child.stdout, child.stderr]) {
        stream.removeAllListeners("data")
        stream.resume()
        ;(stream as unknown as { unref?: () => void }).unref?.()
      }
      resume(Effect.succeed({
        stdout: cutOut ? stdout + TRUNCATED : stdout,
        stderr: cutErr ? stderr + TRUNCATED : stderr,
        outcome: timedOut ? { type: "timeout" } : outcome ?? { type: "exit", exitCode: 1 }
      }))
    }
    // settles DRAIN_MS from now unless the pipes close first (`close`)
    const drainThenFinish = () => {
      if (drain === undefined) drain = setTimeout(finish, DRAIN_MS)
    }
    const timer = setTimeout(() => {
      timedOut = true
      killGroup()
      drainThenFinish()
    }, options.timeoutMs)
    child.on("error", (error) => {
      stderr += String(error.message)
      outcome = { type: "exit", exitCode: 127 }
      finish()
    })
    child.on("exit", (code, signal) => {
      // killed by a signal: 128 + its number, as shells report it (the API's outcome has no signal field)
      outcome = { type: "exit", exitCode: code ?? (signal === null ? 1 : 128 + (osConstants.signals[signal] ?? 0)) }
      drainThenFinish()
    })
    // the pipes closed after the exit: all the output is in
    child.on("close", finish)
    return Effect.sync(() => {
      clearTimeout(timer)
      clearTimeout(drain)
      if (!settled) killGroup()
    })
  })

/**
 * The handler of the `shell` client tool: runs the call's commands one after the other and answers one
 * output per command (see `run`).
 *
 * @since 0.2.0
 * @category handlers
 */
export const handler = (options: Options = {}) =>
(call: Part.ShellCallPart): Effect.Effect<ReadonlyArray<Part.ShellCommandOutput>> =>
  Effect.forEach(call.commands, (command) =>
    run(command, {
      ...options,
      timeoutMs: call.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxOutputLength: call.maxOutputLength ?? options.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH
    }))

/**
 * The handler of the `local_shell` client tool: runs the call's argument vector in its working directory
 * (else the handler's) and answers the JSON text `{"stdout","stderr","exit_code"}` (`exit_code` `null` on
 * a timeout, with `"timed_out": true`).
 *
 * @since 0.2.0
 * @category handlers
 */
export const localHandler = (options: Options = {}) => (call: Part.LocalShellCallPart): Effect.Effect<string> =>
  Effect.map(
    run(call.command, {
      ...options,
      cwd: call.workingDirectory ?? options.cwd,
      env: { ...options.env, ...call.env },
      timeoutMs: call.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxOutputLength: options.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH
    }),
    (output) =>
      JSON.stringify({
        stdout: output.stdout,
        stderr: output.stderr,
        exit_code: output.outcome.type === "exit" ? output.outcome.exitCode : null,
        ...(output.outcome.type === "timeout" ? { timed_out: true } : {})
      })
  )
