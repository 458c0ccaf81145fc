/**
 * The `response.output_text.delta` event, the one a streamed answer sends per delta of its text: an object
 * with the fields of the plain event, in the order `JSON.stringify` writes them, whose SSE frame
 * (`ResponsesLifecycle.toSse`) is written from a template instead of `JSON.stringify` of the whole object
 * (that `JSON.stringify` and the object spread that built the event were an eighth of the gateway's busy
 * CPU samples in a long unpaced stream: packages/bench/RESULTS.md, "the gateway's CPU per event, round 2").
 * The frame is character for character `event: <type>\ndata: <JSON.stringify(event)>\n\n`; an event whose
 * `logprobs` are not empty (none the lifecycle makes) is written by `JSON.stringify`. Only the sequence number
 * and the delta are written per event: the rest of the template is the same for all the deltas of an item's
 * text (the three `JSON.stringify` of the item id and the indexes per event were most of the template's cost:
 * packages/bench/RESULTS.md, "the gateway's CPU per event, round 3").
 *
 * @internal
 */
import type { Event } from "../../ResponsesLifecycle.js"

const TYPE = "response.output_text.delta"

/** See the module doc. */
export class TextDelta implements Event {
  readonly [key: string]: unknown
  readonly type: typeof TYPE
  readonly sequence_number: number
  readonly item_id: string
  readonly output_index: number
  readonly content_index: number
  readonly delta: string
  readonly logprobs: ReadonlyArray<unknown>
  constructor(sequenceNumber: number, itemId: string, outputIndex: number, delta: string) {
    this.type = TYPE
    this.sequence_number = sequenceNumber
    this.item_id = itemId
    this.output_index = outputIndex
    this.content_index = 0
    this.delta = delta
    this.logprobs = []
  }

  /** The event's SSE frame (see the module doc). */
  sse(): string {
    if (this.logprobs.length !== 0) return `event: ${TYPE}\ndata: ${JSON.stringify(this)}\n\n`
    // `${n}` is `JSON.stringify(n)` for the integers a sequence number is
    return `${HEAD}${this.sequence_number}${middle(this.item_id, this.output_index, this.content_index)}${
      JSON.stringify(this.delta)
    },"logprobs":[]}\n\n`
  }
}

/** The frame up to the sequence number. */
const HEAD = `event: ${TYPE}\ndata: {"type":"${TYPE}","sequence_number":`

/**
 * The frame from the sequence number to the delta, the same for every delta of an item's text: made once
 * for the last item asked for (a long answer's deltas come one item at a time; concurrent streams taking
 * turns make it again per turn, three `JSON.stringify` as every delta did before), not per delta.
 */
let lastMiddle = { itemId: "", outputIndex: -1, contentIndex: -1, text: "" }
const middle = (itemId: string, outputIndex: number, contentIndex: number): string => {
  if (itemId !== lastMiddle.itemId || outputIndex !== lastMiddle.outputIndex || contentIndex !== lastMiddle.contentIndex) {
    lastMiddle = {
      itemId,
      outputIndex,
      contentIndex,
      text: `,"item_id":${JSON.stringify(itemId)},"output_index":${JSON.stringify(outputIndex)},"content_index":${
        JSON.stringify(contentIndex)
      },"delta":`
    }
  }
  return lastMiddle.text
}
