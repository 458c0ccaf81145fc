// The same LanguageModel over POST /v1/chat/completions (vLLM, llama.cpp, Ollama, DeepSeek, LM Studio, Azure).
// Runs offline: a loopback server replays a recorded gpt-4o-mini stream. For a real server, provide
// `ChatCompletionsClient.layerConfig()` (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MAX_RETRIES) instead of `Replayed`.
import { ChatCapture, ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { LanguageModel, Prompt } from "@effect-responses/core"
import { ChatReplayServer } from "@effect-responses/testing"
import { NodeContext, NodeHttpClient, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Stream } from "effect"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"

const program = LanguageModel.stream(Prompt.make("What is the capital of the UK?")).pipe(
  Stream.runForEach((element) => {
    if (element.type === "part" && element.part.type === "text") {
      const text = element.part.text
      return Effect.sync(() => process.stdout.write(text))
    }
    return element.type === "response_finished"
      ? Console.log(`\n(${element.finishReason}, ${element.usage.totalTokens} tokens)`)
      : Effect.void
  })
)

const recording = fileURLToPath(new URL("../fixtures/chat-sse/pai-chat-gpt4omini-text-usage.sse", import.meta.url))
const Replayed = Layer.unwrapEffect(
  Effect.map(ChatReplayServer.ChatReplayServer, (server) => ChatCompletionsClient.layer({ baseUrl: server.baseUrl }))
).pipe(
  Layer.provide(Layer.unwrapEffect(Effect.map(ChatCapture.load(recording), (capture) => ChatReplayServer.layer({ capture })))),
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(NodeContext.layer)
)

program.pipe(
  Effect.provide(ChatCompletionsLanguageModel.layer({ model: "gpt-4o-mini", maxOutputTokens: 500 })),
  Effect.provide(Replayed),
  Effect.provide(NodeHttpClient.layerUndici),
  NodeRuntime.runMain
)
