import { MessageAggregator } from "@effect-responses/aggregate"
import { Message, ModelResponse, Part, StreamPart, Usage } from "@effect-responses/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

const RESP = "resp_1"

const started = (responseId = RESP, model = "gpt-5.1") => new StreamPart.ResponseStarted({ responseId, model })

const update = (outputIndex: number, partial: boolean, part: Part.AssistantPart, responseId = RESP) =>
  new StreamPart.PartUpdate({ responseId, outputIndex, partial, part })

const usage = new Usage.Usage({
  inputTokens: 10,
  cachedInputTokens: 2,
  outputTokens: 5,
  reasoningTokens: 1,
  totalTokens: 15
})

const finished = (responseId = RESP, finishReason: ModelResponse.FinishReason = "stop") =>
  new StreamPart.ResponseFinished({ responseId, status: "completed", finishReason, usage })

const payload = (data: string) => new Part.OpaquePayload({ provider: "openai.responses", kind: "encrypted_content", data })

const text = (t: string, attributes: Part.Attributes = {}, annotations: ReadonlyArray<Part.Annotation> = []) =>
  new Part.TextPart({ text: t, attributes, annotations })

const call = (args: string, attributes: Part.Attributes = {}) =>
  new Part.ToolCallPart({ callId: "call_1", name: "calculator", arguments: args, attributes })

/** The public JSON encoding of the single response of `elements`. */
const single = (elements: ReadonlyArray<StreamPart.StreamPart>) => {
  const responses = MessageAggregator.fromIterable(elements)
  assert.strictEqual(responses.length, 1)
  return responses[0]!
}

const encodeParts = (response: ModelResponse.ModelResponse) =>
  JSON.parse(JSON.stringify(response.message.parts))

describe("MessageAggregator", () => {
  it("appends text deltas and merges the emptied completing part", () => {
    const response = single([
      started(),
      update(0, true, text("Hel", { itemId: "msg_1", status: "in_progress" })),
      update(0, true, text("lo")),
      update(0, false, text("", { itemId: "msg_1", status: "completed", phase: "final_answer" })),
      finished()
    ])
    expect(encodeParts(response)).toStrictEqual([
      {
        type: "text",
        text: "Hello",
        annotations: [],
        attributes: { itemId: "msg_1", status: "completed", phase: "final_answer" }
      }
    ])
    assert.strictEqual(response.id, RESP)
    assert.strictEqual(response.model, "gpt-5.1")
    assert.strictEqual(response.status, "completed")
    assert.strictEqual(response.finishReason, "stop")
    expect(response.usage).toStrictEqual(usage)
  })

  it("appends the text a completing part still brings", () => {
    const response = single([
      started(),
      update(0, true, call('{"a":1', { itemId: "fc_1" })),
      update(0, false, call(',"b":2}', { itemId: "fc_1", status: "completed" })),
      finished(RESP, "tool_calls")
    ])
    expect(encodeParts(response)).toStrictEqual([
      {
        type: "tool_call",
        callId: "call_1",
        name: "calculator",
        arguments: '{"a":1,"b":2}',
        attributes: { itemId: "fc_1", status: "completed" }
      }
    ])
  })

  it("fills an empty slot with a complete part", () => {
    const response = single([
      started(),
      update(0, false, call('{"a":12,"b":7}', { itemId: "fc_1", status: "completed" })),
      finished(RESP, "tool_calls")
    ])
    assert.strictEqual((response.message.parts[0] as Part.ToolCallPart).arguments, '{"a":12,"b":7}')
  })

  it("replaces a slot filled by a complete part with the next complete part", () => {
    const item1 = new Part.UnknownPart({ provider: "openai.responses", kind: "web_search_call", item: { n: 1 } })
    const item2 = new Part.UnknownPart({ provider: "openai.responses", kind: "web_search_call", item: { n: 2 } })
    const response = single([started(), update(0, false, item1), update(0, false, item2), finished()])
    expect(encodeParts(response)).toStrictEqual([JSON.parse(JSON.stringify(item2))])
  })

  it("replaces the slot when a part of another type arrives", () => {
    const response = single([
      started(),
      update(0, true, text("draft")),
      update(0, false, call("{}")),
      finished()
    ])
    expect(response.message.parts.map((p) => p.type)).toStrictEqual(["tool_call"])
    assert.strictEqual(response.text, "")
  })

  it("lists slots by output index whatever their arrival order", () => {
    const response = single([
      started(),
      update(1, true, text("second")),
      update(0, false, new Part.ReasoningPart({ summary: [], payload: payload("x") })),
      update(2, false, call("{}")),
      finished()
    ])
    expect(response.message.parts.map((p) => p.type)).toStrictEqual(["reasoning", "text", "tool_call"])
  })

  it("groups two interleaved responses by responseId in first-seen order", () => {
    const responses = MessageAggregator.fromIterable([
      started("resp_b", "model-b"),
      started("resp_a", "model-a"),
      update(0, true, text("B1"), "resp_b"),
      update(0, true, text("A1"), "resp_a"),
      update(0, true, text("B2"), "resp_b"),
      update(0, true, text("A2"), "resp_a"),
      update(0, false, text(""), "resp_a"),
      finished("resp_a"),
      update(0, false, text(""), "resp_b"),
      finished("resp_b")
    ])
    expect(responses.map((r) => [r.id, r.model, r.text])).toStrictEqual([
      ["resp_b", "model-b", "B1B2"],
      ["resp_a", "model-a", "A1A2"]
    ])
  })

  it("appends reasoning summary entries element-wise across two summary indices", () => {
    const reasoning = (summary: ReadonlyArray<string>, extra: Partial<{ payload: Part.OpaquePayload; text: string }> = {}) =>
      new Part.ReasoningPart({ summary, attributes: { itemId: "rs_1" }, ...extra })
    const response = single([
      started(),
      update(0, true, reasoning(["**Plan"])),
      update(0, true, reasoning(["ning**"])),
      update(0, true, reasoning(["", "Second"])),
      update(0, true, reasoning(["", " part"])),
      update(0, true, reasoning([], { text: "raw " })),
      update(0, true, reasoning([], { text: "text" })),
      update(0, false, reasoning(["", ""], { payload: payload("enc") })),
      finished()
    ])
    const part = response.message.parts[0] as Part.ReasoningPart
    expect(part.summary).toStrictEqual(["**Planning**", "Second part"])
    assert.strictEqual(part.text, "raw text")
    assert.strictEqual(part.payload?.data, "enc")
  })

  it("replaces the reasoning payload only when the new part brings one", () => {
    const withPayload = new Part.ReasoningPart({ summary: ["a"], payload: payload("first") })
    const without = new Part.ReasoningPart({ summary: ["b"] })
    const kept = single([started(), update(0, true, withPayload), update(0, true, without), finished()])
    const keptPart = kept.message.parts[0] as Part.ReasoningPart
    assert.strictEqual(keptPart.payload?.data, "first")
    expect(keptPart.summary).toStrictEqual(["ab"])
    assert.isUndefined(keptPart.text)

    const replaced = single([
      started(),
      update(0, true, withPayload),
      update(0, false, new Part.ReasoningPart({ summary: [], payload: payload("second") })),
      finished()
    ])
    assert.strictEqual((replaced.message.parts[0] as Part.ReasoningPart).payload?.data, "second")
  })

  it("merges attributes field by field, keeping fields the newer part leaves out", () => {
    const response = single([
      started(),
      update(0, true, text("a", { itemId: "msg_1", phase: "commentary" })),
      update(0, true, text("b", { status: "in_progress" })),
      update(0, false, text("", { status: "completed" })),
      finished()
    ])
    expect(response.message.parts[0]!.attributes).toStrictEqual({
      itemId: "msg_1",
      phase: "commentary",
      status: "completed"
    })
  })

  it("a run of deltas folded at once gives what stepping one delta at a time gives", () => {
    const reasoning = (summary: ReadonlyArray<string>, more: Partial<Part.ReasoningPart> = {}) =>
      new Part.ReasoningPart({ summary, ...more })
    const a1: Part.Annotation = { type: "url_citation", url: "https://a.example", startIndex: 0, endIndex: 1 }
    const elements = [
      started(),
      update(0, true, reasoning(["Think"], { attributes: { itemId: "rs_1" } })),
      update(0, true, reasoning(["", "Again"], { text: "raw" })),
      update(0, true, reasoning(["ing"], { payload: payload("enc"), attributes: { status: "in_progress" } })),
      update(1, true, text("a", { itemId: "msg_1", phase: "commentary" })),
      update(1, true, text("b", { status: "in_progress" }, [a1])),
      update(1, true, text("c", {}, [a1])),
      update(2, true, new Part.ToolCallPart({ callId: "", name: "", arguments: "{\"a\"" })),
      update(2, true, new Part.ToolCallPart({ callId: "call_9", name: "calc", arguments: ":1}" })),
      update(2, true, new Part.ToolCallPart({ callId: "", name: "", arguments: "", attributes: { status: "done" } })),
      update(3, true, new Part.RefusalPart({ text: "no" })),
      update(3, true, new Part.RefusalPart({ text: "pe", attributes: { itemId: "msg_2" } }))
    ]
    let state = MessageAggregator.empty
    for (const element of elements) state = MessageAggregator.step(state, element)
    const stepped = MessageAggregator.done(state)
    expect(encodeParts(single(elements))).toStrictEqual(encodeParts(stepped[0]!))
    expect(encodeParts(stepped[0]!)).toStrictEqual([
      { type: "reasoning", summary: ["Thinking", "Again"], text: "raw", payload: { provider: "openai.responses", kind: "encrypted_content", data: "enc" }, attributes: { itemId: "rs_1", status: "in_progress" } },
      { type: "text", text: "abc", annotations: [a1], attributes: { itemId: "msg_1", phase: "commentary", status: "in_progress" } },
      { type: "tool_call", callId: "call_9", name: "calc", arguments: "{\"a\":1}", attributes: { status: "done" } },
      { type: "refusal", text: "nope", attributes: { itemId: "msg_2" } }
    ])
  })

  it("the content parts of a message are slots of their own, listed after their item's first, before the next item", () => {
    const at = (outputIndex: number, contentIndex: number, partial: boolean, part: Part.AssistantPart, replace?: true) =>
      new StreamPart.PartUpdate({ responseId: RESP, outputIndex, contentIndex, partial, part, ...(replace ? { replace } : {}) })
    const attributes = { itemId: "msg_1" }
    const elements = [
      started(),
      update(0, true, text("Hel", attributes)),
      at(0, 1, true, new Part.RefusalPart({ text: "No", attributes })),
      update(0, true, text("lo", attributes)),
      at(0, 2, true, text("wor", attributes)),
      update(1, true, call("{}")),
      at(0, 2, true, text("ld", attributes)),
      at(0, 1, false, new Part.RefusalPart({ text: "pe.", attributes: { ...attributes, status: "completed" } })),
      finished()
    ]
    expect(encodeParts(single(elements))).toStrictEqual([
      { type: "text", text: "Hello", annotations: [], attributes },
      { type: "refusal", text: "Nope.", attributes: { itemId: "msg_1", status: "completed" } },
      { type: "text", text: "world", annotations: [], attributes },
      { type: "tool_call", callId: "call_1", name: "calculator", arguments: "{}", attributes: {} }
    ])
    // stepped one element at a time, the same
    let state = MessageAggregator.empty
    for (const element of elements) state = MessageAggregator.step(state, element)
    expect(encodeParts(MessageAggregator.done(state)[0]!)).toStrictEqual(encodeParts(single(elements)))
    // a replacing update of content part 0 replaces the whole item: the later content parts go, until sent again
    const replaced = [
      ...elements.slice(0, -1),
      at(0, 0, false, text("Hi", attributes), true),
      at(0, 1, false, new Part.RefusalPart({ text: "No.", attributes }), true),
      finished()
    ]
    expect(encodeParts(single(replaced))).toStrictEqual([
      { type: "text", text: "Hi", annotations: [], attributes },
      { type: "refusal", text: "No.", attributes },
      { type: "tool_call", callId: "call_1", name: "calculator", arguments: "{}", attributes: {} }
    ])
  })

  it("lists the tag first in the parts and message it builds, as validated construction does", () => {
    const response = single([
      started(),
      update(0, true, text("a")),
      update(1, true, call("{}")),
      update(2, true, new Part.ReasoningPart({ summary: ["s"] })),
      update(3, true, new Part.RefusalPart({ text: "no" })),
      finished()
    ])
    assert.strictEqual(Object.keys(response.message)[0], "role")
    expect(response.message.parts.map((part) => Object.keys(part)[0])).toStrictEqual(["type", "type", "type", "type"])
    expect(JSON.stringify(response.message)).toStrictEqual(
      JSON.stringify(new Message.AssistantMessage({ parts: response.message.parts }))
    )
  })

  it("takes the annotations of the completing part, each once", () => {
    const a1: Part.Annotation = { type: "url_citation", url: "https://a.example", startIndex: 0, endIndex: 2 }
    const a2: Part.Annotation = { type: "url_citation", url: "https://b.example", startIndex: 3, endIndex: 5 }
    const response = single([
      started(),
      update(0, true, text("ab cd")),
      update(0, true, text("", {}, [a1])),
      update(0, false, text("", { status: "completed" }, [a1, a2])),
      finished()
    ])
    expect((response.message.parts[0] as Part.TextPart).annotations).toStrictEqual([a1, a2])
    assert.strictEqual(response.text, "ab cd")
  })

  it("keeps the partial transcript of a stream cut short", () => {
    const response = single([
      started(),
      update(0, false, new Part.ReasoningPart({ summary: ["thinking"], payload: payload("p") })),
      update(1, true, call('{"a":1', { itemId: "fc_1", status: "in_progress" }))
    ])
    assert.strictEqual(response.status, "in_progress")
    assert.strictEqual(response.finishReason, "other")
    expect(response.usage).toStrictEqual(Usage.empty)
    expect(response.message.parts.map((p) => p.type)).toStrictEqual(["reasoning", "tool_call"])
    assert.strictEqual((response.message.parts[1] as Part.ToolCallPart).arguments, '{"a":1')
  })

  it("keeps the incomplete reason of a response_finished", () => {
    const response = single([
      started(),
      update(0, true, text("cut")),
      new StreamPart.ResponseFinished({
        responseId: RESP,
        status: "incomplete",
        finishReason: "length",
        incompleteReason: "max_output_tokens",
        usage
      })
    ])
    assert.strictEqual(response.status, "incomplete")
    assert.strictEqual(response.finishReason, "length")
    assert.strictEqual(response.incompleteReason, "max_output_tokens")
  })

  it("starts a response on a part update without response_started", () => {
    const response = single([update(0, false, text("hi")), finished()])
    assert.strictEqual(response.model, "")
    assert.strictEqual(response.text, "hi")
  })

  it("leaves the state it is given unchanged", () => {
    const s1 = MessageAggregator.step(MessageAggregator.step(MessageAggregator.empty, started()), update(0, true, text("a")))
    const s2 = MessageAggregator.step(s1, update(0, true, text("b")))
    const s3 = MessageAggregator.step(s1, update(0, true, text("c")))
    assert.strictEqual(MessageAggregator.done(s1)[0]!.text, "a")
    assert.strictEqual(MessageAggregator.done(s2)[0]!.text, "ab")
    assert.strictEqual(MessageAggregator.done(s3)[0]!.text, "ac")
    expect(MessageAggregator.done(MessageAggregator.empty)).toStrictEqual([])
  })

  it("aggregates 100k one-character deltas", () => {
    const n = 100_000
    // 26 distinct delta elements, reused: building 100k validated elements would test the constructors
    const letters = Array.from({ length: 26 }, (_, i) => update(0, true, text(String.fromCharCode(97 + i))))
    const elements: Array<StreamPart.StreamPart> = [started()]
    const expected: Array<string> = []
    for (let i = 0; i < n; i++) {
      const delta = letters[i % 26]!
      elements.push(delta)
      expected.push((delta.part as Part.TextPart).text)
    }
    elements.push(update(0, false, text("", { status: "completed" })), finished())
    const response = single(elements)
    assert.strictEqual(response.text.length, n)
    assert.strictEqual(response.text, expected.join(""))
  })

  it.effect("runs a stream through the sink", () =>
    Effect.gen(function*() {
      const responses = yield* Stream.fromIterable([started(), update(0, true, text("a")), update(0, true, text("b")), finished()])
        .pipe(Stream.rechunk(1), Stream.run(MessageAggregator.sink))
      assert.strictEqual(responses[0]!.text, "ab")
    }))

  it.effect("aggregateSettled yields the partial transcript of a failed stream", () =>
    Effect.gen(function*() {
      const stream = Stream.concat(
        Stream.fromIterable<StreamPart.StreamPart>([started(), update(0, true, text("partial "))]),
        Stream.fail("boom")
      )
      const settled = yield* MessageAggregator.aggregateSettled(stream)
      expect(settled.failure).toStrictEqual(Option.some("boom"))
      assert.strictEqual(settled.responses[0]!.text, "partial ")
      assert.strictEqual(settled.responses[0]!.status, "in_progress")
      const failed = yield* Effect.flip(MessageAggregator.aggregate(stream))
      assert.strictEqual(failed, "boom")
    }))

  it.effect("aggregate and aggregateSettled run the stream's finalizer once, whether it ends, fails or is interrupted; each run folds anew", () =>
    Effect.gen(function*() {
      const exits: Array<string> = []
      const elements = Stream.fromIterable<StreamPart.StreamPart>([started(), update(0, true, text("a")), update(0, true, text("b"))])
      const tracked = <E>(stream: Stream.Stream<StreamPart.StreamPart, E>) =>
        Stream.ensuringWith(stream, (exit) => Effect.sync(() => exits.push(exit._tag)))
      const whole = MessageAggregator.aggregate(tracked(Stream.concat(elements, Stream.make(finished())).pipe(Stream.rechunk(1))))
      const first = yield* whole
      const second = yield* whole
      expect([first[0]!.text, second[0]!.text]).toStrictEqual(["ab", "ab"])
      const settled = yield* MessageAggregator.aggregateSettled(tracked(Stream.concat(elements, Stream.fail("boom"))))
      expect([settled.responses[0]!.text, settled.failure]).toStrictEqual(["ab", Option.some("boom")])
      const fiber = yield* Effect.fork(MessageAggregator.aggregate(tracked(Stream.concat(elements, Stream.never))))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      expect(exits).toStrictEqual(["Success", "Success", "Failure", "Failure"])
    }))

  it.prop(
    "any split of a text into deltas followed by an emptied completing part gives the text back",
    [FastCheck.string({ unit: "binary", maxLength: 200 }), FastCheck.array(FastCheck.nat(200), { maxLength: 30 })],
    ([original, cuts]) => {
      const points = [...new Set(cuts.map((c) => Math.min(c, original.length)))].sort((a, b) => a - b)
      const pieces: Array<string> = []
      let from = 0
      for (const point of [...points, original.length]) {
        pieces.push(original.slice(from, point))
        from = point
      }
      const response = single([
        started(),
        ...pieces.map((piece) => update(0, true, text(piece, { itemId: "msg_1" }))),
        update(0, false, text("", { itemId: "msg_1", status: "completed" })),
        finished()
      ])
      assert.strictEqual(response.text, original)
      assert.strictEqual(response.message.parts.length, 1)
    }
  )
  it("a complete part marked replace replaces the slot the deltas were filling (the snapshot wins)", () => {
    const response = single([
      started(),
      update(0, true, text("X", { itemId: "msg_1" })),
      new StreamPart.PartUpdate({
        responseId: RESP,
        outputIndex: 0,
        partial: false,
        replace: true,
        part: text("Hello there", { itemId: "msg_1", status: "completed" })
      }),
      finished()
    ])
    assert.strictEqual(response.text, "Hello there")
    expect(response.message.parts[0]!.attributes).toStrictEqual({ itemId: "msg_1", status: "completed" })
  })

  it("hosted-tool progress previews stand for the item until the complete item replaces them", () => {
    const progress = (status: string) =>
      new Part.UnknownPart({
        provider: "openai.responses",
        kind: "web_search_call",
        item: { type: `response.web_search_call.${status}` },
        attributes: { itemId: "ws_1", status }
      })
    const item = new Part.UnknownPart({
      provider: "openai.responses",
      kind: "web_search_call",
      item: { id: "ws_1", type: "web_search_call", status: "completed" },
      attributes: { itemId: "ws_1", status: "completed" }
    })
    let state = MessageAggregator.empty
    for (const element of [started(), update(0, true, progress("in_progress")), update(0, true, progress("searching"))]) {
      state = MessageAggregator.step(state, element)
    }
    expect(MessageAggregator.done(state)[0]!.message.parts[0]!.attributes.status).toBe("searching")
    state = MessageAggregator.step(state, update(0, false, item))
    expect(encodeParts(MessageAggregator.done(state)[0]!)).toStrictEqual([JSON.parse(JSON.stringify(item))])
  })

  it("a media status update without content keeps the partial image shown before it", () => {
    const media = (status: string, data?: string) =>
      new Part.MediaPart({
        mediaType: "image/webp",
        ...(data === undefined ? {} : { data }),
        attributes: { itemId: "ig_1", status }
      })
    const response = single([
      started(),
      update(0, true, media("generating")),
      update(0, true, media("generating", "UklGRpreview")),
      update(0, true, media("completed")),
      finished()
    ])
    expect(encodeParts(response)).toStrictEqual([
      { type: "media", mediaType: "image/webp", data: "UklGRpreview", attributes: { itemId: "ig_1", status: "completed" } }
    ])
  })
})
