/**
 * A scripted Chat Completions upstream on a loopback port: each request is answered by the next handler of
 * the script (the last one repeats), with raw `node:http`, so that a test can stall, break off, or answer
 * anything at all. It records each request's body and whether the gateway closed the connection.
 */
import { Gateway, type ResponseStore, Upstream } from "@effect-responses/server"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { loopback, serverUrl } from "./utils.js"

/** One request the upstream received: its body parsed and as text, and a promise settled when its connection closed. */
export interface Received {
  readonly body: Record<string, unknown>
  readonly text: string
  readonly closed: Promise<void>
}

/** Answers one request; `body` is the parsed request body. */
export type Handler = (request: IncomingMessage, response: ServerResponse, body: Record<string, unknown>) => void

/** A `chat.completion.chunk` whose choice 0 has `delta` (and `finish_reason`), framed as an SSE `data:` line. */
export const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${
    JSON.stringify({
      id: "chatcmpl-s",
      object: "chat.completion.chunk",
      created: 0,
      model: "scripted-model",
      choices: [{ index: 0, delta, finish_reason: finish }]
    })
  }\n\n`

/** A `chat.completion.chunk` with text `content` (choice 0); with `finish`, an empty delta finishing the choice. */
export const textChunk = (content: string, finish: string | null = null): string =>
  chunk(finish === null ? { role: "assistant", content } : {}, finish)

/** A `chat.completion.chunk` with reasoning text (`reasoning_content`, as DeepSeek streams it; choice 0). */
export const reasoningChunk = (text: string): string => chunk({ role: "assistant", reasoning_content: text })

/** A `chat.completion.chunk` with one tool call fragment (choice 0). */
export const toolChunk = (call: { id?: string; name?: string; arguments: string; index?: number }): string =>
  chunk({
    tool_calls: [{
      index: call.index ?? 0,
      ...(call.id === undefined ? {} : { id: call.id, type: "function" }),
      function: { ...(call.name === undefined ? {} : { name: call.name }), arguments: call.arguments }
    }]
  })

/** The end of a stream: a finish chunk and `[DONE]`. */
export const finishChunks = (reason = "stop"): string => `${textChunk("", reason)}data: [DONE]\n\n`

/** A handler streaming `frames` (SSE text) and ending the response. */
export const sse = (...frames: ReadonlyArray<string>): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  for (const frame of frames) response.write(frame)
  response.end()
}

/** A handler answering the whole `chat.completion` with the given assistant message. */
export const completion = (message: Record<string, unknown>, finish = "stop"): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify({
    id: "chatcmpl-w",
    object: "chat.completion",
    created: 0,
    model: "scripted-model",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }
  }))
}

/** The scripted upstream as a scoped resource: its base URL and the requests it received. */
export const scriptedUpstream = (script: ReadonlyArray<Handler>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ baseUrl: string; received: Array<Received>; server: ReturnType<typeof createServer> }>((resolve) => {
        const received: Array<Received> = []
        const server = createServer((request, response) => {
          const chunks: Array<Buffer> = []
          request.on("data", (chunk: Buffer) => chunks.push(chunk))
          request.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            const body = text === "" ? {} : JSON.parse(text) as Record<string, unknown>
            const closed = new Promise<void>((done) => response.on("close", () => done()))
            received.push({ body, text, closed })
            const handler = script[Math.min(received.length - 1, script.length - 1)]!
            handler(request, response, body)
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ baseUrl: `http://127.0.0.1:${port}/v1`, received, server })
        })
      })
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

/**
 * Runs `body` with the gateway (`options`) over the Chat Completions upstream (`upstream` options) at the
 * scripted server answering with `script`; `body` gets the gateway's base URL and the received requests.
 */
export const withScriptedGateway = <A, E, R>(
  script: ReadonlyArray<Handler>,
  options: {
    readonly gateway?: Gateway.Options
    readonly upstream?: Omit<Upstream.ChatCompletionsOptions, "baseUrl">
    /** a `ResponseStore` for the gateway (stateless without) */
    readonly store?: Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError>
    /** the upstream's `HttpClient` (default undici's, `NodeHttpClient.layerUndici`) */
    readonly client?: Layer.Layer<HttpClient.HttpClient>
  },
  body: (url: string, received: ReadonlyArray<Received>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const upstream = yield* scriptedUpstream(script)
    return yield* Effect.gen(function*() {
      const url = yield* serverUrl
      return yield* body(`${url}/v1`, upstream.received)
    }).pipe(
      Effect.provide(
        Gateway.layer(options.gateway ?? {}).pipe(
          Layer.provide(Upstream.chatCompletions({ baseUrl: upstream.baseUrl, ...options.upstream })),
          Layer.provide(options.store ?? Layer.empty),
          Layer.provide(options.client ?? NodeHttpClient.layerUndici),
          Layer.provideMerge(loopback)
        )
      )
    )
  }).pipe(Effect.scoped)
