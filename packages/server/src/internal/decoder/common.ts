/**
 * The errors of the request decoder and the helpers that raise them: `RequestError` (HTTP 400 in OpenAI's
 * shape), `formatParam` (OpenAI's parameter paths), `decodeAt` (a schema decode failing with a
 * `RequestError` naming the parameter).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as AST from "effect/SchemaAST"
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

/**
 * Decodes `value` with `schema`, failing with a `RequestError` naming the parameter at `at`. A value that is
 * none of a field's literals (`"truncation": "turbo"`) is worded as OpenAI words it, naming every literal the
 * field allows (`literalMismatch`); a number past a double's range where a finite number or an integer is
 * wanted (`1e400`, which JSON.parse reads as Infinity) is `invalid_value` ("Invalid 'temperature': number out
 * of range. Expected a finite number, but got Infinity instead."); any other failure names the schema's first
 * issue.
 */
export const decodeAt = <A, I>(
  schema: Schema.Schema<A, I, never>,
  value: unknown,
  at: ReadonlyArray<PropertyKey>
): Effect.Effect<A, RequestError> => {
  const decoded = Schema.decodeUnknownEither(schema)(value)
  if (Either.isRight(decoded)) return Effect.succeed(decoded.right)
  const literal = literalMismatch(decoded.left.issue, [])
  if (literal !== undefined) {
    const param = formatParam([...at, ...literal.path])
    return fail(
      `Invalid value: ${quote(literal.actual)}. Supported values are: ${listValues(literal.supported)}.`,
      param,
      "invalid_value"
    )
  }
  const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
  const path = [...at, ...(issue?.path ?? [])]
  const param = formatParam(path)
  const actual = valueAt(value, issue?.path ?? [])
  if (typeof actual === "number" && !Number.isFinite(actual)) {
    // a number past a double's range (`1e400`), which JSON.parse reads as Infinity: sent on, it would
    // become `null` in the upstream's body (JSON has no Infinity), the backend's default in its place
    return fail(
      `Invalid '${param ?? "body"}': number out of range. Expected a finite number, but got ${actual} instead.`,
      param,
      "invalid_value"
    )
  }
  const union = issue === undefined ? undefined : unionTypes(ParseResult.ArrayFormatter.formatErrorSync(decoded.left), issue.path)
  if (union !== undefined) {
    return fail(
      `Invalid type for '${param ?? "body"}': expected one of ${union}, but got ${jsonTypeOf(actual)} instead.`,
      param,
      "invalid_type"
    )
  }
  const missing = issue?._tag === "Missing"
  return fail(
    missing
      ? `Missing required parameter: '${param ?? "body"}'.`
      : `Invalid value for '${param ?? "body"}': ${capMessage(issue?.message ?? "does not match its schema", 300)}`,
    param,
    missing ? "missing_required_parameter" : "invalid_type"
  )
}

/**
 * When the first issues are each a `Type` issue at one path (a value none of a union's members takes, such
 * as `input: 42` for a string or an array), those members as the API's message lists them ("a string, an
 * array or null"); else `undefined`.
 */
const unionTypes = (
  issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>,
  path: ReadonlyArray<PropertyKey>
): string | undefined => {
  const names: Array<string> = []
  for (const issue of issues) {
    if (issue._tag !== "Type" || issue.path.length !== path.length || issue.path.some((key, i) => key !== path[i])) break
    const expected = /^Expected (\w+), actual /.exec(issue.message)?.[1]
    if (expected === undefined) return undefined
    // an optional field's `undefined`: no JSON value, the field left out
    if (expected !== "undefined") names.push(TYPE_NAMES[expected] ?? expected)
  }
  return names.length < 2 ? undefined : `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`
}

const TYPE_NAMES: { readonly [schema: string]: string } = {
  string: "a string",
  number: "a number",
  boolean: "a boolean",
  Array: "an array",
  null: "null"
}

/** A JSON value's type as the gateway's "Invalid type for …" messages name it ("a number", "an object"). */
export const jsonTypeOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`

/** The value at `path` inside `value` (an issue's path), `undefined` where there is none. */
const valueAt = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let current = value
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return current
}

/** A scalar that is none of the literals a field allows, at `path`. */
interface LiteralMismatch {
  readonly path: ReadonlyArray<PropertyKey>
  readonly actual: string | number | boolean
  readonly supported: ReadonlyArray<AST.LiteralValue>
}

/**
 * Follows the issue the schema reports first (as `ArrayFormatter` lists it first) down to where it failed;
 * when that is a literal, or a union holding literals (a field's literals, or the discriminating literals
 * of a union of objects: Effect reports `{"type": "bogus"}` at `type`), and the value there is a scalar (a
 * string, a number, a boolean), the literals it allows (`null` left out: a `Nullable` field's `null` is not a value to
 * suggest). `undefined` for any other failure. A value that is an object goes on into the union's first
 * member's issue, so that `reasoning: {effort: "turbo"}` is named at `reasoning.effort`.
 */
const literalMismatch = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): LiteralMismatch | undefined => {
  switch (issue._tag) {
    case "Pointer":
      return literalMismatch(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])])
    case "Refinement":
    case "Transformation":
      return literalMismatch(issue.issue, path)
    case "Composite": {
      if (AST.isUnion(issue.ast) && isScalar(issue.actual)) return scalarMismatch(issue.ast, issue.actual, path)
      const first = Array.isArray(issue.issues) ? issue.issues[0] : issue.issues
      return first === undefined ? undefined : literalMismatch(first as ParseResult.ParseIssue, path)
    }
    case "Type":
      // a literal, or the literals of a discriminated union's members (`{"type": "bogus"}`)
      return isScalar(issue.actual) ? scalarMismatch(issue.ast, issue.actual, path) : undefined
    default:
      return undefined
  }
}

const scalarMismatch = (
  ast: AST.AST,
  actual: string | number | boolean,
  path: ReadonlyArray<PropertyKey>
): LiteralMismatch | undefined => {
  const supported = literalsOf(ast)
  return supported.length === 0 ? undefined : { path, actual, supported }
}

const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/** The literals of a union's members, nested unions flattened, in order; `null` left out. */
const literalsOf = (ast: AST.AST): Array<AST.LiteralValue> => {
  if (AST.isLiteral(ast)) return ast.literal === null ? [] : [ast.literal]
  if (AST.isUnion(ast)) return ast.types.flatMap(literalsOf)
  return []
}

/** A value as OpenAI's messages quote it (`'turbo'`, `5`), capped. */
const quote = (value: AST.LiteralValue): string =>
  typeof value === "string" ? `'${capMessage(value, 100)}'` : String(value)

/** `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`: OpenAI's "Supported values are: …" list. */
const listValues = (values: ReadonlyArray<AST.LiteralValue>): string => {
  const quoted = values.map(quote)
  if (quoted.length <= 2) return quoted.join(" and ")
  return `${quoted.slice(0, -1).join(", ")}, and ${quoted[quoted.length - 1]}`
}

/**
 * A value that is none of `supported`, at `param`, in OpenAI's words (as `decodeAt` words a field's literals):
 * "Invalid value: 'frobnicate'. Supported values are: 'a', 'b', and 'c'.", code `invalid_value`.
 */
export const invalidValue = (actual: string, supported: ReadonlyArray<string>, param: string) =>
  fail(`Invalid value: ${quote(actual)}. Supported values are: ${listValues(supported)}.`, param, "invalid_value")
