/**
 * A loopback HTTP server answering each request with the next handler of a script (the last one repeats),
 * with raw `node:http`, for tests of what a client or a gateway does when its backend stalls, breaks off,
 * drops a connection, or answers anything at all. It records each request's body and whether its
 * connection closed. The helpers write Chat Completions answers (`chat.completion.chunk` frames, a whole
 * `chat.completion`), since that is the backend such tests usually stand in for.
 *
 * ```ts
 * const server = yield* ScriptedServer.make([
 *   ScriptedServer.sse(ScriptedServer.textChunk("Hel"), ScriptedServer.textChunk("lo"), ScriptedServer.finishChunks()),
 *   (request) => request.socket.destroy() // every later request: the connection dropped unanswered
 * ])
 * // point a client at server.baseUrl (`http://127.0.0.1:PORT/v1`), then read server.received
 * ```
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * One request the server received: its `body` parsed as JSON (`{}` when it is empty, not JSON, or not a
 * JSON object), its `text` as sent (UTF-8), and `closed`, a promise settled when its response closed (the
 * answer ended, or the connection was dropped by either side).
 *
 * @since 0.2.0
 * @category models
 */
export interface Received {
  readonly body: Record<string, unknown>
  readonly text: string
  readonly closed: Promise<void>
}

/**
 * Answers one request, called once its body was read whole; `body` is `Received.body`. It may answer,
 * stall, write part of an answer, or drop the connection (`request.socket.destroy()`).
 *
 * @since 0.2.0
 * @category models
 */
export type Handler = (request: IncomingMessage, response: ServerResponse, body: Record<string, unknown>) => void

/**
 * A running scripted server: `baseUrl` (`http://127.0.0.1:PORT/v1`) and `received`, the requests read so
 * far, in order.
 *
 * @since 0.2.0
 * @category models
 */
export interface ScriptedServer {
  readonly baseUrl: string
  readonly received: ReadonlyArray<Received>
}

/**
 * How the server keeps connections: `keepAliveTimeout`, in milliseconds, how long an idle kept-alive
 * connection stays open (default Node's, 5 seconds; a test of connection reuse sets it longer, so that the
 * server's own idle close cannot race the client's reuse).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly keepAliveTimeout?: number | undefined
}

/**
 * Starts a scripted server on a free loopback port: request `n` (from 1) is answered by `script[n - 1]`, or
 * by the last handler once the script is used up. Its connections are closed, and the server stopped, when
 * the scope closes.
 *
 * With an empty script, or when a handler throws, the request gets a 500 with a JSON body
 * `{"error": {"message": "ScriptedServer: …", "type": "scripted_server_error"}}` saying which (`request 1
 * has no handler: the server was made with an empty script`, `handler 2 of the script threw answering
 * request 2: …`), or its connection is dropped when the handler had already sent headers; the server keeps
 * serving (it crashed the process before, an uncaught exception in the request's listener).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (script: ReadonlyArray<Handler>, options: Options = {}): Effect.Effect<ScriptedServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: ReturnType<typeof createServer>; readonly scripted: ScriptedServer }>((resume) => {
      const received: Array<Received> = []
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          const body = parseObject(text)
          const closed = new Promise<void>((done) => response.on("close", () => done()))
          received.push({ body, text, closed })
          const number = received.length
          if (script.length === 0) {
            return answerFailure(response, `request ${number} has no handler: the server was made with an empty script`)
          }
          const index = Math.min(number - 1, script.length - 1)
          try {
            script[index]!(request, response, body)
          } catch (error) {
            answerFailure(
              response,
              `handler ${index + 1} of the script threw answering request ${number}: ${error instanceof Error ? error.message : String(error)}`
            )
          }
        })
      })
      if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, scripted: { baseUrl: `http://127.0.0.1:${port}/v1`, received } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ scripted }) => scripted))

/**
 * The server's own failure (no handler, or one that threw): a 500 whose JSON body's `error.message` says
 * which (`type` `scripted_server_error`), or, when the handler had already sent headers, the connection
 * dropped (no status can follow them). The server goes on serving the next requests.
 */
const answerFailure = (response: ServerResponse, message: string): void => {
  if (response.headersSent) {
    response.destroy()
    return
  }
  response.writeHead(500, { "content-type": "application/json" })
  response.end(JSON.stringify({ error: { message: `ScriptedServer: ${message}`, type: "scripted_server_error" } }))
}

/** A request body as a JSON object, `{}` when it is none. */
const parseObject = (text: string): Record<string, unknown> => {
  if (text === "") return {}
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

/**
 * A `chat.completion.chunk` (id `chatcmpl-s`, model `scripted-model`) whose choice 0 has `delta` and
 * `finish_reason` `finish`, framed as an SSE `data:` event (`data: {…}` and a blank line).
 *
 * @since 0.2.0
 * @category chat completions
 */
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

/**
 * A `chat.completion.chunk` with text `content` (choice 0, `role: "assistant"`); with `finish`, an empty
 * delta finishing the choice with that reason instead.
 *
 * @since 0.2.0
 * @category chat completions
 */
export const textChunk = (content: string, finish: string | null = null): string =>
  chunk(finish === null ? { role: "assistant", content } : {}, finish)

/**
 * A `chat.completion.chunk` with reasoning text (`reasoning_content`, as DeepSeek streams it; choice 0).
 *
 * @since 0.2.0
 * @category chat completions
 */
export const reasoningChunk = (text: string): string => chunk({ role: "assistant", reasoning_content: text })

/**
 * A `chat.completion.chunk` with one tool call fragment (choice 0): `index` (default 0), and `id`, `type:
 * "function"` and the function's `name` when given, as a server streams a call's first fragment.
 *
 * @since 0.2.0
 * @category chat completions
 */
export const toolChunk = (call: { id?: string; name?: string; arguments: string; index?: number }): string =>
  chunk({
    tool_calls: [{
      index: call.index ?? 0,
      ...(call.id === undefined ? {} : { id: call.id, type: "function" }),
      function: { ...(call.name === undefined ? {} : { name: call.name }), arguments: call.arguments }
    }]
  })

/**
 * The end of a Chat Completions stream: a chunk finishing choice 0 with `reason` (default `stop`), then
 * `data: [DONE]`.
 *
 * @since 0.2.0
 * @category chat completions
 */
export const finishChunks = (reason = "stop"): string => `${textChunk("", reason)}data: [DONE]\n\n`

/**
 * A handler answering 200 `text/event-stream` with `frames` (SSE text, each written as it is) and ending
 * the response.
 *
 * @since 0.2.0
 * @category handlers
 */
export const sse = (...frames: ReadonlyArray<string>): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  for (const frame of frames) response.write(frame)
  response.end()
}

/**
 * The JSON text of a whole `chat.completion` (id `chatcmpl-w`, model `scripted-model`) whose choice 0 is the
 * assistant `message` (its fields beside `role`) with `finish_reason` `finish` (default `stop`), and usage
 * 5 + 3 = 8 tokens: the body `completion` answers with, for an upstream of one's own.
 *
 * @since 0.2.0
 * @category chat completions
 */
export const completionText = (message: Record<string, unknown>, finish = "stop"): string =>
  JSON.stringify({
    id: "chatcmpl-w",
    object: "chat.completion",
    created: 0,
    model: "scripted-model",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }
  })

/**
 * A handler answering 200 with a whole `chat.completion`: `completionText(message, finish)`.
 *
 * @since 0.2.0
 * @category handlers
 */
export const completion = (message: Record<string, unknown>, finish = "stop"): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.end(completionText(message, finish))
}
