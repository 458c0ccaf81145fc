import { Capture } from "@effect-responses/responses"
import { assert, describe, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import { fixturePath, MULTISTEP, readFixture } from "./fixtures.js"

describe("Capture", () => {
  it.effect("splits the line-JSON multistep recording into its four responses", () =>
    Effect.gen(function*() {
      const capture = yield* Capture.load(fixturePath(MULTISTEP))
      assert.deepStrictEqual(capture.responses.map((r) => r.events.length), [56, 19, 19, 16])
      assert.strictEqual(capture.responses[0]!.id, "resp_01830d662ab3856501693c321345c88190b0de00f3b9975691")
      assert.strictEqual(capture.responses[1]!.events[0]!.line, 57)
      assert.deepStrictEqual(
        capture.responses.map((r) => Capture.outputItems(r).map((item) => item.type)),
        [["reasoning", "function_call"], ["function_call"], ["function_call"], ["message"]]
      )
      assert.strictEqual(Capture.terminalEvent(capture.responses[3]!)?.type, "response.completed")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("reads raw SSE with a comment, data-only frames and [DONE] (OpenRouter)", () =>
    Effect.gen(function*() {
      const capture = yield* Capture.parse(
        readFixture("responses-sse/pai-openrouter-gptoss-reasoning-text.sse"),
        "openrouter.sse"
      )
      assert.strictEqual(capture.responses.length, 1)
      assert.strictEqual(capture.responses[0]!.events[0]!.type, "response.created")
      assert.strictEqual(capture.responses[0]!.events.at(-1)!.type, "response.completed")
    }))

  it.effect("an event: ping keep-alive is skipped whatever its data, as the stream decoder skips it", () =>
    Effect.gen(function*() {
      const recorded = readFixture("responses-sse/pai-gpt4omini-text-logprobs.sse")
      const frames = recorded.split("\n\n")
      const pinged = [...frames.slice(0, 7), "event: ping\ndata: ping", "event: ping\ndata: 2026-12-03 14:00:00.000000", ...frames.slice(7)]
      const capture = yield* Capture.parse(pinged.join("\n\n"), "pinged.sse")
      const plain = yield* Capture.parse(recorded, "plain.sse")
      assert.deepStrictEqual(
        capture.responses.map((r) => r.events.map((e) => e.data)),
        plain.responses.map((r) => r.events.map((e) => e.data))
      )
    }))

  it.effect("toSse gives back frames that parse to the same events", () =>
    Effect.gen(function*() {
      const capture = yield* Capture.parse(readFixture(MULTISTEP), "multistep")
      const again = yield* Capture.parse(capture.responses.map(Capture.toSse).join(""), "again")
      assert.deepStrictEqual(
        again.responses.map((r) => r.events.map((e) => e.data)),
        capture.responses.map((r) => r.events.map((e) => e.data))
      )
    }))

  it.effect("names the file and the line of malformed JSON", () =>
    Effect.gen(function*() {
      const lines = readFixture(MULTISTEP).split("\n")
      lines[4] = lines[4]!.slice(0, 40)
      const error = yield* Effect.flip(Capture.parse(lines.join("\n"), "broken.chunks.txt"))
      assert.strictEqual(error.line, 5)
      assert.match(error.message, /^broken\.chunks\.txt:5: malformed JSON/)
    }))

  it.effect("rejects a missing file, an empty one, and one without response.created", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const missing = yield* Effect.flip(Capture.load(`${dir}/nope.sse`))
      assert.strictEqual(missing.message, `${dir}/nope.sse: no such file`)
      yield* fs.writeFileString(`${dir}/empty.sse`, "\n")
      const empty = yield* Effect.flip(Capture.load(`${dir}/empty.sse`))
      assert.strictEqual(empty.message, `${dir}/empty.sse: the capture is empty`)
      const orphan = yield* Effect.flip(Capture.parse("{\"type\":\"response.output_text.delta\"}\n", "x"))
      assert.strictEqual(orphan.message, "x:1: event response.output_text.delta before any response.created")
      const notEvent = yield* Effect.flip(Capture.parse("[1,2]\n", "y"))
      assert.strictEqual(notEvent.line, 1)
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)))
})
