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
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import * as AiError from "./AiError.js"

/**
 * A JSON Schema document as a plain JSON object.
 *
 * @since 0.2.0
 * @category models
 */
export interface JsonSchema {
  readonly [key: string]: unknown
}

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
 * - `strict`: left out, strict when the schema fits OpenAI's strict subset (`strictIncompatibility`);
 *   `true` with a schema that does not fit is an `InvalidPrompt`.
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
 * The wire form of `format` (see `Resolved`): the JSON Schema made from an Effect `Schema`, the name
 * defaulted to `"output"`, `strict` decided.
 *
 * Fails with `AiError.InvalidPrompt` when the name is not 1 to 64 letters, digits, `_` or `-`, when the
 * schema cannot be converted to JSON Schema, or when `strict: true` is asked with a schema the strict mode
 * cannot take (the reason names the JSON path).
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
      schema = Schema.isSchema(source) ? jsonSchemaOf(source) : source as JsonSchema
    } catch (error) {
      return invalid(
        `the json format ${name} cannot be converted to JSON Schema: ${
          error instanceof Error ? error.message : String(error)
        }`
      )
    }
    const incompatibility = strictIncompatibility(schema)
    if (format.strict === true && incompatibility !== undefined) {
      return invalid(`the json format ${name} cannot be strict: ${incompatibility}`)
    }
    return Effect.succeed({
      type: "json_schema" as const,
      name,
      schema,
      ...(format.description === undefined ? {} : { description: format.description }),
      strict: format.strict ?? incompatibility === undefined
    })
  })

const invalid = (description: string) => Effect.fail(new AiError.InvalidPrompt({ description }))

const isObject = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The JSON Schema of an Effect `Schema` as the structured-output formats want it: `JSONSchema.make` without
 * the `$schema` keyword, and with a root `$ref` into `$defs` (a `Schema.Class`) inlined, since the root must
 * be an object schema. Throws what `JSONSchema.make` throws for a schema JSON Schema cannot express.
 *
 * @since 0.2.0
 * @category conversions
 */
export const jsonSchemaOf = <A, I, R>(schema: Schema.Schema<A, I, R>): JsonSchema => {
  const made: unknown = JSONSchema.make(schema)
  if (!isObject(made)) return {}
  const { $schema: _, ...document } = made
  const ref = document.$ref
  const defs = document.$defs
  if (typeof ref === "string" && ref.startsWith("#/$defs/") && isObject(defs)) {
    const name = ref.slice("#/$defs/".length)
    const root = defs[name]
    // Inline the root only when nothing else refers to it (a recursive root keeps its $ref).
    const rest = { ...defs }
    delete rest[name]
    if (isObject(root) && !JSON.stringify([root, rest]).includes(JSON.stringify(ref))) {
      const { $ref: __, $defs: ___, ...others } = document
      return Object.keys(rest).length === 0 ? { ...others, ...root } : { ...others, ...root, $defs: rest }
    }
  }
  return document
}

// The keywords of OpenAI's strict structured-output subset of JSON Schema (API guide "Structured
// Outputs", supported schemas); any other keyword makes a schema non-strict.
const STRICT_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "anyOf",
  "$ref",
  "$defs",
  "definitions",
  "title",
  "description",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems"
])

/**
 * Why a JSON Schema cannot be used with `strict: true` (OpenAI's structured-output subset), or `undefined`
 * when it can: the root must be an object schema; every object schema must list all its `properties` in
 * `required` and have `additionalProperties: false`; `items` must be one schema; only the keywords of the
 * subset may appear (type, properties, required, additionalProperties, items, enum, const, anyOf, $ref,
 * $defs, title, description, pattern, format, numeric bounds, minItems, maxItems). The reason names the
 * JSON path of the first offending schema. Source: OpenAI API guide "Structured Outputs".
 *
 * @since 0.2.0
 * @category conversions
 */
export const strictIncompatibility = (schema: unknown): string | undefined => {
  if (!isObject(schema) || schema.type !== "object") return "the root is not an object schema"
  return strictIssue(schema, "$")
}

const strictIssue = (schema: unknown, path: string): string | undefined => {
  if (typeof schema === "boolean") return `${path} is a boolean schema`
  if (!isObject(schema)) return `${path} is not a schema`
  for (const key of Object.keys(schema)) {
    if (!STRICT_KEYWORDS.has(key)) return `${path} uses ${key}`
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  if (types.includes("object") || schema.properties !== undefined) {
    const properties = isObject(schema.properties) ? schema.properties : {}
    if (schema.additionalProperties !== false) return `${path} does not set additionalProperties: false`
    const required = Array.isArray(schema.required) ? schema.required : []
    for (const key of Object.keys(properties)) {
      if (!required.includes(key)) return `${path}.${key} is optional (strict mode needs every property required)`
      const issue = strictIssue(properties[key], `${path}.${key}`)
      if (issue !== undefined) return issue
    }
  }
  if (schema.items !== undefined) {
    if (Array.isArray(schema.items)) return `${path} is a tuple (items is a list)`
    const issue = strictIssue(schema.items, `${path}[]`)
    if (issue !== undefined) return issue
  }
  if (schema.anyOf !== undefined) {
    if (!Array.isArray(schema.anyOf)) return `${path}.anyOf is not a list`
    for (let index = 0; index < schema.anyOf.length; index++) {
      const issue = strictIssue(schema.anyOf[index], `${path}.anyOf[${index}]`)
      if (issue !== undefined) return issue
    }
  }
  for (const defsKey of ["$defs", "definitions"] as const) {
    const defs = schema[defsKey]
    if (defs === undefined) continue
    if (!isObject(defs)) return `${path}.${defsKey} is not an object`
    for (const [name, def] of Object.entries(defs)) {
      const issue = strictIssue(def, `${path}.${defsKey}.${name}`)
      if (issue !== undefined) return issue
    }
  }
  return undefined
}
