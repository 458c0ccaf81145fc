/**
 * Tracing and secrets: one span per model call with the OpenTelemetry GenAI attributes, the token-usage
 * and duration metrics, message content only when asked for, and the API key in none of errors, logs or
 * span attributes. Bodies are recorded fixtures (pydantic-ai, MIT; vercel/ai, Apache-2.0: see
 * `fixtures/SOURCES.md`).
 */
import { LanguageModel, Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { RecordingTracer } from "@effect-responses/testing"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Fiber from "effect/Fiber"
import type * as Tracer from "effect/Tracer"
import { MULTISTEP, readFixture } from "./fixtures.js"
import { payloadsOf, sseText } from "./utils.js"

const API_KEY = "sk-test-tracing-secret-9876543210"

/** Runs `effect` with a tracer that records every span it starts. */
const withSpans = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { spans, tracer } = yield* RecordingTracer.make
    const result = yield* Effect.either(Effect.withTracer(effect, tracer))
    return { result, spans }
  })

const attributesOf = (span: Tracer.Span): Record<string, unknown> => Object.fromEntries(span.attributes)

const model = (
  answers: ReadonlyArray<{ readonly status?: number; readonly body: string; readonly contentType?: string }>,
  options: ResponsesLanguageModel.Options,
  client: ResponsesClient.Options = {}
) => {
  let count = 0
  const http = HttpClient.make((request) =>
    Effect.sync(() => {
      const answer = answers[Math.min(count++, answers.length - 1)]!
      return HttpClientResponse.fromWeb(
        request,
        new Response(answer.body, { status: answer.status ?? 200, headers: { "content-type": answer.contentType ?? "application/json" } })
      )
    })
  )
  return ResponsesLanguageModel.layer(options).pipe(
    Layer.provide(ResponsesClient.layer(client)),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, http))
  )
}

const generate = (prompt: Prompt.Prompt) => Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(prompt))

describe("ResponsesClient tracing", () => {
  it.effect("generate: a `chat {model}` client span with the GenAI request and response attributes", () =>
    Effect.gen(function*() {
      const layer = model([{ body: readFixture("responses-json/pai-gpt4o-text.json") }], {
        model: "gpt-4o",
        temperature: 0.3,
        maxOutputTokens: 100
      })
      const { result, spans } = yield* withSpans(generate(Prompt.user("What is the capital of France?")).pipe(Effect.provide(layer)))
      assert.isTrue(result._tag === "Right")
      const span = spans.find((s) => s.name === "chat gpt-4o")!
      assert.strictEqual(span.kind, "client")
      expect(attributesOf(span)).toStrictEqual({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.request.temperature": 0.3,
        "gen_ai.request.max_tokens": 100,
        "server.address": "api.openai.com",
        "server.port": 443,
        "gen_ai.response.id": "resp_68c2e8c147ac819491bcd667055eadbc02e845978fbbb592",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": 14,
        "gen_ai.usage.output_tokens": 8
      })
      assert.strictEqual(spans.filter((s) => s.name.startsWith("chat ")).length, 1)
    }))

  it.effect("stream: the same span, annotated from the stream's lifecycle elements", () =>
    Effect.gen(function*() {
      const layer = model([{ body: sseText(payloadsOf(MULTISTEP).slice(0, 56)), contentType: "text/event-stream" }], {
        model: "gpt-5.1-codex-max"
      })
      const { spans } = yield* withSpans(
        Effect.flatMap(LanguageModel.LanguageModel, (lm) => Stream.runDrain(lm.stream(Prompt.user("go")))).pipe(Effect.provide(layer))
      )
      const attributes = attributesOf(spans.find((s) => s.name === "chat gpt-5.1-codex-max")!)
      expect(attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-5.1-codex-max",
        "gen_ai.response.id": "resp_01830d662ab3856501693c321345c88190b0de00f3b9975691",
        "gen_ai.response.model": "gpt-5.1-codex-max",
        "gen_ai.response.finish_reasons": ["tool_calls"]
      })
      assert.isNumber(attributes["gen_ai.usage.input_tokens"])
      assert.isNumber(attributes["gen_ai.usage.output_tokens"])
    }))

  it.effect("message content is recorded only with recordContent: true", () =>
    Effect.gen(function*() {
      const prompt = Prompt.make([...Prompt.system("Be brief.").messages, Prompt.userMessage("What is the capital of France?")])
      const body = readFixture("responses-json/pai-gpt4o-text.json")
      const off = yield* withSpans(generate(prompt).pipe(Effect.provide(model([{ body }], { model: "gpt-4o" }))))
      const offAttributes = JSON.stringify(off.spans.map(attributesOf))
      assert.notInclude(offAttributes, "capital of France")
      assert.notInclude(offAttributes, "Be brief.")
      assert.notInclude(offAttributes, "gen_ai.input.messages")

      const on = yield* withSpans(
        generate(prompt).pipe(Effect.provide(model([{ body }], { model: "gpt-4o" }, { recordContent: true })))
      )
      const attributes = attributesOf(on.spans.find((s) => s.name === "chat gpt-4o")!)
      assert.strictEqual(attributes["gen_ai.system_instructions"], "Be brief.")
      assert.include(String(attributes["gen_ai.input.messages"]), "What is the capital of France?")
      assert.include(String(attributes["gen_ai.output.messages"]), "The capital of France is Paris.")
    }))

  it.effect("token usage and duration metrics, tagged with the models", () =>
    Effect.gen(function*() {
      // A model name of its own keeps this test's metric series apart from the other tests'.
      const layer = model([{ body: readFixture("responses-json/pai-gpt4o-text.json") }], { model: "gpt-4o-metrics" })
      const fiber = yield* Effect.fork(generate(Prompt.user("hi")).pipe(Effect.provide(layer)))
      yield* Fiber.join(fiber)
      const labels = [
        MetricLabel.make("gen_ai.operation.name", "chat"),
        MetricLabel.make("gen_ai.provider.name", "openai"),
        MetricLabel.make("gen_ai.request.model", "gpt-4o-metrics"),
        MetricLabel.make("gen_ai.response.model", "gpt-4o-2024-08-06")
      ]
      const input = yield* Metric.value(
        Metric.taggedWithLabels(ResponsesClient.tokenUsage, [...labels, MetricLabel.make("gen_ai.token.type", "input")])
      )
      const output = yield* Metric.value(
        Metric.taggedWithLabels(ResponsesClient.tokenUsage, [...labels, MetricLabel.make("gen_ai.token.type", "output")])
      )
      expect([input.count, input.sum, output.count, output.sum]).toStrictEqual([1, 14, 1, 8])
      const duration = yield* Metric.value(Metric.taggedWithLabels(ResponsesClient.operationDuration, labels))
      assert.strictEqual(duration.count, 1)
    }))

  it.effect("streamed calls: the metrics carry the fiber's own metric labels too, call after call; a failure is tagged error.type", () =>
    Effect.gen(function*() {
      const stream = { body: sseText(payloadsOf(MULTISTEP).slice(0, 56)), contentType: "text/event-stream" }
      const layer = model([stream, stream, { status: 400, body: `{"error":{"message":"bad","type":"invalid_request_error"}}` }], {
        model: "codex-metrics-labels"
      })
      const call = Effect.flatMap(LanguageModel.LanguageModel, (lm) => Stream.runDrain(lm.stream(Prompt.user("go"))))
      const failed = yield* Effect.gen(function*() {
        yield* call
        yield* call
        return yield* Effect.flip(call)
      }).pipe(Effect.tagMetrics("team", "search"), Effect.provide(layer))
      assert.strictEqual(failed._tag, "HttpError")
      const request = [
        MetricLabel.make("gen_ai.operation.name", "chat"),
        MetricLabel.make("gen_ai.provider.name", "openai"),
        MetricLabel.make("gen_ai.request.model", "codex-metrics-labels")
      ]
      const labels = [...request, MetricLabel.make("gen_ai.response.model", "gpt-5.1-codex-max")]
      const team = MetricLabel.make("team", "search")
      const input = yield* Metric.value(
        Metric.taggedWithLabels(ResponsesClient.tokenUsage, [...labels, MetricLabel.make("gen_ai.token.type", "input"), team])
      )
      const duration = yield* Metric.value(Metric.taggedWithLabels(ResponsesClient.operationDuration, [...labels, team]))
      const failure = yield* Metric.value(
        Metric.taggedWithLabels(ResponsesClient.operationDuration, [...request, MetricLabel.make("error.type", "HttpError"), team])
      )
      const untagged = yield* Metric.value(Metric.taggedWithLabels(ResponsesClient.operationDuration, labels))
      expect([input.count, duration.count, failure.count, untagged.count]).toStrictEqual([2, 2, 1, 0])
    }))

  it.effect("stream with no tracer installed: untraced unless inside a span, the metrics recorded either way", () =>
    Effect.gen(function*() {
      const sent: Array<Record<string, string>> = []
      const http = HttpClient.make((request) =>
        Effect.sync(() => {
          sent.push({ ...request.headers })
          return HttpClientResponse.fromWeb(
            request,
            new Response(sseText(payloadsOf(MULTISTEP).slice(0, 56)), { headers: { "content-type": "text/event-stream" } })
          )
        })
      )
      const layer = ResponsesLanguageModel.layer({ model: "codex-untraced" }).pipe(
        Layer.provide(ResponsesClient.layer()),
        Layer.provide(Layer.succeed(HttpClient.HttpClient, http))
      )
      const call = Effect.flatMap(LanguageModel.LanguageModel, (lm) => Stream.runDrain(lm.stream(Prompt.user("go"))))
      // Effect's own tracer (none installed): no span around the call, so none of its own nor the HttpClient's,
      // and no trace of nothing recorded sent on; inside a span, its trace goes with the request
      yield* Effect.provide(call, layer)
      const outer = yield* Effect.provide(Effect.withSpan(Effect.zipRight(call, Effect.currentSpan), "outer"), layer)
      assert.strictEqual(sent.length, 2)
      assert.notProperty(sent[0], "traceparent")
      assert.notProperty(sent[0], "b3")
      assert.include(sent[1]!["traceparent"], outer.traceId)
      const labels = [
        MetricLabel.make("gen_ai.operation.name", "chat"),
        MetricLabel.make("gen_ai.provider.name", "openai"),
        MetricLabel.make("gen_ai.request.model", "codex-untraced"),
        MetricLabel.make("gen_ai.response.model", "gpt-5.1-codex-max")
      ]
      const duration = yield* Metric.value(Metric.taggedWithLabels(ResponsesClient.operationDuration, labels))
      const input = yield* Metric.value(
        Metric.taggedWithLabels(ResponsesClient.tokenUsage, [...labels, MetricLabel.make("gen_ai.token.type", "input")])
      )
      expect([duration.count, input.count]).toStrictEqual([2, 2])
    }))
})

describe("the API key", () => {
  it.effect("is in no error, log line or span attribute, through retries and failures", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => {
        logs.push(JSON.stringify(message))
      })
      const layer = model(
        [
          { status: 503, body: "Service Unavailable" },
          { status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${API_KEY}.`, type: "invalid_request_error", param: null, code: "invalid_api_key" } }) }
        ],
        { model: "gpt-4o" },
        { apiKey: Redacted.make(API_KEY) }
      )
      const fiber = yield* Effect.fork(
        withSpans(generate(Prompt.user("hi")).pipe(Effect.provide(layer))).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
          Logger.withMinimumLogLevel(LogLevel.Debug)
        )
      )
      yield* TestClock.adjust("10 seconds")
      const { result, spans } = yield* Fiber.join(fiber)
      assert.isTrue(result._tag === "Left")
      const error = result._tag === "Left" ? result.left : undefined
      assert.include(String(error), "Incorrect API key provided: [redacted].")
      assert.strictEqual(logs.length, 1)
      assert.include(logs[0]!, "HTTP 503")
      const http = spans.filter((s) => s.name.startsWith("http.client"))
      assert.strictEqual(http.length, 2)
      // The HttpClient span names the authorization header, with its value redacted.
      assert.isTrue(http.every((s) => s.attributes.has("http.request.header.authorization")))
      for (const rendered of [
        String(error),
        JSON.stringify(error),
        error instanceof Error ? error.message : "",
        ...logs,
        JSON.stringify(spans.map(attributesOf)),
        JSON.stringify(spans.map((s) => String(s.attributes.get("http.request.header.authorization"))))
      ]) {
        assert.notInclude(rendered, API_KEY)
      }
    }))
})
