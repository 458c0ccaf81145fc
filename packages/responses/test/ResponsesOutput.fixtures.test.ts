/**
 * Every recorded response body in `fixtures/responses-json/` (pydantic-ai, MIT; vercel/ai,
 * Apache-2.0: see `fixtures/SOURCES.md`) decodes to one part per output item, and replaying the
 * decoded message gives back the items the server sent.
 */
import { Message, Part, Prompt } from "@effect-responses/core"
import { ResponsesOutput, ResponsesRequest } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readdirSync } from "node:fs"
import { fixturePath, readFixture } from "./fixtures.js"

interface Item {
  readonly type: string
  readonly id?: string
  readonly status?: string | null
  readonly phase?: string
  readonly [key: string]: unknown
}

const responses = readdirSync(fixturePath("responses-json"))
  .filter((file) => file.endsWith(".json"))
  .map((file) => ({ file, json: JSON.parse(readFixture(`responses-json/${file}`)) as { readonly output?: ReadonlyArray<Item> } }))
  .filter(({ json }) => Array.isArray(json.output))

/** The part type each output item becomes. */
const expectedType = (item: Item): string => {
  switch (item.type) {
    case "message":
      return (item.content as ReadonlyArray<{ readonly type: string }>).some((c) => c.type === "output_text") ? "text" : "refusal"
    case "reasoning":
      return "reasoning"
    case "function_call":
      return "tool_call"
    case "image_generation_call":
      return "media"
    case "custom_tool_call":
    case "shell_call":
    case "apply_patch_call":
    case "local_shell_call":
    case "mcp_approval_request":
    case "tool_search_call":
    case "tool_search_output":
      return item.type
    default:
      return "unknown"
  }
}

/**
 * The item as the request mapping writes it back: an `output_text` always carries `logprobs` (the API
 * requires the field; the part model keeps none, so it is `[]`), and a reasoning item carries only `id`,
 * `type`, `encrypted_content` and `summary` (its `status: null` and empty `content` are not sent).
 */
const replayed = (item: Item): Item => {
  if (item.type === "message") {
    return {
      ...item,
      content: (item.content as ReadonlyArray<Record<string, unknown>>).map((content) =>
        content.type === "output_text" ? { ...content, logprobs: [] } : content
      )
    }
  }
  if (item.type === "reasoning") {
    const { content: _content, status: _status, ...rest } = item
    return rest as Item
  }
  return item
}

describe("ResponsesOutput on every recorded response body", () => {
  it("the folder holds the expected recordings", () => {
    expect(responses.map(({ file }) => file)).toStrictEqual([
      "pai-gpt4o-file-search-with-results.json",
      "pai-gpt4o-json-schema-output.json",
      "pai-gpt4o-text.json",
      "pai-gpt4o-two-parallel-function-calls.json",
      "pai-gpt5-code-interpreter.json",
      "pai-gpt5-custom-tool-lark-grammar.json",
      "pai-gpt5-image-generation-jpeg.json",
      "pai-gpt5-reasoning-summary-encrypted.json",
      "pai-gpt5-web-search-url-citations.json",
      "pai-o4mini-mcp-call-failed.json"
    ])
  })

  for (const { file, json } of responses) {
    const output = json.output!
    it.effect(`${file}: one part per output item, in order, with item id, status and phase`, () =>
      Effect.gen(function*() {
        const response = yield* ResponsesOutput.fromResponse(json)
        const parts = response.message.parts
        expect(parts.map((part) => part.type)).toStrictEqual(output.map(expectedType))
        parts.forEach((part, index) => {
          const item = output[index]!
          const attributes: Record<string, string> = {}
          if (typeof item.id === "string") attributes.itemId = item.id
          if (typeof item.status === "string") attributes.status = item.status
          if (typeof item.phase === "string") attributes.phase = item.phase
          expect(part.attributes).toStrictEqual(attributes)
          if (part.type === "unknown") {
            assert.strictEqual(part.provider, "openai.responses")
            assert.strictEqual(part.kind, item.type)
            expect(part.item).toStrictEqual(item)
          }
        })
        const hasCall = output.some((item) => item.type === "function_call" || item.type === "custom_tool_call")
        assert.strictEqual(response.finishReason, hasCall ? "tool_calls" : "stop")
        assert.strictEqual(response.message.toolCalls.length, output.filter((item) => item.type === "function_call").length)
      }))

    it.effect(`${file}: replaying the decoded message gives back the items the server sent`, () =>
      Effect.gen(function*() {
        const response = yield* ResponsesOutput.fromResponse(json)
        // the function calls answered, as the API requires of a stateless input (an unanswered call is dropped)
        const results = response.message.toolCalls.map((call) =>
          new Part.ToolResultPart({ callId: call.callId, name: call.name, output: "ok" })
        )
        const body = yield* ResponsesRequest.fromPrompt(
          Prompt.make([response.message, ...(results.length === 0 ? [] : [new Message.ToolMessage({ results })])]),
          { model: "m" }
        )
        // A generated image is not replayed; every other item comes back, then the results.
        expect(body.input).toStrictEqual([
          ...output.filter((item) => item.type !== "image_generation_call").map(replayed),
          ...results.map((result) => ({ type: "function_call_output", call_id: result.callId, output: "ok" }))
        ])
      }))
  }

  it.effect("file citations (file search) and url citations (web search) are typed annotations", () =>
    Effect.gen(function*() {
      const fileSearch = yield* ResponsesOutput.fromResponse(responses.find(({ file }) => file.includes("file-search"))!.json)
      const text = fileSearch.message.parts.find((part): part is Part.TextPart => part.type === "text")!
      assert.isTrue(text.annotations.length > 0)
      assert.isTrue(text.annotations.every((annotation) => annotation.type === "file_citation"))
      const webSearch = yield* ResponsesOutput.fromResponse(responses.find(({ file }) => file.includes("web-search"))!.json)
      const cited = webSearch.message.parts.find((part): part is Part.TextPart => part.type === "text")!
      assert.isTrue(cited.annotations.length > 0)
      assert.isTrue(cited.annotations.every((annotation) => annotation.type === "url_citation"))
    }))

  it.effect("failed mcp_calls stay UnknownParts, item verbatim, and the response still completes", () =>
    Effect.gen(function*() {
      const response = yield* ResponsesOutput.fromResponse(responses.find(({ file }) => file.includes("mcp-call-failed"))!.json)
      const calls = response.message.parts.filter((part): part is Part.UnknownPart => part.type === "unknown" && part.kind === "mcp_call")
      assert.strictEqual(calls.length, 2)
      for (const call of calls) {
        assert.strictEqual(call.attributes.status, "failed")
        expect((call.item as { readonly error?: unknown }).error).toBeDefined()
      }
      assert.strictEqual(response.status, "completed")
      assert.strictEqual(response.message.toolCalls.length, 0)
    }))

  it.effect("an image_generation_call becomes a MediaPart whose media type comes from output_format", () =>
    Effect.gen(function*() {
      const response = yield* ResponsesOutput.fromResponse(responses.find(({ file }) => file.includes("image-generation"))!.json)
      const media = response.message.parts.filter((part): part is Part.MediaPart => part.type === "media")
      expect(media.map((part) => part.mediaType)).toStrictEqual(["image/jpeg"])
      for (const format of ["png", "webp"]) {
        const part = yield* ResponsesOutput.fromOutputItem({ type: "image_generation_call", id: "ig_1", status: "completed", output_format: format, result: "AAAA" })
        assert.strictEqual((part as Part.MediaPart).mediaType, `image/${format}`)
      }
    }))

  it.effect("a custom_tool_call (Lark grammar tool) is a CustomToolCallPart, not a function call", () =>
    Effect.gen(function*() {
      const custom = yield* ResponsesOutput.fromResponse(responses.find(({ file }) => file.includes("custom-tool"))!.json)
      assert.instanceOf(custom.message, Message.AssistantMessage)
      assert.strictEqual(custom.message.toolCalls.length, 0)
      const calls = custom.message.clientCalls
      expect(calls).toStrictEqual([
        new Part.CustomToolCallPart({
          callId: "call_hR80aw24wWb4MTIIVyoHMbLI",
          name: "run_sql",
          input: "SELECT * FROM users",
          attributes: { itemId: "ctc_0136e8c220478b070069570fbdbe388191a87d002f6b984987", status: "completed" }
        })
      ])
      assert.strictEqual(custom.finishReason, "tool_calls")
    }))
})
