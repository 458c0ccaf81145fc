// An app's test run offline: ReplayHttpClient answers from the recorded calculator session (a capture file
// of consecutive responses) and keeps every request the app sent, for checks; the call is made with the
// LanguageModel.generate accessor. Record such a file once against the live API with RecordingHttpClient.
// The recording here is the one the cli package ships in its demo/ folder (Demo.recordingPath), so this runs
// as it is where @effect-responses/cli is installed too; put the path of your own capture in its place.
import { Demo } from "@effect-responses/cli"
import { LanguageModel, Prompt } from "@effect-responses/core"
import { Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayHttpClient } from "@effect-responses/testing"
import { HttpClient } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"

const recording = Demo.recordingPath

const program = Effect.gen(function*() {
  const replay = yield* ReplayHttpClient.make(yield* Capture.load(recording))
  const response = yield* LanguageModel.generate(Prompt.make("What is (12 + 7) * 3 * 10?")).pipe(
    Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1-codex-max" })),
    Effect.provide(ResponsesClient.layer()),
    Effect.provideService(HttpClient.HttpClient, replay.client)
  )
  const calls = response.message.toolCalls.map((call) => `${call.name} ${call.arguments}`)
  yield* Console.log(`${replay.requests.length} request sent; the model asked for: ${calls.join("; ")}`)
})

program.pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
