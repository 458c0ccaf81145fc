/**
 * Recorded Responses streams ("captures") read from a file: raw SSE as it came off the wire
 * (`event:` + `data:` frames, data-only frames, `:` comments, `event: ping` keep-alives, `[DONE]`), or
 * line-JSON, one event per line, as
 * in vercel/ai's `*.chunks.txt` recordings. A capture may hold several
 * consecutive responses; each starts at its `response.created` event.
 *
 * @since 0.1.0
 */
import * as CaptureFile from "@effect-responses/wire/CaptureFile"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * A capture could not be read: the file is missing or unreadable, empty, holds malformed JSON, or holds no
 * `response.created` event. `source` names the file, `line` (1-based) the line at fault when there is one.
 *
 * @since 0.1.0
 * @category errors
 */
export class CaptureError extends Schema.TaggedError<CaptureError>("@effect-responses/responses/CaptureError")("CaptureError", {
  source: Schema.String,
  line: Schema.optionalWith(Schema.Number, { exact: true }),
  description: Schema.String
}) {
  override get message(): string {
    return `${this.source}${this.line === undefined ? "" : `:${this.line}`}: ${this.description}`
  }
}

const makeError = (fields: CaptureFile.ErrorFields): CaptureError => new CaptureError(fields)

/**
 * One event of a capture: its `type`, its JSON text as recorded (`data`), the parsed value, and the 1-based
 * line of the file where its data starts.
 *
 * @since 0.1.0
 * @category models
 */
export interface CapturedEvent {
  readonly type: string
  readonly data: string
  readonly json: Readonly<Record<string, unknown>>
  readonly line: number
}

/**
 * One recorded response: its events from `response.created` up to the next response, and its id.
 *
 * @since 0.1.0
 * @category models
 */
export interface CapturedResponse {
  readonly id: string
  readonly events: ReadonlyArray<CapturedEvent>
}

/**
 * A capture: its source (a file name) and its responses in recorded order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Capture {
  readonly source: string
  readonly responses: ReadonlyArray<CapturedResponse>
}

/**
 * Parses the text of a capture. `source` names it in errors.
 *
 * Fails with `CaptureError` when the text is empty, a frame is not a JSON object with a string `type`
 * (naming the line and an excerpt), or no `response.created` event starts a response.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (text: string, source: string): Effect.Effect<Capture, CaptureError> =>
  Effect.suspend(() => {
    if (text.trim() === "") return Effect.fail(new CaptureError({ source, description: "the capture is empty" }))
    const frames = CaptureFile.frames(text)
    const responses: Array<{ id: string; events: Array<CapturedEvent> }> = []
    for (const frame of frames) {
      // a keep-alive, whatever its data: skipped as the stream decoder skips it
      if (frame.data === "[DONE]" || frame.event === "ping") continue
      const parsed = CaptureFile.parseJson(frame, source, makeError)
      if (Either.isLeft(parsed)) return Effect.fail(parsed.left)
      const json = parsed.right
      if (typeof json !== "object" || json === null || typeof (json as { type?: unknown }).type !== "string") {
        return Effect.fail(
          new CaptureError({
            source,
            line: frame.line,
            description: `not an event (a JSON object with a string "type"): ${CaptureFile.excerpt(frame.data)}`
          })
        )
      }
      const event: CapturedEvent = {
        type: (json as { type: string }).type,
        data: frame.data,
        json: json as Record<string, unknown>,
        line: frame.line
      }
      if (event.type === "response.created") {
        const response = event.json.response as { id?: unknown } | undefined
        responses.push({ id: typeof response?.id === "string" ? response.id : `response-${responses.length}`, events: [] })
      }
      const current = responses[responses.length - 1]
      if (current === undefined) {
        return Effect.fail(
          new CaptureError({ source, line: frame.line, description: `event ${event.type} before any response.created` })
        )
      }
      current.events.push(event)
    }
    if (responses.length === 0) {
      return Effect.fail(new CaptureError({ source, description: "the capture holds no response.created event" }))
    }
    return Effect.succeed({ source, responses })
  })

/**
 * Reads and parses the capture file at `path`. Fails with `CaptureError` when the file cannot be read
 * (missing, a directory, no permission) or does not parse (see `parse`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (path: string): Effect.Effect<Capture, CaptureError, FileSystem.FileSystem> =>
  Effect.flatMap(CaptureFile.readText(path, makeError), (text) => parse(text, path))

/**
 * The terminal event of a captured response (`response.completed`, `response.incomplete` or
 * `response.failed`), if it has one.
 *
 * @since 0.1.0
 * @category accessors
 */
export const terminalEvent = (response: CapturedResponse): CapturedEvent | undefined =>
  response.events.findLast((event) =>
    event.type === "response.completed" || event.type === "response.incomplete" || event.type === "response.failed"
  )

/**
 * The output items of a captured response as the terminal event's `response.output` lists them, or, when the
 * capture has no terminal event, as the `response.output_item.done` events give them.
 *
 * @since 0.1.0
 * @category accessors
 */
export const outputItems = (response: CapturedResponse): ReadonlyArray<Readonly<Record<string, unknown>>> => {
  const terminal = terminalEvent(response)
  const output = (terminal?.json.response as { output?: unknown } | undefined)?.output
  if (Array.isArray(output)) return output as Array<Record<string, unknown>>
  return response.events.filter((event) => event.type === "response.output_item.done").map((event) =>
    event.json.item as Record<string, unknown>
  )
}

/**
 * The SSE wire body of a captured response: one `event:` + `data:` frame per event, as OpenAI sends it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const toSse = (response: CapturedResponse): string =>
  response.events.map((event) => `event: ${event.type}\ndata: ${event.data}\n\n`).join("")
