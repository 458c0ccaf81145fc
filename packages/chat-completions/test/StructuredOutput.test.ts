/**
 * Structured output over Chat Completions: core's `StructuredOutput.generate` sends the format as
 * `response_format` and decodes the recorded gpt-4o `json_schema` answer (pydantic-ai, MIT: see
 * `fixtures/SOURCES.md`).
 */
import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { LanguageModel, Prompt, ResponseFormat, StructuredOutput } from "@effect-responses/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { readFixture } from "./fixtures.js"

const recorded = readFixture("chat-json/pai-chat-gpt4o-json-schema.json")

const fake = (options: ChatCompletionsLanguageModel.Options) => {
  const requests: Array<Record<string, unknown>> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      if (request.body._tag === "Uint8Array") requests.push(JSON.parse(new TextDecoder().decode(request.body.body)))
      return HttpClientResponse.fromWeb(request, new Response(recorded, { headers: { "content-type": "application/json" } }))
    })
  )
  const layer = ChatCompletionsLanguageModel.layer(options).pipe(
    Layer.provide(ChatCompletionsClient.layer({ baseUrl: "http://x/v1" })),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
  )
  return { requests, layer }
}

const CityLocation = Schema.Struct({ city: Schema.String, country: Schema.String })

describe("StructuredOutput over Chat Completions", () => {
  it.effect("sends a strict json_schema response_format and decodes the recorded answer with the same Schema", () =>
    Effect.gen(function*() {
      const http = fake({ model: "gpt-4o" })
      const { value } = yield* StructuredOutput.generate(Prompt.make("What is the largest city in Mexico?"), CityLocation, {
        name: "city_location"
      }).pipe(Effect.provide(http.layer))
      expect(value).toStrictEqual({ city: "Mexico City", country: "Mexico" })
      expect(http.requests[0]!.response_format).toStrictEqual({
        type: "json_schema",
        json_schema: {
          name: "city_location",
          strict: true,
          schema: {
            type: "object",
            required: ["city", "country"],
            properties: { city: { type: "string" }, country: { type: "string" } },
            additionalProperties: false
          }
        }
      })
    }))

  it.effect("the call's responseFormat replaces the layer's; json without a schema is json_object", () =>
    Effect.gen(function*() {
      const http = fake({ model: "gpt-4o", responseFormat: ResponseFormat.text })
      yield* LanguageModel.generate(Prompt.make("hi")).pipe(Effect.provide(http.layer))
      yield* LanguageModel.generate(Prompt.make("hi"), { responseFormat: ResponseFormat.json() }).pipe(
        Effect.provide(http.layer)
      )
      expect(http.requests.map((body) => body.response_format)).toStrictEqual([{ type: "text" }, { type: "json_object" }])
    }))

  it.effect("a format that cannot be sent fails the call with InvalidPrompt before any request", () =>
    Effect.gen(function*() {
      const http = fake({ model: "gpt-4o" })
      const open = Schema.Struct({ population: Schema.Record({ key: Schema.String, value: Schema.Number }) })
      const error = yield* Effect.flip(
        LanguageModel.generate(Prompt.make("hi"), { responseFormat: ResponseFormat.json(open, { strict: true }) }).pipe(
          Effect.provide(http.layer)
        )
      )
      assert.strictEqual(error._tag, "InvalidPrompt")
      assert.include(error.message, "$.population does not set additionalProperties: false")
      assert.strictEqual(http.requests.length, 0)
    }))
})

describe("ChatCompletionsLanguageModel.withOptions", () => {
  it.effect("overrides merge over the layer's options for the calls of one effect, inner over outer", () =>
    Effect.gen(function*() {
      const http = fake({ model: "gpt-4o", temperature: 1, extraBody: { a: 1 } })
      const call = LanguageModel.generate(Prompt.make("hi"))
      yield* call.pipe(
        ChatCompletionsLanguageModel.withOptions({ temperature: 0, maxOutputTokens: 50 }),
        ChatCompletionsLanguageModel.withOptions({ temperature: 0.5, extraBody: { b: 2 } }),
        Effect.provide(http.layer)
      )
      yield* call.pipe(Effect.provide(http.layer))
      expect(http.requests[0]).toMatchObject({ model: "gpt-4o", temperature: 0, max_completion_tokens: 50, a: 1, b: 2 })
      expect(http.requests[1]).toMatchObject({ temperature: 1, a: 1 })
      assert.isUndefined(http.requests[1]!.max_completion_tokens)
    }))
})
