/**
 * Framing of a protocol's text input into payloads, and the channel that feeds them to a protocol decoder.
 *
 * A framer turns text given in pieces cut anywhere into the payloads those pieces complete: SSE `data`
 * (fields read by the framer's own pass over each piece), line-JSON lines, or either, chosen by the first
 * line of a capture. Lines end at LF, CRLF (also when cut between two pieces) or CR; a leading BOM is
 * dropped. Every framer is incremental: it keeps at most one partial line between calls, bounded by
 * `maxEventSize`. Lines are counted as they are read: errors name the line where an event's data starts.
 *
 * The SSE framer read fields with `@effect/experimental/Sse` first, whose parser rescans every line
 * character by character (framing the 5 MB benchmark stream took about 41 ms with it against about 12 ms
 * with `eventsource-parser`, packages/bench/RESULTS.md, run of 2026-11-29 19:25), then with
 * `eventsource-parser` after a line-counting pass of its own, until 0.2.0.
 *
 * @since 0.1.0
 */
import { AiError } from "@effect-responses/core"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import { reading, type Steps, stepsOf } from "./internal/bytesSteps.js"
import { LineSplitter, tooLarge } from "./internal/lineSplitter.js"
import { Utf8Pieces } from "./internal/utf8Pieces.js"

const LF = 10
const CR = 13

/**
 * An incremental framer. Both methods append the payloads completed so far to `payloads`, and to `lines`
 * the 1-based line of the input where each one's data starts (left empty when lines are unknown, as for
 * already-framed input). When `names` is given (since 0.2.0), an SSE framer appends to it the name of each
 * payload's event (its `event:` field; `undefined` for an event without one, or a payload of a field of the
 * protocol's own), so that an error about a payload can name the event the server said it was; other framers
 * leave it empty. They return a framing error (an event over the size bound, as `MalformedOutput` naming the
 * line), after which the framer must not be used.
 *
 * @since 0.1.0
 * @category models
 */
export interface Framer {
  /** Frames the next piece of text. */
  readonly push: (
    text: string,
    payloads: Array<string>,
    lines: Array<number>,
    names?: Array<string | undefined>
  ) => AiError.MalformedOutput | undefined
  /** The input ended: appends what is still pending. */
  readonly end: (
    payloads: Array<string>,
    lines: Array<number>,
    names?: Array<string | undefined>
  ) => AiError.MalformedOutput | undefined
}

/**
 * The default bound on one event (SSE event data, or one line of line-JSON): 16 MiB, in UTF-16 code units.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024

/**
 * The framer of already-framed input: every piece of text is one payload, lines unknown.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDataFramer = (): Framer => ({
  push: (text, payloads) => {
    payloads.push(text)
    return undefined
  },
  end: () => undefined
})

/**
 * The framer of line-JSON (one payload per line that is not blank, trimmed). A line longer than
 * `maxEventSize` UTF-16 code units fails with `MalformedOutput`. A last line without its line ending is
 * still a payload.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeLineFramer = (maxEventSize: number): Framer => {
  const splitter = new LineSplitter(maxEventSize)
  let payloads: Array<string> = []
  let lines: Array<number> = []
  const onLine = (line: string, lineNumber: number): undefined => {
    const data = line.trim()
    if (data !== "") {
      payloads.push(data)
      lines.push(lineNumber)
    }
    return undefined
  }
  return {
    push: (text, p, l) => {
      payloads = p
      lines = l
      return splitter.push(text, onLine)
    },
    end: (p, l) => {
      payloads = p
      lines = l
      const pending = splitter.takePending()
      if (pending !== undefined) onLine(pending[0], pending[1])
      return undefined
    }
  }
}

/**
 * The framer of SSE text: the `data` of every event (multi-line data joined with `\n`, as the SSE rules
 * say), with the line where the event's data starts. Comments and the `event:`, `id:` and `retry:` fields
 * are dropped. A line, or an event's data, larger than `maxEventSize` UTF-16 code units fails with
 * `MalformedOutput` naming the line (for data: the line where it starts); the events before it come first.
 * At the end of the input, an event whose lines all ended is dispatched even without the blank line that
 * should close it; a last line without its line ending was cut off and is dropped with its event.
 *
 * Fields are read as `eventsource-parser` 3 reads them (which framed the streams until 0.2.0): a line is
 * `data:` with an optional space, or `data` alone, or `event` (an empty name is none), `id`, `retry` (both
 * dropped), a comment (`:`), or a field the SSE rules do not know (its name before the first `:`, its value
 * after it and one optional space). One pass over each piece finds the line endings (`indexOf`) and reads
 * each line where it lies; only a line cut between two pieces is joined. It replaced a line-counting pass
 * followed by `eventsource-parser`, which read every line again (packages/bench/RESULTS.md, "the client
 * path, round 8").
 *
 * `eventData`, when given, maps an event that has an `event:` field (its name and data) to the payload
 * handed on, or to `undefined` to drop the event: for a protocol whose servers send keep-alives or errors
 * as named events (Chat Completions servers' `event: ping`, `event: error`). Without it, and without `names`
 * asked for (`Framer.push`), the name is not read.
 *
 * `fieldData`, when given, maps a line of a field the SSE rules do not know (its name and value, e.g.
 * `error: {…}`) to a payload handed on at once, or to `undefined` to ignore the line as the rules say: for a
 * protocol whose servers send errors in a field of their own (llama.cpp's `error: {json}`). Such a payload
 * comes when its line is read (before an event still open around it is dispatched), with that line as its
 * line (since 0.2.0; before, the number of lines read so far in its piece). Without it every such line is
 * ignored.
 *
 * Input that frames no event at all and holds a line starting with `<`, `{` or `[` (an HTML page or a JSON
 * body, sent without a `content-type` that would have told) fails at its end with `MalformedOutput` "the
 * body is not an event stream", with that first line as the excerpt, rather than reading as an empty stream.
 * So does input that frames no event and ends in a line without its line ending that starts with neither a
 * letter (an SSE field) nor `:` (a comment): binary bytes, or text that is not SSE (since 0.2.0); its
 * description names the characters read (UTF-16 code units) and that line's length, its excerpt the first
 * 40 characters of that line. A stream cut in its first event (`data: {"id…`) is not refused here: it is a truncated
 * stream, for the decoder to say.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSseFramer = (
  maxEventSize: number,
  eventData?: (event: string, data: string) => string | undefined,
  fieldData?: (field: string, value: string) => string | undefined
): Framer => {
  let payloads: Array<string> = []
  let lines: Array<number> = []
  /** Where the names of the payloads go, when they are asked for (`Framer.push`'s `names`). */
  let names: Array<string | undefined> | undefined
  /** Lines completed so far. */
  let line = 0
  /** Whether the next piece is the first one (which may start with a BOM). */
  let first = true
  /** The last piece ended with CR: a LF starting the next one belongs to that line ending. */
  let afterCR = false
  /** The start of the line being read, given by earlier pieces, and its length. */
  let partial = ""
  let partialLength = 0
  /** The line where the data of the event being read starts; 0 while it has no data line. */
  let dataLine = 0
  /** The data of the event being read (its lines joined with `\n`) and its size. */
  let data = ""
  let dataSize = 0
  /** The name of the event being read (`event:`), if any. */
  let eventType: string | undefined
  /** Whether any payload was handed on. */
  let framed = false
  /** The first line starting with `<`, `{` or `[` (no SSE field), while nothing was framed. */
  let stray: string | undefined
  /** The UTF-16 code units of text read so far. */
  let received = 0

  /** A blank line (or the end of the input): the event read so far, if it has data, is handed on. */
  const dispatch = (): void => {
    if (dataLine !== 0) {
      const payload = eventType === undefined || eventData === undefined ? data : eventData(eventType, data)
      if (payload !== undefined) {
        framed = true
        payloads.push(payload)
        lines.push(dataLine)
        if (names !== undefined) names.push(eventType)
      }
    }
    dataLine = 0
    data = ""
    dataSize = 0
    eventType = undefined
  }

  /** A field the SSE rules do not know, on the line `text`. */
  const unknownField = (text: string, field: string, value: string): void => {
    if (!framed && stray === undefined) {
      const start = text.charCodeAt(0)
      if (start === 60 || start === 123 || start === 91) stray = text
    }
    if (fieldData === undefined) return
    const payload = fieldData(field, value)
    if (payload === undefined) return
    framed = true
    payloads.push(payload)
    lines.push(line)
    if (names !== undefined) names.push(undefined)
  }

  /** Reads the line `text[from, to)`, which holds no line ending. */
  const readLine = (text: string, from: number, to: number): AiError.MalformedOutput | undefined => {
    line++
    const length = to - from
    if (length > maxEventSize) return tooLarge(maxEventSize, line)
    if (length === 0) {
      dispatch()
      return undefined
    }
    const start = text.charCodeAt(from)
    if (
      start === 100 && text.charCodeAt(from + 1) === 97 && text.charCodeAt(from + 2) === 116 &&
      text.charCodeAt(from + 3) === 97 && (length === 4 || text.charCodeAt(from + 4) === 58)
    ) {
      // `data` alone, or `data:` and its value after one optional space
      const value = length <= 5 ? "" : text.slice(text.charCodeAt(from + 5) === 32 ? from + 6 : from + 5, to)
      if (dataLine === 0) {
        dataLine = line
        data = value
        dataSize = value.length
      } else {
        data = `${data}\n${value}`
        dataSize += value.length + 1
      }
      return dataSize > maxEventSize ? tooLarge(maxEventSize, dataLine) : undefined
    }
    // a comment
    if (start === 58) return undefined
    if (
      start === 101 && text.charCodeAt(from + 1) === 118 && text.charCodeAt(from + 2) === 101 &&
      text.charCodeAt(from + 3) === 110 && text.charCodeAt(from + 4) === 116 &&
      (length === 5 || text.charCodeAt(from + 5) === 58)
    ) {
      // `event` alone, or `event:` and its name after one optional space: read only when `eventData` maps
      // named events or the names are asked for
      if (eventData !== undefined || names !== undefined) {
        const at = length <= 6 ? to : text.charCodeAt(from + 6) === 32 ? from + 7 : from + 6
        eventType = at === to ? undefined : text.slice(at, to)
      }
      return undefined
    }
    const whole = from === 0 && to === text.length ? text : text.slice(from, to)
    const colon = whole.indexOf(":")
    const field = colon === -1 ? whole : whole.slice(0, colon)
    const value = colon === -1 ? "" : whole.slice(whole.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1)
    // (`data` and `event` lines are read above)
    switch (field) {
      case "id":
      case "retry":
        break
      default:
        unknownField(whole, field, value)
    }
    return undefined
  }

  /**
   * Reads the lines of a piece (LF, CRLF also cut between two pieces, lone CR). A line cut at the end of the
   * piece is kept (at most `maxEventSize`) and joined with its end in the next piece.
   */
  const scan = (text: string): AiError.MalformedOutput | undefined => {
    const length = text.length
    let i = 0
    if (afterCR) {
      afterCR = false
      if (text.charCodeAt(0) === LF) i = 1
    }
    let nextLF = text.indexOf("\n", i)
    let nextCR = text.indexOf("\r", i)
    for (;;) {
      if (nextLF !== -1 && nextLF < i) nextLF = text.indexOf("\n", i)
      if (nextCR !== -1 && nextCR < i) nextCR = text.indexOf("\r", i)
      const end = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR)
      if (end === -1) break
      let error: AiError.MalformedOutput | undefined
      if (partialLength > 0) {
        const whole = partial + text.slice(i, end)
        partial = ""
        partialLength = 0
        error = readLine(whole, 0, whole.length)
      } else {
        error = readLine(text, i, end)
      }
      if (error !== undefined) return error
      i = end + 1
      if (text.charCodeAt(end) === CR) {
        if (i < length) {
          if (text.charCodeAt(i) === LF) i++
        } else {
          afterCR = true
        }
      }
    }
    if (i < length) {
      partialLength += length - i
      if (partialLength > maxEventSize) return tooLarge(maxEventSize, line + 1)
      partial += i === 0 ? text : text.slice(i)
    }
    return undefined
  }

  return {
    push: (text, p, l, n) => {
      payloads = p
      lines = l
      names = n
      // an empty piece changes nothing (a CR ending the piece before may still pair with a LF after it)
      if (text.length === 0) return undefined
      received += text.length
      if (first) {
        first = false
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      }
      return scan(text)
    },
    end: (p, l, n) => {
      payloads = p
      lines = l
      names = n
      // A last line without its line ending was cut off: dropped with its event. An event whose lines all
      // ended is dispatched even without the blank line that should close it.
      if (partialLength === 0) dispatch()
      if (framed) return undefined
      if (stray !== undefined) {
        return new AiError.MalformedOutput({
          description: "the body is not an event stream: no event in it, and a line of HTML or JSON",
          excerpt: AiError.excerpt(stray)
        })
      }
      // no event, and a last line that never ended and cannot be the start of an SSE field (a letter) or a
      // comment (`:`): binary or other text, not a stream cut in its first event
      const start = partial.charCodeAt(0)
      return partialLength === 0 || start === 58 || (start >= 65 && start <= 90) || (start >= 97 && start <= 122)
        ? undefined
        : new AiError.MalformedOutput({
          description: `the body is not an event stream: no event in its ${received} characters, and its last ${
            line === 0 ? "and only " : ""
          }line (${partialLength} characters) has no line ending`,
          // 40 characters: binary's are escapes, six characters each in a JSON message
          excerpt: AiError.excerpt(partial, 40)
        })
    }
  }
}

/**
 * Whether capture text starts as SSE (a field, the SSE specification's or one of `fields`, or a comment);
 * anything else is read as line-JSON, so that text of neither format fails on its first line as malformed
 * JSON.
 */
const startsAsSse = (first: string, fields: ReadonlyArray<string>): boolean => {
  const field = /^(?::|([A-Za-z_-]+)(?::|[ \t]*(?:\r|\n|$)))/.exec(first)
  if (field === null) return false
  const name = field[1]
  return name === undefined || name === "event" || name === "data" || name === "id" || name === "retry" ||
    fields.includes(name)
}

/**
 * The framer of a capture file's text, raw SSE or line-JSON, told apart by the first line that is not
 * blank: an SSE field (`data`, `event`, `id`, `retry`) or comment (`:`) means SSE, anything else line-JSON
 * (`makeLineFramer`). Undecided input is buffered, at most `maxEventSize`. Raw SSE is framed by
 * `makeSseFramer(maxEventSize)`, or by `sse.framer()` when given (since 0.2.0): a protocol whose live
 * streams are framed with `makeSseFramer`'s options (named events, fields of its own) passes the same
 * framer, so that a capture reads as the live stream did; `sse.fields` names the fields of its own that may
 * begin a raw SSE capture.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeCaptureFramer = (
  maxEventSize: number,
  sse?: { readonly framer: () => Framer; readonly fields?: ReadonlyArray<string> | undefined }
): Framer => {
  let framer: Framer | undefined
  let head = ""
  const choose = (first: string): Framer =>
    startsAsSse(first, sse?.fields ?? [])
      ? (sse === undefined ? makeSseFramer(maxEventSize) : sse.framer())
      : makeLineFramer(maxEventSize)
  return {
    push: (text, payloads, lines, names) => {
      if (framer !== undefined) return framer.push(text, payloads, lines, names)
      head += text
      const first = head.replace(/^\uFEFF/, "").trimStart()
      // Undecided until the first line that is not blank has ended, or is long enough to tell.
      if (!/[\r\n]/.test(first) && first.length < 7) {
        if (head.length > maxEventSize) return tooLarge(maxEventSize, 1)
        return undefined
      }
      framer = choose(first)
      const buffered = head
      head = ""
      return framer.push(buffered, payloads, lines, names)
    },
    end: (payloads, lines, names) => {
      if (framer === undefined) {
        const first = head.replace(/^\uFEFF/, "").trimStart()
        if (first === "") return undefined
        framer = choose(first)
        const error = framer.push(head, payloads, lines, names)
        if (error !== undefined) return error
      }
      return framer.end(payloads, lines, names)
    }
  }
}

/**
 * A log line a decoder asks for: the channel runs it (`Effect.logDebug` / `Effect.logWarning`) after the
 * elements of the chunk that produced it.
 *
 * @since 0.1.0
 * @category models
 */
export interface LogEntry {
  readonly level: "Debug" | "Warning"
  readonly message: string
}

/**
 * A synchronous protocol decoder, one payload at a time. `feed` pushes the elements a payload yields onto
 * `out` and returns the error that ends the stream, if any; `end` does the same when the input ends;
 * `takeLogs` hands over the log lines collected since the last call.
 *
 * @since 0.1.0
 * @category models
 */
export interface PayloadDecoder<A, D> {
  readonly feed: (data: string, out: Array<A>) => D | undefined
  readonly end: (out: Array<A>) => D | undefined
  readonly takeLogs: () => ReadonlyArray<LogEntry>
}

/**
 * `decoder` with `f` applied to every error it returns: for errors that must be changed before they reach
 * the stream (a client cuts its API key out of errors that quote what the server sent) without a stage of
 * their own: on the client path a `Channel.mapError` around the decoding cost about 28 fiber steps per call
 * (packages/bench/RESULTS.md, "the client path's fixed cost, round 5"). The framer's errors (an event over the
 * size bound) hold none of the input.
 *
 * @since 0.2.0
 * @category decoding
 */
export const mappingErrors = <A, D>(decoder: PayloadDecoder<A, D>, f: (error: D) => D): PayloadDecoder<A, D> => ({
  feed: (data, out) => {
    const error = decoder.feed(data, out)
    return error === undefined ? undefined : f(error)
  },
  end: (out) => {
    const error = decoder.end(out)
    return error === undefined ? undefined : f(error)
  },
  takeLogs: () => decoder.takeLogs()
})

/**
 * `decoder`, handing `observe` every element it yields, in order, as it yields it (before the elements reach
 * the stream). For what a client keeps of a stream (its telemetry summary) without a stream stage of its
 * own: on the client path such a stage (`Stream.mapChunksEffect`) cost about 70 fiber steps per call and a
 * hand-off per chunk (packages/bench/RESULTS.md, "client path" of 2026-12-02).
 *
 * @since 0.2.0
 * @category decoding
 */
export const observing = <A, D>(decoder: PayloadDecoder<A, D>, observe: (element: A) => void): PayloadDecoder<A, D> => ({
  feed: (data, out) => {
    const from = out.length
    const error = decoder.feed(data, out)
    for (let i = from; i < out.length; i++) observe(out[i]!)
    return error
  },
  end: (out) => {
    const from = out.length
    const error = decoder.end(out)
    for (let i = from; i < out.length; i++) observe(out[i]!)
    return error
  },
  takeLogs: () => decoder.takeLogs()
})

const runLogs = (logs: ReadonlyArray<LogEntry>): Effect.Effect<void> =>
  Effect.forEach(
    logs,
    (entry) => entry.level === "Debug" ? Effect.logDebug(entry.message) : Effect.logWarning(entry.message),
    { discard: true }
  )

/**
 * The decoding channel: chunks of text in, chunks of decoded elements out. Each run makes its own framer
 * and decoder; every piece of text goes through the framer, every payload it completes through the
 * decoder, in one synchronous pass per chunk of the stream. The elements of a chunk are written before the
 * error that ends it, and a decoder's `MalformedOutput` gets the `line` the framer knows for its payload and,
 * when it names no event, the name of the SSE event the payload came in (`event:`; since 0.2.0).
 * Errors: the decoder's (`D`), the framer's `MalformedOutput`, and the upstream's (`E`), passed through.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeChannel = <A, D extends AiError.AiError, E>(
  makeFramer: () => Framer,
  makeDecoder: () => PayloadDecoder<A, D>
): Channel.Channel<Chunk.Chunk<A>, Chunk.Chunk<string>, E | D | AiError.MalformedOutput, E, unknown, unknown> =>
  Channel.suspend(() => reading<string, A, D | AiError.MalformedOutput, E>(steps(identity, undefined, makeFramer(), makeDecoder())))

/**
 * `decodeChannel` from chunks of bytes (UTF-8, split anywhere, even inside a character): the bytes are
 * decoded to text in the same pass as the framing and the decoding, with one UTF-8 decoder per run (the
 * text of `TextDecoder`'s streaming mode, at the speed of its whole-input mode; a leading BOM is dropped, as
 * `Stream.decodeText` does). One stage instead of two: on the 5 MB benchmark
 * stream this saves a channel hand-off per chunk (packages/bench/RESULTS.md, run of 2026-11-29 19:25).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeBytesChannel = <A, D extends AiError.AiError, E>(
  makeFramer: () => Framer,
  makeDecoder: () => PayloadDecoder<A, D>
): Channel.Channel<Chunk.Chunk<A>, Chunk.Chunk<Uint8Array>, E | D | AiError.MalformedOutput, E, unknown, unknown> =>
  Channel.suspend(() => reading(stepsOf(bytesDecoder(makeFramer, makeDecoder))))

/**
 * The mark of a `BytesDecoder`.
 *
 * @since 0.2.0
 * @category symbols
 */
export const BytesDecoderTypeId: unique symbol = Symbol.for("@effect-responses/wire/Framing/BytesDecoder")

/**
 * The mark of a `BytesDecoder`.
 *
 * @since 0.2.0
 * @category symbols
 */
export type BytesDecoderTypeId = typeof BytesDecoderTypeId

/**
 * One run of `decodeBytesChannel`'s decoding (made by `bytesDecoder`) as steps that the reader of the bytes
 * takes itself, in its own channel, elements of type `A` out, failing with `D`. Opaque: only a reader that
 * takes such steps uses it (`HttpTransport.decodeBody`), which decodes a body without a second stage piped
 * after it: on the gateway a piped stage cost a channel executor per request, about 60 of the ~185 fiber
 * steps of closing a streamed request's upstream call, and a hand-off per chunk (packages/bench/RESULTS.md).
 * The reader's idle timeout counts what the decoder decodes: bytes that decode to nothing (comments, pings,
 * events the decoder skips) are silence.
 *
 * @since 0.2.0
 * @category decoding
 */
export interface BytesDecoder<out A, out D> {
  readonly [BytesDecoderTypeId]: {
    readonly _A: (_: never) => A
    readonly _D: (_: never) => D
  }
}

const BYTES_DECODER_VARIANCE = { _A: (_: never) => _, _D: (_: never) => _ }

/** `steps` as a `BytesDecoder`: marked, the steps inside (see internal/bytesSteps). */
const asBytesDecoder = <A, D>(steps: Steps<Uint8Array, A, D>): BytesDecoder<A, D> =>
  Object.assign(steps, { [BytesDecoderTypeId]: BYTES_DECODER_VARIANCE }) as unknown as BytesDecoder<A, D>

/**
 * A new run of the decoding of `decodeBytesChannel` (a framer, a decoder and a UTF-8 decoder of its own),
 * as steps for a reader of the bytes (see `BytesDecoder`).
 *
 * @since 0.2.0
 * @category decoding
 */
export const bytesDecoder = <A, D extends AiError.AiError>(
  makeFramer: () => Framer,
  makeDecoder: () => PayloadDecoder<A, D>
): BytesDecoder<A, D | AiError.MalformedOutput> => {
  const utf8 = new Utf8Pieces()
  return asBytesDecoder(steps<Uint8Array, A, D>(
    (bytes) => utf8.decode(bytes),
    () => utf8.end(),
    makeFramer(),
    makeDecoder()
  ))
}

/**
 * A decoder's `MalformedOutput` about a payload, with the `line` the framer knows for it, and the SSE event
 * `name` it came under when the decoder named no event (JSON that does not parse, or has no `type`, says
 * nothing of its own of what it was).
 */
const located = (
  error: AiError.MalformedOutput,
  line: number | undefined,
  name: string | undefined
): AiError.MalformedOutput => {
  if (line === undefined && (name === undefined || error.eventType !== undefined)) return error
  return new AiError.MalformedOutput({
    ...error,
    ...(line === undefined ? {} : { line }),
    ...(error.eventType === undefined && name !== undefined ? { eventType: name } : {})
  })
}

/**
 * The steps of `decodeChannel` and `decodeBytesChannel`: `text` turns a piece of input into text, `flush`
 * gives the text still held when the input ends.
 */
const steps = <I, A, D extends AiError.AiError>(
  text: (piece: I) => string,
  flush: (() => string) | undefined,
  framer: Framer,
  decoder: PayloadDecoder<A, D>
): Steps<I, A, D | AiError.MalformedOutput> => {
  const payloads: Array<string> = []
  const lines: Array<number> = []
  const names: Array<string | undefined> = []
  let decoded = 0
  const emit = <InElem, E, InErr, OutDone>(
    out: Array<A>,
    error: D | AiError.MalformedOutput | undefined,
    next: Channel.Channel<Chunk.Chunk<A>, InElem, E, InErr, OutDone, unknown>
  ): Channel.Channel<Chunk.Chunk<A>, InElem, E | D | AiError.MalformedOutput, InErr, OutDone, unknown> => {
    let result: Channel.Channel<Chunk.Chunk<A>, InElem, E | D | AiError.MalformedOutput, InErr, OutDone, unknown> =
      error === undefined ? next : Channel.fail(error)
    if (out.length > 0) {
      decoded += out.length
      result = Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), result)
    }
    const logs = decoder.takeLogs()
    if (logs.length > 0) result = Channel.zipRight(Channel.fromEffect(runLogs(logs)), result)
    return result
  }
  /** Decodes the framed payloads, then the framing error if any. */
  const drain = (
    out: Array<A>,
    framing: AiError.MalformedOutput | undefined
  ): D | AiError.MalformedOutput | undefined => {
    let error: D | AiError.MalformedOutput | undefined
    for (let i = 0; error === undefined && i < payloads.length; i++) {
      error = decoder.feed(payloads[i]!, out)
      if (error !== undefined && error._tag === "MalformedOutput") error = located(error, lines[i], names[i])
    }
    payloads.length = 0
    lines.length = 0
    names.length = 0
    return error ?? framing
  }
  return {
    input: (input, next) => {
      const out: Array<A> = []
      let error: D | AiError.MalformedOutput | undefined
      for (const piece of input) {
        error = drain(out, framer.push(text(piece), payloads, lines, names))
        if (error !== undefined) break
      }
      return emit(out, error, next)
    },
    // a channel that runs the end when it is run
    end: Channel.suspend(() => {
      const out: Array<A> = []
      const rest = flush === undefined ? "" : flush()
      const error = rest === "" ? undefined : drain(out, framer.push(rest, payloads, lines, names))
      return emit(out, error ?? drain(out, framer.end(payloads, lines, names)) ?? decoder.end(out), Channel.void)
    }),
    // a stream's activity is what it decodes to: keep-alives (comments, pings, events the decoder skips)
    // are not
    activity: () => decoded
  }
}
