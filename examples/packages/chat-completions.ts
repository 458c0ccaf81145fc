import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { LanguageModel, Prompt } from "@effect-responses/core"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"

Effect.gen(function*() {
  const response = yield* LanguageModel.generate(Prompt.make("What is the capital of the UK?"))
  yield* Console.log(response.text)
}).pipe(
  Effect.provide(ChatCompletionsLanguageModel.layer({ model: "gpt-4o-mini" })),
  Effect.provide(ChatCompletionsClient.layerConfig()), // OPENAI_API_KEY, OPENAI_BASE_URL (e.g. http://localhost:11434/v1)
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain
)
