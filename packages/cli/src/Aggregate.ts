/**
 * `effect-responses aggregate FILE|- [--protocol responses|chat-completions]`: a recorded Responses stream
 * (raw SSE, or line-JSON: one JSON event per line) -> a JSON array of `ModelResponse`s (the JSON encoding of `core`), one per response in the
 * capture, in order. A non-streaming Response JSON body (`POST /v1/responses` with `stream: false`, e.g. the
 * recorded `pai-gpt4o-text.json`) is accepted too and gives the same array shape, with one element.
 * With `--protocol chat-completions` the input is a recorded Chat Completions stream (raw SSE, or one
 * `chat.completion.chunk` per line) or a `chat.completion` JSON body, folded the same way.
 *
 * Streams are read as bytes and folded incrementally (the protocol's decoder into `MessageAggregator.sink`):
 * memory grows with the text of the responses, not with the size of the capture (deltas, SSE framing and
 * repeated snapshots are not kept); one event over `maxEventSize` fails with `an event exceeds N
 * characters`. A JSON body is one document and is read whole, up to the same bound. What the input is
 * shows in a bounded prefix (`internal/sniff.ts`): the top-level keys of its first JSON object (a string
 * `"type"` is an event of a line-JSON capture; `"object": "response"` or an `"error"` key a body), or an SSE
 * field; a capture or body of the other protocol fails with the `--protocol` to pass.
 *
 * Nothing is printed unless the whole input aggregates: a bad capture (malformed JSON, no terminal event,
 * an `error` event, `response.failed`, an HTTP error body) fails with one line naming the input and, when
 * known, the line.
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { ChatCompletionsOutput } from "@effect-responses/chat-completions"
import { ModelResponse } from "@effect-responses/core"
import { Capture, ResponsesOutput, ResponsesStream } from "@effect-responses/responses"
import * as Command from "@effect/cli/Command"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Decode from "./Decode.js"
import * as CaptureInput from "./internal/captureInput.js"
import * as Commands from "./internal/commands.js"
import type * as Protocol from "./Protocol.js"

const fromBody = (
  source: string,
  text: string,
  protocol: Protocol.Protocol
): Effect.Effect<ReadonlyArray<ModelResponse.ModelResponse>, Capture.CaptureError> =>
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
    if (
      typeof error === "object" && error !== null && !("output" in (json as object)) && !("choices" in (json as object))
    ) {
      const message = (error as { message?: unknown }).message
      return Effect.fail(
        new Capture.CaptureError({
          source,
          description: `an error body, not a response: ${typeof message === "string" ? message : JSON.stringify(error)}`
        })
      )
    }
    if (protocol === "chat-completions") {
      return ChatCompletionsOutput.fromCompletion(json).pipe(
        Effect.mapBoth({
          onFailure: (error) => new Capture.CaptureError({ source, description: error.message }),
          onSuccess: (response) => [response]
        })
      )
    }
    const decoded = ResponsesOutput.decodeResponse(json)
    return Either.isLeft(decoded)
      ? Effect.fail(new Capture.CaptureError({ source, description: decoded.left.message }))
      : Effect.succeed([decoded.right])
  })

/**
 * What `responses` takes: the `protocol` of the input (default `responses`) and the bound on one event or
 * body (`maxEventSize`, UTF-16 code units, default 16 MiB).
 *
 * @since 0.1.0
 * @category models
 */
export type AggregateOptions = Decode.DecodeOptions

/**
 * The responses of the capture or JSON body at `input` (a path, or `-` for standard input). Fails with
 * `Capture.CaptureError` (one line: the input, the line when known, what is wrong).
 *
 * @since 0.1.0
 * @category aggregating
 */
export const responses = (
  input: string,
  options: AggregateOptions = {}
): Effect.Effect<ReadonlyArray<ModelResponse.ModelResponse>, Capture.CaptureError, FileSystem.FileSystem> => {
  const source = CaptureInput.sourceName(input)
  const protocol = options.protocol ?? "responses"
  const maxSize = options.maxEventSize ?? ResponsesStream.DEFAULT_MAX_EVENT_SIZE
  return Effect.scoped(Effect.gen(function*() {
    const { kind, text } = yield* CaptureInput.openAs(input, protocol)
    const fail = (description: string) => Effect.fail(new Capture.CaptureError({ source, description }))
    if (kind._tag === "Body") {
      const parts: Array<string> = []
      let size = 0
      yield* Stream.runForEachWhile(text, (piece) =>
        Effect.sync(() => {
          parts.push(piece)
          size += piece.length
          return size <= maxSize
        }))
      if (size > maxSize) return yield* fail(`the JSON body exceeds ${maxSize} characters`)
      return yield* fromBody(source, parts.join(""), protocol)
    }
    return yield* CaptureInput.decodeText(text, protocol, source, options).pipe(Stream.run(MessageAggregator.sink))
  }))
}

const encodeResponses = Schema.encodeSync(Schema.Array(ModelResponse.ModelResponse))

/**
 * The `aggregate` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Commands.aggregate.pipe(
  Command.withHandler(({ input, protocol }) =>
    Effect.flatMap(responses(input, { protocol }), (result) =>
      Effect.sync(() => {
        process.stdout.write(`${JSON.stringify(encodeResponses(result), null, 2)}\n`)
      }))
  )
)
