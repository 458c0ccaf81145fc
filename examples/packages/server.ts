import { Gateway, Upstream } from "@effect-responses/server"
import { NodeHttpClient, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { createServer } from "node:http"

// POST http://127.0.0.1:8787/v1/responses, answered by a Chat Completions server (here Ollama)
Gateway.layer().pipe(
  Layer.provide(Upstream.chatCompletions({ baseUrl: "http://localhost:11434/v1" })),
  Layer.provide(NodeHttpClient.layerUndici),
  Layer.provide(NodeHttpServer.layer(createServer, { port: 8787, host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
