import { LanguageModel, Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"

Effect.gen(function*() {
  const response = yield* LanguageModel.generate(Prompt.make("Say hello in one word."))
  yield* Console.log(response.text)
}).pipe(
  Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1" })),
  Effect.provide(ResponsesClient.layerConfig()), // OPENAI_API_KEY, OPENAI_BASE_URL
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain
)
