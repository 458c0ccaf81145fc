/**
 * Structured output over any `LanguageModel`: ask the model for JSON matching an Effect `Schema` (the
 * call's `responseFormat`, `ResponseFormat.json`: Responses `text.format`, Chat Completions
 * `response_format`, strict when the schema fits OpenAI's strict subset) and decode the final text with the
 * same `Schema`.
 *
 * ```ts
 * const Answer = Schema.Struct({ city: Schema.String, population: Schema.Number })
 * const { value } = yield* StructuredOutput.generate(Prompt.make("The largest city of France?"), Answer)
 * ```
 *
 * Source: OpenAI API guide "Structured Outputs".
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AiError from "./AiError.js"
import * as LanguageModel from "./LanguageModel.js"
import type * as ModelResponse from "./ModelResponse.js"
import type * as Part from "./Part.js"
import type * as Prompt from "./Prompt.js"
import * as ResponseFormat from "./ResponseFormat.js"
import * as StrictSchema from "./StrictSchema.js"

/**
 * How the format is named and described to the model: `name` (1 to 64 letters, digits, `_` or `-`;
 * default `"output"`), `description`, and `strict` (left out: strict when the schema allows it; `true` with a
 * schema that does not fit the strict subset is an `InvalidPrompt`).
 *
 * @since 0.1.0
 * @category models
 */
export interface FormatOptions {
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly strict?: boolean | undefined
}

/**
 * The decoded value and the whole response it came from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result<A> {
  readonly value: A
  readonly response: ModelResponse.ModelResponse
}

/**
 * The response format of `schema`: `ResponseFormat.json(schema, options)` with the name defaulted to
 * `"output"` (the JSON Schema is made when the request body is built, by `ResponseFormat.resolve`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const format = <A, I, R>(
  schema: Schema.Schema<A, I, R>,
  options: FormatOptions = {}
): ResponseFormat.Json => ResponseFormat.json(schema, { ...options, name: options.name ?? "output" })

/**
 * Decodes the final text of `response` with `schema` (the text is parsed as JSON first). The final text is
 * the last text part whose phase is `final_answer`, else the last text part. A `null` where `schema` has an
 * optional property that does not take `null` reads as the property left out: the format was sent in its
 * strict form, where optional properties are required and nullable (`StrictSchema.dropNullOptionals`).
 *
 * Fails with `AiError.StructuredOutputError`: `refusal` when the message holds a refusal, `incomplete` when
 * the response stopped early (finish reason `length` or `content_filter`), `missing` when there is no text,
 * `mismatch` when the text is not JSON or does not decode (naming the path of the first mismatch).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = <A, I, R>(
  response: ModelResponse.ModelResponse,
  schema: Schema.Schema<A, I, R>
): Effect.Effect<A, AiError.StructuredOutputError, R> =>
  Effect.suspend(() => {
    const fail = (reason: AiError.StructuredOutputError["reason"], description: string, excerpt?: string) =>
      Effect.fail(
        new AiError.StructuredOutputError({
          reason,
          description,
          responseId: response.id,
          ...(excerpt === undefined ? {} : { excerpt: AiError.excerpt(excerpt) })
        })
      )
    const parts = response.message.parts
    const refusal = parts.find((part): part is Part.RefusalPart => part.type === "refusal")
    if (refusal !== undefined) return fail("refusal", `the model refused: ${refusal.text}`)
    if (response.finishReason === "length" || response.finishReason === "content_filter") {
      return fail(
        "incomplete",
        `the response is incomplete (${response.incompleteReason ?? response.finishReason}), its JSON is cut short`
      )
    }
    const texts = parts.filter((part): part is Part.TextPart => part.type === "text")
    const final = texts.findLast((part) => part.attributes.phase === "final_answer") ?? texts.at(-1)
    if (final === undefined) return fail("missing", "the response holds no text")
    let json: unknown
    try {
      json = JSON.parse(final.text)
    } catch (error) {
      return fail("mismatch", `the text is not JSON: ${error instanceof Error ? error.message : String(error)}`, final.text)
    }
    // the format went out in its strict form: `null` stands for an optional property left out
    const value = StrictSchema.dropNullOptionals(json, jsonSchemaFor(schema))
    return Schema.decodeUnknown(schema)(value).pipe(
      Effect.catchTag("ParseError", (error) => {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
        const path = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`
        return fail("mismatch", `the text does not match the schema${path}: ${issue?.message ?? String(error)}`, final.text)
      })
    )
  })

/** The JSON Schema of `schema` (made once per schema), or none when JSON Schema cannot express it. */
const jsonSchemaFor = <A, I, R>(schema: Schema.Schema<A, I, R>): StrictSchema.JsonSchema | undefined => {
  if (jsonSchemas.has(schema)) return jsonSchemas.get(schema)
  let made: StrictSchema.JsonSchema | undefined
  try {
    made = StrictSchema.fromSchema(schema)
  } catch {
    made = undefined
  }
  jsonSchemas.set(schema, made)
  return made
}

const jsonSchemas = new WeakMap<object, StrictSchema.JsonSchema | undefined>()

/**
 * One model call (`LanguageModel.generate`) that asks for JSON matching `schema` (the call's
 * `responseFormat`, which any `LanguageModel` layer sends or refuses with `InvalidPrompt`, never drops) and
 * decodes it. `call` passes tools and the tool choice through; its own `responseFormat` is replaced.
 *
 * Fails with the call's errors (`LanguageModel.ModelError`, among them `InvalidPrompt` for a schema that
 * cannot be sent) and `StructuredOutputError` as `decode` does.
 *
 * @since 0.1.0
 * @category generation
 */
export const generate = <A, I, R>(
  prompt: Prompt.Prompt,
  schema: Schema.Schema<A, I, R>,
  options: FormatOptions & { readonly call?: LanguageModel.CallOptions | undefined } = {}
): Effect.Effect<Result<A>, LanguageModel.ModelError | AiError.StructuredOutputError, LanguageModel.LanguageModel | R> =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    const response = yield* model.generate(prompt, { ...options.call, responseFormat: format(schema, options) })
    const value = yield* decode(response, schema)
    return { value, response }
  }).pipe(Effect.withSpan("StructuredOutput.generate"))
