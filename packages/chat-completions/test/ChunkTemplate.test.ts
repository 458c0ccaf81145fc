/**
 * The decoder's fast path (a chunk read from a learned template, without `JSON.parse`) against its
 * `JSON.parse` path, on every recorded Chat Completions stream in `fixtures/chat-sse` and the hand-written
 * captures in `test/captures`.
 */
import { ChatCompletionsStream } from "@effect-responses/chat-completions"
import { AiError, type StreamPart } from "@effect-responses/core"
import * as Framing from "@effect-responses/wire/Framing"
import { isObject } from "@effect-responses/wire/Json"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Stream from "effect/Stream"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { afterEach, vi } from "vitest"
import { type ChunkTemplate, learn, plainDelta } from "../src/internal/chunkTemplate.js"
import { Decoder, makeSseFramer } from "../src/internal/decoder.js"
import { bytes, fixturePath, readFixture } from "./fixtures.js"

const CAPTURES = fileURLToPath(new URL("captures", import.meta.url))

/** Every recorded stream (`fixtures/chat-sse`) and hand-written capture (`test/captures`): name and text. */
const streams: ReadonlyArray<readonly [string, string]> = [
  ...readdirSync(fixturePath("chat-sse")).sort().map((file) => [`chat-sse/${file}`, readFixture(`chat-sse/${file}`)] as const),
  ...readdirSync(CAPTURES).sort().map((file) => [`captures/${file}`, readFileSync(`${CAPTURES}/${file}`, "utf8")] as const)
]

/** The `data:` payloads of a capture, framed as `ChatCompletionsStream.captureChannel` frames them. */
const payloadsOf = (text: string): Array<string> => {
  const max = Framing.DEFAULT_MAX_EVENT_SIZE
  const framer = Framing.makeCaptureFramer(max, { framer: () => makeSseFramer(max), fields: ["error"] })
  const payloads: Array<string> = []
  const lines: Array<number> = []
  assert.isUndefined(framer.push(text, payloads, lines))
  assert.isUndefined(framer.end(payloads, lines))
  return payloads
}

/** Synthetic call ids (`randomUUID`) numbered from 0 again for each run, so that two runs can be compared. */
const numberedIds = () => {
  let next = 0
  vi.spyOn(globalThis.crypto, "randomUUID").mockImplementation(() =>
    `00000000-0000-4000-8000-${(next++).toString(16).padStart(12, "0")}` as `${string}-${string}-${string}-${string}-${string}`
  )
}

afterEach(() => {
  vi.restoreAllMocks()
})

/** A decoder run over payloads: the elements, the error that ended it, the logs, and the chunks the fast path read. */
const run = (payloads: ReadonlyArray<string>, fast: boolean) => {
  numberedIds()
  const decoder = new Decoder(fast)
  const out: Array<StreamPart.StreamPart> = []
  const logs: Array<Framing.LogEntry> = []
  let error: unknown
  for (const data of payloads) {
    error = decoder.feed(data, out)
    logs.push(...decoder.takeLogs())
    if (error !== undefined) break
  }
  if (error === undefined) error = decoder.end(out)
  logs.push(...decoder.takeLogs())
  return { out, error, logs, fastChunks: decoder.fastChunks }
}

/** The templates learned from the plain delta chunks of `payloads`. */
const templatesOf = (payloads: ReadonlyArray<string>): Array<ChunkTemplate> =>
  payloads.flatMap((data) => {
    let json: unknown
    try {
      json = JSON.parse(data)
    } catch {
      return []
    }
    const plain = isObject(json) ? plainDelta(json) : undefined
    const template = plain === undefined ? undefined : learn(data, plain)
    return template === undefined ? [] : [template]
  })

/** What `JSON.parse` and the decoder's reads make of a chunk: its plain delta, if it is one. */
const parsed = (data: string) => {
  try {
    const json: unknown = JSON.parse(data)
    return isObject(json) ? plainDelta(json) : undefined
  } catch {
    return undefined
  }
}

const OPENAI_TEXT = "chat-sse/vai-chat-openai-text-usage.chunks.txt"
const PARALLEL_TOOL_CALLS = "chat-sse/opy-chat-gpt4o-parallel-tool-calls.sse"

/** The recorded streams with tool calls whose arguments come in pieces, one chunk each. */
const TOOL_CALL_STREAMS = [
  PARALLEL_TOOL_CALLS,
  "chat-sse/opy-chat-gpt4o-strict-tool-call.sse",
  "chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse"
]

/** A chunk's string member `field`, its value's escapes included. */
const memberOf = (field: string) => new RegExp(`"${field}":"(?:[^"\\\\]|\\\\.)*"`)

describe("the decoder's fast path (chunks read from a learned template)", () => {
  it("reads most chunks of the recorded OpenAI, DeepSeek and xAI streams", () => {
    // OpenAI, 303 chunks: all but the first (its role), the first text chunk (learned from), the finish and the usage chunks
    expect(run(payloadsOf(readFixture(OPENAI_TEXT)), true).fastChunks).toBe(299)
    expect(run(payloadsOf(readFixture("chat-sse/pai-chat-deepseek-reasoning-content.sse")), true).fastChunks)
      .toBe(207)
    expect(run(payloadsOf(readFixture("chat-sse/vai-chat-xai-reasoning-tool-call.chunks.txt")), true).fastChunks)
      .toBe(222)
  })

  it("reads the argument pieces of the recorded tool call streams after the first of each call", () => {
    const runs = TOOL_CALL_STREAMS.map((name) => {
      const payloads = payloadsOf(readFixture(name))
      return { payloads, fast: run(payloads, true), slow: run(payloads, false) }
    })
    // every piece of arguments but the first of each call (read to learn from): 2 calls of 11 and 10 chunks
    // (the first with the call's id and name), 1 of 11, 1 of 6
    expect(runs.map(({ fast }) => fast.fastChunks)).toStrictEqual([18, 9, 4])
    for (const { fast, payloads, slow } of runs) {
      expect(fast.out).toStrictEqual(slow.out)
      // the arguments as the recorded chunks have them, call by call
      const recorded = new Map<number, string>()
      for (const data of payloads.filter((data) => data !== "[DONE]")) {
        const json: unknown = JSON.parse(data)
        const calls = isObject(json) && Array.isArray(json.choices) && isObject(json.choices[0]) &&
            isObject(json.choices[0].delta) && Array.isArray(json.choices[0].delta.tool_calls)
          ? json.choices[0].delta.tool_calls
          : []
        for (const call of calls) {
          if (isObject(call) && isObject(call.function) && typeof call.function.arguments === "string") {
            const index = call.index as number
            recorded.set(index, (recorded.get(index) ?? "") + call.function.arguments)
          }
        }
      }
      const streamed = new Map<number, string>()
      for (const part of fast.out) {
        if (part.type === "part" && part.partial && part.part.type === "tool_call") {
          streamed.set(part.outputIndex, (streamed.get(part.outputIndex) ?? "") + part.part.arguments)
        }
      }
      expect([...streamed.values()]).toStrictEqual([...recorded.values()])
    }
  })

  it("the recorded parallel calls with their id and index taken out: still two calls, each with its recorded name and arguments, fast path and parse path alike", () => {
    // a server numbering no call and naming none by id: each call's first chunk brings its name, the next
    // call's name comes after the previous call's arguments form a whole JSON value
    const payloads = payloadsOf(readFixture(PARALLEL_TOOL_CALLS)).map((data) =>
      data.replace(/"index":\d+,("id":"call_\w+","type":"function",)?(?="function")/g, "")
    )
    expect(payloads.filter((data) => data.includes("\"tool_calls\"") && /"index":\d+,"(id|function)"/.test(data))).toEqual([])
    const fast = run(payloads, true)
    const slow = run(payloads, false)
    expect(fast.out).toStrictEqual(slow.out)
    expect(fast.logs).toStrictEqual(slow.logs)
    // every piece of arguments but the stream's first (learned from): 11 and 9 after the calls' named chunks,
    // one template for both calls (the decoder's index 0 for each; the second call is the one under it then)
    expect(fast.fastChunks).toBe(19)
    const completed = fast.out.flatMap((part) => part.type === "part" && !part.partial && part.part.type === "tool_call" ? [part.part] : [])
    expect(completed.map((call) => call.name)).toStrictEqual(["GetWeatherArgs", "get_stock_price"])
    const streamed = new Map<number, string>()
    for (const part of fast.out) {
      if (part.type === "part" && part.partial && part.part.type === "tool_call") {
        streamed.set(part.outputIndex, (streamed.get(part.outputIndex) ?? "") + part.part.arguments)
      }
    }
    expect([...streamed.values()].map((args) => JSON.parse(args))).toStrictEqual([
      { city: "Edinburgh", country: "GB", units: "c" },
      { ticker: "AAPL", exchange: "NASDAQ" }
    ])
    expect(fast.logs.map((log) => log.message)).toContainEqual(expect.stringMatching(/^tool call without id or index naming get_stock_price after the complete call call_\w+ at position \d+; treated as a new call$/))
  })

  for (const [name, text] of streams) {
    it(`${name}: the same elements, error and logs as with every chunk parsed`, () => {
      const payloads = payloadsOf(text)
      const fast = run(payloads, true)
      const slow = run(payloads, false)
      expect(slow.fastChunks).toBe(0)
      expect(fast.out).toStrictEqual(slow.out)
      expect(fast.error).toStrictEqual(slow.error)
      expect(fast.logs).toStrictEqual(slow.logs)
    })
  }

  it("every template learned from a recorded chunk reads every recorded chunk as JSON.parse does, or not at all", () => {
    const all = streams.map(([, text]) => payloadsOf(text))
    const distinct = new Map<string, ChunkTemplate>()
    for (const template of all.flatMap(templatesOf)) {
      distinct.set(JSON.stringify([template.prefix, template.middle, template.tailed]), template)
    }
    const templates = [...distinct.values()]
    expect(templates.length).toBeGreaterThan(20)
    // one per call whose arguments come in pieces: the recorded streams' four, two of the captures
    expect(templates.filter((template) => template.kind === "tool_arguments").map(({ index }) => index))
      .toStrictEqual([0, 1, 0, 0, 0, 0])
    let matched = 0
    for (const payloads of all) {
      for (const data of payloads) {
        const plain = parsed(data)
        for (const template of templates) {
          const text = template.match(data)
          if (text === undefined) continue
          matched++
          expect(plain).toBeDefined()
          expect([plain?.id, plain?.kind, plain?.index, plain?.text])
            .toStrictEqual([template.id, template.kind, template.index, text])
        }
      }
    }
    expect(matched).toBeGreaterThan(700)
  })

  const recordedTemplates: ReadonlyArray<readonly [string, string, number]> = [
    ["a text delta's", OPENAI_TEXT, 1],
    ["a piece of a tool call's arguments'", PARALLEL_TOOL_CALLS, 2]
  ]
  for (const [what, name, at] of recordedTemplates) {
    it(`any string in ${what} template reads as JSON.parse reads it (escapes, quotes, non-ASCII, lone surrogates)`, () => {
      const payloads = payloadsOf(readFixture(name))
      const [template] = templatesOf(payloads.slice(at, at + 1))
      assert.isDefined(template)
      const tail = template!.tailed ? "Qup1BsQ3\"}" : ""
      FastCheck.assert(
        FastCheck.property(FastCheck.string({ unit: "binary" }), (s) => {
          const data = `${template!.prefix}${JSON.stringify(s).slice(1)}${template!.middle}${tail}`
          assert.strictEqual(template!.match(data), s)
          assert.strictEqual(parsed(data)?.text, s)
        })
      )
    })
  }

  // a recorded chunk made invalid, put among the recorded chunks at `at` (the fast path reading `before` of them)
  const invalidChunks: ReadonlyArray<readonly [string, string, string, number, number]> = [
    ["text delta", OPENAI_TEXT, "content", 20, 18],
    ["piece of tool call arguments", PARALLEL_TOOL_CALLS, "arguments", 8, 5]
  ]
  for (const [kind, name, field, at, before] of invalidChunks) {
    describe(`an invalid ${kind} chunk written from the template fails as before, with the same MalformedOutput`, () => {
      const recorded = payloadsOf(readFixture(name))
      const chunk = recorded[at - 2]!
      const member = memberOf(field)
      assert.match(chunk, member)
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["a raw control character in the text", chunk.replace(member, `"${field}":"a\tb"`)],
        ["an unknown escape", chunk.replace(member, `"${field}":"a\\xb"`)],
        ["a short \\u escape", chunk.replace(member, `"${field}":"a\\u12"`)],
        ["an unterminated text", chunk.slice(0, chunk.indexOf(`"${field}":"`) + field.length + 6)],
        ["no closing brace", chunk.slice(0, -1)],
        ["something after the closing brace", `${chunk}}`],
        ...(chunk.includes("\"obfuscation\"")
          ? [["an escape in the tail", chunk.replace(/"obfuscation":"[^"]*"/, "\"obfuscation\":\"a\\qb\"")] as const]
          : [])
      ]
      for (const [what, invalid] of cases) {
        it(what, () => {
          expect(() => JSON.parse(invalid)).toThrow()
          const payloads = [...recorded.slice(0, at), invalid, ...recorded.slice(at)]
          const fast = run(payloads, true)
          const slow = run(payloads, false)
          // the fast path was reading the chunks before it
          expect(fast.fastChunks).toBe(before)
          expect(fast.error).toBeInstanceOf(AiError.MalformedOutput)
          expect(fast.error).toStrictEqual(slow.error)
          expect(fast.out).toStrictEqual(slow.out)
          expect((fast.error as AiError.MalformedOutput).position).toBe(at)
        })
      }
    })
  }

  describe("an invalid text delta chunk written from the template (a raw control character)", () => {
    const recorded = payloadsOf(readFixture(OPENAI_TEXT))
    const invalid = recorded[18]!.replace(/"content":"[^"]*"/, "\"content\":\"a\tb\"")

    it.effect("through ChatCompletionsStream.decodeSse: the parts before it, then MalformedOutput naming its line", () =>
      Effect.gen(function*() {
        const sse = [...recorded.slice(0, 20), invalid, ...recorded.slice(20)].map((data) => `data: ${data}\n\n`).join("")
        const items = yield* Stream.runCollect(Stream.either(ChatCompletionsStream.decodeSse(Stream.make(bytes(sse)))))
        const results = Chunk.toReadonlyArray(items)
        const error = results.at(-1)!
        assert.isTrue(Either.isLeft(error))
        const failure = (error as Either.Left<unknown, unknown>).left
        expect(failure).toBeInstanceOf(AiError.MalformedOutput)
        const malformed = failure as AiError.MalformedOutput
        let message = ""
        try {
          JSON.parse(invalid)
        } catch (e) {
          message = (e as Error).message
        }
        expect(malformed.description).toBe(`invalid JSON chunk: ${message}`)
        expect([malformed.position, malformed.line]).toStrictEqual([20, 41])
        // the first chunk starts the response, the role chunk has no text: 19 text deltas before it
        expect(results.length - 1).toBe(1 + 19)
      }))
  })
})
