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
import * as ModelResponse from "./ModelResponse.js"
import type * as Part from "./Part.js"
import type * as Usage from "./Usage.js"

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

/**
 * `new ModelResponse.ModelResponse({ id, model, status, finishReason, incompleteReason, usage, message }, true)`
 * (`incompleteReason` only when given): the response an aggregator completes.
 *
 * @since 0.2.0
 * @category constructors
 */
export const modelResponse = (
  id: string,
  model: string,
  status: string,
  finishReason: ModelResponse.FinishReason,
  incompleteReason: string | undefined,
  usage: Usage.Usage,
  message: Message.AssistantMessage
): ModelResponse.ModelResponse => {
  const response: { -readonly [K in keyof ModelResponse.ModelResponse]: ModelResponse.ModelResponse[K] } = Object
    .create(ModelResponse.ModelResponse.prototype)
  response.id = id
  response.model = model
  response.status = status
  response.finishReason = finishReason
  if (incompleteReason !== undefined) response.incompleteReason = incompleteReason
  response.usage = usage
  response.message = message
  return response
}
