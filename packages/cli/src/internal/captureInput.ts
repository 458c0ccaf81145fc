/**
 * What the `decode` and `aggregate` verbs share: reading a capture (a file or standard input) as a byte
 * stream, and turning decoder errors into one-line `CaptureError`s naming the input and the line.
 *
 * @internal
 */
import { Capture, type ResponsesStream } from "@effect-responses/responses"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** The name of standard input in error messages. */
const STDIN = "<stdin>"

/** @internal */
export const sourceName = (input: string): string => input === "-" ? STDIN : input

/** The bytes of `input` (a path, or `-` for standard input), streamed, never read whole. @internal */
export const readInput = (
  input: string
): Stream.Stream<Uint8Array, Capture.CaptureError, FileSystem.FileSystem> =>
  input === "-"
    ? NodeStream.fromReadable(
      () => process.stdin,
      (error) => new Capture.CaptureError({ source: STDIN, description: `cannot read (${String(error)})` }),
      { closeOnDone: false }
    )
    : fileStream(input)

const fileStream = (path: string): Stream.Stream<Uint8Array, Capture.CaptureError, FileSystem.FileSystem> =>
  Stream.unwrap(Effect.map(FileSystem.FileSystem, (fs) =>
    fs.stream(path).pipe(
      Stream.mapError((error) =>
        new Capture.CaptureError({
          source: path,
          description: error._tag === "SystemError" && error.reason === "NotFound"
            ? "no such file"
            : `cannot read the file (${error.message})`
        })
      )
    )))

/** A decoder error as a one-line `CaptureError` naming the input and, when known, the line. @internal */
export const toCaptureError = (source: string, error: ResponsesStream.DecodeError): Capture.CaptureError =>
  new Capture.CaptureError({
    source,
    ...(error._tag === "MalformedOutput" && error.line !== undefined ? { line: error.line } : {}),
    description: error.message
  })
