/**
 * Which output item is written when. The upstream may interleave parts of several output indices
 * (parallel tool calls of a Chat Completions stream do), but the lifecycle writes one item at a time:
 * parts of other indices are kept in their slot and written, whole so far, when their turn comes: items are
 * written in the order the upstream began them (its first part of each), as the Responses API writes items in
 * the order the model produced them. An item closes at its completing part, at the end of the response, or, for text,
 * refusal and reasoning, as soon as another item receives a delta; one that waits unwritten behind another
 * (a Chat Completions tool call stays open to the end of the stream, since more argument chunks may come) is
 * over then too, and is written whole when its turn comes. Content that still arrives for an item closed or
 * over early opens a new item, which comes after every item begun before it (a Chat Completions stream has
 * one index for all its text and one for all its reasoning: text after a tool call, then reasoning, then
 * text, are a message, a reasoning item and a message after the call). A call is not written before its
 * name is whole (a Chat Completions server may stream `function.name` in pieces, `get_` then `weather`,
 * before the arguments): until its first arguments, a part of another item, or its completing part. A function call whose name so far (a server may stream it in pieces:
 * `apply_`, then `patch`) could still become a custom or client-run tool's is not written until its name
 * says which, or it is complete. A later content part of a message (`PartUpdate.contentIndex`) does not close
 * the earlier one: it waits until the earlier one closes (`laterContentOf`). A `replace: true` part of an item
 * being written is honoured by `replaceContent` (see `ResponsesLifecycle`'s module doc).
 *
 * @internal
 */
import { StreamPart } from "@effect-responses/core"
import { ResponsesRequest } from "@effect-responses/responses"
import type * as ResponsesRequestDecoder from "../../ResponsesRequestDecoder.js"
import type { Event } from "../../ResponsesLifecycle.js"
import { sentNameOfNamespaced } from "../decoder/tools.js"
import type { ItemWriter } from "./itemEvents.js"
import {
  absorb,
  carriesContent,
  changeKind,
  isCall,
  isClientCall,
  isContent,
  type Kind,
  kindOf,
  newSlot,
  replaceContent,
  type Slot
} from "./items.js"

const ENCRYPTED_REASONING: string = ResponsesRequest.INCLUDE_ENCRYPTED_REASONING

/** Whether an item of `kind` is over as soon as another item receives a delta: text, refusal, reasoning. */
const endsEarly = (kind: Kind): boolean => kind === "message" || kind === "refusal" || kind === "reasoning"

/**
 * The ordering of one response's items: `push` takes a part, `closeAll` closes every item left open (the
 * response finished), `closeFinished` closes only what the upstream finished (the response failed).
 */
export interface Ordering {
  readonly push: (update: StreamPart.PartUpdate, out: Array<Event>) => void
  readonly closeAll: (itemStatus: string, out: Array<Event>) => void
  readonly closeFinished: (out: Array<Event>) => void
}

/**
 * The ordering over `writer`; `request` tells which calls are custom tool calls and whether reasoning text
 * is kept for an `encrypted_content` (`include`), `makeId` makes item ids.
 */
export const make = (
  writer: ItemWriter,
  request:
    & Pick<ResponsesRequestDecoder.DecodedRequest, "namespacedTools">
    & Partial<
      Pick<
        ResponsesRequestDecoder.DecodedRequest,
        "customTools" | "applyPatch" | "shell" | "localShell" | "toolSearch" | "deferredTools" | "options"
      >
    >,
  makeId: (prefix: string) => string
): Ordering => {
  // by upstream output index, the item the index adds to now (an index taking content again after its item
  // closed or ended gets a new one)
  const slots = new Map<number, Slot>()
  // the items not known to be closed, in the upstream's order: a Set iterates in insertion order, and an item
  // is inserted when its first part arrives
  const pending = new Set<Slot>()
  // the text, refusal or reasoning item that received content last, while no other item received a delta
  let live: Slot | undefined
  // the client asked for encrypted reasoning: reasoning text goes back to it in the gateway's token
  const reasoningTokens = request.options?.include?.includes(ENCRYPTED_REASONING) === true

  /**
   * The upstream index of an update: its output index, or, for a later content part of a message (a
   * `ResponsesLanguageModel` upstream's message of text and refusal), a number between that index and the
   * next, so that the content part is an item of its own, as a Chat Completions upstream's refusal beside
   * text is.
   */
  const upstreamIndexOf = (update: StreamPart.PartUpdate): number =>
    update.contentIndex === undefined || update.contentIndex === 0
      ? update.outputIndex
      : update.outputIndex + Math.min(update.contentIndex, StreamPart.MAX_CONTENT_INDEX) / (StreamPart.MAX_CONTENT_INDEX + 1)

  const slotOf = (index: number, kind: Kind): Slot => {
    let slot = slots.get(index)
    if (slot === undefined) {
      slot = newSlot(index, kind, makeId)
      slots.set(index, slot)
      pending.add(slot)
    }
    return slot
  }

  /**
   * The names a call of a custom or client-run tool may come under (flattened, dotted, bare), which a
   * function call's name may still grow into while a server streams it in pieces (`apply_`, then `patch`).
   */
  let specialNames: ReadonlyArray<string> | undefined
  const mayBecomeSpecial = (slot: Slot): boolean => {
    if (slot.kind !== "function_call") return false
    if (specialNames === undefined) {
      const flat = new Set<string>(request.customTools)
      for (const name of [request.applyPatch, request.shell, request.localShell, request.toolSearch]) {
        if (name !== undefined) flat.add(name)
      }
      // a deferred tool's call is preceded by the search loading it: its name must be whole first
      if (request.deferredTools !== undefined) for (const name of request.deferredTools.keys()) flat.add(name)
      const names = [...flat]
      for (const alias of request.namespacedTools.keys()) if (flat.has(flatName(alias))) names.push(alias)
      specialNames = names
    }
    return specialNames.some((name) => name !== slot.name && name.startsWith(slot.name))
  }

  // the call begun last whose name may still grow (`nameGrows`), until a part of another item comes
  let naming: Slot | undefined

  /**
   * Whether a call's name may still grow: a Chat Completions server may send `function.name` in pieces
   * (`get_`, then `weather`) before the arguments, and `response.output_item.added` must carry the whole
   * name (clients dispatch on it, the `openai` SDK's accumulator keeps it). The name is whole at the call's
   * first arguments, at a part of another item (another tool call's index), or at its completing part.
   */
  const nameGrows = (slot: Slot): boolean =>
    isCall(slot.kind) && !slot.completing && !slot.nameWhole && slot.chunks.length === 0

  /**
   * After the active item closed: opens the item begun first among those pending, closing it too when complete. A
   * function call whose name so far may still grow into a custom or client-run tool's waits, unwritten,
   * until its name says otherwise or it is complete (unless `force`: the response ends).
   */
  const advance = (out: Array<Event>, force = false) => {
    while (writer.active() === undefined) {
      let next: Slot | undefined
      for (const slot of pending) {
        if (!slot.closed) {
          next = slot
          break
        }
        pending.delete(slot)
      }
      if (next === undefined || (!force && (nameGrows(next) || (!next.completing && mayBecomeSpecial(next))))) return
      searchFor(next, out)
      writer.open(next, out)
      writer.flush(next, out)
      if (next.completing) writer.close(next, "completed", out)
    }
  }

  /** The deferred tools a search of this response loaded already. */
  const searched = new Set<string>()

  /**
   * Before the call of a deferred tool no search loaded: a tool search loading it (`ItemWriter.search`), once
   * per tool and response, so that a client that checks a deferred tool was loaded before it is called (the
   * Agents SDK fails the run otherwise) takes the call. The upstream was offered the tool (a hosted search
   * cannot run here), or called it unoffered; either way the client has it and can run it.
   */
  const searchFor = (slot: Slot, out: Array<Event>) => {
    if (request.deferredTools === undefined || request.deferredTools.size === 0) return
    if (slot.kind !== "function_call" && slot.kind !== "custom_tool_call") return
    const name = flatName(slot.name)
    const deferred = request.deferredTools.get(name)
    if (deferred === undefined || searched.has(name)) return
    searched.add(name)
    writer.search(deferred, out)
  }

  /** The name the upstream was offered a call's tool under (a flattened, dotted or bare namespaced name resolved). */
  const flatName = (name: string): string => {
    const original = request.namespacedTools.get(name)
    return original === undefined ? name : sentNameOfNamespaced(original)
  }

  /**
   * The kind of item `update` belongs to: a call of a function standing for a custom tool is a custom tool
   * call, one of the function standing for `apply_patch` an `apply_patch_call`, for `shell` a `shell_call`,
   * for `local_shell` a `local_shell_call`.
   */
  const kindOfUpdate = (update: StreamPart.PartUpdate): Kind | undefined => {
    const kind = kindOf(update.part)
    const custom = request.customTools !== undefined && request.customTools.size > 0
    const clientTools = request.applyPatch !== undefined || request.shell !== undefined || request.localShell !== undefined ||
      request.toolSearch !== undefined
    if (kind === "function_call" && update.part.type === "tool_call" && (custom || clientTools)) {
      const existing = slots.get(upstreamIndexOf(update))
      if (existing !== undefined && (existing.kind === "custom_tool_call" || isClientCall(existing.kind))) return existing.kind
      const name = flatName(update.part.name !== "" ? update.part.name : existing?.name ?? "")
      if (request.customTools?.has(name) === true) return "custom_tool_call"
      if (name === request.applyPatch) return "apply_patch_call"
      if (name === request.shell) return "shell_call"
      if (name === request.localShell) return "local_shell_call"
      if (name === request.toolSearch) return "tool_search_call"
    }
    return kind
  }

  const push = (update: StreamPart.PartUpdate, out: Array<Event>) => {
    const kind = kindOfUpdate(update)
    if (kind === undefined) return
    const index = upstreamIndexOf(update)
    const existing = slots.get(index)
    if (existing !== undefined && (existing.closed || existing.ended)) {
      // a part for an item closed or over early: what it adds goes into a new item (nothing is lost)
      if (!carriesContent(update.part)) return
      slots.delete(index)
    }
    if (update.replace === true && index === update.outputIndex) dropLaterContent(update.outputIndex)
    const slot = slotOf(index, kind)
    if (naming !== undefined && naming !== slot) {
      // a part of another item: the call before it has its whole name
      naming.nameWhole = true
      naming = undefined
    }
    if (slot.chunks.length === 0 && isCall(kind) && !slot.nameWhole) naming = slot
    const kindBefore = slot.kind
    if (slot.kind !== kind) {
      if (slot.opened) {
        // a snapshot whose content part is a refusal where text was written, or text where a refusal was: the
        // same message item, ended with the snapshot's content part (`replaceContent`, `ItemWriter.close`)
        if (update.replace !== true || !isContent(slot.kind) || !isContent(kind)) return
        slot.kind = kind
      } else if (update.partial) {
        // a call whose name grew into a custom or client-run tool's before it was written: the same
        // argument fragments, another item
        if (!isCall(slot.kind) || !isCall(kind)) return
        changeKind(slot, kind, makeId)
      } else {
        // a complete part of another kind replaces what the slot held, as long as nothing was written
        changeKind(slot, kind, makeId)
        slot.chunks = []
        slot.blocks = 0
        slot.blankChunks = 0
        slot.summaries = []
        slot.reasoningText = undefined
      }
    }
    if (reasoningTokens && kind === "reasoning" && slot.reasoningText === undefined) slot.reasoningText = []
    if (update.replace === true && slot.opened) replaceContent(slot, update.part, slot.kind === kindBefore)
    else absorb(slot, update.part, update.partial, update.replace === true)
    if (!update.partial) slot.completing = true
    if (update.partial && live !== undefined && live !== slot && !laterContentOf(live, index)) {
      // a delta of another item: the text, refusal or reasoning before it is over, written or not (an open
      // one is closed below); one still waiting behind the open item is written whole when its turn comes
      if (!live.opened) {
        live.ended = true
        live.completing = true
      }
      live = undefined
    }
    if (slot.completing) {
      if (live === slot) live = undefined
    } else if (update.partial && endsEarly(kind) && carriesContent(update.part)) {
      live = slot
    }
    const active = writer.active()
    if (active === undefined) {
      advance(out)
    } else if (active === slot) {
      if (slot.completing) {
        writer.close(slot, "completed", out)
        advance(out)
      } else {
        writer.flush(slot, out)
      }
    } else if (update.partial && !isCall(active.kind) && !laterContentOf(active, index)) {
      // text, refusal and reasoning are written one after the other by Chat Completions: a delta of another
      // item means the open one is over, so it closes now and the new one streams live
      writer.close(active, "completed", out)
      advance(out)
    }
  }

  /**
   * Whether upstream index `index` is a later content part of the message whose content part `slot` is (a
   * `ResponsesLanguageModel` upstream's message of several content parts). Its deltas do not end `slot`:
   * the upstream's `response.output_item.done` completes every content part of the message at once, and
   * may replace any of them (`replace: true`), which can be honoured only while the item is not done. So
   * the later content part waits, its deltas kept, and is written when the earlier one has closed.
   */
  const laterContentOf = (slot: Slot, index: number): boolean =>
    index > slot.upstreamIndex && Math.floor(index) === Math.floor(slot.upstreamIndex)

  /**
   * A replacing snapshot of the item at upstream output index `outputIndex` (content part 0): the item's
   * later content parts that were not written yet are dropped, as `MessageAggregator` drops their slots;
   * those the snapshot has come right after it, each with `replace: true`.
   */
  const dropLaterContent = (outputIndex: number) => {
    for (const [index, slot] of slots) {
      if (index <= outputIndex || index >= outputIndex + 1 || slot.opened) continue
      slots.delete(index)
      pending.delete(slot)
      if (live === slot) live = undefined
    }
  }

  /**
   * The next content part of the message whose content part `slot` is, when it received content (not written
   * yet: it waits for `slot` to close, `laterContentOf`); `undefined` otherwise.
   */
  const laterPartBegun = (slot: Slot): Slot | undefined => {
    if (!isContent(slot.kind)) return undefined
    let next: Slot | undefined
    for (const other of pending) {
      if (
        other !== slot && !other.opened && !other.closed && isContent(other.kind) && laterContentOf(slot, other.upstreamIndex) &&
        other.chunks.length > 0 && (next === undefined || other.upstreamIndex < next.upstreamIndex)
      ) next = other
    }
    return next
  }

  const closeAll = (itemStatus: string, out: Array<Event>) => {
    const active = writer.active()
    if (active !== undefined) writer.close(active, itemStatus, out)
    for (;;) {
      advance(out, true)
      const next = writer.active()
      if (next === undefined) return
      writer.close(next, itemStatus, out)
    }
  }

  /**
   * The response failed: an item the upstream never completed is not closed (no `.done` events, no
   * `response.output_item.done`, not in `output`), since clients act on those events (the AI SDK emits a
   * tool call at `output_item.done`, Codex runs a call then), and a call cut off by a broken stream must not
   * run. What arrived of the open item is written as its deltas; unfinished items not written yet stay
   * unwritten (a call waiting for its name to settle has no kind yet). An item the upstream completed but
   * that waited behind an unfinished one (a call whose name may still grow into a custom tool's, or the
   * open item) is not lost: it is written whole now, in upstream order, with the next output indices, and
   * is in `output`. A message's content part whose next content part began (a `ResponsesLanguageModel`
   * upstream's message of several, its later parts waiting: `laterContentOf`) was finished by the upstream,
   * which completes each content part before it adds the next: it closes (`completed`, in `output`), and the
   * next one is written, left open in its turn.
   */
  const closeFinished = (out: Array<Event>) => {
    let active = writer.active()
    // a message's content part whose next content part began is finished (a Responses upstream writes a
    // message's content parts one after another, each done before the next is added): it closes, and the next
    // one is written, what arrived of it as deltas
    for (let next = active === undefined ? undefined : laterPartBegun(active); next !== undefined; next = laterPartBegun(next)) {
      writer.close(active!, "completed", out)
      writer.open(next, out)
      writer.flush(next, out)
      active = next
    }
    if (active !== undefined) writer.flush(active, out)
    const finished: Array<Slot> = []
    for (const slot of pending) if (!slot.opened && !slot.closed && slot.completing) finished.push(slot)
    for (const slot of finished) {
      searchFor(slot, out)
      writer.open(slot, out)
      writer.flush(slot, out)
      writer.close(slot, "completed", out)
    }
  }

  return { push, closeAll, closeFinished }
}
