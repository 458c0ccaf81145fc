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

describe("the decoder's fast path (chunks read from a learned template)", () => {
  it("reads most chunks of the recorded OpenAI, DeepSeek and xAI streams", () => {
    // OpenAI, 303 chunks: all but the first (its role), the first text chunk (learned from), the finish and the usage chunks
    expect(run(payloadsOf(readFixture(OPENAI_TEXT)), true).fastChunks).toBe(299)
    expect(run(payloadsOf(readFixture("chat-sse/pai-chat-deepseek-reasoning-content.sse")), true).fastChunks)
      .toBe(207)
    expect(run(payloadsOf(readFixture("chat-sse/vai-chat-xai-reasoning-tool-call.chunks.txt")), true).fastChunks)
      .toBe(222)
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
    let matched = 0
    for (const payloads of all) {
      for (const data of payloads) {
        const plain = parsed(data)
        for (const template of templates) {
          const text = template.match(data)
          if (text === undefined) continue
          matched++
          expect(plain).toBeDefined()
          expect([plain?.id, plain?.kind, plain?.text]).toStrictEqual([template.id, template.kind, text])
        }
      }
    }
    expect(matched).toBeGreaterThan(700)
  })

  it("any string in a recorded chunk's delta reads as JSON.parse reads it (escapes, quotes, non-ASCII, lone surrogates)", () => {
    const payloads = payloadsOf(readFixture(OPENAI_TEXT))
    const [template] = templatesOf(payloads.slice(1, 2))
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

  describe("an invalid chunk written from the template fails as before, with the same MalformedOutput", () => {
    const recorded = payloadsOf(readFixture(OPENAI_TEXT))
    const chunk = recorded[10]!
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["a raw control character in the text", chunk.replace(/"content":"[^"]*"/, "\"content\":\"a\tb\"")],
      ["an unknown escape", chunk.replace(/"content":"[^"]*"/, "\"content\":\"a\\xb\"")],
      ["a short \\u escape", chunk.replace(/"content":"[^"]*"/, "\"content\":\"a\\u12\"")],
      ["an unterminated text", chunk.slice(0, chunk.indexOf("\"content\":\"") + 14)],
      ["no closing brace", chunk.slice(0, -1)],
      ["something after the closing brace", `${chunk}}`],
      ["an escape in the tail", chunk.replace(/"obfuscation":"[^"]*"/, "\"obfuscation\":\"a\\qb\"")]
    ]
    for (const [what, invalid] of cases) {
      it(what, () => {
        expect(() => JSON.parse(invalid)).toThrow()
        const payloads = [...recorded.slice(0, 20), invalid, ...recorded.slice(20)]
        const fast = run(payloads, true)
        const slow = run(payloads, false)
        // the fast path was reading the chunks before it
        expect(fast.fastChunks).toBe(18)
        expect(fast.error).toBeInstanceOf(AiError.MalformedOutput)
        expect(fast.error).toStrictEqual(slow.error)
        expect(fast.out).toStrictEqual(slow.out)
        expect((fast.error as AiError.MalformedOutput).position).toBe(20)
      })
    }

    it.effect("through ChatCompletionsStream.decodeSse: the parts before it, then MalformedOutput naming its line", () =>
      Effect.gen(function*() {
        const invalid = cases[0]![1]
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
