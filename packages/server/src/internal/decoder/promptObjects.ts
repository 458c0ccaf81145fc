/**
 * The prompt's messages and parts as the decoder builds them: object and array literals, the instances the
 * classes' constructors (and `UnsafePart` / `UnsafeMessage`) give (the class's prototype, the same own
 * properties in the order of the class fields), built so that V8 can allocate them where they will live.
 *
 * The prompt of a long conversation lives until its request ends, and V8's young generation copies every
 * object that is alive when it is collected, twice before it reaches the old generation: a 20,000-item
 * request's prompt, built while the decoder leaves about ten times its size of garbage, had each collection
 * of the young generation copy about 2.5 MB (milliseconds of the event loop each). V8 learns per allocation
 * site (an object or array literal) whether what it allocates survives, and once nearly all of it does it
 * allocates that site's objects in the old generation at once (allocation-site pretenuring). Objects made by
 * `Object.create` or a constructor have no such site, so they are always young; and `UnsafePart`'s
 * constructors serve the stream decoders too, whose parts die young, so the sites here are the prompt's own.
 * A literal with `__proto__` costs a prototype change per object (about 0.2 µs): what the young generation no
 * longer copies is worth more.
 *
 * @internal
 */
import { Message, Part } from "@effect-responses/core"

const TEXT = Part.TextPart.prototype
const REFUSAL = Part.RefusalPart.prototype
const REASONING = Part.ReasoningPart.prototype
const TOOL_CALL = Part.ToolCallPart.prototype
const TOOL_RESULT = Part.ToolResultPart.prototype
const USER = Message.UserMessage.prototype
const ASSISTANT = Message.AssistantMessage.prototype
const TOOL = Message.ToolMessage.prototype
const SYSTEM = Message.SystemMessage.prototype

const NO_ANNOTATIONS: ReadonlyArray<Part.Annotation> = []

/** `new Part.TextPart({ text, attributes }, true)`. */
export const textPart = (text: string, attributes: Part.Attributes): Part.TextPart =>
  ({ __proto__: TEXT, type: "text", text, annotations: NO_ANNOTATIONS, attributes }) as unknown as Part.TextPart

/** `new Part.RefusalPart({ text, attributes }, true)`. */
export const refusalPart = (text: string, attributes: Part.Attributes): Part.RefusalPart =>
  ({ __proto__: REFUSAL, type: "refusal", text, attributes }) as unknown as Part.RefusalPart

/** `new Part.ReasoningPart({ summary, attributes }, true)`. */
export const reasoningSummaryPart = (summary: ReadonlyArray<string>, attributes: Part.Attributes): Part.ReasoningPart =>
  ({ __proto__: REASONING, type: "reasoning", summary, attributes }) as unknown as Part.ReasoningPart

/** `new Part.ToolCallPart({ callId, name, arguments, attributes }, true)` (no `namespace`). */
export const toolCallPart = (callId: string, name: string, args: string, attributes: Part.Attributes): Part.ToolCallPart =>
  ({ __proto__: TOOL_CALL, type: "tool_call", callId, name, arguments: args, attributes }) as unknown as Part.ToolCallPart

/** `new Part.ToolResultPart({ callId, name, output }, true)`. */
export const toolResultPart = (callId: string, name: string, output: string): Part.ToolResultPart =>
  ({ __proto__: TOOL_RESULT, type: "tool_result", callId, name, output, isError: false }) as unknown as Part.ToolResultPart

/** `new Message.SystemMessage({ content }, true)`. */
export const systemMessage = (content: string): Message.SystemMessage =>
  ({ __proto__: SYSTEM, role: "system", content }) as unknown as Message.SystemMessage

/** `new Message.UserMessage({ parts }, true)`. */
export const userMessage = (parts: ReadonlyArray<Part.UserPart>): Message.UserMessage =>
  ({ __proto__: USER, role: "user", parts }) as unknown as Message.UserMessage

/** `new Message.AssistantMessage({ parts }, true)`. */
export const assistantMessage = (parts: ReadonlyArray<Part.AssistantPart>): Message.AssistantMessage =>
  ({ __proto__: ASSISTANT, role: "assistant", parts }) as unknown as Message.AssistantMessage

/** `new Message.ToolMessage({ results }, true)`. */
export const toolMessage = (results: ReadonlyArray<Part.ToolMessagePart>): Message.ToolMessage =>
  ({ __proto__: TOOL, role: "tool", results }) as unknown as Message.ToolMessage

/**
 * An exact-size copy of `array`, from an array literal when it is short (the usual one to three parts of a
 * message): the prompt keeps its arrays for the whole request, and an array grown by `push` from empty holds
 * 17 elements' room (152 bytes for one part).
 */
export const copyOf = <A>(array: ReadonlyArray<A>): Array<A> => {
  switch (array.length) {
    case 1:
      return [array[0]!]
    case 2:
      return [array[0]!, array[1]!]
    case 3:
      return [array[0]!, array[1]!, array[2]!]
    default:
      return array.slice()
  }
}
