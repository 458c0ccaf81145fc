/**
 * A prompt: the whole conversation sent to the model on every call (the client is stateless, so nothing
 * is kept on the server). JSON encoding: `{"messages":[…]}` with the messages of `Message`.
 *
 * @since 0.1.0
 */
import { dual } from "effect/Function"
import * as Schema from "effect/Schema"
import * as Message from "./Message.js"
import * as UnsafePart from "./UnsafePart.js"

/**
 * The conversation: `messages` in order (system, user, assistant, tool).
 *
 * @since 0.1.0
 * @category models
 */
export class Prompt extends Schema.Class<Prompt>("@effect-responses/core/Prompt")({
  messages: Schema.Array(Message.Message)
}) {}

/**
 * What a prompt can be made from: a string (one user message holding it as text), one message, a list of
 * messages, or a prompt (taken as it is).
 *
 * @since 0.2.0
 * @category models
 */
export type Input = string | Message.Message | ReadonlyArray<Message.Message> | Prompt

/**
 * A prompt from a string (one user message), a message, a list of messages, or a prompt (returned as it
 * is).
 *
 * ```ts
 * Prompt.make("What is the capital of France?")
 * Prompt.make([new Message.SystemMessage({ content: "Be brief." }), Prompt.userMessage("Hi")])
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (input: Input): Prompt => {
  if (typeof input === "string") return new Prompt({ messages: [userMessage(input)] }, true)
  if (input instanceof Prompt) return input
  if (isArray(input)) return new Prompt({ messages: input })
  return new Prompt({ messages: [input] })
}

const isArray = (input: Input): input is ReadonlyArray<Message.Message> => Array.isArray(input)

/**
 * The empty prompt.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Prompt = make([])

/**
 * A prompt of one user message holding `text`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const user = (text: string): Prompt => new Prompt({ messages: [userMessage(text)] }, true)

/**
 * A prompt of one system message.
 *
 * @since 0.1.0
 * @category constructors
 */
export const system = (content: string): Prompt => make([new Message.SystemMessage({ content })])

/**
 * A user message holding `text`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const userMessage = (text: string): Message.UserMessage =>
  // Built from values of known shape, so not validated: validating a class that holds classes compiles its
  // validator again on every construction in Effect 3 (about 5 % of a whole short model call).
  new Message.UserMessage({ role: "user", parts: [UnsafePart.textPart(text, [], {})] }, true)

/**
 * The prompt with the messages of `input` appended, in order (`input` as `make` takes it: a string is one
 * user message). Data-first or data-last:
 *
 * ```ts
 * Prompt.append(prompt, response.message)
 * prompt.pipe(Prompt.append("And in Italy?"))
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const append: {
  (input: Input): (self: Prompt) => Prompt
  (self: Prompt, input: Input): Prompt
} = dual(2, (self: Prompt, input: Input): Prompt => new Prompt({ messages: [...self.messages, ...make(input).messages] }))

/**
 * The messages of `self` followed by those of `that`. Data-first or data-last.
 *
 * @since 0.1.0
 * @category combinators
 */
export const concat: {
  (that: Prompt): (self: Prompt) => Prompt
  (self: Prompt, that: Prompt): Prompt
} = dual(2, (self: Prompt, that: Prompt): Prompt => new Prompt({ messages: [...self.messages, ...that.messages] }))

/**
 * Decodes a prompt from its JSON value (the public encoding above). Fails with a `ParseError` naming the
 * path of the first mismatch.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnknown = Schema.decodeUnknown(Prompt)

/**
 * Encodes a prompt to its JSON value.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = Schema.encode(Prompt)
