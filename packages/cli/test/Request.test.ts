/**
 * The `request` verb: a Prompt (JSON) -> the Responses request body, in process (run as a user runs it
 * in `spawned/request.test.ts`).
 */
import { Request } from "@effect-responses/cli"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

const prompt = {
  messages: [
    { role: "system", content: "Be brief." },
    {
      role: "user",
      parts: [
        { type: "text", text: "What is in this image?" },
        { type: "media", mediaType: "image/png", url: "https://example.com/a.png" }
      ]
    },
    {
      role: "assistant",
      parts: [{ type: "tool_call", callId: "call_1", name: "calculator", arguments: "", attributes: { itemId: "fc_1", status: "completed" } }]
    },
    { role: "tool", results: [{ type: "tool_result", callId: "call_1", name: "calculator", output: "19" }] }
  ]
}

const expectedBody = {
  model: "gpt-5.1",
  instructions: "Be brief.",
  input: [
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "What is in this image?" },
        { type: "input_image", image_url: "https://example.com/a.png", detail: "auto" }
      ]
    },
    { type: "function_call", call_id: "call_1", name: "calculator", arguments: "{}", id: "fc_1", status: "completed" },
    { type: "function_call_output", call_id: "call_1", output: "19" }
  ],
  store: false,
  include: ["reasoning.encrypted_content"]
}

describe("request", () => {
  it.effect("a prompt becomes its request body; --model and --stream set those fields", () =>
    Effect.gen(function*() {
      expect(yield* Request.requestBody(JSON.stringify(prompt), "p.json", { model: "gpt-5.1" })).toStrictEqual(expectedBody)
      const streamed = yield* Request.requestBody(JSON.stringify(prompt), "p.json", { model: "gpt-4o", stream: true })
      assert.strictEqual(streamed.model, "gpt-4o")
      assert.strictEqual(streamed.stream, true)
    }))

  it.effect("a field that does not match the prompt's schema is named by its path", () =>
    Effect.gen(function*() {
      const bad = structuredClone(prompt) as { messages: Array<{ parts?: Array<Record<string, unknown>> }> }
      delete bad.messages[1]!.parts![1]!.mediaType
      const error = yield* Effect.flip(Request.requestBody(JSON.stringify(bad), "p.json", { model: "m" }))
      assert.instanceOf(error, Request.RequestInputError)
      assert.match(error.message, /^p\.json: not a prompt: messages\[1\]\.parts\[1\]\.mediaType: is missing$/)
      const role = yield* Effect.flip(
        Request.requestBody(JSON.stringify({ messages: [{ role: "robot", content: "x" }] }), "p.json", { model: "m" })
      )
      assert.include(role.message, "p.json: not a prompt: messages[0]")
      assert.notInclude(role.message, "\n")
    }))

  it.effect("not JSON, and a prompt that cannot be sent, are one-line errors too", () =>
    Effect.gen(function*() {
      const notJson = yield* Effect.flip(Request.requestBody("{\"messages\": [", "<stdin>", { model: "m" }))
      assert.match(notJson.message, /^<stdin>: not JSON: /)
      const invalid = yield* Effect.flip(
        Request.requestBody(JSON.stringify({ messages: [{ role: "user", parts: [] }] }), "p.json", { model: "m" })
      )
      assert.strictEqual(invalid.message, "p.json: invalid prompt: user message 0 has no parts")
    }))
})
