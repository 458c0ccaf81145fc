/**
 * `effect-responses decode FILE|- [--protocol responses|chat-completions]`: a recorded Responses stream (raw
 * SSE, or line-JSON: one JSON event per line), or with `--protocol chat-completions` a recorded Chat
 * Completions stream (raw SSE or one `chat.completion.chunk` per line), -> JSON Lines of `StreamPart`s, one
 * object per element in the public JSON encoding of `core` (`{"type":"response_started",…}`, `{"type":"part","responseId","outputIndex","partial","replace"?,"part"}`,
 * `{"type":"response_finished",…}`).
 *
 * The input is read as a byte stream and decoded incrementally, so a capture of any size is processed in
 * memory bounded by one event. Each line is printed whole as soon as its element is decoded; when the
 * capture turns out to be bad (malformed JSON, an event over the size bound, no terminal event, an `error`
 * event or `response.failed`), the command fails with one line naming the file and, when known, the line,
 * after the lines of the elements that came before (the exit status says the output is incomplete).
 *
 * What the input is shows in its first characters (a bounded prefix, see `internal/sniff.ts`): a JSON body
 * is refused with a pointer to `aggregate`, and a capture of the other protocol with the `--protocol` to
 * pass.
 *
 * @since 0.1.0
 */
import { StreamPart } from "@effect-responses/core"
import { Capture } from "@effect-responses/responses"
import * as Command from "@effect/cli/Command"
import type * as Options from "@effect/cli/Options"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as CaptureInput from "./internal/captureInput.js"
import * as Commands from "./internal/commands.js"
import type * as Protocol from "./Protocol.js"

/**
 * What `lines` takes: the `protocol` of the capture (default `responses`) and the bound on one event
 * (`maxEventSize`, UTF-16 code units, default 16 MiB).
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  readonly protocol?: Protocol.Protocol | undefined
  readonly maxEventSize?: number | undefined
}

/**
 * The JSON Lines of the capture at `input` (a path, or `-` for standard input): one string per element,
 * each ending with `\n`. Fails with `Capture.CaptureError` (one line: the input, the line when known, what is
 * wrong) after the lines of the elements before the fault; before any line when the input is empty, is a
 * JSON body (`aggregate` reads those), or is a capture of the other protocol (the message says which
 * `--protocol` to pass).
 *
 * @since 0.1.0
 * @category decoding
 */
export const lines = (
  input: string,
  options: DecodeOptions = {}
): Stream.Stream<string, Capture.CaptureError, FileSystem.FileSystem> => {
  const source = CaptureInput.sourceName(input)
  const protocol = options.protocol ?? "responses"
  return Stream.unwrapScoped(Effect.gen(function*() {
    const { kind, text } = yield* CaptureInput.openAs(input, protocol)
    const fail = (description: string) => Effect.fail(new Capture.CaptureError({ source, description }))
    if (kind._tag === "Body") {
      return yield* fail(
        `a JSON body (one ${protocol === "responses" ? "Response" : "chat.completion"} object), not a stream: ` +
          "use `effect-responses aggregate` to read it"
      )
    }
    return CaptureInput.decodeText(text, protocol, source, options).pipe(
      Stream.mapChunks((elements) => {
        let out = ""
        for (const element of elements) out += `${JSON.stringify(StreamPart.encode(element))}\n`
        return Chunk.of(out)
      })
    )
  }))
}

const stdoutError = (error: unknown): Capture.CaptureError =>
  new Capture.CaptureError({ source: "<stdout>", description: `cannot write (${String(error)})` })

/**
 * The `--protocol` option of `decode` and `aggregate`.
 *
 * @since 0.1.0
 * @category options
 */
export const protocolOption: Options.Options<"responses" | "chat-completions"> = Commands.protocolOption

/**
 * The `decode` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Commands.decode.pipe(
  Command.withHandler(({ input, protocol }) =>
    lines(input, { protocol }).pipe(
      Stream.run(NodeSink.fromWritable(() => process.stdout, stdoutError, { endOnDone: false }))
    )
  )
)
