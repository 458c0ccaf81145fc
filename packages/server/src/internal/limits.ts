/**
 * Bounds on what one request may cost the gateway: message caps. The JSON nesting bound is checked in
 * `jsonSlices`; bodies are read up to a bound by `HttpTransport.readBounded`, and long CPU work yields to
 * other requests with `Cooperative`, both of `@effect-responses/wire`.
 *
 * @internal
 */
import { AiError } from "@effect-responses/core"

/** The longest message the gateway puts into an answer or a log line, in characters. */
export const MAX_MESSAGE_CHARS = 2000

/**
 * At most `max` characters of `text` (default `MAX_MESSAGE_CHARS`), with how much was cut when cut, counted
 * against the original text also when it was cut before (`AiError.capMessage`).
 */
export const capMessage = (text: string, max = MAX_MESSAGE_CHARS): string => AiError.capMessage(text, max)
