// Testing an app against a recorded session: the replay server answers each model call with the next
// recorded response and rejects a request a stateless client must not send (a reasoning item not handed
// back byte for byte, a function call without its output); the test also reads what the app sent.
import { Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayServer } from "@effect-responses/testing"
import { NodeContext, NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"
import { solve } from "./app.js"

const recording = fileURLToPath(
  new URL("../fixtures/responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt", import.meta.url)
)

// The replay server and a model that talks to it; `provideMerge` keeps the server in reach of the test.
const Replay = Layer.unwrapEffect(Effect.map(Capture.load(recording), (capture) => ReplayServer.layer({ capture }))).pipe(
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(NodeContext.layer)
)
const TestModel = ResponsesLanguageModel.layer({ model: "gpt-5.1-codex-max" }).pipe(
  Layer.provide(
    Layer.unwrapEffect(
      Effect.map(ReplayServer.ReplayServer, (server) => ResponsesClient.layer({ baseUrl: server.baseUrl }))
    )
  ),
  Layer.provide(NodeHttpClient.layerUndici),
  Layer.provideMerge(Replay)
)

describe("solve", () => {
  it.effect("computes (12 + 7) * 3 * 10 one calculator call at a time", () =>
    Effect.gen(function*() {
      expect(yield* solve("What is (12 + 7) * 3 * 10?")).toBe("The final result is **570**.")

      const requests = yield* (yield* ReplayServer.ReplayServer).requests
      expect(requests).toHaveLength(4)
      const outputs = requests[3]!.body.input as ReadonlyArray<{ type: string; output?: string }>
      expect(outputs.filter((item) => item.type === "function_call_output").map((item) => item.output)).toEqual([
        "19",
        "57",
        "570"
      ])
    }).pipe(Effect.provide(TestModel)))
})
