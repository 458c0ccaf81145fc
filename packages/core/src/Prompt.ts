/**
 * A prompt: the whole conversation sent to the model on every call (the client is stateless, so nothing
 * is kept on the server). JSON encoding: `{"messages":[…]}` with the messages of `Message`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Message from "./Message.js"
import * as Part from "./Part.js"

/**
 * @since 0.1.0
 * @category models
 */
export class Prompt extends Schema.Class<Prompt>("Prompt")({
  messages: Schema.Array(Message.Message)
}) {}

/**
 * A prompt from a list of messages.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (messages: ReadonlyArray<Message.Message>): Prompt => new Prompt({ messages })

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
export const user = (text: string): Prompt => make([userMessage(text)])

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
  new Message.UserMessage({ role: "user", parts: [new Part.TextPart({ text })] }, true)

/**
 * The prompt with `messages` appended, in order.
 *
 * @since 0.1.0
 * @category combinators
 */
export const append = (self: Prompt, ...messages: ReadonlyArray<Message.Message>): Prompt =>
  make([...self.messages, ...messages])

/**
 * The messages of `self` followed by those of `that`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const concat = (self: Prompt, that: Prompt): Prompt => make([...self.messages, ...that.messages])

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
