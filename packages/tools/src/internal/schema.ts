import { StrictSchema } from "@effect-responses/core"
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

/**
 * `value` with every `null` removed where the (non-strict) JSON Schema has an optional property that does
 * not accept `null` (core's `StrictSchema.dropNullOptionals`).
 *
 * @internal
 */
export const dropNullOptionals: (value: unknown, schema: unknown) => unknown = StrictSchema.dropNullOptionals
