/**
 * Structured output over a fake `HttpClient` answering with the recorded gpt-4o json_schema response
 * (pydantic-ai, MIT: see `fixtures/SOURCES.md`).
 */
import { AiError, Message, ModelResponse, Part, Prompt, StructuredOutput, Usage } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { readFixture } from "./fixtures.js"

const fixture = readFixture("responses-json/pai-gpt4o-json-schema-output.json")

const fake = (body: string) => {
  const requests: Array<Record<string, unknown>> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      if (request.body._tag === "Uint8Array") requests.push(JSON.parse(new TextDecoder().decode(request.body.body)))
      return HttpClientResponse.fromWeb(request, new Response(body, { headers: { "content-type": "application/json" } }))
    })
  )
  const layer = ResponsesLanguageModel.layer({ model: "gpt-4o", text: { verbosity: "low" } }).pipe(
    Layer.provide(ResponsesClient.layer()),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
  )
  return { requests, layer }
}

/** The JSON text the recorded response holds. */
const recordedText = (JSON.parse(fixture) as {
  readonly output: ReadonlyArray<{ readonly content?: ReadonlyArray<{ readonly text: string }> }>
}).output.find((item) => item.content !== undefined)!.content![0]!.text

const response = (parts: ReadonlyArray<Part.AssistantPart>, finishReason: ModelResponse.FinishReason = "stop") =>
  new ModelResponse.ModelResponse({
    id: "resp_1",
    model: "m",
    status: finishReason === "length" ? "incomplete" : "completed",
    finishReason,
    usage: Usage.empty,
    message: new Message.AssistantMessage({ parts })
  })

describe("StructuredOutput", () => {
  it.effect("generate sends a strict json_schema format and decodes the final text with the same Schema", () =>
    Effect.gen(function*() {
      // Decode with a Schema that fits whatever the recording holds: its keys, as unknown values.
      const keys = Object.keys(JSON.parse(recordedText) as Record<string, unknown>)
      const Output = Schema.Struct(Object.fromEntries(keys.map((key) => [key, Schema.Unknown])))
      const http = fake(fixture)
      const { response: modelResponse, value } = yield* StructuredOutput.generate(Prompt.user("…"), Output, { name: "result" }).pipe(
        Effect.provide(http.layer)
      )
      expect(value).toStrictEqual(JSON.parse(recordedText))
      assert.strictEqual(modelResponse.text, recordedText)
      const text = http.requests[0]!.text as { readonly verbosity: string; readonly format: Record<string, unknown> }
      assert.strictEqual(text.verbosity, "low")
      expect(text.format).toMatchObject({ type: "json_schema", name: "result", schema: { type: "object" } })
    }))

  it.effect("a schema mismatch fails with StructuredOutputError naming the path", () =>
    Effect.gen(function*() {
      const Strict = Schema.Struct({ city: Schema.String, population: Schema.Number })
      const mismatch = yield* Effect.flip(
        StructuredOutput.decode(response([new Part.TextPart({ text: "{\"city\":\"Paris\",\"population\":\"many\"}" })]), Strict)
      )
      assert.instanceOf(mismatch, AiError.StructuredOutputError)
      assert.strictEqual(mismatch.reason, "mismatch")
      assert.include(mismatch.description, "at population")
      assert.strictEqual(mismatch.responseId, "resp_1")
      const notJson = yield* Effect.flip(StructuredOutput.decode(response([new Part.TextPart({ text: "Paris" })]), Strict))
      assert.strictEqual(notJson.reason, "mismatch")
      assert.strictEqual(notJson.excerpt, "Paris")
    }))

  it.effect("a refusal, an incomplete response and a response without text are typed errors too", () =>
    Effect.gen(function*() {
      const schema = Schema.Struct({ a: Schema.Number })
      const refusal = yield* Effect.flip(StructuredOutput.decode(response([new Part.RefusalPart({ text: "I can't help with that." })]), schema))
      assert.strictEqual(refusal.reason, "refusal")
      assert.include(refusal.message, "I can't help with that.")
      const cut = yield* Effect.flip(StructuredOutput.decode(response([new Part.TextPart({ text: "{\"a\":" })], "length"), schema))
      assert.strictEqual(cut.reason, "incomplete")
      const none = yield* Effect.flip(StructuredOutput.decode(response([]), schema))
      assert.strictEqual(none.reason, "missing")
      assert.isTrue(AiError.isAiError(none))
      assert.isFalse(none.retryable)
    }))

  it.effect("the final_answer text is decoded, not the commentary before it", () =>
    Effect.gen(function*() {
      const value = yield* StructuredOutput.decode(
        response([
          new Part.TextPart({ text: "Let me think.", attributes: { phase: "commentary" } }),
          new Part.TextPart({ text: "{\"a\":1}", attributes: { phase: "final_answer" } })
        ]),
        Schema.Struct({ a: Schema.Number })
      )
      expect(value).toStrictEqual({ a: 1 })
    }))
})
