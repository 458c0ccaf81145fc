/**
 * `ResponsesStream` decodes incrementally: when the body stalls after N events, the parts of
 * those N events have already been emitted. Not timed: a decoder that waited for more input would never
 * hand the parts over, and the test would not finish.
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import type { StreamPart } from "@effect-responses/core"
import { ResponsesStream } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { bytes, encodeAll } from "./utils.js"

const created = { type: "response.created", response: { id: "resp_1", model: "m", status: "in_progress" } }
const added = {
  type: "response.output_item.added",
  output_index: 0,
  item: { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] }
}
const delta = (text: string) => ({
  type: "response.output_text.delta",
  item_id: "msg_1",
  output_index: 0,
  content_index: 0,
  delta: text
})
const done = {
  type: "response.output_item.done",
  output_index: 0,
  item: {
    type: "message",
    id: "msg_1",
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: "Hello, world ✓", annotations: [] }]
  }
}
const completed = {
  type: "response.completed",
  response: { id: "resp_1", status: "completed", output: [], usage: { input_tokens: 1, output_tokens: 2 } }
}

const sse = (event: unknown) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`

describe("ResponsesStream incremental decoding", () => {
  it.effect("when the body stalls after N events, the parts of those N events have been emitted", () =>
    Effect.gen(function*() {
      // N = 4 events (created, added, two deltas: three parts), then the first bytes of the next event, cut
      // inside a multi-byte character; then the body stalls until `release`
      const head = bytes(`${sse(created)}${sse(added)}${sse(delta("Hello"))}${sse(delta(", wo"))}`)
      const next = bytes(sse(delta("rld ✓")))
      const cut = next.indexOf(0xe2) + 1
      const release = yield* Deferred.make<void>()
      const body = Stream.concat(
        Stream.make(head.subarray(0, 40), head.subarray(40), next.subarray(0, cut)),
        Stream.unwrap(
          Deferred.await(release).pipe(
            Effect.as(Stream.make(next.subarray(cut), bytes(`${sse(done)}${sse(completed)}`)))
          )
        )
      )
      const received: Array<StreamPart.StreamPart> = []
      // completed by the consumer once it holds the parts of the first events
      const firstParts = yield* Deferred.make<void>()
      const consumer = yield* ResponsesStream.decodeSse(body).pipe(
        Stream.tap((element) =>
          Effect.gen(function*() {
            received.push(element)
            if (received.length === 3) yield* Deferred.succeed(firstParts, undefined)
          })
        ),
        Stream.runCollect,
        Effect.fork
      )
      yield* Deferred.await(firstParts)
      assert.isFalse(yield* Deferred.isDone(release))
      expect(encodeAll(received)).toStrictEqual([
        { type: "response_started", responseId: "resp_1", model: "m" },
        {
          type: "part",
          responseId: "resp_1",
          outputIndex: 0,
          partial: true,
          part: { type: "text", text: "Hello", annotations: [], attributes: { itemId: "msg_1", status: "in_progress" } }
        },
        {
          type: "part",
          responseId: "resp_1",
          outputIndex: 0,
          partial: true,
          part: { type: "text", text: ", wo", annotations: [], attributes: { itemId: "msg_1", status: "in_progress" } }
        }
      ])

      // the rest arrives: the cut event completes, and the whole stream aggregates as one
      yield* Deferred.succeed(release, undefined)
      const all = yield* Fiber.join(consumer)
      assert.strictEqual(all.length, 6)
      const [response] = MessageAggregator.fromIterable(all)
      assert.strictEqual(response?.text, "Hello, world ✓")
    }))
})
