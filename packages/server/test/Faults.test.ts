/**
 * Faults and bad input, each reproduced on real loopback HTTP: the gateway in front of a scripted Chat
 * Completions upstream (`ScriptedServer` of `@effect-responses/testing`) that stalls, breaks off, floods or
 * answers the wrong thing, and requests that are too deep or too long. Every streamed body passes `checkLifecycle`. Tests that
 * wait on a timeout or a retry run on the live clock (`it.live`), with timeouts of 400 ms.
 */
import { LanguageModel, Part, StreamPart } from "@effect-responses/core"
import { Gateway, Upstream } from "@effect-responses/server"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Stream from "effect/Stream"
import type { IncomingMessage, ServerResponse } from "node:http"
import { connect } from "node:net"
import { gzipSync } from "node:zlib"
import OpenAI from "openai"
import { chunk, completion, finishChunks, type Handler, type Received, sse, textChunk, toolChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { captureLogs, checkLifecycle, parseSse, post, readFixture, unfinishedText, waitForAccessLines, withGateway } from "./utils.js"

const fast = { headersTimeout: "400 millis", idleTimeout: "400 millis" } as const

/** The 502 error body of an upstream whose connection broke off after its headers. */
const disconnected = {
  message: Gateway.UPSTREAM_DISCONNECTED,
  type: "server_error",
  param: null,
  code: "upstream_disconnected"
} as const

// `it.live` keeps Effect's default logger (`it.effect` removes it): without this, the gateway's warnings and
// access log lines would go into the test output. A test that reads the log provides its own logger.
/** `POST <url>/responses` of `body` as JSON, which `client.abort()` leaves (the client going away). */
const postAbortably = (url: string, body: object, client: AbortController): Promise<Response> =>
  fetch(`${url}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: client.signal
  })

const live = (name: string, self: () => Effect.Effect<unknown, unknown>) =>
  it.live(name, () => self().pipe(Effect.provide(Logger.remove(Logger.defaultLogger))))

/**
 * `withScriptedGateway` with the log captured (`captureLogs`, a line `LEVEL: message`): `body` also gets the
 * lines so far (for `waitForAccessLines`); once the gateway is closed, the lines, and the access-log lines
 * (`access: `) among them.
 */
const withLoggedGateway = <A, E>(
  script: ReadonlyArray<Handler>,
  options: Parameters<typeof withScriptedGateway>[1],
  body: (url: string, received: ReadonlyArray<Received>, captured: { readonly logs: ReadonlyArray<string> }) => Effect.Effect<A, E>
) => {
  const captured = captureLogs()
  return withScriptedGateway(script, options, (url, received) => body(url, received, captured)).pipe(
    Effect.provide(captured.layer),
    Effect.map(() => ({ logs: captured.logs, access: captured.logs.filter((line) => line.includes("access: ")) }))
  )
}

describe("Gateway faults (scripted loopback upstream)", () => {
  it.effect("a tool output that answers no call in the input: 400 naming the client's item (not the upstream's message), the upstream not asked", () =>
    withScriptedGateway([completion({ content: "ok" })], {}, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          instructions: "be brief",
          input: [{ role: "user", content: "q" }, { type: "function_call_output", call_id: "orphan", output: "x" }]
        })
        expect(answer.status).toBe(400)
        const error = JSON.parse(answer.text).error
        expect(error).toMatchObject({ type: "invalid_request_error", param: "input[1]" })
        expect(error.message).toMatch(/^No tool call found for function call output with call_id orphan/)
        expect(error.message).not.toContain("messages[")
        expect(received).toHaveLength(0)
      })))

  it.effect("a tool output apart from its call over Chat Completions: 400 naming the client's items (not the upstream's messages[k]), the upstream not asked", () =>
    withScriptedGateway([completion({ content: "ok" }), completion({ content: "ok" })], {}, (url, received) =>
      Effect.gen(function*() {
        const tools = [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }]
        const call = (id: string) => ({ type: "function_call", call_id: id, name: "f", arguments: "{}" })
        const output = (id: string) => ({ type: "function_call_output", call_id: id, output: "x" })
        const refused = [
          // a user message between the call and its output
          [[{ role: "user", content: "q" }, call("a"), { role: "user", content: "wait" }, output("a")], "input[3]", "input[1]", "input[2]"],
          // an assistant message of its own between them (after the first output)
          [[{ role: "user", content: "q" }, call("a"), call("b"), output("a"), { role: "assistant", content: "hm" }, output("b")], "input[5]", "input[2]", "input[4]"],
          // a later call's message between them
          [[{ role: "user", content: "q" }, call("a"), output("a"), call("b"), output("b"), output("a")], "input[5]", "input[1]", "input[3]"]
        ] as const
        for (const [input, param, callItem, between] of refused) {
          const answer = yield* post(`${url}/responses`, { model: "m", instructions: "be brief", tools, input })
          expect(answer.status, JSON.stringify(input)).toBe(400)
          const error = JSON.parse(answer.text).error
          expect(error).toMatchObject({ type: "invalid_request_error", param, code: "invalid_prompt" })
          expect(error.message).toContain(`does not come right after its call, ${callItem}: ${between} comes between them`)
          expect(error.message).not.toContain("messages[")
        }
        expect(received).toHaveLength(0)
        // text after the calls joins their message, and reasoning between outputs is no message: both go on
        const accepted = [
          [{ role: "user", content: "q" }, call("a"), { role: "assistant", content: "hm" }, output("a")],
          [{ role: "user", content: "q" }, call("a"), call("b"), output("a"), { type: "reasoning", summary: [{ type: "summary_text", text: "t" }] }, output("b")]
        ]
        for (const input of accepted) {
          const answer = yield* post(`${url}/responses`, { model: "m", tools, input })
          expect(answer.status, answer.text).toBe(200)
        }
        expect(received).toHaveLength(2)
      })))

  it.effect("an input_image by file_id over Chat Completions: 400 naming the part's file_id and what to send instead, the upstream not asked", () =>
    withScriptedGateway([completion({ content: "ok" })], {}, (url, received) =>
      Effect.gen(function*() {
        const image = { type: "input_image", file_id: "file-abc" }
        const cases = [
          [[{ role: "user", content: [{ type: "input_text", text: "what is it?" }, image] }], "input[0].content[1].file_id"],
          [
            [
              { type: "function_call", call_id: "c1", name: "shot", arguments: "{}" },
              { type: "function_call_output", call_id: "c1", output: [image] }
            ],
            "input[1].output[0].file_id"
          ]
        ] as const
        for (const [input, param] of cases) {
          const answer = yield* post(`${url}/responses`, { model: "m", input })
          expect(answer.status).toBe(400)
          const error = JSON.parse(answer.text).error
          expect(error).toMatchObject({ type: "invalid_request_error", param, code: "unsupported_value" })
          expect(error.message).toContain("file ids need the Files API, which this gateway does not have")
          expect(error.message).toContain("image_url")
        }
        expect(received).toHaveLength(0)
      })))

  it.effect("an upstream that closes the connection: GET /v1/models logs the transport error's cause, as POST does", () => {
    return withLoggedGateway([(request) => request.socket.destroy()], {}, (url, _received, captured) =>
      Effect.gen(function*() {
        const models = yield* Effect.promise(() => fetch(`${url}/models`))
        expect(models.status).toBe(502)
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(answer.status).toBe(502)
        const warnings = captured.logs.filter((line) => line.startsWith("WARN") && line.includes("upstream error"))
        const get = warnings.find((line) => line.includes("/models"))
        const postLine = warnings.find((line) => line.includes("/chat/completions"))
        expect(get, warnings.join("\n")).toBeDefined()
        expect(postLine, warnings.join("\n")).toBeDefined()
        // the cause after the reason (`Transport: other side closed`), the same for both
        const cause = /Transport: ([^(]+)/.exec(postLine!)?.[1]?.trim()
        expect(cause, postLine).toBeTruthy()
        expect(get).toContain(cause)
      }))
  })

  // the upstream answers model "warm"; any other model it reads whole, then drops the connection without an
  // answer (a backend that crashes on a request): the request after a warm-up goes on a kept-alive connection
  // (`reused`: whether each request came on a connection that had carried one before)
  const dropsAfterReading = () => {
    const reused: Array<boolean> = []
    const sockets = new WeakSet<object>()
    const handler: Handler = (request, response, body) => {
      reused.push(sockets.has(request.socket))
      sockets.add(request.socket)
      if (body.model === "warm") return completion({ content: "ok" })(request, response, body)
      request.socket.destroy()
    }
    return { handler, reused }
  }
  const closedBody = {
    message: Gateway.UPSTREAM_CLOSED,
    type: "server_error",
    param: null,
    code: "upstream_closed"
  } as const

  it.effect("an upstream that reads the request, then closes a kept-alive connection: one upstream request, 502 upstream_closed (streamed and whole)", () => {
    const upstream = dropsAfterReading()
    return withLoggedGateway([upstream.handler], {}, (url, received, captured) =>
      Effect.gen(function*() {
        for (const stream of [false, true]) {
          expect((yield* post(`${url}/responses`, { model: "warm", input: "hi", store: false })).status).toBe(200)
          const before = received.length
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", store: false, stream })
          // the upstream got the request once, on the warm-up's connection: the gateway did not send it again
          expect(received.length - before, `stream ${stream}`).toBe(1)
          expect(upstream.reused.at(-1)).toBe(true)
          expect(answer.status, answer.text).toBe(502)
          expect(JSON.parse(answer.text).error).toEqual(closedBody)
          expect(answer.text).not.toContain("could not be reached")
        }
        yield* Effect.promise(() => waitForAccessLines(captured, 4))
        const access = captured.logs.filter((line) => line.includes("access: ") && line.includes("model=\"m\""))
        expect(access, captured.logs.join("\n")).toHaveLength(2)
        for (const line of access) expect(line).toMatch(/ 502 model="m" .* upstream_attempts=1 /)
      }))
  })

  live("with --upstream-retries 2, an upstream that reads each request, then closes: 3 attempts, each in upstream_attempts", () => {
    const upstream = dropsAfterReading()
    return withLoggedGateway([upstream.handler], { upstream: { retry: { times: 2, base: "1 millis" } } }, (url, received, captured) =>
      Effect.gen(function*() {
        expect((yield* post(`${url}/responses`, { model: "warm", input: "hi", store: false })).status).toBe(200)
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", store: false })
        // the first attempt on the warm-up's connection, each retry on a new one
        expect(received.map((request) => request.body.model)).toEqual(["warm", "m", "m", "m"])
        expect(upstream.reused).toEqual([false, true, false, false])
        expect(answer.status, answer.text).toBe(502)
        expect(JSON.parse(answer.text).error).toEqual(closedBody)
        yield* Effect.promise(() => waitForAccessLines(captured, 2))
        const access = captured.logs.filter((line) => line.includes("access: "))
        expect(access[1], captured.logs.join("\n")).toMatch(/ 502 model="m" .* upstream_attempts=3 /)
      }))
  })

  live("an upstream that never sends headers: 504 upstream_timeout (streamed and whole), the upstream request aborted", () =>
    withScriptedGateway([() => {}], { upstream: fast }, (url, received) =>
      Effect.gen(function*() {
        for (const stream of [true, false]) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
          expect(answer.status).toBe(504)
          expect(JSON.parse(answer.text).error).toEqual({
            message: Gateway.upstreamTimeoutMessage("headers"),
            type: "server_error",
            param: null,
            code: "upstream_timeout"
          })
        }
        expect(received).toHaveLength(2)
        yield* Effect.promise(() => Promise.all(received.map((r) => r.closed)))
      })))

  live("an upstream that stalls mid-stream: response.failed upstream_timeout after the text so far, upstream aborted", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write(textChunk("Hel"))
      response.write(textChunk("lo"))
    }], { upstream: fast }, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        expect(answer.status).toBe(200)
        const frames = parseSse(answer.text)
        const response = checkLifecycle(frames)
        expect(response.status).toBe("failed")
        expect(response.error).toEqual({ code: "upstream_timeout", message: Gateway.upstreamTimeoutMessage("idle") })
        expect(unfinishedText(frames)).toBe("Hello")
        expect(response.output).toEqual([])
        yield* Effect.promise(() => received[0]!.closed)
      })))

  // keep-alives as real servers send them: an SSE comment (OpenAI, OpenRouter, DeepSeek), a named ping with a
  // timestamp (old sse-starlette), a ping without data, an event without choices, fields that dispatch no
  // event (`id:`, `retry:`, empty `data:`), a line of spaces
  const keepAlives = [
    ": ping\n\n",
    "event: ping\r\ndata: 2026-12-03 14:00:00.000000\r\n\r\n",
    "event: ping\n\n",
    "data: {}\n\n",
    "id: 5\n\n",
    "retry: 1000\n\n",
    "data:\n\n",
    "  \n\n"
  ]
  live("an upstream that only sends keep-alives (comments, pings, empty events), from its start or after some text: upstream_timeout, upstream aborted", () => {
    const pinging = (first: ReadonlyArray<string>, keepAlive: string) => (_request: unknown, response: ServerResponse) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      for (const frame of first) response.write(frame)
      const ping = setInterval(() => response.write(keepAlive), 50)
      response.on("close", () => clearInterval(ping))
    }
    const answers = keepAlives.flatMap((keepAlive) => [pinging([], keepAlive), pinging([textChunk("Hel"), textChunk("lo")], keepAlive)])
    // the headers come with the first keep-alive, 50 ms in: a long headers timeout, so that on a loaded
    // machine only the idle timeout can fire (with both at 400 ms the headers timeout once fired first)
    return withScriptedGateway(answers, { upstream: { headersTimeout: "10 seconds", idleTimeout: "400 millis" } }, (url, received) =>
      Effect.gen(function*() {
        for (const keepAlive of keepAlives) {
          const before = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
          expect(before.status, keepAlive).toBe(504)
          expect(JSON.parse(before.text).error).toMatchObject({ code: "upstream_timeout", message: Gateway.upstreamTimeoutMessage("idle") })
          const after = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
          expect(after.status).toBe(200)
          const frames = parseSse(after.text)
          const response = checkLifecycle(frames)
          expect(response.status, keepAlive).toBe("failed")
          expect(response.error).toEqual({ code: "upstream_timeout", message: Gateway.upstreamTimeoutMessage("idle") })
          expect(unfinishedText(frames)).toBe("Hello")
          expect(response.output).toEqual([])
        }
        yield* Effect.promise(() => Promise.all(received.map((r) => r.closed)))
      }))
  })

  /** An upstream answering 200 with `bytes` of a JSON body (none: the headers alone), then silent. */
  const stalled = (bytes: string) => (_request: unknown, response: ServerResponse) => {
    response.writeHead(200, { "content-type": "application/json" })
    if (bytes === "") response.flushHeaders()
    else response.write(bytes)
  }

  /**
   * A gateway with the upstream's `timeouts` over `script` (one stalled answer a request): each of as many
   * non-streamed requests is answered a 504 `upstream_timeout`, the messages `messages` in order.
   */
  const expectTimeouts = (
    script: ReadonlyArray<Handler>,
    timeouts: Pick<Upstream.ChatCompletionsOptions, "headersTimeout" | "idleTimeout">,
    messages: ReadonlyArray<string>
  ) =>
    withScriptedGateway(script, { upstream: timeouts }, (url) =>
      Effect.gen(function*() {
        const got: Array<unknown> = []
        for (let i = 0; i < script.length; i++) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
          expect(answer.status).toBe(504)
          const error = JSON.parse(answer.text).error
          expect(error.code).toBe("upstream_timeout")
          got.push(error.message)
        }
        expect(got).toEqual(messages)
      }))

  live("a non-streaming upstream whose body stalls after its headers: 504 upstream_timeout saying how much of the answer came", () =>
    // not "sent nothing, or only keep-alives": a whole answer's bytes are the answer's
    expectTimeouts([stalled("{\"id\":\"chatcmpl-w\","), stalled("{\"id\":"), stalled("")], { headersTimeout: "10 seconds", idleTimeout: "400 millis" }, [
      "the upstream model server stopped after 19 bytes of an incomplete answer, and sent nothing more for longer than the gateway's idle timeout",
      "the upstream model server stopped after 6 bytes of an incomplete answer, and sent nothing more for longer than the gateway's idle timeout",
      "the upstream model server sent its headers but none of its answer, and then nothing for longer than the gateway's idle timeout"
    ]))

  live("a non-streaming upstream whose body stalls after its headers, the headers timeout passing first: 504 saying the headers came and how much of the answer", () =>
    // the new-user tester's case had both at 3 s (the headers timeout, which bounds a whole answer from its
    // headers, passed first and said "did not answer"); here only the headers timeout can pass. Not "did not
    // answer": the headers came, and part of the answer
    expectTimeouts([stalled("{\"id\":\"chatcmpl-w\","), stalled("{\"id\":"), stalled("")], { headersTimeout: "2 seconds", idleTimeout: "10 seconds" }, [
      "the upstream model server sent its headers, then stopped after 19 bytes of an incomplete answer: the answer did not arrive whole within the gateway's headers timeout (which bounds a whole answer too)",
      "the upstream model server sent its headers, then stopped after 6 bytes of an incomplete answer: the answer did not arrive whole within the gateway's headers timeout (which bounds a whole answer too)",
      "the upstream model server sent its headers but none of its answer within the gateway's headers timeout (which bounds a whole answer too)"
    ]))

  it.effect("a strict text.format outside OpenAI's subset goes upstream as it is, for the upstream to judge", () =>
    withScriptedGateway([completion({ content: "{}" })], {}, (url, received) =>
      Effect.gen(function*() {
        const schema = { type: "object", properties: { name: { type: "string", minLength: 1 } } }
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          input: "hi",
          text: { format: { type: "json_schema", name: "x", strict: true, schema } }
        })
        expect(answer.status).toBe(200)
        expect((received[0]!.body as { response_format: unknown }).response_format).toStrictEqual({
          type: "json_schema",
          json_schema: { name: "x", schema, strict: true }
        })
      })))

  it.effect("a strict text.format with $schema (zod 4's draft-7 output, as the openai SDK's zodTextFormat sends it) goes upstream as it is", () =>
    withScriptedGateway([completion({ content: "{}" })], {}, (url, received) =>
      Effect.gen(function*() {
        const schema = {
          "$schema": "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { city: { type: "string" }, population: { type: "number" } },
          required: ["city", "population"],
          additionalProperties: false
        }
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          input: "hi",
          text: { format: { type: "json_schema", name: "city", strict: true, schema } }
        })
        expect(answer.status).toBe(200)
        expect(received).toHaveLength(1)
        expect((received[0]!.body as { response_format: unknown }).response_format).toStrictEqual({
          type: "json_schema",
          json_schema: { name: "city", schema, strict: true }
        })
      })))

  it.effect("a tool_choice that forces a call with no tool to call: 400 naming tool_choice, the upstream not asked; auto / none without tools not forwarded", () =>
    withScriptedGateway([completion({ content: "ok" })], {}, (url, received) =>
      Effect.gen(function*() {
        const refused = [
          { tool_choice: "required" },
          { tool_choice: "required", tools: [{ type: "web_search" }] },
          { tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "x" }] } },
          { tool_choice: { type: "function", name: "x" } },
          { tool_choice: { type: "custom", name: "x" } },
          { tool_choice: { type: "apply_patch" } },
          { tool_choice: { type: "shell" }, tools: [{ type: "function", name: "shell" }] }
        ]
        for (const fields of refused) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", ...fields })
          expect(answer.status, JSON.stringify(fields)).toBe(400)
          const error = JSON.parse(answer.text).error
          expect(error).toMatchObject({ type: "invalid_request_error", param: "tool_choice", code: "invalid_value" })
        }
        const required = JSON.parse((yield* post(`${url}/responses`, { model: "m", input: "hi", tool_choice: "required" })).text)
        expect(required.error.message).toBe(
          "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
        )
        // allowed_tools naming only a dropped built-in tool, with a function declared: says the built-in was dropped
        const builtin = JSON.parse((yield* post(`${url}/responses`, {
          model: "m",
          input: "hi",
          tools: [{ type: "web_search" }, { type: "function", name: "f", parameters: { type: "object", properties: {} } }],
          tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "web_search" }] }
        })).text)
        expect(builtin.error).toMatchObject({ param: "tool_choice", code: "invalid_value" })
        expect(builtin.error.message).toContain("built-in tools this gateway drops (web_search)")
        // a tool_choice forcing that built-in tool: the same kind of 400
        const forced = JSON.parse((yield* post(`${url}/responses`, {
          model: "m",
          input: "hi",
          tools: [{ type: "web_search_preview" }, { type: "function", name: "f", parameters: { type: "object", properties: {} } }],
          tool_choice: { type: "web_search_preview" }
        })).text)
        expect(forced.error).toMatchObject({ param: "tool_choice", code: "invalid_value" })
        expect(forced.error.message).toBe(
          "Invalid value for 'tool_choice': the tool it forces is a built-in tool this gateway drops (web_search_preview): the upstream cannot run it."
        )
        expect(received).toHaveLength(0)
        for (const choice of ["auto", "none"]) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", tool_choice: choice })
          expect(answer.status, answer.text).toBe(200)
          expect(JSON.parse(answer.text).tool_choice).toBe(choice)
        }
        expect(received.map((request) => request.body.tool_choice)).toEqual([undefined, undefined])
      })))

  live("an error body or a whole answer trickled a byte at a time (each within the idle timeout): 504 upstream_timeout within the headers timeout", () => {
    // one byte every 100 ms: the idle timeout (400 ms) never passes, the whole body would take 6 s
    const trickle = (status: number, type: string, body: string) => (_request: unknown, response: ServerResponse) => {
      response.writeHead(status, { "content-type": type })
      let at = 0
      const timer = setInterval(() => {
        if (response.destroyed || at === body.length) return clearInterval(timer)
        response.write(body[at++]!)
      }, 100)
      response.on("close", () => clearInterval(timer))
    }
    const error = JSON.stringify({ error: { message: "slow down, please", type: "rate_limit" } })
    const whole = JSON.stringify({
      id: "chatcmpl-t",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: "a whole answer, trickled" }, finish_reason: "stop" }]
    })
    // an error body (streamed call and not), a whole answer (not streamed; streamed: it is no event stream)
    const cases = [[429, error, true], [429, error, false], [200, whole, false], [200, whole, true]] as const
    return withScriptedGateway(cases.map(([status, body]) => trickle(status, "application/json", body)), { upstream: fast }, (url, received) =>
      Effect.gen(function*() {
        for (const [, , stream] of cases) {
          const started = Date.now()
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
          expect(answer.status).toBe(504)
          expect(JSON.parse(answer.text).error.code).toBe("upstream_timeout")
          expect(Date.now() - started).toBeLessThan(3_000)
        }
        yield* Effect.promise(() => Promise.all(received.map((r) => r.closed)))
      }))
  })

  it.effect("a finish_reason \"error\" chunk without an error object: response.failed after the text so far, not response.completed", () =>
    withScriptedGateway([sse(textChunk("Hel"), textChunk("lo"), textChunk("", "error"), "data: [DONE]\n\n")], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const frames = parseSse(answer.text)
        const response = checkLifecycle(frames)
        expect(response.status).toBe("failed")
        expect(response.error).toMatchObject({ code: "server_error" })
        expect((response.error as { message: string }).message).toContain("finish_reason \"error\"")
        expect(unfinishedText(frames)).toBe("Hello")
        expect(response.output).toEqual([])
      })))

  it.effect("keep-alives and errors sent as named SSE events: event: ping skipped, event: error -> response.failed with its message", () => {
    const ping = "event: ping\r\ndata: 2026-12-03 14:00:00.000000\r\n\r\n"
    return withScriptedGateway([
      sse(ping, textChunk("Hel"), ping, textChunk("lo"), finishChunks()),
      sse(textChunk("Hel"), ping, textChunk("lo"), "event: error\ndata: {\"message\":\"CUDA out of memory\"}\n\n")
    ], {}, (url) =>
      Effect.gen(function*() {
        const pinged = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const completed = checkLifecycle(parseSse(pinged.text))
        expect(completed.status).toBe("completed")
        expect(completed.output).toMatchObject([{ type: "message", content: [{ text: "Hello" }] }])
        const errored = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const frames = parseSse(errored.text)
        const failed = checkLifecycle(frames)
        expect(failed.status).toBe("failed")
        expect((failed.error as { message: string }).message).toContain("CUDA out of memory")
        expect(unfinishedText(frames)).toBe("Hello")
        expect(failed.output).toEqual([])
      }))
  })

  // llama.cpp's server before its PR #16109 (2025-09; coddy-project/coddy-agent#106): `error: {json}` as an SSE field
  it.effect("llama.cpp's error: {json} field: before any chunk its 4xx status with its message, after text response.failed with it", () =>
    withScriptedGateway([
      sse("error: {\"code\":400,\"message\":\"the request exceeds the available context size\",\"type\":\"invalid_request_error\"}\n\n", "data: [DONE]\n\n"),
      sse(textChunk("Hi"), "error: {\"code\":500,\"message\":\"Input prompt is too big compared to KV size.\",\"type\":\"server_error\"}\n\n"),
      sse("error: {\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}\n\n", "data: [DONE]\n\n"),
      (_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ error: { message: "context length exceeded", code: 400 } }))
      }
    ], {}, (url) =>
      Effect.gen(function*() {
        // as the same error in an HTTP 400 is answered: its status, in OpenAI's error shape
        const refused = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        // (the number is its status, not an error code of OpenAI's: `code` null, as for an upstream 400 without one)
        expect(refused.status).toBe(400)
        expect(JSON.parse(refused.text).error).toStrictEqual({
          message: "the request exceeds the available context size",
          type: "invalid_request_error",
          param: null,
          code: null
        })
        const errored = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const frames = parseSse(errored.text)
        const failed = checkLifecycle(frames)
        expect(failed.status).toBe("failed")
        expect(failed.error).toEqual({ code: "server_error", message: "stream error event 500: Input prompt is too big compared to KV size." })
        expect(unfinishedText(frames)).toBe("Hi")
        expect(failed.output).toEqual([])
        // a 5xx code stays the upstream's failure: 502, the gateway's code for it, the number in the message
        const loading = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        expect(loading.status).toBe(502)
        expect(JSON.parse(loading.text).error).toMatchObject({
          type: "server_error",
          code: "upstream_error",
          message: "the upstream failed: stream error event 503: Loading model"
        })
        // a 200 error body with a 4xx code, not streamed: the same 400
        const whole = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(whole.status).toBe(400)
        expect(JSON.parse(whole.text).error).toMatchObject({ message: "context length exceeded", code: null })
      })))

  it.effect("an error chunk with a number as its code after text (vLLM, OpenRouter): response.failed with a word code, the number in the message", () =>
    withScriptedGateway([
      sse(textChunk("abc"), `data: ${JSON.stringify({ error: { message: "oops mid", code: 500 } })}\n\n`),
      sse(textChunk("abc"), `data: ${JSON.stringify({ error: { message: "slow down", code: 429 } })}\n\n`),
      sse(textChunk("abc"), `data: ${JSON.stringify({ error: { message: "overloaded", code: "server_is_overloaded" } })}\n\n`)
    ], {}, (url) =>
      Effect.gen(function*() {
        const errors: Array<unknown> = []
        for (let i = 0; i < 3; i++) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
          const frames = parseSse(answer.text)
          const response = checkLifecycle(frames)
          expect(response.status).toBe("failed")
          expect(unfinishedText(frames)).toBe("abc")
          errors.push(response.error)
        }
        expect(errors).toEqual([
          { code: "server_error", message: "stream error event 500: oops mid" },
          { code: "rate_limit_exceeded", message: "stream error event 429: slow down" },
          // a word code of the upstream's own is passed on
          { code: "server_is_overloaded", message: "stream error event server_is_overloaded: overloaded" }
        ])
      })))

  it.effect("an upstream tool call without an id: a call_id new in every response (an agent that remembers handled ids runs each)", () =>
    withScriptedGateway([
      sse(toolChunk({ name: "get_time", arguments: "{}" }), finishChunks("tool_calls")),
      sse(toolChunk({ name: "get_time", arguments: "{}" }), finishChunks("tool_calls")),
      completion({ tool_calls: [{ type: "function", function: { name: "get_time", arguments: "{}" } }] }, "tool_calls")
    ], {}, (url) =>
      Effect.gen(function*() {
        const tools = [{ type: "function", name: "get_time", parameters: { type: "object", properties: {} } }]
        const ids: Array<string> = []
        for (const stream of [true, true, false, false]) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", tools, stream })
          expect(answer.status, answer.text).toBe(200)
          const response = stream ? checkLifecycle(parseSse(answer.text)) : JSON.parse(answer.text)
          expect(response.output).toMatchObject([{ type: "function_call", name: "get_time", arguments: "{}" }])
          ids.push(response.output[0].call_id)
        }
        for (const id of ids) expect(id).toMatch(/^call_[0-9a-f]{24}$/)
        expect(new Set(ids).size).toBe(4)
      })))

  it.effect("a failed answer in a 200 chat.completion (finish_reason \"error\", an error object as the body): 502 with the provider's message", () =>
    withScriptedGateway([
      completion({ content: "partial" }, "error"),
      (_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ error: { message: "Provider returned error", code: 502 }, user_id: "u" }))
      }
    ], {}, (url) =>
      Effect.gen(function*() {
        const bare = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(bare.status).toBe(502)
        expect(JSON.parse(bare.text).error).toMatchObject({ type: "server_error", code: "upstream_error" })
        expect(JSON.parse(bare.text).error.message).toContain("finish_reason \"error\"")
        const body = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(body.status).toBe(502)
        expect(JSON.parse(body.text).error).toMatchObject({ type: "server_error" })
        expect(JSON.parse(body.text).error.message).toBe("the upstream failed: response failed (502): Provider returned error")
      })))

  it.effect("content as a list of parts (Mistral's Magistral), streamed and not: the reasoning and the answer, not an empty answer", () => {
    const parts = (content: unknown, finish: string | null = null) =>
      `data: ${
        JSON.stringify({
          id: "chatcmpl-m",
          object: "chat.completion.chunk",
          created: 0,
          model: "magistral-medium-latest",
          choices: [{ index: 0, delta: { content }, finish_reason: finish }]
        })
      }\n\n`
    const thinking = { type: "thinking", thinking: [{ type: "text", text: "hmm" }] }
    return withScriptedGateway([
      sse(parts([thinking]), parts([{ type: "text", text: "ans" }]), parts([{ type: "text", text: "wer" }], "stop"), "data: [DONE]\n\n"),
      completion({ content: [thinking, { type: "text", text: "answer" }] })
    ], {}, (url) =>
      Effect.gen(function*() {
        const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const whole = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        for (const response of [checkLifecycle(parseSse(streamed.text)), JSON.parse(whole.text)]) {
          expect(response.status).toBe("completed")
          expect(response.output).toMatchObject([
            { type: "reasoning", summary: [{ type: "summary_text", text: "hmm" }] },
            { type: "message", content: [{ type: "output_text", text: "answer" }] }
          ])
        }
      }))
  })

  it.effect("an unusable upstream answer: mid-stream response.failed upstream_error, as before the first byte; a whole answer that is no JSON names its content type", () =>
    withScriptedGateway([
      (_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end(textChunk("partial") + "data: {not json\n\n")
      },
      (_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end(textChunk("an event stream to a call that did not ask for one"))
      }
    ], {}, (url) =>
      Effect.gen(function*() {
        const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const response = checkLifecycle(parseSse(streamed.text))
        expect(response.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("the upstream failed") })
        const whole = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(whole.status).toBe(502)
        expect(JSON.parse(whole.text).error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("content-type text/event-stream") })
      })))

  it.effect("an upstream content of the wrong type (42): response.failed upstream_error naming the field and the chunk (streamed, first chunk or after text), 502 (whole), not an empty completed answer", () =>
    withScriptedGateway([
      sse(chunk({ role: "assistant", content: 42 }), finishChunks()),
      sse(textChunk("partial"), chunk({ content: 42 }), finishChunks()),
      completion({ content: 42 })
    ], {}, (url) =>
      Effect.gen(function*() {
        for (const position of [0, 1]) {
          const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
          const response = checkLifecycle(parseSse(streamed.text))
          expect(response.status).toBe("failed")
          expect(response.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("choices[0].delta.content is a number") })
          expect((response.error as { message: string }).message).toContain(`chat.completion.chunk at position ${position}`)
        }
        const whole = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(whole.status).toBe(502)
        expect(JSON.parse(whole.text).error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("choices[0].message.content of the chat.completion body is a number") })
      })))

  it.effect("an upstream tool call that never gets a name: response.failed upstream_error naming the chunk (streamed), 502 (whole), no function_call named \"\"", () =>
    withScriptedGateway([
      sse(toolChunk({ index: 0, id: "c1", arguments: "{\"city\":\"A\"}" }), finishChunks("tool_calls")),
      completion({ content: null, tool_calls: [{ id: "c1", type: "function", function: { arguments: "{\"city\":\"A\"}" } }] }, "tool_calls")
    ], {}, (url) =>
      Effect.gen(function*() {
        const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const frames = parseSse(streamed.text)
        const response = checkLifecycle(frames)
        expect(response.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("tool call c1 has no function.name") })
        expect((response.error as { message: string }).message).toContain("chat.completion.chunk at position 0")
        expect(frames.some((frame) => frame.data.type === "response.output_item.done")).toBe(false)
        expect(response.output).toEqual([])
        const whole = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(whole.status).toBe(502)
        expect(JSON.parse(whole.text).error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("no function.name") })
      })))

  it.effect("a connection that breaks off mid-stream: response.failed upstream_disconnected, worded as such", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write(textChunk("partial"), () => setTimeout(() => response.socket?.destroy(), 50))
    }], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const response = checkLifecycle(parseSse(answer.text))
        expect(response.error).toEqual({ code: "upstream_disconnected", message: Gateway.UPSTREAM_DISCONNECTED })
        expect(answer.text).not.toContain("could not be reached")
      })))

  it.effect("a whole answer that breaks off after part of its body: 502 upstream_disconnected, not \"could not be reached\"", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.write("{\"id\":\"chatcmpl-w\",", () => setTimeout(() => response.socket?.destroy(), 50))
    }], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(answer.status).toBe(502)
        expect(JSON.parse(answer.text).error).toEqual(disconnected)
      })))

  it.effect("headers, then the connection breaks off before any byte of the body: 502 upstream_disconnected (streamed and whole)", () =>
    withScriptedGateway([true, false].map((stream) => (_request, response) => {
      response.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" })
      response.flushHeaders()
      setTimeout(() => response.socket?.destroy(), 50)
    }), {}, (url) =>
      Effect.gen(function*() {
        for (const stream of [true, false]) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
          expect(answer.status).toBe(502)
          expect(JSON.parse(answer.text).error).toEqual(disconnected)
        }
      })))

  it.effect("an answer whose done events exceed 64 KiB of SSE: every event up to response.completed is sent", () => {
    // 2,000 deltas of 50 characters: output_text.done, content_part.done, output_item.done and
    // response.completed each repeat 100,000 characters, so their frames are written one at a time.
    const delta = "0123456789".repeat(5)
    return withScriptedGateway([sse(...Array.from({ length: 2_000 }, () => textChunk(delta)), finishChunks())], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const frames = parseSse(answer.text)
        expect(frames.at(-1)?.event).toBe("response.completed")
        const response = checkLifecycle(frames)
        expect(response.status).toBe("completed")
        expect(frames.find((frame) => frame.event === "response.output_text.done")?.data["text"]).toBe(delta.repeat(2_000))
      }))
  })

  it.effect("a non-streamed answer: with a content-length when small, written in pieces when its text is large (a 4 MB text arrives whole)", () => {
    const large = "😀 \"quoted\"\n".repeat(300_000)
    return withScriptedGateway([completion({ role: "assistant", content: "small" }), completion({ role: "assistant", content: large })], {}, (url) =>
      Effect.gen(function*() {
        const small = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(small.headers.get("content-type")).toMatch(/^application\/json/)
        expect(Number(small.headers.get("content-length"))).toBe(Buffer.byteLength(small.text))
        expect(JSON.parse(small.text).output[0].content[0].text).toBe("small")
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(answer.status).toBe(200)
        expect(answer.headers.get("content-type")).toMatch(/^application\/json/)
        expect(answer.headers.get("content-length")).toBeNull()
        const response = JSON.parse(answer.text)
        expect(response.status).toBe("completed")
        expect(response.output[0].content[0].text === large).toBe(true)
      }))
  })

  it.effect("the upstream is asked for an uncompressed answer (accept-encoding: identity): a server free to compress answers plain", () => {
    // a server that compresses unless told not to, as RFC 9110 lets one without accept-encoding
    const compressing = (body: string, type: string) => (request: IncomingMessage, response: ServerResponse) => {
      if (request.headers["accept-encoding"] === "identity") {
        response.writeHead(200, { "content-type": type })
        response.end(body)
      } else {
        response.writeHead(200, { "content-type": type, "content-encoding": "gzip" })
        response.end(gzipSync(body))
      }
    }
    const whole = JSON.stringify({
      id: "chatcmpl-z",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: "plain" }, finish_reason: "stop" }]
    })
    return withScriptedGateway([
      compressing(textChunk("plain") + finishChunks(), "text/event-stream"),
      compressing(whole, "application/json")
    ], {}, (url) =>
      Effect.gen(function*() {
        const streamed = checkLifecycle(parseSse((yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })).text))
        expect(streamed).toMatchObject({ status: "completed", output: [{ content: [{ text: "plain" }] }] })
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(answer.status).toBe(200)
        expect(JSON.parse(answer.text)).toMatchObject({ status: "completed", output: [{ content: [{ text: "plain" }] }] })
      }))
  })

  it.effect("an upstream that gzips whatever it is asked (a proxy ignoring accept-encoding: identity): the recorded answers read as they do plain", () => {
    const chunks = readFixture("chat-sse/pai-chat-gpt4omini-text-usage.sse")
    const whole = readFixture("chat-json/pai-chat-gpt4o-tool-call.json")
    const answer = (body: string, type: string, gzip: boolean) => (_request: IncomingMessage, response: ServerResponse) => {
      response.writeHead(200, { "content-type": type, ...(gzip ? { "content-encoding": "gzip" } : {}) })
      response.end(gzip ? gzipSync(body) : body)
    }
    // ids and times are the gateway's own, made anew per response
    const comparable = (response: { readonly [key: string]: unknown }) => ({
      ...response,
      id: undefined,
      created_at: undefined,
      completed_at: undefined,
      output: (response.output as ReadonlyArray<object>).map((item) => ({ ...item, id: undefined, call_id: undefined }))
    })
    return withScriptedGateway([
      answer(chunks, "text/event-stream", true),
      answer(chunks, "text/event-stream", false),
      answer(whole, "application/json", true),
      answer(whole, "application/json", false)
    ], {}, (url) =>
      Effect.gen(function*() {
        const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const plainStreamed = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        const decoded = checkLifecycle(parseSse(streamed.text))
        expect(decoded.status).toBe("completed")
        expect(comparable(decoded)).toEqual(comparable(checkLifecycle(parseSse(plainStreamed.text))))
        const answered = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        const plain = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(answered.status).toBe(200)
        expect(comparable(JSON.parse(answered.text))).toEqual(comparable(JSON.parse(plain.text)))
      }))
  })

  it.effect("an upstream answer in a content-encoding the gateway does not decode: 502 naming it, no bytes of the body", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-encoding": "compress" })
      response.end(gzipSync(readFixture("chat-json/pai-chat-gpt4o-tool-call.json")))
    }], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(answer.status).toBe(502)
        const message: string = JSON.parse(answer.text).error.message
        expect(message).toContain("content-encoding compress, which this client does not decode")
        expect(message).not.toMatch(/[\u0000-\u0008\u001f\ufffd]/)
      })))

  it.effect("a 200 text/html answer to a stream: 502 naming the content type, not a truncated stream", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end("<html><body>Sign in</body></html>")
    }], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        expect(answer.status).toBe(502)
        const error = JSON.parse(answer.text).error
        expect(error.message).toContain("content-type text/html")
        expect(error.message).not.toContain("truncated")
      })))

  it.effect("a 200 HTML page without a content-type, asked for a stream: 502 saying it is not an event stream, with its first line", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(200, {})
      response.end("<!doctype html>\n<html><body>Sign in</body></html>\n")
    }], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        expect(answer.status).toBe(502)
        const error = JSON.parse(answer.text).error
        expect(error.message).toContain("the body is not an event stream")
        expect(error.message).toContain("<!doctype html>")
        expect(error.message).not.toContain("truncated")
      })))

  it.effect("6.5 MB of binary as a 200 event stream: 502 saying it is not an event stream and how much arrived, not a truncated stream of 0 events", () =>
    withScriptedGateway([(_request, response) => {
      // the new-user tester's upstream: 100 pieces of 64 KiB, piece i all bytes i (10 and 13 end lines, the
      // rest is one line that never ends)
      response.writeHead(200, { "content-type": "text/event-stream" })
      for (let i = 0; i < 100; i++) response.write(Buffer.alloc(65536, i))
      response.end()
    }], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        expect(answer.status).toBe(502)
        const error = JSON.parse(answer.text).error
        expect(error.message).toContain(
          "the body is not an event stream: no event in its 6553600 characters, and its last line (5636096 characters) has no line ending"
        )
        expect(error.message).not.toContain("truncated")
        expect(error.message).not.toContain("before any chunk")
      })))

  it.effect("a 429: status, retry-after(-ms) and the request id passed on; the gateway does not retry (1 attempt)", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(429, { "content-type": "application/json", "retry-after": "7", "x-request-id": "req_upstream_1" })
      response.end(JSON.stringify({ error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" } }))
    }], {}, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
        expect(answer.status).toBe(429)
        expect(answer.headers.get("retry-after")).toBe("7")
        expect(answer.headers.get("retry-after-ms")).toBe("7000")
        expect(answer.headers.get("x-request-id")).toBe("req_upstream_1")
        expect(JSON.parse(answer.text).error).toMatchObject({ code: "rate_limit_exceeded", message: "Rate limit reached" })
        expect(received).toHaveLength(1)
        // the official SDK sees the request id on its error
        const error = yield* Effect.promise(() =>
          new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }).responses.create({ model: "m", input: "hi" }).catch((e) => e)
        )
        expect(error).toBeInstanceOf(OpenAI.RateLimitError)
        expect((error as InstanceType<typeof OpenAI.RateLimitError>).requestID).toBe("req_upstream_1")
      })))

  it.effect("a 503 with a retry-after-ms under a second: the 502 passes the wait on in milliseconds, retry-after rounded up to a whole second, and the request id (streamed and whole)", () =>
    withScriptedGateway([(_request, response) => {
      // a wait the seconds header cannot hold: 250 ms; retry-after 0 beside it, as a server rounding down writes it
      response.writeHead(503, {
        "content-type": "application/json",
        "retry-after": "0",
        "retry-after-ms": "250",
        "x-request-id": "req_upstream_503"
      })
      response.end(JSON.stringify({ error: { message: "overloaded", type: "server_error", param: null, code: null } }))
    }], {}, (url, received) =>
      Effect.gen(function*() {
        for (const stream of [true, false]) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
          expect(answer.status).toBe(502)
          expect(answer.headers.get("retry-after-ms")).toBe("250")
          // never 0: a client reading only retry-after would retry at once
          expect(answer.headers.get("retry-after")).toBe("1")
          expect(answer.headers.get("x-request-id")).toBe("req_upstream_503")
        }
        // the official SDK's error carries them (it waits retry-after-ms before it retries)
        const error = yield* Effect.promise(() =>
          new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }).responses.create({ model: "m", input: "hi" }).catch((e) => e)
        )
        expect(error).toBeInstanceOf(OpenAI.InternalServerError)
        const apiError = error as InstanceType<typeof OpenAI.InternalServerError>
        expect(apiError.requestID).toBe("req_upstream_503")
        expect(apiError.headers.get("retry-after-ms")).toBe("250")
        expect(received).toHaveLength(3)
      })))

  it.effect("an upstream 401 or 403 (the gateway's upstream key refused): 502 upstream_auth_failed, not the client's 401", () => {
    // OpenAI's answer to a wrong key (API reference, "Error codes": 401 "Incorrect API key provided"), with an
    // invented key, and a 403 of a model the key may not use
    const refusal = (status: number, code: string, message: string) => (_request: unknown, response: ServerResponse) => {
      response.writeHead(status, { "content-type": "application/json", "x-request-id": `req_upstream_${status}` })
      response.end(JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } }))
    }
    const wrongKey = "Incorrect API key provided: sk-upstr*********1234."
    return withScriptedGateway([
      refusal(401, "invalid_api_key", wrongKey),
      refusal(401, "invalid_api_key", wrongKey),
      refusal(403, "model_not_allowed", "You are not allowed to sample from this model"),
      refusal(401, "invalid_api_key", wrongKey)
    ], {}, (url, received) =>
      Effect.gen(function*() {
        for (const [stream, status] of [[true, 401], [false, 401], [true, 403]] as const) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
          expect(answer.status).toBe(502)
          expect(answer.headers.get("x-request-id")).toBe(`req_upstream_${status}`)
          const error = JSON.parse(answer.text).error
          expect(error).toMatchObject({ type: "server_error", param: null, code: "upstream_auth_failed" })
          expect(error.message).toContain(`${Gateway.UPSTREAM_AUTH_FAILED} (HTTP ${status}): `)
          expect(error.message).toContain(status === 401 ? wrongKey : "not allowed to sample")
        }
        // the official SDK reports a server error, not an AuthenticationError about the client's own key
        const error = yield* Effect.promise(() =>
          new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }).responses.create({ model: "m", input: "hi" }).catch((e) => e)
        )
        expect(error).toBeInstanceOf(OpenAI.InternalServerError)
        expect(error).not.toBeInstanceOf(OpenAI.AuthenticationError)
        expect(received).toHaveLength(4)
      }))
  })

  live("--upstream-retries: retries when asked (2 retries -> 3 attempts)", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(503, { "content-type": "application/json", "retry-after-ms": "10" })
      response.end(JSON.stringify({ error: { message: "overloaded" } }))
    }], { upstream: { retry: { times: 2 } } }, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
        expect(answer.status).toBe(502)
        expect(received).toHaveLength(3)
      })))

  it.effect("a 10 MB upstream error message: read up to a bound, capped in the answer and in the log", () =>
    Effect.gen(function*() {
      const huge = "x".repeat(10 * 1024 * 1024)
      const { logs } = yield* withLoggedGateway([(_request, response) => {
        response.writeHead(500, { "content-type": "application/json" })
        response.end(JSON.stringify({ error: { message: huge, type: "server_error" } }))
      }], {}, (url) =>
        Effect.gen(function*() {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
          expect(answer.status).toBe(502)
          // the transport read 64 KiB of the body, which is no longer JSON and whose message is not whole in it
          expect(answer.text.length).toBeLessThan(Gateway.MAX_MESSAGE_CHARS + 500)
          expect(JSON.parse(answer.text).error.message).toMatch(
            /^the upstream failed: the error body was cut at 65536 bytes: \{"error":\{"message":"x+… \(\d+ more characters\)$/
          )
        }))
      const warnings = logs.filter((line) => line.includes("upstream error"))
      expect(warnings.length).toBeGreaterThan(0)
      for (const line of logs) expect(line.length).toBeLessThan(Gateway.MAX_MESSAGE_CHARS + 500)
    }))

  it.effect("a long upstream error message is cut once at 2,000 characters, counting what was cut of the original", () =>
    Effect.gen(function*() {
      // the recorded error body, its message made 3,000 characters
      const recorded = JSON.parse(readFixture("chat-json/pai-chat-error-400-o1mini-system-role.json")) as {
        error: { message: string }
      }
      const message = recorded.error.message.repeat(100).slice(0, 3000)
      const body = JSON.stringify({ error: { ...recorded.error, message } })
      const answering = (status: number, contentType: string, text: string): Handler => (_request, response) => {
        response.writeHead(status, { "content-type": contentType })
        response.end(text)
      }
      // the same body padded past the 64 KiB the transport reads, after its message
      const padded = JSON.stringify({ error: { ...recorded.error, message, detail: "d".repeat(70_000) } })
      const script = [
        answering(400, "application/json", body),
        answering(500, "application/json", body),
        answering(500, "text/plain", message),
        answering(500, "application/json", padded)
      ]
      const { logs } = yield* withLoggedGateway(script, {}, (url) =>
        Effect.gen(function*() {
          const messages: Array<string> = []
          for (let i = 0; i < script.length; i++) {
            const answer = yield* post(`${url}/responses`, { model: "m", input: "hi" })
            messages.push(JSON.parse(answer.text).error.message)
          }
          const prefix = "the upstream failed: "
          expect(messages[0]).toBe(`${message.slice(0, 2000)}… (1000 more characters)`)
          for (const text of messages.slice(1)) {
            expect(text).toBe(`${prefix}${message.slice(0, 2000 - prefix.length)}… (${1000 + prefix.length} more characters)`)
          }
        }))
      // the log line: the HttpError's message, `HTTP 500: ` before the cut message and its details after,
      // cut again with one count of both cuts and the details
      const details = " (invalid_request_error, unsupported_value, param messages[0].role)"
      const warning = logs.find((line) => line.startsWith("WARN: upstream error") && line.includes("): HTTP 500: "))
      expect(warning?.slice(warning.indexOf("): ") + 3)).toBe(
        `HTTP 500: ${message.slice(0, 1990)}… (${1000 + "HTTP 500: ".length + details.length} more characters)`
      )
    }))

  it.effect("an upstream error message of emoji cut at 2,000 characters: the cut never splits a surrogate pair (client message, stream or not, and log line)", () =>
    Effect.gen(function*() {
      // the recorded error body, its message `a` and 1,500 x U+1F600: code unit 1,999 is a high surrogate
      const recorded = JSON.parse(readFixture("chat-json/pai-chat-error-400-o1mini-system-role.json")) as {
        error: { message: string }
      }
      const message = `a${"\u{1F600}".repeat(1500)}`
      const body = JSON.stringify({ error: { ...recorded.error, message } })
      const answering = (status: number): Handler => (_request, response) => {
        response.writeHead(status, { "content-type": "application/json" })
        response.end(body)
      }
      const lone = /\p{Cs}/u
      const { logs } = yield* withLoggedGateway([answering(400), answering(400), answering(500)], {}, (url) =>
        Effect.gen(function*() {
          const messages: Array<string> = []
          for (const stream of [false, true, false]) {
            const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
            messages.push(JSON.parse(answer.text).error.message)
          }
          expect(messages[0]).toBe(`${message.slice(0, 1999)}… (1002 more characters)`)
          expect(messages[1]).toBe(messages[0])
          // `the upstream failed: ` (21 characters) before it: the cut falls between two pairs
          expect(messages[2]).toBe(`the upstream failed: ${message.slice(0, 1979)}… (1022 more characters)`)
        }))
      // the log line: `HTTP 500: ` before the cut message and its details after, cut again on a high surrogate
      const details = " (invalid_request_error, unsupported_value, param messages[0].role)"
      const warning = logs.find((line) => line.startsWith("WARN: upstream error") && line.includes("): HTTP 500: "))
      expect(warning).toBeDefined()
      expect(lone.test(warning!)).toBe(false)
      expect(warning!.slice(warning!.indexOf("): ") + 3)).toBe(`HTTP 500: ${message.slice(0, 1989)}… (${1012 + details.length} more characters)`)
    }))

  it.effect("deep nesting: 400 nesting_too_deep at 10,000 and at 100 levels, without echoing the value", () =>
    withScriptedGateway([sse(textChunk("ok"), finishChunks())], {}, (url) =>
      Effect.gen(function*() {
        for (const levels of [10_000, 100]) {
          const metadata = `${"{\"a\":".repeat(levels)}1${"}".repeat(levels)}`
          const answer = yield* post(`${url}/responses`, `{"model":"m","input":"hi","metadata":${metadata}}`)
          expect(answer.status).toBe(400)
          const error = JSON.parse(answer.text).error
          expect(error).toMatchObject({ type: "invalid_request_error", code: "nesting_too_deep", param: null })
          expect(answer.text.length).toBeLessThan(500)
        }
        // a wrong value within the depth bound: a 400 whose message does not echo the whole value
        const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, { deep: [i] }]))
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", metadata: wide })
        expect(answer.status).toBe(400)
        expect(answer.text.length).toBeLessThan(1000)
      })))

  it.effect("an object of more than 5,000 properties (a schema's) or more than 10,000 tools: 400 naming the parameter, checked before parsing", () =>
    withScriptedGateway([sse(textChunk("ok"), finishChunks())], {}, (url) =>
      Effect.gen(function*() {
        const schema = (n: number) => ({
          type: "object",
          properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: "string" }]))
        })
        const tool = (name: string, parameters: object) => ({ type: "function", name, parameters })
        const refusals = [
          [{ text: { format: { type: "json_schema", name: "s", schema: schema(5001) } } }, "text", "object_above_max_properties"],
          [{ tools: [tool("a", schema(1)), tool("b", schema(1)), tool("c", schema(5001))] }, "tools[2]", "object_above_max_properties"],
          [{ tools: Array.from({ length: 10_001 }, (_, i) => tool(`f${i}`, schema(1))) }, "tools", "array_above_max_length"]
        ] as const
        for (const [fields, param, code] of refusals) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", ...fields })
          expect(answer.status, param).toBe(400)
          expect(JSON.parse(answer.text).error).toMatchObject({ type: "invalid_request_error", param, code })
          expect(answer.text.length).toBeLessThan(500)
        }
        // on the text, before it is parsed: a body malformed after such an object gets the bound's 400
        const body = JSON.stringify({ model: "m", input: "hi", text: { format: { type: "json_schema", name: "s", schema: schema(5001) } } })
        const malformed = yield* post(`${url}/responses`, `${body.slice(0, -1)},}`)
        expect(JSON.parse(malformed.text).error).toMatchObject({ param: "text", code: "object_above_max_properties" })
        const within = yield* post(`${url}/responses`, {
          model: "m",
          input: "hi",
          stream: true,
          text: { format: { type: "json_schema", name: "s", schema: schema(5000) } }
        })
        expect(within.status, within.text).toBe(200)
      })))

  it.effect("an array of more than 100,000 elements anywhere (issue 15: an unknown field, a schema's enum, a tool's parameters): 400 naming the parameter, checked before parsing; one within is echoed whole", () =>
    withScriptedGateway([sse(textChunk("ok"), finishChunks())], {}, (url) =>
      Effect.gen(function*() {
        // the tester's body, as sent: a flat array of zeros in an unknown field
        const zeros = (n: number) => `[${"0,".repeat(n - 1)}0]`
        const tool = (values: string) => `{"type":"function","name":"f","parameters":{"type":"object","properties":{"x":{"enum":${values}}}}}`
        const refusals = [
          [`{"model":"m","input":"hi","client_blob":${zeros(100_001)}}`, "client_blob"],
          [`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"x","schema":{"enum":${zeros(100_001)}}}}}`, "text"],
          [`{"model":"m","input":"hi","tools":[${tool("[1]")},${tool(zeros(100_001))}]}`, "tools[1]"],
          [`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi","x":${zeros(100_001)}}]}]}`, "input[0]"],
          [`{"model":"m","input":${zeros(100_001)}}`, "input"],
          [`{"model":"m","input":"hi","metadata":{"a":[${zeros(10)},${zeros(100_001)}]}}`, "metadata"]
        ] as const
        for (const [body, param] of refusals) {
          const answer = yield* post(`${url}/responses`, body)
          expect(answer.status, param).toBe(400)
          expect(JSON.parse(answer.text).error, param).toEqual({
            message: `Invalid '${param}': array too long. Expected an array with maximum length 100000, but got an array with more than 100000 elements instead.`,
            type: "invalid_request_error",
            param,
            code: "array_above_max_length"
          })
        }
        const top = yield* post(`${url}/responses`, zeros(100_001))
        expect(JSON.parse(top.text).error).toMatchObject({ param: null, code: "array_above_max_length" })
        // within the bound, and 1.6 million values in arrays each within it: parsed (in runs), the enum echoed whole
        const within = yield* post(`${url}/responses`, `{"model":"m","input":"hi","stream":true,"text":{"format":{"type":"json_schema","name":"x","schema":{"enum":${zeros(100_000)}}}}}`)
        expect(within.status, within.text.slice(0, 300)).toBe(200)
        const completed = within.text.split("\n").find((line) => line.startsWith("data: {\"type\":\"response.completed\""))!
        const echoed = JSON.parse(completed.slice(6)) as { response: { text: { format: { schema: { enum: Array<number> } } } } }
        expect(echoed.response.text.format.schema.enum).toEqual(Array.from({ length: 100_000 }, () => 0))
        const nested = yield* post(`${url}/responses`, `{"model":"m","input":"hi","stream":true,"client_blob":[${Array.from({ length: 20 }, () => zeros(78_000)).join(",")}]}`)
        expect(nested.status, nested.text.slice(0, 300)).toBe(200)
      })))

  it.effect("a metadata value past the API's 512 characters: 400 string_above_max_length naming it, the value not echoed", () =>
    withScriptedGateway([sse(textChunk("ok"), finishChunks())], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, metadata: { trace: "x".repeat(100_000) } })
        expect(answer.status).toBe(400)
        expect(JSON.parse(answer.text).error).toMatchObject({ param: "metadata.trace", code: "string_above_max_length" })
        expect(answer.text.length).toBeLessThan(500)
      })))

  it.effect("more input items, or content parts in one item, than the bound: 400 array_above_max_length naming them", () =>
    withScriptedGateway([sse(textChunk("ok"), finishChunks())], {}, (url) =>
      Effect.gen(function*() {
        const items = Array.from({ length: 20_001 }, () => ({ role: "user", content: "x" }))
        const answer = yield* post(`${url}/responses`, { model: "m", input: items })
        expect(answer.status).toBe(400)
        expect(JSON.parse(answer.text).error).toMatchObject({ param: "input", code: "array_above_max_length" })
        // the content parts of one item, and a function call output's parts, are bounded alike
        const parts = Array.from({ length: 20_001 }, () => ({ type: "input_text", text: "p" }))
        const inputs = [
          [{ role: "user", content: "q" }, { role: "user", content: parts }],
          [
            { role: "user", content: "q" },
            { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
            { type: "function_call_output", call_id: "c", output: parts }
          ]
        ]
        for (const [input, param] of [[inputs[0], "input[1].content"], [inputs[1], "input[2].output"]] as const) {
          const refused = yield* post(`${url}/responses`, { model: "m", input })
          expect(refused.status).toBe(400)
          expect(JSON.parse(refused.text).error).toMatchObject({ param, code: "array_above_max_length" })
        }
        const within = yield* post(`${url}/responses`, { model: "m", stream: true, input: [{ role: "user", content: parts.slice(1) }] })
        expect(within.status, within.text).toBe(200)
      })))

  live("a request body that never ends (Content-Length or chunked): 408 request_timeout in OpenAI's shape, the connection closed", () =>
    withScriptedGateway([sse(textChunk("never asked"), finishChunks())], { gateway: { bodyTimeout: "300 millis" } }, (url, received) =>
      Effect.promise(async () => {
        const { hostname, port } = new URL(url)
        const heads = [
          "Content-Length: 100\r\n\r\n{\"model\":\"m\",",
          "Transfer-Encoding: chunked\r\n\r\n8\r\n{\"model\"\r\n"
        ]
        for (const head of heads) {
          const socket = connect(Number(port), hostname)
          let answer = ""
          socket.on("data", (data) => (answer += data.toString()))
          const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()))
          socket.write(`POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${head}`)
          const started = Date.now()
          // the client sends nothing more and keeps its side open: the gateway answers and closes
          await closed
          expect(Date.now() - started).toBeLessThan(5_000)
          expect(answer).toMatch(/^HTTP\/1\.1 408 /)
          expect(answer.toLowerCase()).toContain("connection: close")
          expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
            error: {
              message: expect.stringContaining("did not arrive whole within 300ms"),
              type: "invalid_request_error",
              param: null,
              code: "request_timeout"
            }
          })
        }
        expect(received).toHaveLength(0)
      })))

  live("a Content-Length over the bound with no body: 413 at once with connection: close, and the connection closed (the body is never read)", () =>
    withScriptedGateway([sse(textChunk("never asked"), finishChunks())], { gateway: { bodyTimeout: "1 hour" } }, (url, received) =>
      Effect.promise(async () => {
        const { hostname, port } = new URL(url)
        const socket = connect(Number(port), hostname)
        let answer = ""
        socket.on("data", (data) => (answer += data.toString()))
        const ended = new Promise<void>((resolve) => socket.on("end", () => resolve()))
        // the client declares a gigabyte, sends none of it and keeps its side open
        socket.write("POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
        await ended
        socket.destroy()
        expect(answer).toMatch(/^HTTP\/1\.1 413 /)
        const head = answer.slice(0, answer.indexOf("\r\n\r\n")).toLowerCase()
        expect(head).toContain("connection: close")
        expect(head).not.toContain("keep-alive")
        expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).error).toMatchObject({ code: "request_too_large" })
        expect(received).toHaveLength(0)
      })))

  live("a body more than the drain bound (64 MiB) past the bound, still being sent (Content-Length, chunked): the 413 and a FIN reach the client, no reset while it sends", () =>
    withScriptedGateway([sse(textChunk("never asked"), finishChunks())], { gateway: { bodyTimeout: "1 minute", maxBodyBytes: 1024 } }, (url, received) =>
      Effect.promise(async () => {
        // By Content-Length the body is never read and the connection is closed after the 413 (`connection: close`);
        // chunked, the 413 comes at the bound, 64 MiB more are read and discarded, and the connection is closed then.
        // Closed at once (Node's `destroySoon`, the drain's `destroy`) with the client's bytes unread, the kernel
        // reset the connection on the client's next segment: its write still in progress failed (EPIPE), and a
        // client that stops at a failed write never read the 413 waiting in its socket (undici: "fetch failed", 1-2
        // of 3 tries against `serve`; the openai SDK: "Connection error.")
        const { hostname, port } = new URL(url)
        const chunk = (bytes: Buffer) => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")])
        const mebibyte = Buffer.alloc(1024 * 1024, 0x78)
        const cases = [
          // more than the sockets' buffers hold, so that the write is still in progress when the gateway closes
          ["content-length", `Content-Length: ${1024 + 65 * 1024 * 1024}`, Buffer.alloc(16 * 1024 * 1024, 0x78)],
          // past the bound and the drain bound, and more
          ["chunked", "Transfer-Encoding: chunked", Buffer.concat(Array.from({ length: 72 }, () => chunk(mebibyte)))]
        ] as const
        for (const [name, head, body] of cases) {
          const socket = connect(Number(port), hostname)
          let answer = ""
          const events: Array<string> = []
          socket.on("data", (data) => (answer += data.toString()))
          socket.on("error", (error: NodeJS.ErrnoException) => events.push(`error ${error.code}`))
          const ended = new Promise<void>((resolve) => socket.on("end", () => resolve()))
          const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()))
          socket.write(`POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${head}\r\n\r\n`)
          socket.write(body)
          await Promise.race([ended, closed])
          events.push("end")
          // the client still sends a while after the answer and the FIN: no reset (before, its next segment got one);
          // the gateway's linger timer (`LINGER_MILLIS`, 2 s) was set before this one, in this process, 10 times longer
          await new Promise((resolve) => setTimeout(resolve, 200))
          socket.destroy()
          await closed
          expect(events, name).toEqual(["end"])
          expect(answer, name).toMatch(/^HTTP\/1\.1 413 /)
          expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).error, name).toMatchObject({ code: "request_too_large" })
        }
        expect(received).toHaveLength(0)
      })))

  live("a Content-Length over the bound by less than the drain bound, the body being sent: 413 at once, the body drained, the connection usable after it", () =>
    withScriptedGateway([sse(textChunk("never asked"), finishChunks())], { gateway: { bodyTimeout: "10 seconds", maxBodyBytes: 1024 } }, (url, received) =>
      Effect.promise(async () => {
        const { hostname, port } = new URL(url)
        const socket = connect(Number(port), hostname)
        let answer = ""
        const arrived: Array<() => void> = []
        socket.on("data", (data) => {
          answer += data.toString()
          for (const wake of arrived.splice(0)) wake()
        })
        const answers = async (count: number) => {
          while ((answer.match(/HTTP\/1\.1 /g) ?? []).length < count || !answer.trimEnd().endsWith("}")) {
            await new Promise<void>((wake) => arrived.push(wake))
          }
        }
        const body = `{"model":"m","input":"${"x".repeat(5000)}"}`
        socket.write(
          `POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 100)}`
        )
        // the 413 comes before the body is sent whole, without connection: close
        await answers(1)
        expect(answer).toMatch(/^HTTP\/1\.1 413 /)
        expect(answer.toLowerCase()).not.toContain("connection: close")
        socket.write(body.slice(100))
        socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        await answers(2)
        expect(answer.slice(answer.lastIndexOf("HTTP/1.1 "))).toMatch(/^HTTP\/1\.1 200 /)
        socket.destroy()
        expect(received).toHaveLength(0)
      })))

  live("a chunked body past the bound, still being sent: 413 at once (not a 408 at the body timeout); the rest drained, the connection usable once the body ends", () =>
    withScriptedGateway([sse(textChunk("never asked"), finishChunks())], { gateway: { bodyTimeout: "10 seconds", maxBodyBytes: 1024 } }, (url, received) =>
      Effect.promise(async () => {
        const { hostname, port } = new URL(url)
        const socket = connect(Number(port), hostname)
        let answer = ""
        const arrived: Array<() => void> = []
        socket.on("data", (data) => {
          answer += data.toString()
          for (const wake of arrived.splice(0)) wake()
        })
        /** Waits until what arrived holds `count` whole answers (each a JSON body ending in a newline-free `}`). */
        const answers = async (count: number) => {
          while ((answer.match(/HTTP\/1\.1 /g) ?? []).length < count || !answer.trimEnd().endsWith("}")) {
            await new Promise<void>((wake) => arrived.push(wake))
          }
        }
        const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`
        socket.write(
          "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
            chunk(`{"model":"m","input":"${"x".repeat(2000)}`)
        )
        // the body is not over: the 413 comes while the client still sends
        await answers(1)
        expect(answer).toMatch(/^HTTP\/1\.1 413 /)
        expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).error).toMatchObject({ code: "request_too_large" })
        // the rest of the body is read and discarded; once it ends, the connection serves the next request
        socket.write(chunk("x".repeat(5000)) + chunk("\"}") + "0\r\n\r\n")
        socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        await answers(2)
        expect(answer.slice(answer.lastIndexOf("HTTP/1.1 "))).toMatch(/^HTTP\/1\.1 200 /)
        socket.destroy()
        expect(received).toHaveLength(0)
      })))

  live("a body timeout longer than a JS timer waits (30 days, infinity) is no bound: a body that arrives in two writes is answered, not a 408 after 1 ms", () =>
    Effect.forEach(["30 days", Duration.infinity] as const, (bodyTimeout) =>
      withScriptedGateway([sse(textChunk("ok"), finishChunks())], { gateway: { bodyTimeout } }, (url) =>
        Effect.promise(async () => {
          const { hostname, port } = new URL(url)
          const body = JSON.stringify({ model: "m", input: "hi", stream: true })
          const socket = connect(Number(port), hostname)
          let answer = ""
          socket.on("data", (data) => (answer += data.toString()))
          const answered = new Promise<void>((resolve) => socket.on("data", () => answer.includes("\r\n\r\n") && resolve()))
          socket.write(`POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`)
          // the rest once the gateway has read the first part
          await new Promise((resolve) => setTimeout(resolve, 200))
          socket.write(body.slice(10))
          await answered
          socket.destroy()
          expect(answer, String(bodyTimeout)).toMatch(/^HTTP\/1\.1 200 /)
        })), { discard: true }))

  live("a large legal request does not hold up /health: it is answered while the items are decoded", () =>
    withScriptedGateway([sse(textChunk("ok"), finishChunks())], { gateway: { maxInputItems: 50_000 } }, (url, received) =>
      Effect.promise(async () => {
        const items = Array.from({ length: 50_000 }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `item ${i}` }))
        const order: Array<string> = []
        const big = post(`${url}/responses`, { model: "m", input: items, stream: true }).pipe(Effect.runPromise).then(() =>
          order.push("big")
        )
        // once the big body is sent, ask for /health until the upstream sees the big request
        await new Promise((resolve) => setTimeout(resolve, 50))
        const health = await fetch(`${url.replace(/\/v1$/, "")}/health`)
        expect(health.status).toBe(200)
        order.push(received.length === 0 ? "health before the upstream call" : "health after the upstream call")
        await big
        expect(order[0]).toBe("health before the upstream call")
      })))

  live("the access log: one info line per request, a stream's once it ended, with model, attempts, response id and outcome, no body", () => {
    const ids: Array<string> = []
    return withLoggedGateway([
      (_request, response) => {
        response.writeHead(503, { "content-type": "application/json", "retry-after-ms": "5" })
        response.end(JSON.stringify({ error: { message: "overloaded" } }))
      },
      sse(textChunk("secret answer"), finishChunks()),
      sse(textChunk("part"), "data: {\"error\":{\"message\":\"boom\",\"code\":500}}\n\n"),
      completion({ content: "cut" }, "length")
    ], { upstream: { retry: { times: 1 } } }, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "gpt-x", input: "secret question", stream: true })
        expect(answer.status).toBe(200)
        ids.push(checkLifecycle(parseSse(answer.text)).id as string)
        yield* Effect.promise(() => fetch(`${url.replace(/\/v1$/, "")}/health`))
        // refused after its body was read: the line still names the model
        const refused = yield* post(`${url}/responses`, { model: "gpt-y", input: [{ type: "secret_item" }], stream: true })
        expect(refused.status).toBe(400)
        // a stream that failed after its 200: the line says so
        const failed = checkLifecycle(parseSse((yield* post(`${url}/responses`, { model: "gpt-z", input: "hi", stream: true })).text))
        expect(failed.status).toBe("failed")
        ids.push(failed.id as string)
        const incomplete = JSON.parse((yield* post(`${url}/responses`, { model: "gpt-z", input: "hi" })).text)
        expect(incomplete.status).toBe("incomplete")
        ids.push(incomplete.id)
      })).pipe(
        Effect.andThen(({ access, logs }) => {
          expect(access, logs.join("\n")).toHaveLength(5)
          const tail = (id: string | undefined, outcome: string) => `response=${id ?? "-"} outcome=${outcome}`
          expect(access[0]).toMatch(
            /^INFO: access: POST \/v1\/responses 200 model="gpt-x" stream=true duration=\d+ms upstream_attempts=2 /
          )
          expect(access[0]).toContain(tail(ids[0], "completed"))
          expect(access[1]).toMatch(/^INFO: access: GET \/health 200 model=- stream=- duration=\d+ms upstream_attempts=- response=- outcome=-$/)
          expect(access[2]).toMatch(
            /^INFO: access: POST \/v1\/responses 400 model="gpt-y" stream=true duration=\d+ms upstream_attempts=- response=- outcome=-$/
          )
          expect(access[3]).toMatch(/^INFO: access: POST \/v1\/responses 200 model="gpt-z" stream=true /)
          expect(access[3]).toContain(tail(ids[1], "failed"))
          expect(access[4]).toMatch(/^INFO: access: POST \/v1\/responses 200 model="gpt-z" stream=false /)
          expect(access[4]).toContain(tail(ids[2], "incomplete"))
          // the warning about the upstream's error names the response it broke
          expect(logs.find((line) => line.includes("upstream error"))).toContain(`upstream error (${ids[1]}): `)
          expect(logs.join("\n")).not.toContain("secret")
        })
      )
  })

  live("the access log of a request whose client went away before the answer: status 499 (client closed request), not 'failed'", () => {
    return withLoggedGateway([() => {}], {}, (url, received, captured) =>
      Effect.promise(async () => {
        for (const stream of [true, false]) {
          const client = new AbortController()
          const answer = postAbortably(url, { model: "gpt-x", input: "hi", stream }, client).catch(() => "aborted")
          // the upstream holds the request (no headers, within the default timeouts) until the client leaves
          while (received.length === (stream ? 0 : 1)) await new Promise((resolve) => setTimeout(resolve, 10))
          client.abort()
          expect(await answer).toBe("aborted")
          await received.at(-1)!.closed
        }
        // the line is written once the handler's interruption has run its finalizers (the upstream call aborted)
        await waitForAccessLines(captured, 2)
      })).pipe(
        Effect.andThen(({ access, logs }) => {
          expect(access, logs.join("\n")).toHaveLength(2)
          expect(access[0]).toMatch(
            /^INFO: access: POST \/v1\/responses 499 model="gpt-x" stream=true duration=\d+ms upstream_attempts=1 response=resp_\w+ outcome=-$/
          )
          expect(access[1]).toMatch(
            /^INFO: access: POST \/v1\/responses 499 model="gpt-x" stream=false duration=\d+ms upstream_attempts=1 response=resp_\w+ outcome=-$/
          )
        })
      )
  })

  live("the access log of a stream its client left mid-answer: the 200 sent and outcome=client_closed", () => {
    // the recorded stream's first half, then the upstream waits (the client leaves meanwhile)
    const frames = readFixture("chat-sse/pai-chat-gpt4omini-text-usage.sse").split("\n\n").filter((frame) => frame !== "")
    const halfThenHold: Handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      for (const frame of frames.slice(0, 6)) response.write(`${frame}\n\n`)
    }
    // an answer whose terminal events (each repeating the whole 2 MiB text) are made before the client takes them
    const large = sse(textChunk("x".repeat(1 << 20)), textChunk("y".repeat(1 << 20)), finishChunks())
    return withLoggedGateway([halfThenHold, large], {}, (url, received, captured) =>
      Effect.promise(async () => {
        for (const before of [1, 3 << 20]) {
          const client = new AbortController()
          const answer = await postAbortably(url, { model: "gpt-x", input: "hi", stream: true }, client)
          expect(answer.status).toBe(200)
          // read `before` bytes of the stream, then leave
          const reader = answer.body!.getReader()
          for (let read = 0; read < before;) read += (await reader.read()).value!.length
          client.abort()
          await received.at(-1)!.closed
        }
        await waitForAccessLines(captured, 2)
      })).pipe(
        Effect.andThen(({ access, logs }) => {
          expect(access, logs.join("\n")).toHaveLength(2)
          for (const line of access) {
            expect(line).toMatch(
              /^INFO: access: POST \/v1\/responses 200 model="gpt-x" stream=true duration=\d+ms upstream_attempts=1 response=resp_\w+ outcome=client_closed$/
            )
          }
        })
      )
  })

  live("the access log of a non-streamed answer its client left mid-body: outcome=client_closed; read whole: completed", () => {
    // the recorded completion, its text repeated to about 4 MiB: the gateway writes its JSON in pieces
    const recorded = JSON.parse(readFixture("chat-json/vai-chat-openai-text.json")) as {
      choices: Array<{ message: { content: string } }>
    }
    const text = recorded.choices[0]!.message.content
    recorded.choices[0]!.message.content = text.repeat(Math.ceil((4 << 20) / text.length))
    const large: Handler = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify(recorded))
    }
    return withLoggedGateway([large, large], {}, (url, received, captured) =>
      Effect.promise(async () => {
        for (const leave of [true, false]) {
          const client = new AbortController()
          const answer = await postAbortably(url, { model: "gpt-x", input: "hi", stream: false }, client)
          expect(answer.status).toBe(200)
          if (leave) {
            // read about 132 KB of the body, then leave
            const reader = answer.body!.getReader()
            for (let read = 0; read < 132_000;) read += (await reader.read()).value!.length
            client.abort()
          } else {
            expect((await answer.text()).length).toBeGreaterThan(4 << 20)
          }
          await received.at(-1)!.closed
          await waitForAccessLines(captured, leave ? 1 : 2)
        }
      })).pipe(
        Effect.andThen(({ access, logs }) => {
          expect(access, logs.join("\n")).toHaveLength(2)
          expect(access[0]).toMatch(
            /^INFO: access: POST \/v1\/responses 200 model="gpt-x" stream=false duration=\d+ms upstream_attempts=1 response=resp_\w+ outcome=client_closed$/
          )
          expect(access[1]).toMatch(
            /^INFO: access: POST \/v1\/responses 200 model="gpt-x" stream=false duration=\d+ms upstream_attempts=1 response=resp_\w+ outcome=completed$/
          )
        })
      )
  })

  it.effect("a defect in the handler: a logged 500 in OpenAI's shape; mid-stream: a logged response.failed", () =>
    Effect.gen(function*() {
      const captured = captureLogs()
      const started = new StreamPart.ResponseStarted({ responseId: "r", model: "m" })
      const text = new StreamPart.PartUpdate({ responseId: "r", outputIndex: 0, partial: true, part: new Part.TextPart({ text: "a" }) })
      const broken = Layer.succeed(
        LanguageModel.LanguageModel,
        LanguageModel.LanguageModel.of({
          generate: () => Effect.die(new Error("boom in generate")),
          stream: () => Stream.concat(Stream.make(started, text), Stream.die(new Error("boom mid-stream")))
        })
      )
      const upstream = Upstream.fromLanguageModel().pipe(Layer.provide(broken))
      yield* withGateway(upstream, {}, (url) =>
        Effect.gen(function*() {
          const whole = yield* post(`${url}/responses`, { model: "m", input: "hi" })
          expect(whole.status).toBe(500)
          expect(JSON.parse(whole.text).error).toMatchObject({ type: "server_error", code: "server_error" })
          const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
          const response = checkLifecycle(parseSse(streamed.text))
          expect(response.error).toMatchObject({ code: "server_error" })
        })).pipe(Effect.provide(captured.layer))
      expect(captured.logs.some((line) => line.startsWith("ERROR") && line.includes("boom in generate"))).toBe(true)
      expect(captured.logs.some((line) => line.startsWith("ERROR") && line.includes("boom mid-stream"))).toBe(true)
    }))

  it.effect("a defect while the gateway makes a chunk's events: the deltas before it, then a logged response.failed server_error", () =>
    Effect.gen(function*() {
      const captured = captureLogs()
      const started = new StreamPart.ResponseStarted({ responseId: "r", model: "m" })
      const text = (delta: string) =>
        new StreamPart.PartUpdate({ responseId: "r", outputIndex: 0, partial: true, part: new Part.TextPart({ text: delta }) })
      // a part whose reading throws: the lifecycle fails while it makes the events of the upstream's third chunk
      const throwing = text("c")
      Object.defineProperty(throwing, "part", {
        get: () => {
          throw new Error("boom in the lifecycle")
        }
      })
      const model = Layer.succeed(
        LanguageModel.LanguageModel,
        LanguageModel.LanguageModel.of({
          generate: () => Effect.die(new Error("not called")),
          // one chunk per element, as an upstream's reads come
          stream: () => Stream.rechunk(Stream.make(started, text("a"), text("b"), throwing, text("d")), 1)
        })
      )
      const upstream = Upstream.fromLanguageModel().pipe(Layer.provide(model))
      yield* withGateway(upstream, {}, (url) =>
        Effect.gen(function*() {
          const streamed = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })
          expect(streamed.status).toBe(200)
          const frames = parseSse(streamed.text)
          const response = checkLifecycle(frames)
          expect(response.error).toMatchObject({ code: "server_error", message: "the gateway failed while streaming the response" })
          expect(frames.filter((frame) => frame.event === "response.output_text.delta").map((frame) => frame.data.delta)).toEqual(["a", "b"])
          expect(frames.map((frame) => frame.event).slice(-2)).toEqual(["error", "response.failed"])
        })).pipe(Effect.provide(captured.layer))
      expect(captured.logs.some((line) => line.startsWith("ERROR") && line.includes("boom in the lifecycle"))).toBe(true)
    }))

  it.effect("long strings (a 600 KB instructions, a tool's description), however the client spelled their escapes: the upstream gets the bytes of JSON.stringify, the answer echoes them as JSON.stringify", () => {
    const instructions = `é😀 "q" a/b\n\\ ${"i".repeat(1000)}`.repeat(600)
    const description = `ü "d" c/d\t ${"d".repeat(1000)}`.repeat(600)
    const request = (stream: boolean) => ({
      model: "m",
      instructions,
      input: "hi",
      stream,
      tools: [{ type: "function", name: "f", description, parameters: { type: "object", properties: {} } }]
    })
    // as JSON.stringify writes them, and with escapes it does not write (`\u00e9`, `\/`, `\u00FC`)
    const spellings = (stream: boolean) => {
      const text = JSON.stringify(request(stream))
      return [text, text.replaceAll("é", "\\u00e9").replaceAll("/", "\\/").replaceAll("ü", "\\u00FC")]
    }
    const answer: Handler = (request, response, body) =>
      body.stream === true ? sse(textChunk("ok"), finishChunks())(request, response, body) : completion({ content: "ok" })(request, response, body)
    return withScriptedGateway([answer], {}, (url, received) =>
      Effect.gen(function*() {
        for (const stream of [false, true]) {
          for (const [index, text] of spellings(stream).entries()) {
            expect(JSON.parse(text)).toEqual(request(stream))
            const reply = yield* post(`${url}/responses`, text)
            expect(reply.status).toBe(200)
            const sent = received.at(-1)!
            expect(sent.text, `stream ${stream}, spelling ${index}`).toBe(JSON.stringify(sent.body))
            expect(sent.body).toMatchObject({
              messages: [{ role: "system", content: instructions }, { role: "user", content: "hi" }],
              tools: [{ type: "function", function: { name: "f", description } }]
            })
            if (stream) {
              const frames = parseSse(reply.text)
              expect(frames.find((frame) => frame.event === "response.created")?.data).toMatchObject({ response: { instructions, tools: [{ description }] } })
              expect(checkLifecycle(frames)).toMatchObject({ instructions, tools: [{ description }] })
              for (const frame of reply.text.split("\n").filter((line) => line.startsWith("data: "))) {
                expect(frame.slice(6)).toBe(JSON.stringify(JSON.parse(frame.slice(6))))
              }
            } else {
              expect(JSON.parse(reply.text)).toMatchObject({ instructions, tools: [{ description }], output: [{ content: [{ text: "ok" }] }] })
              expect(reply.text).toBe(JSON.stringify(JSON.parse(reply.text)))
            }
          }
        }
      }))
  })
})
