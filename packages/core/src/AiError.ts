/**
 * The typed errors of a model call. Each has a human `message`, says whether retrying may help
 * (`retryable`) and, where the server said, how long to wait (`retryAfter`). The API key never appears in
 * an error.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * The server answered with an HTTP error status. `type`, `code` and `param` come from OpenAI's error body
 * `{"error":{"message","type","param","code"}}`; `requestId` from the `x-request-id` header; `retryAfter`
 * from `retry-after-ms` / `retry-after`.
 * Retryable for 408, 409, 429 and 5xx, except `insufficient_quota`.
 *
 * @since 0.1.0
 * @category errors
 */
export class HttpError extends Schema.TaggedError<HttpError>("@effect-responses/HttpError")("HttpError", {
  status: Schema.Number,
  description: Schema.String,
  errorType: optional(Schema.String),
  code: optional(Schema.String),
  param: optional(Schema.String),
  requestId: optional(Schema.String),
  retryAfter: optional(Schema.DurationFromMillis)
}) {
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    if (this.code === "insufficient_quota") return false
    return this.status === 408 || this.status === 409 || this.status === 429 || this.status >= 500
  }

  override get message(): string {
    const details = [
      this.errorType,
      this.code,
      this.param === undefined ? undefined : `param ${this.param}`,
      this.requestId === undefined ? undefined : `request ${this.requestId}`
    ].filter((s) => s !== undefined)
    return `HTTP ${this.status}: ${this.description}${details.length > 0 ? ` (${details.join(", ")})` : ""}`
  }
}

/**
 * The request never got an HTTP answer, or the body broke off: connection refused, reset, DNS, timeout.
 * Always retryable.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError
  extends Schema.TaggedError<TransportError>("@effect-responses/TransportError")("TransportError", {
    description: Schema.String,
    url: optional(Schema.String)
  })
{
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    return true
  }
  /**
   * @since 0.1.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return undefined
  }

  override get message(): string {
    return `transport error${this.url === undefined ? "" : ` calling ${this.url}`}: ${this.description}`
  }
}

/**
 * The stream carried an `error` event (Responses streaming, flat `{code, message, param}` or nested
 * `{error: {…}}` shape). Retryable only when the code says the server was overloaded.
 *
 * @since 0.1.0
 * @category errors
 */
export class StreamErrorEvent
  extends Schema.TaggedError<StreamErrorEvent>("@effect-responses/StreamErrorEvent")("StreamErrorEvent", {
    description: Schema.String,
    code: optional(Schema.String),
    param: optional(Schema.String),
    sequenceNumber: optional(Schema.Number)
  })
{
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    return this.code === "server_error" || this.code === "rate_limit_exceeded" || this.code === "server_is_overloaded"
  }
  /**
   * @since 0.1.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return undefined
  }

  override get message(): string {
    return `stream error event${this.code === undefined ? "" : ` ${this.code}`}: ${this.description}`
  }
}

/**
 * The response ended with `response.failed`; `code` and `description` come from `response.error`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseFailed
  extends Schema.TaggedError<ResponseFailed>("@effect-responses/ResponseFailed")("ResponseFailed", {
    responseId: Schema.String,
    description: Schema.String,
    code: optional(Schema.String)
  })
{
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    return this.code === "server_error"
  }
  /**
   * @since 0.1.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return undefined
  }

  override get message(): string {
    return `response ${this.responseId} failed${this.code === undefined ? "" : ` (${this.code})`}: ${this.description}`
  }
}

/**
 * The server sent something this client cannot read: malformed JSON, an event or body that does not match
 * its schema, or a stream that ended without a terminal event. `eventType` and `position` (0-based index of
 * the event in the stream) say where; `excerpt` holds at most 200 characters of the offending input.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedOutput
  extends Schema.TaggedError<MalformedOutput>("@effect-responses/MalformedOutput")("MalformedOutput", {
    description: Schema.String,
    eventType: optional(Schema.String),
    position: optional(Schema.Number),
    excerpt: optional(Schema.String)
  })
{
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    return false
  }
  /**
   * @since 0.1.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return undefined
  }

  override get message(): string {
    const where = [
      this.eventType === undefined ? undefined : `event ${this.eventType}`,
      this.position === undefined ? undefined : `at position ${this.position}`
    ].filter((s) => s !== undefined).join(" ")
    return `malformed output${where === "" ? "" : ` (${where})`}: ${this.description}${
      this.excerpt === undefined ? "" : ` in ${JSON.stringify(this.excerpt)}`
    }`
  }
}

/**
 * The prompt or the options cannot be sent as they are; found locally, before any request.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidPrompt extends Schema.TaggedError<InvalidPrompt>("@effect-responses/InvalidPrompt")("InvalidPrompt", {
  description: Schema.String
}) {
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    return false
  }
  /**
   * @since 0.1.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return undefined
  }

  override get message(): string {
    return `invalid prompt: ${this.description}`
  }
}

/**
 * A tool loop could not go on: it reached its step limit with tool calls still pending, or a tool could
 * not be run at all. Errors the model can correct (bad arguments, unknown tool, handler failure) are never
 * this error: they go back to the model as error results.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolError extends Schema.TaggedError<ToolError>("@effect-responses/ToolError")("ToolError", {
  description: Schema.String,
  toolName: optional(Schema.String),
  callId: optional(Schema.String)
}) {
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    return false
  }
  /**
   * @since 0.1.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return undefined
  }

  override get message(): string {
    return `tool error${this.toolName === undefined ? "" : ` (${this.toolName})`}: ${this.description}`
  }
}

/**
 * Any error of a model call.
 *
 * @since 0.1.0
 * @category errors
 */
export const AiError = Schema.Union(
  HttpError,
  TransportError,
  StreamErrorEvent,
  ResponseFailed,
  MalformedOutput,
  InvalidPrompt,
  ToolError
)

/**
 * @since 0.1.0
 * @category errors
 */
export type AiError = typeof AiError.Type

/**
 * Whether a value is one of the `AiError`s.
 *
 * @since 0.1.0
 * @category guards
 */
export const isAiError = Schema.is(AiError)

/**
 * At most `max` characters of `text` (default 200), with an ellipsis when cut: for error excerpts.
 *
 * @since 0.1.0
 * @category utils
 */
export const excerpt = (text: string, max = 200): string => text.length <= max ? text : `${text.slice(0, max)}…`
