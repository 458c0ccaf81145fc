import { AiError, Message, ModelResponse, Part, Prompt, StreamPart, Usage } from "@effect-responses/core"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const roundTrip = <A, I>(schema: Schema.Schema<A, I>, value: A) =>
  Effect.gen(function*() {
    const encoded = yield* Schema.encode(schema)(value)
    const json = JSON.parse(JSON.stringify(encoded))
    const decoded = yield* Schema.decodeUnknown(schema)(json)
    assert.deepStrictEqual(decoded, value)
    return json
  })

const reasoning = new Part.ReasoningPart({
  summary: ["**Calculating**\n\nI'll compute 12 plus 7.", ""],
  payload: new Part.OpaquePayload({ provider: "openai.responses", kind: "encrypted_content", data: "gAAAAABp" }),
  attributes: { itemId: "rs_1" }
})
const call = new Part.ToolCallPart({
  callId: "call_1",
  name: "calculator",
  arguments: "{\"a\":12,\"b\":7,\"op\":\"add\"}",
  attributes: { itemId: "fc_1", status: "completed" }
})
const text = new Part.TextPart({
  text: "The final result is **570**.",
  annotations: [
    { type: "url_citation", url: "https://example.com", title: "Example", startIndex: 0, endIndex: 3 },
    { type: "other", value: { type: "file_path", file_id: "file_1" } }
  ],
  attributes: { itemId: "msg_1", status: "completed", phase: "final_answer" }
})
const unknown = new Part.UnknownPart({
  provider: "openai.responses",
  kind: "web_search_call",
  item: { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "q" } },
  attributes: { itemId: "ws_1", status: "completed" }
})
const media = new Part.MediaPart({ mediaType: "application/pdf", data: "JVBERi0=", filename: "a.pdf" })
const usage = new Usage.Usage({ inputTokens: 134, cachedInputTokens: 0, outputTokens: 28, reasoningTokens: 0, totalTokens: 162 })

describe("the part model", () => {
  it.effect("a prompt of every message kind round-trips through JSON", () =>
    Effect.gen(function*() {
      const prompt = Prompt.make([
        new Message.SystemMessage({ content: "Be brief." }),
        new Message.UserMessage({ parts: [new Part.TextPart({ text: "What is (12 + 7) * 3 * 10?" }), media] }),
        new Message.AssistantMessage({
          parts: [reasoning, call, text, unknown, new Part.RefusalPart({ text: "no" })]
        }),
        new Message.ToolMessage({
          results: [new Part.ToolResultPart({ callId: "call_1", name: "calculator", output: "19", isError: false })]
        })
      ])
      const json = yield* roundTrip(Prompt.Prompt, prompt)
      assert.deepStrictEqual(json.messages.map((m: { role: string }) => m.role), ["system", "user", "assistant", "tool"])
      assert.deepStrictEqual(
        json.messages[2].parts.map((p: { type: string }) => p.type),
        ["reasoning", "tool_call", "text", "unknown", "refusal"]
      )
      assert.strictEqual(json.messages[2].parts[0].payload.data, "gAAAAABp")
      assert.strictEqual(json.messages[2].parts[1].attributes.itemId, "fc_1")
    }))

  it.effect("the public JSON of a part uses `type` and keeps attributes", () =>
    Effect.gen(function*() {
      const json = yield* roundTrip(Part.AssistantPart, call)
      assert.deepStrictEqual(json, {
        type: "tool_call",
        callId: "call_1",
        name: "calculator",
        arguments: "{\"a\":12,\"b\":7,\"op\":\"add\"}",
        attributes: { itemId: "fc_1", status: "completed" }
      })
    }))

  it.effect("hand-written JSON decodes with defaults for omitted annotations and attributes", () =>
    Effect.gen(function*() {
      const prompt = yield* Prompt.decodeUnknown({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] })
      const part = (prompt.messages[0] as Message.UserMessage).parts[0] as Part.TextPart
      assert.deepStrictEqual(part.annotations, [])
      assert.deepStrictEqual(part.attributes, {})
    }))

  it.effect("a part of an unknown type is rejected with its path", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Prompt.decodeUnknown({ messages: [{ role: "assistant", parts: [{ type: "bogus" }] }] })
      )
      assert.include(error.message, "parts")
    }))

  it.effect("every stream element round-trips", () =>
    Effect.gen(function*() {
      const elements: ReadonlyArray<StreamPart.StreamPart> = [
        new StreamPart.ResponseStarted({ responseId: "resp_1", model: "gpt-5.1-codex-max" }),
        new StreamPart.PartUpdate({ responseId: "resp_1", outputIndex: 0, partial: true, part: reasoning }),
        new StreamPart.PartUpdate({ responseId: "resp_1", outputIndex: 1, partial: false, part: call }),
        new StreamPart.ResponseFinished({
          responseId: "resp_1",
          status: "incomplete",
          finishReason: "length",
          incompleteReason: "max_output_tokens",
          usage
        })
      ]
      for (const element of elements) {
        const json = yield* roundTrip(StreamPart.StreamPart, element)
        assert.strictEqual(json.type, element.type)
        assert.strictEqual(json.responseId, "resp_1")
      }
    }))

  it.effect("a model response round-trips and reads its text and tool calls", () =>
    Effect.gen(function*() {
      const response = new ModelResponse.ModelResponse({
        id: "resp_1",
        model: "gpt-5.1-codex-max",
        status: "completed",
        finishReason: "tool_calls",
        usage,
        message: new Message.AssistantMessage({ parts: [reasoning, call, text] })
      })
      yield* roundTrip(ModelResponse.ModelResponse, response)
      assert.strictEqual(response.text, "The final result is **570**.")
      assert.deepStrictEqual(response.message.toolCalls, [call])
      assert.strictEqual(ModelResponse.finishReasonOf(response.message), "tool_calls")
      assert.deepStrictEqual(Usage.add(usage, usage).totalTokens, 324)
    }))
})

describe("AiError", () => {
  it("a truncated stream counts its events in words: one event, two events", () => {
    assert.strictEqual(new AiError.TruncatedStream({ description: "no terminal event", position: 1 }).message, "truncated stream after 1 event: no terminal event")
    assert.strictEqual(new AiError.TruncatedStream({ description: "x", responseId: "resp_1", position: 2 }).message, "truncated stream (response resp_1) after 2 events: x")
  })

  it.effect("every error round-trips and says whether a retry may help", () =>
    Effect.gen(function*() {
      const errors: ReadonlyArray<[AiError.AiError, boolean]> = [
        [new AiError.HttpError({ status: 429, description: "slow down", retryAfter: Duration.millis(1500) }), true],
        [new AiError.HttpError({ status: 429, description: "quota", code: "insufficient_quota" }), false],
        [new AiError.HttpError({ status: 400, description: "bad", code: "invalid_value", param: "input" }), false],
        [new AiError.TransportError({ description: "ECONNREFUSED", url: "http://127.0.0.1:1/v1/responses" }), true],
        [new AiError.StreamErrorEvent({ description: "overloaded", code: "server_error", sequenceNumber: 4 }), true],
        [new AiError.ResponseFailed({ responseId: "resp_1", description: "quota", code: "insufficient_quota" }), false],
        [new AiError.MalformedOutput({ description: "bad JSON", eventType: "response.output_text.delta", position: 7, excerpt: "{" }), false],
        [new AiError.InvalidPrompt({ description: "empty" }), false],
        [new AiError.ToolError({ description: "maxSteps reached", toolName: "calculator" }), false]
      ]
      for (const [error, retryable] of errors) {
        yield* roundTrip(AiError.AiError, error)
        assert.strictEqual(error.retryable, retryable, error._tag)
        assert.isTrue(AiError.isAiError(error))
      }
      const http = errors[0]![0] as AiError.HttpError
      assert.strictEqual(Duration.toMillis(http.retryAfter!), 1500)
      assert.strictEqual(
        errors[6]![0].message,
        "malformed output (event response.output_text.delta at position 7): bad JSON in \"{\""
      )
    }))

  it("excerpts are bounded", () => {
    assert.strictEqual(AiError.excerpt("x".repeat(500)).length, 201)
    assert.strictEqual(AiError.excerpt("short"), "short")
  })

  it("a cut never splits a surrogate pair: cutText, excerpt and capMessage keep one character fewer there", () => {
    // "a" and 1,500 x U+1F600: code unit 1,999 is a high surrogate, 2,000 its low half
    const emoji = `a${"\u{1F600}".repeat(1500)}`
    assert.strictEqual(AiError.cutText(emoji, 2000), emoji.slice(0, 1999))
    assert.strictEqual(AiError.cutText(emoji, 1999), emoji.slice(0, 1999))
    assert.strictEqual(AiError.cutText(emoji, 1), "a")
    assert.strictEqual(AiError.cutText(emoji, 2), "a")
    assert.strictEqual(AiError.cutText("\u{1F600}", 1), "")
    assert.strictEqual(AiError.cutText("short", 10), "short")
    assert.strictEqual(AiError.excerpt(emoji), `${emoji.slice(0, 199)}…`)
    assert.strictEqual(AiError.capMessage(emoji), `${emoji.slice(0, 1999)}… (1002 more characters)`)
    // cut again after a prefix (HttpError.message's `HTTP 400: `, where the cut lands on a high surrogate
    // again), and a text after an earlier mark cut to the rest of the room
    const prefixed = AiError.capMessage(`HTTP 400: ${AiError.capMessage(emoji)}`)
    assert.strictEqual(prefixed, `HTTP 400: ${emoji.slice(0, 1989)}… (1012 more characters)`)
    const framed = AiError.capMessage(`HTTP 400: ${"b".repeat(9)}… (7 more characters)${"\u{1F600}".repeat(1500)}`)
    assert.strictEqual(framed, `HTTP 400: ${"b".repeat(9)}… (7 more characters)${"\u{1F600}".repeat(990)}… (1020 more characters)`)
    const lone = /\p{Cs}/u
    for (const text of [AiError.excerpt(emoji), AiError.capMessage(emoji), prefixed, framed]) assert.isFalse(lone.test(text))
  })

  it("capMessage of its own output with two marks: unchanged at the same max, cut between the marks with every count kept below it", () => {
    // a message cut at 30, a prefix before it and details after it, cut at 50: the details are cut with a mark of their own
    const once = AiError.capMessage("m".repeat(40), 30)
    assert.strictEqual(once, `${"m".repeat(30)}… (10 more characters)`)
    const twice = AiError.capMessage(`${"p".repeat(10)}${once}${"s".repeat(30)}`, 50)
    assert.strictEqual(twice, `${"p".repeat(10)}${"m".repeat(30)}… (10 more characters)${"s".repeat(10)}… (20 more characters)`)
    // capped again: the first mark is no text to cut (it was, and came out as `… (10 more… (42 more characters)`)
    assert.strictEqual(AiError.capMessage(twice, 50), twice)
    // at 30 the cut falls before both marks, which one mark replaces: 10 + 40 + 30 characters, 30 kept (was 62)
    assert.strictEqual(AiError.capMessage(twice, 30), `${"p".repeat(10)}${"m".repeat(20)}… (50 more characters)`)
    // seeded random texts (a linear congruential generator: the same every run), some of emoji (two code
    // units): what a capped text stands for (its characters besides its marks, plus their counts) is the
    // original's length, capping again at the same max changes nothing, a smaller max keeps the count, no
    // cut falls inside a mark or a surrogate pair
    let state = 9
    const below = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff
      return Math.floor((state / 0x80000000) * n)
    }
    const marks = /… \((\d+) more characters\)/g
    const standsFor = (text: string) => {
      let length = text.length
      for (const match of text.matchAll(marks)) length += Number(match[1]) - match[0].length
      return length
    }
    const lone = /\p{Cs}/u
    for (let round = 0; round < 20_000; round++) {
      const message = (below(3) === 0 ? "\u{1F600}" : "m").repeat(below(120))
      const wrapped = `${"p".repeat(below(80))}${AiError.capMessage(message, 20 + below(60))}${"s".repeat(below(80))}`
      const original = standsFor(wrapped)
      const capped = AiError.capMessage(wrapped, 50)
      const smaller = AiError.capMessage(capped, 10 + below(40))
      for (const text of [capped, smaller]) {
        assert.strictEqual(standsFor(text), original, text)
        assert.isFalse(lone.test(text), text)
        assert.notInclude(text.replace(marks, ""), "…", text)
      }
      assert.strictEqual(AiError.capMessage(capped, 50), capped)
    }
  })
})
