/**
 * Output items and whole responses -> the part model, on recorded bodies (pydantic-ai, MIT; vercel/ai,
 * Apache-2.0: see `fixtures/SOURCES.md`).
 */
import { AiError, Part } from "@effect-responses/core"
import { ResponsesOutput } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { MULTISTEP, readFixture } from "./fixtures.js"
import { payloadsOf } from "./utils.js"

const json = (relative: string): unknown => JSON.parse(readFixture(`responses-json/${relative}`))

const completedResponses = payloadsOf(MULTISTEP)
  .map((line) => JSON.parse(line) as { readonly type: string; readonly response?: unknown })
  .filter((event) => event.type === "response.completed")
  .map((event) => event.response)

describe("ResponsesOutput", () => {
  describe("fromResponse", () => {
    it.effect("decodes each response.completed of the multistep recording", () =>
      Effect.gen(function*() {
        const responses = yield* Effect.forEach(completedResponses, ResponsesOutput.fromResponse)
        expect(responses.map((r) => [r.status, r.finishReason, r.model])).toStrictEqual([
          ["completed", "tool_calls", "gpt-5.1-codex-max"],
          ["completed", "tool_calls", "gpt-5.1-codex-max"],
          ["completed", "tool_calls", "gpt-5.1-codex-max"],
          ["completed", "stop", "gpt-5.1-codex-max"]
        ])
        assert.strictEqual(responses[0]!.id, "resp_01830d662ab3856501693c321345c88190b0de00f3b9975691")
        const [reasoning, call] = responses[0]!.message.parts
        assert.instanceOf(reasoning, Part.ReasoningPart)
        const reasoningPart = reasoning as Part.ReasoningPart
        assert.strictEqual(reasoningPart.payload?.provider, "openai.responses")
        assert.strictEqual(reasoningPart.payload?.kind, "encrypted_content")
        assert.strictEqual(reasoningPart.payload?.data.length, 1060)
        expect(reasoningPart.attributes).toStrictEqual({ itemId: "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9" })
        assert.strictEqual(reasoningPart.summary.length, 1)
        assert.isUndefined(reasoningPart.text)
        expect(call).toStrictEqual(
          new Part.ToolCallPart({
            callId: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
            name: "calculator",
            arguments: "{\"a\":12,\"b\":7,\"op\":\"add\"}",
            attributes: { itemId: "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f", status: "completed" }
          })
        )
        assert.strictEqual(responses[3]!.text, "The final result is **570**.")
        expect(responses[3]!.usage).toStrictEqual(
          expect.objectContaining({ inputTokens: 299, outputTokens: 12, totalTokens: 311, cachedInputTokens: 0, reasoningTokens: 0 })
        )
      }))

    it.effect("a plain text response (gpt-4o)", () =>
      Effect.gen(function*() {
        const response = yield* ResponsesOutput.fromResponse(json("pai-gpt4o-text.json"))
        assert.strictEqual(response.id, "resp_68c2e8c147ac819491bcd667055eadbc02e845978fbbb592")
        assert.strictEqual(response.model, "gpt-4o-2024-08-06")
        assert.strictEqual(response.finishReason, "stop")
        assert.isUndefined(response.incompleteReason)
        expect(response.message.parts).toStrictEqual([
          new Part.TextPart({
            text: "The capital of France is Paris.",
            annotations: [],
            attributes: { itemId: "msg_68c2e8c26114819489dae5b59fceb7bf02e845978fbbb592", status: "completed" }
          })
        ])
        expect({ ...response.usage }).toStrictEqual({
          inputTokens: 14,
          cachedInputTokens: 0,
          outputTokens: 8,
          reasoningTokens: 0,
          totalTokens: 22
        })
      }))

    it.effect("two parallel function calls", () =>
      Effect.gen(function*() {
        const response = yield* ResponsesOutput.fromResponse(json("pai-gpt4o-two-parallel-function-calls.json"))
        assert.strictEqual(response.finishReason, "tool_calls")
        expect(response.message.toolCalls.map((call) => [call.callId, call.name, call.arguments, call.attributes.itemId]))
          .toStrictEqual([
            ["call_LWVp74L5HaH2KNvgVz9PJsrj", "get_location", "{\"loc_name\":\"Londos\"}", "fc_67e547c540648191bc7505ac667e023f0ae6111e84dd5c08"],
            ["call_YnRAWeTyxI91m5uNa5bxXwVO", "get_location", "{\"loc_name\":\"London\"}", "fc_67e547c55c3081919da7a3f7fe81a1030ae6111e84dd5c08"]
          ])
      }))

    it.effect("reasoning with a six-part summary and encrypted content, then a message (gpt-5)", () =>
      Effect.gen(function*() {
        const response = yield* ResponsesOutput.fromResponse(json("pai-gpt5-reasoning-summary-encrypted.json"))
        expect(response.message.parts.map((part) => part.type)).toStrictEqual(["reasoning", "text"])
        const reasoning = response.message.parts[0] as Part.ReasoningPart
        assert.strictEqual(reasoning.summary.length, 6)
        assert.isTrue(reasoning.summary[0]!.startsWith("**Considering street crossing safety**"))
        assert.strictEqual(reasoning.payload?.data.length, 13176)
        assert.strictEqual(reasoning.attributes.itemId, "rs_68c42c90b950819c9e32c46d4f8326ca07460311b0c8d3de")
        assert.isTrue(response.text.startsWith("Here’s a simple, safe way to cross a street:"))
        assert.strictEqual(response.usage.reasoningTokens, 1920)
        assert.strictEqual(response.usage.outputTokens, 2199)
      }))

    it.effect("url citations become camelCase annotations (gpt-5 web search)", () =>
      Effect.gen(function*() {
        const body = json("pai-gpt5-web-search-url-citations.json") as {
          readonly output: ReadonlyArray<{ readonly type: string; readonly content?: ReadonlyArray<{ readonly annotations: ReadonlyArray<Record<string, unknown>> }> }>
        }
        const response = yield* ResponsesOutput.fromResponse(body)
        const text = response.message.parts.find((part) => part.type === "text") as Part.TextPart
        const wire = body.output.find((item) => item.type === "message")!.content![0]!.annotations
        assert.isTrue(wire.length > 0)
        assert.strictEqual(text.annotations.length, wire.length)
        expect(text.annotations[0]).toStrictEqual({
          type: "url_citation",
          url: wire[0]!.url,
          title: wire[0]!.title,
          startIndex: wire[0]!.start_index,
          endIndex: wire[0]!.end_index
        })
        const webSearches = response.message.parts.filter((part) => part.type === "unknown")
        assert.isTrue(webSearches.length > 0)
        assert.isTrue(webSearches.every((part) => part.kind === "web_search_call" && part.provider === "openai.responses"))
      }))

    it.effect("an image_generation_call becomes a MediaPart of its output format", () =>
      Effect.gen(function*() {
        const response = yield* ResponsesOutput.fromResponse(json("pai-gpt5-image-generation-jpeg.json"))
        const media = response.message.parts.find((part) => part.type === "media") as Part.MediaPart
        assert.strictEqual(media.mediaType, "image/jpeg")
        assert.strictEqual(media.data?.length, 187880)
        expect(media.attributes).toStrictEqual({ itemId: "ig_08acbdf1ae54befc0068dd9d0347bc8197ad70005495e64e62", status: "completed" })
      }))

    it.effect("an incomplete response maps its reason; a missing usage reads as zeros", () =>
      Effect.gen(function*() {
        const base = { id: "resp_1", model: "m", output: [] }
        const length = yield* ResponsesOutput.fromResponse({
          ...base,
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" }
        })
        assert.strictEqual(length.finishReason, "length")
        assert.strictEqual(length.incompleteReason, "max_output_tokens")
        expect({ ...length.usage }).toStrictEqual({
          inputTokens: 0,
          cachedInputTokens: 0,
          outputTokens: 0,
          reasoningTokens: 0,
          totalTokens: 0
        })
        const filtered = yield* ResponsesOutput.fromResponse({
          ...base,
          status: "incomplete",
          incomplete_details: { reason: "content_filter" }
        })
        assert.strictEqual(filtered.finishReason, "content_filter")
        const failed = yield* ResponsesOutput.fromResponse({ ...base, status: "failed" })
        assert.strictEqual(failed.finishReason, "other")
      }))

    it.effect("a body that is not a response fails with MalformedOutput", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(ResponsesOutput.fromResponse(json("pai-error-400-model-not-found.json")))
        assert.instanceOf(error, AiError.MalformedOutput)
        assert.include(error.description, "not a Responses response object")
        const badItem = yield* Effect.flip(
          ResponsesOutput.fromResponse({ id: "r", output: [{ type: "function_call", name: "f", arguments: "{}" }] })
        )
        assert.include(badItem.description, "output[0]")
        assert.include(badItem.description, "call_id")
      }))
  })

  describe("decodeOutputItem and decodeOutputItemParts", () => {
    it.effect("decodeOutputItem: a message with several output_text parts is one TextPart; annotation offsets follow", () =>
      Effect.gen(function*() {
        const part = yield* ResponsesOutput.fromOutputItem({
          type: "message",
          id: "msg_1",
          status: "completed",
          phase: "final_answer",
          role: "assistant",
          content: [
            { type: "output_text", text: "Hello ", annotations: [] },
            {
              type: "output_text",
              text: "world",
              annotations: [
                { type: "url_citation", url: "https://example.com", title: "Ex", start_index: 0, end_index: 5 },
                { type: "file_citation", file_id: "file_1", filename: "a.pdf", index: 2 },
                { type: "container_file_citation", container_id: "c", file_id: "f", filename: "x.csv", start_index: 1, end_index: 3 },
                { type: "file_path", file_id: "file_2", index: 0 },
                { type: "page_marker", page: 3 }
              ]
            }
          ]
        })
        expect(part).toStrictEqual(
          new Part.TextPart({
            text: "Hello world",
            annotations: [
              { type: "url_citation", url: "https://example.com", title: "Ex", startIndex: 6, endIndex: 11 },
              { type: "file_citation", fileId: "file_1", filename: "a.pdf", index: 8 },
              { type: "container_file_citation", containerId: "c", fileId: "f", filename: "x.csv", startIndex: 7, endIndex: 9 },
              { type: "file_path", fileId: "file_2", index: 6 },
              { type: "other", value: { type: "page_marker", page: 3 } }
            ],
            attributes: { itemId: "msg_1", status: "completed", phase: "final_answer" }
          })
        )
      }))

    it.effect("decodeOutputItemParts: one part per content part, in order, annotations as sent; other content skipped", () =>
      Effect.gen(function*() {
        const attributes = { itemId: "msg_1", status: "completed", phase: "final_answer" }
        const parts = yield* ResponsesOutput.decodeOutputItemParts({
          type: "message",
          id: "msg_1",
          status: "completed",
          phase: "final_answer",
          role: "assistant",
          content: [
            { type: "refusal", refusal: "Not that." },
            { type: "output_text", text: "Hello ", annotations: [], logprobs: [] },
            { type: "audio_transcript", transcript: "?" },
            {
              type: "output_text",
              text: "world",
              annotations: [{ type: "url_citation", url: "https://example.com", title: "Ex", start_index: 0, end_index: 5 }]
            }
          ]
        })
        expect(parts).toStrictEqual([
          new Part.RefusalPart({ text: "Not that.", attributes }),
          new Part.TextPart({ text: "Hello ", attributes }),
          new Part.TextPart({
            text: "world",
            annotations: [{ type: "url_citation", url: "https://example.com", title: "Ex", startIndex: 0, endIndex: 5 }],
            attributes
          })
        ])
        // a message without text or refusal content is one empty TextPart; any other item one part
        expect(yield* ResponsesOutput.decodeOutputItemParts({ type: "message", id: "msg_2", content: [] })).toStrictEqual([
          new Part.TextPart({ text: "", attributes: { itemId: "msg_2" } })
        ])
        expect(yield* ResponsesOutput.decodeOutputItemParts({ type: "function_call", call_id: "c", name: "f", arguments: "{}" }))
          .toStrictEqual([new Part.ToolCallPart({ callId: "c", name: "f", arguments: "{}" })])
      }))

    it.effect("decodeResponse keeps a refusal beside text, and each output_text part (the body's parts are its stream's)", () =>
      Effect.gen(function*() {
        const body = json("pai-gpt4o-text.json") as { readonly output: ReadonlyArray<{ readonly id: string }> }
        const message = body.output[0]!
        const response = yield* ResponsesOutput.fromResponse({
          ...body,
          output: [{
            ...message,
            content: [
              { type: "output_text", text: "Sure.", annotations: [], logprobs: [] },
              { type: "output_text", text: " But", annotations: [], logprobs: [] },
              { type: "refusal", refusal: "not that part." }
            ]
          }]
        })
        const attributes = { itemId: message.id, status: "completed" }
        expect(response.message.parts).toStrictEqual([
          new Part.TextPart({ text: "Sure.", attributes }),
          new Part.TextPart({ text: " But", attributes }),
          new Part.RefusalPart({ text: "not that part.", attributes })
        ])
        assert.strictEqual(response.text, "Sure. But")
      }))

    it.effect("a refusal message is a RefusalPart", () =>
      Effect.gen(function*() {
        const part = yield* ResponsesOutput.fromOutputItem({
          type: "message",
          id: "msg_2",
          status: "completed",
          content: [{ type: "refusal", refusal: "I can't help with that." }]
        })
        expect(part).toStrictEqual(
          new Part.RefusalPart({ text: "I can't help with that.", attributes: { itemId: "msg_2", status: "completed" } })
        )
      }))

    it.effect("raw reasoning text comes from reasoning_text content", () =>
      Effect.gen(function*() {
        const part = yield* ResponsesOutput.fromOutputItem({
          type: "reasoning",
          id: "rs_1",
          summary: [],
          content: [{ type: "reasoning_text", text: "think" }, { type: "reasoning_text", text: "ing" }]
        })
        expect(part).toStrictEqual(new Part.ReasoningPart({ summary: [], text: "thinking", attributes: { itemId: "rs_1" } }))
      }))

    it.effect("any other item is kept verbatim as an UnknownPart", () =>
      Effect.gen(function*() {
        const item = { type: "computer_call", id: "cu_1", status: "completed", call_id: "call_1", action: { type: "click" } }
        const part = yield* ResponsesOutput.fromOutputItem(item)
        expect(part).toStrictEqual(
          new Part.UnknownPart({
            provider: "openai.responses",
            kind: "computer_call",
            item,
            attributes: { itemId: "cu_1", status: "completed" }
          })
        )
      }))
  })
})
