/**
 * The `decode` and `aggregate` verbs, in process, on the recorded payloads of `fixtures` (vercel/ai
 * Apache-2.0, pydantic-ai MIT: see `SOURCES.md`).
 */
import { Aggregate, Decode } from "@effect-responses/cli"
import { ModelResponse, StreamPart } from "@effect-responses/core"
import { ChatCapture } from "@effect-responses/chat-completions"
import { Capture, ResponsesOutput } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { readdirSync, readFileSync } from "node:fs"
import { fixturePath } from "./fixtures.js"

const decodeLines = (path: string, options?: Decode.DecodeOptions) =>
  Effect.map(Stream.runCollect(Stream.either(Decode.lines(path, options))), (chunk) => {
    const lines: Array<string> = []
    let error: Capture.CaptureError | undefined
    for (const item of chunk) {
      if (item._tag === "Right") lines.push(item.right)
      else error = item.left
    }
    return { text: lines.join(""), error }
  })

const encodeResponses = Schema.encodeSync(Schema.Array(ModelResponse.ModelResponse))

describe("effect-responses decode", () => {
  it.effect("prints one JSON StreamPart per line; every line has responseId, part lines outputIndex and partial", () =>
    Effect.gen(function*() {
      const { text, error } = yield* decodeLines(fixturePath("responses-sse/pai-openrouter-gptoss-reasoning-text.sse"))
      assert.isUndefined(error)
      const lines = text.split("\n")
      assert.strictEqual(lines.pop(), "")
      const elements = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      for (const element of elements) {
        assert.isString(element.responseId)
        if (element.type === "part") {
          assert.isNumber(element.outputIndex)
          assert.isBoolean(element.partial)
        }
        // the core JSON encoding, decodable back
        Schema.decodeUnknownSync(StreamPart.StreamPart)(element)
      }
      assert.strictEqual(elements[0]!.type, "response_started")
      assert.strictEqual(elements.at(-1)!.type, "response_finished")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("malformed JSON: the lines before it, then one error naming the file and the line", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const lines = readFileSync(fixturePath("responses-sse/vai-azure-text.chunks.txt"), "utf8").split("\n")
      lines[3] = "{\"type\": \"response.output_text.delta\", \"delta\": "
      const file = `${dir}/broken.chunks.txt`
      yield* fs.writeFileString(file, lines.join("\n"))
      const { text, error } = yield* decodeLines(file)
      assert.instanceOf(error, Capture.CaptureError)
      assert.strictEqual(error!.line, 4)
      assert.match(error!.message, new RegExp(`^${file}:4: malformed output .*invalid JSON`))
      assert.notInclude(error!.message, "\n")
      assert.isTrue(text.split("\n").filter((line) => line !== "").every((line) => JSON.parse(line) !== undefined))
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)))

  it.effect("a missing file and a truncated capture fail with one line", () =>
    Effect.gen(function*() {
      const missing = yield* decodeLines("/nonexistent/capture.sse")
      assert.strictEqual(missing.error?.message, "/nonexistent/capture.sse: no such file")
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const file = `${dir}/cut.sse`
      const sse = readFileSync(fixturePath("responses-sse/pai-gpt4o-function-call-args-deltas.sse"), "utf8")
      yield* fs.writeFileString(file, sse.slice(0, 3000))
      const cut = yield* decodeLines(file)
      assert.match(cut.error!.message, new RegExp(`^${file}: truncated stream \\(response resp_`))
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)))
})

describe("effect-responses aggregate", () => {
  it.effect("a capture of consecutive responses gives one ModelResponse each", () =>
    Effect.gen(function*() {
      const responses = yield* Aggregate.responses(
        fixturePath("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt")
      )
      expect(responses.map((r) => r.finishReason)).toStrictEqual(["tool_calls", "tool_calls", "tool_calls", "stop"])
      assert.strictEqual(responses[3]!.text, "The final result is **570**.")
      const sse = yield* Aggregate.responses(fixturePath("responses-sse/pai-o3mini-reasoning-summary-deltas.sse"))
      assert.strictEqual(sse.length, 1)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a function call only in the terminal snapshot (a compatible server's capture) is aggregated and runs", () =>
    Effect.gen(function*() {
      const path = new URL("../../responses/test/captures/snapshot-only-function-call.chunks.txt", import.meta.url)
      const [response] = yield* Aggregate.responses(decodeURIComponent(path.pathname))
      assert.strictEqual(response!.finishReason, "tool_calls")
      expect(response!.message.toolCalls.map((call) => [call.callId, call.name, call.arguments])).toStrictEqual([
        ["call_snap_fc_1", "get_weather", "{\"city\":\"Paris\"}"]
      ])
      assert.strictEqual(response!.text, "Let me check the weather.")
    }).pipe(Effect.provide(NodeContext.layer)))

  const bodies = readdirSync(fixturePath("responses-json")).filter((name) => !name.includes("error"))
  it.effect("every non-streaming Response JSON body gives the same array shape as fromResponse", () =>
    Effect.gen(function*() {
      assert.isAtLeast(bodies.length, 10)
      for (const name of bodies) {
        const path = fixturePath(`responses-json/${name}`)
        const responses = yield* Aggregate.responses(path)
        const expected = yield* ResponsesOutput.fromResponse(JSON.parse(readFileSync(path, "utf8")))
        expect(encodeResponses(responses)).toStrictEqual(encodeResponses([expected]))
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("an HTTP error body, an error event or an empty file fail with one line and no responses", () =>
    Effect.gen(function*() {
      const body = yield* Effect.flip(Aggregate.responses(fixturePath("responses-json/pai-error-400-model-not-found.json")))
      assert.include(body.message, "an error body, not a response")
      const event = yield* Effect.flip(
        Aggregate.responses(fixturePath("responses-sse/vai-openai-error-event-response-failed.chunks.txt"))
      )
      assert.include(event.message, "insufficient_quota")
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      yield* fs.writeFileString(`${dir}/empty.sse`, "")
      const empty = yield* Effect.flip(Aggregate.responses(`${dir}/empty.sse`))
      assert.strictEqual(empty.message, `${dir}/empty.sse: the capture is empty`)
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)))
})

describe("what the input is", () => {
  it.scoped("a line-JSON capture whose first event is over 1 MiB is read as a capture", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const lines = readFileSync(fixturePath("responses-sse/vai-azure-text.chunks.txt"), "utf8").split("\n")
      const first = JSON.parse(lines[0]!) as { response: Record<string, unknown> }
      first.response.instructions = "x".repeat(2 * 1024 * 1024)
      lines[0] = JSON.stringify(first)
      const file = `${dir}/huge-first.chunks.txt`
      yield* fs.writeFileString(file, lines.join("\n"))
      const responses = yield* Aggregate.responses(file)
      assert.strictEqual(responses.length, 1)
      const expected = yield* Aggregate.responses(fixturePath("responses-sse/vai-azure-text.chunks.txt"))
      assert.strictEqual(responses[0]!.text, expected[0]!.text)
      // over the bound: the decoder's one-line error, as decode gives it
      const tooLarge = yield* Effect.flip(Aggregate.responses(file, { maxEventSize: 1024 * 1024 }))
      assert.strictEqual(tooLarge.message, `${file}:1: malformed output (line 1): an event exceeds 1048576 characters`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a first event whose type comes after a huge field is still a capture, bounded", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const file = `${dir}/late-type.chunks.txt`
      yield* fs.writeFileString(file, `{"padding":"${"y".repeat(200_000)}","type":"response.created"}\n`)
      const error = yield* Effect.flip(Aggregate.responses(file, { maxEventSize: 100_000 }))
      assert.include(error.message, "an event exceeds 100000 characters")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("decode of a Response JSON body points to aggregate", () =>
    Effect.gen(function*() {
      const path = fixturePath("responses-json/pai-gpt4o-file-search-with-results.json")
      const { error, text } = yield* decodeLines(path)
      assert.strictEqual(text, "")
      assert.include(error!.message, "a JSON body")
      assert.include(error!.message, "effect-responses aggregate")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a Chat Completions capture without --protocol fails with the hint, for decode and aggregate", () =>
    Effect.gen(function*() {
      const hint = "this looks like a Chat Completions capture: pass --protocol chat-completions"
      for (const name of ["opy-chat-gpt4o-parallel-tool-calls.sse", "vai-chat-azure-model-router.chunks.txt"]) {
        const path = fixturePath(`chat-sse/${name}`)
        const decoded = yield* decodeLines(path)
        assert.strictEqual(decoded.error?.message, `${path}: ${hint}`)
        const aggregated = yield* Effect.flip(Aggregate.responses(path))
        assert.strictEqual(aggregated.message, `${path}: ${hint}`)
      }
      const responses = fixturePath("responses-sse/vai-azure-text.chunks.txt")
      const wrong = yield* Effect.flip(Aggregate.responses(responses, { protocol: "chat-completions" }))
      assert.include(wrong.message, "this looks like a Responses capture")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("--protocol chat-completions", () => {
  const chatCaptures = readdirSync(fixturePath("chat-sse"))
  it.effect("aggregate: every chat capture (raw SSE or line-JSON) gives the text and tool calls ChatCapture reads", () =>
    Effect.gen(function*() {
      for (const name of chatCaptures) {
        const path = fixturePath(`chat-sse/${name}`)
        const capture = yield* ChatCapture.load(path)
        const responses = yield* Aggregate.responses(path, { protocol: "chat-completions" })
        assert.strictEqual(responses.length, capture.responses.length, name)
        responses.forEach((response, i) => {
          const recorded = capture.responses[i]!
          assert.strictEqual(response.text, ChatCapture.text(recorded), name)
          expect(
            response.message.parts.flatMap((p) => p.type === "tool_call" ? [[p.name, p.arguments]] : [])
          ).toStrictEqual(ChatCapture.toolCalls(recorded).map((c) => [c.name, c.arguments]))
        })
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("aggregate reads a chat.completion JSON body", () =>
    Effect.gen(function*() {
      const responses = yield* Aggregate.responses(fixturePath("chat-json/pai-chat-gpt4o-tool-call.json"), {
        protocol: "chat-completions"
      })
      assert.strictEqual(responses.length, 1)
      assert.strictEqual(responses[0]!.finishReason, "tool_calls")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("decode: the StreamParts of a line-JSON chat capture; a malformed line is named by its own number", () =>
    Effect.gen(function*() {
      const path = fixturePath("chat-sse/vai-chat-openai-text-usage.chunks.txt")
      const { error, text } = yield* decodeLines(path, { protocol: "chat-completions" })
      assert.isUndefined(error)
      const elements = text.trim().split("\n").map((line) => JSON.parse(line) as { type: string })
      assert.strictEqual(elements[0]!.type, "response_started")
      assert.strictEqual(elements.at(-1)!.type, "response_finished")
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const lines = readFileSync(path, "utf8").split("\n")
      lines.splice(1, 0, "", "\r")
      lines[4] = "{\"id\": "
      const file = `${dir}/broken.chunks.txt`
      yield* fs.writeFileString(file, lines.join("\n"))
      const broken = yield* decodeLines(file, { protocol: "chat-completions" })
      assert.strictEqual(broken.error?.line, 5)
      assert.match(broken.error!.message, new RegExp(`^${file}:5: malformed output`))
    }).pipe(Effect.provide(NodeContext.layer)))
})
