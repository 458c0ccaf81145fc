/**
 * Unvalidated constructors of the message classes, for request decoders that build one message per input
 * item (the companion of `UnsafePart`): each builds the instance `new X(props)` gives, with the class's
 * prototype and the same own properties in the order of the class fields, so `Equal.equals`, `instanceof`,
 * the Schema encoding and `JSON.stringify` cannot tell them apart, without running the Schema class
 * constructor (which copies its props and walks the class fields for defaults on every call).
 *
 * Unsafe: nothing is checked. The caller gives parts already built (class instances of the right kind); an
 * invalid value gives an instance that fails later, when encoded. Use the classes' own constructors
 * (`new Message.AssistantMessage({ ... })`) everywhere else.
 *
 * @since 0.2.0
 */
import * as Message from "./Message.js"
import type * as Part from "./Part.js"

/**
 * `new Message.AssistantMessage({ parts }, true)`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const assistantMessage = (parts: ReadonlyArray<Part.AssistantPart>): Message.AssistantMessage => {
  const message: { -readonly [K in keyof Message.AssistantMessage]: Message.AssistantMessage[K] } = Object.create(
    Message.AssistantMessage.prototype
  )
  message.role = "assistant"
  message.parts = parts
  return message
}

/**
 * `new Message.ToolMessage({ results }, true)`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const toolMessage = (results: ReadonlyArray<Part.ToolMessagePart>): Message.ToolMessage => {
  const message: { -readonly [K in keyof Message.ToolMessage]: Message.ToolMessage[K] } = Object.create(
    Message.ToolMessage.prototype
  )
  message.role = "tool"
  message.results = results
  return message
}
