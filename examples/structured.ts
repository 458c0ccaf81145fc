// Structured output over any LanguageModel: the model is asked for JSON matching an Effect Schema (the call's
// ResponseFormat: `text.format` over Responses, `response_format` over Chat Completions; strict when the Schema
// allows) and the answer is decoded with the same Schema. Runs offline: every request is answered by a
// recorded gpt-4o response body (an HttpClient stand-in); for the API, provide
// `ResponsesClient.layerConfig()` and `NodeHttpClient.layerUndici` instead of `Recorded`.
import { Prompt, StructuredOutput } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { FileSystem, HttpClient, HttpClientResponse } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Schema } from "effect"
import { fileURLToPath } from "node:url"

const CityLocation = Schema.Struct({ city: Schema.String, country: Schema.String })

const program = Effect.gen(function*() {
  const { response, value } = yield* StructuredOutput.generate(
    Prompt.user("What is the largest city in Mexico?"),
    CityLocation,
    { name: "CityLocation" }
  )
  yield* Console.log(`${value.city} (${value.country}), ${response.usage.totalTokens} tokens`)
})

const recording = fileURLToPath(new URL("../fixtures/responses-json/pai-gpt4o-json-schema-output.json", import.meta.url))
const Recorded = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const body = yield* (yield* FileSystem.FileSystem).readFileString(recording)
    return HttpClient.make((request) =>
      Effect.succeed(
        HttpClientResponse.fromWeb(request, new Response(body, { headers: { "content-type": "application/json" } }))
      )
    )
  })
).pipe(Layer.provide(NodeContext.layer))

program.pipe(
  Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-4o" })),
  Effect.provide(ResponsesClient.layer({})),
  Effect.provide(Recorded),
  NodeRuntime.runMain
)
