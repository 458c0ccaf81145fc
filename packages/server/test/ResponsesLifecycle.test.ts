/**
 * `ResponsesLifecycle.toSsePieces`: the SSE text of events in pieces, a large string in slices of its JSON
 * escaping, equal to `toSse` character for character.
 */
import { ResponsesLifecycle } from "@effect-responses/server"
import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"

/** Characters whose escaping or encoding is awkward to slice: escapes, control characters, a surrogate pair, lone surrogates. */
const awkward = FastCheck.constantFrom("a", "é", "\n", "\"", "\\", "\u0001", "\u2028", "😀", "\ud83d", "\ude00", "</")
const text = FastCheck.array(awkward, { maxLength: 60 }).map((chars) => chars.join(""))
const event = FastCheck.record({
  type: FastCheck.constantFrom("response.output_text.delta", "response.output_text.done", "response.completed"),
  sequence_number: FastCheck.nat(),
  text,
  response: FastCheck.record({ output: FastCheck.array(FastCheck.record({ text, arguments: text }), { maxLength: 3 }) }),
  absent: FastCheck.constant(undefined)
})

describe("ResponsesLifecycle.toSsePieces", () => {
  it.prop(
    "the pieces join to toSse of the same events, for any piece size",
    [FastCheck.array(event, { maxLength: 4 }), FastCheck.integer({ min: 1, max: 24 })],
    ([events, pieceChars]) => {
      const pieces = [...ResponsesLifecycle.toSsePieces(events, pieceChars)]
      expect(pieces.join("")).toBe(ResponsesLifecycle.toSse(events))
      expect(pieces.every((piece) => piece !== "")).toBe(true)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("a 4 MB answer repeated by an event is written in slices: no piece holds more than one slice's escaping", () => {
    const answer = "😀 \"quoted\"\n".repeat(300_000)
    const events = [{ type: "response.output_text.done", sequence_number: 7, item_id: "msg_1", text: answer, logprobs: [] }]
    const pieces = [...ResponsesLifecycle.toSsePieces(events)]
    expect(pieces.join("")).toBe(ResponsesLifecycle.toSse(events))
    expect(pieces.length).toBeGreaterThan(answer.length / (64 * 1024))
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(6 * 64 * 1024)
  })
})
