/**
 * The event state machine of the Responses streaming decoder: one JSON event (an SSE `data:` payload) in,
 * zero or more `StreamPart`s out. Synchronous and allocation-light; the channel in `ResponsesStream` drives
 * it one chunk of events at a time. The conventions it follows are documented on `ResponsesStream`.
 *
 * @internal
 */
import { AiError, Part, StreamPart } from "@effect-responses/core"
import * as Either from "effect/Either"
import * as ResponsesOutput from "../ResponsesOutput.js"
import { arrayField, isObject, type JsonObject, numberField, objectField, stringField } from "./json.js"

/** @internal */
export type DecodeError = AiError.MalformedOutput | AiError.StreamErrorEvent | AiError.ResponseFailed

/** @internal */
export interface LogEntry {
  readonly level: "Debug" | "Warning"
  readonly message: string
}

/** What the deltas of one output item delivered so far. */
interface Slot {
  readonly itemType: string
  readonly attributes: Part.Attributes
  callId: string
  name: string
  delivered: boolean
  readonly text: Array<string>
  readonly refusal: Array<string>
  readonly summary: Array<Array<string>>
  readonly reasoningText: Array<string>
  readonly args: Array<string>
}

const EMPTY: ReadonlyArray<never> = []

const makeSlot = (itemType: string, attributes: Part.Attributes, callId = "", name = ""): Slot => ({
  itemType,
  attributes,
  callId,
  name,
  delivered: false,
  text: [],
  refusal: [],
  summary: [],
  reasoningText: [],
  args: []
})

/** @internal */
export class Decoder {
  /** 0-based position of the current payload among all payloads fed. */
  private position = -1
  private responseId: string | undefined = undefined
  private open = false
  private sawFunctionCall = false
  private readonly slots = new Map<number, Slot>()
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
    let event: unknown
    try {
      event = JSON.parse(data)
    } catch (error) {
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
        return this.delta(event, type, data, out, "message", "text")
      case "response.function_call_arguments.delta":
        return this.delta(event, type, data, out, "function_call", "args")
      case "response.reasoning_summary_text.delta":
        return this.delta(event, type, data, out, "reasoning", "summary")
      case "response.reasoning_text.delta":
        return this.delta(event, type, data, out, "reasoning", "reasoningText")
      case "response.refusal.delta":
        return this.delta(event, type, data, out, "message", "refusal")
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
      case "response.content_part.added":
      case "response.content_part.done":
      case "response.output_text.done":
      case "response.output_text.annotation.added":
      case "response.refusal.done":
      case "response.function_call_arguments.done":
      case "response.reasoning_summary_part.added":
      case "response.reasoning_summary_part.done":
      case "response.reasoning_summary_text.done":
      case "response.reasoning_text.done":
        // Their content arrives again, whole, in `response.output_item.done`.
        return undefined
      default:
        this.logs.push({ level: "Debug", message: `skipped event ${type} at position ${position}` })
        return undefined
    }
  }

  /** Called when the input ends. */
  end(): DecodeError | undefined {
    if (this.open || this.responseId === undefined) {
      return new AiError.MalformedOutput({
        description: "stream ended without a terminal event",
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
    this.sawFunctionCall = false
    this.slots.clear()
    out.push(new StreamPart.ResponseStarted({ responseId: id, model: stringField(response, "model") ?? "" }, true))
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
    const hasFunctionCall = this.sawFunctionCall || (output !== undefined && ResponsesOutput.hasFunctionCall(output))
    out.push(
      new StreamPart.ResponseFinished({
        responseId: this.responseId,
        status,
        finishReason: ResponsesOutput.finishReasonOf(status, incompleteReason, hasFunctionCall),
        ...(incompleteReason === undefined ? {} : { incompleteReason }),
        usage: ResponsesOutput.usageFromWire(response.usage)
      }, true)
    )
    this.open = false
    this.slots.clear()
    return undefined
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
    this.slots.set(
      outputIndex,
      makeSlot(
        item.type,
        ResponsesOutput.attributesOfItem(item),
        stringField(item, "call_id") ?? "",
        stringField(item, "name") ?? ""
      )
    )
    return undefined
  }

  private delta(
    event: JsonObject,
    type: string,
    data: string,
    out: Array<StreamPart.StreamPart>,
    itemType: string,
    field: "text" | "args" | "summary" | "reasoningText" | "refusal"
  ): DecodeError | undefined {
    const outputIndex = numberField(event, "output_index")
    const delta = event.delta
    if (outputIndex === undefined || typeof delta !== "string") {
      return this.malformed(type, data, "missing output_index or a string delta")
    }
    if (!this.open || this.responseId === undefined) return this.outside(type, data)
    let slot = this.slots.get(outputIndex)
    if (slot === undefined) {
      // A delta without `output_item.added`: track what it delivers all the same.
      const itemId = stringField(event, "item_id")
      slot = makeSlot(itemType, itemId === undefined ? {} : { itemId })
      this.slots.set(outputIndex, slot)
    }
    slot.delivered = true
    let part: Part.AssistantPart
    switch (field) {
      case "text": {
        slot.text.push(delta)
        part = new Part.TextPart({ text: delta, annotations: EMPTY, attributes: slot.attributes }, true)
        break
      }
      case "refusal": {
        slot.refusal.push(delta)
        part = new Part.RefusalPart({ text: delta, attributes: slot.attributes }, true)
        break
      }
      case "args": {
        slot.args.push(delta)
        part = new Part.ToolCallPart({
          callId: slot.callId,
          name: slot.name,
          arguments: delta,
          attributes: slot.attributes
        }, true)
        break
      }
      case "reasoningText": {
        slot.reasoningText.push(delta)
        part = new Part.ReasoningPart({ summary: EMPTY, text: delta, attributes: slot.attributes }, true)
        break
      }
      case "summary": {
        const summaryIndex = numberField(event, "summary_index") ?? 0
        if (!Number.isInteger(summaryIndex) || summaryIndex < 0) {
          return this.malformed(type, data, "summary_index is not a non-negative integer")
        }
        while (slot.summary.length <= summaryIndex) slot.summary.push([])
        slot.summary[summaryIndex].push(delta)
        const summary = new Array<string>(summaryIndex + 1).fill("")
        summary[summaryIndex] = delta
        part = new Part.ReasoningPart({ summary, attributes: slot.attributes }, true)
        break
      }
    }
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
    const item = event.item
    if (outputIndex === undefined) return this.malformed(type, data, "missing output_index")
    if (!this.open || this.responseId === undefined) return this.outside(type, data)
    const decoded = ResponsesOutput.decodeOutputItem(item)
    if (Either.isLeft(decoded)) {
      return new AiError.MalformedOutput({
        description: decoded.left.description,
        eventType: type,
        position: this.position,
        excerpt: AiError.excerpt(data)
      })
    }
    const part = decoded.right
    if (part.type === "tool_call") this.sawFunctionCall = true
    const slot = this.slots.get(outputIndex)
    this.slots.delete(outputIndex)
    if (slot === undefined || !slot.delivered) {
      out.push(new StreamPart.PartUpdate({ responseId: this.responseId, outputIndex, partial: false, part }, true))
      return undefined
    }
    let completing = emptied(part, slot)
    if (completing === undefined) {
      this.logs.push({
        level: "Warning",
        message: `output item ${outputIndex} of response ${this.responseId}: the ${part.type} part of ` +
          `response.output_item.done (position ${this.position}) does not extend what its deltas delivered; ` +
          `the whole item snapshot is sent`
      })
      completing = part
    }
    out.push(
      new StreamPart.PartUpdate({ responseId: this.responseId, outputIndex, partial: false, part: completing }, true)
    )
    return undefined
  }
}

/** `snapshot` minus the `delivered` prefix, or `undefined` when `snapshot` does not start with it. */
const remainder = (snapshot: string, delivered: ReadonlyArray<string>): string | undefined => {
  if (delivered.length === 0) return snapshot
  const prefix = delivered.length === 1 ? delivered[0] : delivered.join("")
  return snapshot.startsWith(prefix) ? snapshot.slice(prefix.length) : undefined
}

const isEmpty = (chunks: ReadonlyArray<string>): boolean => chunks.every((chunk) => chunk === "")

/**
 * The completing part: the done item's part emptied of what the deltas delivered, or `undefined` when the
 * snapshot does not extend the deltas (then the snapshot replaces the slot).
 */
const emptied = (part: Part.AssistantPart, slot: Slot): Part.AssistantPart | undefined => {
  const summaryEmpty = slot.summary.every(isEmpty)
  switch (part.type) {
    case "text": {
      if (!isEmpty(slot.refusal) || !isEmpty(slot.args) || !summaryEmpty || !isEmpty(slot.reasoningText)) {
        return undefined
      }
      const text = remainder(part.text, slot.text)
      return text === undefined ? undefined : new Part.TextPart({ ...part, text }, true)
    }
    case "refusal": {
      if (!isEmpty(slot.text) || !isEmpty(slot.args) || !summaryEmpty || !isEmpty(slot.reasoningText)) {
        return undefined
      }
      const text = remainder(part.text, slot.refusal)
      return text === undefined ? undefined : new Part.RefusalPart({ ...part, text }, true)
    }
    case "tool_call": {
      if (!isEmpty(slot.text) || !isEmpty(slot.refusal) || !summaryEmpty || !isEmpty(slot.reasoningText)) {
        return undefined
      }
      const args = remainder(part.arguments, slot.args)
      return args === undefined ? undefined : new Part.ToolCallPart({ ...part, arguments: args }, true)
    }
    case "reasoning": {
      if (!isEmpty(slot.text) || !isEmpty(slot.refusal) || !isEmpty(slot.args)) return undefined
      if (slot.summary.length > part.summary.length && !slot.summary.slice(part.summary.length).every(isEmpty)) {
        return undefined
      }
      const summary: Array<string> = []
      for (let index = 0; index < part.summary.length; index++) {
        const rest = remainder(part.summary[index], slot.summary[index] ?? EMPTY)
        if (rest === undefined) return undefined
        summary.push(rest)
      }
      let text = part.text
      if (!isEmpty(slot.reasoningText)) {
        if (part.text === undefined) return undefined
        text = remainder(part.text, slot.reasoningText)
        if (text === undefined) return undefined
      }
      return new Part.ReasoningPart({
        summary,
        ...(text === undefined ? {} : { text }),
        ...(part.payload === undefined ? {} : { payload: part.payload }),
        attributes: part.attributes
      }, true)
    }
    case "media":
    case "unknown":
      return undefined
  }
}
