/**
 * The tool loop of the library, end to end over real HTTP: `ResponsesLanguageModel` -> `ResponsesClient` ->
 * undici -> the loopback `ReplayServer` replaying the recorded `gpt-5.1-codex-max` calculator session
 * (vercel/ai, Apache-2.0), which checks each request like the stateless API would.
 */
import { AiError, Prompt } from "@effect-responses/core"
import { Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayServer } from "@effect-responses/testing"
import { ToolLoop } from "@effect-responses/tools"
import { Demo } from "@effect-responses/cli"
import { assert, describe, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { createServer } from "node:http"

const capture = await Effect.runPromise(Capture.load(Demo.recordingPath).pipe(Effect.provide(NodeContext.layer)))
const recorded = capture.responses.map(Capture.outputItems)

const session = Layer.unwrapEffect(
  Effect.map(ReplayServer.ReplayServer, (server) =>
    ResponsesLanguageModel.layer({ model: "gpt-5.1-codex-max" }).pipe(
      Layer.provide(ResponsesClient.layer({ baseUrl: server.baseUrl })),
      Layer.provideMerge(Layer.succeed(ReplayServer.ReplayServer, server))
    ))
).pipe(
  Layer.provide(ReplayServer.layer({ capture, validate: Demo.validateResults })),
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(NodeHttpClient.layerUndici)
)

type Item = Readonly<Record<string, unknown>>

const inputOf = (request: ReplayServer.ReplayRequest): ReadonlyArray<Item> => request.body.input as ReadonlyArray<Item>

/** Checks request 2 (index 1): the step-1 reasoning item verbatim, then the paired call and output. */
const assertStepTwoReplay = (request: ReplayServer.ReplayRequest, encryptedContent: string) => {
  const [reasoning, call] = recorded[0]!
  const input = inputOf(request)
  const replayedReasoning = input.find((item) => item.type === "reasoning")!
  assert.strictEqual(replayedReasoning.id, reasoning!.id)
  assert.strictEqual(replayedReasoning.encrypted_content, encryptedContent)
  assert.strictEqual((replayedReasoning.encrypted_content as string).length, 1060)
  const callAt = input.findIndex((item) => item.type === "function_call")
  assert.isAbove(callAt, input.indexOf(replayedReasoning))
  assert.deepInclude(input[callAt]!, { call_id: call!.call_id, name: "calculator", arguments: call!.arguments })
  assert.deepStrictEqual(input[callAt + 1], { type: "function_call_output", call_id: call!.call_id, output: "19" })
  assert.strictEqual(request.body.store, false)
  assert.deepStrictEqual(request.body.include, ["reasoning.encrypted_content"])
}

describe("the recorded calculator session over the loopback replay server", () => {
  it.effect("ToolLoop.stream reaches 570, handing back the reasoning item it streamed", () =>
    Effect.gen(function*() {
      const events = yield* ToolLoop.stream(Prompt.user(Demo.defaultPrompt), { toolkit: Demo.CalculatorToolkit }).pipe(
        Stream.runCollect
      )
      const last = Array.from(events).at(-1)!
      assert.strictEqual(last.type, "loop_finished")
      assert.strictEqual(last.type === "loop_finished" && last.finalText, "The final result is **570**.")
      assert.strictEqual(last.type === "loop_finished" && last.steps, 4)
      const results = Array.from(events).flatMap((e) => e.type === "tool_result" && e.result.type === "tool_result" ? [e.result.output] : [])
      assert.deepStrictEqual(results, ["19", "57", "570"])

      const requests = yield* (yield* ReplayServer.ReplayServer).requests
      assert.deepStrictEqual(requests.map((r) => r.index), [0, 1, 2, 3])
      assert.isTrue(requests.every((r) => r.body.stream === true))
      // streamed: the encrypted_content of response.output_item.done
      const done = capture.responses[0]!.events.find((e) => e.type === "response.output_item.done")!
      assertStepTwoReplay(requests[1]!, (done.json.item as Item).encrypted_content as string)
    }).pipe(Effect.provide(Demo.CalculatorToolkitLive), Effect.provide(session)))

  it.effect("ToolLoop.generate reaches 570, handing back the reasoning item of the response object", () =>
    Effect.gen(function*() {
      const result = yield* ToolLoop.generate(Prompt.user(Demo.defaultPrompt), { toolkit: Demo.CalculatorToolkit })
      assert.strictEqual(result.text, "The final result is **570**.")
      assert.strictEqual(result.steps.length, 4)
      assert.deepStrictEqual(
        [result.usage.inputTokens, result.usage.outputTokens, result.usage.totalTokens],
        [134 + 221 + 260 + 299, 28 + 26 + 26 + 12, 162 + 247 + 286 + 311]
      )
      const requests = yield* (yield* ReplayServer.ReplayServer).requests
      assert.isTrue(requests.every((r) => r.body.stream === false))
      // not streamed: the encrypted_content of the terminal response.output
      assertStepTwoReplay(requests[1]!, recorded[0]![0]!.encrypted_content as string)
      // the transcript: the prompt, then each assistant message with all its parts and each tool message
      const messages = result.transcript.messages
      assert.deepStrictEqual(
        messages.map((m) => m.role),
        ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
      )
      const first = messages[1]!
      assert.isTrue(first.role === "assistant")
      if (first.role === "assistant") {
        assert.deepStrictEqual(first.parts.map((p) => p.type), ["reasoning", "tool_call"])
        const reasoning = first.parts[0]!
        assert.strictEqual(reasoning.type === "reasoning" && reasoning.payload?.data.length, 1060)
        assert.strictEqual(reasoning.attributes.itemId, recorded[0]![0]!.id)
      }
      assert.deepStrictEqual(
        messages.flatMap((m) => m.role === "tool" ? m.toolResults.map((r) => [r.callId, r.output]) : []),
        recorded.slice(0, 3).map((items, i) => [items.at(-1)!.call_id, ["19", "57", "570"][i]])
      )
      // the last request hands back all three calls with their results, in order
      const outputs = inputOf(requests[3]!).filter((i) => i.type === "function_call_output").map((i) => i.output)
      assert.deepStrictEqual(outputs, ["19", "57", "570"])
    }).pipe(Effect.provide(Demo.CalculatorToolkitLive), Effect.provide(session)))

  it.effect("a tool handler that computes wrong makes the server answer 400 and the loop fail with a typed error", () =>
    Effect.gen(function*() {
      const WrongCalculator = Demo.CalculatorToolkit.toLayer({
        calculator: (params) => Effect.map(Demo.calculate(params), (n) => n + 1)
      })
      const error = yield* Effect.flip(
        ToolLoop.generate(Prompt.user(Demo.defaultPrompt), { toolkit: Demo.CalculatorToolkit }).pipe(
          Effect.provide(WrongCalculator)
        )
      )
      // the model call of step 2 failed: the error keeps step 1 and the (wrong) answer sent
      assert.strictEqual(error._tag, "StepFailed")
      const failed = error as ToolLoop.StepFailed
      assert.strictEqual(failed.step, 2)
      assert.isTrue(AiError.isAiError(failed.error))
      assert.strictEqual(failed.error._tag, "HttpError")
      const http = failed.error as AiError.HttpError
      assert.strictEqual(http.status, 400)
      assert.strictEqual(http.errorType, "invalid_request_error")
      assert.include(http.message, "call_AB6AaRZ1FYZB2RwS6A5vbdqn")
      assert.include(http.message, "\"20\"")
      assert.include(http.message, "computed with 19")
    }).pipe(Effect.provide(session)))
})
