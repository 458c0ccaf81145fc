/**
 * The line splitter under the SSE and line-JSON framers.
 *
 * @internal
 */
import { AiError } from "@effect-responses/core"

const LF = 10
const CR = 13

/** @internal */
export const tooLarge = (maxEventSize: number, line: number): AiError.MalformedOutput =>
  new AiError.MalformedOutput({ description: `an event exceeds ${maxEventSize} characters`, line })

/**
 * Splits text, given in pieces cut anywhere, into lines ending at LF, CRLF or CR (a CRLF cut between two
 * pieces is one line ending). Drops a leading BOM. Keeps the partial last line, at most `maxLength` long.
 *
 * @internal
 */
export class LineSplitter {
  /** Number of lines completed so far (the 1-based number of the last complete line). */
  line = 0
  private pending: Array<string> = []
  private pendingLength = 0
  private skipLF = false
  private first = true

  constructor(readonly maxLength: number) {}

  /**
   * Calls `onLine` for every line `text` completes; stops at the first error. `withLF` is the line followed
   * by `\n`: a slice of `text` when the line ended there with LF (no copy), else the line joined with `\n`.
   */
  push(
    text: string,
    onLine: (line: string, lineNumber: number, withLF: string) => AiError.MalformedOutput | undefined
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
      let withLF: string | undefined
      if (this.pending.length > 0) {
        this.pending.push(segment)
        line = this.pending.join("")
        this.pending = []
        this.pendingLength = 0
      } else if (text.charCodeAt(end) === LF) {
        withLF = text.slice(start, end + 1)
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
      const error = onLine(line, this.line, withLF ?? `${line}\n`)
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

