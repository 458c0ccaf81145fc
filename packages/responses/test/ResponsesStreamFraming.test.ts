/**
 * `ResponsesStream` framing and the event catalogue: SSE edge cases (CRLF, CR, BOM, multi-line data,
 * comments, `[DONE]`, the size bound, a stream cut off), the byte-split invariant on every recorded stream
 * (`fixtures/responses-sse`, vercel/ai Apache-2.0 and pydantic-ai MIT, see `SOURCES.md`), and the
 * events beyond text: hosted-tool progress, tool input deltas, partial images, annotations, refusals, audio.
 */
import { AiError, type Part, StreamPart } from "@effect-responses/core"
import { ResponsesStream } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Stream from "effect/Stream"
import { readdirSync, readFileSync } from "node:fs"
import { fixturePath, MULTISTEP } from "./fixtures.js"
import { bySlot, bytes, collectSettled, encodeAll, payloadsOf, splitAt } from "./utils.js"

const recordings = readdirSync(fixturePath("responses-sse")).sort()
const LOGPROBS = "pai-gpt4omini-text-logprobs.sse"
const fileBytes = (name: string) => new Uint8Array(readFileSync(fixturePath(`responses-sse/${name}`)))

const decodeBytes = (chunks: ReadonlyArray<Uint8Array>) =>
  collectSettled(ResponsesStream.decodeCapture(Stream.fromIterable(chunks)))

const summary = (result: { readonly elements: ReadonlyArray<StreamPart.StreamPart>; readonly error: unknown }) => ({
  elements: encodeAll(result.elements),
  error: result.error === undefined ? undefined : String(result.error)
})

/** Byte positions that cut a multi-byte UTF-8 sequence, or fall between `\r` and `\n`. */
const awkwardCuts = (data: Uint8Array): ReadonlyArray<number> => {
  const cuts: Array<number> = []
  for (let i = 1; i < data.length; i++) {
    if ((data[i]! & 0xc0) === 0x80 || (data[i - 1] === 13 && data[i] === 10)) cuts.push(i)
  }
  return cuts
}

const withCrlf = (data: Uint8Array): Uint8Array =>
  bytes(new TextDecoder().decode(data).replace(/\r?\n/g, "\r\n"))

/** Runs `effect` with a logger that records every message with its level. */
const withLogs = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const logs: Array<{ level: string; message: string }> = []
    const logger = Logger.make(({ logLevel, message }) => {
      logs.push({ level: logLevel.label, message: String(message) })
    })
    const result = yield* effect.pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    )
    return { result, logs }
  })

const sse = (...events: ReadonlyArray<unknown>) =>
  events.map((event) => `data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`).join("")

const decodeSseString = (text: string) => collectSettled(ResponsesStream.decodeSse(Stream.make(bytes(text))))

const created = { type: "response.created", response: { id: "resp_1", model: "m", status: "in_progress" } }
const completed = (output: ReadonlyArray<unknown> = []) => ({
  type: "response.completed",
  response: { id: "resp_1", status: "completed", output, usage: { input_tokens: 1, output_tokens: 2 } }
})

describe("ResponsesStream framing", () => {
  describe("any split of a recording's bytes gives the same StreamParts as reading it whole", () => {
    for (const name of recordings) {
      for (const [variant, data] of [["as recorded", fileBytes(name)], ["with CRLF", withCrlf(fileBytes(name))]] as const) {
        const reference = summary(Effect.runSync(decodeBytes([data])))
        const awkward = awkwardCuts(data)
        const cut = awkward.length === 0
          ? FastCheck.integer({ min: 1, max: data.length - 1 })
          : FastCheck.oneof(FastCheck.integer({ min: 1, max: data.length - 1 }), FastCheck.constantFrom(...awkward))
        it.effect.prop(
          `${name} (${variant})`,
          [FastCheck.array(cut, { maxLength: 40 })],
          ([cuts]) =>
            Effect.gen(function*() {
              expect(summary(yield* decodeBytes(splitAt(data, cuts)))).toStrictEqual(reference)
            }),
          { fastCheck: { numRuns: 4 } }
        )
      }
    }
  })

  it.effect("CRLF, lone CR, a BOM, comments, multi-line data and [DONE] frame the same events as LF", () =>
    Effect.gen(function*() {
      const event = completed()
      const lf = `: OPENROUTER PROCESSING\n\nevent: response.created\ndata: ${JSON.stringify(created)}\n\n` +
        `data: {"type":"response.completed",\ndata: "response":${JSON.stringify(event.response)}}\n\nid: 7\nretry: 10\n\n` +
        `data: [DONE]\n\n`
      const reference = yield* decodeSseString(lf)
      assert.isUndefined(reference.error)
      expect(reference.elements.map((e) => e.type)).toStrictEqual(["response_started", "response_finished"])
      for (const text of [lf.replace(/\n/g, "\r\n"), lf.replace(/\n/g, "\r"), `\uFEFF${lf}`]) {
        expect(summary(yield* decodeSseString(text))).toStrictEqual(summary(reference))
      }
      // CRLF cut between `\r` and `\n` at every line ending
      const crlf = bytes(lf.replace(/\n/g, "\r\n"))
      const chunks = splitAt(crlf, awkwardCuts(crlf))
      expect(summary(yield* decodeBytes(chunks))).toStrictEqual(summary(reference))
    }))

  it.effect("an event whose lines ended is read at the end of input even without its blank line", () =>
    Effect.gen(function*() {
      const { elements, error } = yield* decodeSseString(`${sse(created)}data: ${JSON.stringify(completed())}\n`)
      assert.isUndefined(error)
      assert.strictEqual(elements.at(-1)!.type, "response_finished")
    }))

  it.effect("a stream cut off inside an event fails with TruncatedStream after the parts that arrived", () =>
    Effect.gen(function*() {
      const text = `${sse(created)}data: ${JSON.stringify(completed()).slice(0, 40)}`
      const { elements, error } = yield* decodeSseString(text)
      expect(elements.map((e) => e.type)).toStrictEqual(["response_started"])
      assert.instanceOf(error, AiError.TruncatedStream)
      assert.strictEqual((error as AiError.TruncatedStream).responseId, "resp_1")
    }))

  it.effect("an event over the size bound fails with MalformedOutput instead of growing memory", () =>
    Effect.gen(function*() {
      const big = { type: "keepalive", padding: "x".repeat(2000) }
      for (const decode of [ResponsesStream.decodeSseText, ResponsesStream.decodeCaptureText]) {
        const { elements, error } = yield* collectSettled(
          decode(Stream.make(sse(created), sse(big)), { maxEventSize: 1000 })
        )
        expect(elements.map((e) => e.type)).toStrictEqual(["response_started"])
        assert.instanceOf(error, AiError.MalformedOutput)
        assert.include((error as AiError.MalformedOutput).description, "exceeds 1000 characters")
        assert.strictEqual((error as AiError.MalformedOutput).line, 3)
      }
      // a line that never ends is bounded too
      const lines = yield* collectSettled(
        ResponsesStream.decodeLinesText(Stream.make(`${JSON.stringify(created)}\n`, "{", "x".repeat(600), "x".repeat(600)), {
          maxEventSize: 1000
        })
      )
      assert.instanceOf(lines.error, AiError.MalformedOutput)
      assert.strictEqual((lines.error as AiError.MalformedOutput).line, 2)
    }))

  it.effect("malformed JSON names the event position, the line and a bounded excerpt", () =>
    Effect.gen(function*() {
      const broken = `{"type":"response.output_text.delta","delta":"${"y".repeat(500)}`
      const { error } = yield* decodeSseString(`: comment\n\n${sse(created)}data: ${broken}\n\n`)
      assert.instanceOf(error, AiError.MalformedOutput)
      const malformed = error as AiError.MalformedOutput
      assert.strictEqual(malformed.position, 1)
      assert.strictEqual(malformed.line, 5)
      assert.isAtMost(malformed.excerpt!.length, 201)
      assert.include(malformed.message, "line 5")
      const lines = yield* collectSettled(
        ResponsesStream.decodeCaptureText(Stream.make(`${JSON.stringify(created)}\n\n${broken}\n`))
      )
      assert.strictEqual((lines.error as AiError.MalformedOutput).line, 3)
    }))

  it.effect("event: ping is a keep-alive whatever its data: skipped with a debug log, the answer read whole", () =>
    Effect.gen(function*() {
      const recorded = readFileSync(fixturePath(`responses-sse/${LOGPROBS}`), "utf8")
      const frames = recorded.split("\n\n")
      const whole = yield* decodeSseString(recorded)
      assert.isUndefined(whole.error)
      // a ping after frame 6 (2 deltas in): `ping`, sse-starlette's timestamp, JSON, none at all
      const pings = ["event: ping\ndata: ping", "event: ping\r\ndata: 2026-12-03 14:00:00.000000", "event: ping\ndata: {}", "event: ping\ndata:"]
      for (const ping of pings) {
        const text = [...frames.slice(0, 7), ping, ...frames.slice(7)].join("\n\n")
        for (const read of [decodeSseString(text), collectSettled(ResponsesStream.decodeCapture(Stream.make(bytes(text))))]) {
          const { result, logs } = yield* withLogs(read)
          assert.isUndefined(result.error, ping)
          expect(encodeAll(result.elements)).toStrictEqual(encodeAll(whole.elements))
          expect(logs.filter((log) => log.level === "DEBUG").map((log) => log.message)).toContain(
            "skipped a keep-alive event (event: ping) at position 7"
          )
        }
      }
    }))

  it.effect("an event whose data is no JSON is named by its SSE event: field, after the parts that arrived", () =>
    Effect.gen(function*() {
      // the recorded stream with its frame 6 (a text delta, line 20) cut inside its JSON
      const frames = readFileSync(fixturePath(`responses-sse/${LOGPROBS}`), "utf8").split("\n\n")
      const broken = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\", oops"
      const text = [...frames.slice(0, 6), broken, ...frames.slice(7)].join("\n\n")
      const before = yield* collectSettled(ResponsesStream.decodeSse(Stream.make(bytes(`${frames.slice(0, 6).join("\n\n")}\n\n`))))
      const reads = [
        yield* decodeSseString(text),
        yield* collectSettled(ResponsesStream.decodeCapture(Stream.make(bytes(text)))),
        yield* collectSettled(ResponsesStream.decodeSseText(Stream.fromIterable(text.split(""))))
      ]
      for (const { elements, error } of reads) {
        assert.instanceOf(error, AiError.MalformedOutput)
        expect({ ...error as AiError.MalformedOutput }).toMatchObject({
          eventType: "response.output_text.delta",
          position: 6,
          line: 20,
          excerpt: "{\"type\":\"response.output_text.delta\", oops"
        })
        assert.include(String(error), "malformed output (event response.output_text.delta at position 6 line 20): invalid JSON event")
        expect(encodeAll(elements)).toStrictEqual(encodeAll(before.elements))
        assert.isAbove(elements.length, 2)
      }
      // data that parses but is no event: the same; a frame without a name stays unnamed; the JSON type wins
      const named = (name: string | undefined, data: string) =>
        decodeSseString(`${sse(created)}${name === undefined ? "" : `event: ${name}\n`}data: ${data}\n\n`)
      const cases: ReadonlyArray<readonly [string | undefined, string, string | undefined]> = [
        ["response.output_text.delta", "[1]", "response.output_text.delta"],
        [undefined, "{oops", undefined],
        ["response.output_text.delta", "{\"type\":\"response.output_item.added\"}", "response.output_item.added"]
      ]
      for (const [name, data, eventType] of cases) {
        const { error } = yield* named(name, data)
        assert.instanceOf(error, AiError.MalformedOutput)
        assert.strictEqual((error as AiError.MalformedOutput).eventType, eventType)
        assert.strictEqual((error as AiError.MalformedOutput).line, name === undefined ? 3 : 4)
      }
    }))

  it.effect("line-JSON and SSE captures of the same events decode alike", () =>
    Effect.gen(function*() {
      const payloads = payloadsOf(MULTISTEP)
      const lines = yield* collectSettled(ResponsesStream.decodeCapture(Stream.make(bytes(payloads.join("\r\n")))))
      const sseResult = yield* collectSettled(ResponsesStream.decodeCapture(Stream.make(bytes(sse(...payloads)))))
      assert.isUndefined(lines.error)
      expect(encodeAll(lines.elements)).toStrictEqual(encodeAll(sseResult.elements))
    }))
})

describe("ResponsesStream event catalogue", () => {
  const decodeFile = (name: string) =>
    collectSettled(ResponsesStream.decodeCapture(Stream.make(fileBytes(name))))

  it.effect("hosted-tool progress updates the part's status before the complete item arrives", () =>
    Effect.gen(function*() {
      const { elements } = yield* decodeFile("pai-gpt52-web-search-url-citations.sse")
      const [search] = bySlot(elements).filter((slot) => slot.at(-1)!.part.type === "unknown")
      expect(search!.map((u) => [u.partial, u.part.attributes.status])).toStrictEqual([
        [true, "in_progress"],
        [true, "searching"],
        [true, "completed"],
        [false, "completed"]
      ])
      const progress = search![1]!.part as Part.UnknownPart
      assert.strictEqual(progress.kind, "web_search_call")
      assert.strictEqual((progress.item as { type: string }).type, "response.web_search_call.searching")
      assert.strictEqual((search!.at(-1)!.part as Part.UnknownPart).kind, "web_search_call")
    }))

  it.effect("code interpreter code deltas concatenate to the item's code", () =>
    Effect.gen(function*() {
      const { elements } = yield* decodeFile("vai-openai-code-interpreter.chunks.txt")
      const slot = bySlot(elements).find((s) => (s.at(-1)!.part as Part.UnknownPart).kind === "code_interpreter_call")!
      const deltas = slot.filter((u) => u.partial && (u.part as Part.UnknownPart).item !== undefined).map((u) =>
        ((u.part as Part.UnknownPart).item as { type: string; delta?: string })
      ).filter((event) => event.type === "response.code_interpreter_call_code.delta")
      assert.isAbove(deltas.length, 1)
      const item = (slot.at(-1)!.part as Part.UnknownPart).item as { code: string }
      assert.strictEqual(deltas.map((event) => event.delta).join(""), item.code)
      expect(slot.map((u) => u.part.attributes.status).filter((s, i, all) => s !== all[i - 1])).toStrictEqual([
        "in_progress",
        "interpreting",
        "completed"
      ])
    }))

  it.effect("a partial image is a partial media preview; the done item is the image", () =>
    Effect.gen(function*() {
      const { elements } = yield* decodeFile("vai-openai-image-generation-partial-image.chunks.txt")
      const slot = bySlot(elements)[1]!
      expect(slot.map((u) => [u.partial, u.part.type, u.part.attributes.status, (u.part as Part.MediaPart).data !== undefined]))
        .toStrictEqual([
          [true, "media", "in_progress", false],
          [true, "media", "generating", false],
          [true, "media", "generating", true],
          [true, "media", "completed", false],
          [false, "media", "completed", true]
        ])
      assert.strictEqual((slot[2]!.part as Part.MediaPart).mediaType, "image/webp")
      assert.strictEqual((slot.at(-1)!.part as Part.MediaPart).mediaType, "image/webp")
    }))

  it.effect("annotation.added arrives as a text delta with the annotation; the completing part holds the rest", () =>
    Effect.gen(function*() {
      const { elements } = yield* decodeFile("pai-gpt4o-file-search-file-citation.sse")
      const text = bySlot(elements).find((s) => s[0]!.part.type === "text")!
      const annotated = text.filter((u) => (u.part as Part.TextPart).annotations.length > 0)
      assert.strictEqual(annotated.length, 1)
      assert.isTrue(annotated[0]!.partial)
      assert.strictEqual((annotated[0]!.part as Part.TextPart).text, "")
      expect((annotated[0]!.part as Part.TextPart).annotations[0]).toMatchObject({ type: "file_citation", index: 30 })
      expect((text.at(-1)!.part as Part.TextPart).annotations).toStrictEqual([])
    }))

  it.effect("refusal deltas are RefusalPart deltas; the completing part is emptied", () =>
    Effect.gen(function*() {
      const item = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "refusal", refusal: "I can't." }] }
      const text = sse(
        created,
        { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } },
        { type: "response.refusal.delta", output_index: 0, item_id: "msg_1", content_index: 0, delta: "I can" },
        { type: "response.refusal.delta", output_index: 0, item_id: "msg_1", content_index: 0, delta: "'t." },
        { type: "response.refusal.done", output_index: 0, item_id: "msg_1", content_index: 0, refusal: "I can't." },
        { type: "response.output_item.done", output_index: 0, item },
        completed([item])
      )
      const { elements, error } = yield* decodeSseString(text)
      assert.isUndefined(error)
      expect(bySlot(elements)[0]!.map((u) => [u.partial, u.part.type, (u.part as Part.RefusalPart).text])).toStrictEqual([
        [true, "refusal", "I can"],
        [true, "refusal", "'t."],
        [false, "refusal", ""]
      ])
    }))

  it.effect("audio events and types outside the catalogue are skipped with a debug log", () =>
    Effect.gen(function*() {
      const text = sse(
        created,
        { type: "keepalive", sequence_number: 1 },
        { type: "response.audio.delta", delta: "AAAA", sequence_number: 2 },
        { type: "response.audio.transcript.delta", delta: "hi", response_id: "resp_1", sequence_number: 3 },
        { type: "response.something_new", output_index: 0 },
        completed()
      )
      const { result, logs } = yield* withLogs(decodeSseString(text))
      assert.isUndefined(result.error)
      expect(result.elements.map((e) => e.type)).toStrictEqual(["response_started", "response_finished"])
      const debug = logs.filter((log) => log.level === "DEBUG").map((log) => log.message)
      assert.strictEqual(debug.length, 4)
      assert.include(debug[0], "keepalive")
      assert.include(debug[1], "audio")
      assert.include(debug[3], "response.something_new")
    }))

  it.effect("response.incomplete for content_filter finishes with content_filter and keeps the reason", () =>
    Effect.gen(function*() {
      const incomplete = {
        type: "response.incomplete",
        response: { id: "resp_1", status: "incomplete", incomplete_details: { reason: "content_filter" }, output: [] }
      }
      const { elements, error } = yield* decodeSseString(sse(created, incomplete))
      assert.isUndefined(error)
      const finished = elements.at(-1) as StreamPart.ResponseFinished
      assert.strictEqual(finished.finishReason, "content_filter")
      assert.strictEqual(finished.incompleteReason, "content_filter")
      assert.strictEqual(finished.status, "incomplete")
    }))

  it.effect("a contradicting snapshot is sent whole with replace: true, and its JSON says so", () =>
    Effect.gen(function*() {
      const item = { id: "msg_1", type: "message", status: "completed", content: [{ type: "output_text", text: "Hello" }] }
      const text = sse(
        created,
        { type: "response.output_text.delta", output_index: 0, item_id: "msg_1", content_index: 0, delta: "Bye" },
        { type: "response.output_item.done", output_index: 0, item },
        completed([item])
      )
      const { result, logs } = yield* withLogs(decodeSseString(text))
      const last = result.elements.at(-2) as StreamPart.PartUpdate
      expect(StreamPart.encode(last)).toMatchObject({ type: "part", partial: false, replace: true, part: { text: "Hello" } })
      expect(StreamPart.encode(result.elements.at(-3)!)).not.toHaveProperty("replace")
      assert.strictEqual(logs.filter((log) => log.level === "WARN").length, 1)
    }))
})

describe("ResponsesStream capture format detection", () => {
  it.effect("text of neither format fails on its first line as malformed JSON", () =>
    Effect.gen(function*() {
      const { error } = yield* collectSettled(ResponsesStream.decodeCaptureText(Stream.make("<html>", "\n<body>\n")))
      assert.instanceOf(error, AiError.MalformedOutput)
      assert.strictEqual((error as AiError.MalformedOutput).line, 1)
      assert.include((error as AiError.MalformedOutput).description, "invalid JSON")
    }))

  it.effect("an SSE comment, cut into one-character chunks, is recognised as SSE", () =>
    Effect.gen(function*() {
      const text = `: OPENROUTER PROCESSING\n\n${sse(created, completed())}`
      const { elements, error } = yield* collectSettled(ResponsesStream.decodeCaptureText(Stream.fromIterable(text)))
      assert.isUndefined(error)
      expect(elements.map((e) => e.type)).toStrictEqual(["response_started", "response_finished"])
    }))
})
