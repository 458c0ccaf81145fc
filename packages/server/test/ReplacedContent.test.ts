/**
 * A `LanguageModel` upstream whose final item contradicts what it streamed: a Responses upstream whose
 * `response.output_item.done` holds other text than its deltas for a content part (or content parts the
 * deltas never had, or not those they had). `ResponsesLanguageModel` then sends the done item's parts with
 * `replace: true` (`StreamPart.PartUpdate`), and the gateway must write a stream whose every client ends
 * with the done item's content and never holds text twice: the `.done` events carry the final text (the
 * official `openai` SDK's accumulator sets `output_text.done`'s `text`, `content_part.done`'s part and
 * `output_item.done`'s item over what its deltas built), and no text is written again as deltas or as
 * another item. Before, the gateway appended the replacing text to the streamed one (`"XAnonymized
 * assistant response text."`), or wrote it as one more message item.
 *
 * First on a recording as it is, `vai-azure-gpt54-multi-summary-encrypted.chunks.txt` (Azure gpt-5.4, six
 * summary parts, then a message whose one delta `X` its done item contradicts: anonymised upstream, see
 * `fixtures/SOURCES.md`); then on recordings whose done item and terminal snapshot are changed (the text of
 * `pai-gpt4omini-text-logprobs.sse`, gpt-4o-mini's nine `output_text.delta`s, also with a second content part
 * added as OpenAI's lifecycle writes one, since no recording of a message of several content parts exists;
 * the arguments of `pai-gpt4o-function-call-args-deltas.sse`; a summary part of
 * `pai-o3mini-reasoning-summary-deltas.sse`). Each stream is read by the `openai` SDK's
 * `responses.stream(...)`: its `finalResponse()`, and its accumulator (`accumulateResponse`) over every event
 * before the terminal one, which must already hold the terminal response's `output`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { accumulateEvents, checkLifecycle, parseSse, post, readFixture, responsesUpstream, withGateway, type WireJson as Json } from "./utils.js"

/** An event or item of a recording, read loosely (the wire JSON of the tests). */
type Event = Json

/** A recording's events, in order (raw SSE, or one JSON event per line: `*.chunks.txt`). */
const recorded = (name: string): ReadonlyArray<Event> => {
  const text = readFixture(`responses-sse/${name}`)
  return name.endsWith(".chunks.txt")
    ? text.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line))
    : parseSse(text).map((frame) => frame.data)
}

const TEXT_RECORDING = "pai-gpt4omini-text-logprobs.sse"
/** What the text recording's nine deltas say. */
const RECORDED_TEXT = "The capital of Minas Gerais is Belo Horizonte."

const outputText = (text: string) => ({ type: "output_text", annotations: [], logprobs: [], text })

/**
 * A recording whose `response.output_item.done` item at `outputIndex` (and the same item in the terminal
 * snapshot) is `change`d, with `extra` (a content part and its deltas) streamed after the message's own
 * content part; renumbered from 0, framed as SSE.
 */
const variant = (
  name: string,
  outputIndex: number,
  change: (item: Event) => Event,
  extra?: { readonly part: Event; readonly deltas: ReadonlyArray<string> }
): string => {
  const events: Array<Event> = []
  for (const event of recorded(name)) {
    if (event.type === "response.output_item.done" && event.output_index === outputIndex) {
      if (extra !== undefined) events.push(...contentPartEvents(event.item.id, outputIndex, 1, extra.part, extra.deltas))
      events.push({ ...event, item: change(event.item) })
    } else if (event.type === "response.completed") {
      const output = event.response.output.map((item: Event, index: number) => index === outputIndex ? change(item) : item)
      events.push({ ...event, response: { ...event.response, output } })
    } else {
      events.push(event)
    }
  }
  return events.map((event, index) => {
    const numbered = { ...event, sequence_number: index }
    return `event: ${event.type}\ndata: ${JSON.stringify(numbered)}\n\n`
  }).join("")
}

/** The text recording with its message's content `done` in the done item and the snapshot. */
const textVariant = (done: ReadonlyArray<unknown>, extra?: { readonly part: Event; readonly deltas: ReadonlyArray<string> }) =>
  variant(TEXT_RECORDING, 0, (item) => ({ ...item, content: done }), extra)

/** The events of content part `contentIndex` of the message at `outputIndex`, its text as `deltas`. */
const contentPartEvents = (
  itemId: string,
  outputIndex: number,
  contentIndex: number,
  part: Event,
  deltas: ReadonlyArray<string>
): Array<Event> => {
  const at = { item_id: itemId, output_index: outputIndex, content_index: contentIndex }
  const refusal = part.type === "refusal"
  return [
    { type: "response.content_part.added", ...at, part: refusal ? { type: "refusal", refusal: "" } : outputText("") },
    ...deltas.map((delta) => ({ type: refusal ? "response.refusal.delta" : "response.output_text.delta", ...at, delta, ...(refusal ? {} : { logprobs: [] }) })),
    refusal
      ? { type: "response.refusal.done", ...at, refusal: part.refusal }
      : { type: "response.output_text.done", ...at, text: part.text, logprobs: [] },
    { type: "response.content_part.done", ...at, part }
  ]
}

/** What a client of the gateway at `url` ends with, read by the `openai` SDK (see the module doc). */
const readWithSdk = (url: string) =>
  Effect.promise(async () => {
    const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
    const stream = client.responses.stream({ model: "m", input: "hi" })
    const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
    stream.on("event", (event) => events.push(event))
    const final = await stream.finalResponse()
    // what a client that shows every delta as it comes has shown, per output index
    const shown = new Map<number, string>()
    for (const event of events) {
      if (SHOWN.has(event.type)) {
        const { delta, output_index } = event as { readonly delta: string; readonly output_index: number }
        shown.set(output_index, (shown.get(output_index) ?? "") + delta)
      }
    }
    const last = events[events.length - 1]!
    return { final, accumulated: accumulateEvents(events.slice(0, -1))!, terminal: last.type === "response.completed" ? last.response : undefined, shown }
  })

/** The delta events whose text a client shows. */
const SHOWN = new Set([
  "response.output_text.delta",
  "response.refusal.delta",
  "response.function_call_arguments.delta",
  "response.reasoning_summary_text.delta"
])

/**
 * What of each output item a test checks: a message's content, a function call's arguments, a reasoning
 * item's summary texts (`parsed`, which the `openai` SDK's `finalResponse()` adds, left out).
 */
const project = (output: ReadonlyArray<unknown>): ReadonlyArray<unknown> =>
  (output as ReadonlyArray<Json>).map((item) =>
    item.type === "message"
      ? item.content.map(({ parsed: _, ...part }: Json) => part)
      : item.type === "function_call"
      ? { arguments: item.arguments }
      : item.type === "reasoning"
      ? { summary: item.summary.map((part: Json) => part.text) }
      : item.type
  )

const FUNCTION_RECORDING = "pai-gpt4o-function-call-args-deltas.sse"
const REASONING_RECORDING = "pai-o3mini-reasoning-summary-deltas.sse"
/** The recorded reasoning item's summary texts and the recorded answer. */
const reasoningRecording = recorded(REASONING_RECORDING).filter((event) => event.type === "response.output_item.done")
const SUMMARY: ReadonlyArray<string> = reasoningRecording[0]!.item.summary.map((part: Json) => part.text)
const ANSWER: string = reasoningRecording[1]!.item.content[0].text

/** A real recording whose message delta (`X`) contradicts its done item (`fixtures/SOURCES.md`: anonymised upstream). */
const AZURE_RECORDING = "vai-azure-gpt54-multi-summary-encrypted.chunks.txt"
const AZURE_SUMMARY: ReadonlyArray<string> = recorded(AZURE_RECORDING)
  .find((event) => event.type === "response.output_item.done" && event.item.type === "reasoning")!.item.summary
  .map((part: Json) => part.text)

describe("a Responses upstream whose done item contradicts its deltas, through the gateway", () => {
  const cases: ReadonlyArray<{
    readonly what: string
    readonly sse: string
    /** the client's final output items (`project`): the gateway writes one message item per content part */
    readonly expected: ReadonlyArray<unknown>
    /**
     * what a client that shows each delta as it comes has shown of each item: the final text, or the text
     * streamed before the contradiction came (never both, never anything twice)
     */
    readonly shown: ReadonlyArray<string>
  }> = [
    {
      what: "recorded as it is (Azure gpt-5.4, anonymised upstream: the delta says X, the done item otherwise)",
      sse: variant(AZURE_RECORDING, -1, (item) => item),
      expected: [{ summary: AZURE_SUMMARY }, [outputText("Anonymized assistant response text.")]],
      shown: [AZURE_SUMMARY.join(""), "X"]
    },
    {
      what: "recorded: the done item's text differs from the nine deltas",
      sse: textVariant([outputText("The capital of Minas Gerais is Belo Horizonte (MG).")]),
      expected: [[outputText("The capital of Minas Gerais is Belo Horizonte (MG).")]],
      shown: [RECORDED_TEXT]
    },
    {
      what: "recorded: the done item's text extends the deltas' (no contradiction: the rest as a delta)",
      sse: textVariant([outputText(`${RECORDED_TEXT} It is in Brazil.`)]),
      expected: [[outputText(`${RECORDED_TEXT} It is in Brazil.`)]],
      shown: [`${RECORDED_TEXT} It is in Brazil.`]
    },
    {
      what: "recorded: the done item is a refusal where the deltas were text",
      sse: textVariant([{ type: "refusal", refusal: "I can't help with that." }]),
      expected: [[{ type: "refusal", refusal: "I can't help with that." }]],
      shown: [RECORDED_TEXT]
    },
    {
      what: "recorded + a second content part: the done item's part 1 text differs from its deltas",
      sse: textVariant([outputText(RECORDED_TEXT), outputText(" It is in Brazil.")], {
        part: outputText(" It is in Brasil."),
        deltas: [" It is", " in Bras", "il."]
      }),
      expected: [[outputText(RECORDED_TEXT)], [outputText(" It is in Brazil.")]],
      shown: [RECORDED_TEXT, " It is in Brazil."]
    },
    {
      what: "recorded + a second content part: the done item's part 0 differs, part 1 as streamed",
      sse: textVariant([outputText("Belo Horizonte."), { type: "refusal", refusal: "No more." }], {
        part: { type: "refusal", refusal: "No more." },
        deltas: ["No ", "more."]
      }),
      expected: [[outputText("Belo Horizonte.")], [{ type: "refusal", refusal: "No more." }]],
      shown: [RECORDED_TEXT, "No more."]
    },
    {
      what: "recorded: the done item has a refusal part the deltas never had, and its text differs",
      sse: textVariant([outputText("Belo Horizonte."), { type: "refusal", refusal: "No more." }]),
      expected: [[outputText("Belo Horizonte.")], [{ type: "refusal", refusal: "No more." }]],
      shown: [RECORDED_TEXT, "No more."]
    },
    {
      what: "recorded + a second content part the done item does not have (the whole item replaced)",
      sse: textVariant([outputText(`${RECORDED_TEXT} It is in Brazil.`)], {
        part: outputText(" It is in Brazil."),
        deltas: [" It is", " in Brazil."]
      }),
      expected: [[outputText(`${RECORDED_TEXT} It is in Brazil.`)]],
      shown: [`${RECORDED_TEXT} It is in Brazil.`]
    },
    {
      what: "recorded (gpt-4o function call): the done item's arguments differ from the five deltas",
      sse: variant(FUNCTION_RECORDING, 0, (item) => ({ ...item, arguments: "{\"country\":\"Brazil\"}" })),
      expected: [{ arguments: "{\"country\":\"Brazil\"}" }],
      shown: ["{\"country\":\"France\"}"]
    },
    {
      what: "recorded (gpt-4o function call): the done item's arguments are whitespace alone (the client gets {})",
      sse: variant(FUNCTION_RECORDING, 0, (item) => ({ ...item, arguments: " \n" })),
      expected: [{ arguments: "{}" }],
      shown: ["{\"country\":\"France\"}"]
    },
    {
      what: "recorded (o3-mini reasoning): the done item's first summary part (closed already) differs",
      sse: variant(REASONING_RECORDING, 0, (item) => ({
        ...item,
        summary: item.summary.map((part: Json, index: number) => index === 0 ? { ...part, text: "Crossing safely." } : part)
      })),
      expected: [{ summary: ["Crossing safely.", ...SUMMARY.slice(1)] }, [outputText(ANSWER)]],
      shown: [SUMMARY.join(""), ANSWER]
    },
    {
      what: "recorded (o3-mini reasoning): the done item's last summary part (open) differs",
      sse: variant(REASONING_RECORDING, 0, (item) => ({
        ...item,
        summary: item.summary.map((part: Json, index: number) => index === item.summary.length - 1 ? { ...part, text: "Done." } : part)
      })),
      expected: [{ summary: [...SUMMARY.slice(0, -1), "Done."] }, [outputText(ANSWER)]],
      shown: [SUMMARY.join(""), ANSWER]
    }
  ]

  for (const { expected, shown: expectedShown, sse, what } of cases) {
    it.effect(`${what}: the client ends with the done item's content, every text once`, () =>
      withGateway(responsesUpstream(sse), {}, (url) =>
        Effect.gen(function*() {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
          const terminal = checkLifecycle(parseSse(answer.text), { corrected: true })
          expect(project(terminal.output as ReadonlyArray<unknown>)).toEqual(expected)
          const { accumulated, final, shown, terminal: completed } = yield* readWithSdk(url)
          expect(project(final.output)).toEqual(expected)
          // the stream carries it: accumulated up to the terminal event, the output is already the final one
          expect(accumulated.output).toEqual(completed?.output)
          // no text is written twice: deltas written before the contradiction came are not written again
          expect(final.output.map((_, index) => shown.get(index) ?? "")).toEqual(expectedShown)
        })))
  }
})
