import { Capture } from "@effect-responses/responses"
import { ReplayServer } from "@effect-responses/testing"
import { assert, describe, it } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:http"
import { MULTISTEP, readFixture } from "./fixtures.js"

const capture = Effect.runSync(Capture.parse(readFixture(MULTISTEP), MULTISTEP))
const outputs = capture.responses.map(Capture.outputItems)

/** What a correct stateless client sends for recorded response `index`, with `results` as the outputs. */
const correctBody = (index: number, results: ReadonlyArray<string> = ["19", "57", "570"]) => {
  const input: Array<unknown> = [{ type: "message", role: "user", content: [{ type: "input_text", text: "go" }] }]
  for (let r = 0; r < index; r++) {
    for (const item of outputs[r]!) {
      input.push(item.type === "function_call" ? { ...item, arguments: item.arguments } : item)
      if (item.type === "function_call") {
        input.push({ type: "function_call_output", call_id: item.call_id, output: results[r] })
      }
    }
  }
  return { model: "gpt-5.1-codex-max", store: false, include: ["reasoning.encrypted_content"], stream: true, input }
}

const post = (body: unknown) =>
  Effect.gen(function*() {
    const server = yield* ReplayServer.ReplayServer
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.post(`${server.baseUrl}/responses`).pipe(HttpClientRequest.bodyUnsafeJson(body))
    )
    return { status: response.status, text: yield* response.text, type: response.headers["content-type"] }
  })

const serverLayer = (validate?: ReplayServer.Options["validate"]) =>
  Layer.mergeAll(
    ReplayServer.layer({ capture, validate }).pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    ),
    NodeHttpClient.layerUndici
  )

describe("ReplayServer", () => {
  it.effect("answers a correct stateless session with the recorded responses, in order", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 4; i++) {
        const answer = yield* post(correctBody(i))
        assert.strictEqual(answer.status, 200, answer.text)
        assert.strictEqual(answer.type, "text/event-stream")
        assert.strictEqual(answer.text, Capture.toSse(capture.responses[i]!))
      }
      const requests = yield* (yield* ReplayServer.ReplayServer).requests
      assert.deepStrictEqual(requests.map((r) => r.index), [0, 1, 2, 3])
      const beyond = yield* post(correctBody(4))
      assert.strictEqual(beyond.status, 400)
      assert.strictEqual(JSON.parse(beyond.text).error.code, "replay_exhausted")
    }).pipe(Effect.provide(serverLayer())))

  it.effect("answers JSON (the terminal response object) when the request does not stream", () =>
    Effect.gen(function*() {
      const answer = yield* post({ ...correctBody(0), stream: false })
      assert.strictEqual(answer.status, 200)
      assert.deepStrictEqual(JSON.parse(answer.text), Capture.terminalEvent(capture.responses[0]!)!.json.response)
    }).pipe(Effect.provide(serverLayer())))

  it.effect("accepts either recorded encrypted_content and rejects any other bytes", () =>
    Effect.gen(function*() {
      yield* post(correctBody(0))
      const body = correctBody(1)
      const reasoning = body.input[1] as { encrypted_content: string }
      const done = capture.responses[0]!.events.find((e) => e.type === "response.output_item.done")!
      const doneValue = (done.json.item as { encrypted_content: string }).encrypted_content
      assert.notStrictEqual(doneValue, reasoning.encrypted_content)

      const tampered = { ...body, input: body.input.map((i) => i === reasoning ? { ...reasoning, encrypted_content: doneValue.replace("g", "h") } : i) }
      const rejected = yield* post(tampered)
      assert.strictEqual(rejected.status, 400)
      const error = JSON.parse(rejected.text).error
      assert.strictEqual(error.type, "invalid_request_error")
      assert.strictEqual(error.code, "missing_replayed_item")
      assert.include(error.message, "reasoning item rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9")

      const viaDone = { ...body, input: body.input.map((i) => i === reasoning ? { ...reasoning, encrypted_content: doneValue } : i) }
      assert.strictEqual((yield* post(viaDone)).status, 200)
    }).pipe(Effect.provide(serverLayer())))

  it.effect("rejects a missing function_call_output, a stateful request, and what the extra check refuses", () =>
    Effect.gen(function*() {
      yield* post(correctBody(0))
      const body = correctBody(1)
      const noOutput = { ...body, input: body.input.filter((i) => (i as { type?: string }).type !== "function_call_output") }
      const a = yield* post(noOutput)
      assert.strictEqual(JSON.parse(a.text).error.code, "missing_function_call_output")
      const b = yield* post({ ...body, store: true })
      assert.strictEqual(JSON.parse(b.text).error.param, "store")
      const c = yield* post(correctBody(1, ["20"]))
      assert.strictEqual(c.status, 400)
      assert.strictEqual(JSON.parse(c.text).error.message, "wrong result 20")
      assert.strictEqual((yield* post(body)).status, 200)
    }).pipe(
      Effect.provide(
        serverLayer(({ body }) => {
          const output = (body.input as Array<{ type?: string; output?: string }>).find((i) => i.type === "function_call_output")
          return output !== undefined && output.output !== "19" ? Option.some(`wrong result ${output.output}`) : Option.none()
        })
      )
    ))
})

describe("ReplayServer, a shell call the client runs (the recorded two-response shell session)", () => {
  const shell = Effect.runSync(
    Capture.parse(readFixture("responses-sse/vai-openai-shell-call.chunks.txt"), "vai-openai-shell-call.chunks.txt")
  )
  const [call] = Capture.outputItems(shell.responses[0]!)
  const followUp = (answers: ReadonlyArray<unknown>) => ({
    model: "gpt-5.1",
    store: false,
    stream: true,
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "ls" }] }, call, ...answers]
  })
  const output = {
    type: "shell_call_output",
    call_id: call!.call_id,
    output: [{ stdout: "a\n", stderr: "", outcome: { type: "exit", exit_code: 0 } }]
  }
  const layer = Layer.mergeAll(
    ReplayServer.layer({ capture: shell }).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))),
    NodeHttpClient.layerUndici
  )

  it.effect("wants one shell_call_output after the call, as the API does", () =>
    Effect.gen(function*() {
      // the first request: the user's message alone
      assert.strictEqual((yield* post({ ...followUp([]), input: followUp([]).input.slice(0, 1) })).status, 200)
      const missing = yield* post(followUp([]))
      assert.strictEqual(missing.status, 400)
      const error = JSON.parse(missing.text).error
      assert.strictEqual(error.code, "missing_shell_call_output")
      assert.strictEqual(error.message, `expected exactly one shell_call_output for call ${call!.call_id} after the call, found 0`)
      assert.strictEqual(JSON.parse((yield* post(followUp([output, output]))).text).error.code, "invalid_shell_call_output")
      assert.strictEqual((yield* post(followUp([output]))).status, 200)
    }).pipe(Effect.provide(layer)))
})

describe("ReplayServer, an MCP approval request (the recorded request, then the recorded approved call)", () => {
  const mcp = Effect.runSync(
    Capture.parse(
      `${readFixture("responses-sse/vai-openai-mcp-approval-request.chunks.txt").trimEnd()}\n${
        readFixture("responses-sse/vai-openai-mcp-approved-call.chunks.txt")
      }`,
      "mcp approval"
    )
  )
  const items = Capture.outputItems(mcp.responses[0]!)
  const request = items.find((item) => item.type === "mcp_approval_request")!
  const followUp = (answers: ReadonlyArray<unknown>) => ({
    model: "gpt-5-mini",
    store: false,
    stream: true,
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "shorten" }] }, ...items, ...answers]
  })
  const approval = { type: "mcp_approval_response", approval_request_id: request.id, approve: true }
  const layer = Layer.mergeAll(
    ReplayServer.layer({ capture: mcp }).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))),
    NodeHttpClient.layerUndici
  )

  it.effect("wants one mcp_approval_response for the request after it, as the API does", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* post({ ...followUp([]), input: followUp([]).input.slice(0, 1) })).status, 200)
      const missing = yield* post(followUp([]))
      assert.strictEqual(missing.status, 400)
      const error = JSON.parse(missing.text).error
      assert.strictEqual(error.code, "missing_mcp_approval_response")
      assert.strictEqual(error.message, `expected exactly one mcp_approval_response for call ${String(request.id)} after the call, found 0`)
      assert.strictEqual((yield* post(followUp([approval, approval]))).status, 400)
      assert.strictEqual((yield* post(followUp([approval]))).status, 200)
    }).pipe(Effect.provide(layer)))
})

describe("ReplayServer, a recording that ends without a terminal event", () => {
  // the error-event recording (vercel/ai, Apache-2.0) without its final response.failed line
  const lines = readFixture("responses-sse/vai-openai-error-event-response-failed.chunks.txt").trim().split("\n")
  const truncated = Effect.runSync(
    Capture.parse(lines.filter((line) => !line.includes("\"response.failed\"")).join("\n"), "error-event")
  )

  it.effect("answers a non-streaming request with the recorded error event as a 500 in OpenAI's shape", () =>
    Effect.gen(function*() {
      const answer = yield* post({ model: "gpt-5-nano", store: false, input: [], stream: false })
      assert.strictEqual(answer.status, 500)
      const error = JSON.parse(answer.text).error
      assert.strictEqual(error.code, "insufficient_quota")
      assert.strictEqual(error.type, "insufficient_quota") // the nested shape of the recorded event
      assert.include(error.message, "quota")
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          ReplayServer.layer({ capture: truncated }).pipe(
            Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
          ),
          NodeHttpClient.layerUndici
        )
      )
    ))
})
