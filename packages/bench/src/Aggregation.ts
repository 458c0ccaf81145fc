/**
 * Aggregation cost: the time `MessageAggregator` takes to fold n text deltas, and n tool call argument
 * deltas, into one message, for a small and a large n. A linear fold takes about `large / small` times as
 * long for the large n (10x for 10k vs 100k). The harness runs it in a fresh child process: after the
 * throughput rounds, a heap full of their old objects makes every GC of the large run dearer and the ratio
 * meaningless.
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { Part, StreamPart } from "@effect-responses/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Speed from "./Speed.js"

/**
 * The times of one kind of delta through one path, for the small and the large count.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly kind: "text" | "arguments"
  /** `fold`: `MessageAggregator.fromIterable`; `stream`: `MessageAggregator.aggregate` of a `Stream`. */
  readonly path: "fold" | "stream"
  readonly small: Timing
  readonly large: Timing
}

/**
 * The times of one count of deltas, in milliseconds: the median and the best (least disturbed) run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Timing {
  readonly count: number
  readonly median: number
  readonly best: number
}

const WORDS = Array.from({ length: 26 }, (_, i) => `${String.fromCharCode(97 + i)}${i % 3 === 0 ? " " : ""}`)

/** A response with `n` deltas of `kind` on output index 0, and the text or arguments they add up to. */
const elements = (
  kind: Result["kind"],
  n: number
): { readonly elements: ReadonlyArray<StreamPart.StreamPart>; readonly expected: string } => {
  const parts = WORDS.map((word) =>
    new StreamPart.PartUpdate({
      responseId: "resp_1",
      outputIndex: 0,
      partial: true,
      part: kind === "text"
        ? new Part.TextPart({ text: word, attributes: { itemId: "msg_1" } })
        : new Part.ToolCallPart({ callId: "call_1", name: "lookup", arguments: word, attributes: { itemId: "fc_1" } })
    })
  )
  const out: Array<StreamPart.StreamPart> = [new StreamPart.ResponseStarted({ responseId: "resp_1", model: "m" })]
  const expected: Array<string> = []
  for (let i = 0; i < n; i++) {
    out.push(parts[i % parts.length]!)
    expected.push(WORDS[i % WORDS.length]!)
  }
  return { elements: out, expected: expected.join("") }
}

const resultOf = (kind: Result["kind"], responses: ReadonlyArray<{ readonly message: { readonly text: string; readonly toolCalls: ReadonlyArray<Part.ToolCallPart> } }>): string => {
  const message = responses[0]?.message
  if (message === undefined) return ""
  return kind === "text" ? message.text : message.toolCalls.map((call) => call.arguments).join("")
}

const time = (
  kind: Result["kind"],
  path: Result["path"],
  n: number,
  repeats: number
): Timing => {
  const { elements: input, expected } = elements(kind, n)
  const times: Array<number> = []
  for (let r = 0; r < repeats + 1; r++) {
    const start = performance.now()
    const responses = path === "fold"
      ? MessageAggregator.fromIterable(input)
      : Effect.runSync(MessageAggregator.aggregate(Stream.fromIterable(input)))
    const elapsed = performance.now() - start
    if (resultOf(kind, responses) !== expected) {
      throw new Speed.WrongResult(`MessageAggregator (${path})`, `${n} ${kind} deltas`, "wrong aggregated text")
    }
    if (r > 0) times.push(elapsed)
  }
  return { count: n, median: Speed.median(times), best: Math.min(...times) }
}

/**
 * Measures the fold and the stream sink on `small` and `large` deltas of text and of tool call arguments,
 * each `repeats` runs after one warm-up run. Fails with `WrongResult` when the aggregated
 * text differs from the concatenated deltas.
 *
 * @since 0.1.0
 * @category measuring
 */
export const measure = (small: number, large: number, repeats: number): ReadonlyArray<Result> => {
  const results: Array<Result> = []
  for (const kind of ["text", "arguments"] as const) {
    for (const path of ["fold", "stream"] as const) {
      results.push({
        kind,
        path,
        small: time(kind, path, small, repeats),
        large: time(kind, path, large, repeats)
      })
    }
  }
  return results
}
