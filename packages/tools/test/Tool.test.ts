import { Tool } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { Calculator } from "./calculator.js"

describe("Tool", () => {
  it("defines the calculator exactly as the recorded request sent it", () => {
    const definition = Tool.definition(Calculator)
    // the `tools` entry of the recording's request (response.created echoes it)
    expect(JSON.parse(JSON.stringify(definition))).toStrictEqual({
      name: "calculator",
      description: "A minimal calculator for basic arithmetic. Call it once per step.",
      parameters: {
        type: "object",
        properties: {
          a: { type: "number", description: "First operand." },
          b: { type: "number", description: "Second operand." },
          op: {
            type: "string",
            enum: ["add", "subtract", "multiply", "divide"],
            default: "add",
            description: "Arithmetic operation to perform."
          }
        },
        required: ["a", "b", "op"],
        additionalProperties: false
      },
      strict: true
    })
  })

  it("makes optional properties required and nullable in strict mode", () => {
    const tool = Tool.make("search", {
      description: "Search.",
      parameters: {
        query: Schema.String,
        limit: Schema.optional(Schema.Number.annotations({ description: "At most this many." })),
        cursor: Schema.optional(Schema.NullOr(Schema.String))
      },
      success: Schema.Array(Schema.String)
    })
    const definition = Tool.functionDefinition(tool)
    assert.isTrue(definition.strict)
    expect(definition.parameters).toStrictEqual({
      type: "object",
      properties: {
        query: { type: "string" },
        limit: { anyOf: [{ type: "number" }, { type: "null" }], description: "At most this many." },
        cursor: { anyOf: [{ type: "string" }, { type: "null" }] }
      },
      required: ["query", "limit", "cursor"],
      additionalProperties: false
    })
    assert.isTrue(Tool.isStrictCompatible(definition.parameters))
    // without strict mode the schema goes as JSONSchema.make gives it
    const loose = Tool.functionDefinition(Tool.make("search", { ...tool, strict: false }))
    assert.isFalse(loose.strict)
    assert.deepStrictEqual((loose.parameters as { required: Array<string> }).required, ["query"])
  })

  it("is not strict by default when a nested object is an open record", () => {
    const tool = Tool.make("tag", {
      description: "Tag.",
      parameters: { labels: Schema.Record({ key: Schema.String, value: Schema.String }) },
      success: Schema.Boolean
    })
    assert.isFalse(Tool.functionDefinition(tool).strict)
    assert.isFalse(Tool.isStrictCompatible({ type: "object", properties: { x: { type: "string" } }, required: [] }))
  })

  it("gives a tool without parameters an empty object schema", () => {
    const tool = Tool.make("now", { description: "The time.", success: Schema.String })
    expect(Tool.functionDefinition(tool).parameters).toStrictEqual({
      type: "object",
      properties: {},
      required: [],
      additionalProperties: false
    })
    assert.isTrue(Tool.functionDefinition(tool).strict)
  })

  it("inlines the root definition of a class schema", () => {
    class Point extends Schema.Class<Point>("Point")({ x: Schema.Number, y: Schema.Number }) {}
    const tool = Tool.make("plot", { description: "Plot.", parameters: Point, success: Schema.Boolean })
    const parameters = Tool.functionDefinition(tool).parameters
    assert.strictEqual(parameters["type"], "object")
    assert.isUndefined(parameters["$ref"])
    assert.isUndefined(parameters["$schema"])
    assert.isUndefined(parameters["$defs"])
    expect(parameters["required"]).toStrictEqual(["x", "y"])
  })

  it("describes the encoded side of its parameters, which is what the model writes", () => {
    const tool = Tool.make("wait", {
      description: "Wait.",
      parameters: { seconds: Schema.NumberFromString },
      success: Schema.Void
    })
    const parameters = Tool.functionDefinition(tool).parameters
    assert.isUndefined(parameters["$schema"])
    const seconds = (parameters["properties"] as Record<string, Record<string, unknown>>)["seconds"]!
    const ref = seconds["$ref"]
    assert.strictEqual(ref, "#/$defs/NumberFromString")
    expect((parameters["$defs"] as Record<string, unknown>)["NumberFromString"]).toMatchObject({ type: "string" })
  })
})
