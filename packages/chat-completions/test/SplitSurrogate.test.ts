/**
 * A surrogate pair split across two chunks (a server slicing UTF-16: `"\ud83d"`, then `"\ude00 é"`): no
 * delta of text, reasoning or refusal holds half a pair, and the deltas join to the whole text. Hand-made
 * (no recording has such a split); many chunks of one template, so that the fast path reads most of them.
 */
import { ChatCompletionsStream } from "@effect-responses/chat-completions"
import type { Part, StreamPart } from "@effect-responses/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { bytes } from "./fixtures.js"

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${
    JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })
  }\n\n`

const sse = (field: string, pieces: ReadonlyArray<string>) =>
  chunk({ role: "assistant", [field]: "" }) + pieces.map((piece) => chunk({ [field]: piece })).join("") + chunk({}, "stop") +
  "data: [DONE]\n\n"

const deltasOf = (text: string) =>
  Effect.map(Stream.runCollect(ChatCompletionsStream.decodeSse(Stream.make(bytes(text)))), (all) =>
    Chunk.toReadonlyArray(all).flatMap((element: StreamPart.StreamPart) => {
      if (element.type !== "part" || !element.partial) return []
      const part = element.part as Part.AssistantPart
      switch (part.type) {
        case "text":
          return [part.text]
        case "reasoning":
          return [part.text ?? ""]
        case "refusal":
          return [part.text]
        default:
          return []
      }
    }))

/** No lone surrogate (`String.prototype.isWellFormed`, not in this project's lib). */
const wellFormed = (text: string): boolean => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)

const PIECES = ["a", "b", "c", "\ud83d", "\ude00 é", "d \ud83d", "\ude01", "e", "\ud83d", "\ude02\ud83d", "\ude03"]
const WHOLE = PIECES.join("")

describe("a surrogate pair split across chunks", () => {
  for (const field of ["content", "reasoning_content", "refusal"]) {
    it.effect(`${field}: every delta well-formed, the deltas join to the text`, () =>
      Effect.gen(function*() {
        const deltas = yield* deltasOf(sse(field, PIECES))
        for (const delta of deltas) assert.isTrue(wellFormed(delta), JSON.stringify(delta))
        expect(deltas.join("")).toBe(WHOLE)
        assert.isTrue(wellFormed(WHOLE))
      }))
  }

  it.effect("a high surrogate that ends the text is given as it is, at the end", () =>
    Effect.gen(function*() {
      const deltas = yield* deltasOf(sse("content", ["a", "b", "c\ud83d"]))
      expect(deltas).toEqual(["a", "b", "c", "\ud83d"])
    }))

  it.effect("text held, then reasoning: the held half goes out with the text's deltas first", () =>
    Effect.gen(function*() {
      const text = chunk({ role: "assistant", content: "x\ud83d" }) + chunk({ reasoning_content: "r" }) +
        chunk({ content: "\ude00" }) + chunk({}, "stop") + "data: [DONE]\n\n"
      const deltas = yield* deltasOf(text)
      expect(deltas).toEqual(["x", "\ud83d", "r", "\ude00"])
    }))
})
