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
 * @since 0.1.0
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
 * @since 0.1.0
 * @category constructors
 */
export const reasoningSummaryPart = (
  summary: ReadonlyArray<string>,
  attributes: Part.Attributes
): Part.ReasoningPart => reasoningPart(summary, undefined, attributes)

/**
 * `new Part.ReasoningPart({ summary: [], text, attributes }, true)`, the delta of raw reasoning text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reasoningTextPart = (text: string, attributes: Part.Attributes): Part.ReasoningPart =>
  reasoningPart(noSummary, text, attributes)

/** A reasoning part of a summary delta (`text` absent) or of a raw text delta. */
const reasoningPart = (
  summary: ReadonlyArray<string>,
  text: string | undefined,
  attributes: Part.Attributes
): Part.ReasoningPart => {
  const part = instance(Part.ReasoningPart)
  part.type = "reasoning"
  part.summary = summary
  if (text !== undefined) part.text = text
  part.attributes = attributes
  return part
}

/**
 * `new Part.ToolCallPart({ callId, name, arguments, namespace, attributes }, true)` (`namespace` only when
 * given).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolCallPart = (
  callId: string,
  name: string,
  args: string,
  attributes: Part.Attributes,
  namespace?: string | undefined
): Part.ToolCallPart => callPart(Part.ToolCallPart, "tool_call", "arguments", callId, name, args, attributes, namespace)

/**
 * `new Part.CustomToolCallPart({ callId, name, input, namespace, attributes }, true)` (`namespace` only
 * when given): the delta of a custom tool call's input.
 *
 * @since 0.2.0
 * @category constructors
 */
export const customToolCallPart = (
  callId: string,
  name: string,
  input: string,
  attributes: Part.Attributes,
  namespace?: string | undefined
): Part.CustomToolCallPart =>
  callPart(Part.CustomToolCallPart, "custom_tool_call", "input", callId, name, input, attributes, namespace)

/**
 * A function or custom tool call part: the two have the same fields but for the name of the one that holds
 * what the model wrote (`arguments`, `input`).
 */
const callPart = <P extends Part.ToolCallPart | Part.CustomToolCallPart>(
  Class: { readonly prototype: P },
  type: P["type"],
  content: "arguments" | "input",
  callId: string,
  name: string,
  value: string,
  attributes: Part.Attributes,
  namespace: string | undefined
): P => {
  const part: { [key: string]: unknown } = Object.create(Class.prototype as object)
  part.type = type
  part.callId = callId
  part.name = name
  part[content] = value
  if (namespace !== undefined) part.namespace = namespace
  part.attributes = attributes
  return part as unknown as P
}

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
): StreamPart.PartUpdate => {
  const update = instance(StreamPart.PartUpdate)
  update.type = "part"
  update.responseId = responseId
  update.outputIndex = outputIndex
  update.partial = partial
  update.part = part
  return update
}

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
