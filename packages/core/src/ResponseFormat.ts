/**
 * The format the model answers in, one type for every protocol: free `text`, or `json` (matching a schema
 * when one is given). A `LanguageModel` layer maps it to its wire (Responses: `text.format`; Chat
 * Completions: `response_format`) or fails with `AiError.InvalidPrompt` when it cannot honour it; it is
 * never dropped.
 *
 * ```ts
 * const City = Schema.Struct({ name: Schema.String, population: Schema.Number })
 * yield* LanguageModel.generate(Prompt.make("The largest city of France?"), {
 *   responseFormat: ResponseFormat.json(City, { name: "city" })
 * })
 * ```
 *
 * Source: OpenAI API guide "Structured Outputs" (Responses `text.format`, Chat Completions
 * `response_format`).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as AiError from "./AiError.js"
import * as StrictSchema from "./StrictSchema.js"

/**
 * A JSON Schema document as a plain JSON object.
 *
 * @since 0.2.0
 * @category models
 */
export type JsonSchema = StrictSchema.JsonSchema

/**
 * Free text (the default of every protocol).
 *
 * @since 0.2.0
 * @category models
 */
export interface Text {
  readonly type: "text"
}

/**
 * JSON output. With a `schema` (an Effect `Schema`, converted with `jsonSchemaOf`, or a JSON Schema object)
 * the model is asked for JSON matching it (`json_schema` on the wire); without one, for any JSON object
 * (`json_object`).
 *
 * - `name`: 1 to 64 letters, digits, `_` or `-` (default `"output"`).
 * - `description`: what the output is for, shown to the model.
 * - `strict`: left out, strict when the schema has a strict form; `false` sends the schema as it is, not
 *   strict. An Effect `Schema` is sent in its strict form (`StrictSchema.strictForm`: every property
 *   required, the optional ones nullable, as function tools are; `StructuredOutput.decode` reads a `null`
 *   for an optional property as the property left out), and `true` with one that has none is an
 *   `InvalidPrompt`. A JSON Schema object is sent as it is: left out, strict when it fits OpenAI's subset
 *   (`StrictSchema.incompatibility`); `true`, strict whatever it holds, so the server judges it (OpenAI
 *   answers 400 for a schema outside its subset; other servers take more, e.g. `minLength`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Json {
  readonly type: "json"
  readonly schema?: Schema.Schema.All | JsonSchema | undefined
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly strict?: boolean | undefined
}

/**
 * The response format of a call: `Text` or `Json`.
 *
 * @since 0.2.0
 * @category models
 */
export type ResponseFormat = Text | Json

/**
 * The format as both OpenAI wires spell it (Responses `text.format` is this object; Chat Completions wraps
 * the `json_schema` fields in `{type:"json_schema", json_schema:{…}}`): `text`, `json_object`, or
 * `json_schema` with its JSON Schema made and `strict` decided.
 *
 * @since 0.2.0
 * @category models
 */
export type Resolved =
  | { readonly type: "text" }
  | { readonly type: "json_object" }
  | {
    readonly type: "json_schema"
    readonly name: string
    readonly schema: JsonSchema
    readonly description?: string
    readonly strict: boolean
  }

/**
 * Free text.
 *
 * @since 0.2.0
 * @category constructors
 */
export const text: Text = { type: "text" }

/**
 * JSON matching `schema` (an Effect `Schema` or a JSON Schema object), or any JSON object when `schema` is
 * left out.
 *
 * @since 0.2.0
 * @category constructors
 */
export const json = (
  schema?: Schema.Schema.All | JsonSchema,
  options: {
    readonly name?: string | undefined
    readonly description?: string | undefined
    readonly strict?: boolean | undefined
  } = {}
): Json => ({
  type: "json",
  ...(schema === undefined ? {} : { schema }),
  ...(options.name === undefined ? {} : { name: options.name }),
  ...(options.description === undefined ? {} : { description: options.description }),
  ...(options.strict === undefined ? {} : { strict: options.strict })
})

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * The wire form of `format` (see `Resolved`): the JSON Schema made from an Effect `Schema` (in its strict
 * form when it has one, see `Json`), the name defaulted to `"output"`, `strict` decided.
 *
 * Fails with `AiError.InvalidPrompt` when the name is not 1 to 64 letters, digits, `_` or `-`, when the
 * schema cannot be converted to JSON Schema, or when `strict: true` is asked with an Effect `Schema` that
 * has no strict form (the reason names the JSON path).
 *
 * @since 0.2.0
 * @category conversions
 */
export const resolve = (format: ResponseFormat): Effect.Effect<Resolved, AiError.InvalidPrompt> =>
  Effect.suspend((): Effect.Effect<Resolved, AiError.InvalidPrompt> => {
    if (format.type === "text") return Effect.succeed({ type: "text" })
    if (format.schema === undefined) return Effect.succeed({ type: "json_object" })
    const name = format.name ?? "output"
    if (!NAME.test(name)) {
      return invalid(`the json format name ${JSON.stringify(name)} must be 1 to 64 letters, digits, _ or -`)
    }
    const source = format.schema
    let schema: JsonSchema
    try {
      schema = Schema.isSchema(source) ? StrictSchema.fromSchema(source) : source as JsonSchema
    } catch (error) {
      return invalid(
        `the json format ${name} cannot be converted to JSON Schema: ${
          error instanceof Error ? error.message : String(error)
        }`
      )
    }
    const strict: { readonly schema?: JsonSchema | undefined; readonly reason?: string | undefined } = format.strict === false
      ? { reason: "strict: false" }
      : Schema.isSchema(source)
      ? StrictSchema.strictForm(schema)
      : format.strict === true || StrictSchema.isStrict(schema)
      ? { schema }
      : { reason: StrictSchema.incompatibility(schema)! }
    if (format.strict === true && strict.schema === undefined) {
      return invalid(`the json format ${name} cannot be strict: ${strict.reason}`)
    }
    return Effect.succeed({
      type: "json_schema" as const,
      name,
      schema: strict.schema ?? schema,
      ...(format.description === undefined ? {} : { description: format.description }),
      strict: strict.schema !== undefined
    })
  })

const invalid = (description: string) => Effect.fail(new AiError.InvalidPrompt({ description, option: "responseFormat" }))

/**
 * The JSON Schema of an Effect `Schema` as the structured-output formats want it (`StrictSchema.fromSchema`:
 * without `$schema`, a root `$ref` inlined). Throws what `JSONSchema.make` throws for a schema JSON Schema
 * cannot express.
 *
 * @since 0.2.0
 * @category conversions
 */
export const jsonSchemaOf: <A, I, R>(schema: Schema.Schema<A, I, R>) => JsonSchema = StrictSchema.fromSchema

/**
 * Why a JSON Schema cannot be used with `strict: true` (OpenAI's structured-output subset), or `undefined`
 * when it can: `StrictSchema.incompatibility`, whose reason names the JSON path of the first offending
 * schema. Source: OpenAI API guide "Structured Outputs".
 *
 * @since 0.2.0
 * @category conversions
 */
export const strictIncompatibility: (schema: unknown) => string | undefined = StrictSchema.incompatibility
