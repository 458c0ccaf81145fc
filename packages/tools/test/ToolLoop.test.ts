import { MessageAggregator } from "@effect-responses/aggregate"
import { AiError, LanguageModel, Message, ModelResponse, Part, Prompt, StreamPart, Usage } from "@effect-responses/core"
import { ToolLoop } from "@effect-responses/tools"
import { assert, describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import {
  calculate,
  calculatorModel,
  elementsOf,
  ENCRYPTED_AT_DONE,
  fakeModel,
  FINAL_TEXT,
  MathToolkit,
  MathToolkitLive,
  QUESTION,
  responseOf,
  STEPS,
  SUMMARY
} from "./calculator.js"

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const totalUsage = STEPS.map((step) => step.usage).reduce(Usage.add, Usage.empty)

/** A step that asks for one more calculator call, forever. */
const askAgain = (n: number) =>
  new ModelResponse.ModelResponse({
    id: `resp_${n}`,
    model: "m",
    status: "completed",
    finishReason: "tool_calls",
    usage: Usage.empty,
    message: new Message.AssistantMessage({
      parts: [new Part.ToolCallPart({ callId: `call_${n}`, name: "calculator", arguments: '{"a":1,"b":1,"op":"add"}' })]
    })
  })

describe("ToolLoop.generate", () => {
  it.effect("runs the calculator session to its final answer", () =>
    Effect.gen(function*() {
      const fake = calculatorModel()
      const result = yield* ToolLoop.generate(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer)
      )
      assert.include(result.text, "570")
      assert.strictEqual(result.text, FINAL_TEXT)
      assert.strictEqual(result.response.id, STEPS[3]!.responseId)
      assert.strictEqual(result.steps.length, 4)
      expect(result.usage).toStrictEqual(totalUsage)
      assert.strictEqual(fake.calls.length, 4)
      assert.isTrue(fake.calls.every((c) => c.method === "generate"))
      // every call offers the toolkit
      for (const c of fake.calls) expect(c.options?.tools).toStrictEqual(MathToolkit.definitions)
      // the transcript: question, then (assistant, tool) three times, then the final assistant message
      expect(result.transcript.messages.map((m) => m.role)).toStrictEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant"
      ])
      const outputs = result.transcript.messages.flatMap((m) => m.role === "tool" ? m.toolResults.map((r) => r.output) : [])
      expect(outputs).toStrictEqual(["19", "57", "570"])
    }))

  it.effect("replays the step-1 assistant message losslessly in the step-2 prompt", () =>
    Effect.gen(function*() {
      const fake = calculatorModel()
      yield* ToolLoop.generate(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer)
      )
      const step2 = fake.calls[1]!.prompt
      expect(step2.messages.length).toBe(3)
      const [user, assistant, tool] = step2.messages
      expect(json(user)).toStrictEqual(json(Prompt.userMessage(QUESTION)))
      // the whole assistant message of step 1, reasoning (payload intact) and the call, in output order
      expect(json(assistant)).toStrictEqual(json(responseOf(STEPS[0]!).message))
      assert.strictEqual(assistant!.role, "assistant")
      const parts = (assistant as Message.AssistantMessage).parts
      const reasoning = parts[0] as Part.ReasoningPart
      assert.strictEqual(reasoning.type, "reasoning")
      expect(reasoning.payload).toStrictEqual(
        new Part.OpaquePayload({ provider: "openai.responses", kind: "encrypted_content", data: ENCRYPTED_AT_DONE })
      )
      expect(reasoning.summary).toStrictEqual([SUMMARY])
      assert.strictEqual(reasoning.attributes.itemId, "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9")
      const toolCall = parts[1] as Part.ToolCallPart
      assert.strictEqual(toolCall.callId, "call_AB6AaRZ1FYZB2RwS6A5vbdqn")
      assert.strictEqual(toolCall.arguments, '{"a":12,"b":7,"op":"add"}')
      // the tool message answers that call with 19
      expect(json(tool)).toStrictEqual({
        role: "tool",
        results: [{ type: "tool_result", callId: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", name: "calculator", output: "19", isError: false }]
      })
    }))

  it.effect("fails with StepFailed (a ToolError inside) when maxSteps is reached with calls pending, keeping the steps", () =>
    Effect.gen(function*() {
      const fake = fakeModel({ responses: [1, 2, 3, 4].map(askAgain) })
      const error = yield* ToolLoop.generate(Prompt.user("loop"), { toolkit: MathToolkit, maxSteps: 3 }).pipe(
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer),
        Effect.flip
      )
      assert.strictEqual(error._tag, "StepFailed")
      const failed = error as ToolLoop.StepFailed
      assert.instanceOf(failed.error, AiError.ToolError)
      assert.match(failed.message, /reached maxSteps \(3\) with 1 tool call\(s\) still pending: calculator \(call_3\)/)
      assert.strictEqual(failed.step, 3)
      assert.strictEqual(failed.steps.length, 3)
      // user, then (assistant, tool) twice, then the third assistant message with its call not run
      expect(failed.transcript.messages.map((m) => m.role)).toStrictEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"])
      assert.strictEqual(fake.calls.length, 3)
    }))

  it.effect("passes the call options through, with the toolkit's tools", () =>
    Effect.gen(function*() {
      const fake = calculatorModel()
      yield* ToolLoop.generate(Prompt.user(QUESTION), { toolkit: MathToolkit, toolChoice: "auto" }).pipe(
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer)
      )
      expect(fake.calls[0]!.options).toStrictEqual({ toolChoice: "auto", tools: MathToolkit.definitions })
    }))

  it.effect("rejects a maxSteps below 1", () =>
    Effect.gen(function*() {
      const error = yield* ToolLoop.generate(Prompt.user("x"), { toolkit: MathToolkit, maxSteps: 0 }).pipe(
        Effect.provide(MathToolkitLive),
        Effect.provide(calculatorModel().layer),
        Effect.flip
      )
      assert.instanceOf(error, AiError.InvalidPrompt)
    }))

  it.effect("with execute: false, returns the first response and its calls without running them", () =>
    Effect.gen(function*() {
      const fake = calculatorModel()
      const program = ToolLoop.generate(Prompt.user(QUESTION), { toolkit: MathToolkit, execute: false })
      // no handlers needed
      expectTypeOf(program).toEqualTypeOf<
        Effect.Effect<ToolLoop.Result, ToolLoop.StepFailed | AiError.InvalidPrompt, LanguageModel.LanguageModel>
      >()
      const result = yield* program.pipe(Effect.provide(fake.layer))
      assert.strictEqual(fake.calls.length, 1)
      assert.strictEqual(result.steps.length, 1)
      expect(result.response.message.toolCalls.map((c) => c.callId)).toStrictEqual(["call_AB6AaRZ1FYZB2RwS6A5vbdqn"])
      expect(result.transcript.messages.map((m) => m.role)).toStrictEqual(["user", "assistant"])
    }))

  it.effect("never runs a built-in tool item as a local tool", () =>
    Effect.gen(function*() {
      const searched = new ModelResponse.ModelResponse({
        id: "resp_ws",
        model: "m",
        status: "completed",
        finishReason: "stop",
        usage: Usage.empty,
        message: new Message.AssistantMessage({
          parts: [
            new Part.UnknownPart({
              provider: "openai.responses",
              kind: "web_search_call",
              item: { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } }
            }),
            new Part.TextPart({ text: "Found it." })
          ]
        })
      })
      const fake = fakeModel({ responses: [searched] })
      const result = yield* ToolLoop.generate(Prompt.user("search"), { toolkit: MathToolkit }).pipe(
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer)
      )
      assert.strictEqual(fake.calls.length, 1)
      assert.strictEqual(result.text, "Found it.")
      expect(result.transcript.messages.map((m) => m.role)).toStrictEqual(["user", "assistant"])
    }))

  it.effect("fails with StepFailed carrying the model's error and the completed steps, tool answers included", () =>
    Effect.gen(function*() {
      const fake = fakeModel({ responses: [responseOf(STEPS[0]!)] })
      const error = yield* ToolLoop.generate(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer),
        Effect.flip
      )
      assert.strictEqual(fake.calls.length, 2)
      assert.strictEqual(error._tag, "StepFailed")
      const failed = error as ToolLoop.StepFailed
      // the fake has no second answer
      assert.instanceOf(failed.error, AiError.InvalidPrompt)
      assert.strictEqual(failed.step, 2)
      assert.isFalse(failed.retryable)
      expect(failed.steps.map((s) => s.id)).toStrictEqual([STEPS[0]!.responseId])
      expect(failed.usage).toStrictEqual(STEPS[0]!.usage)
      // the step-1 call was run and its answer is kept: the transcript is what step 2 was sent
      expect(json(failed.transcript)).toStrictEqual(json(fake.calls[1]!.prompt))
      const tool = failed.transcript.messages.at(-1) as Message.ToolMessage
      expect(tool.toolResults.map((r) => r.output)).toStrictEqual(["19"])
    }))
})

describe("ToolLoop.stream", () => {
  it("the scripted streams fold to the scripted responses", () => {
    for (const step of STEPS) {
      expect(json(MessageAggregator.fromIterable(elementsOf(step)))).toStrictEqual([json(responseOf(step))])
    }
  })

  it.effect("streams every step, the tool results after each, and LoopFinished last", () =>
    Effect.gen(function*() {
      const fake = calculatorModel()
      const events = Chunk.toReadonlyArray(
        yield* ToolLoop.stream(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
          Stream.runCollect,
          Effect.provide(MathToolkitLive),
          Effect.provide(fake.layer)
        )
      )
      assert.isTrue(fake.calls.every((c) => c.method === "stream"))
      // the model's own elements pass through unchanged and in order
      const modelElements = events.filter((e): e is StreamPart.StreamPart =>
        e.type === "response_started" || e.type === "part" || e.type === "response_finished"
      )
      expect(modelElements).toStrictEqual(STEPS.flatMap(elementsOf))
      // one tool result per step that asked, after that step's response_finished and before the next step
      const outline = events
        .filter((e) => e.type !== "part")
        .map((e) =>
          e.type === "tool_result" && e.result.type === "tool_result"
            ? `result ${e.result.output} for ${e.responseId.slice(-4)}`
            : e.type === "loop_finished"
            ? `finished ${e.steps}`
            : `${e.type} ${e.responseId.slice(-4)}`
        )
      expect(outline).toStrictEqual([
        "response_started 5691",
        "response_finished 5691",
        "result 19 for 5691",
        "response_started 5014",
        "response_finished 5014",
        "result 57 for 5014",
        "response_started 137b",
        "response_finished 137b",
        "result 570 for 137b",
        "response_started f12a",
        "response_finished f12a",
        "finished 4"
      ])
      const finished = events[events.length - 1]
      assert.instanceOf(finished, ToolLoop.LoopFinished)
      const last = finished as ToolLoop.LoopFinished
      assert.strictEqual(last.finalText, FINAL_TEXT)
      expect(last.usage).toStrictEqual(totalUsage)
      assert.strictEqual(last.transcript.messages.length, 8)
      // step 2 got the step-1 message folded from the stream: the same as the whole response's message
      expect(json(fake.calls[1]!.prompt.messages[1])).toStrictEqual(json(responseOf(STEPS[0]!).message))
      // and the encrypted content of output_item.done, not the one of output_item.added
      const reasoning = (fake.calls[1]!.prompt.messages[1] as Message.AssistantMessage).parts[0] as Part.ReasoningPart
      assert.strictEqual(reasoning.payload?.data, ENCRYPTED_AT_DONE)
    }))

  it.effect("gives the same transcript as generate", () =>
    Effect.gen(function*() {
      const viaGenerate = yield* ToolLoop.generate(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
        Effect.provide(MathToolkitLive),
        Effect.provide(calculatorModel().layer)
      )
      const viaStream = yield* ToolLoop.stream(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
        Stream.runLast,
        Effect.provide(MathToolkitLive),
        Effect.provide(calculatorModel().layer)
      )
      assert.isTrue(viaStream._tag === "Some" && viaStream.value.type === "loop_finished")
      const last = (viaStream as { readonly value: ToolLoop.LoopFinished }).value
      expect(json(last.transcript)).toStrictEqual(json(viaGenerate.transcript))
    }))

  it.effect("fails after the elements already emitted when a step's stream fails", () =>
    Effect.gen(function*() {
      const failure = new AiError.StreamErrorEvent({ description: "The server had an error", code: "server_error" })
      const step2 = elementsOf(STEPS[1]!)
      const fake = fakeModel({
        streams: [
          Stream.fromIterable(elementsOf(STEPS[0]!)),
          Stream.concat(Stream.fromIterable(step2.slice(0, 3)), Stream.fail(failure))
        ]
      })
      const seen: Array<ToolLoop.Event> = []
      const outcome = yield* ToolLoop.stream(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
        Effect.either,
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer)
      )
      assert.isTrue(Either.isLeft(outcome))
      assert.strictEqual((outcome as Either.Left<AiError.AiError, void>).left, failure)
      // all of step 1, its tool result, and the first three elements of step 2
      assert.strictEqual(seen.length, elementsOf(STEPS[0]!).length + 1 + 3)
      assert.strictEqual(seen[elementsOf(STEPS[0]!).length]!.type, "tool_result")
    }))

  it.effect("fails with a ToolError when maxSteps is reached with calls pending", () =>
    Effect.gen(function*() {
      const fake = fakeModel({ streams: STEPS.map((step) => Stream.fromIterable(elementsOf(step))) })
      const error = yield* ToolLoop.stream(Prompt.user(QUESTION), { toolkit: MathToolkit, maxSteps: 2 }).pipe(
        Stream.runDrain,
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer),
        Effect.flip
      )
      assert.instanceOf(error, AiError.ToolError)
      assert.strictEqual(fake.calls.length, 2)
    }))

  it.effect("fails with MalformedOutput when a step's stream ends before its response finished", () =>
    Effect.gen(function*() {
      const fake = fakeModel({ streams: [Stream.fromIterable(elementsOf(STEPS[0]!).slice(0, 5))] })
      const error = yield* ToolLoop.stream(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
        Stream.runDrain,
        Effect.provide(MathToolkitLive),
        Effect.provide(fake.layer),
        Effect.flip
      )
      assert.instanceOf(error, AiError.MalformedOutput)
    }))

  it.effect("with execute: false, streams one step and finishes without running its calls", () =>
    Effect.gen(function*() {
      const fake = calculatorModel()
      const events = yield* ToolLoop.stream(Prompt.user(QUESTION), { toolkit: MathToolkit, execute: false }).pipe(
        Stream.runCollect,
        Effect.provide(fake.layer)
      )
      const last = Chunk.unsafeLast(events)
      assert.strictEqual(last.type, "loop_finished")
      assert.isFalse(Chunk.some(events, (e) => e.type === "tool_result"))
      assert.strictEqual(fake.calls.length, 1)
    }))
})

describe("ToolLoop: what the model gets wrong goes back to it, and the loop goes on", () => {
  const callPart = (callId: string, name: string, args: string) => new Part.ToolCallPart({ callId, name, arguments: args })
  const answer = (id: string, parts: ReadonlyArray<Part.AssistantPart>) =>
    new ModelResponse.ModelResponse({
      id,
      model: "m",
      status: "completed",
      finishReason: ModelResponse.finishReasonOf(new Message.AssistantMessage({ parts })),
      usage: Usage.empty,
      message: new Message.AssistantMessage({ parts })
    })

  it.effect("bad JSON, a schema mismatch, an unknown tool, a typed failure, a defect and a timeout each give an error result", () =>
    Effect.gen(function*() {
      const fake = fakeModel({
        responses: [
          answer("resp_1", [
            callPart("call_json", "calculator", "{\"a\":1,"),
            callPart("call_schema", "calculator", "{\"a\":\"one\",\"b\":2,\"op\":\"add\"}"),
            callPart("call_unknown", "web_search", "{}"),
            callPart("call_zero", "calculator", "{\"a\":1,\"b\":0,\"op\":\"divide\"}"),
            callPart("call_defect", "calculator", "{\"a\":666,\"b\":1,\"op\":\"add\"}"),
            callPart("call_slow", "calculator", "{\"a\":999,\"b\":1,\"op\":\"add\"}"),
            callPart("call_ok", "calculator", "{\"a\":2,\"b\":3,\"op\":\"multiply\"}")
          ]),
          answer("resp_2", [new Part.TextPart({ text: "Most of that failed; 2 * 3 = 6." })])
        ]
      })
      const handlers = MathToolkit.toLayer({
        calculator: (params) =>
          params.a === 666
            ? Effect.die(new Error("a bug in the handler"))
            : params.a === 999
            ? Effect.never
            : calculate(params)
      })
      const fiber = yield* ToolLoop.generate(Prompt.user(QUESTION), { toolkit: MathToolkit, timeout: "10 seconds" }).pipe(
        Effect.provide(handlers),
        Effect.provide(fake.layer),
        Effect.fork
      )
      yield* TestClock.adjust("10 seconds")
      const result = yield* Fiber.join(fiber)

      assert.strictEqual(result.text, "Most of that failed; 2 * 3 = 6.")
      const tool = fake.calls[1]!.prompt.messages.at(-1) as Message.ToolMessage
      assert.strictEqual(tool.role, "tool")
      const byCall = new Map(tool.toolResults.map((r) => [r.callId, r]))
      const error = (callId: string) => {
        const r = byCall.get(callId)!
        assert.isTrue(r.isError, callId)
        return JSON.parse(r.output).error as unknown
      }
      assert.match(String(error("call_json")), /^invalid JSON arguments for tool "calculator"/)
      assert.match(String(error("call_schema")), /^invalid arguments for tool "calculator": .*"one"/s)
      assert.strictEqual(error("call_unknown"), "unknown tool \"web_search\"; available tools: calculator")
      assert.deepStrictEqual(error("call_zero"), { _tag: "DivisionByZero", dividend: 1 })
      assert.strictEqual(error("call_defect"), "tool \"calculator\" failed unexpectedly")
      assert.strictEqual(error("call_slow"), "tool \"calculator\" timed out after 10s")
      assert.deepStrictEqual([byCall.get("call_ok")!.isError, byCall.get("call_ok")!.output], [false, "6"])
      // results come back in call order
      assert.deepStrictEqual(tool.toolResults.map((r) => r.callId), [
        "call_json",
        "call_schema",
        "call_unknown",
        "call_zero",
        "call_defect",
        "call_slow",
        "call_ok"
      ])
    }))

  it.effect("interrupting the loop interrupts the handlers it is running", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const fake = fakeModel({ responses: [answer("resp_1", [callPart("call_1", "calculator", "{\"a\":1,\"b\":1,\"op\":\"add\"}")])] })
      const handlers = MathToolkit.toLayer({
        calculator: () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
      })
      const fiber = yield* ToolLoop.generate(Prompt.user(QUESTION), { toolkit: MathToolkit }).pipe(
        Effect.provide(handlers),
        Effect.provide(fake.layer),
        Effect.fork
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Deferred.isDone(interrupted))
    }))
})
