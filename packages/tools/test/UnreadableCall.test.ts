/**
 * A client-run built-in call the client cannot read, on the client path: `ResponsesLanguageModel` over an
 * `HttpClient` answering the recorded `vai-openai-apply-patch-call.chunks.txt` (gpt-5.1 creating
 * `shopping-checklist.md`) with the call's `operation` spoiled as a model or a server could spoil it (no
 * `path`, an operation type not invented yet, `null`), then a hand-made text answer. The tool loop answers
 * that call with an `apply_patch_call_output` naming the field, and goes on; it used to end with
 * `StepFailed` (malformed output) and the message named the wrong field (`operation.type: Expected
 * "delete_file", actual "create_file"` for a missing path).
 */
import { Part, Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ApplyPatch, Tool, Toolkit, ToolExecutor, ToolLoop } from "@effect-responses/tools"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

type Json = Record<string, any>

const RECORDING = new URL("../../../fixtures/responses-sse/vai-openai-apply-patch-call.chunks.txt", import.meta.url)

/** The recording's `response.completed` response, its apply_patch_call's `operation` replaced. */
const spoiled = (operation: unknown): Json => {
  const completed = readFileSync(RECORDING, "utf8").split("\n").filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Json).find((event) => event.type === "response.completed")!
  const response = completed.response as Json
  return { ...response, output: response.output.map((item: Json) => item.type === "apply_patch_call" ? { ...item, operation } : item) }
}

/** The recording as SSE, its apply_patch_call's `operation` replaced wherever the item appears. */
const spoiledStream = (operation: unknown): string =>
  readFileSync(RECORDING, "utf8").split("\n").filter((line) => line.trim() !== "").map((line) => {
    const event = JSON.parse(line) as Json
    const spoil = (item: Json) => item.type === "apply_patch_call" ? { ...item, operation } : item
    const spoiledEvent = event.item !== undefined
      ? { ...event, item: spoil(event.item) }
      : event.response !== undefined
      ? { ...event, response: { ...event.response, output: event.response.output.map(spoil) } }
      : event
    return `event: ${event.type}\ndata: ${JSON.stringify(spoiledEvent)}\n\n`
  }).join("")

/** A hand-made final answer: one message. */
const done: Json = {
  id: "resp_2",
  object: "response",
  status: "completed",
  model: "gpt-5.1-2025-11-13",
  output: [{ id: "msg_2", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "ok", annotations: [] }] }]
}

/**
 * The model answering the requests with `bodies` in turn (JSON, as `generate` sends `stream: false`; a string
 * is an SSE body), and the request bodies.
 */
const model = (bodies: ReadonlyArray<Json | string>) => {
  const requests: Array<Json> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      const body = request.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(request.body.body)) : undefined
      requests.push(body)
      const answer = bodies[requests.length - 1]
      return typeof answer === "string"
        ? HttpClientResponse.fromWeb(request, new Response(answer, { headers: { "content-type": "text/event-stream" } }))
        : HttpClientResponse.fromWeb(request, new Response(JSON.stringify(answer), { headers: { "content-type": "application/json" } }))
    })
  )
  const layer = ResponsesLanguageModel.layer({ model: "gpt-5.1" }).pipe(
    Layer.provide(ResponsesClient.layer({ retry: { times: 0 } })),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
  )
  return { requests, layer }
}

const Patcher = Toolkit.make(Tool.applyPatch)

describe("a built-in call the client cannot read", () => {
  for (
    const [operation, reason] of [
      [{ type: "create_file", diff: "+x\n" }, "operation.path is missing"],
      [{ type: "rename_file", path: "a", to: "b" }, "operation.type: Expected \"create_file\" | \"update_file\" | \"delete_file\", actual \"rename_file\""],
      [null, "operation: Expected an object with type create_file, update_file or delete_file, actual null"]
    ] as const
  ) {
    it.effect(`gets an error answer naming the field, and the loop goes on: ${reason}`, () =>
      Effect.gen(function*() {
        const root = mkdtempSync(join(tmpdir(), "unreadable-"))
        const { layer, requests } = model([spoiled(operation), done])
        const result = yield* ToolLoop.generate(Prompt.user("Make a shopping checklist"), { toolkit: Patcher }).pipe(
          Effect.provide(Layer.merge(layer, Patcher.toLayer({ apply_patch: ApplyPatch.handler({ root }) })))
        )
        assert.strictEqual(result.text, "ok")
        assert.strictEqual(requests.length, 2)
        const call = spoiled(operation).output.find((item: Json) => item.type === "apply_patch_call")
        // the call goes back as it came, then its answer
        const input = requests[1]!.input as ReadonlyArray<Json>
        expect(input.slice(-2)).toStrictEqual([
          call,
          {
            type: "apply_patch_call_output",
            call_id: "call_kA46f91ZwocQyMCKyyZqRyC5",
            status: "failed",
            output: `the apply_patch_call could not be read: ${reason}; nothing was applied`
          }
        ])
        assert.deepStrictEqual(readdirSync(root), [])
      }))
  }

  it.effect("streamed: the spoiled call's events end in the same answer (ToolLoop.stream)", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "unreadable-"))
      const doneStream = [
        { type: "response.created", sequence_number: 0, response: { ...done, status: "in_progress", output: [] } },
        { type: "response.output_item.done", sequence_number: 1, output_index: 0, item: done.output[0] },
        { type: "response.completed", sequence_number: 2, response: done }
      ].map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("")
      const { layer, requests } = model([spoiledStream(null), doneStream])
      const events = yield* ToolLoop.stream(Prompt.user("Make a shopping checklist"), { toolkit: Patcher }).pipe(
        Stream.runCollect,
        Effect.provide(Layer.merge(layer, Patcher.toLayer({ apply_patch: ApplyPatch.handler({ root }) })))
      )
      assert.isTrue(Chunk.size(events) > 0)
      const input = requests[1]!.input as ReadonlyArray<Json>
      expect(input.at(-1)).toStrictEqual({
        type: "apply_patch_call_output",
        call_id: "call_kA46f91ZwocQyMCKyyZqRyC5",
        status: "failed",
        output: "the apply_patch_call could not be read: operation: Expected an object with type create_file, update_file or delete_file, actual null; nothing was applied"
      })
    }))

  it("each built-in call type is answered in its own item type", () => {
    const part = (kind: string, item: Json) =>
      new Part.UnknownPart({ provider: "openai.responses", kind, item: { type: kind, call_id: "c1", ...item }, malformed: "action.commands: Expected ReadonlyArray<string>, actual \"ls\"" })
    const shell = part("shell_call", { action: { commands: "ls" } })
    assert.isTrue(ToolExecutor.isUnreadableCall(shell))
    expect(ToolExecutor.answerUnreadable(shell)).toStrictEqual(
      new Part.ShellCallOutputPart({
        callId: "c1",
        output: [{
          stdout: "",
          stderr: "the shell_call could not be read: action.commands: Expected ReadonlyArray<string>, actual \"ls\"; nothing was run",
          outcome: { type: "exit", exitCode: 1 }
        }]
      })
    )
    expect(ToolExecutor.answerUnreadable(part("local_shell_call", {}))).toStrictEqual(
      new Part.LocalShellCallOutputPart({
        callId: "c1",
        output: JSON.stringify({ error: "the local_shell_call could not be read: action.commands: Expected ReadonlyArray<string>, actual \"ls\"; nothing was run" })
      })
    )
    // no call id, no reason, or an item of another type: not a call the client can answer
    assert.isFalse(ToolExecutor.isUnreadableCall(new Part.UnknownPart({ provider: "openai.responses", kind: "shell_call", item: { type: "shell_call" }, malformed: "call_id is missing" })))
    assert.isFalse(ToolExecutor.isUnreadableCall(new Part.UnknownPart({ provider: "openai.responses", kind: "shell_call", item: { type: "shell_call", call_id: "c" } })))
    assert.isFalse(ToolExecutor.isUnreadableCall(new Part.UnknownPart({ provider: "openai.responses", kind: "web_search_call", item: { call_id: "c" }, malformed: "x" })))
  })
})
