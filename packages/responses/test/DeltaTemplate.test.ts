/**
 * The decoder's fast path (a delta event read from a learned template, without `JSON.parse`) against its
 * `JSON.parse` path, on every recorded Responses stream in `fixtures/responses-sse` and the hand-written
 * captures in `test/captures`.
 */
import { ResponsesStream } from "@effect-responses/responses"
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
import { Decoder } from "../src/internal/decoder.js"
import { checkRuns, type DeltaTemplate, learn } from "../src/internal/deltaTemplate.js"
import { fixturePath, readFixture } from "./fixtures.js"

const CAPTURES = fileURLToPath(new URL("captures", import.meta.url))

/** Every recorded stream (`fixtures/responses-sse`) and hand-written capture (`test/captures`): name and text. */
const streams: ReadonlyArray<readonly [string, string]> = [
  ...readdirSync(fixturePath("responses-sse")).sort().map((file) =>
    [`responses-sse/${file}`, readFixture(`responses-sse/${file}`)] as const
  ),
  ...readdirSync(CAPTURES).sort().map((file) => [`captures/${file}`, readFileSync(`${CAPTURES}/${file}`, "utf8")] as const)
]

/** The payloads of a capture, SSE or line-JSON, framed as `ResponsesStream.captureChannel` frames them. */
const payloadsOf = (text: string): Array<string> => {
  const max = Framing.DEFAULT_MAX_EVENT_SIZE
  const framer = Framing.makeCaptureFramer(max)
  const payloads: Array<string> = []
  const lines: Array<number> = []
  assert.isUndefined(framer.push(text, payloads, lines))
  assert.isUndefined(framer.end(payloads, lines))
  return payloads
}

/** Synthetic ids (`randomUUID`) numbered from 0 again for each run, so that two runs can be compared. */
const numberedIds = () => {
  let next = 0
  vi.spyOn(globalThis.crypto, "randomUUID").mockImplementation(() =>
    `00000000-0000-4000-8000-${(next++).toString(16).padStart(12, "0")}` as `${string}-${string}-${string}-${string}-${string}`
  )
}

afterEach(() => {
  vi.restoreAllMocks()
})

/** A decoder run over payloads: the elements, the error that ended it, the logs, and the events the fast path read. */
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
  if (error === undefined) error = decoder.end()
  logs.push(...decoder.takeLogs())
  return { out, error, logs, fastEvents: decoder.fastEvents }
}

/** The delta event types and what `Decoder.feed` reads them as (item type and field). */
const DELTAS: { readonly [type: string]: readonly [string, Parameters<typeof learn>[4]] } = {
  "response.output_text.delta": ["message", "text"],
  "response.function_call_arguments.delta": ["function_call", "args"],
  "response.custom_tool_call_input.delta": ["custom_tool_call", "input"],
  "response.reasoning_summary_text.delta": ["reasoning", "summary"],
  "response.reasoning_text.delta": ["reasoning", "reasoningText"],
  "response.refusal.delta": ["message", "refusal"]
}

/** What `JSON.parse` makes of a payload: a delta event's type and `delta`, if it is one. */
const parsed = (data: string) => {
  try {
    const json: unknown = JSON.parse(data)
    return isObject(json) && typeof json.type === "string" && DELTAS[json.type] !== undefined ? json : undefined
  } catch {
    return undefined
  }
}

/** The templates learned from the delta events of `payloads`. */
const templatesOf = (payloads: ReadonlyArray<string>): Array<DeltaTemplate> =>
  payloads.flatMap((data) => {
    const event = parsed(data)
    if (event === undefined) return []
    const [itemType, field] = DELTAS[event.type as string]!
    const template = learn(data, event, event.type as string, itemType, field)
    return template === undefined ? [] : [template]
  })

const O3MINI = "responses-sse/pai-o3mini-reasoning-summary-deltas.sse"
const FUNCTION_CALL = "responses-sse/pai-gpt4o-function-call-args-deltas.sse"

describe("the decoder's fast path (delta events read from a learned template)", () => {
  it("reads most events of the recorded o3-mini stream", () => {
    const payloads = payloadsOf(readFixture(O3MINI))
    // 676 events, 654 deltas: all but the first of each of the four summaries and of the message (learned from)
    expect(payloads.length).toBe(676)
    expect(run(payloads, true).fastEvents).toBe(649)
    expect(run(payloads, false).fastEvents).toBe(0)
  })

  for (const [name, text] of streams) {
    it(`${name}: the same elements, error and logs as with every event parsed`, () => {
      const payloads = payloadsOf(text)
      const fast = run(payloads, true)
      const slow = run(payloads, false)
      expect(fast.out).toStrictEqual(slow.out)
      expect(fast.error).toStrictEqual(slow.error)
      expect(fast.logs).toStrictEqual(slow.logs)
    })
  }

  it("every template learned from a recorded event reads every recorded event as JSON.parse does, or not at all", () => {
    const all = streams.map(([, text]) => payloadsOf(text))
    const distinct = new Map<string, DeltaTemplate>()
    for (const template of all.flatMap(templatesOf)) distinct.set(JSON.stringify(template.fixed), template)
    const templates = [...distinct.values()]
    expect(templates.length).toBeGreaterThan(20)
    // every delta type of the recordings but refusals (none recorded)
    expect(new Set(templates.map(({ type }) => type))).toStrictEqual(
      new Set(Object.keys(DELTAS).filter((type) => type !== "response.refusal.delta"))
    )
    let matched = 0
    for (const payloads of all) {
      for (const data of payloads) {
        const event = parsed(data)
        for (const template of templates) {
          const text = template.match(data)
          if (text === undefined) continue
          matched++
          assert.isDefined(event)
          // the event as parsed is the template's event but for the values the decoder does not read
          const { delta, obfuscation: _o, sequence_number: _s, ...rest } = event!
          const { delta: _d, obfuscation: _to, sequence_number: _ts, ...learned } = template.event
          expect([rest, delta]).toStrictEqual([learned, text])
        }
      }
    }
    expect(matched).toBeGreaterThan(1500)
  })

  const recordedTemplates: ReadonlyArray<readonly [string, string, number]> = [
    ["an output text delta's", O3MINI, 420],
    ["a reasoning summary delta's", O3MINI, 10],
    ["a piece of a function call's arguments'", FUNCTION_CALL, 6]
  ]
  for (const [what, name, at] of recordedTemplates) {
    it(`any string in ${what} template reads as JSON.parse reads it (escapes, quotes, non-ASCII, lone surrogates)`, () => {
      const payloads = payloadsOf(readFixture(name))
      const [template] = templatesOf(payloads.slice(at, at + 1))
      assert.isDefined(template)
      const values = (s: string) =>
        template!.kinds.map((kind) => kind === "text" ? JSON.stringify(s).slice(1, -1) : kind === "number" ? "4021" : "Qup1BsQ3")
      FastCheck.assert(
        FastCheck.property(FastCheck.string({ unit: "binary" }), (s) => {
          const data = template!.fixed.reduce((text, fixed, i) => i === 0 ? fixed : text + values(s)[i - 1] + fixed, "")
          assert.strictEqual(template!.match(data), s)
          assert.strictEqual(parsed(data)?.delta, s)
        })
      )
    })
  }

  // a recorded delta event made invalid, put among the recorded events at `at` (the fast path reading `before` of them)
  describe("an invalid delta event written from the template fails as before, with the same MalformedOutput", () => {
    const recorded = payloadsOf(readFixture(O3MINI))
    const at = 430
    const event = recorded[at - 2]!
    assert.match(event, /"type":"response.output_text.delta"/)
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["a raw control character in the text", event.replace(/"delta":"[^"]*"/, "\"delta\":\"a\tb\"")],
      ["an unknown escape", event.replace(/"delta":"[^"]*"/, "\"delta\":\"a\\xb\"")],
      ["a short \\u escape", event.replace(/"delta":"[^"]*"/, "\"delta\":\"a\\u12\"")],
      ["an unterminated text", event.slice(0, event.indexOf("\"delta\":\"") + 12)],
      ["no closing brace", event.slice(0, -1)],
      ["something after the closing brace", `${event}}`],
      ["an escape in the tail", event.replace(/"obfuscation":"[^"]*"/, "\"obfuscation\":\"a\\qb\"")],
      ["a sequence number with a leading zero", event.replace(/"sequence_number":\d+/, "\"sequence_number\":0427")],
      ["a sequence number cut short", event.replace(/"sequence_number":\d+/, "\"sequence_number\":4e")]
    ]
    for (const [what, invalid] of cases) {
      it(what, () => {
        expect(() => JSON.parse(invalid)).toThrow()
        const payloads = [...recorded.slice(0, at), invalid, ...recorded.slice(at)]
        const fast = run(payloads, true)
        const slow = run(payloads, false)
        // the fast path was reading the events before it: the 649 of the whole stream up to it
        expect(fast.fastEvents).toBe(run(recorded.slice(0, at), true).fastEvents)
        expect(fast.fastEvents).toBeGreaterThan(400)
        expect(fast.error).toBeInstanceOf(AiError.MalformedOutput)
        expect(fast.error).toStrictEqual(slow.error)
        expect(fast.out).toStrictEqual(slow.out)
        expect((fast.error as AiError.MalformedOutput).position).toBe(at)
      })
    }
  })

  it("a delta event with its delta twice reads as JSON.parse reads it (the last), whatever the last one's value", () => {
    // JSON.parse keeps a repeated member's last value; the template's hole is the first `"delta":"`. Among
    // the values: the texts the template is checked with, which one check alone let through
    const recorded = payloadsOf(readFixture(FUNCTION_CALL))
    for (const last of ["effect-responses template text", "", "x"]) {
      const payloads = recorded.map((data) =>
        data.includes("\"type\":\"response.function_call_arguments.delta\"")
          ? data.replace(/\}$/, `,"delta":${JSON.stringify(last)}}`)
          : data
      )
      expect(run(payloads, true).out, last).toStrictEqual(run(payloads, false).out)
    }
  })

  it("another response written from the same templates (its own item ids) is read without checking them again", () => {
    // a process makes call after call: the o3-mini stream again, as another response with other item ids
    // (the same length) and another response id, learned from after the recorded one
    const recorded = payloadsOf(readFixture(O3MINI))
    run(recorded, true)
    const again = recorded.map((data) =>
      data.replace(/68c42d/g, "0f00ba").replace(/"id":"resp_[^"]*"/g, "\"id\":\"resp_again\"")
    )
    expect(again.filter((data) => data.includes("0f00ba")).length).toBeGreaterThan(600)
    const before = checkRuns.count
    const fast = run(again, true)
    expect(checkRuns.count).toBe(before)
    expect(fast.fastEvents).toBe(649)
    expect(fast.out).toStrictEqual(run(again, false).out)
    // an item id written with an escape, a member more, a member less: other shapes, checked when learned
    const [, event] = [...recorded.entries()].find(([, data]) => data.includes("\"response.output_text.delta\""))!
    const others = [
      event.replace("\"item_id\":\"msg_", "\"item_id\":\"msg\\u005f"),
      event.replace(/\}$/, ",\"extra\":1}"),
      event.replace(/,"logprobs":\[\]/, "")
    ]
    for (const data of others) {
      const parsedEvent = parsed(data)!
      const checked = checkRuns.count
      const template = learn(data, parsedEvent, parsedEvent.type as string, "message", "text")
      expect(checkRuns.count).toBe(checked + 1)
      expect(template?.match(data)).toBe(parsedEvent.delta)
      expect(template?.match(event)).toBeUndefined()
    }
  })

  it("a delta event with a sequence number that is not a plain integer is parsed, and reads the same", () => {
    const recorded = payloadsOf(readFixture(O3MINI))
    const payloads = recorded.map((data, i) =>
      i === 500 ? data.replace(/"sequence_number":\d+/, "\"sequence_number\":500.0") : data
    )
    const fast = run(payloads, true)
    // that event and the next are parsed (the template learned from the first has `.0` after the number)
    expect(fast.fastEvents).toBe(647)
    expect(fast.out).toStrictEqual(run(payloads, false).out)
  })

  it.effect("through ResponsesStream.decodeSse, an invalid delta event: the parts before it, then its MalformedOutput", () =>
    Effect.gen(function*() {
      const recorded = payloadsOf(readFixture(O3MINI))
      const invalid = recorded[428]!.replace(/"delta":"[^"]*"/, "\"delta\":\"a\tb\"")
      const sse = [...recorded.slice(0, 430), invalid, ...recorded.slice(430)].map((data) => `data: ${data}\n\n`).join("")
      const items = yield* Stream.runCollect(
        Stream.either(ResponsesStream.decodeSse(Stream.make(new TextEncoder().encode(sse))))
      )
      const results = Chunk.toReadonlyArray(items)
      const error = results.at(-1)!
      assert.isTrue(Either.isLeft(error))
      const failure = (error as Either.Left<unknown, unknown>).left
      expect(failure).toBeInstanceOf(AiError.MalformedOutput)
      let message = ""
      try {
        JSON.parse(invalid)
      } catch (e) {
        message = (e as Error).message
      }
      expect((failure as AiError.MalformedOutput).description).toBe(`invalid JSON event: ${message}`)
      expect((failure as AiError.MalformedOutput).position).toBe(430)
      expect(results.slice(0, -1).every(Either.isRight)).toBe(true)
      expect(results.length - 1).toBe(run(recorded.slice(0, 430), false).out.length)
    }))
})
