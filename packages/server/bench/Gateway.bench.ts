/**
 * The gateway's cost per event, side by side in one run: a long upstream stream (the 303-chunk recorded
 * gpt-4.1-nano Chat stream of vercel/ai, Apache-2.0, see `fixtures/SOURCES.md`, with its content
 * deltas repeated to 5,000) read from a loopback Chat Completions server directly, and read through the
 * gateway as Responses SSE (about one event per upstream delta). Events per second through the gateway =
 * events / mean time of the gateway row; latency added per event = (gateway mean - upstream mean) / events.
 * The last row is the lifecycle encoder alone, without HTTP.
 */
import { Part, StreamPart, Usage } from "@effect-responses/core"
import { Gateway, ResponsesLifecycle, Upstream } from "@effect-responses/server"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { bench, describe } from "vitest"
import { loopback, readFixture, serverUrl } from "../test/utils.js"

const DELTAS = 5_000

const chunks = readFixture("chat-sse/vai-chat-openai-text-usage.chunks.txt").split("\n").filter((line) => line.trim() !== "")
const contentChunks = chunks.filter((line) => line.includes("\"content\":\"") && !line.includes("\"content\":\"\""))
const body: Array<string> = [chunks[0]!]
for (let i = 0; i < DELTAS; i++) body.push(contentChunks[i % contentChunks.length]!)
body.push(...chunks.slice(-2))
const sse = `${body.map((line) => `data: ${line}\n\n`).join("")}data: [DONE]\n\n`

const upstream = createServer((request, response) => {
  request.resume()
  request.on("end", () => {
    response.writeHead(200, { "content-type": "text/event-stream" })
    response.end(sse)
  })
})
await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", () => resolve()))
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`

const runtime = ManagedRuntime.make(
  Gateway.layer().pipe(
    Layer.provide(Upstream.chatCompletions({ baseUrl: upstreamUrl, retry: { times: 0 } })),
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provideMerge(loopback)
  )
)
const gatewayUrl = `${await runtime.runPromise(serverUrl)}/v1`

const request = { model: "gpt-4.1-nano", input: "Write a long story.", stream: true }
const readAll = async (url: string) => {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) })
  await response.arrayBuffer()
}

const parts: Array<StreamPart.StreamPart> = [new StreamPart.ResponseStarted({ responseId: "r", model: "m" })]
for (let i = 0; i < DELTAS; i++) {
  parts.push(new StreamPart.PartUpdate({ responseId: "r", outputIndex: 0, partial: true, part: new Part.TextPart({ text: "word " }) }))
}
parts.push(
  new StreamPart.PartUpdate({ responseId: "r", outputIndex: 0, partial: false, part: new Part.TextPart({ text: "" }) }),
  new StreamPart.ResponseFinished({ responseId: "r", status: "completed", finishReason: "stop", usage: Usage.empty })
)
const echo = { request: { echo: {}, namespacedTools: new Map() } }

describe(`gateway: a ${DELTAS}-delta upstream stream (about ${DELTAS + 10} Responses events)`, () => {
  bench("upstream alone: POST /v1/chat/completions, whole SSE body read", async () => {
    await readAll(`${upstreamUrl}/chat/completions`)
  })
  bench("through the gateway: POST /v1/responses (stream), whole SSE body read", async () => {
    await readAll(`${gatewayUrl}/responses`)
  })
  bench("lifecycle encoder alone (no HTTP): parts -> SSE text", () => {
    const encoder = ResponsesLifecycle.make({ responseId: "resp_1", createdAt: 0, model: "m", ...echo })
    const out: Array<ResponsesLifecycle.Event> = []
    encoder.start(out)
    for (const part of parts) encoder.push(part, out)
    ResponsesLifecycle.toSse(out)
  })
})
