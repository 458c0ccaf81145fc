/**
 * The streaming decoder against every recorded Chat Completions stream in `fixtures/chat-sse`
 * (openai-python and vercel/ai, Apache-2.0; pydantic-ai, MIT: see `fixtures/SOURCES.md`).
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { ChatCapture, ChatCompletionsOutput, ChatCompletionsStream } from "@effect-responses/chat-completions"
import { AiError, type ModelResponse, type Part, StreamPart } from "@effect-responses/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Stream from "effect/Stream"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { bytes, fixturePath, readFixture, splitAt, TOOL_CALL_SSE } from "./fixtures.js"

const settled = <A, E>(stream: Stream.Stream<A, E>) =>
  Effect.map(Stream.runCollect(Stream.either(stream)), (chunk) => {
    const elements: Array<A> = []
    let error: E | undefined
    for (const item of Chunk.toReadonlyArray(chunk)) {
      if (Either.isRight(item)) elements.push(item.right)
      else error = item.left
    }
    return { elements, error }
  })

const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

/** The decoder over a fixture file: SSE bytes for `*.sse`, line-JSON payloads otherwise. */
const decodeFile = (relative: string) => {
  const text = readFixture(relative)
  return relative.endsWith(".sse")
    ? ChatCompletionsStream.decodeSse(Stream.make(bytes(text)))
    : ChatCompletionsStream.decodeData(Stream.fromIterable(lines(text)))
}

const encodeParts = (response: ModelResponse.ModelResponse) =>
  response.message.parts.map((part) => JSON.parse(JSON.stringify(part)) as unknown)

/** What each recording must aggregate to (values read from the recorded chunks). */
interface Expected {
  readonly id: string
  readonly model: string
  readonly finishReason: ModelResponse.FinishReason
  readonly usage: readonly [input: number, cached: number, output: number, reasoning: number, total: number]
  readonly parts: ReadonlyArray<
    | { readonly type: "text"; readonly text: string | RegExp }
    | { readonly type: "refusal"; readonly text: string }
    | { readonly type: "reasoning"; readonly text: RegExp }
    | { readonly type: "tool_call"; readonly callId: string; readonly name: string; readonly arguments: string }
  >
}

const EXPECTED: Record<string, Expected> = {
  "opy-chat-gpt4o-content-logprobs.sse": {
    id: "chatcmpl-ABfw5EzoqmfXjnnsXY7Yd8OC6tb3c",
    model: "gpt-4o-2024-08-06",
    finishReason: "stop",
    usage: [9, 0, 2, 0, 11],
    parts: [{ type: "text", text: "Foo!" }]
  },
  "opy-chat-gpt4o-finish-length.sse": {
    id: "chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh",
    model: "gpt-4o-2024-08-06",
    finishReason: "length",
    usage: [79, 0, 1, 0, 80],
    parts: [{ type: "text", text: "{\"" }]
  },
  "opy-chat-gpt4o-json-schema-content.sse": {
    id: "chatcmpl-ABfw1e5abtU8OwGr15vOreYVb2MiF",
    model: "gpt-4o-2024-08-06",
    finishReason: "stop",
    usage: [79, 0, 14, 0, 93],
    parts: [{ type: "text", text: "{\"city\":\"San Francisco\",\"temperature\":61,\"units\":\"f\"}" }]
  },
  "opy-chat-gpt4o-parallel-tool-calls.sse": {
    id: "chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63",
    model: "gpt-4o-2024-08-06",
    finishReason: "tool_calls",
    usage: [149, 0, 60, 0, 209],
    parts: [
      {
        type: "tool_call",
        callId: "call_JMW1whyEaYG438VE1OIflxA2",
        name: "GetWeatherArgs",
        arguments: "{\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}"
      },
      {
        type: "tool_call",
        callId: "call_DNYTawLBoN8fj3KN6qU9N1Ou",
        name: "get_stock_price",
        arguments: "{\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}"
      }
    ]
  },
  "opy-chat-gpt4o-refusal-deltas.sse": {
    id: "chatcmpl-ABfw4IfQfCCrcuybFm41wJyxjbkz7",
    model: "gpt-4o-2024-08-06",
    finishReason: "stop",
    usage: [79, 0, 11, 0, 90],
    parts: [{ type: "refusal", text: "I'm sorry, I can't assist with that request." }]
  },
  "opy-chat-gpt4o-strict-tool-call.sse": {
    id: "chatcmpl-ABfwCgi41eStOcARjZq97ohCEGBPO",
    model: "gpt-4o-2024-08-06",
    finishReason: "tool_calls",
    usage: [48, 0, 19, 0, 67],
    parts: [{
      type: "tool_call",
      callId: "call_CTf1nWJLqSeRgDqaCG27xZ74",
      name: "get_weather",
      arguments: "{\"city\":\"San Francisco\",\"state\":\"CA\"}"
    }]
  },
  "pai-chat-deepseek-reasoning-content.sse": {
    id: "33be18fc-3842-486c-8c29-dd8e578f7f20",
    model: "deepseek-reasoner",
    finishReason: "stop",
    usage: [6, 0, 212, 198, 218],
    parts: [
      { type: "reasoning", text: /^Hmm, the user just said "Hello"\. It's a simple greeting/ },
      { type: "text", text: "Hello there! 😊 How can I help you today?" }
    ]
  },
  "pai-chat-gpt4omini-text-usage.sse": {
    id: "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc",
    model: "gpt-4o-mini-2024-07-18",
    finishReason: "stop",
    usage: [78, 0, 9, 0, 87],
    parts: [{ type: "text", text: "The capital of the UK is London." }]
  },
  "pai-chat-gpt4omini-tool-call-deltas-usage.sse": {
    id: "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl",
    model: "gpt-4o-mini-2024-07-18",
    finishReason: "tool_calls",
    usage: [53, 0, 15, 0, 68],
    parts: [{ type: "tool_call", callId: "call_ZR5UUuTt3pf61kjwAJIYdVMj", name: "get_capital", arguments: "{\"country\":\"UK\"}" }]
  },
  "vai-chat-azure-model-router.chunks.txt": {
    id: "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt",
    model: "gpt-5-nano-2025-08-07",
    finishReason: "stop",
    usage: [15, 0, 78, 64, 93],
    parts: [{ type: "text", text: "Capital of Denmark." }]
  },
  "vai-chat-openai-text-usage.chunks.txt": {
    id: "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0",
    model: "gpt-4.1-nano-2025-04-14",
    finishReason: "stop",
    usage: [16, 0, 300, 0, 316],
    parts: [{ type: "text", text: /^\*\*Holiday Name:\*\* Harmony Day\n\n\*\*Date:\*\* Celebrated annually/ }]
  },
  "vai-chat-xai-reasoning-tool-call.chunks.txt": {
    id: "7027d986-3c59-a37a-9a5f-50713e01c8a6",
    model: "grok-3-mini",
    finishReason: "tool_calls",
    // xAI counts reasoning apart from completion_tokens (26); Usage counts it in the output: 26 + 227
    usage: [307, 306, 253, 227, 560],
    parts: [
      { type: "reasoning", text: /^First, the user is asking about the weather in San Francisco\./ },
      { type: "tool_call", callId: "call_79382389", name: "weather", arguments: "{\"location\":\"San Francisco\"}" }
    ]
  }
}

const files = readdirSync(fixturePath("chat-sse")).sort()

describe("ChatCompletionsStream", () => {
  it("every chat-sse recording has its expectations", () => {
    expect(Object.keys(EXPECTED).sort()).toStrictEqual(files)
  })

  for (const file of files) {
    describe(file, () => {
      const relative = `chat-sse/${file}`

      it.effect("aggregates to the recorded text, refusal, reasoning, tool calls, usage and finish reason", () =>
        Effect.gen(function*() {
          const expected = EXPECTED[file]!
          const responses = yield* MessageAggregator.aggregate(decodeFile(relative))
          assert.strictEqual(responses.length, 1)
          const response = responses[0]!
          assert.strictEqual(response.id, expected.id)
          assert.strictEqual(response.model, expected.model)
          assert.strictEqual(response.finishReason, expected.finishReason)
          assert.strictEqual(response.status, expected.finishReason === "length" ? "incomplete" : "completed")
          const u = response.usage
          expect([u.inputTokens, u.cachedInputTokens, u.outputTokens, u.reasoningTokens, u.totalTokens])
            .toStrictEqual(expected.usage)
          const parts = response.message.parts
          assert.strictEqual(parts.length, expected.parts.length)
          expected.parts.forEach((want, index) => {
            const got = parts[index]!
            assert.strictEqual(got.type, want.type)
            if (want.type === "tool_call" && got.type === "tool_call") {
              assert.strictEqual(got.callId, want.callId)
              assert.strictEqual(got.name, want.name)
              assert.strictEqual(got.arguments, want.arguments)
            } else if (want.type === "reasoning" && got.type === "reasoning") {
              assert.match(got.text ?? "", want.text)
            } else if ((want.type === "text" || want.type === "refusal") && (got.type === "text" || got.type === "refusal")) {
              if (typeof want.text === "string") assert.strictEqual(got.text, want.text)
              else assert.match(got.text, want.text)
            }
          })
        }))

      it.effect("aggregates to what the chat.completion body of the same chunks decodes to", () =>
        Effect.gen(function*() {
          const capture = yield* ChatCapture.parse(readFixture(relative), relative)
          assert.strictEqual(capture.responses.length, 1)
          const whole = yield* ChatCompletionsOutput.fromCompletion(ChatCapture.toCompletion(capture.responses[0]!))
          const [streamed] = yield* MessageAggregator.aggregate(decodeFile(relative))
          expect(encodeParts(streamed!)).toStrictEqual(encodeParts(whole))
          expect(streamed!.usage).toStrictEqual(whole.usage)
          assert.strictEqual(streamed!.finishReason, whole.finishReason)
          assert.strictEqual(streamed!.id, whole.id)
        }))

      it.effect("assigns output indices in order of first appearance and completes every one, emptied", () =>
        Effect.gen(function*() {
          const elements = Chunk.toReadonlyArray(yield* Stream.runCollect(decodeFile(relative)))
          assert.strictEqual(elements[0]!.type, "response_started")
          assert.strictEqual(elements.at(-1)!.type, "response_finished")
          const id = elements[0]!.responseId
          assert.isTrue(elements.every((element) => element.responseId === id))
          const updates = elements.filter((e): e is StreamPart.PartUpdate => e.type === "part")
          const firstSeen: Array<number> = []
          for (const update of updates) if (!firstSeen.includes(update.outputIndex)) firstSeen.push(update.outputIndex)
          expect(firstSeen).toStrictEqual(firstSeen.map((_, i) => i))
          const completing = updates.filter((update) => !update.partial)
          expect(completing.map((update) => update.outputIndex)).toStrictEqual(firstSeen)
          for (const update of completing) {
            const part = update.part
            if (part.type === "tool_call") assert.strictEqual(part.arguments, "")
            else if (part.type === "text" || part.type === "refusal") assert.strictEqual(part.text, "")
            else if (part.type === "reasoning") assert.strictEqual(part.text, "")
          }
          // No empty deltas except a tool call's first fragment.
          for (const update of updates.filter((u) => u.partial)) {
            if (update.part.type === "text" || update.part.type === "refusal") assert.notStrictEqual(update.part.text, "")
          }
        }))
    })
  }

  describe("any split of the bytes gives the same parts", () => {
    for (
      const file of [
        "opy-chat-gpt4o-parallel-tool-calls.sse",
        "pai-chat-deepseek-reasoning-content.sse",
        "pai-chat-gpt4omini-tool-call-deltas-usage.sse",
        "opy-chat-gpt4o-refusal-deltas.sse"
      ]
    ) {
      const data = bytes(readFixture(`chat-sse/${file}`))
      const whole = Effect.runSync(Stream.runCollect(ChatCompletionsStream.decodeSse(Stream.make(data))))
      const expected = Chunk.toReadonlyArray(whole).map((element) => StreamPart.encode(element))
      it.effect.prop(
        file,
        [FastCheck.array(FastCheck.integer({ min: 1, max: data.length - 1 }), { maxLength: 40 })],
        ([cuts]) =>
          Effect.gen(function*() {
            const pieces = splitAt(data, cuts)
            const elements = yield* Stream.runCollect(ChatCompletionsStream.decodeSse(Stream.fromIterable(pieces)))
            expect(Chunk.toReadonlyArray(elements).map((element) => StreamPart.encode(element))).toStrictEqual(expected)
          }),
        { fastCheck: { numRuns: 40 } }
      )
    }
  })

  it.effect("two parallel calls whose argument fragments interleave keep their own ids, names and arguments", () =>
    Effect.gen(function*() {
      // The recording sends call 0 then call 1; here its chunks are reordered to alternate between them.
      const payloads = (yield* ChatCapture.parse(
        readFixture("chat-sse/opy-chat-gpt4o-parallel-tool-calls.sse"),
        "parallel"
      )).responses[0]!.chunks.map((chunk) => chunk.data)
      const indexOf = (data: string) => /"tool_calls":\[\{"index":(\d)/.exec(data)?.[1]
      const zero = payloads.filter((p) => indexOf(p) === "0")
      const one = payloads.filter((p) => indexOf(p) === "1")
      const rest = payloads.filter((p) => indexOf(p) === undefined)
      const interleaved: Array<string> = [rest[0]!]
      for (let i = 0; i < Math.max(zero.length, one.length); i++) {
        if (zero[i] !== undefined) interleaved.push(zero[i]!)
        if (one[i] !== undefined) interleaved.push(one[i]!)
      }
      interleaved.push(...rest.slice(1))
      const elements = Chunk.toReadonlyArray(
        yield* Stream.runCollect(ChatCompletionsStream.decodeData(Stream.fromIterable(interleaved)))
      )
      const deltaIndices = elements.filter((e): e is StreamPart.PartUpdate => e.type === "part" && e.partial)
        .map((e) => e.outputIndex)
      expect(deltaIndices.slice(0, 4)).toStrictEqual([0, 1, 0, 1])
      const [response] = MessageAggregator.fromIterable(elements)
      const calls = response!.message.toolCalls
      expect(calls.map((call) => [call.callId, call.name, JSON.parse(call.arguments)])).toStrictEqual([
        ["call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs", { city: "Edinburgh", country: "GB", units: "c" }],
        ["call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price", { ticker: "AAPL", exchange: "NASDAQ" }]
      ])
    }))

  it.effect("the Azure chunk with empty id and choices starts nothing; the response takes the next chunk's id", () =>
    Effect.gen(function*() {
      const elements = Chunk.toReadonlyArray(yield* Stream.runCollect(decodeFile("chat-sse/vai-chat-azure-model-router.chunks.txt")))
      const started = elements[0] as StreamPart.ResponseStarted
      assert.strictEqual(started.type, "response_started")
      assert.strictEqual(started.responseId, "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt")
      assert.strictEqual(elements.filter((e) => e.type === "response_started").length, 1)
    }))

  it.effect("a tool call's first fragment announces it with its id and name; later deltas carry them", () =>
    Effect.gen(function*() {
      const elements = Chunk.toReadonlyArray(yield* Stream.runCollect(decodeFile(TOOL_CALL_SSE)))
      const deltas = elements.filter((e): e is StreamPart.PartUpdate => e.type === "part" && e.partial)
      expect(deltas.map((d) => (d.part as Part.ToolCallPart).arguments)).toStrictEqual([
        "",
        "{\"",
        "country",
        "\":\"",
        "UK",
        "\"}"
      ])
      for (const delta of deltas) {
        assert.deepInclude(delta.part, { callId: "call_ZR5UUuTt3pf61kjwAJIYdVMj", name: "get_capital" })
        assert.strictEqual(delta.part.attributes.status, "in_progress")
      }
    }))

  describe("unusual streams", () => {
    const chunk = (delta: object, finish: string | null = null, id = "chatcmpl-x") =>
      JSON.stringify({ id, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })
    const run = (payloads: ReadonlyArray<string>) => settled(ChatCompletionsStream.decodeData(Stream.fromIterable(payloads)))

    it.effect("calls without an id get synthetic ids new for every call, kept by their deltas, across streams too", () =>
      Effect.gen(function*() {
        const noIds = [
          chunk({ tool_calls: [{ index: 0, function: { name: "a", arguments: "{" } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: "}" } }, { index: 1, function: { name: "b", arguments: "{}" } }] }),
          chunk({}, "tool_calls")
        ]
        const ids: Array<string> = []
        for (const _ of [1, 2]) {
          const { elements, error } = yield* run(noIds)
          assert.isUndefined(error)
          const calls = MessageAggregator.fromIterable(elements)[0]!.message.toolCalls
          expect(calls.map((c) => [c.name, c.arguments])).toStrictEqual([["a", "{}"], ["b", "{}"]])
          const deltas = elements.filter((e): e is StreamPart.PartUpdate => e.type === "part" && e.part.type === "tool_call")
          for (const delta of deltas) assert.include(calls.map((c) => c.callId), (delta.part as Part.ToolCallPart).callId)
          ids.push(...calls.map((c) => c.callId))
        }
        for (const id of ids) assert.match(id, /^call_[0-9a-f]{24}$/)
        assert.strictEqual(new Set(ids).size, 4)
      }))

    it.effect("a call without an id gets a synthetic id until its real one arrives; a new id under a used index is a new call", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* run([
          chunk({ tool_calls: [{ index: 0, function: { name: "a", arguments: "{}" } }] }),
          chunk({ tool_calls: [{ index: 0, id: "call_x", function: { name: "a", arguments: "{\"n\":1}" } }] }),
          chunk({ tool_calls: [{ index: 0, id: "call_y", function: { name: "c", arguments: "{}" } }] }, "stop")
        ])
        assert.isUndefined(error)
        const [response] = MessageAggregator.fromIterable(elements)
        expect(response!.message.toolCalls.map((c) => [c.callId, c.name, c.arguments])).toStrictEqual([
          ["call_x", "a", "{}{\"n\":1}"],
          ["call_y", "c", "{}"]
        ])
        assert.strictEqual(response!.finishReason, "tool_calls")
      }))

    it.effect("calls with neither id nor index: a name after a call whose arguments are whole JSON starts the next call; name pieces and unfinished arguments stay one call", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [string, ReadonlyArray<object>, ReadonlyArray<readonly [string, string]>]> = [
          // the tester's stream (noindex.sse): two whole calls, a chunk each
          ["two whole calls", [
            { type: "function", function: { name: "shell_command", arguments: "{\"command\":\"ls\"}" } },
            { type: "function", function: { name: "shell_command", arguments: "{\"command\":\"pwd\"}" } }
          ], [["shell_command", "{\"command\":\"ls\"}"], ["shell_command", "{\"command\":\"pwd\"}"]]],
          // the name repeated in every fragment, the arguments whole only at the end: one call
          ["a repeated name", [
            { function: { name: "f", arguments: "{\"a\":" } },
            { function: { name: "f", arguments: "1}" } }
          ], [["f", "{\"a\":1}"]]],
          // the name in pieces before any arguments: one call
          ["a name in pieces", [
            { function: { name: "edit_ex", arguments: "" } },
            { function: { name: "isting_file", arguments: "{}" } }
          ], [["edit_existing_file", "{}"]]],
          // streamed in pieces, the second call's name with "" arguments: two calls
          ["calls in pieces", [
            { function: { name: "a", arguments: "" } },
            { function: { arguments: "{\"x\"" } },
            { function: { arguments: ":1}" } },
            { function: { name: "b", arguments: "" } },
            { function: { arguments: "[]" } }
          ], [["a", "{\"x\":1}"], ["b", "[]"]]]
        ]
        for (const [what, calls, expected] of cases) {
          const { elements, error } = yield* run([...calls.map((call) => chunk({ tool_calls: [call] })), chunk({}, "tool_calls")])
          assert.isUndefined(error, what)
          const [response] = MessageAggregator.fromIterable(elements)
          expect(response!.message.toolCalls.map((c) => [c.name, c.arguments]), what).toStrictEqual(expected)
        }
      }))

    it.effect("a body cut short fails with TruncatedStream after the parts it had", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* run([chunk({ content: "Hel" })])
        assert.strictEqual(elements.length, 2)
        assert.instanceOf(error, AiError.TruncatedStream)
        assert.strictEqual(error.responseId, "chatcmpl-x")
      }))

    it.effect("the recorded tool call with its name taken out: MalformedOutput naming the chunk that opened it, no completing part", () =>
      Effect.gen(function*() {
        const recorded = readFixture(TOOL_CALL_SSE)
        assert.include(recorded, "\"name\":\"get_capital\",")
        const nameless = recorded.replace("\"name\":\"get_capital\",", "")
        const { elements, error } = yield* settled(ChatCompletionsStream.decodeSse(Stream.make(bytes(nameless))))
        assert.instanceOf(error, AiError.MalformedOutput)
        expect(error.message).toContain("has no function.name")
        expect(error.message).toContain("call_ZR5UUuTt3pf61kjwAJIYdVMj")
        // the first chunk (0-based), the one that opened the call
        assert.strictEqual(error.position, 0)
        assert.strictEqual(error.eventType, "chat.completion.chunk")
        expect(error.excerpt).toContain("chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl")
        expect(elements.some((element) => element.type === "part" && !element.partial)).toBe(false)
        expect(elements.some((element) => element.type === "response_finished")).toBe(false)
        // the recording itself, named, decodes as before
        const named = yield* settled(ChatCompletionsStream.decodeSse(Stream.make(bytes(recorded))))
        assert.isUndefined(named.error)
      }))

    it.effect("the recorded OpenAI text stream with one chunk's content a number, or its choices a string: MalformedOutput naming the field and the chunk's position, after the text before it", () =>
      Effect.gen(function*() {
        const recorded = lines(readFixture("chat-sse/vai-chat-openai-text-usage.chunks.txt"))
        // chunk 5 (0-based), read after the template was learned: its content string made 42 (a number)
        const at = 5
        const contentOf = (line: string) => JSON.parse(line).choices[0].delta.content as string
        const before = recorded.slice(1, at).map(contentOf).join("")
        for (
          const [what, replace, description] of [
            ["content 42", (line: string) => line.replace(/"content":"(?:[^"\\]|\\.)*"/, "\"content\":42"), "choices[0].delta.content is a number, not a string, a list of parts or null"],
            ["content {}", (line: string) => line.replace(/"content":"(?:[^"\\]|\\.)*"/, "\"content\":{}"), "choices[0].delta.content is an object, not a string, a list of parts or null"],
            ["choices \"nope\"", (line: string) => line.replace(/"choices":\[.*\],"usage"/, "\"choices\":\"nope\",\"usage\""), "choices is a string, not a list"]
          ] as const
        ) {
          const changed = recorded.map((line, index) => index === at ? replace(line) : line)
          assert.notStrictEqual(changed[at], recorded[at], what)
          const { elements, error } = yield* settled(ChatCompletionsStream.decodeData(Stream.fromIterable(changed)))
          assert.instanceOf(error, AiError.MalformedOutput, what)
          assert.strictEqual(error.description, description)
          assert.strictEqual(error.position, at)
          assert.strictEqual(error.eventType, "chat.completion.chunk")
          expect(error.message).toContain(`chat.completion.chunk at position ${at}`)
          const text = elements.flatMap((element) => element.type === "part" && element.part.type === "text" ? [element.part.text] : []).join("")
          assert.strictEqual(text, before)
          expect(elements.some((element) => element.type === "response_finished")).toBe(false)
        }
        // null content (and no choices at all) is no error: the recording decodes as before
        const withNull = recorded.map((line, index) => index === at ? line.replace(/"content":"(?:[^"\\]|\\.)*"/, "\"content\":null") : line)
        assert.isUndefined((yield* settled(ChatCompletionsStream.decodeData(Stream.fromIterable(withNull)))).error)
      }))

    it.effect("a recorded tool call cut off mid-arguments (no finish_reason, no [DONE]): only partial updates, no completing part, TruncatedStream", () =>
      Effect.gen(function*() {
        // the recording's first four chunks: the call opened (get_capital) and three pieces of its arguments
        const recorded = readFixture(TOOL_CALL_SSE).split("\n\n").filter((block) => block.trim() !== "")
        const arrived = recorded.slice(0, 4).map((block) => JSON.parse(block.slice("data: ".length)))
          .flatMap((chunk) => chunk.choices[0].delta.tool_calls ?? []).map((call: { function: { arguments: string } }) => call.function.arguments).join("")
        assert.isAbove(arrived.length, 0)
        const { elements, error } = yield* settled(ChatCompletionsStream.decodeSse(Stream.make(bytes(recorded.slice(0, 4).join("\n\n") + "\n\n"))))
        assert.instanceOf(error, AiError.TruncatedStream)
        const updates = elements.filter((element): element is StreamPart.PartUpdate => element.type === "part")
        expect(updates.every((update) => update.partial)).toBe(true)
        expect(updates.map((update) => update.part.type === "tool_call" ? update.part.arguments : "").join("")).toBe(arrived)
        expect(elements.some((element) => element.type === "response_finished")).toBe(false)
        // the partial transcript holds the call as it stood, in progress
        const [response] = MessageAggregator.fromIterable(elements)
        assert.strictEqual(response!.status, "in_progress")
        expect(response!.message.toolCalls.map((call) => [call.name, call.arguments, call.attributes.status])).toStrictEqual([
          ["get_capital", arrived, "in_progress"]
        ])
      }))

    it.effect("[DONE] without a finish reason finishes with other", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* run([chunk({ content: "Hi" }), "[DONE]"])
        assert.isUndefined(error)
        const finished = elements.at(-1) as StreamPart.ResponseFinished
        assert.strictEqual(finished.finishReason, "other")
      }))

    it.effect("an error chunk fails with StreamErrorEvent; malformed JSON with MalformedOutput at its position", () =>
      Effect.gen(function*() {
        const failed = yield* run([
          chunk({ content: "Hi" }),
          JSON.stringify({ error: { message: "overloaded", code: "server_error" } })
        ])
        assert.instanceOf(failed.error, AiError.StreamErrorEvent)
        assert.strictEqual(failed.error.code, "server_error")
        assert.isTrue(failed.error.retryable)
        const malformed = yield* run([chunk({ content: "Hi" }), "{nope"])
        assert.instanceOf(malformed.error, AiError.MalformedOutput)
        assert.strictEqual(malformed.error.position, 1)
      }))

    it.effect("a choice after the finish reason starts the next response (captures holding several)", () =>
      Effect.gen(function*() {
        const { elements, error } = yield* run([
          chunk({ content: "one" }, "stop", "a"),
          chunk({ content: "two" }, null, "b"),
          chunk({}, "stop", "b")
        ])
        assert.isUndefined(error)
        expect(MessageAggregator.fromIterable(elements).map((r) => [r.id, r.text])).toStrictEqual([["a", "one"], [
          "b",
          "two"
        ]])
      }))
  })
})

/** A hand-written capture (`test/captures/`, invented ids) decoded from its SSE bytes. */
const handWritten = (name: string) => readFileSync(fileURLToPath(new URL(`./captures/${name}`, import.meta.url)), "utf8")

const decodeHandWritten = (name: string) =>
  settled(ChatCompletionsStream.decodeSse(Stream.make(
    new Uint8Array(readFileSync(fileURLToPath(new URL(`./captures/${name}`, import.meta.url))))
  )))

describe("ChatCompletionsStream on streams as compatible servers send them (hand-written captures)", () => {
  it.effect("a tool call name split across chunks is joined (edit_ex + isting_file)", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("tool-name-split.sse")
      assert.isUndefined(error)
      const [response] = MessageAggregator.fromIterable(elements)
      expect(response!.message.toolCalls.map((call) => [call.callId, call.name, call.arguments])).toStrictEqual([
        ["call_split_1", "edit_existing_file", "{\"path\":\"a.ts\",\"edit\":\"x\"}"]
      ])
      assert.strictEqual(response!.finishReason, "tool_calls")
      // the completing part carries the whole name
      const completing = elements.filter((e): e is StreamPart.PartUpdate => e.type === "part" && !e.partial)
      assert.strictEqual((completing[0]!.part as Part.ToolCallPart).name, "edit_existing_file")
    }))

  it.effect("a tool call name repeated whole in every chunk is not doubled", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("tool-name-repeated.sse")
      assert.isUndefined(error)
      const [response] = MessageAggregator.fromIterable(elements)
      expect(response!.message.toolCalls.map((call) => [call.callId, call.name, call.arguments])).toStrictEqual([
        ["call_rep_1", "get_weather", "{\"city\":\"Paris\"}"]
      ])
    }))

  it.effect("an error chunk with choices: [] inside an HTTP 200 stream fails after the text that arrived", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("error-in-200-stream.sse")
      assert.instanceOf(error, AiError.StreamErrorEvent)
      assert.strictEqual(error.code, "502")
      assert.strictEqual(error.description, "Provider returned error: upstream connection reset")
      const settledResponses = MessageAggregator.fromIterable(elements)
      assert.strictEqual(settledResponses[0]!.text, "The first half")
      assert.isFalse(elements.some((element) => element.type === "response_finished"))
    }))

  it.effect("an error object beside a finish_reason \"error\" choice fails the stream with its code and message", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("error-finish-reason-error.sse")
      assert.instanceOf(error, AiError.StreamErrorEvent)
      assert.strictEqual(error.code, "server_error")
      assert.strictEqual(error.description, "The model stopped: internal error")
      assert.strictEqual(MessageAggregator.fromIterable(elements)[0]!.text, "Partial answer")
    }))

  it.effect("an error object inside a finish_reason \"error\" choice (choices[0].error) gives its code and message", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("error-finish-reason-in-choice.sse")
      assert.instanceOf(error, AiError.StreamErrorEvent)
      assert.strictEqual(error.code, "502")
      assert.strictEqual(error.description, "Upstream provider stopped: overloaded")
      assert.strictEqual(MessageAggregator.fromIterable(elements)[0]!.text, "Partial answer")
      assert.isFalse(elements.some((element) => element.type === "response_finished"))
    }))

  it.effect("a finish_reason \"error\" choice without an error object fails the stream too, not a finished answer", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("error-finish-reason-bare.sse")
      assert.instanceOf(error, AiError.StreamErrorEvent)
      assert.isUndefined(error.code)
      assert.include(error.description, "finish_reason \"error\"")
      assert.strictEqual(MessageAggregator.fromIterable(elements)[0]!.text, "Partial answer")
      assert.isFalse(elements.some((element) => element.type === "response_finished"))
    }))
})

describe("ChatCompletionsStream: content as a list of parts (Mistral's Magistral)", () => {
  it.effect("thinking parts become reasoning, text parts text; another part type keeps nothing and warns once", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        logs.push(`${logLevel.label}: ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      })
      const { elements, error } = yield* decodeHandWritten("content-parts-magistral.sse").pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      assert.isUndefined(error)
      const response = MessageAggregator.fromIterable(elements)[0]!
      expect(response.message.parts.map((part) => part.type)).toStrictEqual(["reasoning", "text"])
      const reasoning = response.message.parts[0]!
      assert.strictEqual(reasoning.type === "reasoning" ? reasoning.text : undefined, "The user asks for 2 + 2. That is 4.")
      assert.strictEqual(response.text, "2 + 2 = 4.")
      assert.strictEqual(response.status, "completed")
      expect(logs.filter((line) => line.includes("\"reference\""))).toStrictEqual([
        "WARN: a content part of type \"reference\" was ignored (only \"text\" and \"thinking\" parts are read) at position 4"
      ])
    }))
})

describe("ChatCompletionsStream: named SSE events (keep-alives and errors sent as events)", () => {
  it.effect("event: ping with a timestamp as data (old sse-starlette) is skipped with a debug log; the answer completes", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        logs.push(`${logLevel.label}: ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      })
      const { elements, error } = yield* decodeHandWritten("keepalive-event-ping.sse").pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Effect.provide(Logger.minimumLogLevel(LogLevel.Debug))
      )
      assert.isUndefined(error)
      const response = MessageAggregator.fromIterable(elements)[0]!
      assert.strictEqual(response.text, "Hello")
      assert.strictEqual(response.status, "completed")
      expect(logs.filter((line) => line.includes("event: ping"))).toHaveLength(2)
    }))

  it.effect("event: error with data {message, code} fails the stream with StreamErrorEvent carrying them, not TruncatedStream", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("error-event-named.sse")
      assert.instanceOf(error, AiError.StreamErrorEvent)
      assert.strictEqual(error.description, "CUDA out of memory")
      assert.strictEqual(error.code, "internal_error")
      assert.strictEqual(MessageAggregator.fromIterable(elements)[0]!.text, "Partial")
      // {"error": {…}} as the data, or a bare text: the same failure
      for (
        const [data, description] of [
          ["{\"error\":{\"message\":\"boom\"}}", "boom"],
          ["overloaded", "overloaded"]
        ] as const
      ) {
        const failed = yield* settled(ChatCompletionsStream.decodeSseText(Stream.make(`event: error\ndata: ${data}\n\n`)))
        assert.instanceOf(failed.error, AiError.StreamErrorEvent)
        assert.strictEqual(failed.error.description, description)
      }
    }))
})

describe("ChatCompletionsStream: chunks after the finish reason belong to the same response", () => {

  // OpenRouter (speakeasy-api/gram#921): the usage comes in a chunk after the finish chunk, with a choice
  // (`delta: {"role":"assistant","content":""}`, `finish_reason: null`) and the same id.
  it.effect("OpenRouter's usage chunk with a choice after the finish chunk: one response, its usage kept", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("usage-after-finish-openrouter.sse")
      assert.isUndefined(error)
      const responses = MessageAggregator.fromIterable(elements)
      expect(responses.map((r) => [r.id, r.text, r.finishReason])).toStrictEqual([["gen-1786000000-or1", "Hello world", "stop"]])
      assert.strictEqual(responses[0]!.usage.inputTokens, 1697)
      assert.strictEqual(responses[0]!.usage.outputTokens, 52)
      expect(elements.filter((e) => e.type === "response_started")).toHaveLength(1)
      const capture = yield* ChatCapture.parse(handWritten("usage-after-finish-openrouter.sse"), "openrouter")
      assert.strictEqual(capture.responses.length, 1)
    }))

  // LiteLLM proxy (BerriAI/litellm#28735, #8450): its synthetic usage chunk has `choices: [{"index":0,"delta":{}}]`.
  it.effect("LiteLLM's usage chunk with an empty delta after the finish chunk: one response, its usage kept", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("usage-after-finish-litellm.sse")
      assert.isUndefined(error)
      const responses = MessageAggregator.fromIterable(elements)
      expect(responses.map((r) => [r.id, r.finishReason, r.message.toolCalls.map((c) => c.name)])).toStrictEqual([
        ["chatcmpl-ll1", "tool_calls", ["get_time"]]
      ])
      expect([responses[0]!.usage.inputTokens, responses[0]!.usage.cachedInputTokens, responses[0]!.usage.outputTokens])
        .toStrictEqual([65, 64, 251])
    }))

  // Azure OpenAI's asynchronous filter (learn.microsoft.com, azure/ai-foundry/openai/concepts/content-streaming):
  // after the finish chunk, a chunk of `id: ""` with a choice holding `content_filter_results` and
  // `content_filter_offsets` and no delta, before or after the usage chunk.
  for (const name of ["azure-async-filter-before-usage.sse", "azure-async-filter-after-usage.sse"]) {
    it.effect(`Azure's asynchronous filter results after the finish chunk (${name}): one response, its usage kept`, () =>
      Effect.gen(function*() {
        const { elements, error } = yield* decodeHandWritten(name)
        assert.isUndefined(error)
        const responses = MessageAggregator.fromIterable(elements)
        expect(responses.map((r) => [r.id, r.text, r.finishReason, r.usage.inputTokens, r.usage.outputTokens]))
          .toStrictEqual([["chatcmpl-az1", "Hello world", "stop", 9, 2]])
        const capture = yield* ChatCapture.parse(handWritten(name), name)
        assert.strictEqual(capture.responses.length, 1)
      }))
  }

  // Old Ollama (ollama/ollama#4357): `"finish_reason": ""` on every chunk, then `"stop"` on the last.
  it.effect("finish_reason \"\" on every chunk (old Ollama) is no finish reason: one response with all the text", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("finish-reason-empty-ollama.sse")
      assert.isUndefined(error)
      const responses = MessageAggregator.fromIterable(elements)
      expect(responses.map((r) => [r.id, r.text, r.finishReason])).toStrictEqual([["chatcmpl-693", "Hello there!", "stop"]])
      const capture = yield* ChatCapture.parse(handWritten("finish-reason-empty-ollama.sse"), "ollama")
      expect(capture.responses.map((r) => [ChatCapture.text(r), ChatCapture.toCompletion(r).choices])).toStrictEqual([
        ["Hello there!", [expect.objectContaining({ finish_reason: "stop" })]]
      ])
    }))

  // Mistral's OpenAPI lists finish_reason model_length (the model's context length reached)
  it.effect("Mistral's finish_reason model_length in a stream: incomplete, max_output_tokens, like length", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("finish-reason-model-length-mistral.sse")
      assert.isUndefined(error)
      const [response] = MessageAggregator.fromIterable(elements)
      expect([response!.text, response!.finishReason, response!.status, response!.incompleteReason]).toStrictEqual([
        "cut sh",
        "length",
        "incomplete",
        "max_output_tokens"
      ])
    }))

  // Groq's streams of 2024 (vercel/ai#1651): the usage only in `x_groq.usage` of the finish chunk
  it.effect("Groq's usage in x_groq.usage, with no usage field, is read", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("usage-in-x-groq.sse")
      assert.isUndefined(error)
      const [response] = MessageAggregator.fromIterable(elements)
      expect([response!.text, response!.usage.inputTokens, response!.usage.outputTokens, response!.usage.totalTokens])
        .toStrictEqual(["Hi", 23, 19, 42])
    }))

  // Perplexity (perplexityai/perplexity-node, StreamChunk): top-level citations and search_results on every chunk
  it.effect("Perplexity's citations / search_results become url_citation annotations at the text's [n] markers", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("citations-perplexity.sse")
      assert.isUndefined(error)
      const [response] = MessageAggregator.fromIterable(elements)
      const text = "Paris is the capital [1] of France [2]."
      assert.strictEqual(response!.text, text)
      const annotations = (response!.message.parts[0] as Part.TextPart).annotations
      expect(annotations).toStrictEqual([
        { type: "url_citation", url: "https://example.org/a", startIndex: 21, endIndex: 24 },
        { type: "url_citation", url: "https://example.org/b", startIndex: 35, endIndex: 38 }
      ])
      expect(annotations.map((a) => text.slice((a as { startIndex: number }).startIndex, (a as { endIndex: number }).endIndex)))
        .toStrictEqual(["[1]", "[2]"])
      const whole = yield* ChatCompletionsOutput.fromCompletion({
        id: "pplx-1",
        model: "sonar",
        choices: [{ index: 0, message: { role: "assistant", content: "Paris [1], again [1] [9]" }, finish_reason: "stop" }],
        search_results: [{ title: "A", url: "https://example.org/a", date: null }, { title: "B", url: "https://example.org/b" }]
      })
      // every marker of a source placed, a source no marker cites kept without indices, [9] (no such source) left alone
      expect((whole.message.parts[0] as Part.TextPart).annotations).toStrictEqual([
        { type: "url_citation", url: "https://example.org/a", title: "A", startIndex: 6, endIndex: 9 },
        { type: "url_citation", url: "https://example.org/a", title: "A", startIndex: 17, endIndex: 20 },
        { type: "url_citation", url: "https://example.org/b", title: "B" }
      ])
    }))

  it.effect("Perplexity's [n] markers split between deltas are placed as in the whole text; a text without markers keeps the no-position form", () =>
    Effect.gen(function*() {
      const sources = { citations: ["https://example.org/a", "https://example.org/b", "https://example.org/c"] }
      const pieces = ["Paris [", "1", "][2", "] is [", "12] big [3", "]."]
      const { elements, error } = yield* settled(ChatCompletionsStream.decodeData(Stream.fromIterable([
        ...pieces.map((piece) => JSON.stringify({ id: "p", model: "sonar", choices: [{ index: 0, delta: { content: piece }, finish_reason: null }], ...sources })),
        JSON.stringify({ id: "p", model: "sonar", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], ...sources }),
        "[DONE]"
      ])))
      assert.isUndefined(error)
      const [streamed] = MessageAggregator.fromIterable(elements)
      const whole = yield* ChatCompletionsOutput.fromCompletion({
        id: "p",
        model: "sonar",
        choices: [{ index: 0, message: { role: "assistant", content: pieces.join("") }, finish_reason: "stop" }],
        ...sources
      })
      const expected = [
        { type: "url_citation", url: "https://example.org/a", startIndex: 6, endIndex: 9 },
        { type: "url_citation", url: "https://example.org/b", startIndex: 9, endIndex: 12 },
        { type: "url_citation", url: "https://example.org/c", startIndex: 25, endIndex: 28 }
      ]
      expect((streamed!.message.parts[0] as Part.TextPart).annotations).toStrictEqual(expected)
      expect((whole.message.parts[0] as Part.TextPart).annotations).toStrictEqual(expected)
      const plain = yield* ChatCompletionsOutput.fromCompletion({
        id: "p",
        model: "sonar",
        choices: [{ index: 0, message: { role: "assistant", content: "Paris." }, finish_reason: "stop" }],
        citations: ["https://example.org/a"]
      })
      expect((plain.message.parts[0] as Part.TextPart).annotations).toStrictEqual([{ type: "url_citation", url: "https://example.org/a" }])
    }))

  const chunk = (id: string, delta: object, finish: string | null = null, extra: object = {}) =>
    JSON.stringify({ id, model: "m", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })
  const run = (payloads: ReadonlyArray<string>) => settled(ChatCompletionsStream.decodeData(Stream.fromIterable(payloads)))

  it.effect("annotations and text after the finish reason under the same id are the same response's", () =>
    Effect.gen(function*() {
      const citation = { type: "url_citation", url_citation: { url: "https://example.org", start_index: 0, end_index: 2 } }
      const { elements, error } = yield* run([
        chunk("c1", { content: "Hi" }),
        chunk("c1", {}, "stop"),
        chunk("c1", { annotations: [citation] }),
        chunk("", { content: "!" }),
        "[DONE]"
      ])
      assert.isUndefined(error)
      const responses = MessageAggregator.fromIterable(elements)
      expect(responses.map((r) => [r.id, r.text, r.finishReason])).toStrictEqual([["c1", "Hi!", "stop"]])
      const text = responses[0]!.message.parts[0] as Part.TextPart
      expect(text.annotations).toStrictEqual([{ type: "url_citation", url: "https://example.org", startIndex: 0, endIndex: 2 }])
    }))
})

// llama.cpp's server before its PR #16109 (2025-09; seen in coddy-project/coddy-agent#106) sent an error as a
// field of its own, `error: {json}`, which the SSE rules would ignore.
describe("ChatCompletionsStream: llama.cpp's error: field", () => {
  it.effect("error: {json} before any chunk fails with StreamErrorEvent carrying the server's message and code", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("error-field-llamacpp.sse")
      expect(elements).toStrictEqual([])
      assert.instanceOf(error, AiError.StreamErrorEvent)
      assert.strictEqual(error.code, "400")
      assert.strictEqual(
        error.description,
        "the request exceeds the available context size. try increasing the context size or enable context shift"
      )
    }))

  it.effect("error: {json} after text fails with StreamErrorEvent after the text, not TruncatedStream", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeHandWritten("error-field-llamacpp-mid.sse")
      assert.instanceOf(error, AiError.StreamErrorEvent)
      assert.strictEqual(error.code, "500")
      assert.strictEqual(error.description, "Input prompt is too big compared to KV size. Please try increasing KV size.")
      assert.strictEqual(MessageAggregator.fromIterable(elements)[0]!.text, "Hi")
    }))

  it.effect("other unknown fields, and an error: line that is no JSON object, are ignored as the SSE rules say", () =>
    Effect.gen(function*() {
      const body = `foo: bar\nerror: not json\n\ndata: ${
        JSON.stringify({ id: "c1", model: "m", choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }] })
      }\nerror: [1]\n\ndata: [DONE]\n\n`
      const { elements, error } = yield* settled(ChatCompletionsStream.decodeSseText(Stream.make(body)))
      assert.isUndefined(error)
      expect(MessageAggregator.fromIterable(elements).map((r) => r.text)).toStrictEqual(["ok"])
    }))
})

describe("ChatCompletionsStream.decodeCaptureText", () => {
  it.effect("reads a line-JSON capture (vercel/ai) and a raw SSE one (pydantic-ai) like the data path", () =>
    Effect.gen(function*() {
      for (const relative of ["chat-sse/vai-chat-xai-reasoning-tool-call.chunks.txt", "chat-sse/pai-chat-gpt4omini-text-usage.sse"]) {
        const text = readFixture(relative)
        const viaCapture = yield* Stream.runCollect(
          ChatCompletionsStream.decodeCaptureText(Stream.make(text.slice(0, 7), text.slice(7, 500), text.slice(500)))
        )
        const payloads = relative.endsWith(".sse")
          ? text.split("\n").filter((l) => l.startsWith("data: ") && l !== "data: [DONE]").map((l) => l.slice(6))
          : text.split("\n").filter((l) => l.trim() !== "")
        const viaData = yield* Stream.runCollect(ChatCompletionsStream.decodeData(Stream.fromIterable(payloads)))
        expect(Chunk.toReadonlyArray(viaCapture).map((e) => StreamPart.encode(e))).toStrictEqual(
          Chunk.toReadonlyArray(viaData).map((e) => StreamPart.encode(e))
        )
        assert.isAbove(viaCapture.length, 3)
      }
    }))

  it.effect("reads a raw SSE capture as the live stream: event: ping skipped, event: error and llama.cpp's error: line fail alike", () =>
    Effect.gen(function*() {
      const captures = ["keepalive-event-ping.sse", "error-event-named.sse", "error-field-llamacpp.sse", "error-field-llamacpp-mid.sse"]
      for (const name of captures) {
        const live = yield* decodeHandWritten(name)
        const text = readFileSync(fileURLToPath(new URL(`./captures/${name}`, import.meta.url)), "utf8")
        const capture = yield* settled(ChatCompletionsStream.decodeCaptureText(Stream.make(text.slice(0, 5), text.slice(5))))
        expect(capture.elements.map((e) => StreamPart.encode(e)), name).toStrictEqual(live.elements.map((e) => StreamPart.encode(e)))
        expect(capture.error?._tag, name).toBe(live.error?._tag)
        expect(capture.error?.message, name).toBe(live.error?.message)
      }
      // the live stream's results, which the capture now matches: a ping skipped, the errors as the server's
      expect((yield* decodeHandWritten("keepalive-event-ping.sse")).error).toBeUndefined()
      expect((yield* decodeHandWritten("error-field-llamacpp.sse")).error?._tag).toBe("StreamErrorEvent")
    }))

  it.effect("ChatCapture.toSse re-serves a raw SSE capture as recorded: named events and llama.cpp's error: line included", () =>
    Effect.gen(function*() {
      const captures = ["keepalive-event-ping.sse", "error-event-named.sse", "error-field-llamacpp.sse", "error-field-llamacpp-mid.sse"]
      for (const name of captures) {
        const live = yield* decodeHandWritten(name)
        const capture = yield* ChatCapture.parse(handWritten(name), name)
        assert.strictEqual(capture.responses.length, 1, name)
        const served = yield* settled(ChatCompletionsStream.decodeSse(Stream.make(bytes(ChatCapture.toSse(capture.responses[0]!)))))
        expect(served.elements.map((e) => StreamPart.encode(e)), name).toStrictEqual(live.elements.map((e) => StreamPart.encode(e)))
        expect(served.error?._tag, name).toBe(live.error?._tag)
        expect(served.error?.message, name).toBe(live.error?.message)
      }
      // the error that ended a response, for a non-streamed answer: llama.cpp's object as sent
      const llama = yield* ChatCapture.parse(handWritten("error-field-llamacpp.sse"), "llama")
      expect(llama.responses[0]!.error).toMatchObject({ code: 400, type: "invalid_request_error" })
      expect(llama.responses[0]!.chunks).toStrictEqual([])
      // a line-JSON capture is served as before: its chunks, then [DONE]
      const lines = yield* ChatCapture.parse("{\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n", "l")
      assert.strictEqual(
        ChatCapture.toSse(lines.responses[0]!),
        "data: {\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
      )
    }))

  it.effect("names the line of malformed JSON in a line-JSON capture", () =>
    Effect.gen(function*() {
      const lines = readFixture("chat-sse/vai-chat-azure-model-router.chunks.txt").split("\n")
      lines[2] = "{\"id\": "
      const error = yield* Effect.flip(Stream.runDrain(ChatCompletionsStream.decodeCaptureText(Stream.make(lines.join("\n")))))
      assert.strictEqual(error._tag, "MalformedOutput")
      assert.strictEqual(error._tag === "MalformedOutput" && error.line, 3)
    }))
})
