/**
 * Decoding speed of the recorded 194 KB o3-mini stream (pydantic-ai, MIT: see `fixtures/SOURCES.md`)
 * against a bare split-and-`JSON.parse` loop, the floor of any decoder of this stream (what is left is the
 * work per event beyond parsing its JSON).
 */
import { ResponsesStream } from "@effect-responses/responses"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { bench, describe } from "vitest"
import { readFixture } from "../test/fixtures.js"

const text = readFixture("responses-sse/pai-o3mini-reasoning-summary-deltas.sse")
const bytes = new TextEncoder().encode(text)
const chunks: Array<Uint8Array> = []
for (let i = 0; i < bytes.length; i += 16 * 1024) chunks.push(bytes.subarray(i, i + 16 * 1024))
const payloads = text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
// One CRLF at the top, LF after: a framer that searched for the next CR from every line once a piece held any
// (eventsource-parser's path, which framed the streams until 0.2.0) was 3.4x slower here than without the CR,
// and 100x or more on bodies of megabytes given as one piece.
const withOneCrlf = `: comment\r\n${text}`

describe("ResponsesStream (194 KB, 676 events)", () => {
  bench("baseline: split on blank lines + JSON.parse", () => {
    for (const block of text.split("\n\n")) {
      const at = block.indexOf("data: ")
      if (at >= 0) JSON.parse(block.slice(at + 6))
    }
  })
  bench("decodeSse, 16 KiB byte chunks", () => {
    Effect.runSync(Stream.runDrain(ResponsesStream.decodeSse(Stream.fromIterable(chunks))))
  })
  bench("decodeSseText, the body as one string", () => {
    Effect.runSync(Stream.runDrain(ResponsesStream.decodeSseText(Stream.make(text))))
  })
  bench("decodeSseText, one string whose first line ends with CRLF", () => {
    Effect.runSync(Stream.runDrain(ResponsesStream.decodeSseText(Stream.make(withOneCrlf))))
  })
  bench("decodeData, framed payloads", () => {
    Effect.runSync(Stream.runDrain(ResponsesStream.decodeData(Stream.fromIterable(payloads))))
  })
})
