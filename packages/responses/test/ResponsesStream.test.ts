/**
 * The streaming decoder against recorded streams (vercel/ai, Apache-2.0; pydantic-ai, MIT: see
 * `fixtures/SOURCES.md`).
 */
import { AiError, Part, StreamPart } from "@effect-responses/core"
import { ResponsesOutput, ResponsesStream } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Stream from "effect/Stream"
import { MULTISTEP, readFixture } from "./fixtures.js"
import {
  bySlot,
  byResponse,
  bytes,
  collectSettled,
  encodeAll,
  foldSlot,
  payloadsOf,
  splitAt,
  sseText,
  textOf
} from "./utils.js"

const multistep = payloadsOf(MULTISTEP)
/** The fields of the recorded events these tests read. */
interface RecordedEvent {
  readonly type: string
  readonly item: {
    readonly type: string
    readonly encrypted_content: string
    readonly summary: ReadonlyArray<{ readonly text: string }>
    readonly arguments: string
    readonly content: ReadonlyArray<{ readonly text: string }>
  }
  readonly response: { readonly id: string }
}
const multistepEvents = multistep.map((line) => JSON.parse(line) as RecordedEvent)
const doneItems = multistepEvents.filter((event) => event.type === "response.output_item.done").map((event) => event.item)
const completed = multistepEvents.filter((event) => event.type === "response.completed").map((event) => event.response)

const fromLines = (payloads: ReadonlyArray<string>) => ResponsesStream.decodeData(Stream.fromIterable(payloads))
const fromSse = (payloads: ReadonlyArray<string>) =>
  ResponsesStream.decodeSse(Stream.make(bytes(sseText(payloads))))

/** Runs `effect` with a logger that records the messages at `Warning` and above. */
const withWarnings = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) warnings.push(String(message))
    })
    const result = yield* effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    return { result, warnings }
  })

describe("ResponsesStream", () => {
  for (const [name, decode] of [["SSE bytes", fromSse], ["line-JSON payloads", fromLines]] as const) {
    describe(`the four-step multistep recording, from ${name}`, () => {
      it.effect("yields four responses, each started and finished, in order", () =>
        Effect.gen(function*() {
          const { elements, error } = yield* collectSettled(decode(multistep))
          assert.isUndefined(error)
          const responses = byResponse(elements)
          assert.strictEqual(responses.length, 4)
          expect(responses.map((r) => r[0]!.responseId)).toStrictEqual(completed.map((r) => r.id))
          for (const response of responses) {
            assert.strictEqual(response[0]!.type, "response_started")
            assert.strictEqual(response.at(-1)!.type, "response_finished")
            assert.strictEqual((response[0] as StreamPart.ResponseStarted).model, "gpt-5.1-codex-max")
          }
          expect(responses.map((r) => (r.at(-1) as StreamPart.ResponseFinished).finishReason)).toStrictEqual([
            "tool_calls",
            "tool_calls",
            "tool_calls",
            "stop"
          ])
          expect(responses.map((r) => (r.at(-1) as StreamPart.ResponseFinished).usage)).toStrictEqual([
            { inputTokens: 134, cachedInputTokens: 0, outputTokens: 28, reasoningTokens: 0, totalTokens: 162 },
            { inputTokens: 221, cachedInputTokens: 0, outputTokens: 26, reasoningTokens: 0, totalTokens: 247 },
            { inputTokens: 260, cachedInputTokens: 0, outputTokens: 26, reasoningTokens: 0, totalTokens: 286 },
            { inputTokens: 299, cachedInputTokens: 0, outputTokens: 12, reasoningTokens: 0, totalTokens: 311 }
          ].map((usage) => expect.objectContaining(usage)))
        }))

      it.effect("response 1: reasoning with its encrypted content and summary, then the calculator call", () =>
        Effect.gen(function*() {
          const { elements } = yield* collectSettled(decode(multistep))
          const [reasoningSlot, callSlot] = bySlot(byResponse(elements)[0]!)
          const completingReasoning = reasoningSlot!.at(-1)!
          assert.isFalse(completingReasoning.partial)
          const reasoning = completingReasoning.part as Part.ReasoningPart
          assert.strictEqual(reasoning.type, "reasoning")
          assert.strictEqual(reasoning.payload?.provider, "openai.responses")
          assert.strictEqual(reasoning.payload?.kind, "encrypted_content")
          assert.strictEqual(reasoning.payload?.data, doneItems[0].encrypted_content)
          assert.strictEqual(reasoning.payload?.data.length, 1060)
          assert.match(reasoning.attributes.itemId ?? "", /^rs_/)
          const folded = foldSlot(reasoningSlot!)
          expect(folded.summary).toStrictEqual([doneItems[0].summary[0].text])
          assert.strictEqual(
            (folded.summary as Array<string>)[0],
            "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product."
          )

          const call = foldSlot(callSlot!)
          assert.strictEqual(call.type, "tool_call")
          assert.strictEqual(call.name, "calculator")
          assert.strictEqual(call.callId, "call_AB6AaRZ1FYZB2RwS6A5vbdqn")
          assert.strictEqual(call.arguments, "{\"a\":12,\"b\":7,\"op\":\"add\"}")
          expect(call.attributes).toStrictEqual({ itemId: "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f", status: "completed" })
        }))

      it.effect("responses 2 and 3: one multiply call each; response 4: the final text", () =>
        Effect.gen(function*() {
          const { elements } = yield* collectSettled(decode(multistep))
          const responses = byResponse(elements)
          expect(bySlot(responses[1]!).map(foldSlot).map((p) => p.arguments)).toStrictEqual([
            "{\"a\":19,\"b\":3,\"op\":\"multiply\"}"
          ])
          expect(bySlot(responses[2]!).map(foldSlot).map((p) => p.arguments)).toStrictEqual([
            "{\"a\":57,\"b\":10,\"op\":\"multiply\"}"
          ])
          const [text] = bySlot(responses[3]!).map(foldSlot)
          expect(text).toStrictEqual({
            type: "text",
            text: "The final result is **570**.",
            annotations: [],
            attributes: { itemId: "msg_01830d662ab3856501693c32183a488190a612c410a0a39823", status: "completed" }
          })
        }))

      it.effect("the deltas of each part concatenate to the .done values; the completing part adds nothing", () =>
        Effect.gen(function*() {
          const { elements } = yield* collectSettled(decode(multistep))
          const slots = byResponse(elements).flatMap(bySlot)
          assert.strictEqual(slots.length, doneItems.length)
          slots.forEach((updates, index) => {
            const deltas = updates.slice(0, -1)
            const completing = updates.at(-1)!
            assert.isTrue(deltas.length > 0)
            assert.isTrue(deltas.every((update) => update.partial))
            assert.isFalse(completing.partial)
            const item = doneItems[index]
            if (item.type === "reasoning") {
              const summary = deltas.map((update) => (update.part as Part.ReasoningPart).summary[0] ?? "").join("")
              assert.strictEqual(summary, item.summary[0].text)
              expect((completing.part as Part.ReasoningPart).summary).toStrictEqual([""])
            } else {
              const expected = item.type === "function_call" ? item.arguments : item.content[0].text
              assert.strictEqual(deltas.map((update) => textOf(update.part)).join(""), expected)
              assert.strictEqual(textOf(completing.part), "")
            }
            assert.isTrue(deltas.every((update) => update.part.type === completing.part.type))
          })
        }))
    })
  }

  it.effect("the byte and line decoders give the same elements", () =>
    Effect.gen(function*() {
      const lines = yield* collectSettled(fromLines(multistep))
      const sse = yield* collectSettled(fromSse(multistep))
      expect(encodeAll(sse.elements)).toStrictEqual(encodeAll(lines.elements))
    }))

  const copilot = payloadsOf("responses-sse/vai-github-copilot-id-rotation.chunks.txt")
  for (const [name, payloads] of [["multistep", multistep], ["copilot (non-ASCII)", copilot]] as const) {
    const body = bytes(sseText(payloads))
    const reference = Effect.runSync(collectSettled(ResponsesStream.decodeSse(Stream.make(body))))
    it.effect.prop(
      `any split of the ${name} SSE bytes into chunks gives the same elements`,
      [FastCheck.array(FastCheck.integer({ min: 1, max: body.length - 1 }), { maxLength: 60 })],
      ([cuts]) =>
        Effect.gen(function*() {
          const chunks = splitAt(body, cuts)
          const { elements, error } = yield* collectSettled(ResponsesStream.decodeSse(Stream.fromIterable(chunks)))
          assert.isUndefined(error)
          expect(encodeAll(elements)).toStrictEqual(encodeAll(reference.elements))
        }),
      { fastCheck: { numRuns: 40 } }
    )
  }

  it.effect("splitting every byte apart still decodes the multistep recording", () =>
    Effect.gen(function*() {
      const body = bytes(sseText(multistep.slice(56, 75)))
      const chunks = Array.from(body, (byte) => Uint8Array.of(byte))
      const { elements, error } = yield* collectSettled(ResponsesStream.decodeSse(Stream.fromIterable(chunks)))
      assert.isUndefined(error)
      assert.strictEqual(foldSlot(bySlot(elements)[0]!).arguments, "{\"a\":19,\"b\":3,\"op\":\"multiply\"}")
    }))

  describe("errors", () => {
    it.effect("malformed JSON fails with MalformedOutput naming its position, after the elements before it", () =>
      Effect.gen(function*() {
        const payloads = [multistep[0]!, multistep[1]!, "{\"type\":\"response.output_text.delta\",", multistep[3]!]
        for (const decode of [fromLines, fromSse]) {
          const { elements, error } = yield* collectSettled(decode(payloads))
          expect(elements.map((e) => e.type)).toStrictEqual(["response_started"])
          assert.instanceOf(error, AiError.MalformedOutput)
          const malformed = error as AiError.MalformedOutput
          assert.strictEqual(malformed.position, 2)
          assert.strictEqual(malformed.excerpt, "{\"type\":\"response.output_text.delta\",")
          assert.include(malformed.message, "at position 2")
        }
      }))

    it.effect("an event missing a field it needs fails with its type and position", () =>
      Effect.gen(function*() {
        const payloads = [multistep[0]!, JSON.stringify({ type: "response.output_text.delta", output_index: 0 })]
        const { error } = yield* collectSettled(fromLines(payloads))
        assert.instanceOf(error, AiError.MalformedOutput)
        assert.strictEqual((error as AiError.MalformedOutput).eventType, "response.output_text.delta")
        assert.strictEqual((error as AiError.MalformedOutput).position, 1)
      }))

    it.effect("a stream that ends without a terminal event fails with TruncatedStream", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* collectSettled(fromLines(multistep.slice(0, 54)))
        // started, 32 summary deltas, the completing reasoning part, 13 argument deltas
        assert.strictEqual(elements.length, 1 + 32 + 1 + 13)
        assert.instanceOf(error, AiError.TruncatedStream)
        const truncated = error as AiError.TruncatedStream
        assert.strictEqual(truncated.responseId, elements[0]!.responseId)
        assert.strictEqual(truncated.position, 54)
        // the response began: its answer is not asked for again
        assert.isFalse(truncated.retryable)
        assert.include(truncated.message, "without a terminal event")
        const empty = yield* collectSettled(fromLines([]))
        assert.instanceOf(empty.error, AiError.TruncatedStream)
        assert.isUndefined((empty.error as AiError.TruncatedStream).responseId)
        assert.isTrue((empty.error as AiError.TruncatedStream).retryable)
      }))

    const errorCapture = payloadsOf("responses-sse/vai-openai-error-event-response-failed.chunks.txt")

    it.effect("an error event (nested shape) fails with StreamErrorEvent after the response started", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* collectSettled(fromSse(errorCapture))
        expect(elements.map((e) => e.type)).toStrictEqual(["response_started"])
        assert.strictEqual(elements[0]!.responseId, "resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424")
        assert.instanceOf(error, AiError.StreamErrorEvent)
        const event = error as AiError.StreamErrorEvent
        assert.strictEqual(event.code, "insufficient_quota")
        assert.strictEqual(event.sequenceNumber, 2)
        assert.isFalse(event.retryable)
        assert.include(event.description, "You exceeded your current quota")
      }))

    it.effect("the flat error event shape gives the same typed error", () =>
      Effect.gen(function*() {
        const flat = JSON.stringify({ type: "error", code: "server_error", message: "boom", param: null, sequence_number: 5 })
        const { error } = yield* collectSettled(fromLines([errorCapture[0]!, flat]))
        assert.instanceOf(error, AiError.StreamErrorEvent)
        assert.strictEqual((error as AiError.StreamErrorEvent).code, "server_error")
        assert.strictEqual((error as AiError.StreamErrorEvent).description, "boom")
        assert.isUndefined((error as AiError.StreamErrorEvent).param)
        assert.isTrue((error as AiError.StreamErrorEvent).retryable)
      }))

    it.effect("response.failed fails with ResponseFailed carrying the response id and code", () =>
      Effect.gen(function*() {
        const withoutErrorEvent = errorCapture.filter((line) => !line.startsWith("{\"type\":\"error\""))
        const { elements, error } = yield* collectSettled(fromLines(withoutErrorEvent))
        expect(elements.map((e) => e.type)).toStrictEqual(["response_started"])
        assert.instanceOf(error, AiError.ResponseFailed)
        const failed = error as AiError.ResponseFailed
        assert.strictEqual(failed.responseId, "resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424")
        assert.strictEqual(failed.code, "insufficient_quota")
      }))

    it.effect("a part event before response.created fails with MalformedOutput", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* collectSettled(fromLines(multistep.slice(98)))
        assert.strictEqual(elements.length, 0)
        assert.instanceOf(error, AiError.MalformedOutput)
        assert.include((error as AiError.MalformedOutput).description, "before response.created")
        assert.strictEqual((error as AiError.MalformedOutput).position, 0)
      }))

    it.effect("unknown event types and [DONE] are skipped", () =>
      Effect.gen(function*() {
        const payloads = [
          ...multistep.slice(94, 100),
          JSON.stringify({ type: "keepalive", sequence_number: 99 }),
          ...multistep.slice(100),
          "[DONE]"
        ]
        const { elements, error } = yield* collectSettled(fromSse(payloads))
        assert.isUndefined(error)
        assert.strictEqual(foldSlot(bySlot(elements)[0]!).text, "The final result is **570**.")
      }))
  })

  it.effect("response.incomplete finishes with its reason", () =>
    Effect.gen(function*() {
      const created = multistep[94]!
      const incomplete = JSON.stringify({
        type: "response.incomplete",
        sequence_number: 3,
        response: {
          id: "resp_01830d662ab3856501693c3217ba4c8190a3ddf6c839d4f12a",
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
          output: [],
          usage: { input_tokens: 10, output_tokens: 16, total_tokens: 26, output_tokens_details: { reasoning_tokens: 16 } }
        }
      })
      const { elements, error } = yield* collectSettled(fromLines([created, incomplete]))
      assert.isUndefined(error)
      const finished = elements.at(-1) as StreamPart.ResponseFinished
      assert.strictEqual(finished.status, "incomplete")
      assert.strictEqual(finished.finishReason, "length")
      assert.strictEqual(finished.incompleteReason, "max_output_tokens")
      assert.strictEqual(finished.usage.reasoningTokens, 16)
      assert.strictEqual(finished.usage.cachedInputTokens, 0)
    }))

  describe("other recordings", () => {
    it.effect("an item whose arguments come only in .done is one complete part (LM Studio)", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* collectSettled(
          fromLines(payloadsOf("responses-sse/vai-lmstudio-reasoning-tool-call.chunks.txt"))
        )
        assert.isUndefined(error)
        const calls = elements.filter((e): e is StreamPart.PartUpdate => e.type === "part" && e.part.type === "tool_call")
        assert.strictEqual(calls.length, 1)
        assert.isFalse(calls[0]!.partial)
        assert.notStrictEqual((calls[0]!.part as Part.ToolCallPart).arguments, "")
      }))

    it.effect("summary deltas of several summary parts address their summary_index (Azure, 6 parts)", () =>
      Effect.gen(function*() {
        const payloads = payloadsOf("responses-sse/vai-azure-gpt54-multi-summary-encrypted.chunks.txt")
        const { elements, error } = yield* collectSettled(fromLines(payloads))
        assert.isUndefined(error)
        const reasoningDeltas = elements.filter((e): e is StreamPart.PartUpdate =>
          e.type === "part" && e.partial && e.part.type === "reasoning"
        )
        for (const delta of reasoningDeltas) {
          const summary = (delta.part as Part.ReasoningPart).summary
          assert.isTrue(summary.slice(0, -1).every((entry) => entry === ""))
        }
        const done = payloads.map((line) => JSON.parse(line) as RecordedEvent).find((e) =>
          e.type === "response.output_item.done" && e.item.type === "reasoning"
        )
        const folded = foldSlot(bySlot(elements).find((slot) => slot[0]!.part.type === "reasoning")!)
        expect(folded.summary).toStrictEqual(done!.item.summary.map((entry) => entry.text))
        assert.strictEqual((folded.summary as Array<string>).length, 6)
      }))
  })

  // Every recording: decoding and folding the stream gives the items of `response.completed`, part for
  // part, except reasoning payload bytes (they differ between output_item.done and response.completed in
  // OpenAI's recordings: the comparison checks presence and length), and no warning is logged. The
  // deviations SOURCES.md lists for some recordings are named here.
  const recordings: ReadonlyArray<readonly [string, Deviation?]> = [
    ["pai-deepseek-responses-reasoning-text-function-call.sse"],
    ["pai-gpt4o-background-queued-stream.sse"],
    ["pai-gpt4o-file-search-file-citation.sse"],
    ["pai-gpt4o-function-call-args-deltas.sse"],
    ["pai-gpt4omini-text-logprobs.sse"],
    ["pai-gpt5-custom-tool-call-input-deltas.sse"],
    ["pai-gpt5-reasoning-encrypted-function-call.sse"],
    ["pai-gpt52-web-search-url-citations.sse"],
    ["pai-o3mini-reasoning-summary-deltas.sse"],
    ["pai-o4mini-mcp-list-tools-and-call.sse"],
    // the reasoning item id changes in the terminal output
    ["pai-openrouter-gptoss-reasoning-text.sse", { itemIdsDiffer: true }],
    // anonymised upstream: one delta `X` against a 35-character `.done` text
    ["vai-azure-gpt54-multi-summary-encrypted.chunks.txt", { divergentSlot: 1 }],
    ["vai-azure-text.chunks.txt"],
    // item ids differ on every event
    ["vai-github-copilot-id-rotation.chunks.txt", { itemIdsDiffer: true }],
    ["vai-lmstudio-reasoning-tool-call.chunks.txt"],
    ["vai-openai-apply-patch-call.chunks.txt"],
    ["vai-openai-code-interpreter.chunks.txt"],
    ["vai-openai-image-generation-partial-image.chunks.txt"],
    ["vai-openai-mcp-approval-request.chunks.txt"],
    ["vai-openai-mcp-approved-call.chunks.txt"],
    // abridged upstream: the deltas deliver a prefix of the `.done` text; the completing part brings the rest
    ["vai-openai-message-phase.chunks.txt"],
    ["vai-openai-reasoning-encrypted-multistep.chunks.txt"],
    ["vai-openai-shell-call.chunks.txt"],
    ["vai-openai-tool-search.chunks.txt"],
    ["vai-openai-web-search-url-citations.chunks.txt"],
    ["vai-xai-web-search.chunks.txt"]
  ]
  for (const [recording, deviation] of recordings) {
    it.effect(`folding ${recording} gives its response.completed output`, () =>
      Effect.gen(function*() {
        const relative = `responses-sse/${recording}`
        const stream = recording.endsWith(".sse")
          ? ResponsesStream.decodeSse(Stream.make(bytes(readFixture(relative))))
          : fromLines(payloadsOf(relative))
        const { result, warnings } = yield* withWarnings(collectSettled(stream))
        assert.isUndefined(result.error)
        assert.strictEqual(warnings.length, deviation?.divergentSlot === undefined ? 0 : 1)
        const responses = byResponse(result.elements)
        const completedResponses = completedOf(relative)
        assert.strictEqual(responses.length, completedResponses.length)
        for (let index = 0; index < responses.length; index++) {
          const decoded = yield* ResponsesOutput.fromResponse(completedResponses[index])
          const slots = bySlot(responses[index]!)
          const expected = decoded.message.parts.map((part) => comparable(part, deviation))
          const folded = slots.map(foldSlot).map((part) => comparable(part, deviation))
          if (deviation?.divergentSlot !== undefined) {
            // The snapshot is sent whole (partial: false, replace: true) after the deltas it does not extend.
            const completing = slots[deviation.divergentSlot]!.at(-1)!
            assert.isFalse(completing.partial)
            assert.isTrue(completing.replace)
            expect(comparable(completing.part, deviation)).toStrictEqual(expected[deviation.divergentSlot])
            folded.splice(deviation.divergentSlot, 1)
            expected.splice(deviation.divergentSlot, 1)
          }
          expect(folded).toStrictEqual(expected)
          const finished = responses[index]!.at(-1) as StreamPart.ResponseFinished
          assert.strictEqual(finished.type, "response_finished")
          assert.strictEqual(finished.finishReason, decoded.finishReason)
          expect(finished.usage).toStrictEqual(decoded.usage)
        }
      }))
  }

  it.effect("deltas that deliver only a prefix are completed by the completing part (message phase)", () =>
    Effect.gen(function*() {
      const { elements } = yield* collectSettled(fromLines(payloadsOf("responses-sse/vai-openai-message-phase.chunks.txt")))
      const [commentary] = bySlot(elements)
      expect(commentary!.map((update) => [update.partial, textOf(update.part)?.slice(0, 12)])).toStrictEqual([
        [true, "Got"],
        [true, " it"],
        [false, " — I’ll quic"]
      ])
      expect(commentary!.at(-1)!.part.attributes).toStrictEqual({
        itemId: "msg_0a63f40a2632b74300699f8819a5e08196ac270722d369af5a",
        status: "completed",
        phase: "commentary"
      })
    }))
})

interface Deviation {
  readonly itemIdsDiffer?: boolean
  readonly divergentSlot?: number
}

/** The `response` of every `response.completed` / `response.incomplete` event of a capture. */
const completedOf = (relative: string): ReadonlyArray<unknown> => {
  const text = readFixture(relative)
  const payloads = relative.endsWith(".sse")
    ? text.split(/\r?\n/).filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim())
    : text.split("\n").filter((line) => line.trim() !== "")
  return payloads
    .filter((data) => data !== "[DONE]")
    .map((data) => JSON.parse(data) as RecordedEvent)
    .filter((event) => event.type === "response.completed" || event.type === "response.incomplete")
    .map((event) => event.response)
}

/**
 * A part as plain JSON, with the reasoning payload's bytes replaced by their length, and without its item
 * id when the recording's ids differ between events.
 */
const comparable = (part: unknown, deviation: Deviation | undefined): unknown => {
  const json = JSON.parse(JSON.stringify(part)) as {
    payload?: { data?: unknown }
    attributes?: { itemId?: unknown }
  }
  if (json.payload !== undefined && typeof json.payload.data === "string") {
    json.payload = { ...json.payload, data: `<${json.payload.data.length} chars>` }
  }
  if (deviation?.itemIdsDiffer === true && json.attributes !== undefined) {
    const { itemId: _itemId, ...attributes } = json.attributes
    json.attributes = attributes
  }
  return json
}
