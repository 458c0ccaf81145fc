/**
 * Runs the client calls of one model turn and turns every outcome into the answer the model reads. Nothing
 * the model got wrong crashes the caller. For a function tool (a `function_call`, answered with a
 * `ToolResultPart`, i.e. a `function_call_output`):
 *
 * | outcome | result `output` (JSON text) | `isError` |
 * |---|---|---|
 * | success | the value encoded with the tool's `success` schema | `false` |
 * | `arguments` not JSON | `{"error":"invalid JSON arguments for tool …: <parser message> in <excerpt>"}` | `true` |
 * | arguments not matching `parameters` | `{"error":"invalid arguments for tool …: <decode message>"}` (at most 2000 characters) | `true` |
 * | no tool of that name (and namespace, see `Toolkit.resolve`) | `{"error":"unknown tool …; available tools: …"}` (tools by the names the model calls them, `<namespace>.<name>` in a namespace) | `true` |
 * | a function call of a client-run built-in of the toolkit (`shell`, `apply_patch`, `local_shell`, no function tool of that name) whose arguments are no call of it (a gateway writes such a call as the function call it was) | `{"error":"invalid arguments for tool \"shell\": commands: Expected ReadonlyArray<string>, actual \"notalist\"; nothing was run"}`: the first wrong field of the function the built-in is offered as (the `shell` action, the `apply_patch` operation, the `local_shell` exec action), named as the Responses decoder names a malformed built-in item's (`diff is missing`); nothing runs. Arguments that match: `{"error":"tool … is a client tool, called as a function tool"}` | `true` |
 * | handler failure | `{"error": <failure encoded with the tool's failure schema>}` | `true` |
 * | timeout | `{"error":"tool … timed out after …"}` | `true` |
 * | handler interrupted itself | `{"error":"tool … was interrupted"}` | `true` |
 * | defect (a bug) | `{"error":"tool … failed unexpectedly"}` (no stack), the cause logged | `true` |
 *
 * A custom tool call (`custom_tool_call`) gets the same answers as a `ToolResultPart` with `kind: "custom"`
 * (a `custom_tool_call_output`); its input is the raw text, never decoded, and a success that encodes to a
 * string is sent as that text. The client-run built-in tools answer in their own item types, failures
 * included: a `shell_call` gets a `ShellCallOutputPart` (a failure is one output with the message on
 * standard error and exit code 1, a timeout one with the `timeout` outcome), an `apply_patch_call` an
 * `ApplyPatchCallOutputPart` (`failed` with the message), a `local_shell_call` a `LocalShellCallOutputPart`
 * (`{"error":…}`).
 *
 * Limits: each call gets at most `timeout` (default `DEFAULT_TIMEOUT`, `"none"` for no limit); the text of
 * an answer longer than `maxOutputLength` characters (default `DEFAULT_MAX_OUTPUT_LENGTH`, `"none"` for no
 * bound) is cut, its head and tail kept around a marker the model can read (`truncate`), and a warning
 * logged. A shell call's answer is bounded as a whole, its budget divided among the standard output and
 * error of all its commands: each stream that fits an equal share is kept whole, and every longer one is
 * cut to the same share (what the short ones leave over shared among them), so each command keeps the head
 * and the tail (its errors, its last lines) of each stream around its own marker (`truncate`'s rule: a share
 * too small for the marker line keeps the head then `[…N cut]` or `…`). No stream is emptied unsaid while
 * the budget has a character for its marker: a budget smaller than the number of streams it cuts gives the
 * first of them (in order) one character each, `…`, and leaves the others empty, as they have no room left.
 * A stream the `Shell` handler already cut, with any of its markers, is cut from its head and tail, its
 * marker counting what is left out of the command's whole output; a marker counts as the handler's only where
 * the handler can have written it (between the even halves of the room it leaves, or `[…N cut]` at the end
 * after a head too short for the line), so marker-like text in a command's own output is counted as text.
 * A `local_shell_call`'s answer as `Shell.localHandler` writes it (`{"stdout","stderr","exit_code"}`, with
 * `"timed_out":true` on a timeout, `{"error"}` for a refusal, exactly as `JSON.stringify` writes them) stays
 * JSON: its string values are cut, each its head, marker and tail inside the value, the room shared among
 * them as among a shell answer's streams (counted in JSON characters, escapes included); the keys, the exit
 * code and the punctuation (the fixed parts) are never cut. The fixed parts of its answers take at most 59
 * characters (a timeout's `{"stdout":"","stderr":"","exit_code":null,"timed_out":true}`; an exit's 39 to 41
 * and more for a large code, a refusal's `{"error":""}` 12); at a bound under them the answer is cut as text.
 * Any other answer (an application's own handler, JSON or not) is cut as text: head, marker, tail. The
 * answer is always within the bound.
 *
 * Order (as Codex runs a turn's calls): the calls are taken in the model's output order. Function and custom
 * tool calls may run together (at most `concurrency` at once); a shell, apply_patch or local_shell call,
 * and a function or custom call of a tool named as one of them (Codex's freeform `apply_patch`, with or
 * without the built-in in the toolkit), runs alone: after every call before it has ended, and
 * before any call after it starts. So `apply_patch` creating `a.txt` then `read_file` of `a.txt` in one turn
 * reads the new file, and a function call after a shell call sees what the command did; function calls
 * between two built-in calls run together. (Codex holds a read lock for a tool that supports parallel
 * calls and a write lock for one that does not, taken in the calls' order.) A freeform patch tool of
 * another name (`Tool.custom("edit")`) runs with the function calls; `ApplyPatch` serializes the writes
 * of one workspace root whatever the caller.
 *
 * `arguments: ""` (a function without parameters, as some servers send it) reads as `{}`; a `null` for an
 * optional property reads as the property left out (strict mode makes optional properties nullable, see
 * `Tool.toStrict`). Items of built-in tools the server runs (web search, …) never reach here. Each call
 * runs in a span `execute_tool <name>` with the OpenTelemetry GenAI attributes.
 *
 * @since 0.1.0
 */
import type { Part } from "@effect-responses/core"
import { AiError, BuiltInArguments, Part as CorePart } from "@effect-responses/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Cut from "./internal/cut.js"
import * as InternalSchema from "./internal/schema.js"
import * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * How calls are run: at most `concurrency` function / custom tool calls at once (default
 * `DEFAULT_CONCURRENCY`), each call given at most `timeout` (default `DEFAULT_TIMEOUT`; `"none"`: no limit)
 * before it becomes an error answer, and each answer's text bounded by `maxOutputLength` characters (default
 * `DEFAULT_MAX_OUTPUT_LENGTH`; `"none"`: no bound).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly concurrency?: number | undefined
  readonly timeout?: Duration.DurationInput | "none" | undefined
  readonly maxOutputLength?: number | "none" | undefined
}

/**
 * How many tool calls run at once by default.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_CONCURRENCY = 4

/**
 * The longest a tool call runs by default before it becomes an error answer: 5 minutes. A shell call
 * whose commands may run longer needs a larger `timeout` (the `Shell` handler's own per-command timeout
 * applies inside it).
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_TIMEOUT: Duration.Duration = Duration.minutes(5)

/**
 * The default bound on the text of one answer sent back to the model: 50 000 characters (UTF-16 code
 * units, about 12 000 tokens of English). For a shell call, the bound covers the standard output and
 * error of all its commands together, divided evenly among them (see the module comment: 4 commands each
 * writing 40 000 characters on each stream keep 6 250 of each, head and tail around a marker).
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_MAX_OUTPUT_LENGTH = 50_000

/**
 * A call this module runs: a function or custom tool call, or a call of a client-run built-in tool.
 * (MCP approval requests and client-executed tool searches are answered elsewhere.)
 *
 * @since 0.2.0
 * @category models
 */
export type RunnableCall =
  | Part.ToolCallPart
  | Part.CustomToolCallPart
  | Part.ShellCallPart
  | Part.ApplyPatchCallPart
  | Part.LocalShellCallPart

/**
 * The answer to a call of type `C`: a `ToolResultPart` for a function or custom tool call, a
 * `ShellCallOutputPart`, `ApplyPatchCallOutputPart` or `LocalShellCallOutputPart` for the built-ins.
 *
 * @since 0.2.0
 * @category models
 */
export type ResultOf<C extends RunnableCall> = C extends Part.ToolCallPart | Part.CustomToolCallPart ? Part.ToolResultPart
  : C extends Part.ShellCallPart ? Part.ShellCallOutputPart
  : C extends Part.ApplyPatchCallPart ? Part.ApplyPatchCallOutputPart
  : Part.LocalShellCallOutputPart

/**
 * Whether an assistant part is a call `execute` runs (`RunnableCall`).
 *
 * @since 0.2.0
 * @category guards
 */
export const isRunnable = (part: Part.AssistantPart): part is RunnableCall =>
  part.type === "tool_call" || part.type === "custom_tool_call" || part.type === "shell_call" ||
  part.type === "apply_patch_call" || part.type === "local_shell_call"

/**
 * Runs the calls and returns one answer per call, in call order: in the model's order, function and custom
 * tool calls together (bounded by `options.concurrency`), each built-in tool call, and each call of a tool
 * sharing its name with a built-in of the toolkit, alone, after the calls before it and before those after
 * it (see the module comment). Never fails:
 * every outcome is an answer (see the module comment). Requires the handlers of the toolkit's tools
 * (`toolkit.toLayer`).
 *
 * @since 0.1.0
 * @category execution
 */
export const execute = <Tools extends Tool.Any, C extends RunnableCall>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<C>,
  options?: Options
): Effect.Effect<ReadonlyArray<ResultOf<C>>, never, Tool.HandlersFor<Tools>> =>
  executeUnchecked(toolkit, calls, options) as Effect.Effect<ReadonlyArray<ResultOf<C>>>

/**
 * Runs one call; see `execute`.
 *
 * @since 0.1.0
 * @category execution
 */
export const executeOne = <Tools extends Tool.Any, C extends RunnableCall>(
  toolkit: Toolkit.Toolkit<Tools>,
  call: C,
  options?: Omit<Options, "concurrency">
): Effect.Effect<ResultOf<C>, never, Tool.HandlersFor<Tools>> =>
  executeOneUnchecked(toolkit, call, limitsOf(options)) as Effect.Effect<ResultOf<C>>

/**
 * `execute` with the handler services looked up at run time instead of required by type: for callers
 * (the tool loop) whose own signature states the requirement. A handler missing at run time gives an
 * error answer and a logged error.
 *
 * @since 0.1.0
 * @category execution
 */
export const executeUnchecked = (
  toolkit: Toolkit.Any,
  calls: ReadonlyArray<RunnableCall>,
  options?: Options
): Effect.Effect<ReadonlyArray<Part.ToolMessagePart>> =>
  Effect.suspend(() => {
    const limits = limitsOf(options)
    const results: Array<Part.ToolMessagePart> = new Array(calls.length)
    const runAt = (index: number) =>
      Effect.map(executeOneUnchecked(toolkit, calls[index]!, limits), (result) => {
        results[index] = result
      })
    // stages run one after the other: a run of calls that may go together, or one call that runs alone
    const stages: Array<Effect.Effect<void>> = []
    let together: Array<number> = []
    const close = () => {
      if (together.length === 0) return
      stages.push(Effect.forEach(together, runAt, { concurrency: options?.concurrency ?? DEFAULT_CONCURRENCY, discard: true }))
      together = []
    }
    calls.forEach((call, index) => {
      if (isBuiltIn(call) || sharesBuiltInName(call)) {
        close()
        stages.push(runAt(index))
      } else {
        together.push(index)
      }
    })
    close()
    return Effect.as(Effect.all(stages, { discard: true }), results)
  })

/**
 * Whether an assistant part is a client-run built-in call the client could not read: an `UnknownPart` of a
 * `shell_call`, `apply_patch_call` or `local_shell_call` item with `malformed` set (the decoder's reason,
 * naming the field) and a string `call_id`. The tool loop answers it with `answerUnreadable` instead of
 * ending; `execute` does not take it.
 *
 * @since 0.2.0
 * @category guards
 */
export const isUnreadableCall = (part: Part.AssistantPart): part is Part.UnknownPart =>
  part.type === "unknown" && part.malformed !== undefined && UNREADABLE_KINDS.has(part.kind) &&
  unreadableCallId(part) !== undefined

/**
 * The `call_id` of an unreadable call (`isUnreadableCall`), if it has one.
 *
 * @since 0.2.0
 * @category guards
 */
export const unreadableCallId = (part: Part.UnknownPart): string | undefined => {
  const item = part.item
  if (typeof item !== "object" || item === null || !("call_id" in item)) return undefined
  return typeof item.call_id === "string" ? item.call_id : undefined
}

/**
 * The error answer to a call the client could not read (`isUnreadableCall`), in the call's own item type,
 * naming the field, nothing run:
 *
 * - `shell_call`: a `ShellCallOutputPart` with one output, exit code 1, on standard error `the shell_call
 *   could not be read: action.commands: Expected ReadonlyArray<string>, actual "ls"; nothing was run`;
 * - `apply_patch_call`: an `ApplyPatchCallOutputPart`, `failed`, `the apply_patch_call could not be read:
 *   operation.path is missing; nothing was applied`;
 * - `local_shell_call`: a `LocalShellCallOutputPart`, `{"error": …}`.
 *
 * @since 0.2.0
 * @category execution
 */
export const answerUnreadable = (part: Part.UnknownPart): Part.ToolMessagePart => {
  const callId = unreadableCallId(part) ?? ""
  const reason = `the ${part.kind} could not be read: ${part.malformed ?? "it does not match its schema"}`
  switch (part.kind) {
    case "apply_patch_call":
      return new CorePart.ApplyPatchCallOutputPart({ callId, status: "failed", output: `${reason}; nothing was applied` })
    case "local_shell_call":
      return new CorePart.LocalShellCallOutputPart({ callId, output: toJson({ error: `${reason}; nothing was run` })! })
    default:
      return new CorePart.ShellCallOutputPart({
        callId,
        output: [{ stdout: "", stderr: `${reason}; nothing was run`, outcome: { type: "exit", exitCode: 1 } }]
      })
  }
}

const UNREADABLE_KINDS: ReadonlySet<string> = new Set(["shell_call", "apply_patch_call", "local_shell_call"])

/**
 * `text` bounded to `max` characters, the marker included: unchanged when it fits, else its head and tail
 * (about half of the room the marker leaves each) around the line `[… N characters cut …]`, so the model
 * sees both the start and the end (where errors usually are) and knows something is missing. A cut is
 * always marked within the bound: a bound too small for that line (under about 30 characters) keeps the
 * head then `[…N cut]`, and one too small for that (under about 10) the head then `…`; a bound of 0 keeps
 * nothing. A surrogate pair is never split. The same cut as the shell tool's (`Shell.keepHeadAndTail`).
 *
 * @since 0.2.0
 * @category limits
 */
export const truncate = (text: string, max: number): string => Cut.keepHeadAndTail(text, text, text.length, max)

// ---------------------------------------------------------------------------------------------------------
// internal
// ---------------------------------------------------------------------------------------------------------

interface Limits {
  readonly timeout: Duration.Duration | undefined
  readonly maxOutputLength: number | undefined
}

const limitsOf = (options: Omit<Options, "concurrency"> | undefined): Limits => ({
  timeout: options?.timeout === "none" ? undefined : Duration.decode(options?.timeout ?? DEFAULT_TIMEOUT),
  maxOutputLength: options?.maxOutputLength === "none"
    ? undefined
    : Math.max(0, options?.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH)
})

const isBuiltIn = (call: RunnableCall): boolean =>
  call.type === "shell_call" || call.type === "apply_patch_call" || call.type === "local_shell_call"

/**
 * Whether a function or custom call names a tool by a client-run built-in's name (`apply_patch`, `shell`,
 * `local_shell`), whether or not the toolkit holds the built-in: Codex declares its `apply_patch` as a
 * freeform custom tool alone, and runs it alone. It runs in order with the built-in calls.
 */
const sharesBuiltInName = (call: RunnableCall): boolean =>
  (call.type === "tool_call" || call.type === "custom_tool_call") && call.namespace === undefined &&
  BUILT_IN_NAMES.has(call.name)

const BUILT_IN_NAMES: ReadonlySet<string> = new Set(["apply_patch", "shell", "local_shell"])

/**
 * The toolkit's tools by the names the model calls them (`<namespace>.<name>` in a namespace), each once:
 * the handler key `built-in:apply_patch` of a built-in beside a custom `apply_patch` is `apply_patch` to the
 * model.
 */
const modelNames = (toolkit: Toolkit.Any): ReadonlyArray<string> =>
  Array.from(new Set(toolkit.names.map((key) => key.startsWith(BUILT_IN_PREFIX) ? key.slice(BUILT_IN_PREFIX.length) : key)))

const BUILT_IN_PREFIX = "built-in:"

/** The tool name a call asks for (a built-in's is its type's name). */
const nameOf = (call: RunnableCall): string => {
  switch (call.type) {
    case "tool_call":
    case "custom_tool_call":
      return call.name
    case "shell_call":
      return "shell"
    case "apply_patch_call":
      return "apply_patch"
    case "local_shell_call":
      return "local_shell"
  }
}

/** The kind of tool a call needs. */
const kindOf = (call: RunnableCall): Tool.Kind =>
  call.type === "tool_call" ? "function" : call.type === "custom_tool_call" ? "custom" : "client"

/**
 * What is wrong with the arguments of a function call of the client-run built-in `name`: the first field of
 * the function it is offered as that does not match (`BuiltInArguments`, the shapes the gateway of
 * `@effect-responses/server` decodes such a call with), named as the Responses decoder names a malformed
 * built-in call's field (`commands: Expected ReadonlyArray<string>, actual "notalist"`, `diff is missing`);
 * `undefined` when they match (or `name` is no built-in).
 */
const builtInArgumentsProblem = (name: string, args: string): string | undefined => {
  if (!BuiltInArguments.isName(name)) return undefined
  const json = parseArguments(args)
  if (Exit.isFailure(json)) {
    const message = Option.getOrElse(Cause.failureOption(json.cause), () => "unreadable")
    return `invalid JSON arguments for tool "${name}": ${message} in ${JSON.stringify(AiError.excerpt(args))}; nothing was run`
  }
  const value = json.value
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `invalid arguments for tool "${name}": they are ${JSON.stringify(AiError.excerpt(args))}, not a JSON object; nothing was run`
  }
  const problem = BuiltInArguments.problem(name, value)
  return problem === undefined ? undefined : `invalid arguments for tool "${name}": ${AiError.excerpt(problem, MAX_MESSAGE)}; nothing was run`
}

/** The longest decode message sent back to the model, in UTF-16 code units. */
const MAX_MESSAGE = 2000

/** JSON text of an encoded value (`null` for `undefined`), or `undefined` when it has none (a cycle, a bigint). */
const toJson = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value) ?? "null"
  } catch {
    return undefined
  }
}

const errorJson = (call: RunnableCall, error: unknown): string =>
  toJson({ error }) ?? toJson({ error: `tool "${nameOf(call)}" failed` })!

/** The answer to `call` when it failed: `error` is a message, or an encoded typed failure. */
const failed = (call: RunnableCall, errorType: string, error: unknown): Effect.Effect<Part.ToolMessagePart> =>
  Effect.as(Effect.annotateCurrentSpan("error.type", errorType), failedAnswer(call, errorType, error))

const failedAnswer = (call: RunnableCall, errorType: string, error: unknown): Part.ToolMessagePart => {
  const message = typeof error === "string" ? error : errorJson(call, error)
  switch (call.type) {
    case "tool_call":
      return new CorePart.ToolResultPart({ callId: call.callId, name: call.name, output: errorJson(call, error), isError: true })
    case "custom_tool_call":
      return new CorePart.ToolResultPart({
        callId: call.callId,
        name: call.name,
        output: errorJson(call, error),
        isError: true,
        kind: "custom"
      })
    case "shell_call":
      return new CorePart.ShellCallOutputPart({
        callId: call.callId,
        output: [{
          stdout: "",
          stderr: message,
          outcome: errorType === "timeout" ? { type: "timeout" } : { type: "exit", exitCode: 1 }
        }],
        ...(call.maxOutputLength === undefined ? {} : { maxOutputLength: call.maxOutputLength })
      })
    case "apply_patch_call":
      return new CorePart.ApplyPatchCallOutputPart({ callId: call.callId, status: "failed", output: message })
    case "local_shell_call":
      return new CorePart.LocalShellCallOutputPart({ callId: call.callId, output: errorJson(call, error) })
  }
}

/** The answer to `call` from its handler's encoded success. */
const succeeded = (call: RunnableCall, encoded: unknown): Part.ToolMessagePart | undefined => {
  switch (call.type) {
    case "tool_call": {
      const output = toJson(encoded)
      return output === undefined
        ? undefined
        : new CorePart.ToolResultPart({ callId: call.callId, name: call.name, output, isError: false })
    }
    case "custom_tool_call": {
      const output = typeof encoded === "string" ? encoded : toJson(encoded)
      return output === undefined
        ? undefined
        : new CorePart.ToolResultPart({ callId: call.callId, name: call.name, output, isError: false, kind: "custom" })
    }
    case "shell_call":
      return new CorePart.ShellCallOutputPart({
        callId: call.callId,
        output: encoded as ReadonlyArray<Part.ShellCommandOutput>,
        ...(call.maxOutputLength === undefined ? {} : { maxOutputLength: call.maxOutputLength })
      })
    case "apply_patch_call": {
      const result = encoded as Tool.ApplyPatchResult
      return new CorePart.ApplyPatchCallOutputPart({
        callId: call.callId,
        status: result.status,
        ...(result.output === undefined ? {} : { output: result.output })
      })
    }
    case "local_shell_call":
      return typeof encoded === "string"
        ? new CorePart.LocalShellCallOutputPart({ callId: call.callId, output: encoded })
        : undefined
  }
}

/** The answer with its text cut to `max` characters (a warning logged when it is). */
const bounded = (
  call: RunnableCall,
  answer: Part.ToolMessagePart,
  max: number | undefined
): Effect.Effect<Part.ToolMessagePart> => {
  if (max === undefined) return Effect.succeed(answer)
  const warn = (length: number) =>
    Effect.logWarning(
      `tool "${nameOf(call)}" (call ${CorePart.callIdOf(call)}) answered ${length} characters; cut to ${max} (maxOutputLength)`
    )
  switch (answer.type) {
    case "tool_result":
      return answer.output.length <= max
        ? Effect.succeed(answer)
        : Effect.as(warn(answer.output.length), new CorePart.ToolResultPart({ ...answer, output: truncate(answer.output, max) }))
    case "local_shell_call_output":
      return answer.output.length <= max
        ? Effect.succeed(answer)
        : Effect.as(
          warn(answer.output.length),
          new CorePart.LocalShellCallOutputPart({ ...answer, output: truncateJson(answer.output, max) })
        )
    case "apply_patch_call_output":
      return answer.output === undefined || answer.output.length <= max
        ? Effect.succeed(answer)
        : Effect.as(
          warn(answer.output.length),
          new CorePart.ApplyPatchCallOutputPart({ ...answer, output: truncate(answer.output, max) })
        )
    case "shell_call_output": {
      const total = answer.output.reduce((sum, out) => sum + out.stdout.length + out.stderr.length, 0)
      if (total <= max) return Effect.succeed(answer)
      const rooms = shares(answer.output.flatMap((out) => [out.stdout.length, out.stderr.length]), max)
      const output = answer.output.map((out, index) => ({
        ...out,
        stdout: recut(out.stdout, rooms[2 * index]!),
        stderr: recut(out.stderr, rooms[2 * index + 1]!)
      }))
      return Effect.as(warn(total), new CorePart.ShellCallOutputPart({ ...answer, output }))
    }
    default:
      return Effect.succeed(answer)
  }
}

/**
 * A `local_shell_call_output`'s text bounded to `max` characters. The text `Shell.localHandler` answers
 * (`localAnswer`: `{"stdout","stderr","exit_code"}`, with `"timed_out":true` on a timeout, or `{"error"}`,
 * exactly as `JSON.stringify` writes it) stays JSON: its string values are cut, never its keys, exit code,
 * `null`, `true` or punctuation (the fixed parts). The room the fixed parts leave is shared among the values
 * as a shell answer's among its streams (`shares`, in JSON characters: `"` and `\` count 2, a control
 * character up to 6), each value cut with `recut` (head, tail and marker inside the value; a stream the
 * `Shell` handler cut keeps counting the command's whole output) to the longest cut whose JSON text fits its
 * share. Any other text (an application's own handler, JSON or not: its numbers, keys and layout are its
 * own), and the handler's answer at a bound under its fixed parts, is cut as text (`truncate`: head, marker,
 * tail), so the answer is always within the bound.
 */
const truncateJson = (text: string, max: number): string => {
  const answer = localAnswer(text)
  if (answer === undefined) return truncate(text, max)
  const keys = Object.keys(answer)
  const valueKeys = keys.filter((key) => typeof answer[key] === "string")
  const fixed = text.length - valueKeys.reduce((sum, key) => sum + jsonLength(answer[key] as string), 0)
  if (fixed > max) return truncate(text, max)
  const lengths = valueKeys.map((key) => jsonLength(answer[key] as string))
  const rooms = shares(lengths, max - fixed)
  const cut: Record<string, unknown> = {}
  for (const key of keys) {
    const at = valueKeys.indexOf(key)
    cut[key] = at === -1 || lengths[at]! <= rooms[at]! ? answer[key] : cutToJsonLength(answer[key] as string, rooms[at]!)
  }
  const written = JSON.stringify(cut)
  return written.length <= max ? written : truncate(text, max)
}

/**
 * `text` parsed when it is an answer of `Shell.localHandler`, else `undefined`: an object of exactly the keys
 * `stdout`, `stderr` (strings), `exit_code` (a safe integer, or `null` with `timed_out` `true` after it), or
 * of the key `error` (a string), in that order, and `text` exactly its `JSON.stringify` (no spacing, no
 * duplicate key, no number written otherwise), so cutting its values and writing it again changes nothing else.
 */
const localAnswer = (text: string): Record<string, unknown> | undefined => {
  if (!text.startsWith("{\"")) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const answer = value as Record<string, unknown>
  const keys = Object.keys(answer).join()
  const shaped = keys === "error"
    ? typeof answer.error === "string"
    : (keys === "stdout,stderr,exit_code" && Number.isSafeInteger(answer.exit_code) ||
      keys === "stdout,stderr,exit_code,timed_out" && answer.exit_code === null && answer.timed_out === true) &&
      typeof answer.stdout === "string" && typeof answer.stderr === "string"
  return shaped && JSON.stringify(answer) === text ? answer : undefined
}

/** The characters of `text` inside its JSON string literal (`JSON.stringify`, without the quotes). */
const jsonLength = (text: string): number => JSON.stringify(text).length - 2

/**
 * `text` cut (`recut`) to the most characters whose JSON text is at most `room` characters: the bound found
 * by bisection, as escapes make the JSON length of a cut grow unevenly with it (a bound of 0 keeps nothing).
 */
const cutToJsonLength = (text: string, room: number): string => {
  let low = 0
  let high = Math.min(room, text.length)
  if (jsonLength(recut(text, high)) <= room) return recut(text, high)
  while (high - low > 1) {
    const middle = (low + high) >>> 1
    if (jsonLength(recut(text, middle)) <= room) low = middle
    else high = middle
  }
  return recut(text, low)
}

/**
 * The room of each of `lengths` (the streams of a shell call's commands, in order) in a budget of `max`
 * characters, when they do not all fit: every stream gets the same share, and a stream shorter than its
 * share keeps it whole and leaves the rest to the others (max-min fairness: the largest share `q` with the
 * sum of `min(length, q)` at most `max`). The characters the equal division leaves over go one each to the
 * first streams that are cut. So a stream is whole or cut to its share, never to nothing while there is room.
 */
const shares = (lengths: ReadonlyArray<number>, max: number): Array<number> => {
  const rooms = lengths.slice()
  // shortest first: each takes at most an equal part of what is left
  const order = lengths.map((_, index) => index).sort((a, b) => lengths[a]! - lengths[b]! || a - b)
  let left = max
  for (let at = 0; at < order.length; at++) {
    const others = order.length - at
    const share = Math.floor(left / others)
    if (lengths[order[at]!]! <= share) {
      left -= lengths[order[at]!]!
      continue
    }
    // this one and every longer one is cut: an equal share each, the rest one each to the first cut ones
    const cut = order.slice(at).sort((a, b) => a - b)
    let extra = left - share * others
    for (const index of cut) {
      rooms[index] = share + (extra > 0 ? 1 : 0)
      extra--
    }
    break
  }
  return rooms
}

/**
 * A shell stream cut to `max` characters (`truncate`), counting in its marker what the handler had already
 * cut: a stream the handler cut (`Shell.handler`: its head, the marker `[… N characters cut …]`, its tail)
 * is cut again from that head and tail, the new marker saying how much of the command's whole output is
 * left out (`N` and what this cut drops), not of the handler's answer alone. So is a stream the handler cut
 * at a bound too small for that line: its head then `[…N cut]` is cut again from the head with the whole
 * length; its head then `…` is cut as any text, which keeps the head then `…` (no `[…N cut]` fits a bound
 * below its length). A stream whose head or tail is shorter than what the new cut takes from it (about half
 * of `max`: the old marker would stay) is cut as any text.
 *
 * A marker is read as the handler's only where the handler could have written it (`handlerCut`): a command's
 * output may hold marker-like text of its own (a log quoting an earlier cut, `[… 1e+23 characters cut …]`,
 * `[…5 cut]` at its end), which is text like the rest, counted as it is.
 */
const recut = (text: string, max: number): string => {
  if (text.length <= max) return text
  const found = handlerCut(text)
  if (found === undefined) return truncate(text, max)
  if (found.tail === undefined) return Cut.keepHeadAndTail(found.head, "", found.total, max)
  // the new cut takes about half its room from each side: the handler's head and tail must hold that much
  const room = max - Cut.truncationMarker(found.total).length
  const first = Math.floor(room / 2)
  if (room >= 0 ? found.head.length < first || found.tail.length < room - first : found.head.length < max) {
    return truncate(text, max)
  }
  return Cut.keepHeadAndTail(found.head, found.tail, found.total, max)
}

/**
 * The cut in `text` if `Cut.keepHeadAndTail` can have written it: the head, the tail (none for the short
 * marker at the end) and the length of the whole text. A marker is the handler's when a bound exists at which
 * `keepHeadAndTail` of a text of that whole length writes it where it is: the marker line between the even
 * split of the room it leaves (the head `floor(room / 2)` characters, the tail the rest, either one less so as
 * not to split a surrogate pair), or `[…N cut]` after the head at a bound too small for the line; the count
 * a decimal integer as written (no sign, exponent or leading zero, at most 2^53), the whole longer than that
 * bound (the handler cuts only then). A command's own marker-like text is never in those places but by
 * chance: in the middle of an output, with a count larger than the characters around it.
 */
const handlerCut = (
  text: string
): { readonly head: string; readonly tail: string | undefined; readonly total: number } | undefined => {
  for (const match of text.matchAll(/\n\[… ([1-9]\d*) characters cut …\]\n/g)) {
    const head = text.slice(0, match.index)
    const tail = text.slice(match.index + match[0].length)
    const total = head.length + Number(match[1]) + tail.length
    if (!Number.isSafeInteger(total)) continue
    const line = Cut.truncationMarker(total).length
    // the room the line left: the characters kept, or one or two more when a surrogate pair moved a cut
    for (let room = head.length + tail.length; room <= head.length + tail.length + 2; room++) {
      const first = Math.floor(room / 2)
      const last = room - first
      if (
        (head.length === first || head.length === first - 1) && (tail.length === last || tail.length === last - 1) &&
        total > room + line
      ) return { head, tail, total }
    }
  }
  const short = /\[…([1-9]\d*) cut\]$/.exec(text)
  if (short !== null) {
    const head = text.slice(0, short.index)
    const total = head.length + Number(short[1])
    if (!Number.isSafeInteger(total)) return undefined
    const marker = Cut.shortTruncationMarker(total).length
    // the bound: the head and the marker for the whole, or one more when the head gave up half a surrogate pair
    for (let max = head.length + marker; max <= head.length + marker + 1; max++) {
      if (max < Cut.truncationMarker(total).length && total > max) return { head, tail: undefined, total }
    }
  }
  return undefined
}

const unexpected = (call: RunnableCall, cause: Cause.Cause<unknown>, what: string) =>
  Effect.zipRight(
    Effect.logError(`tool "${nameOf(call)}" (call ${CorePart.callIdOf(call)}) ${what}`, cause),
    failed(call, "unexpected_error", `tool "${nameOf(call)}" failed unexpectedly`)
  )

const parseArguments = (text: string): Exit.Exit<unknown, string> => {
  if (text.trim() === "") return Exit.succeed({})
  try {
    return Exit.succeed(JSON.parse(text))
  } catch (error) {
    return Exit.fail(error instanceof Error ? error.message : String(error))
  }
}

/** The handler's input: the decoded arguments of a function call, the raw input of a custom call, the part of a built-in call. */
const paramsOf = (tool: Tool.Any, call: RunnableCall): Effect.Effect<unknown, string> => {
  switch (call.type) {
    case "custom_tool_call":
      return Effect.succeed(call.input)
    case "tool_call":
      return Effect.gen(function*() {
        const json = parseArguments(call.arguments)
        if (Exit.isFailure(json)) {
          const message = Option.getOrElse(Cause.failureOption(json.cause), () => "unreadable")
          return yield* Effect.fail(
            `invalid JSON arguments for tool "${tool.name}": ${message} in ${JSON.stringify(AiError.excerpt(call.arguments))}`
          )
        }
        // in strict mode the model sends `null` for an optional property it leaves out
        const value = InternalSchema.dropNullOptionals(json.value, Tool.parametersJsonSchema(tool))
        const params = yield* Effect.either(
          Schema.decodeUnknown(InternalSchema.erase(tool.parameters), { errors: "all" })(value)
        )
        if (params._tag === "Left") {
          return yield* Effect.fail(
            `invalid arguments for tool "${tool.name}": ${
              AiError.excerpt(ParseResult.TreeFormatter.formatErrorSync(params.left), MAX_MESSAGE)
            }`
          )
        }
        return params.right
      })
    default:
      return Effect.succeed(call)
  }
}

const run = (tool: Tool.Any, key: string, call: RunnableCall, limits: Limits) =>
  Effect.gen(function*() {
    const params = yield* Effect.either(paramsOf(tool, call))
    if (params._tag === "Left") return yield* failed(call, "invalid_arguments", params.left)
    const context = yield* Effect.context<never>()
    const handler = Context.getOption(context, Tool.handlerTag(key))
    if (Option.isNone(handler)) {
      return yield* unexpected(call, Cause.die(new Error(`no handler provided for tool "${key}"`)), "has no handler")
    }
    const namespace = call.type === "tool_call" || call.type === "custom_tool_call" ? call.namespace : undefined
    const callContext: Tool.CallContext = {
      callId: CorePart.callIdOf(call),
      name: nameOf(call),
      ...(namespace === undefined ? {} : { namespace })
    }
    const handled = handler.value.handle(params.right, callContext)
    const outcome = yield* Effect.exit(
      limits.timeout === undefined ? Effect.asSome(handled) : Effect.timeoutOption(handled, limits.timeout)
    )
    if (Exit.isSuccess(outcome)) {
      if (Option.isNone(outcome.value)) {
        return yield* failed(call, "timeout", `tool "${tool.name}" timed out after ${Duration.format(limits.timeout!)}`)
      }
      const encoded = yield* Effect.exit(Schema.encodeUnknown(InternalSchema.erase(tool.success))(outcome.value.value))
      if (Exit.isFailure(encoded)) return yield* unexpected(call, encoded.cause, "returned a value its success schema cannot encode")
      const answer = succeeded(call, encoded.value)
      if (answer === undefined) return yield* unexpected(call, Cause.empty, "returned a value with no JSON text")
      return answer
    }
    const cause = outcome.cause
    // Only the handler interrupted itself: were this fiber interrupted, it would not get here.
    if (Cause.isInterruptedOnly(cause)) return yield* failed(call, "interrupted", `tool "${tool.name}" was interrupted`)
    const error = Cause.failureOption(cause)
    if (Option.isSome(error)) {
      const encoded = yield* Effect.exit(Schema.encodeUnknown(InternalSchema.erase(tool.failure))(error.value))
      if (Exit.isFailure(encoded)) return yield* unexpected(call, cause, "failed with an error its failure schema cannot encode")
      return yield* failed(call, "tool_error", encoded.value)
    }
    return yield* unexpected(call, cause, "died")
  })

const executeOneUnchecked = (
  toolkit: Toolkit.Any,
  call: RunnableCall,
  limits: Limits
): Effect.Effect<Part.ToolMessagePart> => {
  const name = nameOf(call)
  const namespace = call.type === "tool_call" || call.type === "custom_tool_call" ? call.namespace : undefined
  const tool = toolkit.find(name, namespace, kindOf(call))
  // a tool of that name but of another kind, for the message
  const other = tool === undefined ? toolkit.find(name, namespace) : undefined
  // a function call of a client-run built-in whose arguments are no call of it (a gateway writes such a
  // call as the function call it was; beside a custom tool of the name too): what is wrong with them, for
  // the model to call again
  const wrongArguments = tool === undefined && call.type === "tool_call" && namespace === undefined &&
      toolkit.find(name, undefined, "client") !== undefined
    ? builtInArgumentsProblem(name, call.arguments)
    : undefined
  const result = tool === undefined
    ? failed(
      call,
      wrongArguments === undefined ? "unknown_tool" : "invalid_arguments",
      wrongArguments !== undefined
        ? wrongArguments
        : other !== undefined
        ? `tool "${name}" is a ${other.kind} tool, called as a ${kindOf(call)} tool`
        : `unknown tool "${name}"${
          namespace === undefined ? "" : ` in namespace "${namespace}"`
        }; available tools: ${toolkit.names.length === 0 ? "none" : modelNames(toolkit).join(", ")}`
    )
    : Effect.catchAllCause(run(tool, toolkit.keyOf(tool), call, limits), (cause) => unexpected(call, cause, "died"))
  return Effect.withSpan(
    Effect.flatMap(result, (answer) => bounded(call, answer, limits.maxOutputLength)),
    `execute_tool ${name}`,
    {
      kind: "internal",
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": CorePart.callIdOf(call),
        "gen_ai.tool.type": kindOf(call) === "client" ? "extension" : "function",
        ...(tool === undefined ? {} : { "gen_ai.tool.description": tool.description })
      }
    }
  )
}
