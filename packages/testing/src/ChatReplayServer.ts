/**
 * A loopback stand-in for `POST /v1/chat/completions` that replays a chat capture, one recorded response
 * per request, and checks each request the way a stateless Chat Completions server needs it: a follow-up
 * request must hand back every earlier assistant turn (its text, and its `tool_calls` with their ids, names
 * and arguments) and one `tool` message per call id after it. Anything else gets a 400 in OpenAI's error
 * shape `{"error":{"message","type","param","code"}}`.
 *
 * As with `ReplayServer`, one server replays one recorded conversation: each time `layer` is built (each
 * `Effect.provide`) it starts afresh from recorded response 1, and a second call that does not continue the
 * conversation gets a 400 "request 2 must hand back the assistant message of response 1 …".
 *
 * The Chat Completions counterpart of the Responses `ReplayServer`; it runs on any `HttpServer` (the
 * application picks the platform, e.g. `NodeHttpServer.layer(createServer, { port: 0 })`).
 *
 * @since 0.1.0
 */
import * as ChatCapture from "@effect-responses/chat-completions/ChatCapture"
import { isObject, type JsonObject } from "@effect-responses/wire/Json"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as ReplayEndpoint from "./ReplayEndpoint.js"

/**
 * What the replay server was asked: the 0-based index of the recorded response it was checked against
 * (a rejected request does not use one up) and its JSON body.
 *
 * @since 0.1.0
 * @category models
 */
export type ReplayRequest = ReplayEndpoint.ReplayRequest

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The capture to replay, one recorded response per request. */
  readonly capture: ChatCapture.ChatCapture
  /** A further check of each request, after the built-in ones: what is wrong, or `Option.none()`. */
  readonly validate?: ((request: ReplayRequest) => Option.Option<string>) | undefined
}

/**
 * A running replay server: its base URL (`http://127.0.0.1:PORT/v1`) and the request bodies received so
 * far, in order.
 *
 * @since 0.1.0
 * @category models
 */
export type Service = ReplayEndpoint.Service

/**
 * @since 0.1.0
 * @category tags
 */
export class ChatReplayServer
  extends Context.Tag("@effect-responses/testing/ChatReplayServer")<ChatReplayServer, Service>()
{}

type Problem = ReplayEndpoint.Problem

const callOf = (call: unknown): { id: unknown; name: unknown; arguments: unknown } | undefined => {
  if (!isObject(call) || !isObject(call.function)) return undefined
  return { id: call.id, name: call.function.name, arguments: call.function.arguments }
}

/**
 * Checks that `body` is what a stateless client must send for recorded response `index`: the assistant
 * turns of the earlier responses in order (text equal; every recorded tool call present with its id, name
 * and arguments) and exactly one `tool` message per call id, after the call.
 */
const check = (capture: ChatCapture.ChatCapture, index: number, body: JsonObject): Problem | undefined => {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : undefined
  if (messages === undefined) {
    return { message: "\"messages\" must be a list of messages", param: "messages", code: "invalid_type" }
  }
  let cursor = 0
  for (let r = 0; r < index; r++) {
    const response = capture.responses[r]!
    const calls = ChatCapture.toolCalls(response)
    const text = ChatCapture.text(response)
    let at = -1
    for (let i = cursor; i < messages.length && at < 0; i++) {
      const message = messages[i]!
      if (message.role !== "assistant") continue
      const sent = Array.isArray(message.tool_calls) ? message.tool_calls.map(callOf) : []
      const textOk = text === "" || message.content === text
      const callsOk = calls.every((call) =>
        sent.some((s) => s !== undefined && s.id === call.id && s.name === call.name && ReplayEndpoint.argumentsEqual(s.arguments, call.arguments))
      )
      if (textOk && callsOk) at = i
    }
    if (at < 0) {
      const what = calls.length > 0
        ? `tool_calls ${calls.map((call) => `${call.id} (${call.name} ${call.arguments})`).join(", ")}`
        : `text ${JSON.stringify(text.slice(0, 60))}`
      return {
        message: `request ${index + 1} must hand back the assistant message of response ${r + 1} with its ${what}, in order`,
        param: "messages",
        code: "missing_replayed_message"
      }
    }
    for (const call of calls) {
      const results = messages.filter((m) => m.role === "tool" && m.tool_call_id === call.id)
      if (results.length !== 1 || messages.indexOf(results[0]!) < at) {
        return {
          message: `expected exactly one tool message for call ${call.id} after the call, found ${results.length}`,
          param: "messages",
          code: results.length === 0 ? "missing_tool_message" : "invalid_tool_message"
        }
      }
    }
    cursor = at + 1
  }
  return undefined
}

/**
 * Starts the replay server on the `HttpServer` in context, for the life of the scope. Routes:
 * `POST /v1/chat/completions` (and `/chat/completions`): the next recorded response, as SSE when the body
 * says `"stream": true` (`ChatCapture.toSse`: of a raw SSE capture the frames as recorded, named events
 * such as `event: ping` and `event: error` and llama.cpp's `error: {json}` lines included; of line-JSON the
 * chunks, then `[DONE]`), else the `chat.completion` body the chunks stand for (`ChatCapture.toCompletion`),
 * or, for a response that ended in an error, `{"error": …}` with that error's `code` as the HTTP status
 * when it is one (400-599), else 500; a request beyond the recording, or one that fails the checks above,
 * gets a 400 in OpenAI's error shape. `GET /health` answers `ok`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Service, never, HttpServer.HttpServer | Scope.Scope> =>
  ReplayEndpoint.make({
    path: "/chat/completions",
    source: options.capture.source,
    responses: options.capture.responses.length,
    param: "messages",
    check: (request) =>
      check(options.capture, request.index, request.body) ??
        Option.getOrUndefined(
          Option.map(
            options.validate?.(request) ?? Option.none(),
            (message): Problem => ({ message, param: "messages", code: "invalid_tool_message" })
          )
        ),
    answer: ({ body, index }) => {
      const response = options.capture.responses[index]!
      if (body.stream === true) {
        return HttpServerResponse.text(ChatCapture.toSse(response), { contentType: "text/event-stream" })
      }
      if (response.error !== undefined) {
        const code = Number(response.error.code)
        const status = Number.isInteger(code) && code >= 400 && code <= 599 ? code : 500
        return HttpServerResponse.unsafeJson({ error: response.error }, { status })
      }
      return HttpServerResponse.unsafeJson(ChatCapture.toCompletion(response))
    }
  })

/**
 * `make` as a layer: each time it is built (each `Effect.provide`), a fresh server and a fresh conversation
 * from recorded response 1.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ChatReplayServer, never, HttpServer.HttpServer> =>
  Layer.scoped(ChatReplayServer, make(options))
