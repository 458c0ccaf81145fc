/**
 * The accessors and constructors an Effect user reaches for: `LanguageModel.generate` / `stream` with the
 * service in the context, `Prompt.make` / `append` / `concat`, and `ResponseFormat.resolve`.
 */
import {
  AiError,
  LanguageModel,
  Message,
  ModelResponse,
  Part,
  Prompt,
  ResponseFormat,
  StreamPart,
  Usage
} from "@effect-responses/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { pipe } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

const answer = new ModelResponse.ModelResponse({
  id: "resp_1",
  model: "m",
  status: "completed",
  finishReason: "stop",
  usage: Usage.empty,
  message: new Message.AssistantMessage({ parts: [new Part.TextPart({ text: "Paris" })] })
})

const calls: Array<{ readonly prompt: Prompt.Prompt; readonly options: LanguageModel.CallOptions | undefined }> = []
const Model = Layer.succeed(
  LanguageModel.LanguageModel,
  LanguageModel.LanguageModel.of({
    generate: (prompt, options) => Effect.sync(() => (calls.push({ prompt, options }), answer)),
    stream: (prompt, options) =>
      Stream.suspend(() => {
        calls.push({ prompt, options })
        return Stream.make(
          new StreamPart.ResponseStarted({ responseId: "resp_1", model: "m" }),
          new StreamPart.ResponseFinished({ responseId: "resp_1", status: "completed", finishReason: "stop", usage: Usage.empty })
        )
      })
  })
)

describe("LanguageModel accessors", () => {
  it.effect("generate and stream call the service in the context with the prompt and the call options", () =>
    Effect.gen(function*() {
      calls.length = 0
      const format = ResponseFormat.json(Schema.Struct({ city: Schema.String }))
      const response = yield* LanguageModel.generate(Prompt.make("Capital of France?"), { responseFormat: format })
      assert.strictEqual(response.text, "Paris")
      const parts = yield* Stream.runCollect(LanguageModel.stream(Prompt.make("again")))
      assert.deepStrictEqual(Array.from(parts, (part) => part.type), ["response_started", "response_finished"])
      assert.strictEqual(calls.length, 2)
      assert.strictEqual(calls[0]!.options?.responseFormat, format)
      assert.strictEqual(calls[1]!.prompt.messages[0]!.role, "user")
    }).pipe(Effect.provide(Model)))
})

describe("Prompt constructors", () => {
  it("make takes a string, a message, messages or a prompt", () => {
    const fromString = Prompt.make("hi")
    assert.strictEqual(fromString.messages.length, 1)
    const user = fromString.messages[0] as Message.UserMessage
    assert.strictEqual(user.role, "user")
    assert.strictEqual((user.parts[0] as Part.TextPart).text, "hi")
    const system = new Message.SystemMessage({ content: "Be brief." })
    assert.deepStrictEqual(Prompt.make(system).messages, [system])
    assert.deepStrictEqual(Prompt.make([system, user]).messages, [system, user])
    assert.strictEqual(Prompt.make(fromString), fromString)
  })

  it("append and concat read both ways", () => {
    const base = Prompt.system("Be brief.")
    const first = Prompt.append(base, "Capital of France?")
    const second = pipe(base, Prompt.append(Prompt.userMessage("Capital of France?")))
    assert.deepStrictEqual(JSON.stringify(first), JSON.stringify(second))
    assert.deepStrictEqual(first.messages.map((message) => message.role), ["system", "user"])
    const both = Prompt.concat(first, Prompt.make("And Italy?"))
    assert.deepStrictEqual(JSON.stringify(both), JSON.stringify(pipe(first, Prompt.concat(Prompt.make("And Italy?")))))
    assert.strictEqual(both.messages.length, 3)
  })
})

describe("ResponseFormat.resolve", () => {
  it.effect("text, json without a schema, json with an Effect Schema (strict when it fits) or a JSON Schema", () =>
    Effect.gen(function*() {
      expect(yield* ResponseFormat.resolve(ResponseFormat.text)).toStrictEqual({ type: "text" })
      expect(yield* ResponseFormat.resolve(ResponseFormat.json())).toStrictEqual({ type: "json_object" })
      expect(yield* ResponseFormat.resolve(ResponseFormat.json(Schema.Struct({ a: Schema.Number }), { description: "d" })))
        .toStrictEqual({
          type: "json_schema",
          name: "output",
          description: "d",
          strict: true,
          schema: { type: "object", required: ["a"], properties: { a: { type: "number" } }, additionalProperties: false }
        })
      const loose = yield* ResponseFormat.resolve(ResponseFormat.json({ type: "object" }, { name: "any" }))
      expect(loose).toStrictEqual({ type: "json_schema", name: "any", schema: { type: "object" }, strict: false })
    }))

  it.effect("a bad name or strict: true with an Effect Schema outside the strict subset is an InvalidPrompt; a JSON Schema object is sent as it is", () =>
    Effect.gen(function*() {
      const badName = yield* Effect.flip(ResponseFormat.resolve(ResponseFormat.json({ type: "object" }, { name: "a b" })))
      assert.instanceOf(badName, AiError.InvalidPrompt)
      assert.include(badName.description, "\"a b\"")
      const notStrict = yield* Effect.flip(
        ResponseFormat.resolve(
          ResponseFormat.json(Schema.Struct({ a: Schema.Record({ key: Schema.String, value: Schema.Number }) }), { strict: true })
        )
      )
      assert.include(notStrict.description, "$.a does not set additionalProperties: false")
      // a JSON Schema object with strict: true goes as it is, for the server to judge
      const optional = { type: "object", properties: { a: { type: "string" } }, required: [], additionalProperties: false }
      expect(yield* ResponseFormat.resolve(ResponseFormat.json(optional, { strict: true }))).toStrictEqual({
        type: "json_schema",
        name: "output",
        schema: optional,
        strict: true
      })
    }))
})

describe("schema identifiers", () => {
  it("every Schema class and tagged error of core is identified as @effect-responses/core/<Name>", () => {
    const modules = { AiError, LanguageModel, Message, ModelResponse, Part, Prompt, StreamPart, Usage }
    let classes = 0
    for (const module of Object.values(modules)) {
      for (const [name, value] of Object.entries(module)) {
        if (typeof value !== "function" || !("fields" in value) || !("identifier" in value)) continue
        classes++
        assert.strictEqual(value.identifier, `@effect-responses/core/${name}`, name)
      }
    }
    expect(classes).toBeGreaterThan(30)
  })
})
