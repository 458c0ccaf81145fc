/**
 * The fold of a model stream into whole responses: `StreamPart`s in, one `ModelResponse`
 * per response of the stream out, each holding the assistant message its part updates describe.
 *
 * Rules:
 *
 * 1. part updates are grouped by `responseId`, responses kept in first-seen order;
 * 2. within a response there is one slot per `outputIndex`, and per `contentIndex` within it (the content
 *    parts of a message, absent meaning 0); the result lists slots by output index, then content index;
 * 3. a partial part (a delta) of the slot's type is merged into the slot: its text, refusal text, reasoning
 *    text, reasoning summary entries (element-wise), tool call arguments or custom tool call input are
 *    appended, its attributes
 *    merged over the slot's (newest defined field wins), its payload taken only when present, its
 *    annotations appended; a partial part of another type, or for an empty slot, starts the slot afresh;
 * 4. a complete part (`partial: false`) for a slot that deltas have been filling, of the same type, is the
 *    completing part of `response.output_item.done`, emptied of what the deltas delivered: it is merged by
 *    the same rule (what it still brings is appended, its attributes, payload and annotations taken);
 *    any other complete part replaces its slot, and so does a complete part marked `replace: true` (a
 *    snapshot that contradicts the deltas: the snapshot wins) and a complete media, unknown or other
 *    delta-less part (shell, apply_patch, local_shell calls, MCP approval requests, tool search items: the
 *    item itself after its progress previews); a `replace: true` part's attributes are still merged over
 *    the slot's, so an attribute only the earlier updates carried (a phase) is kept, and the slots of the
 *    same item's later content parts are dropped (a replacing snapshot of a message comes as one update per
 *    content part, in order: the first replaces the whole item);
 * 4b. partial media and unknown parts are previews (hosted-tool progress, partial images): the newest
 *    stands for the item, except that a media preview without content (a status update) keeps the image
 *    of the preview before it;
 * 5. a response that never got a `response_finished` (a stream cut short) is still listed, with status
 *    `"in_progress"`, finish reason `"other"` and `Usage.empty`.
 *
 * The fold is pure and persistent: `step` never changes the state it is given, so a state may be kept,
 * shared or stepped twice (`Stream.scan` gives valid snapshots). It is linear in the number of deltas:
 * text arrives as chunks in a persistent list, every 64 deltas compacted into one chunk, and is joined in
 * `done`.
 *
 * @since 0.1.0
 */
import { Part, StreamPart, UnsafeMessage, UnsafePart, Usage } from "@effect-responses/core"
import type { ModelResponse } from "@effect-responses/core"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const StateTypeId: unique symbol = Symbol.for("@effect-responses/aggregate/MessageAggregator/State")

/**
 * @since 0.1.0
 * @category type ids
 */
export type StateTypeId = typeof StateTypeId

/**
 * The state of the fold: opaque, immutable. Build it with `empty`, advance it with `step`, read it with
 * `done` (which may be called at any point, e.g. for a live view).
 *
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly [StateTypeId]: StateTypeId
}

/**
 * What `aggregateSettled` gives: the responses aggregated from every element the stream delivered, and
 * the stream's failure when it failed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settled<E> {
  readonly responses: ReadonlyArray<ModelResponse.ModelResponse>
  readonly failure: Option.Option<E>
}

// ---------------------------------------------------------------------------------------------------------
// internal representation
// ---------------------------------------------------------------------------------------------------------

/**
 * Text chunks, newest first: appending is O(1) and never touches older states. `fresh` counts the newest
 * chunks that are deltas as received (not compacted yet).
 */
interface Chunks {
  readonly head: string
  readonly tail: Chunks | undefined
  readonly fresh: number
}

/**
 * Every `COMPACT_AFTER` deltas, the newest ones are joined into one chunk: a list node and a string header
 * per delta cost several times the few characters of a delta, and the held memory then stays about the
 * size of the text (peak live heap of the 5 MB benchmark stream: packages/bench/RESULTS.md, run of 2026-11-29 19:25).
 * Each delta is copied once more, so appending stays linear.
 */
const COMPACT_AFTER = 64

const appendChunk = (chunks: Chunks | undefined, text: string): Chunks | undefined => {
  if (text.length === 0) return chunks
  const fresh = chunks === undefined ? 1 : chunks.fresh + 1
  if (fresh < COMPACT_AFTER || chunks === undefined) return { head: text, tail: chunks, fresh }
  const parts = new Array<string>(fresh)
  parts[fresh - 1] = text
  let rest: Chunks | undefined = chunks
  for (let i = fresh - 2; i >= 0 && rest !== undefined; i--) {
    parts[i] = rest.head
    rest = rest.tail
  }
  return { head: parts.join(""), tail: rest, fresh: 0 }
}

const joinChunks = (chunks: Chunks | undefined): string => {
  if (chunks === undefined) return ""
  if (chunks.tail === undefined) return chunks.head
  const parts: Array<string> = []
  for (let c: Chunks | undefined = chunks; c !== undefined; c = c.tail) parts.push(c.head)
  parts.reverse()
  return parts.join("")
}

interface Slot {
  /** The newest part of the slot, for its type and the fields that are not merged (media, unknown items). */
  readonly last: Part.AssistantPart
  /** Whether the slot was last filled by deltas, so that a complete part of its type completes it. */
  readonly open: boolean
  readonly attributes: Part.Attributes
  /** Text, refusal text, reasoning text or tool call arguments, by type. */
  readonly text: Chunks | undefined
  /** Whether a reasoning part ever carried `text` (it is optional there). */
  readonly hasText: boolean
  readonly summary: ReadonlyArray<Chunks | undefined>
  readonly annotations: ReadonlyArray<Part.Annotation>
  readonly payload: Part.OpaquePayload | undefined
  readonly callId: string
  readonly name: string
}

interface ResponseState {
  readonly id: string
  readonly model: string
  readonly finished: StreamPart.ResponseFinished | undefined
  /** By `slotKey`: ordered as the parts are. */
  readonly slots: HashMap.HashMap<number, Slot>
}

/** Content indices per output index in `slotKey`: `StreamPart.MAX_CONTENT_INDEX + 1`. */
const CONTENT_SLOTS = StreamPart.MAX_CONTENT_INDEX + 1

/**
 * The key of the slot of `(outputIndex, contentIndex)`, which sorts by output index, then content index
 * (an absent content index is 0; one above `StreamPart.MAX_CONTENT_INDEX` shares the last slot).
 */
const slotKey = (update: StreamPart.PartUpdate): number => {
  const contentIndex = update.contentIndex
  return update.outputIndex * CONTENT_SLOTS +
    (contentIndex === undefined || !(contentIndex > 0) ? 0 : Math.min(contentIndex, StreamPart.MAX_CONTENT_INDEX))
}

/**
 * The slot the last part update went to, kept out of the maps: deltas come in runs on one slot, and a run
 * then costs one small allocation per delta instead of two persistent map updates. It overrides the slot
 * the maps hold for the same response and key (`slotKey`).
 */
interface Hot {
  readonly responseId: string
  readonly key: number
  readonly slot: Slot
}

class StateImpl implements State {
  declare readonly [StateTypeId]: StateTypeId
  constructor(
    readonly order: ReadonlyArray<string>,
    readonly responses: HashMap.HashMap<string, ResponseState>,
    readonly hot: Hot | undefined
  ) {}
}
Object.defineProperty(StateImpl.prototype, StateTypeId, { value: StateTypeId })

const makeState = (
  order: ReadonlyArray<string>,
  responses: HashMap.HashMap<string, ResponseState>,
  hot: Hot | undefined
): StateImpl => new StateImpl(order, responses, hot)

/** The responses with the hot slot written back. */
const flush = (state: StateImpl): HashMap.HashMap<string, ResponseState> => {
  const hot = state.hot
  if (hot === undefined) return state.responses
  const response = HashMap.unsafeGet(state.responses, hot.responseId)
  return HashMap.set(state.responses, hot.responseId, {
    ...response,
    slots: HashMap.set(response.slots, hot.key, hot.slot)
  })
}

const impl = (state: State): StateImpl => state as StateImpl

const noAnnotations: ReadonlyArray<Part.Annotation> = []
const noSummary: ReadonlyArray<Chunks | undefined> = []

const emptySlot = (part: Part.AssistantPart): Slot => ({
  last: part,
  open: false,
  attributes: {},
  text: undefined,
  hasText: false,
  summary: noSummary,
  annotations: noAnnotations,
  payload: undefined,
  callId: "",
  name: ""
})

const mergeAttributes = (self: Part.Attributes, that: Part.Attributes): Part.Attributes => {
  if (
    (that.itemId === undefined || that.itemId === self.itemId) &&
    (that.status === undefined || that.status === self.status) &&
    (that.phase === undefined || that.phase === self.phase)
  ) return self
  return {
    ...self,
    ...(that.itemId === undefined ? {} : { itemId: that.itemId }),
    ...(that.status === undefined ? {} : { status: that.status }),
    ...(that.phase === undefined ? {} : { phase: that.phase })
  }
}

const appendSummary = (
  self: ReadonlyArray<Chunks | undefined>,
  that: ReadonlyArray<string>
): ReadonlyArray<Chunks | undefined> => {
  if (that.length === 0) return self
  const out = self.slice()
  for (let i = 0; i < that.length; i++) out[i] = appendChunk(out[i], that[i]!)
  return out
}

/**
 * Appends annotations, skipping those already held: a decoder may deliver an annotation as a delta and list
 * it again on the completing part, or list only the new ones; both give each annotation once.
 */
const appendAnnotations = (
  self: ReadonlyArray<Part.Annotation>,
  that: ReadonlyArray<Part.Annotation>
): ReadonlyArray<Part.Annotation> => {
  if (that.length === 0) return self
  if (self.length === 0) return that
  const seen = new Set(self.map((annotation) => JSON.stringify(annotation)))
  const out = self.slice()
  for (const annotation of that) {
    const key = JSON.stringify(annotation)
    if (!seen.has(key)) {
      seen.add(key)
      out.push(annotation)
    }
  }
  return out
}

/**
 * Merges `part` (of the slot's type) into `slot`. Slots are written out field by field rather than spread:
 * on the delta path, object spread costs several times a plain literal.
 */
const merge = (slot: Slot, part: Part.AssistantPart, open: boolean): Slot => {
  const attributes = mergeAttributes(slot.attributes, part.attributes)
  switch (part.type) {
    case "text":
    case "refusal":
      return {
        last: part,
        open,
        attributes,
        text: appendChunk(slot.text, part.text),
        hasText: false,
        summary: noSummary,
        annotations: part.type === "text" ? appendAnnotations(slot.annotations, part.annotations) : noAnnotations,
        payload: undefined,
        callId: "",
        name: ""
      }
    case "reasoning":
      return {
        last: part,
        open,
        attributes,
        text: part.text === undefined ? slot.text : appendChunk(slot.text, part.text),
        hasText: slot.hasText || part.text !== undefined,
        summary: appendSummary(slot.summary, part.summary),
        annotations: noAnnotations,
        payload: part.payload ?? slot.payload,
        callId: "",
        name: ""
      }
    case "tool_call":
    case "custom_tool_call":
      return {
        last: part,
        open,
        attributes,
        text: appendChunk(slot.text, part.type === "tool_call" ? part.arguments : part.input),
        hasText: false,
        summary: noSummary,
        annotations: noAnnotations,
        payload: part.payload ?? slot.payload,
        callId: part.callId === "" ? slot.callId : part.callId,
        name: part.name === "" ? slot.name : part.name
      }
    case "media": {
      // Nothing to append: the newest preview stands for the whole item (a partial image is a whole image);
      // a status update without content keeps the image already shown.
      const previous = slot.last
      const keep = part.data === undefined && part.url === undefined && part.fileId === undefined &&
        previous.type === "media" &&
        (previous.data !== undefined || previous.url !== undefined || previous.fileId !== undefined)
      return { ...emptySlot(keep ? previous : part), open, attributes }
    }
    default:
      return { ...emptySlot(part), open, attributes }
  }
}

/** Whether deltas of this part's type are merged (rule 3); other parts replace their slot when complete. */
const hasDeltas = (part: Part.AssistantPart): boolean => {
  switch (part.type) {
    case "text":
    case "refusal":
    case "reasoning":
    case "tool_call":
    case "custom_tool_call":
      return true
    default:
      return false
  }
}

const updateSlot = (slot: Slot | undefined, update: StreamPart.PartUpdate): Slot => {
  const part = update.part
  const sameType = slot !== undefined && slot.last.type === part.type
  if (update.partial) {
    return merge(sameType ? slot : emptySlot(part), part, true)
  }
  if (update.replace === true && sameType) {
    // the snapshot's content wins; attributes it leaves out (e.g. a phase given only at output_item.added) stay
    return merge({ ...emptySlot(part), attributes: slot.attributes }, part, false)
  }
  if (update.replace === true || !hasDeltas(part)) {
    return merge(emptySlot(part), part, false)
  }
  return merge(sameType && slot.open ? slot : emptySlot(part), part, false)
}

/** A slot under construction (see `stepAll`). */
type MutableSlot = { -readonly [K in keyof Slot]: Slot[K] }

/**
 * Merges a delta of the slot's own type into `slot` in place, with the same result as `updateSlot`
 * (rule 3), for text, refusal, reasoning and tool call deltas; `false` for other parts (nothing changed).
 * Only for a slot no state outside the current `stepAll` can see.
 */
const mergeDeltaInto = (slot: MutableSlot, part: Part.AssistantPart): boolean => {
  switch (part.type) {
    case "text":
      slot.text = appendChunk(slot.text, part.text)
      slot.annotations = appendAnnotations(slot.annotations, part.annotations)
      break
    case "refusal":
      slot.text = appendChunk(slot.text, part.text)
      break
    case "reasoning":
      if (part.text !== undefined) {
        slot.text = appendChunk(slot.text, part.text)
        slot.hasText = true
      }
      slot.summary = appendSummary(slot.summary, part.summary)
      if (part.payload !== undefined) slot.payload = part.payload
      break
    case "tool_call":
    case "custom_tool_call":
      slot.text = appendChunk(slot.text, part.type === "tool_call" ? part.arguments : part.input)
      if (part.callId !== "") slot.callId = part.callId
      if (part.name !== "") slot.name = part.name
      if (part.payload !== undefined) slot.payload = part.payload
      break
    default:
      return false
  }
  slot.last = part
  slot.open = true
  slot.attributes = mergeAttributes(slot.attributes, part.attributes)
  return true
}

/*
 * `partOf` and `responseOf` construct without validation: every field comes from parts that are already
 * instances, and validating a class whose fields hold other `Schema.Class` instances builds a new schema
 * class per call in Effect 3 (`Schema.declare` of the class's type side). On the recorded 194 KB benchmark
 * stream that validation was about a third of the aggregator's cost, and its allocations outlived
 * young-generation collections (packages/bench/RESULTS.md, section of 2026-11-29 20:28). They build with
 * `UnsafePart` / `UnsafeMessage` (the same instances, the tag first): the class constructor with validation
 * off still took 2-4 µs a part (packages/bench/RESULTS.md, "the client path, round 8").
 */
const partOf = (slot: Slot): Part.AssistantPart => {
  const last = slot.last
  switch (last.type) {
    case "text":
      return UnsafePart.textPart(joinChunks(slot.text), slot.annotations, slot.attributes)
    case "refusal":
      return UnsafePart.refusalPart(joinChunks(slot.text), slot.attributes)
    case "reasoning":
      return UnsafePart.reasoningPart(
        slot.summary.map(joinChunks),
        slot.hasText ? joinChunks(slot.text) : undefined,
        slot.payload,
        slot.attributes
      )
    case "tool_call":
      return UnsafePart.toolCallPart(
        slot.callId,
        slot.name,
        joinChunks(slot.text),
        slot.attributes,
        last.namespace,
        slot.payload
      )
    case "custom_tool_call":
      return UnsafePart.customToolCallPart(
        slot.callId,
        slot.name,
        joinChunks(slot.text),
        slot.attributes,
        last.namespace,
        slot.payload
      )
    default:
      return last.attributes === slot.attributes ? last : withAttributes(last, slot.attributes)
  }
}

/** The same complete part with other attributes. */
const withAttributes = (part: Part.AssistantPart, attributes: Part.Attributes): Part.AssistantPart => {
  const Class = part.constructor as new(props: Part.AssistantPart, disableValidation: boolean) => Part.AssistantPart
  return new Class({ ...part, attributes }, true)
}

const responseOf = (response: ResponseState): ModelResponse.ModelResponse => {
  const slots = Array.from(HashMap.entries(response.slots)).sort(([a], [b]) => a - b)
  const parts = slots.map(([, slot]) => partOf(slot))
  const finished = response.finished
  return UnsafeMessage.modelResponse(
    response.id,
    response.model,
    finished?.status ?? "in_progress",
    finished?.finishReason ?? "other",
    finished?.incompleteReason,
    finished?.usage ?? Usage.empty,
    UnsafeMessage.assistantMessage(parts)
  )
}

// ---------------------------------------------------------------------------------------------------------
// the fold
// ---------------------------------------------------------------------------------------------------------

/**
 * The state before any element: no response.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: State = makeState([], HashMap.empty(), undefined)

/**
 * Advances the fold by one stream element and returns the new state; `self` is left as it was.
 *
 * - `response_started` records the model of its response (and the response's first-seen position);
 * - `part` merges into or replaces the slot at `outputIndex` and `contentIndex` (rules in the module
 *   comment; `replace: true` always replaces);
 * - `response_finished` records status, finish reason, incomplete reason and usage.
 *
 * An element of a response not seen before starts that response (model `""` when no `response_started`
 * came for it). Never fails. O(1) per delta of a run on one slot; O(log n) when the slot changes; plus O(k)
 * for a reasoning summary of k entries.
 *
 * @since 0.1.0
 * @category combinators
 */
export const step = (self: State, element: StreamPart.StreamPart): State => {
  const state = impl(self)
  const hot = state.hot
  const key = element.type === "part" ? slotKey(element) : 0
  if (
    element.type === "part" && hot !== undefined && hot.responseId === element.responseId && hot.key === key &&
    element.replace !== true
  ) {
    return makeState(state.order, state.responses, {
      responseId: hot.responseId,
      key,
      slot: updateSlot(hot.slot, element)
    })
  }
  const existing = HashMap.get(state.responses, element.responseId)
  const known = Option.isSome(existing)
  const order = known ? state.order : [...state.order, element.responseId]
  const response: ResponseState = known
    ? existing.value
    : { id: element.responseId, model: "", finished: undefined, slots: HashMap.empty() }
  switch (element.type) {
    case "response_started":
      return makeState(order, HashMap.set(state.responses, element.responseId, { ...response, model: element.model }), hot)
    case "response_finished":
      return makeState(order, HashMap.set(state.responses, element.responseId, { ...response, finished: element }), hot)
    case "part": {
      let responses = known ? flush(state) : HashMap.set(flush(state), element.responseId, response)
      const slots = HashMap.unsafeGet(responses, element.responseId).slots
      const slot = Option.getOrUndefined(HashMap.get(slots, key))
      if (element.replace === true) {
        // the item is replaced from this content part on: the slots of its later content parts go
        const end = (element.outputIndex + 1) * CONTENT_SLOTS
        const kept = HashMap.filter(slots, (_, other) => other <= key || other >= end)
        if (HashMap.size(kept) !== HashMap.size(slots)) {
          responses = HashMap.set(responses, element.responseId, {
            ...HashMap.unsafeGet(responses, element.responseId),
            slots: kept
          })
        }
      }
      return makeState(order, responses, {
        responseId: element.responseId,
        key,
        slot: updateSlot(slot, element)
      })
    }
  }
}

/**
 * `step` over many elements. A run of deltas on one slot is merged in place into the slot this call made
 * for it: the states in between are never seen outside, so the result is the one `step` gives, and the
 * states given to or returned by the public functions are still never changed. On the recorded 194 KB
 * benchmark stream this takes the fold's allocations from about 240 KiB to about 90 KiB per run (sampled
 * with the inspector's heap profiler, packages/bench/RESULTS.md, section of 2026-11-29 20:28): a state, a
 * hot-slot record and a slot per delta are no longer made, nor an iterator result per element.
 */
const stepAll = (self: State, elements: ReadonlyArray<StreamPart.StreamPart>): State => {
  let state = self
  /** The hot slot when this call made it. */
  let owned: MutableSlot | undefined
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i]!
    const hot = impl(state).hot
    if (
      owned !== undefined && element.type === "part" && element.partial && hot !== undefined &&
      hot.slot === owned && hot.responseId === element.responseId && hot.key === slotKey(element) &&
      owned.last.type === element.part.type && mergeDeltaInto(owned, element.part)
    ) continue
    state = step(state, element)
    const next = impl(state).hot
    owned = element.type === "part" && next !== undefined ? next.slot : undefined
  }
  return state
}

/**
 * Reads the state: one `ModelResponse` per response, in first-seen order, each message's parts ordered by
 * output index, then content index. A response without `response_finished` has status `"in_progress"`, finish reason `"other"`
 * (its tool calls may be cut off, so it must not read as `tool_calls` or `stop`) and zero usage. Costs
 * O(total text): call it once at the end, or when a snapshot is wanted.
 *
 * @since 0.1.0
 * @category destructors
 */
export const done = (self: State): ReadonlyArray<ModelResponse.ModelResponse> => {
  const responses = flush(impl(self))
  return impl(self).order.map((id) => responseOf(HashMap.unsafeGet(responses, id)))
}

/**
 * Folds a finite collection of elements at once: `done` of `step` over `elements`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromIterable = (elements: Iterable<StreamPart.StreamPart>): ReadonlyArray<ModelResponse.ModelResponse> =>
  done(stepAll(empty, Array.isArray(elements) ? elements : Array.from(elements)))

/**
 * The fold as a `Sink`: consumes `StreamPart`s, gives the responses when the stream ends. On a failing
 * stream the sink fails with the stream's error; use `aggregateSettled` to keep the partial transcript.
 *
 * @since 0.1.0
 * @category sinks
 */
export const sink: Sink.Sink<ReadonlyArray<ModelResponse.ModelResponse>, StreamPart.StreamPart> = Sink.map(
  Sink.foldLeftChunks(
    empty,
    (state, chunk: Chunk.Chunk<StreamPart.StreamPart>) => stepAll(state, Chunk.toReadonlyArray(chunk))
  ),
  done
)

/**
 * Runs `stream` to its end, handing `onChunk` each chunk of elements. The stream is pulled in the caller's
 * fiber (`Channel.toPullIn`); `Stream.run` into a `Sink` forks a fiber for the channel and adds the sink's
 * stages (three channels of `pipeToOrFail`, then a drain): on the client path's empty call (an
 * `LanguageModel.stream` aggregated) 883 -> 571 fiber steps, one fiber fewer (packages/bench/RESULTS.md).
 * The pull's scope is closed at the end, as `Stream.run`'s is (`Effect.scopedWith`), and, as there, not
 * provided as the stream's `Scope`: a stream that needs one gets the caller's. Providing it
 * (`Effect.scoped`) cost 28 of the empty call's 318 fiber steps.
 */
const foldChunks = <E, R>(
  stream: Stream.Stream<StreamPart.StreamPart, E, R>,
  onChunk: (chunk: Chunk.Chunk<StreamPart.StreamPart>) => void
): Effect.Effect<void, E, R> =>
  Effect.scopedWith((scope) =>
    Effect.flatMap(Channel.toPullIn(Stream.toChannel(stream), scope), (pull) => {
      const loop: Effect.Effect<void, E, R> = Effect.flatMap(pull, (next) => {
        if (Either.isLeft(next)) return Effect.void
        onChunk(next.right)
        return loop
      })
      return loop
    })
  )

/**
 * Runs a stream through the fold (what `sink` does): the responses of the whole stream. Fails with the
 * stream's error, losing the partial transcript (see `aggregateSettled`). As with `Stream.run`, a stream
 * that needs a `Scope` gets the caller's.
 *
 * @since 0.1.0
 * @category combinators
 */
export const aggregate = <E, R>(
  stream: Stream.Stream<StreamPart.StreamPart, E, R>
): Effect.Effect<ReadonlyArray<ModelResponse.ModelResponse>, E, R> =>
  Effect.suspend(() => {
    let state = empty
    return Effect.map(
      foldChunks(stream, (chunk) => {
        state = stepAll(state, Chunk.toReadonlyArray(chunk))
      }),
      () => done(state)
    )
  })

/**
 * Runs a stream to its end or its failure and never fails: the responses aggregated from every element
 * delivered before the end, and the failure, if any. This is how a caller keeps the transcript of a stream
 * that failed (an `error` event, `response.failed`, a `TruncatedStream` or a transport error): the decoder
 * emits every part that arrived before failing, so `responses` holds them, the response left open listed
 * with status `"in_progress"`, finish reason `"other"` and zero usage.
 *
 * ```ts
 * const { responses, failure } = yield* MessageAggregator.aggregateSettled(stream)
 * if (Option.isSome(failure)) console.error(failure.value.message, responses.at(-1)?.text)
 * ```
 *
 * Defects and interruption are not caught. As with `Stream.run`, a stream that needs a `Scope` gets the
 * caller's.
 *
 * @since 0.1.0
 * @category combinators
 */
export const aggregateSettled = <E, R>(
  stream: Stream.Stream<StreamPart.StreamPart, E, R>
): Effect.Effect<Settled<E>, never, R> =>
  Effect.suspend(() => {
    let state = empty
    return foldChunks(stream, (chunk) => {
      state = stepAll(state, Chunk.toReadonlyArray(chunk))
    }).pipe(
      Effect.either,
      Effect.map((result): Settled<E> => ({
        responses: done(state),
        failure: result._tag === "Left" ? Option.some(result.left) : Option.none()
      }))
    )
  })
