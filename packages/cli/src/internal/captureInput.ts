/**
 * What the `decode` and `aggregate` verbs (and `chat --replay`) share: reading a capture (a file or standard
 * input) as a byte stream, telling what it is from a bounded prefix (`sniff.ts`), decoding it with the
 * decoder of its protocol, and turning decoder errors into one-line `CaptureError`s naming the input and
 * the line.
 *
 * @internal
 */
import { ChatCompletionsStream } from "@effect-responses/chat-completions"
import type { StreamPart } from "@effect-responses/core"
import { Capture, ResponsesStream } from "@effect-responses/responses"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as Sniff from "./sniff.js"

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
export const toCaptureError = (
  source: string,
  error: ResponsesStream.DecodeError | ChatCompletionsStream.DecodeError
): Capture.CaptureError =>
  new Capture.CaptureError({
    source,
    ...(error._tag === "MalformedOutput" && error.line !== undefined ? { line: error.line } : {}),
    description: error.message
  })

/** @internal */
export interface Opened {
  /** What the input is, from its first characters. */
  readonly kind: Sniff.Kind
  /** The whole text of the input, the sniffed prefix included. */
  readonly text: Stream.Stream<string, Capture.CaptureError>
}

interface Head {
  readonly text: string
  readonly kind: Sniff.Kind | undefined
}

const headSink: Sink.Sink<Head, string, string> = Sink.fold(
  { text: "", kind: undefined } as Head,
  (head) => head.kind === undefined,
  (head, piece: string) => {
    const text = head.text + piece
    return { text, kind: Sniff.classify(text, false) }
  }
)

/**
 * Opens `input` (a path, or `-`): reads text until its kind shows (at most `Sniff.PREFIX_LIMIT` characters
 * beyond the piece that completes it) and gives the kind with the whole text. @internal
 */
export const open = (
  input: string
): Effect.Effect<Opened, Capture.CaptureError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const [head, rest] = yield* Stream.peel(Stream.decodeText(readInput(input)), headSink)
    const kind = head.kind ?? Sniff.classify(head.text, true)!
    return {
      kind,
      text: Stream.concat(Stream.make(head.text), rest).pipe(Stream.provideService(FileSystem.FileSystem, fs))
    }
  })

/**
 * `open` for reading as `protocol`: fails with a `CaptureError` naming the input when it is empty (`the
 * capture is empty`) or shows the other protocol (`Sniff.protocolHint`: which `--protocol` to pass). @internal
 */
export const openAs = (
  input: string,
  protocol: Sniff.Protocol
): Effect.Effect<Opened, Capture.CaptureError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.flatMap(open(input), (opened) => {
    const problem = opened.kind._tag === "Empty" ? "the capture is empty" : Sniff.protocolHint(opened.kind, protocol)
    return problem === undefined
      ? Effect.succeed(opened)
      : Effect.fail(new Capture.CaptureError({ source: sourceName(input), description: problem }))
  })

/** @internal */
export interface DecodeOptions {
  readonly maxEventSize?: number | undefined
}

/**
 * The `StreamPart`s of a capture's text (raw SSE or line-JSON) of `protocol`, with decoder errors as
 * `CaptureError`s naming `source`. @internal
 */
export const decodeText = (
  text: Stream.Stream<string, Capture.CaptureError>,
  protocol: Sniff.Protocol,
  source: string,
  options?: DecodeOptions
): Stream.Stream<StreamPart.StreamPart, Capture.CaptureError> => {
  const decoded = protocol === "responses"
    ? ResponsesStream.decodeCaptureText(text, options)
    : ChatCompletionsStream.decodeCaptureText(text, options)
  return decoded.pipe(
    Stream.mapError((error) => error._tag === "CaptureError" ? error : toCaptureError(source, error))
  )
}
