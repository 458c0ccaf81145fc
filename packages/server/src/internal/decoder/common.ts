/**
 * The errors of the request decoder and the helpers that raise them: `RequestError` (HTTP 400 in OpenAI's
 * shape), `formatParam` (OpenAI's parameter paths), `decodeAt` (a schema decode failing with a
 * `RequestError` naming the parameter).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { capMessage } from "../limits.js"

/**
 * A request the decoder cannot accept: malformed, or asking for what a stateless bridge cannot honour.
 * `param` names the offending request parameter as OpenAI does (`store`, `input[2].content[0].file_url`,
 * `tools[1]`), `null` when the whole body is at fault; `code` is OpenAI's error code
 * (`unsupported_parameter`, `unsupported_value`, `invalid_type`, `missing_required_parameter`,
 * `invalid_value`). A server answers it with HTTP 400 and `body`.
 *
 * @since 0.2.0
 * @category errors
 */
export class RequestError extends Schema.TaggedError<RequestError>("@effect-responses/server/RequestError")("RequestError", {
  description: Schema.String,
  param: Schema.NullOr(Schema.String),
  code: Schema.String
}) {
  override get message(): string {
    return this.description
  }

  /**
   * The error in OpenAI's shape: `{"error":{"message","type":"invalid_request_error","param","code"}}`.
   *
   * @since 0.1.0
   */
  get body(): ErrorBody {
    return { error: { message: this.description, type: "invalid_request_error", param: this.param, code: this.code } }
  }
}

/**
 * OpenAI's error body.
 *
 * @since 0.2.0
 * @category models
 */
export interface ErrorBody {
  readonly error: {
    readonly message: string
    readonly type: string
    readonly param: string | null
    readonly code: string | null
  }
}

/** Fails with a `RequestError`. */
export const fail = (description: string, param: string | null, code: string) =>
  Effect.fail(new RequestError({ description, param, code }))

/**
 * An array of anything, checked as an array only: `Schema.Array(Schema.Unknown)` walks (and copies) every
 * element, which for a 20,000-item `input` is one uninterrupted pass of milliseconds; the elements are
 * decoded one by one afterwards anyway.
 */
export const UnknownArray: Schema.Schema<ReadonlyArray<unknown>> = Schema.declare(
  (value: unknown): value is ReadonlyArray<unknown> => Array.isArray(value),
  { identifier: "Array", description: "an array" }
)

/** An optional field that may also be `null`. */
export const Nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

/**
 * A request parameter path as OpenAI writes it: `input[2].content[0].type`.
 *
 * @since 0.2.0
 * @category errors
 */
export const formatParam = (path: ReadonlyArray<PropertyKey>): string | null => {
  let out = ""
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`
    else out += out === "" ? String(segment) : `.${String(segment)}`
  }
  return out === "" ? null : out
}

/** Decodes `value` with `schema`, failing with a `RequestError` naming the parameter at `at`. */
export const decodeAt = <A, I>(
  schema: Schema.Schema<A, I, never>,
  value: unknown,
  at: ReadonlyArray<PropertyKey>
): Effect.Effect<A, RequestError> => {
  const decoded = Schema.decodeUnknownEither(schema)(value)
  if (Either.isRight(decoded)) return Effect.succeed(decoded.right)
  const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
  const path = [...at, ...(issue?.path ?? [])]
  const param = formatParam(path)
  const missing = issue?._tag === "Missing"
  return fail(
    missing
      ? `Missing required parameter: '${param ?? "body"}'.`
      : `Invalid value for '${param ?? "body"}': ${capMessage(issue?.message ?? "does not match its schema", 300)}`,
    param,
    missing ? "missing_required_parameter" : "invalid_type"
  )
}
