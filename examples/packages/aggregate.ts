import { Part, StreamPart } from "@effect-responses/core"
import { MessageAggregator } from "@effect-responses/aggregate"

// Two text deltas of one output item and the item's completion, folded into one response
const update = (text: string, partial: boolean) =>
  new StreamPart.PartUpdate({ responseId: "resp_1", outputIndex: 0, partial, part: new Part.TextPart({ text }) })
const [response] = MessageAggregator.fromIterable([
  new StreamPart.ResponseStarted({ responseId: "resp_1", model: "gpt-5.1" }),
  update("Hello, ", true),
  update("world.", true),
  update("", false)
])
console.log(response?.message.text) // "Hello, world."
