/**
 * A Responses stream that breaks off inside a tool call, on the client path: `ResponsesLanguageModel` over an
 * `HttpClient` answering a recorded stream (`pai-gpt4o-function-call-args-deltas.sse`, gpt-4o calling
 * `get_capital`) cut at an event boundary. The tool loop runs no handler for a call of a response that never
 * finished, and fails with the stream's typed error (`TruncatedStream`) after what arrived.
 */
import type { AiError, StreamPart } from "@effect-responses/core"
import { ToolLoop } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { Capitals, prompt, RECORDING, setup } from "./capitals.js"

/** The recording's SSE events (`event:` and `data:` lines), in order. */
const events = readFileSync(RECORDING, "utf8").split("\n\n").filter((block) => block.trim() !== "")
const typeOf = (event: string): string => JSON.parse(event.slice(event.indexOf("data: ") + 6)).type

/** The recording up to (not including) the `n`-th event of `type` (0-based), or up to and including it. */
const cutAt = (type: string, n: number, including = false): string => {
  let seen = 0
  const index = events.findIndex((event) => typeOf(event) === type && seen++ === n)
  assert.isAtLeast(index, 0)
  return events.slice(0, including ? index + 1 : index).map((event) => `${event}\n\n`).join("")
}

/** The arguments the recording's deltas carry before its `n`-th delta. */
const argumentsBefore = (n: number): string =>
  events.filter((event) => typeOf(event) === "response.function_call_arguments.delta").slice(0, n)
    .map((event) => JSON.parse(event.slice(event.indexOf("data: ") + 6)).delta as string).join("")

/** `ToolLoop.stream` over `body` (at most `maxSteps` steps): what it emitted, its error, the calls the handler ran. */
const streamLoop = (body: string, maxSteps = 10) =>
  Effect.gen(function*() {
    const { layer, ran } = setup(body)
    const settled = yield* ToolLoop.stream(prompt, { toolkit: Capitals, maxSteps }).pipe(
      Stream.either,
      Stream.runCollect,
      Effect.provide(layer)
    )
    const elements: Array<ToolLoop.Event> = []
    let error: AiError.AiError | undefined
    for (const element of Chunk.toReadonlyArray(settled)) {
      if (Either.isRight(element)) elements.push(element.right)
      else error = element.left
    }
    return { elements, error, ran }
  })

describe("a Responses stream cut off inside a tool call: the tool loop runs nothing", () => {
  it.effect("the recording whole runs the call (the setup works)", () =>
    Effect.gen(function*() {
      const { elements, error, ran } = yield* streamLoop(events.map((event) => `${event}\n\n`).join(""), 2)
      // step 1 ran the call; step 2 (the same answer) stopped at maxSteps with the call pending
      expect(ran).toEqual(["France"])
      expect(elements.filter((element) => element.type === "tool_result")).toHaveLength(1)
      assert.strictEqual(error?._tag, "ToolError")
    }))

  for (
    const [where, body, arrived] of [
      ["mid-arguments", cutAt("response.function_call_arguments.delta", 3), argumentsBefore(3)],
      ["after function_call_arguments.done", cutAt("response.function_call_arguments.done", 0, true), argumentsBefore(5)],
      ["after output_item.done, before response.completed", cutAt("response.completed", 0), argumentsBefore(5)]
    ] as const
  ) {
    it.effect(`cut ${where}: ToolLoop.stream emits what arrived, runs no handler, fails with TruncatedStream`, () =>
      Effect.gen(function*() {
        const { elements, error, ran } = yield* streamLoop(body)
        expect(ran).toEqual([])
        expect(elements.some((element) => element.type === "tool_result" || element.type === "loop_finished")).toBe(false)
        assert.strictEqual(error?._tag, "TruncatedStream")
        // what arrived: the call's name and its argument deltas (and, once its item was done, the completing part)
        const calls = elements.flatMap((element) =>
          element.type === "part" && element.part.type === "tool_call" ? [element as StreamPart.PartUpdate] : []
        )
        expect(calls.map((update) => update.part.type === "tool_call" ? update.part.arguments : "").join("")).toBe(arrived)
        expect(calls.some((update) => update.part.type === "tool_call" && update.part.name === "get_capital")).toBe(true)
        expect(elements.some((element) => element.type === "response_finished")).toBe(false)
      }))
  }
})
