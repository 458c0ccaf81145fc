/**
 * `effect-responses decode FILE|-`: a recorded Responses stream (raw SSE, or line-JSON: one JSON event per
 * line) -> JSON Lines of `StreamPart`s, one object per element in the public JSON encoding of `core`
 * (`{"type":"response_started",…}`, `{"type":"part","responseId","outputIndex","partial","replace"?,"part"}`,
 * `{"type":"response_finished",…}`).
 *
 * The input is read as a byte stream and decoded incrementally, so a capture of any size is processed in
 * memory bounded by one event. Each line is printed whole as soon as its element is decoded; when the
 * capture turns out to be bad (malformed JSON, an event over the size bound, no terminal event, an `error`
 * event or `response.failed`), the command fails with one line naming the file and, when known, the line,
 * after the lines of the elements that came before (the exit status says the output is incomplete).
 *
 * @since 0.1.0
 */
import { StreamPart } from "@effect-responses/core"
import { Capture, ResponsesStream } from "@effect-responses/responses"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"
import { readInput, sourceName, toCaptureError } from "./internal/captureInput.js"

/**
 * The JSON Lines of the capture at `input` (a path, or `-` for standard input): one string per element,
 * each ending with `\n`. Fails with `Capture.CaptureError` (one line: the input, the line when known, what is
 * wrong) after the lines of the elements before the fault.
 *
 * @since 0.1.0
 * @category decoding
 */
export const lines = (
  input: string,
  options?: ResponsesStream.DecodeOptions
): Stream.Stream<string, Capture.CaptureError, FileSystem.FileSystem> => {
  const source = sourceName(input)
  return ResponsesStream.decodeCapture(readInput(input), options).pipe(
    Stream.mapError((error) => error._tag === "CaptureError" ? error : toCaptureError(source, error)),
    Stream.mapChunks((elements) => {
      let text = ""
      for (const element of elements) text += `${JSON.stringify(StreamPart.encode(element))}\n`
      return Chunk.of(text)
    })
  )
}

const stdoutError = (error: unknown): Capture.CaptureError =>
  new Capture.CaptureError({ source: "<stdout>", description: `cannot write (${String(error)})` })

/**
 * The `decode` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "decode",
  {
    input: Args.text({ name: "FILE" }).pipe(
      Args.withDescription("a captured Responses stream (raw SSE or line-JSON), or - for standard input")
    )
  },
  ({ input }) =>
    lines(input).pipe(
      Stream.run(NodeSink.fromWritable(() => process.stdout, stdoutError, { endOnDone: false }))
    )
).pipe(Command.withDescription("print the StreamParts of a captured Responses stream, one JSON object per line"))
