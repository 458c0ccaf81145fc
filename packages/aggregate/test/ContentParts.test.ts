/**
 * A `message` output item of several content parts (API reference: `OutputMessage.content`, an array of
 * `OutputTextContent | RefusalContent`) kept through the whole client path: the body decoded
 * (`ResponsesOutput.decodeResponse`), the stream decoded (`ResponsesStream`, one slot per `content_index`)
 * and folded (`MessageAggregator`), and the parts handed back as input on the next turn
 * (`ResponsesRequest.fromPrompt`), which must give the upstream the same content parts, refusal included.
 *
 * No recording of such a message exists (`fixtures/SOURCES.md`, "Categories not found as real recordings":
 * no Responses refusal was found), so the streams are the real Azure recording
 * `vai-azure-text.chunks.txt` (vercel/ai, Apache-2.0: one message, one `output_text` "Hello") with a second
 * content part added to its message as OpenAI's lifecycle writes one (`content_part.added`, deltas, `.done`,
 * `content_part.done`, then the item and the terminal snapshot holding it).
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import type { Message, Part, StreamPart } from "@effect-responses/core"
import { Prompt } from "@effect-responses/core"
import { ResponsesOutput, ResponsesRequest, ResponsesStream } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { recordedEvents } from "./fixtures.js"

type Event = Record<string, unknown>
type Item = { readonly id: string; readonly content: ReadonlyArray<Record<string, unknown>> }

const RECORDING = "vai-azure-text.chunks.txt"

/** The events of one more content part of the message at output index 0, `deltas` its text in pieces. */
const contentPartEvents = (itemId: string, contentIndex: number, content: Record<string, unknown>, deltas: ReadonlyArray<string>): Array<Event> => {
  const at = { item_id: itemId, output_index: 0, content_index: contentIndex }
  if (content.type === "refusal") {
    return [
      { type: "response.content_part.added", ...at, part: { type: "refusal", refusal: "" } },
      ...deltas.map((delta) => ({ type: "response.refusal.delta", ...at, delta })),
      { type: "response.refusal.done", ...at, refusal: content.refusal },
      { type: "response.content_part.done", ...at, part: content }
    ]
  }
  const annotations = content.annotations as ReadonlyArray<unknown>
  return [
    { type: "response.content_part.added", ...at, part: { type: "output_text", annotations: [], logprobs: [], text: "" } },
    ...deltas.map((delta) => ({ type: "response.output_text.delta", ...at, delta, logprobs: [] })),
    ...annotations.map((annotation, index) => ({
      type: "response.output_text.annotation.added",
      ...at,
      annotation_index: index,
      annotation
    })),
    { type: "response.output_text.done", ...at, text: content.text, logprobs: [] },
    { type: "response.content_part.done", ...at, part: content }
  ]
}

/**
 * The recording with `content` added as the message's second content part, its text delivered as `deltas`;
 * the sequence numbers renumbered from 0. With `doneContent`, `output_item.done` and the snapshot hold that
 * second content part instead (a snapshot that contradicts the deltas).
 */
const withSecondContentPart = (
  content: Record<string, unknown>,
  deltas: ReadonlyArray<string>,
  doneContent: Record<string, unknown> | null = content
): { readonly events: ReadonlyArray<Event>; readonly item: Item; readonly response: Event } => {
  const events: Array<Event> = []
  let item: Item | undefined
  let response: Event | undefined
  for (const event of recordedEvents(RECORDING)) {
    if (event.type === "response.output_item.done") {
      const recorded = event.item as Item
      item = { ...recorded, content: doneContent === null ? recorded.content : [...recorded.content, doneContent] }
      events.push(...contentPartEvents(recorded.id, 1, content, deltas), { ...event, item })
    } else if (event.type === "response.completed") {
      response = { ...(event.response as Event), output: [item] }
      events.push({ ...event, response })
    } else {
      events.push(event)
    }
  }
  return {
    events: events.map((event, index) => ({ ...event, sequence_number: index })),
    item: item!,
    response: response!
  }
}

const lines = (events: ReadonlyArray<Event>): string => events.map((event) => JSON.stringify(event)).join("\n")

const decodeStream = (events: ReadonlyArray<Event>) =>
  Stream.runCollect(ResponsesStream.decodeCaptureText(Stream.make(lines(events)))).pipe(Effect.map(Chunk.toReadonlyArray))

const updates = (elements: ReadonlyArray<StreamPart.StreamPart>) =>
  elements.filter((element): element is StreamPart.PartUpdate => element.type === "part")

/** The `input` the parts of `message` become on the next turn. */
const handedBack = (message: Message.AssistantMessage) =>
  ResponsesRequest.fromPrompt(Prompt.make([Prompt.userMessage("Go on."), message]), { model: "gpt-4.1" }).pipe(
    Effect.map((body) => (body.input as ReadonlyArray<unknown>).slice(1))
  )

/** The item as it goes back as input: the output item without the fields an input item does not take. */
const asInput = (item: Item): unknown => ({ ...item, role: "assistant" })

const REFUSAL = { type: "refusal", refusal: "I can't help with that." }
const SECOND_TEXT = {
  type: "output_text",
  annotations: [{ type: "url_citation", url: "https://example.com/", title: "Example", start_index: 1, end_index: 6 }],
  logprobs: [],
  text: " world"
}

describe("a message of several content parts, from the wire to the next turn's input", () => {
  for (
    const [name, content, deltas, expected] of [
      ["output_text then refusal", REFUSAL, ["I can't ", "help with that."], [
        { type: "text", text: "Hello", annotations: [] },
        { type: "refusal", text: "I can't help with that." }
      ]],
      ["two output_text parts, the second annotated", SECOND_TEXT, [" wor", "ld"], [
        { type: "text", text: "Hello", annotations: [] },
        {
          type: "text",
          text: " world",
          annotations: [{ type: "url_citation", url: "https://example.com/", title: "Example", startIndex: 1, endIndex: 6 }]
        }
      ]]
    ] as const
  ) {
    it.effect(`${name}: one part per content part, the stream folds to the body's parts, handed back as the item`, () =>
      Effect.gen(function*() {
        const { events, item, response } = withSecondContentPart(content, deltas)
        const attributes = { itemId: item.id, status: "completed" }

        // the body: one part per content part, each with the message's attributes, annotations as sent
        const decoded = ResponsesOutput.decodeResponse(response)
        assert.isTrue(Either.isRight(decoded))
        const body = Either.getOrThrow(decoded)
        expect(body.message.parts.map(encodePart)).toStrictEqual(
          expected.map((part) => ({ ...part, attributes }))
        )

        // the stream: the second content part's deltas are updates of content index 1
        const elements = yield* decodeStream(events)
        const second = updates(elements).filter((update) => update.contentIndex === 1)
        expect(second.map((update) => [update.partial, update.part.type])).toStrictEqual([
          ...deltas.map(() => [true, content.type === "refusal" ? "refusal" : "text"]),
          ...(content.type === "refusal" ? [] : [[true, "text"]]),
          [false, content.type === "refusal" ? "refusal" : "text"]
        ])
        assert.isTrue(updates(elements).every((update) => update.replace !== true))

        // folded, the stream gives the body's message, part for part
        const [folded] = MessageAggregator.fromIterable(elements)
        expect(folded!.message.parts.map(encodePart)).toStrictEqual(body.message.parts.map(encodePart))

        // handed back: one message item holding the same content parts, refusal included
        expect(yield* handedBack(folded!.message)).toStrictEqual([asInput(item)])
        expect(yield* handedBack(body.message)).toStrictEqual([asInput(item)])
      }))
  }

  it.effect("a snapshot that drops a content part the deltas delivered replaces the whole item", () =>
    Effect.gen(function*() {
      const { events, item, response } = withSecondContentPart(REFUSAL, ["I can't"], null)
      const elements = yield* decodeStream(events)
      const replacing = updates(elements).filter((update) => update.replace === true)
      expect(replacing.map((update) => [update.contentIndex ?? 0, update.part.type])).toStrictEqual([[0, "text"]])
      const [folded] = MessageAggregator.fromIterable(elements)
      const body = Either.getOrThrow(ResponsesOutput.decodeResponse(response))
      expect(folded!.message.parts.map(encodePart)).toStrictEqual(body.message.parts.map(encodePart))
      expect(folded!.message.parts.map((part) => part.type)).toStrictEqual(["text"])
      expect(yield* handedBack(folded!.message)).toStrictEqual([asInput(item)])
    }))
})

const encodePart = (part: Part.AssistantPart): unknown => JSON.parse(JSON.stringify(part))
