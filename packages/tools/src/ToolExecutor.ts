/**
 * Runs the local function calls of one model turn and turns every outcome into a `ToolResultPart` the
 * model can read. Nothing the model got wrong crashes the caller:
 *
 * | outcome | result `output` (JSON text) | `isError` |
 * |---|---|---|
 * | success | the value encoded with the tool's `success` schema | `false` |
 * | `arguments` not JSON | `{"error":"invalid JSON arguments for tool …: <parser message> in <excerpt>"}` | `true` |
 * | arguments not matching `parameters` | `{"error":"invalid arguments for tool …: <decode message>"}` (at most 2000 characters) | `true` |
 * | no tool of that name (and namespace, see `Toolkit.resolve`) | `{"error":"unknown tool …; available tools: …"}` (tools by `Tool.Key`) | `true` |
 * | handler failure | `{"error": <failure encoded with the tool's failure schema>}` | `true` |
 * | timeout | `{"error":"tool … timed out after …"}` | `true` |
 * | handler interrupted itself | `{"error":"tool … was interrupted"}` | `true` |
 * | defect (a bug) | `{"error":"tool … failed unexpectedly"}` (no stack), the cause logged | `true` |
 *
 * `arguments: ""` (a function without parameters, as some servers send it) reads as `{}`; a `null` for an
 * optional property reads as the property left out (strict mode makes optional properties nullable, see
 * `Tool.toStrict`). Only
 * `ToolCallPart`s (Responses `function_call` items) are run; items of built-in tools never reach here.
 * Each call runs in a span `execute_tool <name>` with the OpenTelemetry GenAI attributes.
 *
 * @since 0.1.0
 */
import type { Part } from "@effect-responses/core"
import { AiError, Part as CorePart } from "@effect-responses/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as InternalSchema from "./internal/schema.js"
import * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * How calls are run: at most `concurrency` at once (default `DEFAULT_CONCURRENCY`), each given at most
 * `timeout` (default: none) before it becomes an error result.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly concurrency?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * How many tool calls run at once by default.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_CONCURRENCY = 4

/**
 * Runs the calls concurrently (bounded by `options.concurrency`) and returns one result per call, in call
 * order, each with the call's `callId` and `name`. Never fails: every outcome is a result (see the module
 * comment). Requires the handlers of the toolkit's tools (`toolkit.toLayer`).
 *
 * @since 0.1.0
 * @category execution
 */
export const execute = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<Part.ToolCallPart>,
  options?: Options
): Effect.Effect<ReadonlyArray<Part.ToolResultPart>, never, Tool.HandlersFor<Tools>> =>
  executeUnchecked(toolkit, calls, options)

/**
 * Runs one call; see `execute`.
 *
 * @since 0.1.0
 * @category execution
 */
export const executeOne = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  call: Part.ToolCallPart,
  options?: Pick<Options, "timeout">
): Effect.Effect<Part.ToolResultPart, never, Tool.HandlersFor<Tools>> => executeOneUnchecked(toolkit, call, options)

/**
 * `execute` with the handler services looked up at run time instead of required by type: for callers
 * (the tool loop) whose own signature states the requirement. A handler missing at run time gives an
 * error result and a logged error.
 *
 * @since 0.1.0
 * @category execution
 */
export const executeUnchecked = (
  toolkit: Toolkit.Any,
  calls: ReadonlyArray<Part.ToolCallPart>,
  options?: Options
): Effect.Effect<ReadonlyArray<Part.ToolResultPart>> =>
  Effect.forEach(calls, (call) => executeOneUnchecked(toolkit, call, options), {
    concurrency: options?.concurrency ?? DEFAULT_CONCURRENCY
  })

// ---------------------------------------------------------------------------------------------------------
// internal
// ---------------------------------------------------------------------------------------------------------

const success = (call: Part.ToolCallPart, output: string): Part.ToolResultPart =>
  new CorePart.ToolResultPart({ callId: call.callId, name: call.name, output, isError: false })

const failure = (call: Part.ToolCallPart, errorType: string, error: unknown): Effect.Effect<Part.ToolResultPart> =>
  Effect.as(
    Effect.annotateCurrentSpan("error.type", errorType),
    new CorePart.ToolResultPart({
      callId: call.callId,
      name: call.name,
      output: toJson({ error }) ?? toJson({ error: `tool "${call.name}" failed` })!,
      isError: true
    })
  )

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

const unexpected = (call: Part.ToolCallPart, cause: Cause.Cause<unknown>, what: string) =>
  Effect.zipRight(
    Effect.logError(`tool "${call.name}" (call ${call.callId}) ${what}`, cause),
    failure(call, "unexpected_error", `tool "${call.name}" failed unexpectedly`)
  )

const parseArguments = (text: string): Exit.Exit<unknown, string> => {
  if (text.trim() === "") return Exit.succeed({})
  try {
    return Exit.succeed(JSON.parse(text))
  } catch (error) {
    return Exit.fail(error instanceof Error ? error.message : String(error))
  }
}

const run = (tool: Tool.Any, call: Part.ToolCallPart, options: Pick<Options, "timeout"> | undefined) =>
  Effect.gen(function*() {
    const json = parseArguments(call.arguments)
    if (Exit.isFailure(json)) {
      const message = Option.getOrElse(Cause.failureOption(json.cause), () => "unreadable")
      return yield* failure(
        call,
        "invalid_arguments",
        `invalid JSON arguments for tool "${tool.name}": ${message} in ${JSON.stringify(AiError.excerpt(call.arguments))}`
      )
    }
    // in strict mode the model sends `null` for an optional property it leaves out
    const value = InternalSchema.dropNullOptionals(json.value, Tool.parametersJsonSchema(tool))
    const params = yield* Effect.either(
      Schema.decodeUnknown(InternalSchema.erase(tool.parameters), { errors: "all" })(value)
    )
    if (params._tag === "Left") {
      return yield* failure(
        call,
        "invalid_arguments",
        `invalid arguments for tool "${tool.name}": ${
          AiError.excerpt(ParseResult.TreeFormatter.formatErrorSync(params.left), MAX_MESSAGE)
        }`
      )
    }
    const context = yield* Effect.context<never>()
    const handler = Context.getOption(context, Tool.handlerTag(Tool.key(tool)))
    if (Option.isNone(handler)) {
      return yield* unexpected(call, Cause.die(new Error(`no handler provided for tool "${Tool.key(tool)}"`)), "has no handler")
    }
    const handled = handler.value.handle(params.right, {
      callId: call.callId,
      name: call.name,
      ...(call.namespace === undefined ? {} : { namespace: call.namespace })
    })
    const outcome = yield* Effect.exit(
      options?.timeout === undefined ? Effect.asSome(handled) : Effect.timeoutOption(handled, options.timeout)
    )
    if (Exit.isSuccess(outcome)) {
      if (Option.isNone(outcome.value)) {
        const after = Duration.format(Duration.decode(options?.timeout ?? 0))
        return yield* failure(call, "timeout", `tool "${tool.name}" timed out after ${after}`)
      }
      const encoded = yield* Effect.exit(Schema.encodeUnknown(InternalSchema.erase(tool.success))(outcome.value.value))
      if (Exit.isFailure(encoded)) return yield* unexpected(call, encoded.cause, "returned a value its success schema cannot encode")
      const output = toJson(encoded.value)
      if (output === undefined) return yield* unexpected(call, Cause.empty, "returned a value with no JSON text")
      return success(call, output)
    }
    const cause = outcome.cause
    // Only the handler interrupted itself: were this fiber interrupted, it would not get here.
    if (Cause.isInterruptedOnly(cause)) return yield* failure(call, "interrupted", `tool "${tool.name}" was interrupted`)
    const error = Cause.failureOption(cause)
    if (Option.isSome(error)) {
      const encoded = yield* Effect.exit(Schema.encodeUnknown(InternalSchema.erase(tool.failure))(error.value))
      if (Exit.isFailure(encoded)) return yield* unexpected(call, cause, "failed with an error its failure schema cannot encode")
      return yield* failure(call, "tool_error", encoded.value)
    }
    return yield* unexpected(call, cause, "died")
  })

const executeOneUnchecked = (
  toolkit: Toolkit.Any,
  call: Part.ToolCallPart,
  options: Pick<Options, "timeout"> | undefined
): Effect.Effect<Part.ToolResultPart> => {
  const tool = toolkit.find(call.name, call.namespace)
  const result = tool === undefined
    ? failure(
      call,
      "unknown_tool",
      `unknown tool "${call.name}"${
        call.namespace === undefined ? "" : ` in namespace "${call.namespace}"`
      }; available tools: ${toolkit.names.length === 0 ? "none" : toolkit.names.join(", ")}`
    )
    : Effect.catchAllCause(run(tool, call, options), (cause) => unexpected(call, cause, "died"))
  return Effect.withSpan(result, `execute_tool ${call.name}`, {
    kind: "internal",
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": call.name,
      "gen_ai.tool.call.id": call.callId,
      "gen_ai.tool.type": "function",
      ...(tool === undefined ? {} : { "gen_ai.tool.description": tool.description })
    }
  })
}
