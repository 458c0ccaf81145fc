/**
 * A reference handler for the `shell` and `local_shell` tools: runs the model's commands with `/bin/sh -c`
 * (a `shell_call`'s commands) or as an argument vector (a `local_shell_call`) in a working directory, each
 * with a timeout (the call's `timeout_ms`, else the handler's default) and a bound on the output it keeps
 * (the call's `max_output_length`, else the handler's default: characters of standard output and of
 * standard error each). Output past the bound keeps its head and its tail, as Codex does (an error is
 * usually at the end), around a marker saying how much was cut, all within the bound; the middle is dropped
 * as it arrives, never held. A cut is always marked: a bound too small for the marker keeps the head and a
 * shorter one (`keepHeadAndTail`); a bound of 0 keeps nothing.
 *
 * The model's limits are checked (the API reference types them as integers, with no range): a `timeout_ms`
 * that is not a positive integer, or a `max_output_length` that is not an integer of 0 or more, refuses the
 * call, nothing run, with one output naming the field (`outcome` exit code 1, the reason on standard error);
 * a `timeout_ms` above `MAX_TIMEOUT_MS` (the longest timer Node.js keeps) is clamped to it. A call with
 * nothing to run (`commands: []`, `command: []`) is refused the same way, naming the field.
 *
 * Where commands run: in the handler's `cwd` (else the process's working directory); a `shell_call` has no
 * working directory of its own (the API's action is its commands and limits). A `local_shell_call`'s
 * `working_directory` is taken relative to that directory (`"."` is `cwd`, `"sub"` its `sub`), as Codex
 * resolves a call's `workdir` against the turn's working directory (codex-rs core, `TurnContext::resolve_path`:
 * `cwd.join(workdir)`); an absolute one is used as it is, and `..` may lead out of `cwd`, as in Codex: `cwd` is
 * where commands start, not a boundary (a command can `cd` anywhere itself). Confining them takes a sandbox.
 *
 * Running commands a model wrote is the application's decision, with the application's safeguards
 * (a sandbox, a container, an approval step): this handler runs what it is given.
 *
 * @since 0.2.0
 */
import type { Part } from "@effect-responses/core"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { statSync } from "node:fs"
import { constants as osConstants, userInfo } from "node:os"
import { isAbsolute } from "node:path"
import * as Cut from "./internal/cut.js"

/**
 * How commands run: in `cwd` (default the process's; a call's relative working directory is taken from it,
 * see the module comment), at most `timeoutMs` milliseconds each when the call gives none (default
 * `DEFAULT_TIMEOUT_MS`), keeping at most `maxOutputLength` characters of each stream when the call gives
 * none (default `DEFAULT_MAX_OUTPUT_LENGTH`), with `env` added to the environment.
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
 * The longest timeout of one command, in milliseconds: 2 147 483 647 (2^31 - 1, about 24.8 days), the
 * longest delay a Node.js timer keeps (a longer one fires after 1 ms, with a `TimeoutOverflowWarning`).
 * A longer `timeout_ms`, or `timeoutMs` given to `run`, is clamped to it.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_TIMEOUT_MS = 2_147_483_647

/**
 * The marker put between the head and the tail of output cut at its bound, for the model to read:
 * `\n[… N characters cut …]\n`, `N` the number of characters (UTF-16 code units) left out (the same
 * words as `ToolExecutor.truncate`).
 *
 * @since 0.2.0
 * @category constants
 */
export const truncationMarker: (cut: number) => string = Cut.truncationMarker

/**
 * The text of `total` characters whose first characters are `head` and last ones `tail` (each holding at
 * least `max` characters, or the whole text), bounded to `max` characters: the whole text when it fits,
 * else about half of the room left by the marker (`truncationMarker`) taken from the head, the rest from
 * the tail, never splitting a surrogate pair. A cut is always marked within the bound: a bound too small for
 * that marker keeps the head then `[…N cut]` (`N` the characters left out), one too small for that the head
 * then `…`; a bound of 0 keeps nothing.
 *
 * @since 0.2.0
 * @category limits
 */
export const keepHeadAndTail: (head: string, tail: string, total: number, max: number) => string = Cut.keepHeadAndTail

/** One output stream as it arrives: its first `max` characters, a suffix of at least `max`, its length. */
class Kept {
  head = ""
  tail = ""
  total = 0
  constructor(readonly max: number) {}
  add(text: string): void {
    this.total += text.length
    if (this.head.length < this.max) this.head += text.slice(0, this.max - this.head.length)
    this.tail += text
    // trimmed once twice the bound, so each character is copied a bounded number of times
    if (this.tail.length > 2 * this.max) this.tail = this.tail.slice(this.tail.length - this.max)
  }
  text(): string {
    return keepHeadAndTail(this.head, this.tail, this.total, this.max)
  }
}

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
 * a command that cannot start gives exit code 127 and the reason on standard error (a working directory
 * that does not exist, or is not a directory, is named: `cannot run the command: the working directory
 * /x does not exist`); one that outlives its
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
 * `options.timeoutMs` and `options.maxOutputLength` left out (or `undefined`) are `DEFAULT_TIMEOUT_MS` and
 * `DEFAULT_MAX_OUTPUT_LENGTH`; a stream longer than its bound keeps its head and tail around a cut marker.
 *
 * @since 0.2.0
 * @category running
 */
export const run = (
  command: string | ReadonlyArray<string>,
  options: Options = {}
): Effect.Effect<Part.ShellCommandOutput> =>
  Effect.async<Part.ShellCommandOutput>((resume) => {
    // the documented defaults when left out (a caller in plain JavaScript, or one passing undefined): without
    // them the timer fired at once and nothing of the output was kept
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const maxOutputLength = options.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH
    const [file, args] = typeof command === "string" ? ["/bin/sh", ["-c", command]] : [command[0] ?? "", command.slice(1)]
    const started = (() => {
      try {
        return spawn(file, args, {
          cwd: options.cwd,
          env: options.env === undefined ? process.env : { ...process.env, ...options.env },
          stdio: ["ignore", "pipe", "pipe"],
          // its own process group, so that a timeout kills what the command started too
          detached: true
        })
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error))
      }
    })()
    if (started instanceof Error) {
      // some failures to start are thrown, not emitted (a working directory that is a file: ENOTDIR)
      resume(Effect.succeed({ stdout: "", stderr: startFailure(started, options.cwd), outcome: { type: "exit", exitCode: 127 } }))
      return
    }
    const child = started
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }
    const max = Number.isNaN(maxOutputLength) ? 0 : Math.max(0, maxOutputLength)
    const stdout = new Kept(max)
    const stderr = new Kept(max)
    let timedOut = false
    let settled = false
    // decoded as a stream: a character whose bytes two reads split is one character, not two U+FFFD
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => stdout.add(chunk))
    child.stderr.on("data", (chunk: string) => stderr.add(chunk))
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
        stdout: stdout.text(),
        stderr: stderr.text(),
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
    }, Number.isNaN(timeoutMs) ? MAX_TIMEOUT_MS : Math.min(Math.max(timeoutMs, 0), MAX_TIMEOUT_MS))
    child.on("error", (error) => {
      stderr.add(startFailure(error, options.cwd))
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

/** Why a command did not start: a missing working directory named, else the system's message. */
const startFailure = (error: NodeJS.ErrnoException, cwd: string | undefined): string => {
  // spawn reports a missing working directory as the program missing (`spawn /bin/sh ENOENT`)
  if (cwd !== undefined && (error.code === "ENOENT" || error.code === "ENOTDIR")) {
    try {
      if (!statSync(cwd).isDirectory()) return `cannot run the command: the working directory ${cwd} is not a directory`
    } catch {
      return `cannot run the command: the working directory ${cwd} does not exist`
    }
  }
  return error.message
}

/** The reasons a call is refused, as the model reads them (see the module comment), if it is. */
const refused = (reasons: ReadonlyArray<string | undefined>): string | undefined => {
  const given = reasons.filter((reason): reason is string => reason !== undefined)
  return given.length === 0 ? undefined : `${given.join("; ")}: nothing was run`
}

/** Why the model's limits of a call are refused, naming the fields, if they are. */
const refusedLimits = (timeoutMs: number | undefined, maxOutputLength: number | undefined): Array<string | undefined> => [
  timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)
    ? `timeout_ms ${timeoutMs} is not a positive integer (milliseconds)`
    : undefined,
  maxOutputLength !== undefined && !(Number.isInteger(maxOutputLength) && maxOutputLength >= 0)
    ? `max_output_length ${maxOutputLength} is not an integer of 0 or more (characters)`
    : undefined
]

/** The name of the user this process runs as, if the system has one for it. */
const processUser = (): string | undefined => {
  try {
    return userInfo().username
  } catch {
    // a user id with no entry in the user database (some containers)
    return undefined
  }
}

/**
 * Why a `local_shell_call`'s `user` is refused, if it is: commands run as the user this process runs as, so
 * any other user cannot be honoured (and running as another user than the one asked for, unsaid, is what the
 * refusal avoids). An empty `user` is no user.
 */
const refusedUser = (user: string | undefined): string | undefined => {
  if (user === undefined || user === "") return undefined
  const own = processUser()
  if (user === own) return undefined
  return `user ${JSON.stringify(user)} cannot be honoured: commands run as ${
    own === undefined ? "the user this process runs as" : `${JSON.stringify(own)}, the user this process runs as`
  } (leave user out)`
}

/**
 * The handler of the `shell` client tool: runs the call's commands one after the other in `cwd` and answers
 * one output per command (see `run`). A call whose `timeout_ms` or `max_output_length` is refused (see the
 * module comment), or that has no command, runs nothing and answers one output: the reason on standard
 * error, exit code 1 (`timeout_ms -5 is not a positive integer (milliseconds): nothing was run`,
 * `commands is empty (the commands to run, in order): nothing was run`).
 *
 * @since 0.2.0
 * @category handlers
 */
export const handler = (options: Options = {}) =>
(call: Part.ShellCallPart): Effect.Effect<ReadonlyArray<Part.ShellCommandOutput>> => {
  const reason = refused([
    call.commands.length === 0 ? "commands is empty (the commands to run, in order)" : undefined,
    ...refusedLimits(call.timeoutMs, call.maxOutputLength)
  ])
  if (reason !== undefined) {
    return Effect.succeed([{ stdout: "", stderr: reason, outcome: { type: "exit", exitCode: 1 } }])
  }
  return Effect.forEach(call.commands, (command) =>
    run(command, {
      ...options,
      timeoutMs: call.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxOutputLength: call.maxOutputLength ?? options.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH
    }))
}

/**
 * The handler of the `local_shell` client tool: runs the call's argument vector, with the call's `env`
 * added, in its `working_directory` taken relative to the handler's `cwd` (else in `cwd`; see the module
 * comment: `"."` is `cwd`, an absolute directory is used as it is, `..` may lead out of `cwd`), and answers
 * the JSON text `{"stdout","stderr","exit_code"}` (`exit_code` `null` on a timeout, with `"timed_out": true`).
 * Each stream is bounded by `maxOutputLength` (not by the call: a `local_shell_call` has no bound of its own);
 * the toolkit's bound on the whole answer (`ToolExecutor`'s `maxOutputLength`) cuts inside the values and keeps
 * the text JSON, at any bound of 59 characters or more (the fixed parts of a timeout's answer); under its fixed
 * parts, the answer is cut as text.
 *
 * Refused, nothing run, with `{"error":"… : nothing was run"}` naming the field: a `timeout_ms` that is not a
 * positive integer, an empty `command`, and a `user` other than the one this process runs as (`user "root"
 * cannot be honoured: commands run as "app", the user this process runs as (leave user out)`): the handler
 * cannot switch users, and running as another user than the one asked for, unsaid, would mislead the model.
 * Codex drops `user` (and `env`) when it turns a `local_shell_call` into its shell call (codex-rs core,
 * `ToolRouter::build_tool_call`); here `env` is honoured and `user` answered. An empty `user` is no user.
 *
 * @since 0.2.0
 * @category handlers
 */
export const localHandler = (options: Options = {}) => (call: Part.LocalShellCallPart): Effect.Effect<string> => {
  const reason = refused([
    call.command.length === 0 ? "command is empty (the program and its arguments)" : undefined,
    ...refusedLimits(call.timeoutMs, undefined),
    refusedUser(call.user)
  ])
  if (reason !== undefined) return Effect.succeed(JSON.stringify({ error: reason }))
  return Effect.map(
    run(call.command, {
      ...options,
      cwd: workingDirectory(call.workingDirectory, options.cwd),
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
}

/**
 * The directory a call's `working_directory` names: appended to the handler's `cwd` (else the process's
 * working directory), an absolute one as it is; none given, `cwd`. Not normalized, as Codex's `Path::join`:
 * the system reads `..` when the command starts, so `missing/..` does not exist (it is no other name of
 * `cwd`) and `link/..` is the parent of the link's target.
 */
const workingDirectory = (given: string | undefined, cwd: string | undefined): string | undefined => {
  if (given === undefined) return cwd
  if (isAbsolute(given)) return given
  const base = cwd ?? process.cwd()
  return base.endsWith("/") ? base + given : `${base}/${given}`
}
