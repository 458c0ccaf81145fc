/**
 * A loopback stand-in for `POST /v1/responses` that replays a capture of consecutive responses, one
 * response per request, and checks each request the way the stateless API would: a follow-up request must
 * hand back every earlier output item (reasoning with its `encrypted_content` byte for byte, every
 * `function_call` with its `call_id`) and one `function_call_output` per call; likewise one
 * `custom_tool_call_output`, `shell_call_output`, `apply_patch_call_output` or `local_shell_call_output` per
 * call of a custom tool or of a built-in tool the client runs (a shell call answered by the server in the same
 * response needs none). Anything else gets a 400 in OpenAI's error shape
 * `{"error":{"message","type","param","code"}}`.
 *
 * One server replays one recorded conversation: request N is checked against, and answered with, recorded
 * response N. Each server started (each time `layer` is built: each `Effect.provide` of it, each test that
 * provides its own) is a fresh conversation from response 1; a layer shared by several tests (`it.layer`) is
 * one conversation for all of them. A second call that does not continue the conversation (a new question,
 * as an app's second unrelated call makes) gets a 400: `missing_replayed_item` "request 2 must hand back
 * the … of response 1, in order", naming response 1's first output item (`assistant message msg_…`,
 * `reasoning item rs_…`): replay it on a server of its own, or record the calls as one conversation.
 *
 * Used by `effect-responses chat` (its embedded default) and by tests; it runs on any `HttpServer`
 * (the application picks the platform, e.g. `NodeHttpServer.layer(createServer, { port: 0 })`).
 *
 * @since 0.1.0
 */
import * as Capture from "@effect-responses/responses/Capture"
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
  readonly capture: Capture.Capture
  /**
   * A further check of each request, after the built-in ones: the description of what is wrong, or
   * `Option.none()` to accept it. The embedded demo uses it to demand the right calculator results.
   */
  readonly validate?: ((request: ReplayRequest) => Option.Option<string>) | undefined
}

/**
 * A running replay server: its base URL (`http://127.0.0.1:PORT/v1`, to use as `OPENAI_BASE_URL`) and the
 * request bodies received so far, in order.
 *
 * @since 0.1.0
 * @category models
 */
export type Service = ReplayEndpoint.Service

/**
 * @since 0.1.0
 * @category tags
 */
export class ReplayServer extends Context.Tag("@effect-responses/testing/ReplayServer")<ReplayServer, Service>() {}

const messageText = (item: JsonObject): string => {
  const content = item.content
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((c) => (isObject(c) && typeof c.text === "string" ? c.text : "")).join("")
}

/**
 * The `encrypted_content` values a reasoning item may be handed back with: on OpenAI the value at
 * `response.output_item.done` and the one in the terminal `response.output` differ (same length, other
 * bytes), and both are accepted by the API.
 */
const acceptedEncryptedContent = (response: Capture.CapturedResponse, itemId: unknown): ReadonlyArray<unknown> => {
  const values: Array<unknown> = []
  for (const event of response.events) {
    if (event.type === "response.output_item.done" && isObject(event.json.item) && event.json.item.id === itemId) {
      values.push(event.json.item.encrypted_content)
    }
  }
  for (const item of Capture.outputItems(response)) {
    if (item.id === itemId) values.push(item.encrypted_content)
  }
  return values
}

type Problem = ReplayEndpoint.Problem

/**
 * The output item that answers each kind of call the client runs (besides `function_call`), and the field
 * of it holding the call id (the API reference: `CustomToolCallOutput`, `FunctionShellCallOutputItemParam`,
 * `ApplyPatchToolCallOutputItemParam`, `LocalShellToolCallOutput` whose `id` is the call's), and the answer
 * to an MCP approval request (`MCPApprovalResponse`, whose `approval_request_id` is the request's `id`).
 */
const ANSWERS: Readonly<
  Record<string, { readonly type: string; readonly key: string; readonly of?: "id" | undefined }>
> = {
  custom_tool_call: { type: "custom_tool_call_output", key: "call_id" },
  shell_call: { type: "shell_call_output", key: "call_id" },
  apply_patch_call: { type: "apply_patch_call_output", key: "call_id" },
  local_shell_call: { type: "local_shell_call_output", key: "id" },
  // an MCP approval request is answered by an mcp_approval_response whose approval_request_id is its id
  mcp_approval_request: { type: "mcp_approval_response", key: "approval_request_id", of: "id" }
}

/** Whether the recorded response answers the call itself (a shell call the server ran: its output follows). */
const answeredInResponse = (response: Capture.CapturedResponse, callId: unknown): boolean =>
  Capture.outputItems(response).some((item) => String(item.type).endsWith("_output") && item.call_id === callId)

/**
 * Checks that `body` is what a stateless client must send for recorded response `index`: `store: false`,
 * the earlier responses' output items handed back in order, and one output item after each call the client
 * answers (`function_call_output` per function call, and per `ANSWERS` for the other calls).
 */
const check = (capture: Capture.Capture, index: number, body: JsonObject): Problem | undefined => {
  if (body.store !== false) {
    return { message: "the replay server is stateless: send \"store\": false", param: "store", code: "invalid_value" }
  }
  const input = body.input
  if (!Array.isArray(input)) {
    return { message: "\"input\" must be a list of input items", param: "input", code: "invalid_type" }
  }
  const items = input.filter(isObject)
  let cursor = 0
  const find = (start: number, predicate: (item: JsonObject) => boolean): number => {
    for (let i = start; i < items.length; i++) if (predicate(items[i]!)) return i
    return -1
  }
  for (let r = 0; r < index; r++) {
    const response = capture.responses[r]!
    for (const item of Capture.outputItems(response)) {
      let at: number
      let what: string
      switch (item.type) {
        case "reasoning": {
          const accepted = acceptedEncryptedContent(response, item.id)
          what = `reasoning item ${String(item.id)} with its encrypted_content byte for byte`
          at = find(cursor, (i) => i.type === "reasoning" && i.id === item.id && accepted.includes(i.encrypted_content))
          break
        }
        case "function_call": {
          what = `function_call ${String(item.call_id)} (${String(item.name)} ${String(item.arguments)})`
          at = find(cursor, (i) =>
            i.type === "function_call" && i.call_id === item.call_id && i.name === item.name &&
            ReplayEndpoint.argumentsEqual(i.arguments, item.arguments))
          if (at >= 0) {
            const outputs = items.filter((i) => i.type === "function_call_output" && i.call_id === item.call_id)
            if (outputs.length !== 1 || items.indexOf(outputs[0]!) < at) {
              return {
                message: `expected exactly one function_call_output for call ${String(item.call_id)} after the call, found ${outputs.length}`,
                param: "input",
                code: outputs.length === 0 ? "missing_function_call_output" : "invalid_function_call_output"
              }
            }
          }
          break
        }
        case "message": {
          what = `assistant message ${String(item.id)}`
          at = find(cursor, (i) => i.role === "assistant" && messageText(i) === messageText(item))
          break
        }
        default: {
          what = `${String(item.type)} item ${String(item.id)}`
          at = find(cursor, (i) => i.type === item.type && i.id === item.id)
          const answer = ANSWERS[String(item.type)]
          const callId = answer?.of === "id" ? item.id : item.call_id
          if (at >= 0 && answer !== undefined && !answeredInResponse(response, callId)) {
            const outputs = items.filter((i) => i.type === answer.type && i[answer.key] === callId)
            if (outputs.length !== 1 || items.indexOf(outputs[0]!) < at) {
              return {
                message: `expected exactly one ${answer.type} for call ${String(callId)} after the call, found ${outputs.length}`,
                param: "input",
                code: outputs.length === 0 ? `missing_${answer.type}` : `invalid_${answer.type}`
              }
            }
          }
        }
      }
      if (at < 0) {
        return {
          message: `request ${index + 1} must hand back the ${what} of response ${r + 1}, in order`,
          param: "input",
          code: "missing_replayed_item"
        }
      }
      cursor = at + 1
    }
  }
  return undefined
}

/**
 * Starts the replay server on the `HttpServer` in context, for the life of the scope. Routes:
 * `POST /v1/responses` (and `/responses`): the next recorded response, as SSE when the body says
 * `"stream": true`, else the terminal response object as JSON; a request beyond the recording, or one that
 * fails the checks above, gets a 400 in OpenAI's error shape. `GET /health` answers `ok`. One conversation
 * per server: each `make` starts from recorded response 1 (see the module's documentation).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Service, never, HttpServer.HttpServer | Scope.Scope> =>
  ReplayEndpoint.make({
    path: "/responses",
    source: options.capture.source,
    responses: options.capture.responses.length,
    param: "input",
    check: (request) =>
      check(options.capture, request.index, request.body) ??
        Option.getOrUndefined(
          Option.map(
            options.validate?.(request) ?? Option.none(),
            (message): Problem => ({ message, param: "input", code: "invalid_function_call_output" })
          )
        ),
    answer: ({ body, index }) => {
      const response = options.capture.responses[index]!
      if (body.stream === true) {
        return HttpServerResponse.text(Capture.toSse(response), { contentType: "text/event-stream" })
      }
      const terminal = Capture.terminalEvent(response)
      return terminal === undefined ? unfinished(response) : HttpServerResponse.unsafeJson(terminal.json.response)
    }
  })

/**
 * The non-streaming answer for a recorded response without a terminal event: the recorded `error` event as
 * an HTTP 500 in OpenAI's error shape (flat `{code, message, param}` or nested `{error: {…}}`), or, when
 * the recording simply stops, a 500 saying so.
 */
const unfinished = (response: Capture.CapturedResponse): HttpServerResponse.HttpServerResponse => {
  const event = response.events.findLast((e) => e.type === "error")?.json
  const error = event === undefined ? undefined : isObject(event.error) ? event.error : event
  return HttpServerResponse.unsafeJson(
    {
      error: {
        message: typeof error?.message === "string"
          ? error.message
          : `the recording of response ${response.id} ends without a terminal event`,
        type: typeof error?.type === "string" && error.type !== "error" ? error.type : "server_error",
        param: error?.param ?? null,
        code: error?.code ?? null
      }
    },
    { status: 500 }
  )
}

/**
 * `make` as a layer: each time it is built (each `Effect.provide`), a fresh server and a fresh conversation
 * from recorded response 1; within one build, request N must continue the conversation of the ones before.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ReplayServer, never, HttpServer.HttpServer> =>
  Layer.scoped(ReplayServer, make(options))
