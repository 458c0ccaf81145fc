/**
 * Reasoning text carried to the client and back inside a reasoning item's `encrypted_content`.
 *
 * A backend that wants its reasoning back (DeepSeek's thinking mode refuses a turn after a tool call
 * unless the assistant message carries its `reasoning_content`) needs the text again on the next turn,
 * and the gateway keeps no state. Clients that keep no state either return a reasoning item only with an
 * `encrypted_content` when they asked for one (`include: ["reasoning.encrypted_content"]`): the AI SDK
 * with `store: false` drops every reasoning item without it, this project's `ResponsesRequest` skips a
 * reasoning part without its payload. So when a request asks for it, a reasoning item made from the
 * upstream's reasoning text gets `encrypted_content` = `PREFIX` + the base64url (no padding) of the text's
 * UTF-8, and a reasoning item coming back with such a value gives the text again.
 *
 * Nothing is encrypted: the client already has the text (the item's summary), and a client that forges a
 * token only chooses the reasoning it sends back, as it could by editing the summary. A value is read as
 * a token only when it starts with `PREFIX` and the rest is exactly what `encode` writes for some text
 * (canonical base64url of valid UTF-8); any other value, one the gateway did not make (OpenAI's own
 * encrypted reasoning), is left as it is.
 *
 * @internal
 */

/** What starts every token: the project, what it holds, and the format's version. */
export const PREFIX = "effect-responses.reasoning.v1."

/** The `encrypted_content` carrying `text` (the reasoning text, UTF-16 as JavaScript holds it). */
export const encode = (text: string): string => PREFIX + Buffer.from(text, "utf8").toString("base64url")

const UTF8 = new TextDecoder("utf-8", { fatal: true })

/**
 * The reasoning text of an `encrypted_content` the gateway wrote (see the module doc), else `undefined`;
 * a value without the prefix costs one `startsWith`.
 */
export const decode = (encrypted: string): string | undefined => {
  if (!encrypted.startsWith(PREFIX)) return undefined
  const data = encrypted.slice(PREFIX.length)
  // what `Buffer` skips (other characters, padding) or rounds off makes the round trip differ
  const bytes = Buffer.from(data, "base64url")
  if (bytes.length === 0 || bytes.toString("base64url") !== data) return undefined
  try {
    return UTF8.decode(bytes)
  } catch {
    return undefined
  }
}
