/**
 * Framing of the decoder's text input into JSON event payloads: SSE (through the `@effect/experimental/Sse`
 * parser, fed one whole line at a time), line-JSON, or either, chosen by the first character. Every framer is
 * incremental: it keeps at most one partial line (bounded by `maxEventSize`) between calls.
 *
 * @internal
 */
import { AiError } from "@effect-responses/core"
import * as Sse from "@effect/experimental/Sse"

/** @internal */
export interface Framer {
  /**
   * Appends to `payloads` the payloads that `text` completes, and to `lines` the 1-based line where each
   * one's data starts (left empty when lines are unknown). Returns a framing error, after which the framer
   * must not be used.
   */
  readonly push: (text: string, payloads: Array<string>, lines: Array<number>) => AiError.MalformedOutput | undefined
  /** The input ended: appends what is still pending. */
  readonly end: (payloads: Array<string>, lines: Array<number>) => AiError.MalformedOutput | undefined
}

const LF = 10
const CR = 13

const tooLarge = (maxEventSize: number, line: number): AiError.MalformedOutput =>
  new AiError.MalformedOutput({ description: `an event exceeds ${maxEventSize} characters`, line })

/**
 * Splits text, given in pieces cut anywhere, into lines ending at LF, CRLF or CR (a CRLF cut between two
 * pieces is one line ending). Drops a leading BOM. Keeps the partial last line, at most `maxLength` long.
 */
class LineSplitter {
  /** Number of lines completed so far (the 1-based number of the last complete line). */
  line = 0
  private pending: Array<string> = []
  private pendingLength = 0
  private skipLF = false
  private first = true

  constructor(readonly maxLength: number) {}

  /** Calls `onLine` for every line `text` completes; stops at the first error. */
  push(
    text: string,
    onLine: (line: string, lineNumber: number) => AiError.MalformedOutput | undefined
  ): AiError.MalformedOutput | undefined {
    let start = 0
    if (this.first && text.length > 0) {
      this.first = false
      if (text.charCodeAt(0) === 0xfeff) start = 1
    }
    if (this.skipLF && start < text.length) {
      this.skipLF = false
      if (text.charCodeAt(start) === LF) start++
    }
    const length = text.length
    let nextLF = text.indexOf("\n", start)
    let nextCR = text.indexOf("\r", start)
    while (start < length) {
      if (nextLF !== -1 && nextLF < start) nextLF = text.indexOf("\n", start)
      if (nextCR !== -1 && nextCR < start) nextCR = text.indexOf("\r", start)
      const end = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR)
      if (end === -1) break
      const segment = text.slice(start, end)
      let line = segment
      if (this.pending.length > 0) {
        this.pending.push(segment)
        line = this.pending.join("")
        this.pending = []
        this.pendingLength = 0
      }
      this.line++
      if (line.length > this.maxLength) return tooLarge(this.maxLength, this.line)
      start = end + 1
      if (text.charCodeAt(end) === CR) {
        if (start < length) {
          if (text.charCodeAt(start) === LF) start++
        } else {
          this.skipLF = true
        }
      }
      const error = onLine(line, this.line)
      if (error !== undefined) return error
    }
    if (start < length) {
      const rest = start === 0 ? text : text.slice(start)
      this.pending.push(rest)
      this.pendingLength += rest.length
      if (this.pendingLength > this.maxLength) return tooLarge(this.maxLength, this.line + 1)
    }
    return undefined
  }

  /** The partial last line (the input ended without a line ending), and its number; clears it. */
  takePending(): readonly [string, number] | undefined {
    if (this.pending.length === 0) return undefined
    const line = this.pending.join("")
    this.pending = []
    this.pendingLength = 0
    this.line++
    return [line, this.line]
  }
}

/** @internal */
export const makeDataFramer = (): Framer => ({
  push: (text, payloads) => {
    payloads.push(text)
    return undefined
  },
  end: () => undefined
})

/** @internal */
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

/** @internal */
export const makeSseFramer = (maxEventSize: number): Framer => {
  const splitter = new LineSplitter(maxEventSize)
  let payloads: Array<string> = []
  let lines: Array<number> = []
  /** The line where the data of the event being read starts. */
  let dataLine: number | undefined
  /** Whether the event being read has lines (so that the end of the input may dispatch it). */
  let pendingEvent = false
  const parser = Sse.makeParser((event) => {
    if (event._tag === "Event") {
      payloads.push(event.data)
      lines.push(dataLine ?? splitter.line)
    }
  }, { maxEventSize })
  const onLine = (line: string, lineNumber: number): AiError.MalformedOutput | undefined => {
    if (line === "") {
      pendingEvent = false
    } else {
      pendingEvent = true
      if (dataLine === undefined && line.startsWith("data")) dataLine = lineNumber
    }
    const error = parser.feed(`${line}\n`)
    if (line === "") dataLine = undefined
    return error === undefined ? undefined : tooLarge(maxEventSize, dataLine ?? lineNumber)
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
      // A last line without its line ending was cut off: dropped with its event. An event whose lines all
      // ended is dispatched even without the blank line that should close it.
      if (splitter.takePending() === undefined && pendingEvent) return onLine("", splitter.line + 1)
      return undefined
    }
  }
}

/**
 * Whether capture text starts as SSE (a field or a comment), by the rule `Capture` uses; anything else is
 * read as line-JSON, so that text of neither format fails on its first line as malformed JSON.
 */
const startsAsSse = (first: string): boolean => /^(?::|(?:event|data|id|retry)(?::|[ \t]*(?:\r|\n|$)))/.test(first)

/** @internal */
export const makeCaptureFramer = (maxEventSize: number): Framer => {
  let framer: Framer | undefined
  let head = ""
  const choose = (first: string): Framer =>
    startsAsSse(first) ? makeSseFramer(maxEventSize) : makeLineFramer(maxEventSize)
  return {
    push: (text, payloads, lines) => {
      if (framer !== undefined) return framer.push(text, payloads, lines)
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
      return framer.push(buffered, payloads, lines)
    },
    end: (payloads, lines) => {
      if (framer === undefined) {
        const first = head.replace(/^\uFEFF/, "").trimStart()
        if (first === "") return undefined
        framer = choose(first)
        const error = framer.push(head, payloads, lines)
        if (error !== undefined) return error
      }
      return framer.end(payloads, lines)
    }
  }
}
