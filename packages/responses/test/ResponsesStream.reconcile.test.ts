/**
 * The terminal snapshot reconciled with the stream: recorded streams first (OpenAI's own streams, whose
 * snapshot repeats what was streamed, give the same parts with or without it), then hand-written captures
 * (`test/captures/`, invented ids) of what compatible servers send: items only in `response.completed`,
 * content only in the snapshot, rotating item ids, open-set incomplete reasons, hosted-tool progress.
 */
import { AiError, type Part, type StreamPart } from "@effect-responses/core"
import { ResponsesStream } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { fixturePath } from "./fixtures.js"
import { bySlot, collectSettled, encodeAll, foldSlot } from "./utils.js"

const capture = (name: string): ReadonlyArray<string> =>
  readFileSync(fileURLToPath(new URL(`./captures/${name}`, import.meta.url)), "utf8").split("\n").filter((line) =>
    line.trim() !== ""
  )

const recordingPayloads = (name: string): ReadonlyArray<string> => {
  const text = readFileSync(fixturePath(`responses-sse/${name}`), "utf8")
  return name.endsWith(".sse")
    ? text.split(/\r?\n/).filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim())
    : text.split("\n").filter((line) => line.trim() !== "")
}

const decode = (payloads: ReadonlyArray<string>) => collectSettled(ResponsesStream.decodeData(Stream.fromIterable(payloads)))

const finishedOf = (elements: ReadonlyArray<StreamPart.StreamPart>): StreamPart.ResponseFinished => {
  const finished = elements.at(-1)
  assert(finished !== undefined && finished.type === "response_finished")
  return finished
}

/** The terminal events' `response.output` emptied: what the stream gives without a snapshot. */
const withoutSnapshots = (payloads: ReadonlyArray<string>): ReadonlyArray<string> =>
  payloads.map((data) => {
    if (data === "[DONE]") return data
    const event = JSON.parse(data) as { type: string; response?: { output?: unknown } }
    if ((event.type === "response.completed" || event.type === "response.incomplete") && event.response) {
      return JSON.stringify({ ...event, response: { ...event.response, output: [] } })
    }
    return data
  })

describe("ResponsesStream terminal snapshot reconciliation", () => {
  describe("recorded streams", () => {
    for (const name of readdirSync(fixturePath("responses-sse"))) {
      it.effect(`${name}: the snapshot adds no part to what the stream delivered`, () =>
        Effect.gen(function*() {
          const payloads = recordingPayloads(name)
          const full = yield* decode(payloads)
          const stripped = yield* decode(withoutSnapshots(payloads))
          const parts = (elements: ReadonlyArray<StreamPart.StreamPart>) =>
            encodeAll(elements.filter((element) => element.type === "part"))
          assert.isAbove(full.elements.length, 0)
          expect(parts(full.elements)).toStrictEqual(parts(stripped.elements))
          expect(full.error?._tag).toStrictEqual(stripped.error?._tag)
        }))
    }
  })

  describe("hand-written captures", () => {
    it.effect("a function_call only in response.completed is emitted complete at its index, before response_finished", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decode(capture("snapshot-only-function-call.chunks.txt"))
        assert.isUndefined(error)
        const call = elements.at(-2)
        assert(call !== undefined && call.type === "part")
        assert.strictEqual(call.outputIndex, 1)
        assert.isFalse(call.partial)
        expect(call.part).toMatchObject({
          type: "tool_call",
          callId: "call_snap_fc_1",
          name: "get_weather",
          arguments: "{\"city\":\"Paris\"}",
          attributes: { itemId: "fc_snap_fc_1", status: "completed" }
        })
        assert.strictEqual(finishedOf(elements).finishReason, "tool_calls")
        // the streamed message is not sent again
        const text = elements.filter((e): e is StreamPart.PartUpdate => e.type === "part" && e.part.type === "text")
        assert.strictEqual(text.map((e) => (e.part as Part.TextPart).text).join(""), "Let me check the weather.")
      }))

    it.effect("a response whose items are only in the snapshot gives them all, in order", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decode(capture("snapshot-only-message.chunks.txt"))
        assert.isUndefined(error)
        const slots = bySlot(elements).map(foldSlot)
        expect(slots).toMatchObject([
          { type: "reasoning", summary: ["Greeting the user."], attributes: { itemId: "rs_snap_msg_1" } },
          { type: "text", text: "Hello! How can I help?", attributes: { itemId: "msg_snap_msg_1" } }
        ])
        assert.strictEqual(finishedOf(elements).finishReason, "stop")
      }))

    it.effect("an item completed without content gets the snapshot's content, replacing the empty part", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decode(capture("done-without-content.chunks.txt"))
        assert.isUndefined(error)
        const [slot] = bySlot(elements)
        expect(slot!.map((update) => [update.partial, update.replace, (update.part as Part.TextPart).text]))
          .toStrictEqual([[false, undefined, ""], [false, true, "The answer is 42."]])
        expect(foldSlot(slot!)).toMatchObject({ type: "text", text: "The answer is 42." })
      }))

    it.effect("items the stream left open are completed from the snapshot, text exactly once", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decode(capture("open-item-completed-by-snapshot.chunks.txt"))
        assert.isUndefined(error)
        const [message, call] = bySlot(elements)
        expect(message!.map((update) => [update.partial, (update.part as Part.TextPart).text]))
          .toStrictEqual([[true, "Hel"], [false, "lo"]])
        expect(call!.map((update) => [update.partial, (update.part as Part.ToolCallPart).arguments]))
          .toStrictEqual([[true, "{\"q\":"], [false, "\"x\"}"]])
        expect(foldSlot(call!)).toMatchObject({
          callId: "call_open_1",
          name: "lookup",
          arguments: "{\"q\":\"x\"}",
          attributes: { status: "completed" }
        })
        assert.strictEqual(finishedOf(elements).finishReason, "tool_calls")
      }))

    it.effect("rotating item ids: slots keyed by output index, the snapshot-only call appended after them", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decode(capture("rotating-ids-snapshot-only-call.chunks.txt"))
        assert.isUndefined(error)
        const slots = bySlot(elements)
        expect(slots.map((slot) => slot.map((update) => update.outputIndex)[0])).toStrictEqual([0, 1, 2])
        expect(slots.map(foldSlot)).toMatchObject([
          { type: "reasoning", summary: ["Thinking."] },
          { type: "text", text: "Calling the tool." },
          { type: "tool_call", callId: "call_rot_1", name: "search", arguments: "{}" }
        ])
        // one update per streamed delta / done, one for the snapshot-only call
        assert.strictEqual(elements.filter((element) => element.type === "part").length, 5)
      }))

    it.effect("an unknown incomplete_details.reason is kept, with finishReason other", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decode(capture("incomplete-unknown-reason.chunks.txt"))
        assert.isUndefined(error)
        const finished = finishedOf(elements)
        assert.strictEqual(finished.status, "incomplete")
        assert.strictEqual(finished.finishReason, "other")
        assert.strictEqual(finished.incompleteReason, "max_messages")
        // the open message is completed from the snapshot: nothing more to say, its final status
        const [slot] = bySlot(elements)
        expect(slot!.map((update) => [update.partial, (update.part as Part.TextPart).text])).toStrictEqual([
          [true, "Partial"],
          [false, ""]
        ])
        expect(foldSlot(slot!)).toMatchObject({ text: "Partial", attributes: { status: "incomplete" } })
      }))

    it.effect("a stream that ends after output without a terminal event is a TruncatedStream, output kept", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decode(capture("truncated-after-output.chunks.txt"))
        assert.instanceOf(error, AiError.TruncatedStream)
        assert.isFalse(error.retryable)
        expect(elements.map((element) => element.type)).toStrictEqual(["response_started", "part"])
      }))

    it.effect("hosted-tool progress (shell, compaction, custom tool input without index) is never fatal", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decode(capture("hosted-tool-progress.chunks.txt"))
        assert.isUndefined(error)
        const slots = bySlot(elements)
        assert.strictEqual(slots.length, 2)
        expect(slots.map((slot) => slot.at(-1)!.part)).toMatchObject([
          { type: "shell_call", commands: ["ls -la"], attributes: { status: "completed" } },
          { type: "unknown", kind: "shell_call_output", attributes: { status: "completed" } }
        ])
        assert.isFalse(slots[1]!.at(-1)!.partial)
        assert.strictEqual(finishedOf(elements).finishReason, "stop")
      }))
  })
})
