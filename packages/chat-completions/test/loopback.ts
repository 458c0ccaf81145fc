/**
 * The Chat Completions model over real HTTP to a loopback `ChatReplayServer`: `ChatCompletionsLanguageModel`
 * -> `ChatCompletionsClient` -> undici -> a server on 127.0.0.1 replaying `capture`, one recorded response
 * per request. The layer provides the model and the server (to read the requests it received).
 */
import { type ChatCapture, ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { ChatReplayServer } from "@effect-responses/testing"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"

export const loopbackSession = (capture: ChatCapture.ChatCapture, model = "gpt-4o-mini") =>
  Layer.unwrapEffect(
    Effect.map(ChatReplayServer.ChatReplayServer, (server) =>
      ChatCompletionsLanguageModel.layer({ model }).pipe(
        Layer.provide(ChatCompletionsClient.layer({ baseUrl: server.baseUrl })),
        Layer.provideMerge(Layer.succeed(ChatReplayServer.ChatReplayServer, server))
      ))
  ).pipe(
    Layer.provide(ChatReplayServer.layer({ capture })),
    Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
