/**
 * The test layers over the recorded four-step `gpt-5.1-codex-max` calculator session (vercel/ai,
 * Apache-2.0: see `fixtures/SOURCES.md`): replayed through the Responses client, recorded again through the
 * recording client, and a scripted fake model.
 */
import { AiError, LanguageModel, Message, ModelResponse, Part, Prompt, Usage } from "@effect-responses/core"
import { Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { FakeLanguageModel, RecordingHttpClient, ReplayHttpClient } from "@effect-responses/testing"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const MULTISTEP = fileURLToPath(
  new URL("../../../fixtures/responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt", import.meta.url)
)

const capture = Capture.parse(readFileSync(MULTISTEP, "utf8"), MULTISTEP)

const model = (client: HttpClient.HttpClient) =>
  ResponsesLanguageModel.layer({ model: "gpt-5.1-codex-max" }).pipe(
    Layer.provide(ResponsesClient.layer({ retry: { times: 0 } })),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
  )

const ids = (parts: ReadonlyArray<{ readonly type: string; readonly responseId?: string }>) =>
  parts.filter((part) => part.type === "response_started").map((part) => part.responseId)

describe("ReplayHttpClient", () => {
  it.effect("answers request N with recorded response N (streamed or whole) and keeps every request body", () =>
    Effect.gen(function*() {
      const recorded = yield* capture
      const replay = yield* ReplayHttpClient.make(recorded)
      const layer = model(replay.client)
      const first = yield* Stream.runCollect(LanguageModel.stream(Prompt.make("What is (12 + 7) * 3 * 10?"))).pipe(
        Effect.provide(layer)
      )
      assert.deepStrictEqual(ids(Array.from(first)), [recorded.responses[0]!.id])
      const second = yield* LanguageModel.generate(Prompt.make("go on")).pipe(Effect.provide(layer))
      assert.strictEqual(second.id, recorded.responses[1]!.id)
      assert.strictEqual(replay.requests.length, 2)
      expect(replay.requests[0]!.body).toMatchObject({ model: "gpt-5.1-codex-max", stream: true })
      expect(replay.requests[1]!.body).toMatchObject({ stream: false })
    }))

  it.effect("a request past the end of the capture fails with a 400 HttpError naming it", () =>
    Effect.gen(function*() {
      const recorded = yield* capture
      const replay = yield* ReplayHttpClient.make({ source: "one.sse", responses: recorded.responses.slice(0, 1) })
      const run = (prompt: string) => LanguageModel.generate(Prompt.make(prompt)).pipe(Effect.provide(model(replay.client)))
      yield* run("first")
      const error = yield* Effect.flip(run("second"))
      assert.instanceOf(error, AiError.HttpError)
      assert.strictEqual((error as AiError.HttpError).status, 400)
      assert.include(error.message, "request 2 has no recorded response")
    }))
})

describe("RecordingHttpClient", () => {
  it.effect("writes the streamed bodies that pass through, in order, as a capture that parses back the same", () =>
    Effect.gen(function*() {
      const recorded = yield* capture
      const path = join(mkdtempSync(join(tmpdir(), "recording-")), "session.sse")
      const replay = yield* ReplayHttpClient.make(recorded)
      const recording = yield* RecordingHttpClient.make(replay.client, path)
      const layer = model(recording)
      for (const prompt of ["one", "two"]) {
        yield* Stream.runDrain(LanguageModel.stream(Prompt.make(prompt))).pipe(Effect.provide(layer))
      }
      yield* LanguageModel.generate(Prompt.make("whole, not recorded")).pipe(Effect.provide(layer))
      const written = readFileSync(path, "utf8")
      assert.notInclude(written.toLowerCase(), "authorization")
      const again = yield* Capture.parse(written, path)
      assert.deepStrictEqual(again.responses.map((response) => response.id), recorded.responses.slice(0, 2).map((r) => r.id))
      assert.deepStrictEqual(
        again.responses.map((response) => response.events.map((event) => event.data)),
        recorded.responses.slice(0, 2).map((response) => response.events.map((event) => event.data))
      )
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("FakeLanguageModel", () => {
  const response = new ModelResponse.ModelResponse({
    id: "resp_fake",
    model: "fake",
    status: "completed",
    finishReason: "stop",
    usage: Usage.empty,
    message: new Message.AssistantMessage({
      parts: [new Part.ReasoningPart({ text: "thinking" }), new Part.TextPart({ text: "Paris" })]
    })
  })

  it.effect("answers the script in order across generate and stream, records every call, fails past the end", () =>
    Effect.gen(function*() {
      const refused = new AiError.HttpError({ status: 429, description: "slow down" })
      const fake = yield* FakeLanguageModel.make([response, refused, response])
      const run = <A, E>(effect: Effect.Effect<A, E, LanguageModel.LanguageModel>) =>
        Effect.provideService(effect, LanguageModel.LanguageModel, fake.service)
      assert.strictEqual((yield* run(LanguageModel.generate(Prompt.make("a")))).text, "Paris")
      assert.strictEqual(yield* Effect.flip(run(LanguageModel.generate(Prompt.make("b")))), refused)
      const parts = Array.from(yield* run(Stream.runCollect(LanguageModel.stream(Prompt.make("c"), { toolChoice: "none" }))))
      assert.deepStrictEqual(parts.map((part) => part.type), ["response_started", "part", "part", "response_finished"])
      const past = yield* Effect.flip(run(LanguageModel.generate(Prompt.make("d"))))
      assert.instanceOf(past, AiError.InvalidPrompt)
      assert.deepStrictEqual(fake.calls.map((call) => call.method), ["generate", "generate", "stream", "generate"])
      assert.strictEqual(fake.calls[2]!.options?.toolChoice, "none")
    }))
})
