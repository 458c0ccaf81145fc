/**
 * The tool loop: call the model with the toolkit's tools, run the local function calls it asks for, hand
 * the results back, and repeat until a response asks for none.
 *
 * Each step appends to the transcript the assistant message whole (every part in output order, reasoning
 * with its encrypted payload, built-in tool items verbatim), so replaying it gives back the items the
 * server sent; then, when it holds function calls, a tool message with one result per call, in call order.
 * A loop that reaches `maxSteps` model calls with calls still pending fails with `AiError.ToolError`: it
 * never runs forever.
 *
 * With `execute: false` the loop makes one model call and runs nothing: the result's `response` holds the
 * tool calls (`response.message.toolCalls`) and its `transcript` ends with the assistant message, for the
 * caller to run them (e.g. with `ToolExecutor.execute`), append a `ToolMessage` and call again.
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { AiError, LanguageModel, Message, ModelResponse, Part, Prompt, StreamPart, Usage } from "@effect-responses/core"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Tool from "./Tool.js"
import * as ToolExecutor from "./ToolExecutor.js"
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
 * - `concurrency`: tool calls of one step run at once (default `ToolExecutor.DEFAULT_CONCURRENCY`);
 * - `timeout`: the longest a tool call may run before it becomes an error result (default: none);
 * - `execute`: `false` to make one model call and return its tool calls unrun (default `true`).
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
  readonly timeout?: Duration.DurationInput | undefined
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
 * A stream element: the result of one local tool call, emitted after the step whose response
 * `responseId` asked for it, in call order. JSON: `{"type":"tool_result","responseId","result":{…}}`.
 *
 * @since 0.1.0
 * @category events
 */
export class ToolResult extends Schema.Class<ToolResult>("@effect-responses/tools/ToolResult")({
  type: Schema.tag("tool_result"),
  responseId: Schema.String,
  result: Part.ToolResultPart
}) {}

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
}

const plan = (options: AnyOptions): Effect.Effect<Plan, AiError.InvalidPrompt> => {
  const { concurrency, execute, maxSteps, timeout, toolkit, ...callOptions } = options
  const steps = maxSteps ?? DEFAULT_MAX_STEPS
  if (!Number.isInteger(steps) || steps < 1) {
    return Effect.fail(new AiError.InvalidPrompt({ description: `maxSteps must be a positive integer, got ${steps}` }))
  }
  return Effect.succeed({
    toolkit,
    maxSteps: steps,
    execute: execute ?? true,
    executor: { concurrency, timeout },
    call: { ...callOptions, tools: toolkit.definitions }
  })
}

/** What to do after a step's response: stop, or run the calls. */
const pending = (
  plan: Plan,
  step: number,
  response: ModelResponse.ModelResponse
): Effect.Effect<ReadonlyArray<Part.ToolCallPart>, AiError.ToolError> => {
  const calls = response.message.toolCalls
  if (calls.length === 0 || !plan.execute) return Effect.succeed([])
  if (step >= plan.maxSteps) {
    const list = calls.map((call) => `${call.name} (${call.callId})`).join(", ")
    return Effect.fail(
      new AiError.ToolError({
        description: `the tool loop reached maxSteps (${plan.maxSteps}) with ${calls.length} tool call(s) still pending: ${list}`
      })
    )
  }
  return Effect.succeed(calls)
}

const toolMessage = (results: ReadonlyArray<Part.ToolResultPart>) => new Message.ToolMessage({ role: "tool", results }, true)

// ---------------------------------------------------------------------------------------------------------
// generate
// ---------------------------------------------------------------------------------------------------------

const generateUnchecked = (
  prompt: Prompt.Prompt,
  options: AnyOptions
): Effect.Effect<Result, AiError.AiError, LanguageModel.LanguageModel> =>
  Effect.gen(function*() {
    const loop = yield* plan(options)
    const model = yield* LanguageModel.LanguageModel
    let transcript = prompt
    let usage = Usage.empty
    const steps: Array<ModelResponse.ModelResponse> = []
    for (let step = 1;; step++) {
      const response = yield* model.generate(transcript, loop.call)
      steps.push(response)
      usage = Usage.add(usage, response.usage)
      transcript = Prompt.append(transcript, response.message)
      const calls = yield* pending(loop, step, response)
      if (calls.length === 0) return { response, transcript, steps, usage, text: response.text }
      const results = yield* ToolExecutor.executeUnchecked(loop.toolkit, calls, loop.executor)
      transcript = Prompt.append(transcript, toolMessage(results))
    }
  }).pipe(Effect.withSpan("ToolLoop.generate", { attributes: { "gen_ai.operation.name": "tool_loop" } }))

/**
 * Runs the loop with `LanguageModel.generate` (one whole response per step) and gives the final response,
 * the transcript, every step's response and the summed usage. Fails with the model's `AiError`, with
 * `AiError.ToolError` when `maxSteps` calls still end with tool calls, and with `AiError.InvalidPrompt` for
 * a `maxSteps` below 1. Tool failures never fail the loop: they go back to the model as error results.
 * Requires the model and the handlers of the toolkit (none with `execute: false`).
 *
 * @since 0.1.0
 * @category loops
 */
export const generate: {
  <Tools extends Tool.Any>(
    prompt: Prompt.Prompt,
    options: Options<Tools> & { readonly execute: false }
  ): Effect.Effect<Result, AiError.AiError, LanguageModel.LanguageModel>
  <Tools extends Tool.Any>(
    prompt: Prompt.Prompt,
    options: Options<Tools>
  ): Effect.Effect<Result, AiError.AiError, LanguageModel.LanguageModel | Tool.HandlersFor<Tools>>
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
        const results = yield* ToolExecutor.executeUnchecked(loop.toolkit, calls, loop.executor)
        const emitted = Stream.fromIterable(results.map((result) => new ToolResult({ responseId: response.id, result })))
        return Stream.concat(emitted, runStep(Prompt.append(replayed, toolMessage(results)), step + 1, usage))
      })

    return runStep(prompt, 1, Usage.empty)
  })).pipe(Stream.withSpan("ToolLoop.stream", { attributes: { "gen_ai.operation.name": "tool_loop" } }))

/**
 * Runs the loop with `LanguageModel.stream`: emits every element of each step's model stream as it
 * arrives, then a `ToolResult` per tool call of that step (in call order), then the next step, and a final
 * `LoopFinished`. Each step's stream is folded with `MessageAggregator` as it passes, to build the assistant
 * message replayed in the next step. A step whose stream fails fails the whole stream after the elements
 * already emitted; a step stream that ends without finishing its response fails with
 * `AiError.MalformedOutput`. Other failures and requirements as `generate`.
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
