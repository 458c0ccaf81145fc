/**
 * A message's or a delta's `content` given as a list of parts instead of a string, shared by the streaming
 * decoder and `ChatCompletionsOutput.fromCompletion`. Mistral's reasoning models (Magistral) answer so, in
 * `message.content` and in `delta.content` alike (the `TextChunk` and `ThinkChunk` of its API and clients):
 *
 * ```json
 * [{"type": "thinking", "thinking": [{"type": "text", "text": "…"}]}, {"type": "text", "text": "answer"}]
 * ```
 *
 * A `text` part's `text` is answer text; a `thinking` part's `thinking` (its `text` parts joined, or a
 * string) is reasoning text. Any other part (`reference`, `image_url`…) keeps nothing, and its type is
 * reported to the caller, which warns once per type: never dropped silently.
 *
 * @internal
 */
import { isObject } from "@effect-responses/wire/Json"

/** @internal */
export interface ContentParts {
  /** The text of the `text` parts, joined. */
  readonly text: string
  /** The text of the `thinking` parts, joined. */
  readonly reasoning: string
  /** The types of the parts that kept nothing (`"?"` for a part with no string type), each once. */
  readonly ignored: ReadonlyArray<string>
}

const textOfThinking = (thinking: unknown, ignored: Array<string>): string => {
  if (typeof thinking === "string") return thinking
  if (!Array.isArray(thinking)) return ""
  let text = ""
  for (const part of thinking) {
    if (isObject(part) && part.type === "text" && typeof part.text === "string") text += part.text
    else note(ignored, `thinking.${typeOf(part)}`)
  }
  return text
}

const typeOf = (part: unknown): string => isObject(part) && typeof part.type === "string" ? part.type : "?"

const note = (ignored: Array<string>, type: string): void => {
  if (!ignored.includes(type)) ignored.push(type)
}

/** @internal */
export const contentParts = (parts: ReadonlyArray<unknown>): ContentParts => {
  let text = ""
  let reasoning = ""
  const ignored: Array<string> = []
  for (const part of parts) {
    if (isObject(part) && part.type === "text" && typeof part.text === "string") text += part.text
    else if (isObject(part) && part.type === "thinking") reasoning += textOfThinking(part.thinking, ignored)
    else note(ignored, typeOf(part))
  }
  return { text, reasoning, ignored }
}

/** The warning logged (once per type and response) for a part type that kept nothing. @internal */
export const ignoredWarning = (type: string): string =>
  `a content part of type "${type}" was ignored (only "text" and "thinking" parts are read)`

/**
 * What a JSON value is, for an error naming a field of the wrong type: `a number`, `a boolean`, `a string`,
 * `a list`, `an object` or `null`.
 *
 * @internal
 */
export const jsonTypeOf = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "a list"
    : typeof value === "object"
    ? "an object"
    : `a ${typeof value}`
