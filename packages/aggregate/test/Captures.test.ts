/**
 * The aggregator on the hand-written captures of compatible servers (`packages/responses/test/captures`,
 * invented ids): items only in the terminal snapshot, content only there, items left open, rotating item
 * ids. Decoding and folding each gives what the non-streaming mapping makes of the terminal response.
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { Message, Part, Prompt } from "@effect-responses/core"
import { ResponsesOutput, ResponsesRequest, ResponsesStream } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const folder = fileURLToPath(new URL("../../responses/test/captures/", import.meta.url))

const payloads = (name: string): ReadonlyArray<string> =>
  readFileSync(`${folder}${name}`, "utf8").split("\n").filter((line) => line.trim() !== "")

/** Captures with a terminal event (the others are truncated on purpose). */
const captures = readdirSync(folder).filter((name) =>
  payloads(name).some((line) => /"type":"response\.(completed|incomplete)"/.test(line))
)

/** A part's JSON without its item id (ids rotate in some captures; the stream keeps those of the deltas). */
const withoutItemId = (part: unknown): unknown => {
  const json = JSON.parse(JSON.stringify(part)) as { attributes?: { itemId?: string } }
  if (json.attributes !== undefined) delete json.attributes.itemId
  return json
}

describe("aggregating hand-written captures of compatible servers equals their terminal response", () => {
  it("covers the captures", () => {
    assert.isAtLeast(captures.length, 6)
  })
  for (const name of captures) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const events = payloads(name)
        const [aggregated] = yield* MessageAggregator.aggregate(
          ResponsesStream.decodeLinesText(Stream.make(events.join("\n")))
        )
        const terminal = events.map((line) => JSON.parse(line) as { type: string; response: unknown }).find((event) =>
          event.type === "response.completed" || event.type === "response.incomplete"
        )!
        const expected = yield* ResponsesOutput.fromResponse(terminal.response)
        expect(aggregated!.message.parts.map(withoutItemId)).toStrictEqual(expected.message.parts.map(withoutItemId))
        assert.strictEqual(aggregated!.finishReason, expected.finishReason)
        assert.strictEqual(aggregated!.incompleteReason, expected.incompleteReason)
      }))
  }
})

describe("a namespaced function call (tool search) round-trips", () => {
  it.effect("the recorded call's namespace is kept by the stream and the fold, and sent back on the next turn", () =>
    Effect.gen(function*() {
      const path = fileURLToPath(new URL("../../../fixtures/responses-sse/vai-openai-tool-search.chunks.txt", import.meta.url))
      const text = readFileSync(path, "utf8")
      const [response] = yield* MessageAggregator.aggregate(ResponsesStream.decodeLinesText(Stream.make(text)))
      const [call] = response!.message.toolCalls
      assert.strictEqual(call!.name, "get_weather")
      assert.strictEqual(call!.namespace, "get_weather")
      const result = new Message.ToolMessage({
        results: [new Part.ToolResultPart({ callId: call!.callId, name: call!.name, output: "{\"temperature\":61}" })]
      })
      const body = yield* ResponsesRequest.fromPrompt(Prompt.make([response!.message, result]), { model: "gpt-5.4" })
      const item = body.input.find((entry) => (entry as { type?: string }).type === "function_call")
      expect(item).toMatchObject({ type: "function_call", name: "get_weather", namespace: "get_weather" })
      // the whole terminal output item is given back as the API sent it
      const completed = text.split("\n").filter((line) => line.includes("\"response.completed\""))
        .map((line) => JSON.parse(line) as { response: { output: ReadonlyArray<{ type: string }> } })[0]!
      expect(item).toStrictEqual(completed.response.output.find((entry) => entry.type === "function_call"))
    }))
})
