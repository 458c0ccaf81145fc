/**
 * A response cut by `max_output_tokens` inside a tool call, on the client path: `ResponsesLanguageModel` over an
 * `HttpClient` answering the recorded `pai-gpt4o-function-call-args-deltas.sse` (gpt-4o calling `get_capital`)
 * ended as the API ends a response that reached its output limit mid-call: the call closed with
 * `function_call_arguments.done` and `response.output_item.done` holding the arguments so far and status
 * `incomplete`, then `response.incomplete` with `incomplete_details.reason: "max_output_tokens"` (the gateway
 * writes a Chat Completions `finish_reason: "length"` so too). The tool loop runs no call of that response
 * and fails with a `ToolError` that says so, keeping every item.
 */
import type { AiError } from "@effect-responses/core"
import { ToolLoop } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { Capitals, prompt, RECORDING, setup } from "./capitals.js"

type Json = Record<string, any>

/** The recording's events (the JSON of each `data:` line), in order. */
const events: ReadonlyArray<Json> = readFileSync(RECORDING, "utf8").split("\n\n").filter((block) => block.trim() !== "")
  .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)))

const sse = (list: ReadonlyArray<Json>): string => list.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("")

/**
 * The recording as it would end had `max_output_tokens` been reached after its first `deltas` argument deltas:
 * those deltas, `function_call_arguments.done` and `output_item.done` with the arguments so far and the item
 * `status`, then `response.incomplete` (the recording's `response.completed` with status `incomplete`,
 * `incomplete_details.reason` `max_output_tokens` and the cut item in `output`). Also the Response object alone,
 * for a non-streamed call.
 */
const cutByLimit = (deltas: number, itemStatus = "incomplete") => {
  const argumentDeltas = events.filter((event) => event.type === "response.function_call_arguments.delta")
  const kept = argumentDeltas.slice(0, deltas)
  const args = kept.map((event) => event.delta as string).join("")
  const added = events.find((event) => event.type === "response.output_item.added")!
  const done = events.find((event) => event.type === "response.function_call_arguments.done")!
  const itemDone = events.find((event) => event.type === "response.output_item.done")!
  const completed = events.find((event) => event.type === "response.completed")!
  const item = { ...itemDone.item, arguments: args, status: itemStatus }
  const response = {
    ...completed.response,
    status: "incomplete",
    incomplete_details: { reason: "max_output_tokens" },
    output: [item]
  }
  const stream = [
    ...events.slice(0, events.indexOf(added) + 1),
    ...kept,
    { ...done, arguments: args },
    { ...itemDone, item },
    { type: "response.incomplete", sequence_number: completed.sequence_number, response }
  ]
  return { args, body: sse(stream), response }
}

// cut mid-arguments (`{"country":"`), and cut when the arguments happened to be whole JSON (the item still incomplete)
const cases = [
  { what: "mid-arguments", deltas: 3, args: "{\"country\":\"" },
  { what: "with arguments that parse", deltas: 5, args: "{\"country\":\"France\"}" }
] as const

const expectCutError = (error: AiError.AiError | undefined) => {
  assert.strictEqual(error?._tag, "ToolError")
  const toolError = error as AiError.ToolError
  expect(toolError.toolName).toBe("get_capital")
  expect(toolError.callId).toBe("call_kL0PCQV7M2WMoVX8V8OtYSAL")
  expect(toolError.description).toContain("max_output_tokens")
  expect(toolError.description).toContain("get_capital (call_kL0PCQV7M2WMoVX8V8OtYSAL)")
}

describe("a response cut by max_output_tokens inside a tool call: the tool loop runs nothing", () => {
  for (const c of cases) {
    it.effect(`ToolLoop.stream, cut ${c.what}: emits the step whole, runs no handler, fails with a ToolError naming the limit and the call`, () =>
      Effect.gen(function*() {
        const { args, body } = cutByLimit(c.deltas)
        expect(args).toBe(c.args)
        const { layer, ran } = setup(body)
        const settled = yield* ToolLoop.stream(prompt, { toolkit: Capitals }).pipe(Stream.either, Stream.runCollect, Effect.provide(layer))
        const elements: Array<ToolLoop.Event> = []
        let error: AiError.AiError | undefined
        for (const element of Chunk.toReadonlyArray(settled)) {
          if (Either.isRight(element)) elements.push(element.right)
          else error = element.left
        }
        expect(ran).toEqual([])
        expect(elements.some((element) => element.type === "tool_result" || element.type === "loop_finished")).toBe(false)
        expect(elements.find((element) => element.type === "response_finished")).toMatchObject({
          status: "incomplete",
          incompleteReason: "max_output_tokens"
        })
        expectCutError(error)
      }))

    it.effect(`ToolLoop.generate, cut ${c.what}: StepFailed at step 1 with the ToolError, the transcript keeping the cut call`, () =>
      Effect.gen(function*() {
        const { response } = cutByLimit(c.deltas)
        const { layer, ran } = setup(JSON.stringify(response), "application/json")
        const failure = yield* ToolLoop.generate(prompt, { toolkit: Capitals }).pipe(Effect.flip, Effect.provide(layer))
        expect(ran).toEqual([])
        assert.strictEqual(failure._tag, "StepFailed")
        const stepFailed = failure as ToolLoop.StepFailed
        expect(stepFailed.step).toBe(1)
        expectCutError(stepFailed.error)
        expect(stepFailed.steps.map((step) => [step.status, step.incompleteReason])).toEqual([["incomplete", "max_output_tokens"]])
        // every item is kept: the prompt, then the assistant message with the cut call, no tool message
        const messages = stepFailed.transcript.messages
        expect(messages.map((message) => message.role)).toEqual(["user", "assistant"])
        const last = messages[1]!
        expect(last.role === "assistant" ? last.parts : []).toMatchObject([
          { type: "tool_call", name: "get_capital", arguments: c.args, attributes: { status: "incomplete" } }
        ])
      }))
  }

  it.effect("a call the API closed as completed before the limit, in a response cut later: it runs (the setup: its arguments are whole)", () =>
    Effect.gen(function*() {
      const { body } = cutByLimit(5, "completed")
      const { layer, ran } = setup(body)
      const error = yield* ToolLoop.stream(prompt, { toolkit: Capitals, maxSteps: 2 }).pipe(Stream.runDrain, Effect.flip, Effect.provide(layer))
      expect(ran).toEqual(["France"])
      // step 1 ran it, step 2 (the same answer) stopped at maxSteps with the call pending
      expect(error.message).toContain("maxSteps")
    }))
})
