/**
 * The `response.output_text.delta` event, the one a streamed answer sends per delta of its text: an object
 * with the fields of the plain event, in the order `JSON.stringify` writes them, whose SSE frame
 * (`ResponsesLifecycle.toSse`) is written from a template instead of `JSON.stringify` of the whole object
 * (that `JSON.stringify` and the object spread that built the event were an eighth of the gateway's busy
 * CPU samples in a long unpaced stream: packages/bench/RESULTS.md, "the gateway's CPU per event, round 2").
 * The frame is character for character `event: <type>\ndata: <JSON.stringify(event)>\n\n`; an event whose
 * `logprobs` are not empty (none the lifecycle makes) is written by `JSON.stringify`.
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
    const data = this.logprobs.length === 0
      ? `{"type":"${TYPE}","sequence_number":${JSON.stringify(this.sequence_number)},"item_id":${
        JSON.stringify(this.item_id)
      },"output_index":${JSON.stringify(this.output_index)},"content_index":${
        JSON.stringify(this.content_index)
      },"delta":${JSON.stringify(this.delta)},"logprobs":[]}`
      : JSON.stringify(this)
    return `event: ${TYPE}\ndata: ${data}\n\n`
  }
}
