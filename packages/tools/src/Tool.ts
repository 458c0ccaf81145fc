/**
 * A local function tool: a name, a description, an Effect `Schema` for its parameters (decoded from the
 * model's JSON arguments), one for what it returns and, optionally, one for how it fails. Its handler is
 * an Effect service provided by a `Layer` (see `Toolkit.toLayer`); the model sees it as a Responses
 * `function` tool (`Tool.definition`).
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@effect-responses/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as InternalSchema from "./internal/schema.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@effect-responses/tools/Tool")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * A tool. Its schemas need no services (their context is `never`). `parameters` decodes the model's arguments (a JSON object), `success` encodes what the handler
 * returns to the JSON text the model reads, `failure` encodes the handler's typed errors (the JSON text
 * `{"error": <encoded failure>}`). `strict` is what `definition` sends: `undefined` means "strict when the
 * parameters' JSON Schema allows it". `namespace` puts the tool in a tool group (a Responses `namespace`
 * tool; its calls come back with that `namespace`); `deferLoading: true` keeps it out of the model's
 * context until a tool search loads it (see `make`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<
  Name extends string,
  Parameters extends Schema.Schema.All,
  Success extends Schema.Schema.All,
  Failure extends Schema.Schema.All
> {
  readonly [TypeId]: TypeId
  readonly name: Name
  readonly description: string
  readonly parameters: Parameters
  readonly success: Success
  readonly failure: Failure
  readonly strict: boolean | undefined
  readonly namespace?: LanguageModel.ToolNamespace | undefined
  readonly deferLoading?: boolean | undefined
}

/**
 * What a tool in namespace `Namespace` adds to its type: the namespace, with its name as a literal type (so
 * that its handler is keyed `<namespace>.<name>`, see `Key`).
 *
 * @since 0.3.0
 * @category models
 */
export interface Namespaced<Namespace extends string> {
  readonly namespace: { readonly name: Namespace; readonly description: string }
}

/**
 * The key of a tool in a toolkit, in the handler record of `Toolkit.toLayer` and in its handler's service
 * tag: its `name`, or `<namespace>.<name>` for a tool in a namespace (OpenAI tool and namespace names are
 * letters, digits, `_` and `-`, so the `.` cannot be part of either). Two tools of one name in two
 * namespaces have two keys.
 *
 * @since 0.3.0
 * @category type-level
 */
export type Key<T extends { readonly name: string }> = T extends
  { readonly namespace: { readonly name: infer Namespace extends string } } ? `${Namespace}.${T["name"]}` : T["name"]

/**
 * The key of a tool at run time (see `Key`).
 *
 * @since 0.3.0
 * @category models
 */
export const key = (tool: { readonly name: string; readonly namespace?: { readonly name: string } | undefined }): string =>
  tool.namespace === undefined ? tool.name : `${tool.namespace.name}.${tool.name}`

/**
 * Any tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any extends Tool<string, Schema.Schema.All, Schema.Schema.All, Schema.Schema.All> {}

/**
 * The decoded parameters a tool's handler receives.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Parameters<T extends Any> = Schema.Schema.Type<T["parameters"]>

/**
 * What a tool's handler succeeds with.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Success<T extends Any> = Schema.Schema.Type<T["success"]>

/**
 * What a tool's handler may fail with (`never` when the tool has no failure schema).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Failure<T extends Any> = Schema.Schema.Type<T["failure"]>

/**
 * The schema `make` builds from what it is given as `parameters`: the schema itself, or a `Schema.Struct`
 * of the fields.
 *
 * @since 0.1.0
 * @category type-level
 */
export type ParametersSchema<P> = P extends Schema.Schema.All ? P
  : P extends Schema.Struct.Fields ? Schema.Struct<P>
  : never

/**
 * What a handler learns about the call besides its parameters: the model's `callId` (the Responses
 * `call_id`), the tool `name` and, for a call that came with one, its `namespace`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallContext {
  readonly callId: string
  readonly name: string
  readonly namespace?: string | undefined
}

/**
 * The handler of the tool keyed `Name` (its `Key`: the tool name, or `<namespace>.<name>`), as an Effect
 * service: what `Toolkit.toLayer` provides and `ToolExecutor` uses. `handle` takes already decoded
 * parameters and has its requirements provided.
 *
 * @since 0.1.0
 * @category handlers
 */
export interface Handler<Name extends string> {
  readonly name: Name
  readonly handle: (params: unknown, context: CallContext) => Effect.Effect<unknown, unknown>
}

/**
 * The handler services a set of tools needs: `Handler<"a"> | Handler<"b">` for tools named `a` and `b`
 * (`Handler<"crm.a">` for a tool `a` in namespace `crm`).
 *
 * @since 0.1.0
 * @category handlers
 */
export type HandlersFor<Tools extends Any> = Tools extends Any ? Handler<Key<Tools>> : never

/**
 * The service tag of the handler of the tool keyed `key` (`Key`: its name, or `<namespace>.<name>`); the
 * tag's key is `@effect-responses/tools/Tool/<key>`.
 *
 * @since 0.1.0
 * @category handlers
 */
export const handlerTag = <Name extends string>(key: Name): Context.Tag<Handler<Name>, Handler<Name>> =>
  Context.GenericTag<Handler<Name>>(`@effect-responses/tools/Tool/${key}`)

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

/**
 * Declares a tool.
 *
 * - `name`: the function name the model calls (OpenAI allows `^[a-zA-Z0-9_-]{1,64}$`);
 * - `description`: what the tool does, for the model;
 * - `parameters`: a `Schema` of an object, or the fields of one (`{ a: Schema.Number }`); defaults to no
 *   parameters. Its encoded side is what the model writes, as JSON;
 * - `success`: the schema of the handler's result, encoded to JSON for the model; `failure`: of its typed
 *   errors (default `Schema.Never`: the handler cannot fail);
 * - `strict`: forces OpenAI strict mode on or off; by default it is on when the parameters' JSON Schema
 *   allows it (see `definition`);
 * - `namespace`: `{name, description}` of the tool group it belongs to. On the Responses wire the tools of
 *   one namespace are sent inside one `{"type":"namespace",…}` tool and the model calls them with that
 *   `namespace`; in a toolkit the tool's handler is keyed `<namespace>.<name>` (`Key`), so two namespaces
 *   may each have a tool of the same name. Providers without namespaces (Chat Completions) send the tool
 *   by its name alone. Source: API reference, `NamespaceToolParam`;
 * - `deferLoading`: `true` to leave the tool out of the model's context until a tool search
 *   (`BuiltInTool.toolSearch` of the Responses package) loads it (Responses `defer_loading`).
 *
 * @example
 * ```ts
 * const Calculator = Tool.make("calculator", {
 *   description: "A minimal calculator for basic arithmetic.",
 *   parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
 *   success: Schema.Number
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: MakeFunction = ((
  name: string,
  options: MakeOptions<Schema.Schema.All, Schema.Struct.Fields | Schema.Schema.All, Schema.Schema.All> & {
    readonly namespace?: LanguageModel.ToolNamespace | undefined
  }
): Any => ({
  // (cast below: the overloads' types, with the conditional `ParametersSchema<P>`, cannot be checked
  // against this one runtime body)
  [TypeId]: TypeId,
  name,
  description: options.description,
  parameters: InternalSchema.parametersSchema(options.parameters),
  success: options.success,
  failure: options.failure ?? Schema.Never,
  strict: options.strict,
  ...(options.namespace === undefined
    ? {}
    : { namespace: { name: options.namespace.name, description: options.namespace.description } }),
  ...(options.deferLoading === undefined ? {} : { deferLoading: options.deferLoading })
})) as unknown as MakeFunction

/**
 * The signatures of `make`: with a `namespace`, the tool's type records the namespace name (`Namespaced`).
 *
 * @since 0.3.0
 * @category constructors
 */
export interface MakeFunction {
  <
    const Name extends string,
    Success extends Schema.Schema.All,
    const Namespace extends string,
    P extends Schema.Struct.Fields | Schema.Schema.All = {},
    Failure extends Schema.Schema.All = typeof Schema.Never
  >(name: Name, options: MakeOptions<Success, P, Failure> & {
    readonly namespace: { readonly name: Namespace; readonly description: string }
  }): Tool<Name, ParametersSchema<P>, Success, Failure> & Namespaced<Namespace>
  <
    const Name extends string,
    Success extends Schema.Schema.All,
    P extends Schema.Struct.Fields | Schema.Schema.All = {},
    Failure extends Schema.Schema.All = typeof Schema.Never
  >(name: Name, options: MakeOptions<Success, P, Failure>): Tool<Name, ParametersSchema<P>, Success, Failure>
}

/**
 * A namespace for `make`'s `namespace` option: `name` (the namespace name in calls, e.g. `crm`) and the
 * `description` the model reads. Its name keeps its literal type, so the tools made with it are keyed
 * `<name>.<tool>` at the type level too (an object literal kept in a variable would widen it to `string`).
 *
 * ```ts
 * const Crm = Tool.namespace("crm", "The customer database.")
 * const FindCustomer = Tool.make("find_customer", { description: "…", success: Schema.String, namespace: Crm })
 * ```
 *
 * @since 0.3.0
 * @category constructors
 */
export const namespace = <const Name extends string>(
  name: Name,
  description: string
): { readonly name: Name; readonly description: string } => ({ name, description })

/**
 * The options of `make` besides `namespace`.
 *
 * @since 0.3.0
 * @category constructors
 */
export interface MakeOptions<
  Success extends Schema.Schema.All,
  P extends Schema.Struct.Fields | Schema.Schema.All,
  Failure extends Schema.Schema.All
> {
  readonly description: string
  readonly parameters?: P | undefined
  readonly success: Success
  readonly failure?: Failure | undefined
  readonly strict?: boolean | undefined
  readonly deferLoading?: boolean | undefined
}

// ---------------------------------------------------------------------------------------------------------
// JSON Schema
// ---------------------------------------------------------------------------------------------------------

type Json = { readonly [key: string]: unknown }

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The JSON Schema of a tool's parameters, as OpenAI takes it: the output of `JSONSchema.make` without
 * `$schema`; a root `$ref` into `$defs` (what a `Schema.Class` gives) inlined, since the API wants an
 * object at the root; a struct without fields given as `{"type":"object","properties":{},…}`.
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const parametersJsonSchema = (tool: Any): Record<string, unknown> => {
  const cached = jsonSchemas.get(tool)
  if (cached !== undefined) return cached
  const schema = makeParametersJsonSchema(tool)
  jsonSchemas.set(tool, schema)
  return schema
}

// A tool's JSON Schema is asked for on every model call and every tool call: make it once.
const jsonSchemas = new WeakMap<Any, Record<string, unknown>>()

const makeParametersJsonSchema = (tool: Any): Record<string, unknown> => {
  const ast = SchemaAST.encodedAST(tool.parameters.ast)
  if (SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return { type: "object", properties: {}, required: [], additionalProperties: false }
  }
  const { $schema: _, ...schema }: Record<string, unknown> = { ...JSONSchema.make(InternalSchema.erase(tool.parameters)) }
  return inlineRootRef(schema)
}

const inlineRootRef = (schema: Record<string, unknown>): Record<string, unknown> => {
  const ref = schema["$ref"]
  const defs = schema["$defs"]
  if (typeof ref !== "string" || !ref.startsWith("#/$defs/") || !isObject(defs)) return schema
  const name = ref.slice("#/$defs/".length)
  const target = defs[name]
  if (!isObject(target)) return schema
  const { [name]: _, ...otherDefs } = defs
  // keep the definition when something else still points at it (a recursive schema)
  const stillUsed = JSON.stringify({ target, otherDefs }).includes(JSON.stringify(ref))
  const keptDefs = stillUsed ? defs : otherDefs
  return {
    ...target,
    ...(Object.keys(keptDefs).length === 0 ? {} : { $defs: keptDefs })
  }
}

/**
 * Whether OpenAI strict mode can enforce a JSON Schema as it is: every object schema in it lists all its
 * properties as `required` and has `additionalProperties: false` (strict mode has no optional properties
 * and no open records).
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const isStrictCompatible = (schema: unknown): boolean => {
  if (!isObject(schema)) return true
  const properties = schema["properties"]
  if (schema["type"] === "object" || properties !== undefined) {
    if (schema["additionalProperties"] !== false) return false
    const required = Array.isArray(schema["required"]) ? schema["required"] : []
    if (isObject(properties) && !Object.keys(properties).every((key) => required.includes(key))) return false
  }
  for (const key of schemaMapKeywords) {
    const map = schema[key]
    if (isObject(map) && !Object.values(map).every(isStrictCompatible)) return false
  }
  for (const key of schemaKeywords) {
    const value = schema[key]
    if (Array.isArray(value) ? !value.every(isStrictCompatible) : !isStrictCompatible(value)) return false
  }
  return true
}

/** Keywords whose value is a map of names to schemas. */
const schemaMapKeywords = ["properties", "$defs", "definitions", "patternProperties"] as const

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

/**
 * The strict-mode form of a parameters JSON Schema (OpenAI "structured outputs" for function calling), or
 * `undefined` when strict mode cannot express it. Strict mode has no optional properties and no open
 * objects, so every object schema must close with `additionalProperties: false`, and each optional property
 * becomes required and nullable (`{"anyOf":[<schema>,{"type":"null"}]}`): the model then sends `null` for
 * what it leaves out, and the executor reads that `null` as absent before decoding (see `ToolExecutor`).
 * An object schema with open additional properties (a `Schema.Record`) has no strict form.
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const toStrict = (schema: Record<string, unknown>): Record<string, unknown> | undefined => {
  const strict = strictify(schema)
  return isObject(strict) && isStrictCompatible(strict) ? { ...strict } : undefined
}

/** Marks a schema that strict mode cannot express. */
const NotStrict: unique symbol = Symbol("NotStrict")

const strictify = (schema: unknown): unknown => {
  if (!isObject(schema)) return schema
  const out: Record<string, unknown> = { ...schema }
  const properties = schema["properties"]
  if (schema["type"] === "object" || properties !== undefined) {
    if (schema["additionalProperties"] !== false) return NotStrict
    if (isObject(properties)) {
      const required = Array.isArray(schema["required"]) ? schema["required"] : []
      const strictProperties: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(properties)) {
        const strict = strictify(value)
        if (strict === NotStrict) return NotStrict
        strictProperties[key] = required.includes(key) || InternalSchema.acceptsNull(strict) ? strict : nullable(strict)
      }
      out["properties"] = strictProperties
      out["required"] = Object.keys(properties)
    }
  }
  for (const key of schemaMapKeywords) {
    const map = schema[key]
    if (key === "properties" || !isObject(map)) continue
    const strictMap: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(map)) {
      const strict = strictify(value)
      if (strict === NotStrict) return NotStrict
      strictMap[name] = strict
    }
    out[key] = strictMap
  }
  for (const key of schemaKeywords) {
    const value = schema[key]
    if (value === undefined || (key === "additionalProperties" && value === false)) continue
    const strict = Array.isArray(value) ? value.map(strictify) : strictify(value)
    if (strict === NotStrict || (Array.isArray(strict) && strict.includes(NotStrict))) return NotStrict
    out[key] = strict
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
 * The tool as the model sees it: name, description, the JSON Schema of its parameters and `strict`.
 * Strict mode is used whenever the parameters have a strict form (`toStrict`: optional properties become
 * nullable), unless the tool says `strict: false`; without a strict form the schema goes as it is
 * (`parametersJsonSchema`), strict only if the tool forces it. The tool's `namespace` and `deferLoading`
 * go along. Sent as a Responses `function` tool.
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const definition = (tool: Any): LanguageModel.ToolDefinition => {
  const parameters = parametersJsonSchema(tool)
  const strict = tool.strict === false ? undefined : toStrict(parameters)
  return new LanguageModel.ToolDefinition({
    name: tool.name,
    description: tool.description,
    parameters: strict ?? parameters,
    strict: strict !== undefined || tool.strict === true,
    ...(tool.namespace === undefined ? {} : { namespace: tool.namespace }),
    ...(tool.deferLoading === undefined ? {} : { deferLoading: tool.deferLoading })
  })
}
