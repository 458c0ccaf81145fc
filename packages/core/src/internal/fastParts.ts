/**
 * Constructors of the part classes for the streaming hot path, where every delta builds a part and a
 * `PartUpdate`. `new X(props, true)` skips validation but still copies its props twice and walks the
 * class fields for defaults (about 16 % of the decoder's time on the 5 MB benchmark stream); these build
 * the same instance directly: an object with the class's prototype and the same own properties, in the
 * order of the class fields, as `new X(props)` gives them. `test/fastParts.test.ts` holds them equal to
 * `new X(props)` (`Equal.equals`, `instanceof`, JSON encoding, key order).
 *
 * The caller gives every field already valid: nothing is checked.
 *
 * @internal
 */
import * as Part from "../Part.js"
import * as StreamPart from "../StreamPart.js"

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
 * @internal
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
 * @internal
 */
export const textDelta = (text: string, attributes: Part.Attributes): Part.TextPart =>
  textPart(text, noAnnotations, attributes)

/**
 * `new Part.RefusalPart({ text, attributes }, true)`.
 *
 * @internal
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
 * @internal
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
 * @internal
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
 * `new Part.ToolCallPart({ callId, name, arguments, attributes }, true)`.
 *
 * @internal
 */
export const toolCallPart = (
  callId: string,
  name: string,
  args: string,
  attributes: Part.Attributes
): Part.ToolCallPart => {
  const part = instance(Part.ToolCallPart)
  part.type = "tool_call"
  part.callId = callId
  part.name = name
  part.arguments = args
  part.attributes = attributes
  return part
}

/**
 * `new StreamPart.PartUpdate({ responseId, outputIndex, partial, part }, true)` (no `replace`).
 *
 * @internal
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
