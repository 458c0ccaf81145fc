// Request options on the layer, built-in tools, and other options for one call. Runs offline: an HttpClient
// stand-in prints the request body the client sends and answers with a recorded gpt-5 web search response
// body; for the API, provide `ResponsesClient.layerConfig()` and `NodeHttpClient.layerUndici` instead.
import { LanguageModel, Prompt } from "@effect-responses/core"
import { BuiltInTool, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { FileSystem, HttpClient, HttpClientResponse } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"

const Model = ResponsesLanguageModel.layer({
  model: "gpt-5",
  reasoning: { effort: "low", summary: "auto" },
  builtInTools: [
    BuiltInTool.webSearch({ searchContextSize: "low" }),
    BuiltInTool.mcp({ serverLabel: "deepwiki", serverUrl: "https://mcp.deepwiki.com/mcp" }) // require_approval "never"
  ],
  maxOutputTokens: 4000
})

const program = Effect.gen(function*() {
  const response = yield* LanguageModel.generate(Prompt.make("What are the top world news stories today?")).pipe(
    ResponsesLanguageModel.withOptions({ reasoning: { effort: "high" } }) // merged over the layer's, for this call
  )
  const searches = response.message.parts.filter((part) => part.type === "unknown" && part.kind === "web_search_call")
  yield* Console.log(`${searches.length} web searches, ${response.text.length} characters of answer`)
})

const recording = fileURLToPath(new URL("../fixtures/responses-json/pai-gpt5-web-search-url-citations.json", import.meta.url))
const Recorded = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const body = yield* (yield* FileSystem.FileSystem).readFileString(recording)
    return HttpClient.make((request) =>
      Effect.gen(function*() {
        if (request.body._tag === "Uint8Array") yield* Console.log(new TextDecoder().decode(request.body.body))
        return HttpClientResponse.fromWeb(request, new Response(body, { headers: { "content-type": "application/json" } }))
      })
    )
  })
).pipe(Layer.provide(NodeContext.layer))

program.pipe(
  Effect.provide(Model),
  Effect.provide(ResponsesClient.layer({})),
  Effect.provide(Recorded),
  NodeRuntime.runMain
)
