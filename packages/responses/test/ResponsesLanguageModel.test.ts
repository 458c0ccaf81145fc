/**
 * The `LanguageModel` layer over a fake `HttpClient` answering with recorded bodies (vercel/ai,
 * Apache-2.0; pydantic-ai, MIT: see `fixtures/SOURCES.md`).
 */
import { AiError, LanguageModel, type Part, Prompt, type StreamPart } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { MULTISTEP, readFixture } from "./fixtures.js"
import { bySlot, collectSettled, foldSlot, payloadsOf, sseText } from "./utils.js"

const tool = (name: string) =>
  new LanguageModel.ToolDefinition({ name, parameters: { type: "object", properties: {} }, strict: false })

const fake = (body: string, contentType: string) => {
  const requests: Array<unknown> = []
  const client = HttpClient.make((request: HttpClientRequest.HttpClientRequest) =>
    Effect.sync(() => {
      if (request.body._tag === "Uint8Array") requests.push(JSON.parse(new TextDecoder().decode(request.body.body)))
      return HttpClientResponse.fromWeb(request, new Response(body, { headers: { "content-type": contentType } }))
    })
  )
  const layer = ResponsesLanguageModel.layer({ model: "gpt-4o", tools: [tool("layer_tool"), tool("shared")] }).pipe(
    Layer.provide(ResponsesClient.layer()),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
  )
  return { requests, layer }
}

describe("ResponsesLanguageModel", () => {
  it.effect("generate sends stream: false with the call's tools merged over the layer's, and decodes the body", () =>
    Effect.gen(function*() {
      const http = fake(readFixture("responses-json/pai-gpt4o-two-parallel-function-calls.json"), "application/json")
      const response = yield* Effect.flatMap(LanguageModel.LanguageModel, (model) =>
        model.generate(Prompt.user("Where is London?"), { tools: [tool("shared"), tool("get_location")], toolChoice: "required" })).pipe(Effect.provide(http.layer))
      assert.strictEqual(response.finishReason, "tool_calls")
      assert.strictEqual(response.message.toolCalls.length, 2)
      const body = http.requests[0] as Record<string, unknown>
      assert.strictEqual(body.stream, false)
      assert.strictEqual(body.model, "gpt-4o")
      assert.strictEqual(body.tool_choice, "required")
      expect((body.tools as Array<{ name: string }>).map((t) => t.name)).toStrictEqual(["layer_tool", "shared", "get_location"])
    }))

  it.effect("stream sends stream: true and yields the decoded parts", () =>
    Effect.gen(function*() {
      const http = fake(sseText(payloadsOf(MULTISTEP).slice(0, 56)), "text/event-stream")
      const { elements, error } = yield* Effect.flatMap(LanguageModel.LanguageModel, (model) =>
        collectSettled(model.stream(Prompt.user("What is (12 + 7) * 3 * 10?")))).pipe(Effect.provide(http.layer))
      assert.isUndefined(error)
      const [reasoning, call] = bySlot(elements).map(foldSlot)
      assert.strictEqual(reasoning!.type, "reasoning")
      assert.strictEqual(call!.arguments, "{\"a\":12,\"b\":7,\"op\":\"add\"}")
      assert.strictEqual((http.requests[0] as Record<string, unknown>).stream, true)
    }))

  it.effect("stream of the recorded shell call: its response.shell_call_command events decode, and the call comes with its commands", () =>
    Effect.gen(function*() {
      // the first of the two responses of vai-openai-shell-call.chunks.txt (gpt-5.1 calling `shell`): the
      // events the openai SDK 6.x's responses.stream() throws on ("Unhandled response stream event")
      const payloads = payloadsOf("responses-sse/vai-openai-shell-call.chunks.txt")
      const first = payloads.slice(0, payloads.findIndex((payload) => payload.includes("\"response.completed\"")) + 1)
      expect(first.filter((payload) => payload.includes("\"response.shell_call_command.")).length).toBeGreaterThan(0)
      const http = fake(sseText(first), "text/event-stream")
      const { elements, error } = yield* Effect.flatMap(LanguageModel.LanguageModel, (model) =>
        collectSettled(model.stream(Prompt.user("List the files on my desktop"), {
          tools: [new LanguageModel.ClientToolDefinition({ name: "shell" })]
        }))).pipe(Effect.provide(http.layer))
      assert.isUndefined(error)
      const parts = bySlot(elements).map(foldSlot)
      const call = parts.find((part) => part.type === "shell_call") as Part.ShellCallPart | undefined
      expect(call?.commands).toStrictEqual(["ls -a ~/Desktop"])
      assert.strictEqual(call?.callId, "call_pbxjNs1tMJUahLZKAS9qLtvw")
      // the finish says a tool call is waiting
      const finish = elements.find((element) => element.type === "response_finished") as StreamPart.ResponseFinished | undefined
      assert.strictEqual(finish?.finishReason, "tool_calls")
    }))

  it.effect("an invalid prompt fails before any request", () =>
    Effect.gen(function*() {
      const http = fake("", "application/json")
      const error = yield* Effect.flatMap(LanguageModel.LanguageModel, (model) =>
        Stream.runDrain(model.stream(Prompt.user("hi"), { toolChoice: { tool: "missing" } }))).pipe(
          Effect.provide(http.layer),
          Effect.flip
        )
      assert.instanceOf(error, AiError.InvalidPrompt)
      assert.strictEqual(http.requests.length, 0)
    }))

  it.effect("generate fails with ResponseFailed when the body's status is failed", () =>
    Effect.gen(function*() {
      const failed = JSON.stringify({
        id: "resp_f",
        model: "gpt-4o",
        status: "failed",
        output: [],
        error: { code: "server_error", message: "The server had an error." }
      })
      const http = fake(failed, "application/json")
      const error = yield* Effect.flatMap(LanguageModel.LanguageModel, (model) => model.generate(Prompt.user("hi"))).pipe(
        Effect.provide(http.layer),
        Effect.flip
      )
      assert.instanceOf(error, AiError.ResponseFailed)
      assert.strictEqual((error as AiError.ResponseFailed).code, "server_error")
      assert.strictEqual((error as AiError.ResponseFailed).description, "The server had an error.")
    }))

  it("mergeCallOptions: call tools replace layer tools of the same name; the call's tool choice wins", () => {
    const merged = ResponsesLanguageModel.mergeCallOptions(
      { model: "m", tools: [tool("a"), tool("b")], toolChoice: "auto", temperature: 0 },
      { tools: [tool("b"), tool("c")], toolChoice: "none" }
    )
    expect(merged.tools?.map((t) => t.name)).toStrictEqual(["a", "b", "c"])
    assert.strictEqual(merged.toolChoice, "none")
    assert.strictEqual(merged.temperature, 0)
    const kept = ResponsesLanguageModel.mergeCallOptions({ model: "m", toolChoice: "required" }, {})
    assert.strictEqual(kept.toolChoice, "required")
  })

  it.effect("withOptions overrides the layer's options per call, for effects and streams; nested overrides merge", () =>
    Effect.gen(function*() {
      const http = fake(readFixture("responses-json/pai-gpt4o-text.json"), "application/json")
      const call = Effect.flatMap(LanguageModel.LanguageModel, (model) => model.generate(Prompt.user("hi")))
      yield* call.pipe(
        ResponsesLanguageModel.withOptions({ model: "gpt-5.1", reasoning: { effort: "high" }, metadata: { run: "1" } }),
        ResponsesLanguageModel.withOptions({ temperature: 0.7, maxOutputTokens: 64 }),
        Effect.provide(http.layer)
      )
      yield* call.pipe(Effect.provide(http.layer))
      const [overridden, plain] = http.requests as ReadonlyArray<Record<string, unknown>>
      expect([overridden!.model, overridden!.temperature, overridden!.max_output_tokens]).toStrictEqual(["gpt-5.1", 0.7, 64])
      expect(overridden!.reasoning).toStrictEqual({ effort: "high" })
      expect(overridden!.metadata).toStrictEqual({ run: "1" })
      expect([plain!.model, plain!.temperature, plain!.max_output_tokens]).toStrictEqual(["gpt-4o", undefined, undefined])

      const streamed = fake(sseText(payloadsOf(MULTISTEP).slice(0, 56)), "text/event-stream")
      yield* Effect.flatMap(LanguageModel.LanguageModel, (model) =>
        Stream.runDrain(model.stream(Prompt.user("hi")).pipe(ResponsesLanguageModel.withOptions({ topP: 0.5 })))).pipe(
          Effect.provide(streamed.layer)
        )
      assert.strictEqual((streamed.requests[0] as Record<string, unknown>).top_p, 0.5)
    }))

  it("mergeOptions: nested option objects merge one level deep; tools merge by name; undefined keeps the base", () => {
    const merged = ResponsesLanguageModel.mergeOptions(
      {
        model: "m",
        temperature: 0,
        reasoning: { effort: "low", summary: "auto" },
        text: { verbosity: "low" },
        metadata: { a: "1" },
        extraBody: { user: "u" },
        tools: [tool("a"), tool("b")]
      },
      {
        temperature: undefined,
        reasoning: { effort: "high" },
        text: { format: { type: "json" } },
        metadata: { b: "2" },
        extraBody: { top_logprobs: 1 },
        tools: [tool("b"), tool("c")],
        truncation: "disabled"
      }
    )
    expect(merged).toStrictEqual({
      model: "m",
      temperature: 0,
      reasoning: { effort: "high", summary: "auto" },
      text: { verbosity: "low", format: { type: "json" } },
      metadata: { a: "1", b: "2" },
      extraBody: { user: "u", top_logprobs: 1 },
      tools: [tool("a"), tool("b"), tool("c")],
      truncation: "disabled"
    })
  })
})
