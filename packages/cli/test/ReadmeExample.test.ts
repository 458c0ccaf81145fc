/**
 * The program of the README, run as written, with its configuration (`OPENAI_BASE_URL`) pointing at the
 * loopback replay server of the recorded calculator session: the README's example stays true.
 */
import { Prompt } from "@effect-responses/core"
import { Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayServer } from "@effect-responses/testing"
import { ToolLoop } from "@effect-responses/tools"
import { NodeContext, NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { CalculatorToolkit, CalculatorToolkitLive } from "@effect-responses/cli/Demo"
import { Demo } from "@effect-responses/cli"

// --- as in README.md ---
const program = Effect.gen(function*() {
  const result = yield* ToolLoop.generate(Prompt.user("What is (12 + 7) * 3 * 10?"), {
    toolkit: CalculatorToolkit
  })
  return result.text
}).pipe(
  Effect.provide(CalculatorToolkitLive),
  Effect.provide(
    ResponsesLanguageModel.layer({ model: "gpt-5.1" }).pipe(
      Layer.provide(ResponsesClient.layerConfig()), // OPENAI_API_KEY, OPENAI_BASE_URL
      Layer.provide(NodeHttpClient.layerUndici)
    )
  )
)
// ---

describe("README", () => {
  it.scoped("the example program answers 570 against the replayed session", () =>
    Effect.gen(function*() {
      const capture = yield* Capture.load(Demo.recordingPath)
      const context = yield* Layer.build(
        ReplayServer.layer({ capture, validate: Demo.validateResults }).pipe(
          Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
        )
      )
      const server = Context.get(context, ReplayServer.ReplayServer)
      const text = yield* program.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["OPENAI_BASE_URL", server.baseUrl]])))
      )
      assert.strictEqual(text, "The final result is **570**.")
    }).pipe(Effect.provide(NodeContext.layer)))
})
