/**
 * The event state machine of the Responses streaming decoder: one JSON event (an SSE `data:` payload) in,
 * zero or more `StreamPart`s out. Synchronous and allocation-light; the channel in `ResponsesStream` drives
 * it one chunk of events at a time. The conventions it follows are documented on `ResponsesStream`.
 *
 * @internal
 */
import { AiError, Part, StreamPart, UnsafePart } from "@effect-responses/core"
import * as Framing from "@effect-responses/wire/Framing"
import { arrayField, isObject, type JsonObject, numberField, objectField, stringField } from "@effect-responses/wire/Json"
import * as Either from "effect/Either"
import * as Provider from "../Provider.js"
import * as ResponsesOutput from "../ResponsesOutput.js"
import { type DeltaField, type DeltaTemplate, learn } from "./deltaTemplate.js"

/** @internal */
export type DecodeError =
  | AiError.MalformedOutput
  | AiError.StreamErrorEvent
  | AiError.ResponseFailed
  | AiError.TruncatedStream

/** @internal */
export type LogEntry = Framing.LogEntry

/** What the deltas of one output item delivered so far. */
interface Slot {
  readonly itemType: string
  attributes: Part.Attributes
  callId: string
  name: string
  /** The `namespace` of a function or custom tool call, from the added item. */
  namespace: string | undefined
  /** Whether deltas delivered text, arguments, summary or annotations (the done part is then emptied). */
  delivered: boolean
  /** Media type of an image generation call, once known (`output_format`, or sniffed from a partial image). */
  mediaType: string | undefined
  /** What the text and refusal deltas of a message delivered, per `content_index` (content part). */
  readonly contents: Array<Content>
  readonly summary: Array<Delivered>
  readonly reasoningText: Delivered
  /** Arguments of a function call, or input of a custom tool call. */
  readonly args: Delivered
}

const EMPTY: ReadonlyArray<never> = []

/**
 * The payload an `event: ping` becomes (see `eventData`): no JSON, so only a payload that fails to parse is
 * compared with it; the decoder skips it with a debug log.
 */
const PING = "event: ping"

/**
 * The payload of a named SSE event (`Framing.makeSseFramer`'s `eventData`): `event: ping`, a keep-alive
 * whatever its data (old sse-starlette servers send a timestamp, others `ping`), is skipped; any other name is
 * ignored, its data read as usual (the JSON `type` is authoritative).
 *
 * @internal
 */
export const eventData = (event: string, data: string): string => event === "ping" ? PING : data

/** The SSE framer of Responses streams: `event: ping` read by `eventData`. @internal */
export const makeSseFramer = (maxEventSize: number): Framing.Framer => Framing.makeSseFramer(maxEventSize, eventData)

/**
 * Templates learned that no event matched, after which a decoder learns no more (its server varies its
 * delta events, or interleaves those of several output items).
 */
const MAX_IDLE_TEMPLATES = 4

/**
 * Every `COMPACT_AFTER` deltas of one text, the newest are joined into one piece: a string header per delta
 * costs several times its few characters, and held memory then stays about the size of the text (peak live
 * heap of the 5 MB benchmark stream: packages/bench/RESULTS.md, run of 2026-11-29 19:25). Each delta is copied once.
 */
const COMPACT_AFTER = 64

/** The text the deltas of one field delivered, in pieces, kept to empty the completing part. */
class Delivered {
  readonly pieces: Array<string> = []
  private fresh = 0

  push(delta: string): void {
    this.pieces.push(delta)
    if (++this.fresh === COMPACT_AFTER) {
      this.pieces.push(this.pieces.splice(-COMPACT_AFTER).join(""))
      this.fresh = 0
    }
  }
}

const NOTHING_DELIVERED = new Delivered()

/** What the deltas of one content part of a message delivered. */
interface Content {
  readonly text: Delivered
  readonly refusal: Delivered
  /** Keys (JSON) of the annotations delivered by `output_text.annotation.added`. */
  readonly annotations: Set<string>
}

const makeContent = (): Content => ({ text: new Delivered(), refusal: new Delivered(), annotations: new Set() })

/** The content part `contentIndex` of a slot, made (with those before it) when first delivered to. */
const contentOf = (slot: Slot, contentIndex: number): Content => {
  const contents = slot.contents
  while (contents.length <= contentIndex) contents.push(makeContent())
  return contents[contentIndex]!
}

/**
 * The content index of an event (`content_index`): a non-negative integer up to
 * `StreamPart.MAX_CONTENT_INDEX` (larger ones read as that bound), else 0 (missing, or not an index).
 */
const contentIndexOf = (value: unknown): number =>
  typeof value === "number" && Number.isInteger(value) && value > 0
    ? Math.min(value, StreamPart.MAX_CONTENT_INDEX)
    : 0

const makeSlot = (
  itemType: string,
  attributes: Part.Attributes,
  callId = "",
  name = "",
  namespace: string | undefined = undefined
): Slot => ({
  itemType,
  attributes,
  callId,
  name,
  namespace,
  delivered: false,
  mediaType: undefined,
  contents: [],
  summary: [],
  reasoningText: new Delivered(),
  args: new Delivered()
})

/**
 * Hosted-tool progress events of the catalogue: the output item type they belong to and the status they
 * announce.
 */
const PROGRESS: { readonly [type: string]: readonly [kind: string, status: string] } = {
  "response.web_search_call.in_progress": ["web_search_call", "in_progress"],
  "response.web_search_call.searching": ["web_search_call", "searching"],
  "response.web_search_call.completed": ["web_search_call", "completed"],
  "response.file_search_call.in_progress": ["file_search_call", "in_progress"],
  "response.file_search_call.searching": ["file_search_call", "searching"],
  "response.file_search_call.completed": ["file_search_call", "completed"],
  "response.code_interpreter_call.in_progress": ["code_interpreter_call", "in_progress"],
  "response.code_interpreter_call.interpreting": ["code_interpreter_call", "interpreting"],
  "response.code_interpreter_call.completed": ["code_interpreter_call", "completed"],
  "response.image_generation_call.in_progress": ["image_generation_call", "in_progress"],
  "response.image_generation_call.generating": ["image_generation_call", "generating"],
  "response.image_generation_call.completed": ["image_generation_call", "completed"],
  "response.mcp_call.in_progress": ["mcp_call", "in_progress"],
  "response.mcp_call.completed": ["mcp_call", "completed"],
  "response.mcp_call.failed": ["mcp_call", "failed"],
  "response.mcp_list_tools.in_progress": ["mcp_list_tools", "in_progress"],
  "response.mcp_list_tools.completed": ["mcp_list_tools", "completed"],
  "response.mcp_list_tools.failed": ["mcp_list_tools", "failed"]
}

/** Input deltas of hosted or custom tools (the item keeps their concatenation): the item type. */
const TOOL_DELTAS: { readonly [type: string]: string } = {
  "response.code_interpreter_call_code.delta": "code_interpreter_call",
  "response.mcp_call_arguments.delta": "mcp_call",
  "response.shell_call_command.added": "shell_call",
  "response.shell_call_command.delta": "shell_call",
  "response.shell_call_output_content.delta": "shell_call_output",
  "response.apply_patch_call_operation_diff.delta": "apply_patch_call"
}

/** Events whose content `response.output_item.done` brings again, whole. */
const SNAPSHOTS: ReadonlySet<string> = new Set([
  "response.content_part.added",
  "response.content_part.done",
  "response.output_text.done",
  "response.refusal.done",
  "response.function_call_arguments.done",
  "response.reasoning_summary_part.added",
  "response.reasoning_summary_part.done",
  "response.reasoning_summary_text.done",
  "response.reasoning_text.done",
  "response.code_interpreter_call_code.done",
  "response.mcp_call_arguments.done",
  "response.custom_tool_call_input.done",
  "response.shell_call_command.done",
  "response.shell_call_output_content.done",
  "response.apply_patch_call_operation_diff.done"
])

/**
 * Audio events of the catalogue. They carry no output index (the audio belongs to the response, not to an
 * output item), so there is no part to update: they are validated and skipped.
 */
const AUDIO: ReadonlySet<string> = new Set([
  "response.audio.delta",
  "response.audio.done",
  "response.audio.transcript.delta",
  "response.audio.transcript.done"
])

/** The media type of base64 image data, from its first bytes; `undefined` when not recognised. */
const sniffImage = (base64: string): string | undefined =>
  base64.startsWith("iVBOR")
    ? "image/png"
    : base64.startsWith("/9j/")
    ? "image/jpeg"
    : base64.startsWith("UklGR")
    ? "image/webp"
    : base64.startsWith("R0lGOD")
    ? "image/gif"
    : undefined

const annotationKey = (annotation: Part.Annotation): string => JSON.stringify(annotation)

/**
 * A finite number, else `undefined` (`numberField` on a value already read). The deltas read their fields
 * with property loads of their own (`event.output_index`): `numberField`'s one load, shared by every event
 * shape and key, is megamorphic, a generic lookup per field of every delta.
 */
const finiteNumber = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined

/**
 * What the stream delivered for an output item that `response.output_item.done` completed: kept (small)
 * until the terminal event, to reconcile the response snapshot with the stream.
 */
interface Closed {
  readonly itemType: string
  /** The item ids the stream gave the item (`output_item.added`, `.done`; they differ when a server rotates ids). */
  readonly ids: ReadonlyArray<string>
  /** Whether any text, arguments, summary, reasoning text, payload or annotation reached the caller. */
  readonly hasContent: boolean
}

/** @internal */
export class Decoder {
  /**
   * `fast`: whether delta events written from a learned template are read without `JSON.parse`
   * (`internal/deltaTemplate`); off, every event is parsed (the tests compare both).
   */
  constructor(private readonly fast = true) {}

  /** The template of the last delta event parsed, for the fast path. */
  private template: DeltaTemplate | undefined = undefined
  /** Templates learned and dropped without a match (see `MAX_IDLE_TEMPLATES`). */
  private idleTemplates = 0
  /** How many events the fast path read (for the tests). */
  fastEvents = 0
  /** 0-based position of the current payload among all payloads fed. */
  private position = -1
  private responseId: string | undefined = undefined
  private open = false
  /** Call ids of the client calls seen in the current response and not answered by an output item in it. */
  private readonly pendingCalls = new Set<string>()
  private readonly slots = new Map<number, Slot>()
  private readonly closed = new Map<number, Closed>()
  private logs: Array<LogEntry> = []

  /** Logs collected since the last call. */
  takeLogs(): ReadonlyArray<LogEntry> {
    if (this.logs.length === 0) return EMPTY
    const logs = this.logs
    this.logs = []
    return logs
  }

  /** Feeds one payload; pushes the elements it yields onto `out`; returns the error that ends the stream. */
  feed(data: string, out: Array<StreamPart.StreamPart>): DecodeError | undefined {
    const position = ++this.position
    if (data === "[DONE]") return undefined
    const template = this.template
    if (template !== undefined) {
      const text = template.match(data)
      if (text !== undefined) {
        this.fastEvents++
        return this.delta(template.event, template.type, data, out, template.itemType, template.field, text)
      }
    }
    let event: unknown
    try {
      event = JSON.parse(data)
    } catch (error) {
      if (data === PING) {
        this.logs.push({ level: "Debug", message: `skipped a keep-alive event (event: ping) at position ${position}` })
        return undefined
      }
      if (data.trim() === "") return undefined
      return new AiError.MalformedOutput({
        description: `invalid JSON event: ${error instanceof Error ? error.message : String(error)}`,
        position,
        excerpt: AiError.excerpt(data)
      })
    }
    if (!isObject(event) || typeof event.type !== "string") {
      return new AiError.MalformedOutput({
        description: "the event is not a JSON object with a string `type`",
        position,
        excerpt: AiError.excerpt(data)
      })
    }
    const type = event.type
    switch (type) {
      case "response.output_text.delta":
        return this.parsedDelta(event, type, data, out, "message", "text")
      case "response.function_call_arguments.delta":
        return this.parsedDelta(event, type, data, out, "function_call", "args")
      case "response.custom_tool_call_input.delta":
        return this.parsedDelta(event, type, data, out, "custom_tool_call", "input")
      case "response.reasoning_summary_text.delta":
        return this.parsedDelta(event, type, data, out, "reasoning", "summary")
      case "response.reasoning_text.delta":
        return this.parsedDelta(event, type, data, out, "reasoning", "reasoningText")
      case "response.refusal.delta":
        return this.parsedDelta(event, type, data, out, "message", "refusal")
      case "response.output_text.annotation.added":
        return this.annotationAdded(event, type, data, out)
      case "response.image_generation_call.partial_image":
        return this.partialImage(event, type, data, out)
      case "response.output_item.added":
        return this.itemAdded(event, type, data)
      case "response.output_item.done":
        return this.itemDone(event, type, data, out)
      case "response.created":
        return this.started(event, type, data, out)
      case "response.in_progress":
      case "response.queued":
        // A server that skipped `response.created` still gets a started response.
        return this.open || this.isCurrentResponse(event) ? undefined : this.started(event, type, data, out)
      case "response.completed":
      case "response.incomplete":
        return this.finished(event, type, data, out)
      case "response.failed":
        return this.failed(event)
      case "error":
        return this.errorEvent(event)
      default: {
        const progress = PROGRESS[type]
        if (progress !== undefined) return this.toolProgress(event, type, data, out, progress[0], progress[1])
        const kind = TOOL_DELTAS[type]
        if (kind !== undefined) return this.toolProgress(event, type, data, out, kind, undefined)
        if (SNAPSHOTS.has(type)) return undefined
        if (AUDIO.has(type)) {
          this.logs.push({ level: "Debug", message: `skipped audio event ${type} at position ${position}` })
          return undefined
        }
        this.logs.push({ level: "Debug", message: `skipped event ${type} at position ${position}` })
        return undefined
      }
    }
  }

  /** Tracks the client calls a completed part opens (a call) or closes (the output item of a hosted run). */
  private notePending(part: Part.AssistantPart): void {
    if (Part.isClientCall(part)) {
      this.pendingCalls.add(Part.callIdOf(part))
    } else {
      const answered = Part.answeredCallId(part)
      if (answered !== undefined) this.pendingCalls.delete(answered)
    }
  }

  /** Called when the input ends. */
  end(): DecodeError | undefined {
    if (this.responseId === undefined) {
      return new AiError.TruncatedStream({
        description: "the stream ended before any response.created",
        position: this.position + 1
      })
    }
    if (this.open) {
      return new AiError.TruncatedStream({
        description: "the stream ended without a terminal event (response.completed, response.incomplete, " +
          "response.failed or error)",
        responseId: this.responseId,
        position: this.position + 1
      })
    }
    return undefined
  }

  private isCurrentResponse(event: JsonObject): boolean {
    const response = objectField(event, "response")
    return this.responseId !== undefined && response !== undefined && stringField(response, "id") === this.responseId
  }

  /**
   * A part event while no response is open: before the first `response.created` nothing can carry a
   * response id, so the stream is malformed; between two responses the event is skipped.
   */
  private outside(type: string, data: string): DecodeError | undefined {
    if (this.responseId === undefined) return this.malformed(type, data, `${type} before response.created`)
    this.logs.push({ level: "Debug", message: `skipped ${type} between responses at position ${this.position}` })
    return undefined
  }

  private malformed(type: string, data: string, description: string): AiError.MalformedOutput {
    return new AiError.MalformedOutput({
      description,
      eventType: type,
      position: this.position,
      excerpt: AiError.excerpt(data)
    })
  }

  private started(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>
  ): DecodeError | undefined {
    const response = objectField(event, "response")
    const id = response && stringField(response, "id")
    if (response === undefined || id === undefined) return this.malformed(type, data, "missing response.id")
    if (this.open) {
      this.logs.push({
        level: "Warning",
        message: `response ${this.responseId} had no terminal event before response ${id} started (position ${this.position})`
      })
    }
    this.responseId = id
    this.open = true
    this.pendingCalls.clear()
    this.slots.clear()
    this.closed.clear()
    out.push(UnsafePart.responseStarted(id, stringField(response, "model") ?? ""))
    return undefined
  }

  private finished(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>
  ): DecodeError | undefined {
    const response = objectField(event, "response")
    if (response === undefined) return this.malformed(type, data, "missing response")
    if (!this.open || this.responseId === undefined) {
      return this.malformed(type, data, "a terminal event arrived before response.created")
    }
    const status = stringField(response, "status") ?? (type === "response.completed" ? "completed" : "incomplete")
    const incompleteReason = ResponsesOutput.incompleteReasonFromWire(response.incomplete_details)
    const output = arrayField(response, "output")
    if (output !== undefined && output.length > 0) {
      const error = this.reconcile(output, type, data, out)
      if (error !== undefined) return error
    }
    const hasFunctionCall = this.pendingCalls.size > 0 || (output !== undefined && ResponsesOutput.hasFunctionCall(output))
    out.push(
      UnsafePart.responseFinished(
        this.responseId,
        status,
        ResponsesOutput.finishReasonOf(status, incompleteReason, hasFunctionCall),
        incompleteReason,
        ResponsesOutput.usageFromWire(response.usage)
      )
    )
    this.open = false
    this.slots.clear()
    this.closed.clear()
    return undefined
  }

  /**
   * Reconciles the terminal snapshot (`response.output` of `response.completed` / `response.incomplete`)
   * with what the stream delivered. Each snapshot item is matched to an output index the stream used: by
   * item id first, then by position when the item types agree, then to the next unmatched index of the same
   * item type (servers that rotate item ids); then
   *
   * - an item the stream never announced is sent complete, at its position in the snapshot (or after the
   *   last index the stream used, when that position is taken);
   * - an item still open (deltas, no `output_item.done`) is completed from the snapshot, as
   *   `output_item.done` would have completed it;
   * - an item completed without any content (e.g. a message whose `output_item.done` had no text) gets the
   *   snapshot's content, sent whole with `replace: true`;
   * - anything else is left alone: nothing already delivered is sent again.
   */
  private reconcile(
    output: ReadonlyArray<unknown>,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>
  ): DecodeError | undefined {
    const count = output.length
    const target = new Array<number | undefined>(count)
    const used = new Set<number>()
    const typeAt = (index: number): string | undefined =>
      this.slots.get(index)?.itemType ?? this.closed.get(index)?.itemType
    // 1. by item id
    const byId = new Map<string, number>()
    for (const [index, slot] of this.slots) {
      if (slot.attributes.itemId !== undefined) byId.set(slot.attributes.itemId, index)
    }
    for (const [index, closed] of this.closed) for (const id of closed.ids) byId.set(id, index)
    for (let position = 0; position < count; position++) {
      const item = output[position]
      const id = isObject(item) ? stringField(item, "id") : undefined
      const index = id === undefined ? undefined : byId.get(id)
      if (index !== undefined && !used.has(index)) {
        target[position] = index
        used.add(index)
      }
    }
    // 2. by position, 3. by order among the unmatched indices of the same item type
    const itemTypeOf = (position: number): string | undefined => {
      const item = output[position]
      return isObject(item) && typeof item.type === "string" ? item.type : undefined
    }
    for (let position = 0; position < count; position++) {
      if (target[position] !== undefined) continue
      const itemType = itemTypeOf(position)
      if (itemType !== undefined && !used.has(position) && typeAt(position) === itemType) {
        target[position] = position
        used.add(position)
      }
    }
    const known = [...this.slots.keys(), ...this.closed.keys()].sort((a, b) => a - b)
    for (let position = 0; position < count; position++) {
      if (target[position] !== undefined) continue
      const itemType = itemTypeOf(position)
      const index = known.find((index) => !used.has(index) && typeAt(index) === itemType)
      if (itemType !== undefined && index !== undefined) {
        target[position] = index
        used.add(index)
      }
    }
    let next = known.length === 0 ? 0 : known[known.length - 1]! + 1
    for (let position = 0; position < count; position++) {
      const item = output[position]
      const index = target[position]
      if (index === undefined) {
        const decoded = this.decodeSnapshotItem(item, position, type, data)
        if (Either.isLeft(decoded)) return decoded.left
        const at = typeAt(position) === undefined && !used.has(position) ? position : next++
        used.add(at)
        for (const part of decoded.right) this.notePending(part)
        this.logs.push({
          level: "Debug",
          message: `output item ${at} of response ${this.responseId}: only in the ${type} snapshot; sent complete`
        })
        pushParts(out, this.responseId!, at, decoded.right, contentIndicesOf(item, decoded.right.length), false)
        continue
      }
      if (this.slots.has(index)) {
        this.logs.push({
          level: "Debug",
          message: `output item ${index} of response ${this.responseId}: no response.output_item.done; ` +
            `completed from the ${type} snapshot`
        })
        const error = this.complete(index, item, type, data, out)
        if (error !== undefined) return error
        continue
      }
      const closed = this.closed.get(index)
      if (closed !== undefined && !closed.hasContent) {
        const decoded = this.decodeSnapshotItem(item, position, type, data)
        if (Either.isLeft(decoded)) return decoded.left
        const parts = decoded.right
        if (!parts.some(hasContent)) continue
        for (const part of parts) this.notePending(part)
        this.logs.push({
          level: "Debug",
          message: `output item ${index} of response ${this.responseId}: content only in the ${type} snapshot`
        })
        pushParts(out, this.responseId!, index, parts, contentIndicesOf(item, parts.length), true)
      }
    }
    for (const index of this.slots.keys()) {
      if (!used.has(index)) {
        this.logs.push({
          level: "Debug",
          message: `output item ${index} of response ${this.responseId}: not in the ${type} snapshot; left as streamed`
        })
      }
    }
    return undefined
  }

  private decodeSnapshotItem(
    item: unknown,
    position: number,
    type: string,
    data: string
  ): Either.Either<ReadonlyArray<Part.AssistantPart>, AiError.MalformedOutput> {
    return Either.mapLeft(ResponsesOutput.decodeOutputItemParts(item), (error) =>
      new AiError.MalformedOutput({
        description: `response.output[${position}]: ${error.description}`,
        eventType: type,
        position: this.position,
        excerpt: AiError.excerpt(data)
      }))
  }

  private failed(event: JsonObject): DecodeError {
    const response = objectField(event, "response")
    const error = response && objectField(response, "error")
    const code = error && stringField(error, "code")
    return new AiError.ResponseFailed({
      responseId: this.responseId ?? (response && stringField(response, "id")) ?? "",
      description: (error && stringField(error, "message")) ?? "the response failed",
      ...(code === undefined ? {} : { code })
    })
  }

  private errorEvent(event: JsonObject): DecodeError {
    // Flat `{type:"error", code, message, param}` or nested `{type:"error", error:{…}}`.
    const source = objectField(event, "error") ?? event
    const code = stringField(source, "code")
    const param = stringField(source, "param")
    const sequenceNumber = numberField(event, "sequence_number")
    return new AiError.StreamErrorEvent({
      description: stringField(source, "message") ?? "error event",
      ...(code === undefined ? {} : { code }),
      ...(param === undefined ? {} : { param }),
      ...(sequenceNumber === undefined ? {} : { sequenceNumber })
    })
  }

  private itemAdded(event: JsonObject, type: string, data: string): DecodeError | undefined {
    const outputIndex = numberField(event, "output_index")
    const item = objectField(event, "item")
    if (outputIndex === undefined || item === undefined || typeof item.type !== "string") {
      return this.malformed(type, data, "missing output_index or item.type")
    }
    if (!this.open) return this.outside(type, data)
    const slot = makeSlot(
      item.type,
      ResponsesOutput.attributesOfItem(item),
      stringField(item, "call_id") ?? "",
      stringField(item, "name") ?? "",
      stringField(item, "namespace")
    )
    const format = stringField(item, "output_format")
    if (format !== undefined && format !== "") slot.mediaType = `image/${format}`
    this.slots.set(outputIndex, slot)
    return undefined
  }

  /** The slot of an event's output index, made from the event's `item_id` when no item was added. */
  private slotOf(event: JsonObject, outputIndex: number, itemType: string): Slot {
    let slot = this.slots.get(outputIndex)
    if (slot === undefined) {
      const itemId = stringField(event, "item_id")
      slot = makeSlot(itemType, itemId === undefined ? {} : { itemId })
      this.slots.set(outputIndex, slot)
      if (!this.closed.has(outputIndex)) {
        this.logs.push({
          level: "Debug",
          message: `output item ${outputIndex} of response ${this.responseId}: an event for an output index never ` +
            `announced by response.output_item.added (position ${this.position}) starts the slot`
        })
      }
    }
    return slot
  }

  /** A delta event that `feed` parsed: read, then its template learned for the fast path. */
  private parsedDelta(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>,
    itemType: string,
    field: DeltaField
  ): DecodeError | undefined {
    const error = this.delta(event, type, data, out, itemType, field, event.delta)
    if (error === undefined && this.fast && this.idleTemplates < MAX_IDLE_TEMPLATES) {
      const template = learn(data, event, type, itemType, field)
      if (this.template !== undefined && this.template.hits === 0) this.idleTemplates++
      if (template === undefined) this.idleTemplates++
      this.template = template
    }
    return error
  }

  /** A delta event, `delta` its `delta` member (`event`'s own, or the text the fast path read). */
  private delta(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>,
    itemType: string,
    field: DeltaField,
    delta: unknown
  ): DecodeError | undefined {
    const outputIndex = finiteNumber(event.output_index)
    if (outputIndex === undefined && field === "input") {
      // as other tool input progress: the item itself arrives with output_item.done or the terminal snapshot
      this.logs.push({ level: "Debug", message: `skipped ${type} without output_index at position ${this.position}` })
      return undefined
    }
    if (outputIndex === undefined || typeof delta !== "string") {
      return this.malformed(type, data, "missing output_index or a string delta")
    }
    if (!this.open || this.responseId === undefined) return this.outside(type, data)
    const slot = this.slotOf(event, outputIndex, itemType)
    slot.delivered = true
    let part: Part.AssistantPart
    let contentIndex = 0
    switch (field) {
      case "text": {
        contentIndex = contentIndexOf(event.content_index)
        contentOf(slot, contentIndex).text.push(delta)
        part = UnsafePart.textDelta(delta, slot.attributes)
        break
      }
      case "refusal": {
        contentIndex = contentIndexOf(event.content_index)
        contentOf(slot, contentIndex).refusal.push(delta)
        part = UnsafePart.refusalPart(delta, slot.attributes)
        break
      }
      case "args": {
        slot.args.push(delta)
        part = UnsafePart.toolCallPart(slot.callId, slot.name, delta, slot.attributes, slot.namespace)
        break
      }
      case "input": {
        slot.args.push(delta)
        part = UnsafePart.customToolCallPart(slot.callId, slot.name, delta, slot.attributes, slot.namespace)
        break
      }
      case "reasoningText": {
        slot.reasoningText.push(delta)
        part = UnsafePart.reasoningTextPart(delta, slot.attributes)
        break
      }
      case "summary": {
        const summaryIndex = finiteNumber(event.summary_index) ?? 0
        if (!Number.isInteger(summaryIndex) || summaryIndex < 0) {
          return this.malformed(type, data, "summary_index is not a non-negative integer")
        }
        while (slot.summary.length <= summaryIndex) slot.summary.push(new Delivered())
        slot.summary[summaryIndex].push(delta)
        // `[..."" x summaryIndex, delta]`, built by pushes (`new Array(n).fill` is a runtime call per delta)
        const summary: Array<string> = []
        for (let index = 0; index < summaryIndex; index++) summary.push("")
        summary.push(delta)
        part = UnsafePart.reasoningSummaryPart(summary, slot.attributes)
        break
      }
    }
    // The hot path: one part and one update per delta, built without the class constructors (FastParts).
    out.push(
      contentIndex === 0
        ? UnsafePart.partUpdate(this.responseId, outputIndex, true, part)
        : UnsafePart.contentPartUpdate(this.responseId, outputIndex, contentIndex, true, false, part)
    )
    return undefined
  }

  /**
   * `response.output_text.annotation.added`: a delta `TextPart` of the event's content part with no text and
   * the one annotation, its offsets as sent (into that content part's text).
   */
  private annotationAdded(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>
  ): DecodeError | undefined {
    const outputIndex = numberField(event, "output_index")
    const raw = event.annotation
    if (outputIndex === undefined || !isObject(raw)) {
      return this.malformed(type, data, "missing output_index or an annotation object")
    }
    if (!this.open || this.responseId === undefined) return this.outside(type, data)
    const slot = this.slotOf(event, outputIndex, "message")
    const contentIndex = contentIndexOf(event.content_index)
    const annotation = ResponsesOutput.annotationFromWire(raw)
    contentOf(slot, contentIndex).annotations.add(annotationKey(annotation))
    slot.delivered = true
    out.push(
      UnsafePart.contentPartUpdate(
        this.responseId,
        outputIndex,
        contentIndex,
        true,
        false,
        UnsafePart.textPart("", [annotation], slot.attributes)
      )
    )
    return undefined
  }

  /** `response.image_generation_call.partial_image`: a partial `MediaPart`, a preview of the image. */
  private partialImage(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>
  ): DecodeError | undefined {
    const outputIndex = numberField(event, "output_index")
    const image = stringField(event, "partial_image_b64")
    if (outputIndex === undefined || image === undefined) {
      return this.malformed(type, data, "missing output_index or partial_image_b64")
    }
    if (!this.open || this.responseId === undefined) return this.outside(type, data)
    const slot = this.slotOf(event, outputIndex, "image_generation_call")
    const format = stringField(event, "output_format")
    if (format !== undefined && format !== "") slot.mediaType = `image/${format}`
    slot.mediaType ??= sniffImage(image)
    out.push(
      new StreamPart.PartUpdate({
        responseId: this.responseId,
        outputIndex,
        partial: true,
        part: new Part.MediaPart({
          mediaType: slot.mediaType ?? "image/png",
          data: image,
          attributes: slot.attributes
        }, true)
      }, true)
    )
    return undefined
  }

  /**
   * Hosted-tool progress (`status` given) or a tool input delta (`status` undefined): a partial part that
   * announces the item's status. Image generation progress is a partial `MediaPart` without content; every
   * other item's is a partial `UnknownPart` whose `item` is the event itself, verbatim.
   */
  private toolProgress(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>,
    kind: string,
    status: string | undefined
  ): DecodeError | undefined {
    const outputIndex = numberField(event, "output_index")
    if (outputIndex === undefined) {
      // Progress is informative only: the item itself arrives with output_item.done or the terminal snapshot.
      this.logs.push({ level: "Debug", message: `skipped ${type} without output_index at position ${this.position}` })
      return undefined
    }
    if (!this.open || this.responseId === undefined) return this.outside(type, data)
    const slot = this.slotOf(event, outputIndex, kind)
    if (status !== undefined && slot.attributes.status !== status) {
      slot.attributes = { ...slot.attributes, status }
    }
    const part = slot.itemType === "image_generation_call"
      ? new Part.MediaPart({ mediaType: slot.mediaType ?? "image/png", attributes: slot.attributes }, true)
      : new Part.UnknownPart({
        provider: Provider.PROVIDER,
        kind: slot.itemType,
        item: event,
        attributes: slot.attributes
      }, true)
    out.push(new StreamPart.PartUpdate({ responseId: this.responseId, outputIndex, partial: true, part }, true))
    return undefined
  }

  private itemDone(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>
  ): DecodeError | undefined {
    const outputIndex = numberField(event, "output_index")
    if (outputIndex === undefined) return this.malformed(type, data, "missing output_index")
    if (!this.open || this.responseId === undefined) return this.outside(type, data)
    return this.complete(outputIndex, event.item, type, data, out)
  }

  /**
   * Completes the item at `outputIndex` with its final JSON `item` (from `response.output_item.done`, or
   * from the terminal snapshot when the stream never sent that event): the complete part when nothing was
   * delivered, else the completing part, or the replacing snapshot when it contradicts the deltas.
   */
  private complete(
    outputIndex: number,
    item: unknown,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>
  ): DecodeError | undefined {
    const responseId = this.responseId!
    const decoded = ResponsesOutput.decodeOutputItemParts(item)
    if (Either.isLeft(decoded)) {
      return new AiError.MalformedOutput({
        description: decoded.left.description,
        eventType: type,
        position: this.position,
        excerpt: AiError.excerpt(data)
      })
    }
    const parts = decoded.right
    const part = parts[0]!
    for (const each of parts) this.notePending(each)
    const indices = contentIndicesOf(item, parts.length)
    const slot = this.slots.get(outputIndex)
    this.slots.delete(outputIndex)
    const ids: Array<string> = []
    if (slot?.attributes.itemId !== undefined) ids.push(slot.attributes.itemId)
    if (part.attributes.itemId !== undefined && part.attributes.itemId !== slot?.attributes.itemId) {
      ids.push(part.attributes.itemId)
    }
    const itemType = isObject(item) && typeof item.type === "string" ? item.type : part.type
    this.closed.set(outputIndex, {
      itemType,
      ids,
      hasContent: parts.some(hasContent) || (slot !== undefined && slot.delivered && hasDelivered(slot))
    })
    if (slot === undefined || !slot.delivered) {
      pushParts(out, responseId, outputIndex, parts, indices, false)
      return undefined
    }
    const completing = emptiedParts(parts, indices, slot)
    if (completing === undefined) {
      this.logs.push({
        level: "Warning",
        message: `output item ${outputIndex} of response ${responseId}: the ${part.type} part of ` +
          `${type} (position ${this.position}) contradicts what its deltas delivered; ` +
          `the snapshot wins and replaces the slot`
      })
      pushParts(out, responseId, outputIndex, parts, indices, true)
      return undefined
    }
    pushParts(out, responseId, outputIndex, completing, indices, false)
    return undefined
  }
}

/** Whether a part carries content a caller reads: text, arguments, summary, reasoning text, a payload, media or an item. */
const hasContent = (part: Part.AssistantPart): boolean => {
  switch (part.type) {
    case "text":
      return part.text !== "" || part.annotations.length > 0
    case "refusal":
      return part.text !== ""
    case "tool_call":
      return part.arguments !== ""
    case "custom_tool_call":
      return part.input !== ""
    case "reasoning":
      return part.summary.some((entry) => entry !== "") || (part.text !== undefined && part.text !== "") ||
        part.payload !== undefined
    default:
      return true
  }
}

/** Whether the deltas of a slot delivered anything but empty strings. */
const hasDelivered = (slot: Slot): boolean =>
  !slot.contents.every(contentEmpty) || !isEmpty(slot.args) || !isEmpty(slot.reasoningText) ||
  !slot.summary.every(isEmpty)

/** Whether a content part received neither text, refusal nor annotation. */
const contentEmpty = (content: Content): boolean =>
  content.annotations.size === 0 && isEmpty(content.text) && isEmpty(content.refusal)

/**
 * The content index of each of the `count` parts `decodeOutputItemParts` made of `item`: for a message,
 * the positions of its `output_text` / `refusal` content parts (bounded as `contentIndexOf` bounds an
 * event's), else 0.
 */
const contentIndicesOf = (item: unknown, count: number): ReadonlyArray<number> => {
  const indices: Array<number> = []
  const content = isObject(item) && item.type === "message" ? item.content : undefined
  if (Array.isArray(content)) {
    for (let index = 0; index < content.length && indices.length < count; index++) {
      const entry: unknown = content[index]
      if (isObject(entry) && (entry.type === "output_text" || entry.type === "refusal")) {
        indices.push(Math.min(index, StreamPart.MAX_CONTENT_INDEX))
      }
    }
  }
  while (indices.length < count) indices.push(0)
  return indices
}

/**
 * The updates of an item's parts, each at its content index, in order; `replace`: the replacing snapshot
 * (the first update replaces the item's slot and the content parts after it, see `StreamPart.PartUpdate`).
 */
const pushParts = (
  out: Array<StreamPart.StreamPart>,
  responseId: string,
  outputIndex: number,
  parts: ReadonlyArray<Part.AssistantPart>,
  indices: ReadonlyArray<number>,
  replace: boolean
): void => {
  for (let index = 0; index < parts.length; index++) {
    out.push(UnsafePart.contentPartUpdate(responseId, outputIndex, indices[index]!, false, replace, parts[index]!))
  }
}

/** `snapshot` minus the `delivered` prefix, or `undefined` when `snapshot` does not start with it. */
const remainder = (snapshot: string, delivered: Delivered): string | undefined => {
  const pieces = delivered.pieces
  if (pieces.length === 0) return snapshot
  const prefix = pieces.length === 1 ? pieces[0]! : pieces.join("")
  return snapshot.startsWith(prefix) ? snapshot.slice(prefix.length) : undefined
}

const isEmpty = (delivered: Delivered): boolean => delivered.pieces.every((piece) => piece === "")

/**
 * The annotations of the snapshot that `annotation.added` did not deliver, or `undefined` when a delivered
 * annotation is missing from the snapshot.
 */
const remainingAnnotations = (
  snapshot: ReadonlyArray<Part.Annotation>,
  delivered: ReadonlySet<string>
): ReadonlyArray<Part.Annotation> | undefined => {
  if (delivered.size === 0) return snapshot
  const rest: Array<Part.Annotation> = []
  let found = 0
  for (const annotation of snapshot) {
    if (delivered.has(annotationKey(annotation))) found++
    else rest.push(annotation)
  }
  return found === delivered.size ? rest : undefined
}

const NO_CONTENT: Content = makeContent()

/**
 * The completing parts of an item: the done item's parts (at `indices`) each emptied of what the deltas
 * delivered, or `undefined` when the snapshot does not extend the deltas (then the snapshot replaces the
 * slot): also when a content part received deltas that the done item does not have.
 */
const emptiedParts = (
  parts: ReadonlyArray<Part.AssistantPart>,
  indices: ReadonlyArray<number>,
  slot: Slot
): ReadonlyArray<Part.AssistantPart> | undefined => {
  const contents = slot.contents
  for (let contentIndex = 0; contentIndex < contents.length; contentIndex++) {
    if (!contentEmpty(contents[contentIndex]!) && !indices.includes(contentIndex)) return undefined
  }
  const completing: Array<Part.AssistantPart> = []
  for (let index = 0; index < parts.length; index++) {
    const part = emptied(parts[index]!, slot, contents[indices[index]!] ?? NO_CONTENT)
    if (part === undefined) return undefined
    completing.push(part)
  }
  return completing
}

/**
 * The completing part: the done item's part emptied of what the deltas delivered (`content`: what those of
 * its content part delivered, for text and refusal), or `undefined` when the snapshot does not extend the
 * deltas.
 */
const emptied = (part: Part.AssistantPart, slot: Slot, content: Content): Part.AssistantPart | undefined => {
  const summaryEmpty = slot.summary.every(isEmpty)
  const noContent = slot.contents.every(contentEmpty)
  switch (part.type) {
    case "text": {
      if (!isEmpty(content.refusal) || !isEmpty(slot.args) || !summaryEmpty || !isEmpty(slot.reasoningText)) {
        return undefined
      }
      const text = remainder(part.text, content.text)
      const annotations = remainingAnnotations(part.annotations, content.annotations)
      return text === undefined || annotations === undefined
        ? undefined
        : UnsafePart.textPart(text, annotations, part.attributes)
    }
    case "refusal": {
      if (
        !isEmpty(content.text) || content.annotations.size > 0 || !isEmpty(slot.args) || !summaryEmpty ||
        !isEmpty(slot.reasoningText)
      ) {
        return undefined
      }
      const text = remainder(part.text, content.refusal)
      return text === undefined ? undefined : UnsafePart.refusalPart(text, part.attributes)
    }
    case "tool_call": {
      if (!noContent || !summaryEmpty || !isEmpty(slot.reasoningText)) return undefined
      const args = remainder(part.arguments, slot.args)
      return args === undefined
        ? undefined
        : UnsafePart.toolCallPart(part.callId, part.name, args, part.attributes, part.namespace, part.payload)
    }
    case "custom_tool_call": {
      if (!noContent || !summaryEmpty || !isEmpty(slot.reasoningText)) return undefined
      const input = remainder(part.input, slot.args)
      return input === undefined
        ? undefined
        : UnsafePart.customToolCallPart(part.callId, part.name, input, part.attributes, part.namespace, part.payload)
    }
    case "reasoning": {
      if (!noContent || !isEmpty(slot.args)) return undefined
      if (slot.summary.length > part.summary.length && !slot.summary.slice(part.summary.length).every(isEmpty)) {
        return undefined
      }
      const summary: Array<string> = []
      for (let index = 0; index < part.summary.length; index++) {
        const rest = remainder(part.summary[index], slot.summary[index] ?? NOTHING_DELIVERED)
        if (rest === undefined) return undefined
        summary.push(rest)
      }
      let text = part.text
      if (!isEmpty(slot.reasoningText)) {
        if (part.text === undefined) return undefined
        text = remainder(part.text, slot.reasoningText)
        if (text === undefined) return undefined
      }
      return UnsafePart.reasoningPart(summary, text, part.payload, part.attributes)
    }
    default:
      // items without typed deltas (their progress came as partial `UnknownPart`s): the snapshot replaces
      return undefined
  }
}
