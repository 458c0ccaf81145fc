// The /v1/responses gateway started from a program, in front of a Chat Completions backend; then one request
// to it, as any Responses client (the OpenAI SDKs, Codex CLI) would send it. Runs offline: the backend is a
// loopback server replaying a recorded gpt-4o-mini stream. For a real backend, pass its URL as `baseUrl`
// (e.g. Ollama's "http://localhost:11434/v1") and a fixed `port`.
import { ChatCapture } from "@effect-responses/chat-completions"
import { Gateway, Upstream } from "@effect-responses/server"
import { ChatReplayServer } from "@effect-responses/testing"
import { HttpServer } from "@effect/platform"
import { NodeContext, NodeHttpClient, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"

const recording = fileURLToPath(new URL("../fixtures/chat-sse/pai-chat-gpt4omini-text-usage.sse", import.meta.url))
const Backend = Layer.unwrapEffect(
  Effect.map(ChatCapture.load(recording), (capture) => ChatReplayServer.layer({ capture }))
).pipe(
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(NodeContext.layer)
)

const GatewayLive = Gateway.layer({ builtinTools: "drop" }).pipe(
  Layer.provide(
    Layer.unwrapEffect(
      Effect.map(ChatReplayServer.ChatReplayServer, (backend) => Upstream.chatCompletions({ baseUrl: backend.baseUrl }))
    )
  ),
  Layer.provide(Backend),
  Layer.provide(NodeHttpClient.layerUndici),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

const program = Effect.gen(function*() {
  const address = yield* HttpServer.addressFormattedWith(Effect.succeed)
  const response = yield* Effect.promise(() =>
    fetch(`${address}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", input: "What is the capital of the UK?", store: false })
    }).then((r) => r.json())
  )
  const message = response.output.find((item: { type: string }) => item.type === "message")
  yield* Console.log(`${response.status}: ${message.content[0].text} (${response.usage.total_tokens} tokens)`)
})

program.pipe(Effect.provide(GatewayLive), NodeRuntime.runMain)
