/**
 * Test helpers over the recorded fixtures (read in place through `fixtures.ts`): the payloads of a capture,
 * SSE bytes made from them, and a reference fold of `StreamPart`s that states the delta / completing-part
 * convention of `ResponsesStream` as code.
 */
import { type Part, StreamPart } from "@effect-responses/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { readFixture } from "./fixtures.js"

/** The `data:` payloads of a capture: the lines of a line-JSON `*.chunks.txt` file (blank lines dropped). */
export const payloadsOf = (relative: string): ReadonlyArray<string> =>
  readFixture(relative).split("\n").filter((line) => line.trim() !== "")

/** Payloads framed as an SSE body: `data: <json>\n\n` each. */
export const sseText = (payloads: ReadonlyArray<string>): string => payloads.map((data) => `data: ${data}\n\n`).join("")

/** UTF-8 bytes of a string. */
export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

/** The bytes of `data` cut at the given (sorted, deduplicated) positions. */
export const splitAt = (data: Uint8Array, cuts: ReadonlyArray<number>): ReadonlyArray<Uint8Array> => {
  const positions = Array.from(new Set(cuts.filter((cut) => cut > 0 && cut < data.length))).sort((a, b) => a - b)
  const out: Array<Uint8Array> = []
  let start = 0
  for (const cut of positions) {
    out.push(data.subarray(start, cut))
    start = cut
  }
  out.push(data.subarray(start))
  return out
}

/** Every element of a stream, then its error if it fails. */
export const collectSettled = <A, E>(
  stream: Stream.Stream<A, E>
): Effect.Effect<{ readonly elements: ReadonlyArray<A>; readonly error: E | undefined }> =>
  Effect.map(Stream.runCollect(Stream.either(stream)), (chunk) => {
    const elements: Array<A> = []
    let error: E | undefined
    for (const item of Chunk.toReadonlyArray(chunk)) {
      if (Either.isRight(item)) elements.push(item.right)
      else error = item.left
    }
    return { elements, error }
  })

/** JSON encodings of stream elements, for deep comparison. */
export const encodeAll = (elements: ReadonlyArray<StreamPart.StreamPart>): ReadonlyArray<unknown> =>
  elements.map((element) => StreamPart.encode(element))

/** The stream elements of each response, in first-seen order of `responseId`. */
export const byResponse = (
  elements: ReadonlyArray<StreamPart.StreamPart>
): ReadonlyArray<ReadonlyArray<StreamPart.StreamPart>> => {
  const groups = new Map<string, Array<StreamPart.StreamPart>>()
  for (const element of elements) {
    const group = groups.get(element.responseId)
    if (group === undefined) groups.set(element.responseId, [element])
    else group.push(element)
  }
  return Array.from(groups.values())
}

/** The part updates of one response, grouped by output index (ascending). */
export const bySlot = (
  elements: ReadonlyArray<StreamPart.StreamPart>
): ReadonlyArray<ReadonlyArray<StreamPart.PartUpdate>> => {
  const slots = new Map<number, Array<StreamPart.PartUpdate>>()
  for (const element of elements) {
    if (element.type !== "part") continue
    const slot = slots.get(element.outputIndex)
    if (slot === undefined) slots.set(element.outputIndex, [element])
    else slot.push(element)
  }
  return Array.from(slots.entries()).sort(([a], [b]) => a - b).map(([, updates]) => updates)
}

/** What a part holds as text, by type: text / refusal text / arguments / reasoning text. */
export const textOf = (part: Part.AssistantPart): string | undefined => {
  switch (part.type) {
    case "text":
    case "refusal":
      return part.text
    case "tool_call":
      return part.arguments
    case "custom_tool_call":
      return part.input
    case "reasoning":
      return part.text
    default:
      return undefined
  }
}

/**
 * The reference fold of one slot's updates (the `ResponsesStream` contract): a `partial: false` part that
 * arrives in an empty slot, or in a slot of another type, replaces it; every other update appends its text,
 * summary (element-wise), annotations, and takes the newest attributes, call id / name and payload when
 * present. Returns the folded part as its JSON encoding (the summary and texts joined).
 */
export const foldSlot = (updates: ReadonlyArray<StreamPart.PartUpdate>): Record<string, unknown> => {
  let current: Record<string, unknown> | undefined
  let texts: Array<string> = []
  let summary: Array<Array<string>> = []
  let annotations: Array<unknown> = []
  for (const update of updates) {
    const part = update.part
    const encodedUpdate = StreamPart.encode(update)
    if (encodedUpdate.type !== "part") continue
    const encoded: Record<string, unknown> = { ...encodedUpdate.part }
    const sameType = current !== undefined && current.type === part.type
    if (!sameType) {
      current = undefined
      texts = []
      summary = []
      annotations = []
    }
    current = { ...(current ?? {}), ...encoded }
    const text = textOf(part)
    if (text !== undefined) texts.push(text)
    if (part.type === "reasoning") {
      part.summary.forEach((entry, index) => {
        while (summary.length <= index) summary.push([])
        summary[index]!.push(entry)
      })
    }
    if (part.type === "text") annotations = [...annotations, ...(encoded.annotations as Array<unknown>)]
  }
  const out: Record<string, unknown> = { ...current }
  switch (out.type) {
    case "text":
      out.text = texts.join("")
      out.annotations = annotations
      break
    case "refusal":
      out.text = texts.join("")
      break
    case "tool_call":
      out.arguments = texts.join("")
      break
    case "custom_tool_call":
      out.input = texts.join("")
      break
    case "reasoning":
      out.summary = summary.map((entries) => entries.join(""))
      if (texts.length > 0) out.text = texts.join("")
      break
  }
  return out
}
