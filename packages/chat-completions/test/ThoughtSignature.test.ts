/**
 * Gemini's thought signatures over its OpenAI compatibility: a tool call carries
 * `extra_content.google.thought_signature`, and the next turn is refused (400 "Function call is missing a
 * thought_signature in functionCall parts") unless the assistant message's tool call carries it back
 * (ai.google.dev/gemini-api/docs/thought-signatures; openai/codex#7586). The chunk is the one a tester
 * captured from `gemini-3-pro-preview` (no `index` on the call, `finish_reason: "stop"`).
 */
import { ChatCapture, ChatCompletionsOutput, ChatCompletionsRequest, ChatCompletionsStream } from "@effect-responses/chat-completions"
import { Message, Part, Prompt } from "@effect-responses/core"
import { MessageAggregator } from "@effect-responses/aggregate"
import { ChatReplayServer } from "@effect-responses/testing"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { loopbackSession } from "./loopback.js"

const SIGNATURE = "CiQB0e2Kb8cfVQ8n1sQ8qGvZ7uYtBmW1tqk6Gx3m2Ew3kX0="
const EXTRA = { google: { thought_signature: SIGNATURE } }

const frame = (id: string, delta: Record<string, unknown>, finish: string | null) =>
  `data: ${
    JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created: 1,
      model: "gemini-3-pro-preview",
      choices: [{ index: 0, delta, finish_reason: finish }]
    })
  }\n\n`

const TOOL_TURN = frame("g1", {
  role: "assistant",
  tool_calls: [{
    extra_content: EXTRA,
    function: { arguments: "{\"country\":\"UK\"}", name: "get_capital" },
    id: "function-call-8723457193",
    type: "function"
  }]
}, "stop") + "data: [DONE]\n\n"

const TEXT_TURN = frame("g2", { role: "assistant", content: "The capital of the UK is London." }, "stop") + "data: [DONE]\n\n"

const GetCapital = Tool.make("get_capital", {
  description: "The capital of a country.",
  parameters: Schema.Struct({ country: Schema.String }),
  success: Schema.String
})
const Geography = Toolkit.make(GetCapital)
const GeographyLive = Geography.toLayer({ get_capital: () => Effect.succeed("London") })

const payload = new Part.OpaquePayload({
  provider: ChatCompletionsOutput.PROVIDER,
  kind: ChatCompletionsOutput.EXTRA_CONTENT,
  data: JSON.stringify(EXTRA)
})

describe("Gemini thought signatures (a tool call's extra_content)", () => {
  it.effect("a streamed call's extra_content is its part's payload, on its delta and its completing part", () =>
    Effect.gen(function*() {
      const parts = Chunk.toReadonlyArray(yield* Stream.runCollect(ChatCompletionsStream.decodeSseText(Stream.make(TOOL_TURN))))
      const calls = parts.flatMap((element) => element.type === "part" && element.part.type === "tool_call" ? [element] : [])
      expect(calls.map((update) => [update.partial, update.part.type === "tool_call" && update.part.payload])).toStrictEqual([
        [true, payload],
        [false, payload]
      ])
      const [response] = MessageAggregator.done(parts.reduce(MessageAggregator.step, MessageAggregator.empty))
      const call = response!.message.parts[0]
      assert.strictEqual(call?.type, "tool_call")
      assert.deepStrictEqual(call?.type === "tool_call" ? call.payload : undefined, payload)
    }))

  it.effect("a whole answer's call keeps it too", () =>
    Effect.gen(function*() {
      const response = yield* ChatCompletionsOutput.fromCompletion({
        id: "g1",
        model: "gemini-3-pro-preview",
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            tool_calls: [{ extra_content: EXTRA, function: { arguments: "{}", name: "get_capital" }, id: "function-call-1", type: "function" }]
          },
          finish_reason: "stop"
        }]
      })
      const call = response.message.parts[0]
      assert.deepStrictEqual(call?.type === "tool_call" ? call.payload : undefined, payload)
    }))

  it.effect("the request sends it back as the tool call's extra_content; a payload of another provider is not sent", () =>
    Effect.gen(function*() {
      const message = (payloads: ReadonlyArray<Part.OpaquePayload>) =>
        new Message.AssistantMessage({
          role: "assistant",
          parts: payloads.map((p, index) => new Part.ToolCallPart({ callId: `c${index}`, name: "get_capital", arguments: "{}", payload: p }))
        })
      const other = new Part.OpaquePayload({ provider: "openai.responses", kind: "encrypted_content", data: "x" })
      const body = yield* ChatCompletionsRequest.fromPrompt(
        Prompt.make([
          Prompt.userMessage("hi"),
          message([payload, other]),
          new Message.ToolMessage({
            role: "tool",
            results: ["c0", "c1"].map((callId) => new Part.ToolResultPart({ callId, name: "get_capital", output: "London" }))
          })
        ]),
        { model: "gemini-3-pro-preview" }
      )
      expect(body.messages[1]).toStrictEqual({
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c0", type: "function", function: { name: "get_capital", arguments: "{}" }, extra_content: EXTRA },
          { id: "c1", type: "function", function: { name: "get_capital", arguments: "{}" } }
        ]
      })
    }))

  const capture = Effect.runSync(ChatCapture.parse(`${TOOL_TURN}${TEXT_TURN}`, "gemini tool call + text"))
  for (const mode of ["stream", "generate"] as const) {
    it.effect(`ToolLoop.${mode}: the second request's tool call carries the signature back`, () =>
      Effect.gen(function*() {
        const prompt = Prompt.user("What is the capital of the UK?")
        const text = mode === "stream"
          ? yield* Stream.runCollect(ToolLoop.stream(prompt, { toolkit: Geography })).pipe(
            Effect.map((events) => {
              const last = Chunk.unsafeLast(events)
              return last.type === "loop_finished" ? last.finalText : ""
            })
          )
          : (yield* ToolLoop.generate(prompt, { toolkit: Geography })).text
        assert.strictEqual(text, "The capital of the UK is London.")
        const requests = yield* Effect.flatMap(ChatReplayServer.ChatReplayServer, (server) => server.requests)
        const messages = requests[1]!.body.messages as ReadonlyArray<{ readonly role: string; readonly tool_calls?: unknown }>
        expect(messages.find((m) => m.role === "assistant")?.tool_calls).toStrictEqual([{
          id: "function-call-8723457193",
          type: "function",
          function: { name: "get_capital", arguments: "{\"country\":\"UK\"}" },
          extra_content: EXTRA
        }])
      }).pipe(Effect.provide(GeographyLive), Effect.provide(loopbackSession(capture, "gemini-3-pro-preview"))))
  }
})
