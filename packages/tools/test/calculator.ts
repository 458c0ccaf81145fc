/**
 * A scripted calculator session and a fake `LanguageModel` that plays it and records what it was asked.
 *
 * The session mirrors the real recording
 * `fixtures/responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt` (gpt-5.1-codex-max,
 * "(12 + 7) * 3 * 10" with a calculator tool): the same response ids, item ids, call ids, arguments, text,
 * and usage. Encrypted contents are shortened stand-ins; like the recording, the reasoning item's content
 * at `output_item.added` differs from the one at `output_item.done`.
 */
import { Tool, Toolkit } from "@effect-responses/tools"
import { AiError, LanguageModel, Message, ModelResponse, Part, Prompt, StreamPart, Usage } from "@effect-responses/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

// ---------------------------------------------------------------------------------------------------------
// the tool
// ---------------------------------------------------------------------------------------------------------

export class DivisionByZero extends Schema.TaggedError<DivisionByZero>()("DivisionByZero", {
  dividend: Schema.Number
}) {}

export const Calculator = Tool.make("calculator", {
  description: "A minimal calculator for basic arithmetic. Call it once per step.",
  parameters: {
    a: Schema.Number.annotations({ description: "First operand." }),
    b: Schema.Number.annotations({ description: "Second operand." }),
    op: Schema.Literal("add", "subtract", "multiply", "divide").annotations({
      default: "add",
      description: "Arithmetic operation to perform."
    })
  },
  success: Schema.Number,
  failure: DivisionByZero
})

export const MathToolkit = Toolkit.make(Calculator)

export const calculate = ({ a, b, op }: Tool.Parameters<typeof Calculator>): Effect.Effect<number, DivisionByZero> => {
  switch (op) {
    case "add":
      return Effect.succeed(a + b)
    case "subtract":
      return Effect.succeed(a - b)
    case "multiply":
      return Effect.succeed(a * b)
    case "divide":
      return b === 0 ? Effect.fail(new DivisionByZero({ dividend: a })) : Effect.succeed(a / b)
  }
}

export const MathToolkitLive = MathToolkit.toLayer({ calculator: calculate })

// ---------------------------------------------------------------------------------------------------------
// the session
// ---------------------------------------------------------------------------------------------------------

export const MODEL = "gpt-5.1-codex-max"
export const QUESTION = "Use the calculator tool to compute (12 + 7) * 3 * 10, one operation per call."

export const ENCRYPTED_AT_ADDED = "gAAAAABpPDIUph8czEXzDePCV2lJ27wm7TsbCvazrvHSn0yWitN7RGWq8sjrPtfEY-added"
export const ENCRYPTED_AT_DONE = "gAAAAABpPDIVxq3mP0oYvRk7bY2nXzR1c8Ht4J9wLs6uQe5aTgDfKiMvNo2pWr7sBy-done"

export const SUMMARY =
  "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product."

interface Step {
  readonly responseId: string
  readonly usage: Usage.Usage
  readonly finishReason: ModelResponse.FinishReason
  readonly parts: ReadonlyArray<Part.AssistantPart>
  /** Deltas then the emptied completing part, per output index, as the stream decoder emits them. */
  readonly updates: ReadonlyArray<{ readonly outputIndex: number; readonly partial: boolean; readonly part: Part.AssistantPart }>
}

const usage = (inputTokens: number, outputTokens: number) =>
  new Usage.Usage({
    inputTokens,
    cachedInputTokens: 0,
    outputTokens,
    reasoningTokens: 0,
    totalTokens: inputTokens + outputTokens
  })

const payload = (data: string) => new Part.OpaquePayload({ provider: "openai.responses", kind: "encrypted_content", data })

const callStep = (options: {
  readonly outputIndex: number
  readonly itemId: string
  readonly callId: string
  readonly pieces: ReadonlyArray<string>
}) => {
  const call = (args: string, status: string) =>
    new Part.ToolCallPart({
      callId: options.callId,
      name: "calculator",
      arguments: args,
      attributes: { itemId: options.itemId, status }
    })
  return {
    part: call(options.pieces.join(""), "completed"),
    updates: [
      ...options.pieces.map((piece) => ({ outputIndex: options.outputIndex, partial: true, part: call(piece, "in_progress") })),
      { outputIndex: options.outputIndex, partial: false, part: call("", "completed") }
    ]
  }
}

const ARGUMENT_PIECES = (a: string, b: string, op: string) =>
  ['{"', "a", '":', a, ',"', "b", '":', b, ',"', "op", '":"', op, '"}']

const step1Call = callStep({
  outputIndex: 1,
  itemId: "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f",
  callId: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
  pieces: ARGUMENT_PIECES("12", "7", "add")
})

const REASONING_ID = "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9"
const reasoning = (summary: ReadonlyArray<string>, data?: string) =>
  new Part.ReasoningPart({
    summary,
    attributes: { itemId: REASONING_ID },
    ...(data === undefined ? {} : { payload: payload(data) })
  })
const SUMMARY_PIECES = [
  "**Calcul",
  "ating",
  " step",
  "-by",
  "-step",
  " using",
  " calculator",
  "**\n\nI'll",
  " compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product."
]

const step2Call = callStep({
  outputIndex: 0,
  itemId: "fc_01830d662ab3856501693c32165be4819098c08f205f8932ef",
  callId: "call_Q6pW65MUgW9vF59BmItYGos3",
  pieces: ARGUMENT_PIECES("19", "3", "multiply")
})

const step3Call = callStep({
  outputIndex: 0,
  itemId: "fc_01830d662ab3856501693c32173d5081908f2121e1c3ff2901",
  callId: "call_Zl5vIMnD7dVAjgU6FkhmiCZh",
  pieces: ARGUMENT_PIECES("57", "10", "multiply")
})

const MESSAGE_ID = "msg_01830d662ab3856501693c32183a488190a612c410a0a39823"
export const FINAL_TEXT = "The final result is **570**."
const text = (t: string, status: string) => new Part.TextPart({ text: t, attributes: { itemId: MESSAGE_ID, status } })
const TEXT_PIECES = ["The", " final", " result", " is", " **", "570", "**", "."]

export const STEPS: ReadonlyArray<Step> = [
  {
    responseId: "resp_01830d662ab3856501693c321345c88190b0de00f3b9975691",
    usage: usage(134, 28),
    finishReason: "tool_calls",
    parts: [reasoning([SUMMARY], ENCRYPTED_AT_DONE), step1Call.part],
    updates: [
      // output_item.added brings the first encrypted content; the summary then arrives as deltas
      { outputIndex: 0, partial: true, part: reasoning([], ENCRYPTED_AT_ADDED) },
      ...SUMMARY_PIECES.map((piece) => ({ outputIndex: 0, partial: true, part: reasoning([piece]) })),
      { outputIndex: 0, partial: false, part: reasoning([""], ENCRYPTED_AT_DONE) },
      ...step1Call.updates
    ]
  },
  {
    responseId: "resp_01830d662ab3856501693c3215903881909b710d150ff65014",
    usage: usage(221, 26),
    finishReason: "tool_calls",
    parts: [step2Call.part],
    updates: step2Call.updates
  },
  {
    responseId: "resp_01830d662ab3856501693c3216bef88190bf0e034cff24137b",
    usage: usage(260, 26),
    finishReason: "tool_calls",
    parts: [step3Call.part],
    updates: step3Call.updates
  },
  {
    responseId: "resp_01830d662ab3856501693c3217ba4c8190a3ddf6c839d4f12a",
    usage: usage(299, 12),
    finishReason: "stop",
    parts: [text(FINAL_TEXT, "completed")],
    updates: [
      ...TEXT_PIECES.map((piece) => ({ outputIndex: 0, partial: true, part: text(piece, "in_progress") })),
      { outputIndex: 0, partial: false, part: text("", "completed") }
    ]
  }
]

/** The whole response of a step, as `LanguageModel.generate` gives it. */
export const responseOf = (step: Step): ModelResponse.ModelResponse =>
  new ModelResponse.ModelResponse({
    id: step.responseId,
    model: MODEL,
    status: "completed",
    finishReason: step.finishReason,
    usage: step.usage,
    message: new Message.AssistantMessage({ parts: step.parts })
  })

/** The stream of a step, as `LanguageModel.stream` gives it. */
export const elementsOf = (step: Step): ReadonlyArray<StreamPart.StreamPart> => [
  new StreamPart.ResponseStarted({ responseId: step.responseId, model: MODEL }),
  ...step.updates.map((update) => new StreamPart.PartUpdate({ responseId: step.responseId, ...update })),
  new StreamPart.ResponseFinished({
    responseId: step.responseId,
    status: "completed",
    finishReason: step.finishReason,
    usage: step.usage
  })
]

// ---------------------------------------------------------------------------------------------------------
// the fake model
// ---------------------------------------------------------------------------------------------------------

export interface RecordedCall {
  readonly method: "generate" | "stream"
  readonly prompt: Prompt.Prompt
  readonly options: LanguageModel.CallOptions | undefined
}

export interface Fake {
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  /** Every call the model received, in order. */
  readonly calls: Array<RecordedCall>
}

/**
 * A model that answers its n-th call with the n-th entry of the script (a whole response for `generate`, a
 * stream for `stream`) and records every call. Past the end of the script it fails with `InvalidPrompt`.
 */
export const fakeModel = (script: {
  readonly responses?: ReadonlyArray<ModelResponse.ModelResponse>
  readonly streams?: ReadonlyArray<Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError>>
}): Fake => {
  const calls: Array<RecordedCall> = []
  const exhausted = (n: number) => new AiError.InvalidPrompt({ description: `the fake model has no answer for call ${n}` })
  const layer = Layer.succeed(LanguageModel.LanguageModel, {
    generate: (prompt, options) =>
      Effect.suspend(() => {
        calls.push({ method: "generate", prompt, options })
        const response = script.responses?.[calls.length - 1]
        return response === undefined ? Effect.fail(exhausted(calls.length)) : Effect.succeed(response)
      }),
    stream: (prompt, options) =>
      Stream.suspend(() => {
        calls.push({ method: "stream", prompt, options })
        const stream = script.streams?.[calls.length - 1]
        return stream === undefined ? Stream.fail(exhausted(calls.length)) : stream
      })
  })
  return { layer, calls }
}

/** The fake playing the calculator session. */
export const calculatorModel = (): Fake =>
  fakeModel({
    responses: STEPS.map(responseOf),
    streams: STEPS.map((step) => Stream.fromIterable(elementsOf(step)))
  })
