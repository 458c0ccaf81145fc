/**
 * A Responses upstream whose stream breaks off inside a message of two content parts, through the gateway
 * (which writes one message item per content part): content part 0, which the upstream finished (its
 * lifecycle completes a content part before it adds the next: the API reference's `response.content_part.done`,
 * then `response.content_part.added` of the next), is a finished item of the failed response's `output`; what
 * arrived of content part 1 is written as its deltas, the item left open (no `.done`), as any item the
 * upstream never finished. Before, part 0 was left out of `output` and part 1's deltas were never written
 * (part 1 waited for part 0 to close at the upstream's `response.output_item.done`, which never came).
 *
 * On the recorded `pai-gpt4omini-text-logprobs.sse` (gpt-4o-mini's nine `output_text.delta`s), cut before its
 * `response.output_item.done`, with a second content part streamed after the first, as OpenAI's lifecycle
 * writes one (no recording of a message of several content parts exists: `fixtures/SOURCES.md`); the
 * raw stream through `checkLifecycle`, and the `openai` SDK's accumulator (`accumulateResponse`) over the
 * events before the `error` event (the SDK's stream throws there).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type OpenAI from "openai"
import { accumulateEvents, checkLifecycle, parseSse, post, readFixture, responsesUpstream, withGateway, type WireJson as Json } from "./utils.js"

const RECORDING = "responses-sse/pai-gpt4omini-text-logprobs.sse"
/** What the recording's nine deltas say. */
const RECORDED_TEXT = "The capital of Minas Gerais is Belo Horizonte."

/**
 * The recording up to its message's `response.output_item.done` (left out, with all after it), and then the
 * events of content part 1 with `deltas` (its `.done` events too when `partOneDone`), renumbered, as SSE.
 */
const cut = (deltas: ReadonlyArray<string>, options: { readonly partOne: boolean } = { partOne: true }): string => {
  const events = parseSse(readFixture(RECORDING)).map((frame) => frame.data as Json)
  const end = events.findIndex((event) => event.type === "response.output_item.done")
  const kept: Array<Json> = events.slice(0, end)
  if (!options.partOne) {
    // cut inside part 0: after its fifth delta
    const fifth = kept.filter((event) => event.type === "response.output_text.delta")[4]!
    kept.splice(kept.indexOf(fifth) + 1)
  } else {
    const itemId = kept.find((event) => event.type === "response.output_item.added")!.item.id
    const at = { item_id: itemId, output_index: 0, content_index: 1 }
    kept.push({ type: "response.content_part.added", ...at, part: { type: "output_text", annotations: [], logprobs: [], text: "" } })
    for (const delta of deltas) kept.push({ type: "response.output_text.delta", ...at, delta, logprobs: [] })
  }
  return kept.map((event, index) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`).join("")
}

/** The raw stream's checked terminal response, its events, and the SDK's accumulation of them up to `error`. */
const failedStream = (url: string) =>
  Effect.gen(function*() {
    const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
    const frames = parseSse(answer.text)
    const terminal = checkLifecycle(frames)
    expect(terminal.status).toBe("failed")
    const events = frames.map((frame) => frame.data as unknown as OpenAI.Responses.ResponseStreamEvent)
    const error = events.findIndex((event) => event.type === "error")
    const accumulated = accumulateEvents(error === -1 ? events : events.slice(0, error))!
    return { terminal, events: frames.map((frame) => frame.data as Json), accumulated }
  })

/** The text of the `output_text.delta`s of output index `index`. */
const deltasOf = (events: ReadonlyArray<Json>, index: number): string =>
  events.filter((event) => event.type === "response.output_text.delta" && event.output_index === index).map((event) => event.delta).join("")

describe("a Responses upstream that breaks off inside a message of two content parts", () => {
  it.effect("cut inside part 1: part 0 is a finished item of the failed response, part 1's deltas are written, its item left open", () =>
    withGateway(responsesUpstream(cut([" It is", " in Bra"])), {}, (url) =>
      Effect.gen(function*() {
        const { accumulated, events, terminal } = yield* failedStream(url)
        const output = terminal.output as ReadonlyArray<Json>
        expect(output).toHaveLength(1)
        expect(output[0]).toMatchObject({ type: "message", status: "completed", content: [{ type: "output_text", text: RECORDED_TEXT }] })
        expect(deltasOf(events, 0)).toBe(RECORDED_TEXT)
        expect(deltasOf(events, 1)).toBe(" It is in Bra")
        expect(events.some((event) => event.type === "response.output_item.done" && event.output_index === 1)).toBe(false)
        // a client accumulating the events holds part 0 done and what arrived of part 1
        expect(accumulated.output[0]).toEqual(output[0])
        expect(accumulated.output[1]).toMatchObject({ type: "message", status: "in_progress", content: [{ type: "output_text", text: " It is in Bra" }] })
      })))

  it.effect("cut inside part 0: nothing finished, so the failed response's output is empty; what arrived was written as deltas", () =>
    withGateway(responsesUpstream(cut([], { partOne: false })), {}, (url) =>
      Effect.gen(function*() {
        const { events, terminal } = yield* failedStream(url)
        expect(terminal.output).toEqual([])
        expect(deltasOf(events, 0)).toBe(RECORDED_TEXT.slice(0, deltasOf(events, 0).length))
        expect(deltasOf(events, 0).length).toBeGreaterThan(0)
      })))
})
