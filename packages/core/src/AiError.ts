/**
 * The typed errors of a model call. Each has a human `message`, says whether retrying may help
 * (`retryable`) and, where the server said, how long to wait (`retryAfter`). The API key never appears in
 * an error.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * The server answered with an HTTP error status. `type`, `code` and `param` come from OpenAI's error body
 * `{"error":{"message","type","param","code"}}`; `requestId` from the `x-request-id` header; `retryAfter`
 * from `retry-after-ms` / `retry-after`; `shouldRetry` (since 0.2.0) from the `x-should-retry` header
 * (`true` / `false`), which the OpenAI SDKs honour and the gateway sends (`false` for an upstream redirect).
 * Retryable as `shouldRetry` says when the server said; else for 408, 409, 429 and 5xx, except
 * `insufficient_quota`.
 *
 * @since 0.1.0
 * @category errors
 */
export class HttpError extends Schema.TaggedError<HttpError>("@effect-responses/core/HttpError")("HttpError", {
  status: Schema.Number,
  description: Schema.String,
  errorType: optional(Schema.String),
  code: optional(Schema.String),
  param: optional(Schema.String),
  requestId: optional(Schema.String),
  retryAfter: optional(Schema.DurationFromMillis),
  shouldRetry: optional(Schema.Boolean)
}) {
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    if (this.shouldRetry !== undefined) return this.shouldRetry
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
 * `timeout` says which bound of the transport passed, when one did: `headers` (no response headers in
 * time) or `idle` (the body went silent for too long between two chunks; in an event stream, comments
 * such as keep-alive pings count as silence). `bytesReceived` is set when the
 * failure came while reading a response body: how many bytes of it had arrived. `closedBeforeResponse`
 * (since 0.2.0) is `true` when the server closed or reset the connection after the request was written on
 * it and before any response: the server may have received the request, and acted on it (a server that
 * reads a request, then crashes, looks exactly like one that closed an idle kept-alive connection as the
 * request went out), so it was not unreachable, and sending the request again may run it twice.
 *
 * Retryable until the first byte of the body: a request whose answer has begun is not sent again (the
 * model has started generating, and a second request is a second, billed answer), so a body that breaks
 * off or stalls after its first byte is not retryable, and what arrived before it is kept by the caller.
 * A `closedBeforeResponse` error is retryable: a retry policy that allows retries (the clients' default,
 * as the OpenAI SDKs retry connection errors) accepts that the server may get the request twice; the
 * transport never sends a request again outside that policy.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError
  extends Schema.TaggedError<TransportError>("@effect-responses/core/TransportError")("TransportError", {
    description: Schema.String,
    url: optional(Schema.String),
    timeout: optional(Schema.Literal("headers", "idle")),
    bytesReceived: optional(Schema.Number),
    closedBeforeResponse: optional(Schema.Boolean)
  })
{
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    return this.bytesReceived === undefined || this.bytesReceived === 0
  }
  /**
   * @since 0.1.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return undefined
  }

  override get message(): string {
    const received = this.bytesReceived === undefined || this.bytesReceived === 0
      ? ""
      : ` (after ${this.bytesReceived} ${this.bytesReceived === 1 ? "byte" : "bytes"} of the body)`
    return `transport error${this.url === undefined ? "" : ` calling ${this.url}`}: ${this.description}${received}`
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
  extends Schema.TaggedError<StreamErrorEvent>("@effect-responses/core/StreamErrorEvent")("StreamErrorEvent", {
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
 * The response ended with `response.failed`; `code` and `description` come from `response.error`. Also a
 * Chat Completions answer that failed inside an HTTP 200 body (`finish_reason: "error"`, or an error object
 * as the body, when `responseId` is `""`).
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseFailed
  extends Schema.TaggedError<ResponseFailed>("@effect-responses/core/ResponseFailed")("ResponseFailed", {
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
    const response = this.responseId === "" ? "response" : `response ${this.responseId}`
    return `${response} failed${this.code === undefined ? "" : ` (${this.code})`}: ${this.description}`
  }
}

/**
 * The server sent something this client cannot read: malformed JSON, an event or body that does not match
 * its schema, or an SSE event larger than the decoder's bound. `eventType` and `position` (0-based index of
 * the event in the stream) say where, and `line` (1-based line of the input where the event's data starts)
 * when the decoder read the input as text; `excerpt` holds at most 200 characters of the offending input.
 * A stream that merely stops early is a `TruncatedStream`.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedOutput
  extends Schema.TaggedError<MalformedOutput>("@effect-responses/core/MalformedOutput")("MalformedOutput", {
    description: Schema.String,
    eventType: optional(Schema.String),
    position: optional(Schema.Number),
    excerpt: optional(Schema.String),
    line: optional(Schema.Number)
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
      this.position === undefined ? undefined : `at position ${this.position}`,
      this.line === undefined ? undefined : `line ${this.line}`
    ].filter((s) => s !== undefined).join(" ")
    return `malformed output${where === "" ? "" : ` (${where})`}: ${this.description}${
      this.excerpt === undefined ? "" : ` in ${JSON.stringify(this.excerpt)}`
    }`
  }
}

/**
 * A stream ended without a terminal event (`response.completed`, `response.incomplete`, `response.failed`
 * or `error`; for Chat Completions a `finish_reason` or `[DONE]`): the connection or the capture was cut
 * short. `responseId` names the response left open (absent when the stream ended before any
 * `response.created`, or before any chunk of a chat completion); `position` is the number of events read.
 *
 * Retryable only when no response had begun (no `responseId`: an empty body, or one with no event of an
 * answer), like a `TransportError` before the first byte. Once a response began it is not retryable: the
 * model has started its answer (the parts that arrived are kept by the caller), and a second request would
 * be a second, billed answer. The clients never send a request again themselves once its response body
 * is being read; `retryable` tells a caller's own retry policy (e.g. `ResponsesClient.retrySchedule`)
 * whether it may.
 *
 * @since 0.1.0
 * @category errors
 */
export class TruncatedStream
  extends Schema.TaggedError<TruncatedStream>("@effect-responses/core/TruncatedStream")("TruncatedStream", {
    description: Schema.String,
    responseId: optional(Schema.String),
    position: optional(Schema.Number)
  })
{
  /**
   * @since 0.1.0
   */
  get retryable(): boolean {
    return this.responseId === undefined
  }
  /**
   * @since 0.1.0
   */
  get retryAfter(): Duration.Duration | undefined {
    return undefined
  }

  override get message(): string {
    return `truncated stream${this.responseId === undefined ? "" : ` (response ${this.responseId})`}${
      this.position === undefined ? "" : ` after ${this.position} ${this.position === 1 ? "event" : "events"}`
    }: ${this.description}`
  }
}

/**
 * The prompt or the options cannot be sent as they are; found locally, before any request. `option`, when
 * set, names the call option at fault (`responseFormat`, `toolChoice`, `tools`), so that a server in front
 * (the gateway) can name the request parameter; absent, the prompt.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidPrompt extends Schema.TaggedError<InvalidPrompt>("@effect-responses/core/InvalidPrompt")("InvalidPrompt", {
  description: Schema.String,
  option: Schema.optional(Schema.Literal("responseFormat", "toolChoice", "tools"))
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
export class ToolError extends Schema.TaggedError<ToolError>("@effect-responses/core/ToolError")("ToolError", {
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
 * A structured-output call did not give a value of the requested Schema: the model refused
 * (`reason: "refusal"`, the refusal text in `description`), the response stopped early (`"incomplete"`:
 * output token limit or content filter), it holds no text (`"missing"`), or its final text is not JSON or
 * does not decode with the Schema (`"mismatch"`: `description` names the path of the first mismatch,
 * `excerpt` holds at most 200 characters of the text). Not retryable.
 *
 * @since 0.1.0
 * @category errors
 */
export class StructuredOutputError
  extends Schema.TaggedError<StructuredOutputError>("@effect-responses/core/StructuredOutputError")(
    "StructuredOutputError",
    {
      reason: Schema.Literal("refusal", "incomplete", "missing", "mismatch"),
      description: Schema.String,
      responseId: optional(Schema.String),
      excerpt: optional(Schema.String)
    }
  )
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
    return `structured output ${this.reason}${this.responseId === undefined ? "" : ` (response ${this.responseId})`}: ${
      this.description
    }${this.excerpt === undefined ? "" : ` in ${JSON.stringify(this.excerpt)}`}`
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
  TruncatedStream,
  InvalidPrompt,
  ToolError,
  StructuredOutputError
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
 * The first `max` characters (UTF-16 code units) of `text`, one fewer when the last of them is a high
 * surrogate: a cut never leaves half of a surrogate pair (`😀`, two code units) at the end of what it keeps,
 * which a strict client cannot encode (Python's `str.encode`) and a log viewer shows as garbage. `text`
 * itself when it is at most `max` characters long. Every length cap on text a user or model sees
 * (`excerpt`, `capMessage`, the gateway's and the tools' caps) cuts through it.
 *
 * @since 0.2.0
 * @category utils
 */
export const cutText = (text: string, max: number): string => {
  if (text.length <= max) return text
  const end = max > 0 && isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max
  return text.slice(0, Math.max(end, 0))
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/**
 * At most `max` characters of `text` (default 200), with an ellipsis when cut (never inside a surrogate
 * pair, `cutText`): for error excerpts.
 *
 * @since 0.1.0
 * @category utils
 */
export const excerpt = (text: string, max = 200): string => text.length <= max ? text : `${cutText(text, max)}…`

/**
 * The longest server-provided message an error keeps (characters; longer ones are cut with an ellipsis):
 * 2,000.
 *
 * @since 0.2.0
 * @category constants
 */
export const MAX_MESSAGE = 2000

/** The mark of a cut (`capMessage`), anywhere in a text. */
const CUT_MARK = /… \((\d+) more characters\)/g

const cutMark = (count: number): string => `… (${count} more characters)`

/**
 * At most `max` characters of `text` (default `MAX_MESSAGE`), then `… (N more characters)` when cut, `N`
 * counted against the original text. A text that already holds marks of such cuts (a message cut once,
 * then put after a prefix, or before details such as `HttpError.message`'s `(type, code)`, then cut again)
 * is measured without them: each mark stands for the characters it counts, where it is. When the text
 * besides its marks is longer than `max`, its first `max` characters are kept with the marks among them,
 * as they are, and one mark at the cut counts everything after it: the characters cut and the counts of the
 * marks cut with them. A cut never falls inside a mark. So a message is capped once, whatever the depth: a
 * 3,000-character server message is 2,000 characters and `… (1000 more characters)`; `"the upstream
 * failed: "` before it makes it `… (1021 more characters)`, and `HTTP 500: ` before it and ` (server_error,
 * boom)` after it `… (1031 more characters)`, not a count of the second cut alone; a prefix and details
 * around a message cut shorter than `max` are kept around its mark, the details cut with a mark of their
 * own, and that text capped again at the same `max` is unchanged. An earlier cut is known by its mark's
 * words alone, so a text that itself holds such words has their count added to its own. A text of at most
 * `max` characters besides its marks is returned as it is. A cut that would split a surrogate pair keeps
 * one character fewer (`cutText`), and the mark counts that character too.
 *
 * @since 0.2.0
 * @category utils
 */
export const capMessage = (text: string, max: number = MAX_MESSAGE): string => {
  if (text.length <= max) return text
  // the marks already in the text, and how many characters it holds besides them
  const marks: Array<{ readonly start: number; readonly end: number; readonly count: number }> = []
  let visible = text.length
  CUT_MARK.lastIndex = 0
  for (let match = CUT_MARK.exec(text); match !== null; match = CUT_MARK.exec(text)) {
    marks.push({ start: match.index, end: match.index + match[0].length, count: Number(match[1]) })
    visible -= match[0].length
  }
  if (visible <= max) return text
  // the text between marks, piece by piece, until the piece where `max` characters are reached
  let budget = max
  let at = 0
  for (let index = 0;; index++) {
    const mark = marks[index]
    const piece = text.slice(at, mark === undefined ? text.length : mark.start)
    if (piece.length >= budget) {
      const kept = cutText(piece, budget)
      let count = visible - (max - budget) - kept.length
      for (let later = index; later < marks.length; later++) count += marks[later]!.count
      return `${text.slice(0, at)}${kept}${cutMark(count)}`
    }
    // a piece shorter than what is left, so not the last one (the text besides its marks is over `max`)
    budget -= piece.length
    at = mark!.end
  }
}

/**
 * The value of the first `"message": "…"` member in a JSON text cut short (an error body read up to a
 * bound), when its string is whole in it: the message of `{"error":{"message":…}}` found before the cut.
 */
const messageInPrefix = (text: string): string | undefined => {
  const match = /"message"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(text)
  if (match === null) return undefined
  try {
    const value: unknown = JSON.parse(match[1]!)
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The wait an HTTP response asks for before a retry: `retry-after-ms` (milliseconds) or `retry-after`
 * (seconds, or an HTTP date, measured from now). `headers` are lower-cased header names, as
 * `@effect/platform`'s `Headers` hold them. `undefined` when neither header is present and valid.
 *
 * @since 0.1.0
 * @category constructors
 */
export const retryAfterFromHeaders = (
  headers: { readonly [name: string]: string | undefined }
): Duration.Duration | undefined => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined) {
    const value = Number.parseFloat(ms)
    if (Number.isFinite(value) && value >= 0) return Duration.millis(value)
  }
  const seconds = headers["retry-after"]
  if (seconds !== undefined) {
    const value = Number(seconds)
    if (seconds.trim() !== "" && Number.isFinite(value) && value >= 0) return Duration.seconds(value)
    const date = Date.parse(seconds)
    if (Number.isFinite(date)) return Duration.millis(Math.max(0, date - Date.now()))
  }
  return undefined
}

/**
 * The message of an error body in another common shape than OpenAI's, without a `message`: Ollama's
 * `{"error":"…"}` (a string), FastAPI's (vLLM's, TGI's) `{"detail":"…"}` and its validation errors
 * `{"detail":[{"loc":["body","messages"],"msg":"Field required",…},…]}`, read as `body.messages: Field
 * required` (several joined by `; `, an item without `msg` as its JSON). `undefined` for any other shape, and
 * for an empty or blank message (the body then describes the error).
 */
const otherShapeMessage = (error: { readonly [key: string]: unknown }): string | undefined => {
  if (typeof error.error === "string") return error.error.trim() === "" ? undefined : error.error
  const detail = error.detail
  if (typeof detail === "string") return detail.trim() === "" ? undefined : detail
  if (!Array.isArray(detail) || detail.length === 0) return undefined
  return detail.map((item: unknown) => {
    if (!isJsonObject(item) || typeof item.msg !== "string") return JSON.stringify(item)
    const loc = Array.isArray(item.loc) ? item.loc.filter((part) => typeof part === "string" || typeof part === "number") : []
    return loc.length === 0 ? item.msg : `${loc.join(".")}: ${item.msg}`
  }).join("; ")
}

/** The statuses that redirect (RFC 9110 section 15.4): the others of 3xx (300, 304, 305, 306) are no redirect. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

/** The description of a 3xx answer whose body holds no error message: its status and, for a redirect, its target. */
const redirectDescription = (status: number, location: string | undefined): string =>
  !REDIRECTS.has(status)
    ? `the server answered HTTP ${status}, which is no answer to this request`
    : `the server answered HTTP ${status}, a redirect ${
      location === undefined || location.trim() === "" ? "(no location header)" : `to ${capMessage(location.trim(), 500)}`
    }, which is not followed (the request and its key go to the configured base URL only)`

const isJsonObject = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const stringOf = (o: { readonly [key: string]: unknown }, key: string): string | undefined => {
  const value = o[key]
  return typeof value === "string" ? value : undefined
}

/**
 * An `HttpError` from a non-2xx HTTP answer, for any OpenAI-compatible endpoint (`/responses`,
 * `/chat/completions`): `description`, `errorType`, `code` and `param` from OpenAI's error body
 * `{"error":{"message","type","param","code"}}` (a bare `{"message",…}` object is read the same way, and
 * so is the first object of a list, as Gemini's OpenAI compatibility answers
 * `[{"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT"}}]`, whose `status` is read as the
 * `errorType` when there is no `type`; a `null` field is left out; a numeric `code` becomes its decimal
 * text; since 0.2.0 the inner message of Ollama's `{"error":"…"}` and FastAPI's (vLLM's) `{"detail":"…"}` /
 * `{"detail":[{"loc","msg"},…]}` is the description, `body.messages: Field required` for a validation
 * error; a body of another shape becomes the description), `requestId` from `x-request-id`, `retryAfter` from `retry-after-ms` /
 * `retry-after` (see `retryAfterFromHeaders`), `shouldRetry` (since 0.2.0) from `x-should-retry`. `headers` are lower-cased header names. Pure: no I/O.
 *
 * The message or body is cut at `MAX_MESSAGE` characters, saying how much was cut (`capMessage`). `cutAt`
 * (since 0.2.0) is the bound in bytes the body was read up to, when the body was longer and cut there: the
 * message of a JSON error body so cut is read from its prefix when it is whole there (`"message": "…"`),
 * else the description says the body was cut and shows its first characters (`capMessage`). `hint` (since
 * 0.2.0) is what the caller knows of the error that the server did not say (the transport's 404 hint for a
 * base URL without `/v1`, `HttpTransport.noPathHint`): the description is then `<description>: <hint>`.
 *
 * A redirect (a 3xx status: an `http://` base URL for a host that redirects to `https://`, a proxy that moves
 * a path) is never followed by the clients: the request, and its key, go to the base URL only. Its
 * description (since 0.2.0), unless its body holds an error message, names the status and the `location`
 * header: `the server answered HTTP 302, a redirect to https://host/v1/responses, which is not followed (the
 * request and its key go to the configured base URL only)` (`(no location header)` without one), not the
 * body a redirect carries (an HTML page, or nothing, which said `HTTP status 302`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const httpErrorFromResponse = (response: {
  readonly status: number
  readonly headers: { readonly [name: string]: string | undefined }
  readonly body: string
  readonly cutAt?: number | undefined
  readonly hint?: string | undefined
}): HttpError => {
  const { body, cutAt, headers, hint, status } = response
  let error: { readonly [key: string]: unknown } | undefined
  try {
    let json: unknown = JSON.parse(body)
    // Gemini's OpenAI compatibility answers a list holding one error: `[{"error":{"code","message","status"}}]`
    if (Array.isArray(json)) json = json.find(isJsonObject)
    if (isJsonObject(json)) error = isJsonObject(json.error) ? json.error : json
  } catch {
    error = undefined
  }
  const message = error
    ? stringOf(error, "message") ?? otherShapeMessage(error)
    : cutAt === undefined
    ? undefined
    : messageInPrefix(body)
  // Google's `status` (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`…) stands where OpenAI's `type` would
  const errorType = error && (stringOf(error, "type") ?? stringOf(error, "status"))
  const rawCode = error?.code
  const code = typeof rawCode === "string"
    ? rawCode
    : typeof rawCode === "number" && Number.isFinite(rawCode)
    ? String(rawCode)
    : undefined
  const param = error && stringOf(error, "param")
  const requestId = headers["x-request-id"]
  const retryAfter = retryAfterFromHeaders(headers)
  const shouldRetryHeader = headers["x-should-retry"]?.trim().toLowerCase()
  const shouldRetry = shouldRetryHeader === "true" ? true : shouldRetryHeader === "false" ? false : undefined
  const location = status >= 300 && status < 400 ? headers["location"] : undefined
  const description = status >= 300 && status < 400 && message === undefined
    ? redirectDescription(status, location)
    : message !== undefined
    ? capMessage(message)
    : cutAt !== undefined
    ? `the error body was cut at ${cutAt} bytes: ${capMessage(body.trim())}`
    : body.trim() === ""
    ? `HTTP status ${status}`
    : capMessage(body.trim())
  return new HttpError({
    status,
    description: hint === undefined ? description : `${description}: ${hint}`,
    ...(errorType === undefined ? {} : { errorType }),
    ...(code === undefined ? {} : { code }),
    ...(param === undefined ? {} : { param }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(shouldRetry === undefined ? {} : { shouldRetry })
  })
}
