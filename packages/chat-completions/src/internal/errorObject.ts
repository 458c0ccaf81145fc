/**
 * The fields of a Chat Completions error object, shared by the streaming decoder and
 * `ChatCompletionsOutput.fromCompletion`: `{"message", "type", "code", "param"}` (OpenAI, vLLM, OpenRouter,
 * whose `code` is a number), or a bare string.
 *
 * @internal
 */
import { isObject, stringField } from "@effect-responses/wire/Json"

/** @internal */
export interface ErrorFields {
  readonly description: string | undefined
  readonly code: string | undefined
  readonly param: string | undefined
}

/** `message` (or the string itself), `code` (numbers as text) and `param` of an error object. @internal */
export const errorFields = (error: unknown): ErrorFields => {
  const source = isObject(error) ? error : {}
  const rawCode = source.code
  return {
    description: stringField(source, "message") ?? (typeof error === "string" ? error : undefined),
    code: typeof rawCode === "string" ? rawCode : typeof rawCode === "number" ? String(rawCode) : undefined,
    param: stringField(source, "param")
  }
}

/** Whether a field holds an error (anything but absent or `null`). @internal */
export const isError = (error: unknown): boolean => error !== undefined && error !== null
