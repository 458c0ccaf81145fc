import { MessageAggregator } from "@effect-responses/aggregate"
import { Part, StreamPart } from "@effect-responses/core"
import { bench, describe } from "vitest"

const deltas = (n: number): ReadonlyArray<StreamPart.StreamPart> => {
  const letters = Array.from({ length: 26 }, (_, i) =>
    new StreamPart.PartUpdate({
      responseId: "resp_1",
      outputIndex: 0,
      partial: true,
      part: new Part.TextPart({ text: String.fromCharCode(97 + i), attributes: { itemId: "msg_1" } })
    }))
  const elements: Array<StreamPart.StreamPart> = [new StreamPart.ResponseStarted({ responseId: "resp_1", model: "m" })]
  for (let i = 0; i < n; i++) elements.push(letters[i % 26]!)
  return elements
}

describe("MessageAggregator", () => {
  const elements = deltas(100_000)
  bench("fold 100k one-character text deltas", () => {
    MessageAggregator.fromIterable(elements)
  })
})
