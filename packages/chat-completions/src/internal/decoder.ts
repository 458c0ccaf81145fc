/**
 * The chunk state machine of the Chat Completions streaming decoder: one `data:` payload (a
 * `chat.completion.chunk`, `[DONE]`, or an error object) in, zero or more `StreamPart`s out. Synchronous
 * and allocation-light; the channel in `ChatCompletionsStream` drives it one chunk of payloads at a time.
 * The conventions it follows are documented on `ChatCompletionsStream`.
 *
 * @internal
 */
import { AiError, type ModelResponse, type Part, type StreamPart, UnsafePart } from "@effect-responses/core"
import * as Framing from "@effect-responses/wire/Framing"
import { arrayField, isObject, type JsonObject, numberField, objectField, stringField } from "@effect-responses/wire/Json"
import * as ChatCompletionsOutput from "../ChatCompletionsOutput.js"
import { ChunkTemplate, learn, plainDelta } from "./chunkTemplate.js"
import { CitationMarkers } from "./citationMarkers.js"
import { contentParts, ignoredWarning, jsonTypeOf } from "./content.js"
import { errorFields } from "./errorObject.js"

/** @internal */
export type DecodeError = AiError.MalformedOutput | AiError.StreamErrorEvent | AiError.TruncatedStream

/** @internal */
export type LogEntry = Framing.LogEntry

type SlotKind = "reasoning" | "text" | "refusal" | "tool_call"

/** One output index: what kind of part it holds and, for tool calls, the call id and name known so far. */
interface Slot {
  readonly kind: SlotKind
  readonly outputIndex: number
  callId: string
  name: string
  /** Whether the call id is a synthetic one (`ChatCompletionsOutput.syntheticCallId`), to be replaced by a real one. */
  syntheticId: boolean
  /** The call's `extra_content` (Gemini's thought signature), once it came. */
  payload: Part.OpaquePayload | undefined
  readonly annotations: Array<Part.Annotation>
  /** For a tool call: the position and data of the chunk that opened it (a call never named is refused there). */
  opened?: { readonly position: number; readonly data: string } | undefined
  /**
   * For a tool call whose fragments carry no `index`: its arguments so far, to tell a fragment naming the next
   * call from one of this call (`toolCall`); `undefined` for a call under an `index` (not kept: not needed).
   */
  args: string | undefined
}

const EMPTY: ReadonlyArray<never> = []
const IN_PROGRESS: Part.Attributes = { status: "in_progress" }

/**
 * The name of a tool call after a `function.name` fragment: servers send it whole in the first fragment
 * (OpenAI), repeated whole in every fragment, growing (each fragment the name so far), or split in pieces
 * (`edit_ex` + `isting_file`). A repeat is kept once, a longer name that starts with the known one replaces
 * it, anything else is appended.
 */
const joinName = (known: string, fragment: string): string =>
  fragment.startsWith(known) ? fragment : known + fragment

/** The payload an `event: ping` becomes (see `eventData`): the decoder skips it with a debug log. */
const PING = "{\"object\":\"sse.ping\"}"

/**
 * The payload of a named SSE event (`Framing.makeSseFramer`'s `eventData`): `event: ping` (old sse-starlette
 * servers' keep-alive, its data a timestamp) is skipped; `event: error` with data `{"message", "code"}` (or
 * a bare text) becomes the error chunk `{"error": …}`, which fails the stream (data that is already
 * `{"error": …}` is kept); any other name is ignored (its data read as usual).
 *
 * @internal
 */
export const eventData = (event: string, data: string): string => {
  if (event === "ping") return PING
  if (event !== "error") return data
  let json: unknown
  try {
    json = JSON.parse(data)
  } catch {
    json = undefined
  }
  if (isObject(json)) return json.error !== undefined && json.error !== null ? data : `{"error":${data}}`
  return JSON.stringify({ error: data.trim() === "" ? "the server sent an error event" : data })
}

/**
 * A line of a field the SSE rules do not know (`Framing.makeSseFramer`'s `fieldData`): only `error:` with a
 * JSON object as its value, as llama.cpp's server sent an error before its PR #16109 (2025-09:
 * `error: {"code":400,"message":"…","type":"invalid_request_error"}`, then `data: [DONE]`), becomes the
 * error chunk `{"error": …}`, which fails the stream; any other such line is ignored, as the rules say.
 *
 * @internal
 */
export const fieldData = (field: string, value: string): string | undefined => {
  if (field !== "error") return undefined
  let json: unknown
  try {
    json = JSON.parse(value)
  } catch {
    return undefined
  }
  if (!isObject(json)) return undefined
  return json.error !== undefined && json.error !== null ? value : `{"error":${value}}`
}

/** The SSE framer of Chat Completions streams: named events read by `eventData`, `error:` lines by `fieldData`. @internal */
export const makeSseFramer = (maxEventSize: number): Framing.Framer =>
  Framing.makeSseFramer(maxEventSize, eventData, fieldData)

/** `x_groq.usage` of a chunk, when it is an object. */
const groqUsage = (chunk: JsonObject): JsonObject | undefined => {
  const groq = objectField(chunk, "x_groq")
  return groq === undefined ? undefined : objectField(groq, "usage")
}

/** Whether `text` is one whole JSON value (a tool call's arguments complete). */
const isJson = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Templates learned that no chunk matched, after which a decoder learns no more (its server varies its chunks). */
const MAX_IDLE_TEMPLATES = 4

/** @internal */
export class Decoder {
  /**
   * `fast`: whether chunks written from a learned template are read without `JSON.parse`
   * (`internal/chunkTemplate`); off, every chunk is parsed (the tests compare both).
   */
  constructor(private readonly fast = true) {}

  /** 0-based position of the current payload among all payloads fed. */
  private position = -1
  private responseId: string | undefined = undefined
  /** The first non-empty chunk `id` of the open response (`""` while none came): what a new response differs by. */
  private chunkId = ""
  /** Whether a response is open (started, its `ResponseFinished` not yet written). */
  private open = false
  private finishReason: ModelResponse.FinishReason | undefined = undefined
  private usage: unknown = undefined
  /** Perplexity's `citations` (or `search_results`) of the open response, the last non-empty list. */
  private citations: ReadonlyArray<unknown> | undefined = undefined
  /** The `[n]` markers of the open response's text, where Perplexity's sources are cited. */
  private markers = new CitationMarkers()
  private nextIndex = 0
  private slots: Array<Slot> = []
  private reasoning: Slot | undefined = undefined
  private text: Slot | undefined = undefined
  private refusal: Slot | undefined = undefined
  /**
   * The text, reasoning or refusal slot whose last delta ended with a high surrogate, held back (`held`) for
   * the low half the slot's next delta starts with: a server slicing UTF-16 splits a pair across chunks
   * (`"\ud83d"`, then `"\ude00"`), and no delta may hold half a pair (a Python client cannot encode it).
   * Given as it is when another slot's delta or the end of the response comes first.
   */
  private holding: Slot | undefined = undefined
  private held = ""
  private readonly tools = new Map<number, Slot>()
  private skippedChoices = false
  /** The content part types already warned about (`content` as a list of parts). */
  private ignoredParts: Array<string> | undefined = undefined
  private logs: Array<LogEntry> = []
  /** The template of the last plain delta chunk parsed, for the fast path. */
  private template: ChunkTemplate | undefined = undefined
  /** Templates learned and dropped without a match (see `MAX_IDLE_TEMPLATES`). */
  private idleTemplates = 0
  /** How many chunks the fast path read (for the tests). */
  fastChunks = 0

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
    if (data === "[DONE]") {
      return this.open ? this.finish(out, "[DONE]") : undefined
    }
    const template = this.template
    if (template !== undefined && this.open && this.chunkId === template.id) {
      // the chunk as the template's: one delta of choice 0 in this response, as `JSON.parse` would read it; a
      // piece of arguments only for a call already under that index (else the parsed chunk starts the call)
      const call = template.kind === "tool_arguments" ? this.tools.get(template.index) : undefined
      const text = template.kind === "tool_arguments" && call === undefined ? undefined : template.match(data)
      if (text !== undefined) {
        this.fastChunks++
        if (text !== "") {
          if (call !== undefined) {
            if (this.holding !== undefined) this.giveHeld(out)
            if (call.args !== undefined) call.args += text
            this.push(out, call, UnsafePart.toolCallPart(call.callId, call.name, text, IN_PROGRESS))
          }
          else if (template.kind === "text") this.pushText(text, out)
          else this.pushReasoning(text, out)
        }
        return undefined
      }
    }
    let chunk: unknown
    try {
      chunk = JSON.parse(data)
    } catch (error) {
      if (data.trim() === "") return undefined
      return this.malformed(`invalid JSON chunk: ${error instanceof Error ? error.message : String(error)}`, data)
    }
    if (!isObject(chunk)) return this.malformed("the chunk is not a JSON object", data)
    const choices = arrayField(chunk, "choices")
    if (choices === undefined) {
      if (chunk.choices !== undefined && chunk.choices !== null && (chunk.error === undefined || chunk.error === null)) {
        return this.malformed(`choices is ${jsonTypeOf(chunk.choices)}, not a list`, data)
      }
      const error = chunk.error
      if (error !== undefined && error !== null) return this.errorChunk(error)
      if (data === PING) {
        this.logs.push({ level: "Debug", message: `skipped a keep-alive event (event: ping) at position ${position}` })
        return undefined
      }
      this.logs.push({ level: "Debug", message: `skipped a chunk without choices at position ${position}` })
      return undefined
    }
    let choice: JsonObject | undefined
    for (const c of choices) {
      if (isObject(c) && (numberField(c, "index") ?? 0) === 0) {
        choice = c
      } else if (!this.skippedChoices) {
        this.skippedChoices = true
        this.logs.push({ level: "Debug", message: "only choice 0 is decoded; other choices are skipped" })
      }
    }
    const id = stringField(chunk, "id") ?? ""
    if (choice !== undefined && this.open && this.finishReason !== undefined && id !== "" && id !== this.chunkId) {
      // A choice after the finish reason under another id: the next response of a capture holding several.
      // Under the same id, or none, it is the same response's (a usage chunk with a choice: OpenRouter,
      // LiteLLM; Azure's asynchronous content filter results, whose id is "").
      const error = this.finish(out, "a new response")
      if (error !== undefined) return error
    }
    if (!this.open) {
      if (choice === undefined && id === "" && (chunk.error === undefined || chunk.error === null)) {
        // Azure's first chunk: empty id and model, `choices: []`, `prompt_filter_results`.
        this.logs.push({ level: "Debug", message: `skipped a chunk with no id and no choice at position ${position}` })
        return undefined
      }
      this.start(id, stringField(chunk, "model") ?? "", out)
    }
    if (this.chunkId === "") this.chunkId = id
    // Groq's streams of 2024 carried the usage only in `x_groq.usage` (vercel/ai#1651): read when `usage` is not there.
    const usage = isObject(chunk.usage) ? chunk.usage : groqUsage(chunk)
    if (usage !== undefined) this.usage = usage
    // Perplexity: the sources of the answer as top-level `citations` (URLs) or `search_results` ({title, url})
    const citations = arrayField(chunk, "citations") ?? arrayField(chunk, "search_results")
    if (citations !== undefined && citations.length > 0) this.citations = citations
    const delta = choice === undefined ? undefined : objectField(choice, "delta")
    if (delta !== undefined) {
      const error = this.delta(delta, data, out)
      if (error !== undefined) return error
    }
    // An error inside an HTTP 200 stream (OpenRouter: `choices: []` or a `finish_reason: "error"` choice,
    // with an `error` object): the stream fails after the parts that arrived.
    const streamError = chunk.error
    if (streamError !== undefined && streamError !== null) return this.errorChunk(streamError)
    if (choice === undefined) return undefined
    const finishReason = choice.finish_reason
    if (finishReason === "error" && this.finishReason === undefined) {
      // the error object inside the choice (`choices[0].error`), or none: a failed answer all the same
      const choiceError = choice.error
      if (choiceError !== undefined && choiceError !== null) return this.errorChunk(choiceError)
      return new AiError.StreamErrorEvent({
        description: "the server ended the answer with finish_reason \"error\" and no error object",
        sequenceNumber: this.position
      })
    }
    // `""` is no finish reason (old Ollama sent `"finish_reason": ""` on every chunk, ollama/ollama#4357)
    if (finishReason !== null && finishReason !== undefined && finishReason !== "" && this.finishReason === undefined) {
      // The completing parts wait for the end of the response (`finish`): chunks of the same response may
      // still come after the finish reason (usage, annotations, content filter results).
      this.finishReason = ChatCompletionsOutput.finishReasonFromWire(finishReason)
    }
    if (this.fast && this.idleTemplates < MAX_IDLE_TEMPLATES && this.chunkId === id) this.learn(data, chunk)
    return undefined
  }

  /** Learns the template of a plain delta chunk that the fast path did not read (see `internal/chunkTemplate`). */
  private learn(data: string, chunk: JsonObject): void {
    const plain = plainDelta(chunk)
    if (plain === undefined) return
    const template = learn(data, plain)
    if (this.template !== undefined && this.template.hits === 0) this.idleTemplates++
    if (template === undefined) this.idleTemplates++
    this.template = template
  }

  /** Called when the input ends; pushes the last elements onto `out`. */
  end(out: Array<StreamPart.StreamPart>): DecodeError | undefined {
    if (this.responseId === undefined) {
      return new AiError.TruncatedStream({ description: "stream ended before any chunk", position: this.position + 1 })
    }
    if (!this.open) return undefined
    if (this.finishReason === undefined) {
      return new AiError.TruncatedStream({
        description: "stream ended without a finish_reason or [DONE]",
        responseId: this.responseId,
        position: this.position + 1
      })
    }
    return this.finish(out, "the end of the stream")
  }

  private malformed(description: string, data: string): AiError.MalformedOutput {
    return new AiError.MalformedOutput({
      description,
      eventType: "chat.completion.chunk",
      position: this.position,
      excerpt: AiError.excerpt(data)
    })
  }

  private errorChunk(error: unknown): DecodeError {
    // `{"error":{"message","type","code","param"}}` mid-stream (vLLM, OpenRouter…), or `{"error":"text"}`.
    const { code, description, param } = errorFields(error)
    return new AiError.StreamErrorEvent({
      description: description ?? "error chunk",
      ...(code === undefined ? {} : { code }),
      ...(param === undefined ? {} : { param }),
      sequenceNumber: this.position
    })
  }

  private start(id: string, model: string, out: Array<StreamPart.StreamPart>): void {
    this.responseId = id
    this.chunkId = ""
    this.open = true
    this.finishReason = undefined
    this.usage = undefined
    this.citations = undefined
    this.markers = new CitationMarkers()
    this.nextIndex = 0
    this.slots = []
    this.reasoning = undefined
    this.text = undefined
    this.refusal = undefined
    this.holding = undefined
    this.held = ""
    this.tools.clear()
    out.push(UnsafePart.responseStarted(id, model))
  }

  private slot(kind: SlotKind, callId = "", name = "", syntheticId = false): Slot {
    const slot: Slot = {
      kind,
      outputIndex: this.nextIndex++,
      callId,
      name,
      syntheticId,
      payload: undefined,
      annotations: [],
      args: undefined
    }
    this.slots.push(slot)
    return slot
  }

  /**
   * The delta path: one part and one update per delta, built without the class constructors (`FastParts`,
   * as the Responses decoder does): the constructors were about an eighth of the gateway's CPU time on the
   * 5,000-delta benchmark stream; decoding that stream (16 KiB pieces of text) went from 22 to 13 ms (p10).
   */
  private push(out: Array<StreamPart.StreamPart>, slot: Slot, part: Part.AssistantPart): void {
    out.push(UnsafePart.partUpdate(this.responseId!, slot.outputIndex, true, part))
  }

  private delta(delta: JsonObject, data: string, out: Array<StreamPart.StreamPart>): DecodeError | undefined {
    const reasoning = ChatCompletionsOutput.reasoningTextOf(delta)
    if (reasoning !== undefined && reasoning !== "") this.pushReasoning(reasoning, out)
    const content = delta.content
    if (typeof content === "string") {
      if (content !== "") this.pushText(content, out)
    } else if (Array.isArray(content)) {
      this.contentParts(content, out)
    } else if (content !== undefined && content !== null) {
      return this.malformed(`choices[0].delta.content is ${jsonTypeOf(content)}, not a string, a list of parts or null`, data)
    }
    const annotations = arrayField(delta, "annotations")
    if (annotations !== undefined && annotations.length > 0) {
      const slot = this.text ??= this.slot("text")
      for (const annotation of annotations) slot.annotations.push(ChatCompletionsOutput.annotationFromWire(annotation))
    }
    const refusal = delta.refusal
    if (typeof refusal === "string" && refusal !== "") {
      const slot = this.refusal ??= this.slot("refusal")
      const whole = this.whole(slot, refusal, out)
      if (whole !== "") this.push(out, slot, UnsafePart.refusalPart(whole, IN_PROGRESS))
    }
    const toolCalls = arrayField(delta, "tool_calls") ??
      (isObject(delta.function_call) ? [{ index: 0, function: delta.function_call }] : undefined)
    if (toolCalls !== undefined) {
      for (let i = 0; i < toolCalls.length; i++) {
        const error = this.toolCall(toolCalls[i], i, data, out)
        if (error !== undefined) return error
      }
    }
    return undefined
  }

  private pushReasoning(text: string, out: Array<StreamPart.StreamPart>): void {
    const slot = this.reasoning ??= this.slot("reasoning")
    const whole = this.whole(slot, text, out)
    if (whole !== "") this.push(out, slot, UnsafePart.reasoningTextPart(whole, IN_PROGRESS))
  }

  /**
   * A delta's text with the high surrogate held from the slot's last delta before it (another slot's held
   * one is given first), less a high surrogate ending it (then held): one `charCodeAt` per delta.
   */
  private whole(slot: Slot, text: string, out: Array<StreamPart.StreamPart>): string {
    if (this.holding !== undefined) {
      if (this.holding === slot) {
        text = this.held + text
        this.holding = undefined
        this.held = ""
      } else {
        this.giveHeld(out)
      }
    }
    const last = text.charCodeAt(text.length - 1)
    if (last >= 0xd800 && last <= 0xdbff) {
      this.holding = slot
      this.held = text.slice(-1)
      return text.slice(0, -1)
    }
    return text
  }

  /** The held high surrogate (`holding`), no low half having followed, as a delta of its own. */
  private giveHeld(out: Array<StreamPart.StreamPart>): void {
    const slot = this.holding!
    const held = this.held
    this.holding = undefined
    this.held = ""
    if (slot.kind === "text") this.markers.push(held)
    this.push(
      out,
      slot,
      slot.kind === "text"
        ? UnsafePart.textDelta(held, IN_PROGRESS)
        : slot.kind === "reasoning"
        ? UnsafePart.reasoningTextPart(held, IN_PROGRESS)
        : UnsafePart.refusalPart(held, IN_PROGRESS)
    )
  }

  private pushText(text: string, out: Array<StreamPart.StreamPart>): void {
    const slot = this.text ??= this.slot("text")
    const whole = this.whole(slot, text, out)
    if (whole === "") return
    this.markers.push(whole)
    this.push(out, slot, UnsafePart.textDelta(whole, IN_PROGRESS))
  }

  /** `delta.content` as a list of parts (Mistral's Magistral): `thinking` parts are reasoning, `text` parts text. */
  private contentParts(parts: ReadonlyArray<unknown>, out: Array<StreamPart.StreamPart>): void {
    const { ignored, reasoning, text } = contentParts(parts)
    if (reasoning !== "") this.pushReasoning(reasoning, out)
    if (text !== "") this.pushText(text, out)
    for (const type of ignored) {
      const warned = this.ignoredParts ??= []
      if (warned.includes(type)) continue
      warned.push(type)
      this.logs.push({ level: "Warning", message: `${ignoredWarning(type)} at position ${this.position}` })
    }
  }

  private toolCall(
    call: unknown,
    position: number,
    data: string,
    out: Array<StreamPart.StreamPart>
  ): DecodeError | undefined {
    if (!isObject(call)) return this.malformed("a tool_calls entry is not an object", data)
    if (this.holding !== undefined) this.giveHeld(out)
    const given = numberField(call, "index")
    const index = given ?? position
    const fn = objectField(call, "function")
    const id = stringField(call, "id") ?? ""
    const name = (fn && stringField(fn, "name")) ?? ""
    const args = fn === undefined ? undefined : fn.arguments
    if (args !== undefined && args !== null && typeof args !== "string") {
      return this.malformed("tool call arguments are not a string", data)
    }
    let slot = this.tools.get(index)
    let fresh = false
    let grown = false
    if (slot !== undefined && id !== "" && !slot.syntheticId && slot.callId !== id) {
      // A new call id under an index already used: servers that number every call 0 (or none).
      this.logs.push({
        level: "Debug",
        message: `tool call ${id} reuses index ${index} at position ${this.position}; treated as a new call`
      })
      slot = undefined
    } else if (
      slot !== undefined && given === undefined && id === "" && name !== "" && slot.name !== "" &&
      slot.args !== undefined && isJson(slot.args)
    ) {
      // Neither id nor index, a name, and the call under that position complete (named, its arguments a whole
      // JSON value): the next call, not more of this one (a server writing each whole call in a chunk of its
      // own without numbering them; glued, the two calls' arguments were `{"command":"ls"}{"command":"pwd"}`).
      this.logs.push({
        level: "Debug",
        message: `tool call without id or index naming ${name} after the complete call ${slot.callId} at position ${this.position}; treated as a new call`
      })
      slot = undefined
    }
    if (slot === undefined) {
      fresh = true
      const synthetic = id === ""
      slot = this.slot("tool_call", synthetic ? ChatCompletionsOutput.syntheticCallId() : id, name, synthetic)
      slot.opened = { position: this.position, data }
      if (given === undefined) slot.args = ""
      this.tools.set(index, slot)
    } else {
      if (id !== "" && slot.syntheticId) {
        slot.callId = id
        slot.syntheticId = false
      }
      if (name !== "") {
        const before = slot.name
        slot.name = joinName(before, name)
        // a name in pieces (`get_`, then `weather`): the grown name goes out at once, so that a consumer
        // waiting for the whole name before writing the call (the gateway) has it before another call's parts
        grown = slot.name !== before
      }
    }
    const text = typeof args === "string" ? args : ""
    if (slot.args !== undefined) slot.args += text
    // `extra_content` (Gemini: the thought signature) goes on the update of the chunk it came in, so that a
    // consumer writing the call as it streams (the gateway) has it from then on, and on the completing part
    const payload = ChatCompletionsOutput.extraContentOf(call)
    if (payload !== undefined) {
      slot.payload = payload
      this.push(out, slot, UnsafePart.toolCallPart(slot.callId, slot.name, text, IN_PROGRESS, undefined, payload))
    } else if (fresh || grown || text !== "") {
      this.push(out, slot, UnsafePart.toolCallPart(slot.callId, slot.name, text, IN_PROGRESS))
    }
    return undefined
  }

  /** The response ends: every slot gets its completing part, in output index order. */
  private complete(finishReason: ModelResponse.FinishReason, out: Array<StreamPart.StreamPart>): void {
    const attributes: Part.Attributes = { status: ChatCompletionsOutput.statusOf(finishReason) }
    const responseId = this.responseId!
    // a high surrogate no low half followed: the text's last character, as it came
    if (this.holding !== undefined) this.giveHeld(out)
    for (const slot of this.slots) {
      let part: Part.AssistantPart
      switch (slot.kind) {
        case "reasoning":
          part = UnsafePart.reasoningPart(EMPTY, "", undefined, attributes)
          break
        case "text":
          if (this.citations !== undefined) {
            slot.annotations.push(...this.markers.annotations(this.citations, ChatCompletionsOutput.sourceCitation))
          }
          part = UnsafePart.textPart("", slot.annotations, attributes)
          break
        case "refusal":
          part = UnsafePart.refusalPart("", attributes)
          break
        case "tool_call":
          part = UnsafePart.toolCallPart(slot.callId, slot.name, "", attributes, undefined, slot.payload)
          break
      }
      out.push(UnsafePart.partUpdate(responseId, slot.outputIndex, false, part))
    }
  }

  private finish(out: Array<StreamPart.StreamPart>, why: string): DecodeError | undefined {
    // a tool call that never got a name is malformed output (OpenAI always names a call, and the whole
    // completion's decoder refuses one without `function.name`): no client can look a tool "" up
    for (const slot of this.slots) {
      if (slot.kind === "tool_call" && slot.name === "") {
        return new AiError.MalformedOutput({
          description: `tool call ${slot.callId} has no function.name (its chunk, and any after it, named no function)`,
          eventType: "chat.completion.chunk",
          position: slot.opened?.position ?? this.position,
          excerpt: AiError.excerpt(slot.opened?.data ?? "")
        })
      }
    }
    if (this.finishReason === undefined) {
      this.logs.push({
        level: "Warning",
        message: `response ${this.responseId} reached ${why} without a finish_reason; finished as "other"`
      })
    }
    const wire = this.finishReason ?? "other"
    const finishReason = wire === "stop" && this.tools.size > 0 ? "tool_calls" : wire
    this.finishReason = finishReason
    this.complete(finishReason, out)
    const incompleteReason = ChatCompletionsOutput.incompleteReasonOf(finishReason)
    out.push(UnsafePart.responseFinished(
      this.responseId!,
      ChatCompletionsOutput.statusOf(finishReason),
      finishReason,
      incompleteReason,
      ChatCompletionsOutput.usageFromWire(this.usage)
    ))
    this.open = false
    return undefined
  }
}
