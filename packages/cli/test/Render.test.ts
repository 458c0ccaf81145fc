/**
 * The terminal rendering of a tool loop, element by element: replacements, interleaved parallel calls,
 * commentary, early stops.
 */
import { Render } from "@effect-responses/cli"
import { Part, StreamPart, Usage } from "@effect-responses/core"
import type { ToolLoop } from "@effect-responses/tools"
import { assert, describe, it } from "@effect/vitest"

const R = "resp_1"

const update = (
  outputIndex: number,
  part: StreamPart.PartUpdate["part"],
  options: { readonly partial?: boolean; readonly replace?: boolean } = {}
): StreamPart.PartUpdate =>
  new StreamPart.PartUpdate({
    responseId: R,
    outputIndex,
    partial: options.partial ?? true,
    ...(options.replace === true ? { replace: true } : {}),
    part
  })

const text = (t: string, phase?: string) =>
  new Part.TextPart({ text: t, ...(phase === undefined ? {} : { attributes: { phase } }) })
const call = (id: string, name: string, args: string) => new Part.ToolCallPart({ callId: id, name, arguments: args })
const reasoning = (summary: ReadonlyArray<string>) => new Part.ReasoningPart({ summary })
const refusal = (t: string) => new Part.RefusalPart({ text: t })

const finished = (finishReason: StreamPart.ResponseFinished["finishReason"] = "stop") =>
  new StreamPart.ResponseFinished({ responseId: R, status: "completed", finishReason, usage: Usage.empty })

const render = (events: ReadonlyArray<ToolLoop.Event>): string => {
  const renderer = Render.make(Render.plain)
  return events.map(renderer.render).join("") + renderer.end()
}

describe("Render", () => {
  it("a replacement of an item already shown is written again whole on a new line, marked corrected", () => {
    assert.strictEqual(
      render([
        update(0, text("X")),
        update(0, text("The answer."), { partial: false, replace: true }),
        finished()
      ]),
      "answer: X\nanswer (corrected): The answer.\n"
    )
    assert.strictEqual(
      render([
        update(0, reasoning(["Thinking"])),
        update(0, reasoning(["", "more"])),
        update(0, reasoning(["Other", "lines"]), { partial: false, replace: true }),
        update(1, call("c1", "calc", "{\"a\"")),
        update(1, call("c1", "calc", "{\"b\":2}"), { partial: false, replace: true }),
        update(2, refusal("No")),
        update(2, refusal("I cannot."), { partial: false, replace: true }),
        finished()
      ]),
      [
        "reasoning: Thinking",
        "           more",
        "reasoning (corrected): Other",
        "           lines",
        "tool call: calc {\"a\"",
        "tool call (corrected): calc {\"b\":2}",
        "refusal: No",
        "refusal (corrected): I cannot.",
        ""
      ].join("\n")
    )
  })

  it("a replacement equal to what was shown, or of an item not shown yet, is shown once", () => {
    assert.strictEqual(
      render([
        update(0, text("Same")),
        update(0, text("Same"), { partial: false, replace: true }),
        update(1, text("Fresh"), { partial: false, replace: true }),
        finished()
      ]),
      "answer: Same\nanswer: Fresh\n"
    )
  })

  it("parallel tool calls: one header each, and interleaved argument fragments are not mixed", () => {
    assert.strictEqual(
      render([
        update(0, call("a", "weather", "")),
        update(0, call("a", "weather", "{\"city\":")),
        update(1, call("b", "stock", "")),
        update(1, call("b", "stock", "{\"ticker\":")),
        update(0, call("a", "weather", "\"Paris\"}")),
        update(1, call("b", "stock", "\"AAPL\"}")),
        update(0, call("a", "weather", ""), { partial: false }),
        update(1, call("b", "stock", ""), { partial: false }),
        finished("tool_calls")
      ]),
      "tool call: weather {\"city\":\"Paris\"}\ntool call: stock {\"ticker\":\"AAPL\"}\n"
    )
  })

  it("the item being written streams; a later item complete before it waits for its line", () => {
    const renderer = Render.make(Render.plain)
    assert.strictEqual(renderer.render(update(0, call("a", "f", "{"))), "tool call: f {")
    assert.strictEqual(renderer.render(update(1, call("b", "g", "{}"), { partial: false })), "")
    assert.strictEqual(renderer.render(update(0, call("a", "f", "}"))), "}")
    assert.strictEqual(renderer.render(update(0, call("a", "f", ""), { partial: false })), "\ntool call: g {}\n")
  })

  it("a message of phase commentary is labelled commentary, also when the phase comes with the completing part", () => {
    assert.strictEqual(
      render([
        update(0, text("Let me check.", "commentary")),
        update(0, text("", "commentary"), { partial: false }),
        update(1, text("Done.", "final_answer")),
        update(1, text(""), { partial: false }),
        finished()
      ]),
      "commentary: Let me check.\nanswer: Done.\n"
    )
    assert.strictEqual(
      render([update(0, text("Checking")), update(0, text("", "commentary"), { partial: false }), finished()]),
      "answer: Checking (commentary)\n"
    )
    assert.strictEqual(render([update(0, text("Checking", "commentary"), { partial: false }), finished()]), "commentary: Checking\n")
  })

  it("a response stopped by the output token limit or the content filter says so", () => {
    assert.strictEqual(
      render([update(0, text("Once upon")), update(0, text(""), { partial: false }), finished("length")]),
      "answer: Once upon\n(stopped: output token limit)\n"
    )
    assert.strictEqual(render([finished("content_filter")]), "(stopped: content filter)\n")
  })

  it("end() writes what is held back when the stream stops in the middle", () => {
    assert.strictEqual(
      render([update(0, call("a", "f", "{\"x\"")), update(1, call("b", "g", "{\"y\""))]),
      "tool call: f {\"x\"\ntool call: g {\"y\"\n"
    )
  })
})
