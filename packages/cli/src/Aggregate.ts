/**
 * `effect-responses aggregate FILE|-`: a recorded Responses stream (raw SSE, or line-JSON: one JSON event
 * per line) -> a JSON array of `ModelResponse`s (the JSON encoding of `core`), one per response in the
 * capture, in order. A non-streaming Response JSON body (`POST /v1/responses` with `stream: false`, as in
 * `shared/fixtures/responses-json/`) is accepted too and gives the same array shape, with one element.
 *
 * Streams are read as bytes and folded incrementally (`ResponsesStream.decodeCapture` into
 * `MessageAggregator.sink`): memory grows with the text of the responses, not with the size of the capture
 * (deltas, SSE framing and repeated snapshots are not kept). A JSON body is one document and is read whole.
 * The input is a JSON body when its first line starts with `{` but is not an event (a JSON object with a
 * string `type`).
 *
 * Nothing is printed unless the whole input aggregates: a bad capture (malformed JSON, no terminal event,
 * an `error` event, `response.failed`, an HTTP error body) fails with one line naming the input and, when
 * known, the line.
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { ModelResponse } from "@effect-responses/core"
import { Capture, ResponsesOutput, ResponsesStream } from "@effect-responses/responses"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import { readInput, sourceName, toCaptureError } from "./internal/captureInput.js"

/** How much of the input is read to tell a JSON body from a stream: up to the end of its first non-blank line. */
interface Head {
  readonly text: string
  readonly complete: boolean
}

const HEAD_LIMIT = 1024 * 1024

const headSink: Sink.Sink<Head, string, string> = Sink.fold(
  { text: "", complete: false } as Head,
  (head) => !head.complete,
  (head, text: string) => {
    const next = head.text + text
    // Complete at the end of the first line that is not blank.
    const complete = next.replace(/^\uFEFF/, "").trimStart().includes("\n") || next.length > HEAD_LIMIT
    return { text: next, complete }
  }
)

/** Whether the first line of `head` starts a JSON body rather than a stream of events. */
const isJsonBody = (head: string): boolean => {
  const text = head.replace(/^\uFEFF/, "").trimStart()
  if (!text.startsWith("{")) return false
  const newline = text.indexOf("\n")
  const firstLine = newline === -1 ? text : text.slice(0, newline)
  try {
    const json: unknown = JSON.parse(firstLine)
    return !(typeof json === "object" && json !== null && typeof (json as { type?: unknown }).type === "string")
  } catch {
    return true
  }
}

const fromBody = (source: string, text: string): Effect.Effect<ReadonlyArray<ModelResponse.ModelResponse>, Capture.CaptureError> =>
  Effect.suspend(() => {
    let json: unknown
    try {
      json = JSON.parse(text.replace(/^\uFEFF/, ""))
    } catch (error) {
      return Effect.fail(
        new Capture.CaptureError({
          source,
          description: `malformed JSON (${error instanceof Error ? error.message : String(error)})`
        })
      )
    }
    const error = typeof json === "object" && json !== null ? (json as { error?: unknown }).error : undefined
    if (typeof error === "object" && error !== null && !("output" in (json as object))) {
      const message = (error as { message?: unknown }).message
      return Effect.fail(
        new Capture.CaptureError({
          source,
          description: `an error body, not a response: ${typeof message === "string" ? message : JSON.stringify(error)}`
        })
      )
    }
    const decoded = ResponsesOutput.decodeResponse(json)
    return Either.isLeft(decoded)
      ? Effect.fail(new Capture.CaptureError({ source, description: decoded.left.message }))
      : Effect.succeed([decoded.right])
  })

/**
 * The responses of the capture or JSON body at `input` (a path, or `-` for standard input). Fails with
 * `Capture.CaptureError` (one line: the input, the line when known, what is wrong).
 *
 * @since 0.1.0
 * @category aggregating
 */
export const responses = (
  input: string,
  options?: ResponsesStream.DecodeOptions
): Effect.Effect<ReadonlyArray<ModelResponse.ModelResponse>, Capture.CaptureError, FileSystem.FileSystem> => {
  const source = sourceName(input)
  return Effect.scoped(Effect.gen(function*() {
    const [head, rest] = yield* Stream.peel(Stream.decodeText(readInput(input)), headSink)
    if (head.text.replace(/^\uFEFF/, "").trim() === "") {
      // Nothing but whitespace so far: either an empty input or a stream; the decoder tells.
      if (!head.complete) return yield* new Capture.CaptureError({ source, description: "the capture is empty" })
    }
    if (isJsonBody(head.text)) {
      const text = yield* Stream.runFold(rest, [head.text], (parts, text) => {
        parts.push(text)
        return parts
      })
      return yield* fromBody(source, text.join(""))
    }
    return yield* ResponsesStream.decodeCaptureText(Stream.concat(Stream.make(head.text), rest), options).pipe(
      Stream.run(MessageAggregator.sink),
      Effect.mapError((error) => error._tag === "CaptureError" ? error : toCaptureError(source, error))
    )
  }))
}

const encodeResponses = Schema.encodeSync(Schema.Array(ModelResponse.ModelResponse))

/**
 * The `aggregate` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "aggregate",
  {
    input: Args.text({ name: "FILE" }).pipe(
      Args.withDescription(
        "a captured Responses stream (raw SSE or line-JSON) or a Response JSON body, or - for standard input"
      )
    )
  },
  ({ input }) =>
    Effect.flatMap(responses(input), (result) =>
      Effect.sync(() => {
        process.stdout.write(`${JSON.stringify(encodeResponses(result), null, 2)}\n`)
      }))
).pipe(Command.withDescription("print the ModelResponses of a captured Responses stream as a JSON array"))
