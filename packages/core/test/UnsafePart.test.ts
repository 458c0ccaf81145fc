/**
 * The unvalidated constructors of `UnsafePart` build the same instances as the class constructors.
 */
import { Message, ModelResponse, Part, Prompt, StreamPart, UnsafeMessage, UnsafePart, Usage } from "@effect-responses/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Utils from "effect/Utils"

const attributes: Part.Attributes = { itemId: "msg_1", status: "in_progress", phase: "final_answer" }
const annotation: Part.Annotation = { type: "url_citation", url: "https://example.com", startIndex: 0, endIndex: 3 }

/**
 * `made` is `new Class(props)`, validated, so its arrays and attributes are copies: compared structurally
 * (`structuralRegion`), as `Equal.equals` compares plain arrays and objects by reference otherwise.
 */
const same = <A extends object>(fast: A, made: A, Class: Function) => {
  assert.isTrue(fast instanceof Class)
  assert.isTrue(Utils.structuralRegion(() => Equal.equals(fast, made)))
  assert.isTrue(Utils.structuralRegion(() => Equal.equals(made, fast)))
  assert.strictEqual(JSON.stringify(fast), JSON.stringify(made))
  assert.deepStrictEqual(Object.keys(fast), Object.keys(made))
}

describe("UnsafePart", () => {
  it("each constructor equals the class constructor: Equal.equals, instanceof, JSON encoding", () => {
    const delta = UnsafePart.textDelta("hi", attributes)
    assert.deepStrictEqual(delta.annotations, [])
    same(delta, new Part.TextPart({ text: "hi", annotations: delta.annotations, attributes }), Part.TextPart)
    const annotations = [annotation]
    same(
      UnsafePart.textPart("", annotations, attributes),
      new Part.TextPart({ text: "", annotations, attributes }),
      Part.TextPart
    )
    same(UnsafePart.refusalPart("no", {}), new Part.RefusalPart({ text: "no", attributes: {} }), Part.RefusalPart)
    const summary = ["", "step"]
    same(
      UnsafePart.reasoningSummaryPart(summary, attributes),
      new Part.ReasoningPart({ summary, attributes }),
      Part.ReasoningPart
    )
    const thinking = UnsafePart.reasoningTextPart("think", attributes)
    assert.deepStrictEqual(thinking.summary, [])
    same(
      thinking,
      new Part.ReasoningPart({ summary: thinking.summary, text: "think", attributes }),
      Part.ReasoningPart
    )
    same(
      UnsafePart.toolCallPart("call_1", "f", "{\"a\"", attributes),
      new Part.ToolCallPart({ callId: "call_1", name: "f", arguments: "{\"a\"", attributes }),
      Part.ToolCallPart
    )
    same(
      UnsafePart.toolCallPart("call_1", "f", "{", attributes, "ns"),
      new Part.ToolCallPart({ callId: "call_1", name: "f", arguments: "{", namespace: "ns", attributes }),
      Part.ToolCallPart
    )
    same(
      UnsafePart.customToolCallPart("call_2", "sql", "SELECT", attributes),
      new Part.CustomToolCallPart({ callId: "call_2", name: "sql", input: "SELECT", attributes }),
      Part.CustomToolCallPart
    )
    same(
      UnsafePart.customToolCallPart("call_2", "sql", "", {}, "db"),
      new Part.CustomToolCallPart({ callId: "call_2", name: "sql", input: "", namespace: "db", attributes: {} }),
      Part.CustomToolCallPart
    )
    same(
      UnsafePart.toolResultPart("call_1", "f", "42"),
      new Part.ToolResultPart({ callId: "call_1", name: "f", output: "42" }),
      Part.ToolResultPart
    )
    const part = UnsafePart.textDelta("hi", attributes)
    const update = UnsafePart.partUpdate("resp_1", 2, true, part)
    const made = new StreamPart.PartUpdate({ responseId: "resp_1", outputIndex: 2, partial: true, part })
    same(update, made, StreamPart.PartUpdate)
    assert.deepStrictEqual(StreamPart.encode(update), StreamPart.encode(made))
    assert.deepStrictEqual(StreamPart.encode(update), {
      type: "part",
      responseId: "resp_1",
      outputIndex: 2,
      partial: true,
      part: { type: "text", text: "hi", annotations: [], attributes }
    })
  })

  it("the complete parts, stream elements and usage equal their class constructors", () => {
    const payload = UnsafePart.opaquePayload("openai", "encrypted_content", "gAAA")
    same(payload, new Part.OpaquePayload({ provider: "openai", kind: "encrypted_content", data: "gAAA" }), Part.OpaquePayload)
    const summary = ["first", "second"]
    same(
      UnsafePart.reasoningPart(summary, undefined, undefined, attributes),
      new Part.ReasoningPart({ summary, attributes }),
      Part.ReasoningPart
    )
    same(
      UnsafePart.reasoningPart(summary, "think", payload, {}),
      new Part.ReasoningPart({ summary, text: "think", payload, attributes: {} }),
      Part.ReasoningPart
    )
    same(
      UnsafePart.toolCallPart("call_1", "f", "{}", attributes, "ns", payload),
      new Part.ToolCallPart({ callId: "call_1", name: "f", arguments: "{}", namespace: "ns", payload, attributes }),
      Part.ToolCallPart
    )
    same(
      UnsafePart.customToolCallPart("call_2", "sql", "SELECT", attributes, undefined, payload),
      new Part.CustomToolCallPart({ callId: "call_2", name: "sql", input: "SELECT", payload, attributes }),
      Part.CustomToolCallPart
    )
    const part = UnsafePart.textPart("done", [annotation], attributes)
    const replacing = UnsafePart.replacingUpdate("resp_1", 3, part)
    const madeReplacing = new StreamPart.PartUpdate({ responseId: "resp_1", outputIndex: 3, partial: false, replace: true, part })
    same(replacing, madeReplacing, StreamPart.PartUpdate)
    assert.deepStrictEqual(StreamPart.encode(replacing), StreamPart.encode(madeReplacing))
    const started = UnsafePart.responseStarted("resp_1", "o3-mini")
    same(started, new StreamPart.ResponseStarted({ responseId: "resp_1", model: "o3-mini" }), StreamPart.ResponseStarted)
    const usage = UnsafePart.usage(10, 2, 30, 20, 40)
    const madeUsage = new Usage.Usage({ inputTokens: 10, cachedInputTokens: 2, outputTokens: 30, reasoningTokens: 20, totalTokens: 40 })
    same(usage, madeUsage, Usage.Usage)
    for (const incompleteReason of [undefined, "max_output_tokens"]) {
      const finished = UnsafePart.responseFinished("resp_1", "incomplete", "length", incompleteReason, usage)
      const madeFinished = new StreamPart.ResponseFinished({
        responseId: "resp_1",
        status: "incomplete",
        finishReason: "length",
        ...(incompleteReason === undefined ? {} : { incompleteReason }),
        usage: madeUsage
      })
      same(finished, madeFinished, StreamPart.ResponseFinished)
      assert.deepStrictEqual(StreamPart.encode(finished), StreamPart.encode(madeFinished))
      const message = UnsafeMessage.assistantMessage([part])
      const response = UnsafeMessage.modelResponse("resp_1", "o3-mini", "incomplete", "length", incompleteReason, usage, message)
      const madeResponse = new ModelResponse.ModelResponse({
        id: "resp_1",
        model: "o3-mini",
        status: "incomplete",
        finishReason: "length",
        ...(incompleteReason === undefined ? {} : { incompleteReason }),
        usage: madeUsage,
        message: new Message.AssistantMessage({ parts: [part] })
      })
      same(response, madeResponse, ModelResponse.ModelResponse)
      assert.strictEqual(response.text, "done")
    }
  })

  it("Prompt.user, built without validation, equals the validated construction", () => {
    const fast = Prompt.user("How do I cross the street?")
    const made = Prompt.make([
      new Message.UserMessage({ role: "user", parts: [new Part.TextPart({ text: "How do I cross the street?" })] })
    ])
    same(fast, made, Prompt.Prompt)
    const [fastMessage, madeMessage] = [fast.messages[0] as Message.UserMessage, made.messages[0] as Message.UserMessage]
    same(fastMessage, madeMessage, Message.UserMessage)
    same(fastMessage.parts[0]!, madeMessage.parts[0]!, Part.TextPart)
    assert.deepStrictEqual(Prompt.encode(fast).pipe(Effect.runSync), Prompt.encode(made).pipe(Effect.runSync))
  })

  it("UnsafeMessage builds the messages the validated constructors build", () => {
    const parts = [UnsafePart.textDelta("hi", attributes), UnsafePart.toolCallPart("call_1", "f", "{}", {})]
    const assistant = UnsafeMessage.assistantMessage(parts)
    const madeAssistant = new Message.AssistantMessage({ parts })
    same(assistant, madeAssistant, Message.AssistantMessage)
    assert.strictEqual(assistant.text, "hi")
    const results = [UnsafePart.toolResultPart("call_1", "f", "42")]
    const tool = UnsafeMessage.toolMessage(results)
    const madeTool = new Message.ToolMessage({ results })
    same(tool, madeTool, Message.ToolMessage)
    assert.deepStrictEqual(tool.toolResults, madeTool.toolResults)
    const fast = Prompt.make([assistant, tool])
    const made = Prompt.make([madeAssistant, madeTool])
    assert.deepStrictEqual(Prompt.encode(fast).pipe(Effect.runSync), Prompt.encode(made).pipe(Effect.runSync))
  })
})
