/**
 * The tool loop: call the model with the toolkit's tools, run the calls it asks for, hand the answers back,
 * and repeat until a response asks for none.
 *
 * The calls the loop runs (with `ToolExecutor`): function tool calls, custom tool calls, and calls of the
 * client-run built-in tools `shell`, `apply_patch` and `local_shell`, each answered in the item type the
 * API expects (`function_call_output`, `custom_tool_call_output`, `shell_call_output`,
 * `apply_patch_call_output`, `local_shell_call_output`). Which of them run, and with which safeguards, is
 * the application's decision: the loop runs only the tools of its toolkit, with the handlers the
 * application provides. MCP approval requests are answered with the decisions of the `McpApprovals`
 * service when the context has one (sent as `mcp_approval_response` items). A response holding a call the
 * loop cannot answer (an MCP approval request without that service, a tool search the client executes)
 * ends the loop without running anything, for the caller to answer. A shell, apply_patch or local_shell call
 * item the client could not read (no operation `path`, an operation type not invented yet, `commands` not
 * a list; the decoder keeps it as an `UnknownPart` with `malformed` when its `call_id` is readable) gets an
 * error answer in its own item type naming the field (`ToolExecutor.answerUnreadable`), and the loop goes
 * on; without a readable `call_id` the response is malformed output and the step fails.
 *
 * The calls of a step are taken in the model's output order, as Codex runs them: function and custom tool
 * calls together (at most `concurrency` at once), each shell, apply_patch or local_shell call alone, after
 * the calls before it have ended and before those after it start (an `apply_patch` creating a file, then a
 * `read_file` of it, reads the new file). See `ToolExecutor` for the details.
 *
 * Each step appends to the transcript the assistant message whole (every part in output order, reasoning
 * with its encrypted payload, built-in tool items verbatim), so replaying it gives back the items the
 * server sent; then, when it holds calls, a tool message with one answer per call, in call order.
 *
 * Limits: a tool call gets at most `timeout` (default `ToolExecutor.DEFAULT_TIMEOUT`), an answer at most
 * `maxOutputLength` characters (default `ToolExecutor.DEFAULT_MAX_OUTPUT_LENGTH`, cut with a marker the
 * model reads), the loop at most `maxSteps` model calls: it never runs forever. A bad argument, an unknown
 * tool, a failing or hanging handler each become an error answer the model reads; they never end the loop.
 * When a model call fails (or `maxSteps` is reached with calls pending), `generate` fails with `StepFailed`,
 * which carries the transcript of the steps that completed: tool calls already run are not lost.
 *
 * A response cut inside its calls (`status: "incomplete"`, e.g. `incompleteReason: "max_output_tokens"`; the API
 * closes a call it cut with status `incomplete` or `in_progress` before `response.incomplete`) runs none of
 * them: their arguments end where the limit came, and may even parse. The loop fails with an
 * `AiError.ToolError` naming the reason and the cut calls (`toolName`, `callId`: the first), the cut response
 * kept whole in the transcript (`StepFailed` from `generate`).
 *
 * With `execute: false` the loop makes one model call and runs nothing: the result's `response` holds the
 * calls (`response.message.clientCalls`) and its `transcript` ends with the assistant message, for the
 * caller to run them (e.g. with `ToolExecutor.execute`), append a `ToolMessage` and call again. It does not
 * fail for a cut response: the caller checks it (`response.status === "incomplete"` and a call whose
 * `attributes.status` is not `completed`: its arguments were cut) before running anything.
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { AiError, LanguageModel, Message, ModelResponse, Part, Prompt, StreamPart, Usage } from "@effect-responses/core"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Tool from "./Tool.js"
import * as ToolExecutor from "./ToolExecutor.js"
import * as McpApprovals from "./McpApprovals.js"
import type * as Toolkit from "./Toolkit.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * Options of a loop: the call options of every model call (`toolChoice`; the `tools` are the toolkit's
 * definitions) plus
 *
 * - `toolkit`: the local tools offered to the model;
 * - `maxSteps`: the most model calls the loop makes (default `DEFAULT_MAX_STEPS`, at least 1);
 * - `concurrency`: function and custom tool calls of one step run at once (default
 *   `ToolExecutor.DEFAULT_CONCURRENCY`); the calls are taken in the model's order, and a built-in tool call
 *   (or a call of a tool named as a built-in: `apply_patch`, `shell`, `local_shell`) runs alone, after the calls before
 *   it and before those after it (see `ToolExecutor`);
 * - `timeout`: the longest a tool call may run before it becomes an error answer (default
 *   `ToolExecutor.DEFAULT_TIMEOUT`, 5 minutes; `"none"`: no limit);
 * - `maxOutputLength`: the most characters of one answer sent back (default
 *   `ToolExecutor.DEFAULT_MAX_OUTPUT_LENGTH`; `"none"`: no bound); a longer one is cut with a marker
 *   (`ToolExecutor.truncate`) and a warning logged (a `Shell.localHandler` answer inside its JSON values, so it
 *   stays JSON when its fixed parts fit, 59 characters at most);
 * - `execute`: `false` to make one model call and return its calls unrun (default `true`).
 *
 * `toolChoice: "required"` applies to every step, so such a loop ends only at `maxSteps`, with a failure.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Tools extends Tool.Any> extends Omit<LanguageModel.CallOptions, "tools"> {
  readonly toolkit: Toolkit.Toolkit<Tools>
  readonly maxSteps?: number | undefined
  readonly concurrency?: number | undefined
  readonly timeout?: Duration.DurationInput | "none" | undefined
  readonly maxOutputLength?: number | "none" | undefined
  readonly execute?: boolean | undefined
}

/**
 * What `generate` gives:
 *
 * - `response`: the last model response (the final answer, or with `execute: false` the one holding the
 *   tool calls);
 * - `transcript`: the prompt followed by every assistant and tool message of the loop;
 * - `steps`: every model response, in order;
 * - `usage`: the usage of all steps, summed;
 * - `text`: the text of `response`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly response: ModelResponse.ModelResponse
  readonly transcript: Prompt.Prompt
  readonly steps: ReadonlyArray<ModelResponse.ModelResponse>
  readonly usage: Usage.Usage
  readonly text: string
}

/**
 * A stream element: the answer to one call the loop ran, emitted after the step whose response
 * `responseId` asked for it, in call order. `result` is a `ToolResultPart` for a function or custom tool,
 * else the built-in tool's output part (`ShellCallOutputPart`, `ApplyPatchCallOutputPart`,
 * `LocalShellCallOutputPart`). JSON: `{"type":"tool_result","responseId","result":{…}}`.
 *
 * @since 0.1.0
 * @category events
 */
export class ToolResult extends Schema.Class<ToolResult>("@effect-responses/tools/ToolResult")({
  type: Schema.tag("tool_result"),
  responseId: Schema.String,
  result: Part.ToolMessagePart
}) {}

/**
 * A failed `generate`: the model call of step `step` (1-based) failed with `error`, or that step still
 * asked for calls at `maxSteps` (`error` is then an `AiError.ToolError`). It keeps what the steps before
 * gave: `transcript` (the prompt, every assistant message and every tool message of the completed steps,
 * answers of tool calls already run included: continue from it rather than run them again), `steps` (their
 * responses) and `usage` (summed). `retryable` and `retryAfter` are those of `error`.
 *
 * @since 0.2.0
 * @category errors
 */
export class StepFailed extends Schema.TaggedError<StepFailed>("@effect-responses/tools/StepFailed")("StepFailed", {
  step: Schema.Number,
  error: AiError.AiError,
  transcript: Prompt.Prompt,
  steps: Schema.Array(ModelResponse.ModelResponse),
  usage: Usage.Usage
}) {
  /**
   * @since 0.2.0
   */
  get retryable(): boolean {
    return this.error.retryable
  }

  /**
   * @since 0.2.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return this.error.retryAfter
  }

  override get message(): string {
    return `tool loop step ${this.step} failed: ${this.error.message}`
  }
}

/**
 * The last stream element of a loop that ended well: the number of model calls (`steps`), their summed
 * `usage`, the text of the last response (`finalText`) and the whole `transcript` (the prompt and every
 * message the loop appended, to continue the conversation from). JSON:
 * `{"type":"loop_finished","steps","usage":{…},"finalText","transcript":{"messages":[…]}}`.
 *
 * @since 0.1.0
 * @category events
 */
export class LoopFinished extends Schema.Class<LoopFinished>("@effect-responses/tools/LoopFinished")({
  type: Schema.tag("loop_finished"),
  steps: Schema.Number,
  usage: Usage.Usage,
  finalText: Schema.String,
  transcript: Prompt.Prompt
}) {}

/**
 * An element of `stream`: the model's own stream elements, step after step, with the tool results of
 * each step after it, and `LoopFinished` last.
 *
 * @since 0.1.0
 * @category events
 */
export const Event = Schema.Union(StreamPart.StreamPart, ToolResult, LoopFinished)

/**
 * @since 0.1.0
 * @category events
 */
export type Event = typeof Event.Type

/**
 * The default of `maxSteps`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_STEPS = 10

// ---------------------------------------------------------------------------------------------------------
// internal
// ---------------------------------------------------------------------------------------------------------

type AnyOptions = Omit<Options<never>, "toolkit"> & { readonly toolkit: Toolkit.Any }

interface Plan {
  readonly toolkit: Toolkit.Any
  readonly maxSteps: number
  readonly execute: boolean
  readonly executor: ToolExecutor.Options
  readonly call: LanguageModel.CallOptions
  readonly approvals: McpApprovals.Service | undefined
}

const plan = (options: AnyOptions): Effect.Effect<Plan, AiError.InvalidPrompt> => {
  const { concurrency, execute, maxOutputLength, maxSteps, timeout, toolkit, ...callOptions } = options
  const steps = maxSteps ?? DEFAULT_MAX_STEPS
  if (!Number.isInteger(steps) || steps < 1) {
    return Effect.fail(new AiError.InvalidPrompt({ description: `maxSteps must be a positive integer, got ${steps}` }))
  }
  return Effect.map(Effect.serviceOption(McpApprovals.McpApprovals), (approvals) => ({
    toolkit,
    maxSteps: steps,
    execute: execute ?? true,
    executor: { concurrency, timeout, maxOutputLength },
    call: { ...callOptions, tools: toolkit.definitions },
    approvals: Option.getOrUndefined(approvals)
  }))
}

/**
 * A call the loop answers: one it runs, an MCP approval request when an approvals service decides, or a
 * built-in call it could not read (answered with an error, `ToolExecutor.answerUnreadable`).
 */
type AnswerableCall = ToolExecutor.RunnableCall | Part.McpApprovalRequestPart | Part.UnknownPart

/** A call of a response: a client call, or a built-in call the client could not read. */
type StepCall = Part.ClientCallPart | Part.UnknownPart

const nameOf = (call: StepCall): string =>
  call.type === "unknown"
    ? call.kind.replace(/_call$/, "")
    : call.type === "tool_call" || call.type === "custom_tool_call" || call.type === "mcp_approval_request"
    ? call.name
    : call.type.replace(/_call$/, "")

const callIdOf = (call: StepCall): string =>
  call.type === "unknown" ? ToolExecutor.unreadableCallId(call) ?? "" : Part.callIdOf(call)

const describe = (call: StepCall): string => `${nameOf(call)} (${callIdOf(call)})`

/**
 * The calls of a response the client has to answer, in output order: its client calls
 * (`message.clientCalls`), and the built-in calls it could not read (`ToolExecutor.isUnreadableCall`) that
 * the message does not answer itself.
 */
const stepCalls = (response: ModelResponse.ModelResponse): ReadonlyArray<StepCall> => {
  const calls = response.message.clientCalls
  const parts = response.message.parts
  if (!parts.some(ToolExecutor.isUnreadableCall)) return calls
  const answered = new Set<string>()
  for (const part of parts) {
    const id = Part.answeredCallId(part)
    if (id !== undefined) answered.add(id)
  }
  const pendingCalls = new Set<Part.AssistantPart>(calls)
  return parts.filter((part): part is StepCall =>
    pendingCalls.has(part) ||
    (ToolExecutor.isUnreadableCall(part) && !answered.has(ToolExecutor.unreadableCallId(part)!))
  )
}

/**
 * Whether `call` was cut off by the end of an incomplete response: its status is `incomplete`, or the
 * response is `incomplete` and the call is not `completed` (the API closes a call cut by
 * `max_output_tokens` with status `incomplete` or `in_progress` before `response.incomplete`; the Chat
 * Completions decoder gives every part of a `finish_reason: "length"` answer status `incomplete`). Its
 * arguments (or input) are what came before the cut: they may even parse, but they are not the call the
 * model meant.
 */
const isCut = (call: StepCall, response: ModelResponse.ModelResponse): boolean => {
  const status = call.attributes.status
  return status === "incomplete" || (response.status === "incomplete" && status !== "completed")
}

/**
 * The error of a step whose response was cut inside calls: none of the step's calls runs (they were asked
 * for together; an answered call beside an unanswered one would make the next request invalid).
 */
const cutError = (step: number, response: ModelResponse.ModelResponse, cut: ReadonlyArray<StepCall>) => {
  const reason = response.incompleteReason ?? (response.finishReason === "length" ? "max_output_tokens" : "its end")
  const advice = reason === "max_output_tokens"
    ? "raise maxOutputTokens (it counts reasoning tokens too) or ask for a smaller call, and continue from the transcript"
    : "continue from the transcript"
  const first = cut[0]!
  return new AiError.ToolError({
    description: `the response of step ${step} was cut by ${reason} inside the call(s) ${
      cut.map(describe).join(", ")
    }: their arguments are incomplete, so no call of the step ran; ${advice}`,
    toolName: nameOf(first),
    callId: callIdOf(first)
  })
}

/**
 * What to do after a step's response: stop (no calls, `execute: false`, or a call the loop cannot answer),
 * fail (a call cut by the end of an incomplete response, or `maxSteps` reached), or answer the calls.
 */
const pending = (
  plan: Plan,
  step: number,
  response: ModelResponse.ModelResponse
): Effect.Effect<ReadonlyArray<AnswerableCall>, AiError.ToolError> => {
  const calls = stepCalls(response)
  if (calls.length === 0 || !plan.execute) return Effect.succeed([])
  const cut = calls.filter((call) => isCut(call, response))
  if (cut.length > 0) return Effect.fail(cutError(step, response, cut))
  const answerable = calls.filter((call): call is AnswerableCall =>
    call.type === "unknown" || ToolExecutor.isRunnable(call) ||
    (call.type === "mcp_approval_request" && plan.approvals !== undefined)
  )
  // a client tool search, or an MCP approval request without an approvals service: the caller answers
  // them, with the other calls
  if (answerable.length < calls.length) return Effect.succeed([])
  if (step >= plan.maxSteps) {
    const list = calls.map(describe).join(", ")
    return Effect.fail(
      new AiError.ToolError({
        description: `the tool loop reached maxSteps (${plan.maxSteps}) with ${calls.length} tool call(s) still pending: ${list}`
      })
    )
  }
  return Effect.succeed(answerable)
}

/**
 * The answers to a step's calls, in call order: the runnable ones run by `ToolExecutor`, the MCP approval
 * requests decided by the approvals service.
 */
const answer = (plan: Plan, calls: ReadonlyArray<AnswerableCall>): Effect.Effect<ReadonlyArray<Part.ToolMessagePart>> =>
  Effect.gen(function*() {
    const runnable = calls.filter((call): call is ToolExecutor.RunnableCall => call.type !== "unknown" && ToolExecutor.isRunnable(call))
    const requests = calls.filter((call): call is Part.McpApprovalRequestPart => call.type === "mcp_approval_request")
    const results = runnable.length === 0 ? [] : yield* ToolExecutor.executeUnchecked(plan.toolkit, runnable, plan.executor)
    const decisions = requests.length === 0 || plan.approvals === undefined
      ? []
      : yield* McpApprovals.answerWith(plan.approvals, requests)
    let nextResult = 0
    let nextDecision = 0
    return calls.map((call): Part.ToolMessagePart =>
      call.type === "unknown"
        ? ToolExecutor.answerUnreadable(call)
        : call.type === "mcp_approval_request"
        ? decisions[nextDecision++]!
        : results[nextResult++]!
    )
  })

const toolMessage = (results: ReadonlyArray<Part.ToolMessagePart>) => new Message.ToolMessage({ role: "tool", results }, true)

// ---------------------------------------------------------------------------------------------------------
// generate
// ---------------------------------------------------------------------------------------------------------

const generateUnchecked = (
  prompt: Prompt.Prompt,
  options: AnyOptions
): Effect.Effect<Result, StepFailed | AiError.InvalidPrompt, LanguageModel.LanguageModel> =>
  Effect.gen(function*() {
    const loop = yield* plan(options)
    const model = yield* LanguageModel.LanguageModel
    let transcript = prompt
    let usage = Usage.empty
    const steps: Array<ModelResponse.ModelResponse> = []
    for (let step = 1;; step++) {
      const failedAt = (error: AiError.AiError) =>
        new StepFailed({ step, error, transcript, steps: steps.slice(), usage })
      const response = yield* Effect.mapError(model.generate(transcript, loop.call), failedAt)
      steps.push(response)
      usage = Usage.add(usage, response.usage)
      transcript = Prompt.append(transcript, response.message)
      const calls = yield* Effect.mapError(
        pending(loop, step, response),
        // the step is complete (its response is kept), its calls are not run
        (error) => new StepFailed({ step, error, transcript, steps: steps.slice(), usage })
      )
      if (calls.length === 0) return { response, transcript, steps, usage, text: response.text }
      const results = yield* answer(loop, calls)
      transcript = Prompt.append(transcript, toolMessage(results))
    }
  }).pipe(Effect.withSpan("ToolLoop.generate", { attributes: { "gen_ai.operation.name": "tool_loop" } }))

/**
 * Runs the loop with `LanguageModel.generate` (one whole response per step: over the Responses API,
 * `ResponsesLanguageModel` sends each step's request with `stream: false`, so nothing arrives until the
 * step's response is done; `stream` sends `stream: true` and gives the events as they come) and gives the final response,
 * the transcript, every step's response and the summed usage. Fails with `StepFailed` when a model call
 * fails (its `error` is the model's `AiError`), when the response of step `maxSteps` still asks for calls
 * (`error`: `AiError.ToolError`), or when a step's response was cut inside its calls (`status: "incomplete"`,
 * a call not `completed`: `error` is an `AiError.ToolError` naming the reason, e.g. `max_output_tokens`, and
 * the cut calls; none of the step's calls ran), keeping the transcript of the completed steps and of that step; with
 * `AiError.InvalidPrompt` for a `maxSteps` below 1. Tool failures never fail the loop: they go back to the
 * model as error answers. Requires the model and the handlers of the toolkit (none with `execute: false`).
 *
 * @example
 * ```ts
 * const result = yield* ToolLoop.generate(Prompt.user("Fix the failing test"), { toolkit, maxSteps: 20 }).pipe(
 *   Effect.catchTag("StepFailed", (failure) => {
 *     // failure.transcript holds every completed step and the answers of the tools already run
 *     return Effect.fail(failure.error)
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category loops
 */
export const generate: {
  <Tools extends Tool.Any>(
    prompt: Prompt.Prompt,
    options: Options<Tools> & { readonly execute: false }
  ): Effect.Effect<Result, StepFailed | AiError.InvalidPrompt, LanguageModel.LanguageModel>
  <Tools extends Tool.Any>(
    prompt: Prompt.Prompt,
    options: Options<Tools>
  ): Effect.Effect<Result, StepFailed | AiError.InvalidPrompt, LanguageModel.LanguageModel | Tool.HandlersFor<Tools>>
} = <Tools extends Tool.Any>(prompt: Prompt.Prompt, options: Options<Tools>) =>
  generateUnchecked(prompt, options)

// ---------------------------------------------------------------------------------------------------------
// stream
// ---------------------------------------------------------------------------------------------------------

const streamUnchecked = (
  prompt: Prompt.Prompt,
  options: AnyOptions
): Stream.Stream<Event, AiError.AiError, LanguageModel.LanguageModel> =>
  Stream.unwrap(Effect.gen(function*() {
    const loop = yield* plan(options)
    const model = yield* LanguageModel.LanguageModel

    const runStep = (transcript: Prompt.Prompt, step: number, usage: Usage.Usage): Stream.Stream<Event, AiError.AiError> =>
      Stream.suspend(() => {
        // Folded as the elements pass, so the step's message is ready when its stream ends.
        let state = MessageAggregator.empty
        const parts = Stream.mapChunks(model.stream(transcript, loop.call), (chunk) => {
          for (const element of chunk) state = MessageAggregator.step(state, element)
          return chunk
        })
        const next = Stream.unwrap(Effect.suspend(() => afterStep(transcript, step, usage, MessageAggregator.done(state))))
        return Stream.concat(parts, next)
      })

    const afterStep = (
      transcript: Prompt.Prompt,
      step: number,
      usageBefore: Usage.Usage,
      responses: ReadonlyArray<ModelResponse.ModelResponse>
    ): Effect.Effect<Stream.Stream<Event, AiError.AiError>, AiError.AiError> =>
      Effect.gen(function*() {
        const response = responses[responses.length - 1]
        if (response === undefined || response.status === "in_progress") {
          return yield* new AiError.MalformedOutput({
            description: `the model stream of tool loop step ${step} ended without ${
              response === undefined ? "any response" : `finishing response ${response.id}`
            }`
          })
        }
        const usage = Usage.add(usageBefore, response.usage)
        const replayed = Prompt.append(transcript, response.message)
        const calls = yield* pending(loop, step, response)
        if (calls.length === 0) {
          return Stream.make(new LoopFinished({ steps: step, usage, finalText: response.text, transcript: replayed }))
        }
        const results = yield* answer(loop, calls)
        const emitted = Stream.fromIterable(results.map((result) => new ToolResult({ responseId: response.id, result })))
        return Stream.concat(emitted, runStep(Prompt.append(replayed, toolMessage(results)), step + 1, usage))
      })

    return runStep(prompt, 1, Usage.empty)
  })).pipe(Stream.withSpan("ToolLoop.stream", { attributes: { "gen_ai.operation.name": "tool_loop" } }))

/**
 * Runs the loop with `LanguageModel.stream`: emits every element of each step's model stream as it
 * arrives, then a `ToolResult` per call of that step (in call order), then the next step, and a final
 * `LoopFinished`. Each step's stream is folded with `MessageAggregator` as it passes, to build the assistant
 * message replayed in the next step. A step whose stream fails fails the whole stream with the model's
 * `AiError` after the elements already emitted (the consumer has seen every step and tool answer); a step
 * stream that ends without finishing its response fails with `AiError.MalformedOutput`; `maxSteps` reached
 * with calls pending, and a response cut inside its calls (as `generate`: none of them runs), fail with
 * `AiError.ToolError` after the step's elements. Requirements as `generate`.
 *
 * @since 0.1.0
 * @category loops
 */
export const stream: {
  <Tools extends Tool.Any>(
    prompt: Prompt.Prompt,
    options: Options<Tools> & { readonly execute: false }
  ): Stream.Stream<Event, AiError.AiError, LanguageModel.LanguageModel>
  <Tools extends Tool.Any>(
    prompt: Prompt.Prompt,
    options: Options<Tools>
  ): Stream.Stream<Event, AiError.AiError, LanguageModel.LanguageModel | Tool.HandlersFor<Tools>>
} = <Tools extends Tool.Any>(prompt: Prompt.Prompt, options: Options<Tools>) =>
  streamUnchecked(prompt, options)
