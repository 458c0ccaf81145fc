/**
 * The aggregator proven on every recorded Responses stream (`fixtures/responses-sse`, vercel/ai
 * Apache-2.0 and pydantic-ai MIT, see `SOURCES.md`): decoding the recording with `ResponsesStream` and
 * folding it with `MessageAggregator` gives, response by response, what the non-streaming mapping
 * (`ResponsesOutput.fromResponse`) makes of the terminal event's `response`. Where `SOURCES.md` lists a
 * recording as abridged or anonymised upstream, the test names the deviation and asserts how it is handled.
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { AiError, type ModelResponse, Part, type StreamPart } from "@effect-responses/core"
import { ResponsesOutput, ResponsesStream } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { recordedEvents, recordingBytes, recordings } from "./fixtures.js"

/** A deviation of a recording from the streaming rules (SOURCES.md, "Known deviations"). */
type Deviation =
  /** Abridged upstream: deltas deliver only a prefix of the `.done` text; the completing part brings the rest. */
  | { readonly _tag: "AbridgedDeltas"; readonly outputIndex: number }
  /** Anonymised upstream: a snapshot contradicts its deltas; it replaces the slot, with one warning. */
  | { readonly _tag: "ContradictingSnapshot"; readonly outputIndex: number }
  /**
   * Item and response ids differ on every event (anonymised per event): the fold keys on output index; item
   * ids come from `output_item.done`, the response id from `response.created`.
   */
  | { readonly _tag: "IdsRotate" }
  /** The reasoning item id changes in the terminal output: the stream keeps the id of `output_item.done`. */
  | { readonly _tag: "TerminalItemIdChanged" }
  /** Arguments only in `.done`: the call arrives as one complete part. */
  | { readonly _tag: "NoArgumentDeltas" }
  /** The stream ends with an `error` event: a typed error after the parts that arrived. */
  | { readonly _tag: "ErrorEvent" }

const deviations: { readonly [name: string]: Deviation } = {
  "vai-openai-message-phase.chunks.txt": { _tag: "AbridgedDeltas", outputIndex: 0 },
  "vai-azure-gpt54-multi-summary-encrypted.chunks.txt": { _tag: "ContradictingSnapshot", outputIndex: 1 },
  "vai-github-copilot-id-rotation.chunks.txt": { _tag: "IdsRotate" },
  "pai-openrouter-gptoss-reasoning-text.sse": { _tag: "TerminalItemIdChanged" },
  "vai-lmstudio-reasoning-tool-call.chunks.txt": { _tag: "NoArgumentDeltas" },
  "vai-openai-error-event-response-failed.chunks.txt": { _tag: "ErrorEvent" }
}

/** Decodes a recording from its bytes, collecting the elements, the failure and the warnings logged. */
const decode = (name: string) =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) warnings.push(String(message))
    })
    const stream = ResponsesStream.decodeCapture(Stream.make(recordingBytes(name)))
    const result = yield* Stream.runCollect(Stream.either(stream)).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    const elements: Array<StreamPart.StreamPart> = []
    let failure: ResponsesStream.DecodeError | undefined
    for (const item of Chunk.toReadonlyArray(result)) {
      if (item._tag === "Right") elements.push(item.right)
      else failure = item.left
    }
    return { elements, failure, warnings }
  })

/** The `response` of every terminal event (`response.completed` / `response.incomplete`) of a recording. */
const terminalResponses = (name: string): ReadonlyArray<unknown> =>
  recordedEvents(name)
    .filter((event) => event.type === "response.completed" || event.type === "response.incomplete")
    .map((event) => event.response)

/**
 * The fields of a part that the proof compares: everything of its JSON encoding, except the reasoning
 * payload's bytes (compared by presence and length: OpenAI's `encrypted_content` differs between
 * `output_item.done` and `response.completed`) and, for recordings whose ids rotate, the item id.
 */
const comparable = (part: Part.AssistantPart, withoutItemId: boolean): unknown => {
  const json = JSON.parse(JSON.stringify(part)) as { payload?: { data?: string }; attributes?: { itemId?: string } }
  if (json.payload?.data !== undefined) json.payload = { ...json.payload, data: `<${json.payload.data.length} chars>` }
  if (withoutItemId && json.attributes !== undefined) delete json.attributes.itemId
  return json
}

/** What a UI shows for each slot of one response when it concatenates every text it receives. */
const shownText = (elements: ReadonlyArray<StreamPart.StreamPart>, responseId: string) => {
  const shown = new Map<number, { text: Array<string>; summary: Array<Array<string>> }>()
  for (const element of elements) {
    if (element.type !== "part" || element.responseId !== responseId) continue
    let slot = shown.get(element.outputIndex)
    if (slot === undefined || element.replace === true) {
      slot = { text: [], summary: [] }
      shown.set(element.outputIndex, slot)
    }
    const part = element.part
    switch (part.type) {
      case "text":
      case "refusal":
        slot.text.push(part.text)
        break
      case "tool_call":
        slot.text.push(part.arguments)
        break
      case "reasoning":
        if (part.text !== undefined) slot.text.push(part.text)
        part.summary.forEach((entry, index) => {
          while (slot.summary.length <= index) slot.summary.push([])
          slot.summary[index]!.push(entry)
        })
        break
      case "media":
      case "unknown":
        break
    }
  }
  return shown
}

const finalText = (part: Part.AssistantPart): string | undefined => {
  switch (part.type) {
    case "text":
    case "refusal":
      return part.text
    case "tool_call":
      return part.arguments
    case "reasoning":
      return part.text
    case "media":
    case "unknown":
      return undefined
  }
}

const parts = (elements: ReadonlyArray<StreamPart.StreamPart>, outputIndex: number) =>
  elements.filter((e): e is StreamPart.PartUpdate => e.type === "part" && e.outputIndex === outputIndex)

describe("aggregating every recorded stream equals decoding its terminal response", () => {
  it("covers every recording of responses-sse", () => {
    assert.isAtLeast(recordings.length, 26)
  })

  it.effect("folding in chunks of any size equals stepping one element at a time, on every recording", () =>
    Effect.gen(function*() {
      for (const name of recordings) {
        const { elements } = yield* decode(name)
        let state = MessageAggregator.empty
        for (const element of elements) state = MessageAggregator.step(state, element)
        const reference = JSON.stringify(MessageAggregator.done(state))
        assert.strictEqual(JSON.stringify(MessageAggregator.fromIterable(elements)), reference, name)
        for (const size of [1, 2, 7, 64]) {
          const chunked = yield* MessageAggregator.aggregate(Stream.fromIterable(elements).pipe(Stream.rechunk(size)))
          assert.strictEqual(JSON.stringify(chunked), reference, `${name}, chunks of ${size}`)
          const settled = yield* MessageAggregator.aggregateSettled(Stream.fromIterable(elements).pipe(Stream.rechunk(size)))
          assert.strictEqual(JSON.stringify(settled.responses), reference, `${name}, settled, chunks of ${size}`)
        }
      }
    }))

  it.effect("a stream that needs a Scope gets the caller's, as Stream.run gives it (on a recording)", () =>
    Effect.gen(function*() {
      const { elements } = yield* decode("pai-o3mini-reasoning-summary-deltas.sse")
      const released: Array<string> = []
      const stream = Stream.concat(
        Stream.drain(Stream.fromEffect(Effect.addFinalizer(() => Effect.sync(() => released.push("resource"))))),
        Stream.fromIterable(elements)
      )
      const reference = JSON.stringify(MessageAggregator.fromIterable(elements))
      yield* Effect.scoped(Effect.gen(function*() {
        const viaRun = yield* Stream.run(stream, MessageAggregator.sink)
        const aggregated = yield* MessageAggregator.aggregate(stream)
        const settled = yield* MessageAggregator.aggregateSettled(stream)
        expect([JSON.stringify(viaRun), JSON.stringify(aggregated), JSON.stringify(settled.responses)]).toStrictEqual([
          reference,
          reference,
          reference
        ])
        // the caller's scope holds the three resources until it closes
        expect(released).toStrictEqual([])
      }))
      expect(released).toStrictEqual(["resource", "resource", "resource"])
    }))

  for (const name of recordings) {
    const deviation = deviations[name]
    const title = deviation === undefined ? name : `${name} (deviation: ${deviation._tag})`
    it.effect(title, () =>
      Effect.gen(function*() {
        const { elements, failure, warnings } = yield* decode(name)
        const settled = yield* MessageAggregator.aggregateSettled(Stream.fromIterable(elements))
        const aggregated = settled.responses

        if (deviation?._tag === "ErrorEvent") {
          // The parts that arrived (here: the response start) and then the typed error.
          assert.instanceOf(failure, AiError.StreamErrorEvent)
          assert.strictEqual((failure as AiError.StreamErrorEvent).code, "insufficient_quota")
          assert.isFalse((failure as AiError.StreamErrorEvent).retryable)
          assert.strictEqual(aggregated.length, 1)
          assert.strictEqual(aggregated[0]!.id, "resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424")
          assert.strictEqual(aggregated[0]!.status, "in_progress")
          assert.strictEqual(aggregated[0]!.finishReason, "other")
          const run = yield* MessageAggregator.aggregateSettled(
            ResponsesStream.decodeCapture(Stream.make(recordingBytes(name)))
          )
          assert.isTrue(Option.isSome(run.failure))
          expect(run.responses.map((r) => r.id)).toStrictEqual(aggregated.map((r) => r.id))
          return
        }

        assert.isUndefined(failure)
        const expected: Array<ModelResponse.ModelResponse> = []
        for (const response of terminalResponses(name)) expected.push(yield* ResponsesOutput.fromResponse(response))
        assert.isAtLeast(expected.length, 1)
        assert.strictEqual(aggregated.length, expected.length)
        const withoutItemId = deviation?._tag === "IdsRotate" || deviation?._tag === "TerminalItemIdChanged"

        for (let index = 0; index < expected.length; index++) {
          const got = aggregated[index]!
          const want = expected[index]!
          if (deviation?._tag === "IdsRotate") {
            // Ids rotate: every element carries the id of `response.created`.
            const created = recordedEvents(name).filter((event) => event.type === "response.created")[index]!
            assert.strictEqual(got.id, (created.response as { id: string }).id)
          } else {
            assert.strictEqual(got.id, want.id)
          }
          assert.strictEqual(got.status, want.status)
          assert.strictEqual(got.finishReason, want.finishReason)
          assert.strictEqual(got.incompleteReason, want.incompleteReason)
          expect(got.usage).toStrictEqual(want.usage)
          // ContradictingSnapshot (anonymised upstream): the phase given at output_item.added is missing from the
          // done and terminal items; the replacing snapshot keeps it, like any completing part does.
          const wantParts = deviation?._tag === "ContradictingSnapshot"
            ? want.message.parts.map((part, slot) =>
              slot === deviation.outputIndex && part.type === "text"
                ? new Part.TextPart({ ...part, attributes: { ...part.attributes, phase: "final_answer" } })
                : part
            )
            : want.message.parts
          expect(got.message.parts.map((part) => comparable(part, withoutItemId))).toStrictEqual(
            wantParts.map((part) => comparable(part, withoutItemId))
          )
          got.message.parts.forEach((part, slot) => {
            const wantPart = want.message.parts[slot]!
            if (part.type === "reasoning" && wantPart.type === "reasoning") {
              assert.strictEqual(part.payload === undefined, wantPart.payload === undefined)
              assert.strictEqual(part.payload?.data.length, wantPart.payload?.data.length)
            }
          })

          // Every character of an item's final text reaches a UI exactly once.
          const shown = shownText(elements, got.id)
          const slots = Array.from(shown.keys()).sort((a, b) => a - b)
          assert.strictEqual(slots.length, got.message.parts.length)
          slots.forEach((outputIndex, slot) => {
            const part = got.message.parts[slot]!
            const text = finalText(part)
            const seen = shown.get(outputIndex)!
            if (text !== undefined) assert.strictEqual(seen.text.join(""), text)
            if (part.type === "reasoning") {
              expect(seen.summary.map((entries) => entries.join(""))).toStrictEqual(part.summary)
            }
          })
        }

        switch (deviation?._tag) {
          case undefined:
            assert.deepStrictEqual(warnings, [])
            assert.isFalse(elements.some((e) => e.type === "part" && e.replace === true))
            break
          case "AbridgedDeltas": {
            // The deltas of the commentary message deliver a prefix; the completing part brings the rest.
            const updates = parts(elements, deviation.outputIndex)
            const completing = updates.at(-1)!
            assert.isFalse(completing.partial)
            assert.notStrictEqual(completing.replace, true)
            assert.isAbove((completing.part as Part.TextPart).text.length, 0)
            assert.deepStrictEqual(warnings, [])
            break
          }
          case "ContradictingSnapshot": {
            // One delta `X` against a 35-character `.done` text: the snapshot replaces the slot.
            const updates = parts(elements, deviation.outputIndex)
            const snapshot = updates.at(-1)!
            assert.isTrue(snapshot.replace)
            assert.isFalse(snapshot.partial)
            assert.strictEqual((snapshot.part as Part.TextPart).text.length, 35)
            assert.isTrue(updates.slice(0, -1).some((u) => u.partial && (u.part as Part.TextPart).text === "X"))
            assert.strictEqual(warnings.length, 1)
            assert.include(warnings[0], "the snapshot wins")
            break
          }
          case "TerminalItemIdChanged": {
            const done = recordedEvents(name).filter((event) => event.type === "response.output_item.done")
              .sort((a, b) => (a.output_index as number) - (b.output_index as number))
            const ids = aggregated[0]!.message.parts.map((part) => part.attributes.itemId)
            expect(ids).toStrictEqual(done.map((event) => (event.item as { id?: string }).id))
            expect(ids).not.toStrictEqual(expected[0]!.message.parts.map((part) => part.attributes.itemId))
            assert.deepStrictEqual(warnings, [])
            break
          }
          case "IdsRotate": {
            // The deltas carry other ids than the done items; the fold keys on output index and keeps the
            // done item's id.
            const done = recordedEvents(name).filter((event) => event.type === "response.output_item.done")
              .sort((a, b) => (a.output_index as number) - (b.output_index as number))
            const ids = aggregated.flatMap((r) => r.message.parts.map((part) => part.attributes.itemId))
            expect(ids).toStrictEqual(done.map((event) => (event.item as { id?: string }).id))
            const deltaIds = new Set(
              elements.flatMap((e) => e.type === "part" && e.partial ? [e.part.attributes.itemId] : [])
            )
            assert.isFalse(ids.every((id) => deltaIds.has(id)))
            assert.deepStrictEqual(warnings, [])
            break
          }
          case "NoArgumentDeltas": {
            const calls = elements.filter((e): e is StreamPart.PartUpdate =>
              e.type === "part" && e.part.type === "tool_call"
            )
            assert.strictEqual(calls.length, 1)
            assert.isFalse(calls[0]!.partial)
            assert.notStrictEqual((calls[0]!.part as Part.ToolCallPart).arguments, "")
            assert.deepStrictEqual(warnings, [])
            break
          }
        }
      }))
  }
})
