/**
 * Reading capture files, the recordings of streams that both protocols replay and decode: raw SSE as it
 * came off the wire (`data:` frames, optionally with `event:`, `id:`, `retry:` fields and `:` comments), or
 * line-JSON, one payload per line, as in vercel/ai's `*.chunks.txt` recordings. This module finds the
 * frames of a whole capture text and their lines, parses their JSON and reads the file; what a frame means
 * (a Responses event, a `chat.completion.chunk`) and where one recorded response ends is each protocol's
 * (`Capture`, `ChatCapture`).
 *
 * Errors are built by the caller's `makeError` from `ErrorFields`, so that each protocol keeps its own
 * tagged error.
 *
 * @since 0.1.0
 */
import { AiError } from "@effect-responses/core"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { createParser } from "eventsource-parser"

/**
 * One frame of a capture: its payload text (`data`, the SSE event data or the trimmed line) and the
 * 1-based line of the file where its data starts. Of raw SSE, `event` is the event's name when it has an
 * `event:` field (since 0.2.0), and `field` marks a line of a field of the server's own that `frames` was
 * asked to keep (since 0.2.0; `data` is then the line's value, e.g. llama.cpp's `error: {json}`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Frame {
  readonly data: string
  readonly line: number
  readonly event?: string
  readonly field?: string
}

/**
 * What a capture error says: `source` names the file, `line` (1-based) the line at fault when there is one,
 * `description` what is wrong.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorFields {
  readonly source: string
  readonly line?: number
  readonly description: string
}

/**
 * Whether capture text is raw SSE: its first characters after a BOM and blank space are an SSE field
 * (`data:`, `event:`, `id:`, `retry:`), one of `fields` (a protocol's own, e.g. `["error"]` for llama.cpp's
 * `error: {json}`; since 0.2.0) or a comment (`:`). Anything else is line-JSON.
 *
 * @since 0.1.0
 * @category parsing
 */
export const isSse = (text: string, fields: ReadonlyArray<string> = []): boolean => {
  const first = text.replace(/^\uFEFF/, "").trimStart()
  return first.startsWith("data:") || first.startsWith(":") || first.startsWith("event:") ||
    first.startsWith("id:") || first.startsWith("retry:") || fields.some((field) => first.startsWith(`${field}:`))
}

const sseFrames = (text: string, fields: ReadonlyArray<string>): Array<Frame> => {
  const frames: Array<Frame> = []
  let line = 0
  let dataLine: number | undefined
  const parser = createParser({
    onEvent: (event) => {
      const at = dataLine ?? line
      frames.push(event.event === undefined ? { data: event.data, line: at } : { data: event.data, line: at, event: event.event })
      dataLine = undefined
    },
    onError: (error) => {
      if (error.type === "unknown-field" && error.field !== undefined && fields.includes(error.field)) {
        frames.push({ data: error.value ?? "", line, field: error.field })
      }
    }
  })
  for (const raw of text.split(/(?<=\n)/)) {
    line++
    if (dataLine === undefined && raw.startsWith("data")) dataLine = line
    parser.feed(raw)
  }
  parser.feed("\n\n")
  return frames
}

const lineFrames = (text: string): Array<Frame> => {
  const frames: Array<Frame> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const data = lines[i]!.trim()
    if (data !== "") frames.push({ data, line: i + 1 })
  }
  return frames
}

/**
 * The frames of a whole capture text, in order: the SSE events (through `eventsource-parser`, each with its
 * `event` name when it has one) when `isSse(text, fields)` says so, else the lines that are not blank.
 * `[DONE]` stays a frame: its meaning is the protocol's. A line of a field the SSE rules do not know is
 * ignored, as the rules say, unless its name is in `fields` (since 0.2.0): then it is a frame of its own
 * with that `field`, the frames of the event around it, if any, coming after it.
 *
 * @since 0.1.0
 * @category parsing
 */
export const frames = (text: string, fields: ReadonlyArray<string> = []): ReadonlyArray<Frame> =>
  isSse(text, fields) ? sseFrames(text, fields) : lineFrames(text)

/**
 * The JSON value of a frame, or the error `makeError` builds for malformed JSON: it names `source`, the
 * frame's line, the parser's message and an excerpt of at most 80 characters of the data.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseJson = <E>(
  frame: Frame,
  source: string,
  makeError: (fields: ErrorFields) => E
): Either.Either<unknown, E> => {
  try {
    return Either.right(JSON.parse(frame.data))
  } catch (e) {
    return Either.left(makeError({
      source,
      line: frame.line,
      description: `malformed JSON (${e instanceof Error ? e.message : String(e)}) in ${excerpt(frame.data)}`
    }))
  }
}

/**
 * At most 80 characters of a frame's data, as a JSON string literal: for error descriptions.
 *
 * @since 0.1.0
 * @category parsing
 */
export const excerpt = (data: string): string => JSON.stringify(AiError.excerpt(data, 80))

/**
 * Reads the capture file at `path` as UTF-8 text. Fails with the error `makeError` builds (`source` is
 * `path`) when the file cannot be read: `no such file`, or `cannot read the file (…)` for a directory, a
 * missing permission or another system error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readText = <E>(
  path: string,
  makeError: (fields: ErrorFields) => E
): Effect.Effect<string, E, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.readFileString(path).pipe(
      Effect.mapError((error) =>
        makeError({
          source: path,
          description: error._tag === "SystemError" && error.reason === "NotFound"
            ? "no such file"
            : `cannot read the file (${error.message})`
        })
      )
    ))
