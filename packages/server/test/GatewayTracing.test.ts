/**
 * Spans through the gateway: with a tracer installed every streamed request is traced (the platform's
 * server span, `Gateway.createResponse`, the upstream client's spans, trace headers sent upstream); with
 * none, a request without trace context makes no spans and sends no trace headers, and one with a
 * `traceparent` has its trace continued upstream.
 */
import { RecordingTracer } from "@effect-responses/testing"
import { describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import type { IncomingHttpHeaders } from "node:http"
import { finishChunks, type Handler, sse, textChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, parseSse, post } from "./utils.js"

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`

/** The scripted answer, recording the headers of each upstream request. */
const recording = (headers: Array<IncomingHttpHeaders>): Handler => (request, response, body) => {
  headers.push(request.headers)
  sse(textChunk("Hello"), finishChunks())(request, response, body)
}

/**
 * Streams one request through a gateway served with `tracer` (or none), with `headers`; `client`, the
 * upstream's `HttpClient`.
 */
const streamed = (requestHeaders: Record<string, string>, tracer?: Tracer.Tracer, client?: Layer.Layer<HttpClient.HttpClient>) => {
  const upstreamHeaders: Array<IncomingHttpHeaders> = []
  const run = withScriptedGateway([recording(upstreamHeaders)], client === undefined ? {} : { client }, (url) =>
    post(`${url}/responses`, { model: "m", input: "hi", stream: true }, requestHeaders))
  return Effect.map(tracer === undefined ? run : Effect.withTracer(run, tracer), (answer) => {
    expect(answer.status).toBe(200)
    checkLifecycle(parseSse(answer.text))
    expect(upstreamHeaders).toHaveLength(1)
    return upstreamHeaders[0]!
  })
}

describe("Gateway tracing", () => {
  it.live("with a tracer installed, a request is traced and its trace sent upstream", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* RecordingTracer.make
      const headers = yield* streamed({}, tracer)
      const names = spans.map((span) => span.name)
      expect(names).toContain("http.server POST")
      expect(names).toContain("Gateway.createResponse")
      expect(names).toContain("ChatCompletionsClient.createStream")
      expect(names).toContain("http.client POST")
      const create = spans.find((span) => span.name === "Gateway.createResponse")!
      expect(create.attributes.get("gen_ai.request.model")).toBe("m")
      const server = spans.find((span) => span.name === "http.server POST")!
      expect(headers.traceparent).toMatch(new RegExp(`^00-${server.traceId}-[0-9a-f]{16}-01$`))
    }))

  it.live("with no tracer, a request without trace context sends no trace headers upstream", () =>
    Effect.gen(function*() {
      const headers = yield* streamed({})
      expect(headers.traceparent).toBeUndefined()
      expect(headers.b3).toBeUndefined()
    }))

  it.live("with no tracer, a request without trace context calls the upstream with no current span", () =>
    Effect.gen(function*() {
      // what the upstream's client runs in: a no-op span is a current span too, which the client would take
      // for a trace to continue
      const seen: Array<Option.Option<Tracer.Span>> = []
      const client = Layer.effect(
        HttpClient.HttpClient,
        Effect.map(HttpClient.HttpClient, HttpClient.tapRequest(() => Effect.map(Effect.option(Effect.currentSpan), (span) => seen.push(span))))
      ).pipe(Layer.provide(NodeHttpClient.layerUndici))
      yield* streamed({}, undefined, client)
      expect(seen).toHaveLength(1)
      expect(Option.isNone(seen[0]!)).toBe(true)
    }))

  it.live("with no tracer, a request with a traceparent has its trace continued upstream", () =>
    Effect.gen(function*() {
      const headers = yield* streamed({ traceparent: TRACEPARENT })
      expect(headers.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`))
      expect(headers.traceparent).not.toBe(TRACEPARENT)
    }))
})
