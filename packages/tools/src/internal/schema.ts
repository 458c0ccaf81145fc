import * as Schema from "effect/Schema"

/**
 * A tool schema with its types erased, for code that handles any tool (the executor, JSON Schema output).
 * Sound because a tool's schemas need no services (the `Tool` contract) and the values that go through them
 * come from, or go to, JSON.
 *
 * @internal
 */
export const erase = (schema: Schema.Schema.All): Schema.Schema<unknown, unknown, never> =>
  schema as Schema.Schema<unknown, unknown, never>

/**
 * The schema given as `parameters` to `Tool.make`: the schema itself, or a `Schema.Struct` of the fields.
 *
 * @internal
 */
export const parametersSchema = (parameters: Schema.Struct.Fields | Schema.Schema.All | undefined): Schema.Schema.All =>
  parameters === undefined
    ? Schema.Struct({})
    : Schema.isSchema(parameters)
    ? parameters
    : Schema.Struct(parameters as Schema.Struct.Fields)

type Json = { readonly [key: string]: unknown }

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Whether a JSON Schema accepts `null` (`"type":"null"`, a type list with `"null"`, or an `anyOf`/`oneOf`
 * branch that does).
 *
 * @internal
 */
export const acceptsNull = (schema: unknown): boolean => {
  if (!isObject(schema)) return schema === true
  const type = schema["type"]
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true
  if ("const" in schema && schema["const"] === null) return true
  if (Array.isArray(schema["enum"]) && schema["enum"].includes(null)) return true
  for (const key of ["anyOf", "oneOf"]) {
    const branches = schema[key]
    if (Array.isArray(branches) && branches.some(acceptsNull)) return true
  }
  return false
}

/**
 * `value` with every `null` removed where the (non-strict) JSON Schema has an optional property that does
 * not accept `null`: what a model in strict mode sends for a property it leaves out (see `Tool.toStrict`).
 * Follows `properties`, `items` and `#/$defs/…` references; leaves everything else as it is.
 *
 * @internal
 */
export const dropNullOptionals = (value: unknown, schema: unknown, root: unknown = schema): unknown => {
  if (!isObject(schema)) return value
  const ref = schema["$ref"]
  if (typeof ref === "string" && ref.startsWith("#/$defs/") && isObject(root) && isObject(root["$defs"])) {
    return dropNullOptionals(value, root["$defs"][ref.slice("#/$defs/".length)], root)
  }
  if (Array.isArray(value)) {
    const items = schema["items"]
    return isObject(items) ? value.map((item) => dropNullOptionals(item, items, root)) : value
  }
  const properties = schema["properties"]
  if (!isObject(value) || !isObject(properties)) return value
  const required = Array.isArray(schema["required"]) ? schema["required"] : []
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
