/**
 * `ResponsesLifecycle`: the events of long items (many deltas, held in blocks as they are written), and
 * `toSsePieces`, the SSE text of events in pieces, a large string in slices of its JSON escaping, equal to
 * `toSse` character for character; `toJsonPieces`, the same for one JSON value.
 */
import { StreamPart, UnsafePart, Usage } from "@effect-responses/core"
import { ResponsesLifecycle } from "@effect-responses/server"
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { checkLifecycle, parseSse, readFixture, type WireJson as Json } from "./utils.js"

/** Characters whose escaping or encoding is awkward to slice: escapes, control characters, a surrogate pair, lone surrogates. */
const awkward = FastCheck.constantFrom("a", "é", "\n", "\"", "\\", "\u0001", "\u2028", "😀", "\ud83d", "\ude00", "</")
const text = FastCheck.array(awkward, { maxLength: 60 }).map((chars) => chars.join(""))
const event = FastCheck.record({
  type: FastCheck.constantFrom("response.output_text.delta", "response.output_text.done", "response.completed"),
  sequence_number: FastCheck.nat(),
  text,
  response: FastCheck.record({ output: FastCheck.array(FastCheck.record({ text, arguments: text }), { maxLength: 3 }) }),
  absent: FastCheck.constant(undefined)
})

describe("ResponsesLifecycle.toSsePieces", () => {
  it.prop(
    "the pieces join to toSse of the same events, for any piece size",
    [FastCheck.array(event, { maxLength: 4 }), FastCheck.integer({ min: 1, max: 24 })],
    ([events, pieceChars]) => {
      const pieces = [...ResponsesLifecycle.toSsePieces(events, pieceChars)]
      expect(pieces.join("")).toBe(ResponsesLifecycle.toSse(events))
      expect(pieces.every((piece) => piece !== "")).toBe(true)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("a 4 MB answer repeated by an event is written in slices: no piece holds more than one slice's escaping", () => {
    const answer = "😀 \"quoted\"\n".repeat(300_000)
    const events = [{ type: "response.output_text.done", sequence_number: 7, item_id: "msg_1", text: answer, logprobs: [] }]
    const pieces = [...ResponsesLifecycle.toSsePieces(events)]
    expect(pieces.join("")).toBe(ResponsesLifecycle.toSse(events))
    expect(pieces.length).toBeGreaterThan(answer.length / (64 * 1024))
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(6 * 64 * 1024)
  })
})

describe("ResponsesLifecycle.toJsonPieces", () => {
  it.prop(
    "the pieces join to JSON.stringify of the same value, for any piece size; no empty piece",
    [FastCheck.array(event, { maxLength: 4 }), FastCheck.integer({ min: 1, max: 24 })],
    ([events, pieceChars]) => {
      const value = { id: "resp_1", output: events }
      const pieces = [...ResponsesLifecycle.toJsonPieces(value, pieceChars)]
      expect(pieces.join("")).toBe(JSON.stringify(value))
      expect(pieces.every((piece) => piece !== "")).toBe(true)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("a value without a long string is one piece; a 4 MB text is written in slices", () => {
    expect([...ResponsesLifecycle.toJsonPieces({ id: "resp_1", output: [{ text: "hi" }] })]).toEqual([JSON.stringify({ id: "resp_1", output: [{ text: "hi" }] })])
    const answer = { output: [{ content: [{ type: "output_text", text: "😀 \"quoted\"\n".repeat(300_000) }] }] }
    const pieces = [...ResponsesLifecycle.toJsonPieces(answer)]
    expect(pieces.join("")).toBe(JSON.stringify(answer))
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(6 * 64 * 1024)
  })
})

describe("ResponsesLifecycle.toJsonPieces and toSsePieces with the JSON text of long strings", () => {
  it("a long string of `texts` is written as its text, decoded a slice at a time; an equal string too; others escaped", () => {
    const known = "é😀 \"x\"\n".repeat(100_000)
    const other = "o\n".repeat(100_000)
    // spelled with an escape JSON.stringify does not write (`\u00e9`): the pieces show the text was copied;
    // cut inside a character (the decoding carries its bytes over)
    const text = JSON.stringify(known).replace("é", "\\u00e9")
    const bytes = new TextEncoder().encode(text)
    const texts = [{ value: known, bytes: [bytes.subarray(0, 4), bytes.subarray(4, 333_333), bytes.subarray(333_333)] }]
    const value = { instructions: known, tools: [{ description: "é😀 \"x\"\n".repeat(100_000) }], other }
    const expected = JSON.stringify(value).replaceAll(JSON.stringify(known), text)
    expect(expected).not.toBe(JSON.stringify(value))
    const pieces = [...ResponsesLifecycle.toJsonPieces(value, undefined, texts)]
    expect(pieces.join("")).toBe(expected)
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(6 * 64 * 1024)
    const events = [{ type: "response.created", sequence_number: 0, response: value }]
    expect([...ResponsesLifecycle.toSsePieces(events, undefined, texts)].join("")).toBe(
      ResponsesLifecycle.toSse(events).replaceAll(JSON.stringify(known), text)
    )
  })
})

/** Values `JSON.stringify` writes in its own ways: members left out, `null` elements, `toJSON`, boxed primitives, escaped keys. */
const odd = FastCheck.letrec((tie) => ({
  value: FastCheck.oneof(
    { depthSize: "small", withCrossShrink: true },
    text,
    FastCheck.constantFrom(1, -0.5, 1e21, Number.NaN, true, null, undefined, () => 1, Symbol("s")),
    FastCheck.constantFrom(new Date(0), new Number(2), new String("s😀"), new Boolean(false), { toJSON: () => ["t"] }, new (class {
      readonly field = "x"
    })(), Object.assign(Object.create(null) as object, { a: [1, "b"] })),
    FastCheck.array(tie("value"), { maxLength: 5 }),
    FastCheck.dictionary(text, tie("value"), { maxKeys: 4 })
  )
})).value

describe("ResponsesLifecycle.toJsonPieces, a large value", () => {
  it.prop(
    "the pieces join to JSON.stringify of any value, however deep, for any piece size",
    [odd, FastCheck.integer({ min: 1, max: 40 })],
    ([value, pieceChars]) => {
      const pieces = [...ResponsesLifecycle.toJsonPieces({ id: "resp_1", value }, pieceChars)]
      expect(pieces.join("")).toBe(JSON.stringify({ id: "resp_1", value }))
      expect(pieces.every((piece) => piece !== "")).toBe(true)
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("the echo of 10,000 tools (a recorded answer's, repeated) is written a run of tools at a time: no piece of more than about 64 Ki characters", () => {
    const recorded = JSON.parse(readFixture("responses-json/pai-gpt4o-two-parallel-function-calls.json")) as { tools: Array<object> }
    const answer = { ...recorded, tools: Array.from({ length: 10_000 }, (_, i) => ({ ...recorded.tools[0]!, name: `get_location_${i}` })) }
    const pieces = [...ResponsesLifecycle.toJsonPieces(answer)]
    expect(pieces.join("")).toBe(JSON.stringify(answer))
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(1.5 * 64 * 1024)
    const events = [{ type: "response.created", sequence_number: 0, response: answer }] as const
    const frames = [...ResponsesLifecycle.toSsePieces(events)]
    expect(frames.join("")).toBe(ResponsesLifecycle.toSse(events))
    expect(Math.max(...frames.map((piece) => piece.length))).toBeLessThanOrEqual(1.5 * 64 * 1024)
  })
})

describe("ResponsesLifecycle.toSse, text deltas", () => {
  it.prop(
    "the frames of a text stream's events are JSON.stringify's of the same events as plain objects, character for character",
    [FastCheck.array(text.filter((delta) => delta !== ""), { minLength: 1, maxLength: 6 })],
    ([deltas]) => {
      const encoder = ResponsesLifecycle.make({ responseId: "resp_1", createdAt: 0, model: "m", request: { echo: {}, namespacedTools: new Map() } })
      const events: Array<ResponsesLifecycle.Event> = []
      encoder.start(events)
      for (const delta of deltas) encoder.push(UnsafePart.partUpdate("resp_1", 0, true, UnsafePart.textDelta(delta, {})), events)
      encoder.push(new StreamPart.ResponseFinished({ responseId: "resp_1", status: "completed", finishReason: "stop", usage: Usage.empty }), events)
      const plain = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event })}\n\n`).join("")
      expect(ResponsesLifecycle.toSse(events)).toBe(plain)
      expect([...ResponsesLifecycle.toSsePieces(events, 16)].join("")).toBe(plain)
      expect(events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta)).toEqual(deltas)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "the frames of text deltas of several items, in any order, are JSON.stringify's of the same events",
    [FastCheck.array(FastCheck.tuple(FastCheck.integer({ min: 0, max: 2 }), text.filter((delta) => delta !== "")), { minLength: 1, maxLength: 12 })],
    ([deltas]) => {
      const encoder = ResponsesLifecycle.make({ responseId: "resp_1", createdAt: 0, model: "m", request: { echo: {}, namespacedTools: new Map() } })
      const events: Array<ResponsesLifecycle.Event> = []
      encoder.start(events)
      for (const [outputIndex, delta] of deltas) {
        encoder.push(UnsafePart.partUpdate("resp_1", outputIndex, true, UnsafePart.textDelta(delta, {})), events)
      }
      encoder.push(new StreamPart.ResponseFinished({ responseId: "resp_1", status: "completed", finishReason: "stop", usage: Usage.empty }), events)
      const plain = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event })}\n\n`).join("")
      expect(ResponsesLifecycle.toSse(events)).toBe(plain)
      expect(events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta))
        .toEqual(deltas.map(([, delta]) => delta))
    },
    { fastCheck: { numRuns: 200 } }
  )
})

describe("ResponsesLifecycle, long items", () => {
  it("10,000 text deltas, then two calls of 6,000 fragments interleaved (one buffered while the other streams): each fragment written once, the done events and the output whole", () => {
    const encoder = ResponsesLifecycle.make({ responseId: "resp_1", createdAt: 0, model: "m", request: { echo: {}, namespacedTools: new Map() } })
    const events: Array<ResponsesLifecycle.Event> = []
    encoder.start(events)
    const text = Array.from({ length: 10_000 }, (_, i) => `t${i} `)
    for (const delta of text) encoder.push(UnsafePart.partUpdate("resp_1", 0, true, UnsafePart.textDelta(delta, {})), events)
    const args = (call: string) => Array.from({ length: 6_000 }, (_, i) => `${call}${i},`)
    const [first, second] = [args("a"), args("b")]
    for (let i = 0; i < 6_000; i++) {
      encoder.push(UnsafePart.partUpdate("resp_1", 1, true, UnsafePart.toolCallPart(i === 0 ? "call_a" : "", i === 0 ? "f" : "", first[i]!, {})), events)
      encoder.push(UnsafePart.partUpdate("resp_1", 2, true, UnsafePart.toolCallPart(i === 0 ? "call_b" : "", i === 0 ? "g" : "", second[i]!, {})), events)
    }
    encoder.push(new StreamPart.ResponseFinished({ responseId: "resp_1", status: "completed", finishReason: "tool_calls", usage: Usage.empty }), events)
    const output = checkLifecycle(parseSse(ResponsesLifecycle.toSse(events))).output as ReadonlyArray<Json>
    expect(output.map((item) => item.type)).toEqual(["message", "function_call", "function_call"])
    expect(output[0]!.content[0].text).toBe(text.join(""))
    expect([output[1]!.call_id, output[1]!.arguments]).toEqual(["call_a", first.join("")])
    expect([output[2]!.call_id, output[2]!.arguments]).toEqual(["call_b", second.join("")])
    // the buffered call was written at its turn in one delta, the streamed ones a delta per fragment
    const deltas = (type: string, outputIndex: number) => events.filter((event) => event.type === type && event.output_index === outputIndex).length
    expect([deltas("response.output_text.delta", 0), deltas("response.function_call_arguments.delta", 1), deltas("response.function_call_arguments.delta", 2)])
      .toEqual([10_000, 6_000, 1])
  })
})

describe("ResponsesLifecycle, a message of several content parts from a LanguageModel upstream", () => {
  it("text, then a refusal in content part 1 of the same message (as ResponsesStream decodes one): two message items, nothing dropped or doubled", () => {
    const encoder = ResponsesLifecycle.make({ responseId: "resp_1", createdAt: 0, model: "m", request: { echo: {}, namespacedTools: new Map() } })
    const events: Array<ResponsesLifecycle.Event> = []
    encoder.start(events)
    const attributes = { itemId: "msg_up" }
    const done = { itemId: "msg_up", status: "completed" }
    for (
      const update of [
        UnsafePart.partUpdate("resp_up", 0, true, UnsafePart.textDelta("Hello", attributes)),
        UnsafePart.contentPartUpdate("resp_up", 0, 1, true, false, UnsafePart.refusalPart("I cannot ", attributes)),
        UnsafePart.contentPartUpdate("resp_up", 0, 1, true, false, UnsafePart.refusalPart("do that.", attributes)),
        UnsafePart.partUpdate("resp_up", 0, false, UnsafePart.textPart("", [], done)),
        UnsafePart.contentPartUpdate("resp_up", 0, 1, false, false, UnsafePart.refusalPart("", done))
      ]
    ) encoder.push(update, events)
    encoder.push(new StreamPart.ResponseFinished({ responseId: "resp_up", status: "completed", finishReason: "stop", usage: Usage.empty }), events)
    const output = checkLifecycle(parseSse(ResponsesLifecycle.toSse(events))).output as ReadonlyArray<Json>
    expect(output.map((item) => [item.type, item.content])).toEqual([
      ["message", [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }]],
      ["message", [{ type: "refusal", refusal: "I cannot do that." }]]
    ])
  })
})
