/**
 * The tool loop, unchanged, over Chat Completions end to end over real HTTP: `ToolLoop` ->
 * `ChatCompletionsLanguageModel` -> `ChatCompletionsClient` -> undici -> a loopback `ChatReplayServer`
 * replaying the recorded gpt-4o-mini `get_capital` call and its follow-up answer (pydantic-ai, MIT: see
 * `fixtures/SOURCES.md`).
 */
import { ChatCapture } from "@effect-responses/chat-completions"
import { Prompt } from "@effect-responses/core"
import { ChatReplayServer } from "@effect-responses/testing"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { readFixture, TEXT_SSE, TOOL_CALL_SSE } from "./fixtures.js"
import { loopbackSession } from "./loopback.js"

const GetCapital = Tool.make("get_capital", {
  description: "The capital of a country.",
  parameters: Schema.Struct({ country: Schema.String }),
  success: Schema.String
})
const Geography = Toolkit.make(GetCapital)
const GeographyLive = Geography.toLayer({
  get_capital: ({ country }) => Effect.succeed(country === "UK" ? "London" : "unknown")
})

const capture = Effect.runSync(
  ChatCapture.parse(`${readFixture(TOOL_CALL_SSE)}${readFixture(TEXT_SSE)}`, "tool-call + text")
)

const session = loopbackSession(capture)

const prompt = Prompt.user("What is the capital of the UK?")

describe("ToolLoop over Chat Completions and the loopback chat replay server", () => {
  it("the concatenated capture holds the two recorded responses", () => {
    expect(capture.responses.map((response) => response.id)).toStrictEqual([
      "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl",
      "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc"
    ])
  })

  for (const mode of ["stream", "generate"] as const) {
    it.effect(`ToolLoop.${mode} runs two steps; the second request carries the tool_calls and the tool message`, () =>
      Effect.gen(function*() {
        let finalText: string
        let steps: number
        if (mode === "stream") {
          const events = Array.from(yield* Stream.runCollect(ToolLoop.stream(prompt, { toolkit: Geography })))
          const last = events.at(-1)!
          assert.strictEqual(last.type, "loop_finished")
          finalText = last.type === "loop_finished" ? last.finalText : ""
          steps = last.type === "loop_finished" ? last.steps : 0
          const results = events.filter((event) => event.type === "tool_result")
          assert.strictEqual(results.length, 1)
        } else {
          const result = yield* ToolLoop.generate(prompt, { toolkit: Geography })
          finalText = result.text
          steps = result.steps.length
          expect(result.usage).toMatchObject({ inputTokens: 53 + 78, outputTokens: 15 + 9 })
        }
        assert.strictEqual(finalText, "The capital of the UK is London.")
        assert.strictEqual(steps, 2)
        const server = yield* ChatReplayServer.ChatReplayServer
        const requests = yield* server.requests
        assert.strictEqual(requests.length, 2)
        const [first, second] = requests
        assert.strictEqual(first!.body.stream, mode === "stream")
        expect(first!.body.tools).toMatchObject([{ type: "function", function: { name: "get_capital" } }])
        expect(second!.body.messages).toStrictEqual([
          { role: "user", content: "What is the capital of the UK?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_ZR5UUuTt3pf61kjwAJIYdVMj",
              type: "function",
              function: { name: "get_capital", arguments: "{\"country\":\"UK\"}" }
            }]
          },
          { role: "tool", tool_call_id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", content: "\"London\"" }
        ])
      }).pipe(Effect.provide(GeographyLive), Effect.provide(session)))
  }

  it.effect("a follow-up without the tool message: the unanswered call is dropped with a warning before the request", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) warnings.push(String(message))
      })
      const result = yield* ToolLoop.generate(prompt, { toolkit: Geography, execute: false })
      const error = yield* Effect.flip(ToolLoop.generate(result.transcript, { toolkit: Geography, execute: false })).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0], "call_ZR5UUuTt3pf61kjwAJIYdVMj")
      // the replay server still wants the recorded call handed back: what was sent lacks it
      assert.strictEqual(error._tag, "StepFailed")
      const cause = error._tag === "StepFailed" ? error.error : error
      assert.strictEqual(cause._tag, "HttpError")
      if (cause._tag === "HttpError") assert.strictEqual(cause.code, "missing_replayed_message")
    }).pipe(Effect.provide(session)))
})
