/**
 * The gateway's code paths run once before it listens: a fresh process compiles each function at its first
 * call, so the first request of a fresh gateway held the event loop for 50-130 ms of compiling (request
 * decoding, the Chat Completions request, undici's first request and its HTTP parser, a WebAssembly module
 * compiled on the first connection, the stream's decoding and events), stalling every other request
 * meanwhile. Here one streamed and one whole request, shaped like a coding agent's (messages, a reasoning
 * item, a function call and its output, a function tool), go over loopback HTTP through a gateway of the
 * same options to a Chat Completions upstream of its own, both in this process and closed afterwards:
 * nothing reaches the real upstream, nothing is logged, and a failure only means a colder first request.
 *
 * Then one full garbage collection that gives memory back to the system (`releaseMemory`): the idle
 * gateway's RSS was 85-123 MiB from one start to the next (87 most often), 84-85 MiB with it
 * (packages/bench/RESULTS.md, "the gateway's CPU per request, round 4").
 *
 * @internal
 */
import { Gateway, Upstream } from "@effect-responses/server"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

const chunk = (delta: object, finish: string | null = null): string =>
  `data: ${
    JSON.stringify({
      id: "chatcmpl-warm-up",
      object: "chat.completion.chunk",
      created: 0,
      model: "warm-up",
      choices: [{ index: 0, delta, finish_reason: finish }]
    })
  }\n\n`

/** The upstream's answer: a text, then a tool call (streamed), or the whole completion. */
const answer = (stream: boolean): string =>
  stream
    ? chunk({ role: "assistant", content: "ok" }) +
      chunk({ tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "read_file", arguments: "{\"path\":" } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: "\"a.ts\"}" } }] }) +
      chunk({}, "tool_calls") +
      `data: ${JSON.stringify({ id: "chatcmpl-warm-up", object: "chat.completion.chunk", created: 0, model: "warm-up", choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } })}\n\n` +
      "data: [DONE]\n\n"
    : JSON.stringify({
      id: "chatcmpl-warm-up",
      object: "chat.completion",
      created: 0,
      model: "warm-up",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 }
    })

const upstream = Effect.acquireRelease(
  Effect.async<Server>((resume) => {
    const server = createServer((request, response) => {
      let body = ""
      request.setEncoding("utf8")
      request.on("data", (piece: string) => (body += piece))
      request.on("end", () => {
        const stream = body.includes("\"stream\":true")
        response.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" })
        response.end(answer(stream))
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

const body = (stream: boolean): string =>
  JSON.stringify({
    model: "warm-up",
    stream,
    instructions: "Warm up.",
    tools: [{ type: "function", name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } }],
    input: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "Read a.ts." }] },
      { type: "reasoning", id: "rs_w", summary: [{ type: "summary_text", text: "Reading." }], encrypted_content: "gAAAA" },
      { type: "function_call", id: "fc_w", call_id: "call_0", name: "read_file", arguments: "{\"path\":\"a.ts\"}", status: "completed" },
      { type: "function_call_output", call_id: "call_0", output: "export const a = 1\n" },
      { type: "message", role: "assistant", id: "msg_w", status: "completed", content: [{ type: "output_text", text: "Done.", annotations: [] }] },
      { type: "message", role: "user", content: "Again." }
    ]
  })

/**
 * Runs the two requests (see the module doc) through a gateway with `options` (the real one's, keys
 * left out) served on a loopback port of its own, and over `httpClient`, the HTTP client layer the real
 * one uses. Never fails; at most 5 seconds.
 *
 * @internal
 */
export const warmUp = (options: Gateway.Options, httpClient: Layer.Layer<HttpClient.HttpClient>): Effect.Effect<void> =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* upstream
    const upstreamUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
    const context = yield* Layer.build(
      Gateway.layer({ ...options, apiKey: undefined, apiKeys: undefined }).pipe(
        Layer.provide(Upstream.chatCompletions({ baseUrl: upstreamUrl })),
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provideMerge(httpClient)
      )
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    const port = address._tag === "TcpAddress" ? address.port : 0
    const client = Context.get(context, HttpClient.HttpClient)
    for (const stream of [true, false]) {
      const response = yield* client.execute(
        HttpClientRequest.post(`http://127.0.0.1:${port}/v1/responses`).pipe(
          HttpClientRequest.bodyText(body(stream), "application/json")
        )
      )
      yield* response.text
    }
  })).pipe(
    Effect.timeout("5 seconds"),
    Effect.ignore,
    Logger.withMinimumLogLevel(LogLevel.None),
    Effect.zipRight(releaseMemory)
  )

/**
 * One full garbage collection of V8's "last resort" flavour, the one it runs under memory pressure: besides
 * the garbage of start-up and warm-up, it gives back the memory V8 keeps for reuse, which an ordinary
 * collection leaves resident (the compiler threads' memory of the warm-up's optimizations, up to 35 MiB
 * some starts: the idle RSS varied by that much). Its `gc` function is exposed to a context of its own
 * only (the flag is set back at once unless the process was started with it); about 60 ms once, before
 * the port is bound. Never fails: without it, the memory is only given back later, or not.
 */
const releaseMemory: Effect.Effect<void> = Effect.sync(() => {
  try {
    const exposed = (globalThis as { readonly gc?: unknown }).gc
    let gc = exposed
    if (typeof gc !== "function") {
      setFlagsFromString("--expose-gc")
      gc = runInNewContext("gc")
      setFlagsFromString("--no-expose-gc")
    }
    if (typeof gc === "function") gc({ type: "major", execution: "sync", flavor: "last-resort" })
  } catch {
    // an engine without the flag or the options: the memory stays until V8 gives it back
  }
})
