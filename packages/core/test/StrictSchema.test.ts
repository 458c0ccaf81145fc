/**
 * The one strict-schema module: tool parameters and structured output get the same strict form (optional
 * properties required and nullable), the same reasons when there is none, and the same way back (a `null`
 * for an optional property read as the property left out).
 */
import { Message, ModelResponse, Part, ResponseFormat, StrictSchema, StructuredOutput, Usage } from "@effect-responses/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const Search = Schema.Struct({
  query: Schema.String,
  limit: Schema.optional(Schema.Number.annotations({ description: "At most this many." })),
  cursor: Schema.optional(Schema.NullOr(Schema.String)),
  filter: Schema.optional(Schema.Struct({ language: Schema.optional(Schema.String) }))
})

const STRICT_SEARCH = {
  type: "object",
  required: ["query", "limit", "cursor", "filter"],
  properties: {
    query: { type: "string" },
    limit: { anyOf: [{ type: "number" }, { type: "null" }], description: "At most this many." },
    // already nullable: left as it is
    cursor: { anyOf: [{ type: "string" }, { type: "null" }] },
    filter: {
      anyOf: [
        {
          type: "object",
          required: ["language"],
          properties: { language: { anyOf: [{ type: "string" }, { type: "null" }] } },
          additionalProperties: false
        },
        { type: "null" }
      ]
    }
  },
  additionalProperties: false
}

const answer = (text: string) =>
  new ModelResponse.ModelResponse({
    id: "resp_1",
    model: "m",
    status: "completed",
    finishReason: "stop",
    usage: Usage.empty,
    message: new Message.AssistantMessage({ parts: [new Part.TextPart({ text })] })
  })

describe("StrictSchema", () => {
  it("makes optional properties required and nullable, all the way down", () => {
    const schema = StrictSchema.fromSchema(Search)
    assert.isFalse(StrictSchema.isStrict(schema))
    assert.include(StrictSchema.incompatibility(schema)!, "$.limit is optional")
    expect(StrictSchema.toStrict(schema)).toStrictEqual(STRICT_SEARCH)
    assert.isTrue(StrictSchema.isStrict(STRICT_SEARCH))
  })

  it("has no strict form for an open object or a keyword outside the subset, and says why", () => {
    const record = StrictSchema.fromSchema(Schema.Struct({ tags: Schema.Record({ key: Schema.String, value: Schema.String }) }))
    expect(StrictSchema.strictForm(record)).toStrictEqual({ reason: "$.tags does not set additionalProperties: false" })
    const allOf = { type: "object", properties: { a: { allOf: [{ type: "string" }] } }, required: ["a"], additionalProperties: false }
    expect(StrictSchema.strictForm(allOf)).toStrictEqual({ reason: "$.a uses allOf" })
    expect(StrictSchema.strictForm({ type: "array", items: {} })).toStrictEqual({ reason: "the root is not an object schema" })
  })

  it.effect("takes $schema: zod 4's draft-7 output, which the openai SDK's zodTextFormat sends with strict: true", () =>
    Effect.gen(function*() {
      const zod = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { city: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
        required: ["city", "tags"],
        additionalProperties: false
      }
      assert.isUndefined(StrictSchema.incompatibility(zod))
      expect(yield* ResponseFormat.resolve(ResponseFormat.json(zod, { name: "city", strict: true }))).toStrictEqual({
        type: "json_schema",
        name: "city",
        schema: zod,
        strict: true
      })
    }))

  it("reads a null for an optional property as left out, and keeps the nulls a schema takes", () => {
    const schema = StrictSchema.fromSchema(Search)
    expect(
      StrictSchema.dropNullOptionals({ query: "q", limit: null, cursor: null, filter: { language: null } }, schema)
    ).toStrictEqual({ query: "q", cursor: null, filter: {} })
  })

  it.effect("structured output goes out in the strict form and decodes the model's nulls", () =>
    Effect.gen(function*() {
      const resolved = yield* ResponseFormat.resolve(StructuredOutput.format(Search))
      expect(resolved).toStrictEqual({ type: "json_schema", name: "output", schema: STRICT_SEARCH, strict: true })
      const value = yield* StructuredOutput.decode(
        answer(JSON.stringify({ query: "effect", limit: null, cursor: null, filter: { language: "ts" } })),
        Search
      )
      expect(value).toStrictEqual({ query: "effect", cursor: null, filter: { language: "ts" } })
    }))

  it.effect("strict: false sends the schema as it is; a JSON Schema object is sent as it is", () =>
    Effect.gen(function*() {
      const loose = yield* ResponseFormat.resolve(StructuredOutput.format(Search, { strict: false }))
      expect(loose).toStrictEqual({ type: "json_schema", name: "output", schema: StrictSchema.fromSchema(Search), strict: false })
      const json = { type: "object", properties: { a: { type: "string" } }, required: [], additionalProperties: false }
      expect(yield* ResponseFormat.resolve(ResponseFormat.json(json))).toStrictEqual({
        type: "json_schema",
        name: "output",
        schema: json,
        strict: false
      })
    }))
})
