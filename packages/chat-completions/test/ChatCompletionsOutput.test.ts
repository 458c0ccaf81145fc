/**
 * `chat.completion` bodies and Chat error bodies from `fixtures/chat-json` (pydantic-ai, MIT;
 * vercel/ai, Apache-2.0: see `fixtures/SOURCES.md`).
 */
import { ChatCompletionsOutput } from "@effect-responses/chat-completions"
import { AiError } from "@effect-responses/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { readdirSync } from "node:fs"
import { fixturePath, readFixture } from "./fixtures.js"

const json = (file: string): unknown => JSON.parse(readFixture(`chat-json/${file}`))

describe("ChatCompletionsOutput.fromCompletion", () => {
  it("every chat-json file is covered below", () => {
    expect(readdirSync(fixturePath("chat-json")).sort()).toStrictEqual([
      "pai-chat-error-400-o1mini-system-role.json",
      "pai-chat-gpt4o-json-schema.json",
      "pai-chat-gpt4o-tool-call.json",
      "pai-chat-gpt4o-two-parallel-tool-calls.json",
      "vai-chat-error-400-max-tokens-unsupported.json",
      "vai-chat-openai-text.json"
    ])
  })

  it.effect("a text completion: the exact text, stop, and the usage", () =>
    Effect.gen(function*() {
      const response = yield* ChatCompletionsOutput.fromCompletion(json("vai-chat-openai-text.json"))
      assert.strictEqual(response.id, "chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU")
      assert.strictEqual(response.model, "gpt-4.1-nano-2025-04-14")
      assert.strictEqual(response.finishReason, "stop")
      assert.strictEqual(response.status, "completed")
      assert.isTrue(response.text.startsWith("**Holiday Name:** Galaxy Day  \n\n**Date:** October 31st"))
      assert.isTrue(response.text.endsWith("inspiring individuals to look up and dream beyond our world."))
      assert.include(response.text, "vast darkness\u2014mirroring")
      expect(response.usage).toMatchObject({ inputTokens: 16, outputTokens: 363, totalTokens: 379, reasoningTokens: 0 })
      assert.strictEqual(response.message.parts.length, 1)
    }))

  it.effect("a json_schema completion: the JSON content as text", () =>
    Effect.gen(function*() {
      const response = yield* ChatCompletionsOutput.fromCompletion(json("pai-chat-gpt4o-json-schema.json"))
      expect(JSON.parse(response.text)).toStrictEqual({ city: "Mexico City", country: "Mexico" })
      expect(response.usage).toMatchObject({ inputTokens: 92, outputTokens: 15, totalTokens: 107 })
    }))

  it.effect("a tool call completion: no text part, one call, tool_calls", () =>
    Effect.gen(function*() {
      const response = yield* ChatCompletionsOutput.fromCompletion(json("pai-chat-gpt4o-tool-call.json"))
      assert.strictEqual(response.finishReason, "tool_calls")
      expect(response.message.parts.map((part) => part.type)).toStrictEqual(["tool_call"])
      assert.deepInclude(response.message.toolCalls[0]!, {
        callId: "call_iXFttys57ap0o16JSlC8yhYo",
        name: "get_user_country",
        arguments: "{}"
      })
    }))

  it.effect("two parallel tool calls, in order, with ids, names and arguments", () =>
    Effect.gen(function*() {
      const response = yield* ChatCompletionsOutput.fromCompletion(json("pai-chat-gpt4o-two-parallel-tool-calls.json"))
      expect(response.message.toolCalls.map((call) => [call.callId, call.name, call.arguments])).toStrictEqual([
        ["call_jYdIdRZHxZTn5bWCq5jlMrJi", "delete_file", "{\"path\": \".env\"}"],
        ["call_TmlTVWQbzrXCZ4jNsCVNbNqu", "create_file", "{\"path\": \"test.txt\"}"]
      ])
      expect(response.usage).toMatchObject({ inputTokens: 71, outputTokens: 46, totalTokens: 117 })
    }))

  // Mistral's OpenAPI (ChatCompletionChoice.finish_reason): stop, length, model_length, error, tool_calls
  it.effect("Mistral's finish reasons: model_length is a truncation like length (incomplete, max_output_tokens)", () =>
    Effect.gen(function*() {
      const body = (finish_reason: string) => ({
        id: "cmpl-m1",
        model: "mistral-large-latest",
        choices: [{ index: 0, message: { role: "assistant", content: "cut sh" }, finish_reason }]
      })
      const read = (finish_reason: string) =>
        Effect.map(ChatCompletionsOutput.fromCompletion(body(finish_reason)), (r) => [r.finishReason, r.status, r.incompleteReason])
      expect(yield* read("model_length")).toStrictEqual(["length", "incomplete", "max_output_tokens"])
      expect(yield* read("length")).toStrictEqual(["length", "incomplete", "max_output_tokens"])
      expect(yield* read("stop")).toStrictEqual(["stop", "completed", undefined])
      expect(yield* read("tool_calls")).toStrictEqual(["tool_calls", "completed", undefined])
      assert.instanceOf(yield* Effect.flip(ChatCompletionsOutput.fromCompletion(body("error"))), AiError.ResponseFailed)
    }))

  it.effect("a body that is not a chat.completion fails with MalformedOutput", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ChatCompletionsOutput.fromCompletion({ choices: "no" }))
      assert.instanceOf(error, AiError.MalformedOutput)
    }))

  it.effect("the recorded completion with its message content a number or an object: MalformedOutput naming the field (null content is none)", () =>
    Effect.gen(function*() {
      const recorded = json("vai-chat-openai-text.json") as { choices: Array<{ message: { content: unknown } }> }
      for (const [content, what] of [[42, "a number"], [{ text: "x" }, "an object"], [true, "a boolean"]] as const) {
        const body = { ...recorded, choices: [{ ...recorded.choices[0]!, message: { ...recorded.choices[0]!.message, content } }] }
        const error = yield* Effect.flip(ChatCompletionsOutput.fromCompletion(body))
        assert.instanceOf(error, AiError.MalformedOutput)
        assert.strictEqual(
          error.description,
          `choices[0].message.content of the chat.completion body is ${what}, not a string, a list of parts or null`
        )
      }
      const none = { ...recorded, choices: [{ ...recorded.choices[0]!, message: { ...recorded.choices[0]!.message, content: null } }] }
      const response = yield* ChatCompletionsOutput.fromCompletion(none)
      expect(response.message.parts).toStrictEqual([])
    }))

  it.effect("tool calls without an id get synthetic ids new for every call, across responses too", () =>
    Effect.gen(function*() {
      const body = {
        id: "chatcmpl-1",
        choices: [{
          index: 0,
          finish_reason: "tool_calls",
          message: {
            tool_calls: [{ type: "function", function: { name: "a", arguments: "{}" } }, {
              id: "",
              type: "function",
              function: { name: "b", arguments: "{}" }
            }]
          }
        }]
      }
      const ids: Array<string> = []
      for (const _ of [1, 2]) {
        const response = yield* ChatCompletionsOutput.fromCompletion(body)
        ids.push(...response.message.toolCalls.map((call) => call.callId))
      }
      for (const id of ids) assert.match(id, /^call_[0-9a-f]{24}$/)
      assert.strictEqual(new Set(ids).size, 4)
    }))

  it.effect("a failed answer in an HTTP 200 body fails with ResponseFailed: finish_reason \"error\", an error object", () =>
    Effect.gen(function*() {
      const answer = (choice: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({
        id: "gen-1786000000-x",
        object: "chat.completion",
        created: 1786000000,
        model: "some/model",
        choices: [{ index: 0, message: { role: "assistant", content: "Partial" }, ...choice }],
        ...rest
      })
      const fail = (json: unknown) => Effect.flip(ChatCompletionsOutput.fromCompletion(json))
      // the error object inside the choice (OpenRouter), beside it, or none
      const inside = yield* fail(answer({ finish_reason: "error", error: { code: 502, message: "Provider stopped" } }))
      assert.instanceOf(inside, AiError.ResponseFailed)
      expect(inside).toMatchObject({ responseId: "gen-1786000000-x", code: "502", description: "Provider stopped" })
      const beside = yield* fail(answer({ finish_reason: "error" }, { error: { code: "server_error", message: "Stopped" } }))
      expect(beside).toMatchObject({ _tag: "ResponseFailed", code: "server_error", description: "Stopped" })
      const bare = yield* fail(answer({ finish_reason: "error" }))
      assert.instanceOf(bare, AiError.ResponseFailed)
      assert.isUndefined(bare.code)
      assert.include(bare.description, "finish_reason \"error\"")
      // a body that is an error object (OpenRouter), not "no string id or no choices list"
      const body = yield* fail({ error: { message: "Provider returned error", code: 502, metadata: { provider_name: "x" } }, user_id: "u" })
      expect(body).toMatchObject({ _tag: "ResponseFailed", responseId: "", code: "502", description: "Provider returned error" })
      // `error: null` beside a finished answer is no error
      const ok = yield* ChatCompletionsOutput.fromCompletion(answer({ finish_reason: "stop" }, { error: null }))
      assert.strictEqual(ok.text, "Partial")
    }))

  it.effect("content as a list of parts (Mistral's Magistral): thinking -> reasoning, text -> text, another type warns", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        logs.push(`${logLevel.label}: ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      })
      const response = yield* ChatCompletionsOutput.fromCompletion({
        id: "8d1e3c2b5a4f4e7a9b6c0d1e2f3a4b5c",
        object: "chat.completion",
        created: 1786000000,
        model: "magistral-small-latest",
        choices: [{
          index: 0,
          finish_reason: "stop",
          message: {
            role: "assistant",
            tool_calls: null,
            content: [
              { type: "thinking", thinking: [{ type: "text", text: "Two plus two" }, { type: "text", text: " is four." }] },
              { type: "text", text: "2 + 2 = " },
              { type: "reference", reference_ids: [1] },
              { type: "text", text: "4." }
            ]
          }
        }],
        usage: { prompt_tokens: 12, total_tokens: 40, completion_tokens: 28 }
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      expect(response.message.parts.map((part) => part.type)).toStrictEqual(["reasoning", "text"])
      const reasoning = response.message.parts[0]!
      assert.strictEqual(reasoning.type === "reasoning" ? reasoning.text : undefined, "Two plus two is four.")
      assert.strictEqual(response.text, "2 + 2 = 4.")
      expect(logs).toStrictEqual([
        "WARN: a content part of type \"reference\" was ignored (only \"text\" and \"thinking\" parts are read) in response 8d1e3c2b5a4f4e7a9b6c0d1e2f3a4b5c"
      ])
      // a string `thinking` is read too; a list of text parts alone is the text
      const plain = yield* ChatCompletionsOutput.fromCompletion({
        id: "y",
        choices: [{ index: 0, finish_reason: "stop", message: { content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "answer" }] } }]
      })
      expect(plain.message.parts.map((part) => [part.type, part.type === "reasoning" || part.type === "text" ? part.text : ""]))
        .toStrictEqual([["reasoning", "hmm"], ["text", "answer"]])
    }))

  it.effect("reasoning_content and url_citation annotations become a reasoning part and typed citations", () =>
    Effect.gen(function*() {
      const response = yield* ChatCompletionsOutput.fromCompletion({
        id: "x",
        model: "deepseek-reasoner",
        choices: [{
          index: 0,
          finish_reason: "length",
          message: {
            role: "assistant",
            reasoning_content: "thinking",
            content: "See it",
            annotations: [{ type: "url_citation", url_citation: { url: "https://e.x", title: "E", start_index: 0, end_index: 3 } }]
          }
        }]
      })
      expect(response.message.parts.map((part) => part.type)).toStrictEqual(["reasoning", "text"])
      assert.strictEqual(response.status, "incomplete")
      assert.strictEqual(response.incompleteReason, "max_output_tokens")
      const text = response.message.parts[1]!
      assert.strictEqual(text.type, "text")
      if (text.type === "text") {
        expect(text.annotations).toStrictEqual([{ type: "url_citation", url: "https://e.x", title: "E", startIndex: 0, endIndex: 3 }])
      }
    }))
})

describe("ChatCompletionsOutput.usageFromWire", () => {
  const counts = (usage: unknown) => {
    const u = ChatCompletionsOutput.usageFromWire(usage)
    return [u.inputTokens, u.cachedInputTokens, u.outputTokens, u.reasoningTokens, u.totalTokens]
  }
  const usageChunk = (relative: string): unknown => {
    const lines = readFixture(relative).split("\n").filter((line) => line.includes("\"usage\":{"))
    return (JSON.parse(lines[lines.length - 1]!.replace(/^data: /, "")) as { usage: unknown }).usage
  }

  it("xAI counts reasoning apart from completion_tokens: it is added, and total = input + output", () => {
    // recorded: prompt 307 (306 cached), completion 26, reasoning 227, total 560 = 307 + 26 + 227
    expect(counts(usageChunk("chat-sse/vai-chat-xai-reasoning-tool-call.chunks.txt"))).toStrictEqual([307, 306, 253, 227, 560])
  })

  it("OpenAI, Azure and DeepSeek count reasoning inside completion_tokens: kept as it is", () => {
    expect(counts(usageChunk("chat-sse/vai-chat-azure-model-router.chunks.txt"))).toStrictEqual([15, 0, 78, 64, 93])
    expect(counts(usageChunk("chat-sse/pai-chat-deepseek-reasoning-content.sse"))).toStrictEqual([6, 0, 212, 198, 218])
  })

  it("without total_tokens: reasoning above completion_tokens is apart; the total is input + output", () => {
    const details = (reasoning: number) => ({ reasoning_tokens: reasoning })
    expect(counts({ prompt_tokens: 10, completion_tokens: 5, completion_tokens_details: details(20) }))
      .toStrictEqual([10, 0, 25, 20, 35])
    expect(counts({ prompt_tokens: 10, completion_tokens: 30, completion_tokens_details: details(20) }))
      .toStrictEqual([10, 0, 30, 20, 40])
  })

  it("every recorded usage keeps the invariants: reasoning within output, total = input + output", () => {
    for (const file of readdirSync(fixturePath("chat-sse"))) {
      const usage = ChatCompletionsOutput.usageFromWire(usageChunk(`chat-sse/${file}`))
      expect(usage.reasoningTokens, file).toBeLessThanOrEqual(usage.outputTokens)
      expect(usage.totalTokens, file).toBe(usage.inputTokens + usage.outputTokens)
    }
  })
})

describe("Chat error bodies", () => {
  it("a long message, a plain-text body and a body cut at its bound: cut at MAX_MESSAGE, counting against the original", () => {
    const recorded = JSON.parse(readFixture("chat-json/pai-chat-error-400-o1mini-system-role.json")) as {
      error: { message: string }
    }
    const message = recorded.error.message.repeat(100).slice(0, 3000)
    const whole = JSON.stringify({ error: { ...recorded.error, message } })
    const long = AiError.httpErrorFromResponse({ status: 400, headers: {}, body: whole })
    assert.strictEqual(long.description, `${message.slice(0, 2000)}… (1000 more characters)`)
    assert.strictEqual(long.code, "unsupported_value")
    // cut again after a prefix: the count is of the original
    assert.strictEqual(
      AiError.capMessage(`the upstream failed: ${long.description}`),
      `the upstream failed: ${message.slice(0, 1979)}… (1021 more characters)`
    )
    assert.strictEqual(AiError.capMessage(long.description), long.description)
    // cut again with details after the mark (HttpError.message: `HTTP 400: ` before, ` (type, code)` after):
    // one mark counting both cuts and the details (2,000 + 1,000 + 10 + the details' characters, 2,000 shown)
    const details = long.message.slice(long.message.lastIndexOf("characters)") + "characters)".length)
    assert.strictEqual(details, " (invalid_request_error, unsupported_value, param messages[0].role)")
    assert.strictEqual(
      AiError.capMessage(long.message),
      `HTTP 400: ${message.slice(0, 1990)}… (${1000 + 10 + details.length} more characters)`
    )
    // a short text before the mark keeps it, and what follows is cut to the rest of the room, with its own mark
    assert.strictEqual(
      AiError.capMessage(`${"a".repeat(10)}… (5 more characters)${"b".repeat(2500)}`),
      `${"a".repeat(10)}… (5 more characters)${"b".repeat(1990)}… (510 more characters)`
    )
    // at most `max` characters besides the mark: as it is
    const within = `HTTP 400: ${"a".repeat(1980)}… (5 more characters) (x, y)`
    assert.strictEqual(AiError.capMessage(within), within)
    assert.strictEqual(
      AiError.httpErrorFromResponse({ status: 500, headers: {}, body: message }).description,
      `${message.slice(0, 2000)}… (1000 more characters)`
    )
    // the first 64 KiB of a longer body: the message is read from the prefix when it is whole there
    const prefix = JSON.stringify({ error: { ...recorded.error, detail: "d".repeat(70_000) } }).slice(0, 65536)
    assert.strictEqual(
      AiError.httpErrorFromResponse({ status: 400, headers: {}, body: prefix, cutAt: 65536 }).description,
      recorded.error.message
    )
    const cutMessage = whole.replace(message, "m".repeat(70_000)).slice(0, 65536)
    assert.strictEqual(
      AiError.httpErrorFromResponse({ status: 400, headers: {}, body: cutMessage, cutAt: 65536 }).description,
      `the error body was cut at 65536 bytes: ${cutMessage.slice(0, 2000)}… (${65536 - 2000} more characters)`
    )
  })

  it("400 unsupported_value (system role on o1-mini)", () => {
    const error = AiError.httpErrorFromResponse({
      status: 400,
      headers: { "x-request-id": "req_1" },
      body: readFixture("chat-json/pai-chat-error-400-o1mini-system-role.json")
    })
    assert.strictEqual(error.code, "unsupported_value")
    assert.strictEqual(error.param, "messages[0].role")
    assert.strictEqual(error.errorType, "invalid_request_error")
    assert.strictEqual(error.requestId, "req_1")
    assert.isFalse(error.retryable)
    assert.include(error.message, "does not support 'system' with this model")
  })

  it("400 unsupported_parameter (max_tokens on a reasoning model)", () => {
    const error = AiError.httpErrorFromResponse({
      status: 400,
      headers: {},
      body: readFixture("chat-json/vai-chat-error-400-max-tokens-unsupported.json")
    })
    assert.strictEqual(error.code, "unsupported_parameter")
    assert.strictEqual(error.param, "max_tokens")
    assert.strictEqual(
      error.description,
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
    )
  })
})
