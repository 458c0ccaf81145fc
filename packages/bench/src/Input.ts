/**
 * The inputs of the benchmark: the recorded o3-mini reasoning stream (`fixtures/responses-sse/`, read in
 * place) and a larger stream generated in memory from its deltas, both cut into 16 KiB chunks.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"

/**
 * One benchmark input: the SSE body, its 16 KiB chunks, the number of SSE events it holds and the text of
 * the assistant message every contender must end with.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly name: string
  readonly bytes: Uint8Array
  readonly chunks: ReadonlyArray<Uint8Array>
  /** Number of SSE events (frames with a `data:` field). */
  readonly events: number
  /** The `output_text` of the final message: the concatenation of the `response.output_text.delta`s. */
  readonly expectedText: string
}

/**
 * The size of the body chunks handed to each contender: 16 KiB, a typical HTTP read.
 *
 * @since 0.1.0
 * @category constants
 */
export const CHUNK_SIZE = 16 * 1024

/**
 * The recorded stream (pydantic-ai, MIT: see `fixtures/SOURCES.md`), resolved relative to this file in the
 * repository's `fixtures/`.
 *
 * @since 0.1.0
 * @category constants
 */
export const FIXTURE_URL = new URL(
  "../../../fixtures/responses-sse/pai-o3mini-reasoning-summary-deltas.sse",
  import.meta.url
)

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

interface JsonEvent {
  readonly [key: string]: Json
}

/** Parses SSE text into the JSON payloads of its events (the `event:` name is implied by `type`). */
const parseEvents = (text: string): Array<JsonEvent> =>
  text
    .replace(/\r\n?/g, "\n")
    .split("\n\n")
    .flatMap((frame) => {
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
      if (data.length === 0) return []
      const payload: Json = JSON.parse(data.join("\n"))
      if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
        throw new Error(`fixture: an event is not a JSON object: ${data.join("\n").slice(0, 80)}`)
      }
      return [payload as JsonEvent]
    })

const serialize = (events: ReadonlyArray<JsonEvent>): string =>
  events.map((event) => `event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`).join("")

const outputText = (events: ReadonlyArray<JsonEvent>): string =>
  events
    .filter((event) => event["type"] === "response.output_text.delta")
    .map((event) => String(event["delta"]))
    .join("")

const chunk = (bytes: Uint8Array): ReadonlyArray<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += CHUNK_SIZE) chunks.push(bytes.subarray(at, at + CHUNK_SIZE))
  return chunks
}

const make = (name: string, text: string, events: ReadonlyArray<JsonEvent>): Input => {
  const bytes = new TextEncoder().encode(text)
  return { name, bytes, chunks: chunk(bytes), events: events.length, expectedText: outputText(events) }
}

/** The key of a run of deltas: consecutive deltas of one type into one content part / summary part. */
const runKey = (event: JsonEvent): string | undefined => {
  const type = event["type"]
  if (typeof type !== "string" || !type.endsWith(".delta")) return undefined
  return JSON.stringify([type, event["item_id"], event["output_index"], event["content_index"], event["summary_index"]])
}

/** Replaces, anywhere in `value`, a string that `texts` maps with its replacement. */
const replaceTexts = (value: Json, texts: ReadonlyMap<string, string>): Json => {
  if (typeof value === "string") return texts.get(value) ?? value
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map((item: Json) => replaceTexts(item, texts))
  const out: { [key: string]: Json } = {}
  for (const [key, item] of Object.entries(value)) out[key] = replaceTexts(item, texts)
  return out
}

/**
 * The events of a stream in which every run of deltas (consecutive deltas into one content part or summary
 * part) is played `repeat` times, so that each text is its original repeated; the snapshots (`*.done`,
 * `response.output_item.done`, `response.completed`) carry the repeated texts, and the sequence numbers
 * count from 0 again. The result is a valid stream: its done items equal what its deltas build.
 */
const repeatDeltas = (events: ReadonlyArray<JsonEvent>, repeat: number): Array<JsonEvent> => {
  const runs: Array<{ readonly start: number; readonly end: number }> = []
  for (let i = 0; i < events.length;) {
    const key = runKey(events[i]!)
    let j = i + 1
    if (key !== undefined) while (j < events.length && runKey(events[j]!) === key) j++
    if (key !== undefined) runs.push({ start: i, end: j })
    i = j
  }
  const texts = new Map<string, string>()
  for (const { start, end } of runs) {
    const text = events.slice(start, end).map((event) => String(event["delta"])).join("")
    if (text !== "") texts.set(text, text.repeat(repeat))
  }
  const out: Array<JsonEvent> = []
  let run = 0
  for (let i = 0; i < events.length;) {
    const current = runs[run]
    if (current !== undefined && current.start === i) {
      for (let r = 0; r < repeat; r++) out.push(...events.slice(current.start, current.end))
      i = current.end
      run++
    } else {
      out.push(replaceTexts(events[i]!, texts) as JsonEvent)
      i++
    }
  }
  return out.map((event, sequence) => ({ ...event, sequence_number: sequence }))
}

/**
 * The recorded 194 KB stream, its bytes as recorded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fixture = (): Input => {
  const text = readFileSync(FIXTURE_URL, "utf8")
  return make("recorded o3-mini stream", text, parseEvents(text))
}

/**
 * A stream of about `targetBytes` bytes generated from the deltas of the recorded stream (see
 * `repeatDeltas`): the same event mix, consistent sequence numbers and snapshots. Deterministic.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generated = (targetBytes: number): Input => {
  const events = parseEvents(readFileSync(FIXTURE_URL, "utf8"))
  const one = serialize(repeatDeltas(events, 1)).length
  const two = serialize(repeatDeltas(events, 2)).length
  const repeat = Math.max(1, Math.round((targetBytes - one) / (two - one)) + 1)
  const out = repeatDeltas(events, repeat)
  const input = make(`generated stream (deltas x${repeat})`, serialize(out), out)
  const done = out.find((event) => event["type"] === "response.output_text.done")
  if (done === undefined || done["text"] !== input.expectedText) {
    throw new Error("generated stream: the output_text.done text differs from its deltas")
  }
  return input
}

/**
 * The fixed cost of a call: the recorded stream's `response.created`, `response.in_progress` and
 * `response.completed` events only, the completed response's `output` emptied (a response without output
 * items; the final text is empty). What a contender pays per call whatever the length of the answer.
 *
 * @since 0.2.0
 * @category constructors
 */
export const empty = (): Input => {
  const events = parseEvents(readFileSync(FIXTURE_URL, "utf8")).flatMap((event): Array<JsonEvent> => {
    switch (event["type"]) {
      case "response.created":
      case "response.in_progress":
        return [event]
      case "response.completed":
        return [{ ...event, response: { ...(event["response"] as JsonEvent), output: [] } }]
      default:
        return []
    }
  }).map((event, sequence) => ({ ...event, sequence_number: sequence }))
  return make("empty stream (no output items: the fixed cost per call)", serialize(events), events)
}

/**
 * The recorded Chat Completions stream of the chat contenders (vercel/ai, Apache-2.0: see
 * `fixtures/SOURCES.md`): a gpt-4.1-nano answer of 300 tokens, one JSON chunk per line (302 chunks, 98 KB).
 *
 * @since 0.2.0
 * @category constants
 */
export const CHAT_FIXTURE_URL = new URL("../../../fixtures/chat-sse/vai-chat-openai-text-usage.chunks.txt", import.meta.url)

const chatChunks = (): Array<JsonEvent> =>
  readFileSync(CHAT_FIXTURE_URL, "utf8").split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as JsonEvent)

/** The `content` of a chunk's first choice's delta, if any. */
const chatContent = (chunk: JsonEvent): string | undefined => {
  const choices = chunk["choices"]
  if (!Array.isArray(choices) || choices.length === 0) return undefined
  const delta = (choices[0] as JsonEvent)["delta"] as JsonEvent | undefined
  const content = delta?.["content"]
  return typeof content === "string" ? content : undefined
}

const makeChat = (name: string, chunks: ReadonlyArray<JsonEvent>): Input => {
  const text = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n"
  const bytes = new TextEncoder().encode(text)
  const expectedText = chunks.map((chunk) => chatContent(chunk) ?? "").join("")
  return { name, bytes, chunks: chunk(bytes), events: chunks.length + 1, expectedText }
}

/**
 * The recorded Chat Completions stream as an SSE body (`data: {chunk}` frames, then `data: [DONE]`); the
 * expected text is the concatenation of the content deltas.
 *
 * @since 0.2.0
 * @category constructors
 */
export const chat = (): Input => makeChat("recorded gpt-4.1-nano Chat stream", chatChunks())

/**
 * About `targetBytes` of Chat Completions SSE: the recorded stream's content deltas played `n` times
 * between its first chunk and its closing chunks (finish reason, usage).
 *
 * @since 0.2.0
 * @category constructors
 */
export const chatGenerated = (targetBytes: number): Input => {
  const chunks = chatChunks()
  const first = chunks.findIndex((chunk) => chatContent(chunk) !== undefined && chatContent(chunk) !== "")
  const last = chunks.findLastIndex((chunk) => chatContent(chunk) !== undefined && chatContent(chunk) !== "")
  const deltas = chunks.slice(first, last + 1)
  const size = (list: ReadonlyArray<JsonEvent>) => list.reduce((sum, chunk) => sum + JSON.stringify(chunk).length + 8, 0)
  const repeat = Math.max(1, Math.round((targetBytes - size(chunks)) / size(deltas)) + 1)
  const out = [...chunks.slice(0, first), ...Array.from({ length: repeat }, () => deltas).flat(), ...chunks.slice(last + 1)]
  return makeChat(`generated Chat stream (content deltas x${repeat})`, out)
}

/**
 * Formats a byte count in MB (10^6 bytes), for the report.
 *
 * @since 0.1.0
 * @category formatting
 */
export const megabytes = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes < 1e6 ? 3 : 2)} MB`
