/**
 * Unvalidated constructors of the part classes, for decoders on a streaming hot path where every delta
 * builds a part and a `PartUpdate` (in the spirit of `@effect/ai`'s `Response.makePart`).
 *
 * `new X(props, true)` skips validation but still copies its props twice and walks the class fields for
 * defaults (about 16 % of a decoder's time on a 5 MB stream); these build the same instance directly: an
 * object with the class's prototype and the same own properties, in the order of the class fields, as
 * `new X(props)` gives them, so `Equal.equals`, `instanceof`, the Schema encoding and `JSON.stringify` (key
 * order included) cannot tell them apart.
 *
 * Unsafe: nothing is checked. The caller gives every field already valid (a `Part.Attributes` value, a
 * non-negative integer output index, ...); an invalid value gives an instance that fails later, when encoded.
 * Use the classes' own constructors (`new Part.TextPart({ ... })`) everywhere else.
 *
 * @since 0.1.0
 */
import type * as ModelResponse from "./ModelResponse.js"
import * as Part from "./Part.js"
import * as StreamPart from "./StreamPart.js"
import * as Usage from "./Usage.js"

const noAnnotations: ReadonlyArray<Part.Annotation> = []
const noSummary: ReadonlyArray<string> = []

type Mutable<A> = { -readonly [K in keyof A]: A[K] }

/**
 * Creates an instance of `Class` without running its constructor. Callers assign every own property the
 * constructor would, in the order of the class fields.
 */
const instance = <A>(Class: { readonly prototype: A }): Mutable<A> => Object.create(Class.prototype as object)

/**
 * A constructor of `Class`'s instances that runs none of the class's code: `init` (a `function`, whose
 * `this` is the new instance) assigns every own property the class constructor would, in the order of the
 * class fields. For the parts built once per delta: `new` on a function of its own gives V8 one object
 * layout per kind of part, allocated whole, where `Object.create` and one property added at a time went
 * through the runtime (the decoder + aggregator on the recorded 195 KB stream: 4-6 % less CPU with the
 * decoder's direct field reads, packages/bench/RESULTS.md, Dec 3 2026).
 */
const constructorOf = <A, Args extends ReadonlyArray<unknown>>(
  Class: { readonly prototype: A },
  init: (this: Mutable<A>, ...args: Args) => void
): new(...args: Args) => A => {
  init.prototype = Class.prototype
  return init as unknown as new(...args: Args) => A
}

const TextPart = constructorOf(
  Part.TextPart,
  function(text: string, annotations: ReadonlyArray<Part.Annotation>, attributes: Part.Attributes) {
    this.type = "text"
    this.text = text
    this.annotations = annotations
    this.attributes = attributes
  }
)

const RefusalPart = constructorOf(Part.RefusalPart, function(text: string, attributes: Part.Attributes) {
  this.type = "refusal"
  this.text = text
  this.attributes = attributes
})

const ReasoningSummaryPart = constructorOf(
  Part.ReasoningPart,
  function(summary: ReadonlyArray<string>, attributes: Part.Attributes) {
    this.type = "reasoning"
    this.summary = summary
    this.attributes = attributes
  }
)

const ReasoningTextPart = constructorOf(Part.ReasoningPart, function(text: string, attributes: Part.Attributes) {
  this.type = "reasoning"
  this.summary = noSummary
  this.text = text
  this.attributes = attributes
})

const ReasoningPart = constructorOf(
  Part.ReasoningPart,
  function(
    summary: ReadonlyArray<string>,
    text: string | undefined,
    payload: Part.OpaquePayload | undefined,
    attributes: Part.Attributes
  ) {
    this.type = "reasoning"
    this.summary = summary
    if (text !== undefined) this.text = text
    if (payload !== undefined) this.payload = payload
    this.attributes = attributes
  }
)

const OpaquePayload = constructorOf(Part.OpaquePayload, function(provider: string, kind: string, data: string) {
  this.provider = provider
  this.kind = kind
  this.data = data
})

const ToolCallPart = constructorOf(
  Part.ToolCallPart,
  function(
    callId: string,
    name: string,
    args: string,
    attributes: Part.Attributes,
    namespace: string | undefined,
    payload: Part.OpaquePayload | undefined
  ) {
    this.type = "tool_call"
    this.callId = callId
    this.name = name
    this.arguments = args
    if (namespace !== undefined) this.namespace = namespace
    if (payload !== undefined) this.payload = payload
    this.attributes = attributes
  }
)

const CustomToolCallPart = constructorOf(
  Part.CustomToolCallPart,
  function(
    callId: string,
    name: string,
    input: string,
    attributes: Part.Attributes,
    namespace: string | undefined,
    payload: Part.OpaquePayload | undefined
  ) {
    this.type = "custom_tool_call"
    this.callId = callId
    this.name = name
    this.input = input
    if (namespace !== undefined) this.namespace = namespace
    if (payload !== undefined) this.payload = payload
    this.attributes = attributes
  }
)

const ReplacingUpdate = constructorOf(
  StreamPart.PartUpdate,
  function(responseId: string, outputIndex: number, part: Part.AssistantPart) {
    this.type = "part"
    this.responseId = responseId
    this.outputIndex = outputIndex
    this.partial = false
    this.replace = true
    this.part = part
  }
)

const ContentPartUpdate = constructorOf(
  StreamPart.PartUpdate,
  function(
    responseId: string,
    outputIndex: number,
    contentIndex: number,
    partial: boolean,
    replace: boolean,
    part: Part.AssistantPart
  ) {
    this.type = "part"
    this.responseId = responseId
    this.outputIndex = outputIndex
    this.contentIndex = contentIndex
    this.partial = partial
    if (replace) this.replace = true
    this.part = part
  }
)

const ResponseStarted = constructorOf(StreamPart.ResponseStarted, function(responseId: string, model: string) {
  this.type = "response_started"
  this.responseId = responseId
  this.model = model
})

const ResponseFinished = constructorOf(
  StreamPart.ResponseFinished,
  function(
    responseId: string,
    status: string,
    finishReason: ModelResponse.FinishReason,
    incompleteReason: string | undefined,
    usage: Usage.Usage
  ) {
    this.type = "response_finished"
    this.responseId = responseId
    this.status = status
    this.finishReason = finishReason
    if (incompleteReason !== undefined) this.incompleteReason = incompleteReason
    this.usage = usage
  }
)

const UsageOf = constructorOf(
  Usage.Usage,
  function(
    inputTokens: number,
    cachedInputTokens: number,
    outputTokens: number,
    reasoningTokens: number,
    totalTokens: number
  ) {
    this.inputTokens = inputTokens
    this.cachedInputTokens = cachedInputTokens
    this.outputTokens = outputTokens
    this.reasoningTokens = reasoningTokens
    this.totalTokens = totalTokens
  }
)

const PartUpdate = constructorOf(
  StreamPart.PartUpdate,
  function(responseId: string, outputIndex: number, partial: boolean, part: Part.AssistantPart) {
    this.type = "part"
    this.responseId = responseId
    this.outputIndex = outputIndex
    this.partial = partial
    this.part = part
  }
)

/**
 * `new Part.TextPart({ text, annotations, attributes }, true)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const textPart = (
  text: string,
  annotations: ReadonlyArray<Part.Annotation>,
  attributes: Part.Attributes
): Part.TextPart => new TextPart(text, annotations, attributes)

/**
 * `new Part.TextPart({ text, annotations: [], attributes }, true)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const textDelta = (text: string, attributes: Part.Attributes): Part.TextPart =>
  textPart(text, noAnnotations, attributes)

/**
 * `new Part.RefusalPart({ text, attributes }, true)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const refusalPart = (text: string, attributes: Part.Attributes): Part.RefusalPart =>
  new RefusalPart(text, attributes)

/**
 * `new Part.ReasoningPart({ summary, attributes }, true)`, the delta of a reasoning summary.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reasoningSummaryPart = (
  summary: ReadonlyArray<string>,
  attributes: Part.Attributes
): Part.ReasoningPart => new ReasoningSummaryPart(summary, attributes)

/**
 * `new Part.ReasoningPart({ summary: [], text, attributes }, true)`, the delta of raw reasoning text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reasoningTextPart = (text: string, attributes: Part.Attributes): Part.ReasoningPart =>
  new ReasoningTextPart(text, attributes)

/**
 * `new Part.ReasoningPart({ summary, text, payload, attributes }, true)` (`text` and `payload` only when
 * given): a complete reasoning part.
 *
 * @since 0.2.0
 * @category constructors
 */
export const reasoningPart = (
  summary: ReadonlyArray<string>,
  text: string | undefined,
  payload: Part.OpaquePayload | undefined,
  attributes: Part.Attributes
): Part.ReasoningPart => new ReasoningPart(summary, text, payload, attributes)

/**
 * `new Part.OpaquePayload({ provider, kind, data }, true)`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const opaquePayload = (provider: string, kind: string, data: string): Part.OpaquePayload =>
  new OpaquePayload(provider, kind, data)

/**
 * `new Part.ToolCallPart({ callId, name, arguments, namespace, payload, attributes }, true)` (`namespace`
 * and `payload` only when given; `payload` since 0.2.0).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolCallPart = (
  callId: string,
  name: string,
  args: string,
  attributes: Part.Attributes,
  namespace?: string | undefined,
  payload?: Part.OpaquePayload | undefined
): Part.ToolCallPart => new ToolCallPart(callId, name, args, attributes, namespace, payload)

/**
 * `new Part.CustomToolCallPart({ callId, name, input, namespace, payload, attributes }, true)` (`namespace`
 * and `payload` only when given): the delta of a custom tool call's input, or the complete call.
 *
 * @since 0.2.0
 * @category constructors
 */
export const customToolCallPart = (
  callId: string,
  name: string,
  input: string,
  attributes: Part.Attributes,
  namespace?: string | undefined,
  payload?: Part.OpaquePayload | undefined
): Part.CustomToolCallPart => new CustomToolCallPart(callId, name, input, attributes, namespace, payload)

/**
 * `new StreamPart.PartUpdate({ responseId, outputIndex, partial, part }, true)` (no `replace`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const partUpdate = (
  responseId: string,
  outputIndex: number,
  partial: boolean,
  part: Part.AssistantPart
): StreamPart.PartUpdate => new PartUpdate(responseId, outputIndex, partial, part)

/**
 * `new StreamPart.PartUpdate({ responseId, outputIndex, partial: false, replace: true, part }, true)`: a
 * complete part that replaces its slot.
 *
 * @since 0.2.0
 * @category constructors
 */
export const replacingUpdate = (
  responseId: string,
  outputIndex: number,
  part: Part.AssistantPart
): StreamPart.PartUpdate => new ReplacingUpdate(responseId, outputIndex, part)

/**
 * An update of content part `contentIndex` of the message item at `outputIndex`:
 * `new StreamPart.PartUpdate({ responseId, outputIndex, contentIndex, partial, replace, part }, true)`, or,
 * for content index 0, `partUpdate` / `replacingUpdate` (no `contentIndex` field: absent means 0, so the
 * first content part's updates are the same elements as before content indices existed). `replace: true`
 * requires `partial: false`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const contentPartUpdate = (
  responseId: string,
  outputIndex: number,
  contentIndex: number,
  partial: boolean,
  replace: boolean,
  part: Part.AssistantPart
): StreamPart.PartUpdate =>
  contentIndex === 0
    ? replace ? new ReplacingUpdate(responseId, outputIndex, part) : new PartUpdate(responseId, outputIndex, partial, part)
    : new ContentPartUpdate(responseId, outputIndex, contentIndex, partial, replace, part)

/**
 * `new StreamPart.ResponseStarted({ responseId, model }, true)`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const responseStarted = (responseId: string, model: string): StreamPart.ResponseStarted =>
  new ResponseStarted(responseId, model)

/**
 * `new StreamPart.ResponseFinished({ responseId, status, finishReason, incompleteReason, usage }, true)`
 * (`incompleteReason` only when given).
 *
 * @since 0.2.0
 * @category constructors
 */
export const responseFinished = (
  responseId: string,
  status: string,
  finishReason: ModelResponse.FinishReason,
  incompleteReason: string | undefined,
  usage: Usage.Usage
): StreamPart.ResponseFinished => new ResponseFinished(responseId, status, finishReason, incompleteReason, usage)

/**
 * `new Usage.Usage({ inputTokens, cachedInputTokens, outputTokens, reasoningTokens, totalTokens }, true)`:
 * token counts, already non-negative numbers.
 *
 * @since 0.2.0
 * @category constructors
 */
export const usage = (
  inputTokens: number,
  cachedInputTokens: number,
  outputTokens: number,
  reasoningTokens: number,
  totalTokens: number
): Usage.Usage => new UsageOf(inputTokens, cachedInputTokens, outputTokens, reasoningTokens, totalTokens)

/**
 * `new Part.ToolResultPart({ callId, name, output }, true)`: a result that is not an error (`isError`
 * `false`), without `kind`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const toolResultPart = (callId: string, name: string, output: string): Part.ToolResultPart => {
  const part = instance(Part.ToolResultPart)
  part.type = "tool_result"
  part.callId = callId
  part.name = name
  part.output = output
  part.isError = false
  return part
}
