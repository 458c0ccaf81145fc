/**
 * OpenAI's strict JSON Schema subset, in one place: the JSON Schema of an Effect `Schema` as the API takes
 * it, whether a schema fits strict mode (and why not), its strict form (every property required, optional
 * ones nullable), and the way back (a `null` the model sent for an optional property read as the property
 * left out). Used for the parameters of function tools (`Tool.definition` in `@effect-responses/tools`)
 * and for structured output (`ResponseFormat.resolve`, `StructuredOutput.decode`), so both wires
 * (Responses and Chat Completions) send the same schemas.
 *
 * Strict mode ("Structured Outputs") takes a subset of JSON Schema: the root is an object schema; every
 * object schema lists all its `properties` in `required` and has `additionalProperties: false`; `items` is
 * one schema; only the keywords type, properties, required, additionalProperties, items, enum, const,
 * anyOf, $ref, $defs, definitions, title, description, default, pattern, format, minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, multipleOf, minItems, maxItems and $schema appear. Source: OpenAI API
 * guide "Structured Outputs", supported schemas; `default` because the API took it in the strict
 * `calculator` tool of the recorded `vai-openai-reasoning-encrypted-multistep.chunks.txt` session; `$schema`
 * (an annotation naming the JSON Schema draft) because the `openai` SDK's own `zodTextFormat` sends zod 4's
 * draft-7 output, which always carries it, with `strict: true`.
 *
 * @since 0.2.0
 */
import * as JSONSchema from "effect/JSONSchema"
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

/**
 * A JSON Schema document as a plain JSON object.
 *
 * @since 0.2.0
 * @category models
 */
export interface JsonSchema {
  readonly [key: string]: unknown
}

const isObject = (u: unknown): u is JsonSchema => typeof u === "object" && u !== null && !Array.isArray(u)

// ---------------------------------------------------------------------------------------------------------
// from an Effect Schema
// ---------------------------------------------------------------------------------------------------------

/**
 * The JSON Schema of an Effect `Schema` (of its encoded side) as OpenAI takes it: `JSONSchema.make` without
 * the `$schema` keyword; a root `$ref` into `$defs` (what a `Schema.Class` gives) inlined, since the root
 * must be an object schema (kept when the schema refers to itself); a struct without fields as
 * `{"type":"object","properties":{},"required":[],"additionalProperties":false}`. Throws what
 * `JSONSchema.make` throws for a schema JSON Schema cannot express.
 *
 * @since 0.2.0
 * @category conversions
 */
export const fromSchema = <A, I, R>(schema: Schema.Schema<A, I, R>): JsonSchema => {
  const ast = SchemaAST.encodedAST(schema.ast)
  if (SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return { type: "object", properties: {}, required: [], additionalProperties: false }
  }
  const made: unknown = JSONSchema.make(schema)
  if (!isObject(made)) return {}
  const { $schema: _, ...document } = made
  const ref = document.$ref
  const defs = document.$defs
  if (typeof ref === "string" && ref.startsWith("#/$defs/") && isObject(defs)) {
    const name = ref.slice("#/$defs/".length)
    const root = defs[name]
    const rest: Record<string, unknown> = { ...defs }
    delete rest[name]
    // Inline the root only when nothing else refers to it (a recursive root keeps its $ref).
    if (isObject(root) && !JSON.stringify([root, rest]).includes(JSON.stringify(ref))) {
      const { $ref: __, $defs: ___, ...others } = document
      return Object.keys(rest).length === 0 ? { ...others, ...root } : { ...others, ...root, $defs: rest }
    }
  }
  return document
}

// ---------------------------------------------------------------------------------------------------------
// the strict subset
// ---------------------------------------------------------------------------------------------------------

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
  "default",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "$schema"
])

/**
 * Why `schema` cannot be sent with `strict: true` as it is, or `undefined` when it can (see the module
 * comment for the subset). The reason names the JSON path of the first offending schema (`$.a.b`,
 * `$.items[]`, `$.anyOf[1]`).
 *
 * @since 0.2.0
 * @category strict mode
 */
export const incompatibility = (schema: unknown): string | undefined => {
  if (!isObject(schema) || schema.type !== "object") return "the root is not an object schema"
  return issue(schema, "$")
}

/**
 * Whether `schema` can be sent with `strict: true` as it is (`incompatibility` finds nothing).
 *
 * @since 0.2.0
 * @category strict mode
 */
export const isStrict = (schema: unknown): boolean => incompatibility(schema) === undefined

const issue = (schema: unknown, path: string): string | undefined => {
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
      const found = issue(properties[key], `${path}.${key}`)
      if (found !== undefined) return found
    }
  }
  if (schema.items !== undefined) {
    if (Array.isArray(schema.items)) return `${path} is a tuple (items is a list)`
    const found = issue(schema.items, `${path}[]`)
    if (found !== undefined) return found
  }
  if (schema.anyOf !== undefined) {
    if (!Array.isArray(schema.anyOf)) return `${path}.anyOf is not a list`
    for (let index = 0; index < schema.anyOf.length; index++) {
      const found = issue(schema.anyOf[index], `${path}.anyOf[${index}]`)
      if (found !== undefined) return found
    }
  }
  for (const defsKey of ["$defs", "definitions"] as const) {
    const defs = schema[defsKey]
    if (defs === undefined) continue
    if (!isObject(defs)) return `${path}.${defsKey} is not an object`
    for (const [name, def] of Object.entries(defs)) {
      const found = issue(def, `${path}.${defsKey}.${name}`)
      if (found !== undefined) return found
    }
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// the strict form
// ---------------------------------------------------------------------------------------------------------

/**
 * The strict form of `schema`, or why it has none: every property of every object schema becomes required,
 * an optional one nullable (`{"anyOf":[<schema>,{"type":"null"}]}`, its `description` kept outside), so the
 * model sends `null` for what it leaves out (read back by `dropNullOptionals`). An object schema with open
 * additional properties (a `Schema.Record`), or anything else outside the subset, leaves it without one
 * (`reason`, as `incompatibility` words it).
 *
 * @since 0.2.0
 * @category strict mode
 */
export const strictForm = (
  schema: JsonSchema
): { readonly schema: JsonSchema; readonly reason?: undefined } | { readonly schema?: undefined; readonly reason: string } => {
  const strict = requireAll(schema)
  const reason = incompatibility(strict)
  return reason === undefined && isObject(strict) ? { schema: strict } : { reason: reason ?? "the root is not an object schema" }
}

/**
 * The strict form of `schema` (`strictForm`), or `undefined` when it has none.
 *
 * @since 0.2.0
 * @category strict mode
 */
export const toStrict = (schema: JsonSchema): JsonSchema | undefined => strictForm(schema).schema

/** Keywords whose value is a map of names to schemas, besides `properties`. */
const mapKeywords = ["$defs", "definitions", "patternProperties"] as const

/** Keywords whose value is a schema or a list of schemas. */
const schemaKeywords = [
  "items",
  "prefixItems",
  "additionalItems",
  "additionalProperties",
  "anyOf",
  "allOf",
  "oneOf",
  "not",
  "if",
  "then",
  "else"
] as const

/** Every property required, the optional ones nullable, all the way down; everything else as it is. */
const requireAll = (schema: unknown): unknown => {
  if (!isObject(schema)) return schema
  const out: Record<string, unknown> = { ...schema }
  const properties = schema.properties
  if (isObject(properties)) {
    const required = Array.isArray(schema.required) ? schema.required : []
    const strictProperties: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(properties)) {
      const strict = requireAll(value)
      strictProperties[key] = required.includes(key) || acceptsNull(strict) ? strict : nullable(strict)
    }
    out.properties = strictProperties
    out.required = Object.keys(properties)
  }
  for (const key of mapKeywords) {
    const map = schema[key]
    if (!isObject(map)) continue
    const strictMap: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(map)) strictMap[name] = requireAll(value)
    out[key] = strictMap
  }
  for (const key of schemaKeywords) {
    const value = schema[key]
    if (value === undefined || typeof value === "boolean") continue
    out[key] = Array.isArray(value) ? value.map(requireAll) : requireAll(value)
  }
  return out
}

const nullable = (schema: unknown): unknown => {
  if (!isObject(schema)) return { anyOf: [schema, { type: "null" }] }
  const { description, ...rest } = schema
  return {
    anyOf: [rest, { type: "null" }],
    ...(description === undefined ? {} : { description })
  }
}

/**
 * Whether a JSON Schema accepts `null`: `"type":"null"`, a type list with `"null"`, `const: null`, an `enum`
 * with `null`, or an `anyOf` / `oneOf` branch that does.
 *
 * @since 0.2.0
 * @category strict mode
 */
export const acceptsNull = (schema: unknown): boolean => {
  if (!isObject(schema)) return schema === true
  const type = schema.type
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true
  if ("const" in schema && schema.const === null) return true
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true
  for (const key of ["anyOf", "oneOf"]) {
    const branches = schema[key]
    if (Array.isArray(branches) && branches.some(acceptsNull)) return true
  }
  return false
}

/**
 * `value` (JSON the model wrote against the strict form of `schema`) with every `null` removed where
 * `schema` (the form before `strictForm`) has an optional property that does not accept `null`: what a
 * model in strict mode sends for a property it leaves out, read as the property left out, so that the
 * Effect `Schema` the JSON Schema came from decodes it. Follows `properties`, `items` and `#/$defs/…`
 * references; leaves everything else as it is.
 *
 * @since 0.2.0
 * @category strict mode
 */
export const dropNullOptionals = (value: unknown, schema: unknown, root: unknown = schema): unknown => {
  if (!isObject(schema)) return value
  const ref = schema.$ref
  if (typeof ref === "string" && ref.startsWith("#/$defs/") && isObject(root) && isObject(root.$defs)) {
    return dropNullOptionals(value, root.$defs[ref.slice("#/$defs/".length)], root)
  }
  if (Array.isArray(value)) {
    const items = schema.items
    return isObject(items) ? value.map((item) => dropNullOptionals(item, items, root)) : value
  }
  const properties = schema.properties
  if (!isObject(value) || !isObject(properties)) return value
  const required = Array.isArray(schema.required) ? schema.required : []
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const property = properties[key]
    if (property === undefined) {
      out[key] = item
    } else if (item !== null) {
      out[key] = dropNullOptionals(item, property, root)
    } else if (required.includes(key) || acceptsNull(property)) {
      out[key] = null
    }
  }
  return out
}
