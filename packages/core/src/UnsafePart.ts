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
 * @since 0.2.0
 */
import * as Part from "./Part.js"
import * as StreamPart from "./StreamPart.js"

const noAnnotations: ReadonlyArray<Part.Annotation> = []
const noSummary: ReadonlyArray<string> = []

/**
 * Creates an instance of `Class` without running its constructor. Callers assign every own property the
 * constructor would, in the order of the class fields.
 */
const instance = <A>(Class: { readonly prototype: A }): { -readonly [K in keyof A]: A[K] } =>
  Object.create(Class.prototype as object)

/**
 * `new Part.TextPart({ text, annotations, attributes }, true)`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const textPart = (
  text: string,
  annotations: ReadonlyArray<Part.Annotation>,
  attributes: Part.Attributes
): Part.TextPart => {
  const part = instance(Part.TextPart)
  part.type = "text"
  part.text = text
  part.annotations = annotations
  part.attributes = attributes
  return part
}

/**
 * `new Part.TextPart({ text, annotations: [], attributes }, true)`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const textDelta = (text: string, attributes: Part.Attributes): Part.TextPart =>
  textPart(text, noAnnotations, attributes)

/**
 * `new Part.RefusalPart({ text, attributes }, true)`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const refusalPart = (text: string, attributes: Part.Attributes): Part.RefusalPart => {
  const part = instance(Part.RefusalPart)
  part.type = "refusal"
  part.text = text
  part.attributes = attributes
  return part
}

/**
 * `new Part.ReasoningPart({ summary, attributes }, true)`, the delta of a reasoning summary.
 *
 * @since 0.2.0
 * @category constructors
 */
export const reasoningSummaryPart = (
  summary: ReadonlyArray<string>,
  attributes: Part.Attributes
): Part.ReasoningPart => {
  const part = instance(Part.ReasoningPart)
  part.type = "reasoning"
  part.summary = summary
  part.attributes = attributes
  return part
}

/**
 * `new Part.ReasoningPart({ summary: [], text, attributes }, true)`, the delta of raw reasoning text.
 *
 * @since 0.2.0
 * @category constructors
 */
export const reasoningTextPart = (text: string, attributes: Part.Attributes): Part.ReasoningPart => {
  const part = instance(Part.ReasoningPart)
  part.type = "reasoning"
  part.summary = noSummary
  part.text = text
  part.attributes = attributes
  return part
}

/**
 * `new Part.ToolCallPart({ callId, name, arguments, namespace, attributes }, true)` (`namespace` only when
 * given).
 *
 * @since 0.2.0
 * @category constructors
 */
export const toolCallPart = (
  callId: string,
  name: string,
  args: string,
  attributes: Part.Attributes,
  namespace?: string | undefined
): Part.ToolCallPart => {
  const part = instance(Part.ToolCallPart)
  part.type = "tool_call"
  part.callId = callId
  part.name = name
  part.arguments = args
  if (namespace !== undefined) part.namespace = namespace
  part.attributes = attributes
  return part
}

/**
 * `new Part.CustomToolCallPart({ callId, name, input, namespace, attributes }, true)` (`namespace` only
 * when given): the delta of a custom tool call's input.
 *
 * @since 0.3.0
 * @category constructors
 */
export const customToolCallPart = (
  callId: string,
  name: string,
  input: string,
  attributes: Part.Attributes,
  namespace?: string | undefined
): Part.CustomToolCallPart => {
  const part = instance(Part.CustomToolCallPart)
  part.type = "custom_tool_call"
  part.callId = callId
  part.name = name
  part.input = input
  if (namespace !== undefined) part.namespace = namespace
  part.attributes = attributes
  return part
}

/**
 * `new StreamPart.PartUpdate({ responseId, outputIndex, partial, part }, true)` (no `replace`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const partUpdate = (
  responseId: string,
  outputIndex: number,
  partial: boolean,
  part: Part.AssistantPart
): StreamPart.PartUpdate => {
  const update = instance(StreamPart.PartUpdate)
  update.type = "part"
  update.responseId = responseId
  update.outputIndex = outputIndex
  update.partial = partial
  update.part = part
  return update
}
