/**
 * The events of one output item, in the order the lifecycle writes them: `response.output_item.added`
 * (and the content part of a message), the deltas of what arrived since the last write, then the `.done`
 * events and `response.output_item.done`. It also numbers every event of the response (`sequence_number`)
 * and collects the finished items (`output`); which item is written when is `ordering`'s business.
 *
 * @internal
 */
import { ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { isObject } from "@effect-responses/wire/Json"
import type { Event } from "../../ResponsesLifecycle.js"
import type * as ResponsesRequestDecoder from "../../ResponsesRequestDecoder.js"
import type { DeferredTool } from "../../ResponsesRequestDecoder.js"
import * as CustomInput from "../customInput.js"
import { TextDelta } from "./textDelta.js"
import {
  changeKind,
  clientCallFits,
  compactWritten,
  contentPart,
  isBlank,
  isClientCall,
  itemJson,
  shellAction,
  type Slot,
  textOf
} from "./items.js"

/** The writer of a response's items (see the module doc). Each method appends its events to `out`. */
export interface ItemWriter {
  /** The items written whole so far, in output order (the Response object's `output`). */
  readonly output: Array<unknown>
  /** The item being written, if any: at most one is open at a time. */
  readonly active: () => Slot | undefined
  /** Appends an event of `type` with the next sequence number. */
  readonly emit: (out: Array<Event>, type: string, fields: Record<string, unknown>) => void
  /** Opens `slot` as the next output item (its output index is the next one). */
  readonly open: (slot: Slot, out: Array<Event>) => void
  /** Writes what `slot` received but did not write yet, as one delta. */
  readonly flush: (slot: Slot, out: Array<Event>) => void
  /** Writes the rest of `slot` and closes it with `itemStatus` (`completed`, `incomplete`). */
  readonly close: (slot: Slot, itemStatus: string, out: Array<Event>) => void
  /**
   * Writes a tool search that loads `deferred` (a `tool_search_call` and its `tool_search_output`, both
   * `execution: "server"`) as the next two output items; no item may be open.
   */
  readonly search: (deferred: DeferredTool, out: Array<Event>) => void
}

/**
 * A writer for one response; `request` names the namespaced and renamed tools whose calls are written back, `makeId`
 * makes item ids.
 */
export const make = (
  request:
    & Pick<ResponsesRequestDecoder.DecodedRequest, "namespacedTools">
    & Partial<Pick<ResponsesRequestDecoder.DecodedRequest, "renamedTools" | "searchedTools">>,
  makeId: (prefix: string) => string
): ItemWriter => {
  let sequence = 0
  let active: Slot | undefined
  let nextOutputIndex = 0
  const output: Array<unknown> = []

  const emit = (out: Array<Event>, type: string, fields: Record<string, unknown>) => {
    out.push({ type, sequence_number: sequence++, ...fields })
  }

  // the top-level deferred tools a search of this response loaded (`search`), by the client's name
  const searchedTopLevel = new Set<string>()

  const functionName = (slot: Slot): { name: string; namespace?: string } => {
    // a `CustomToolCallPart` that names its namespace: as it came
    if (slot.namespace !== undefined) return { name: slot.name, namespace: slot.namespace }
    const original = request.namespacedTools.get(slot.name)
    if (original !== undefined) return { namespace: original.namespace, name: original.name }
    const name = request.renamedTools?.get(slot.name) ?? slot.name
    // the API writes the call of a top-level tool a search loaded (in this response, or a `tool_search_output`
    // of the input) with the tool's own name as the namespace, after the name (`vai-openai-tool-search.chunks.txt`);
    // a call in that namespace comes back here as that tool
    return searchedTopLevel.has(name) || request.searchedTools?.has(name) === true ? { name, namespace: name } : { name }
  }

  // A call's `call_id` as the client gets it: unique within the response, as the API's are (a client
  // pairs each output with its call by it). A call whose upstream id an earlier call of the response has
  // (`dup` twice: OpenAI never sends that, a local server may) gets that id with `_2` (`_3`, …: the first
  // suffix no call of the response has); the client sends it back as it is, and it goes upstream so, each
  // output paired with its own call. Worked out again only when the upstream's id changes (a late id).
  const callIds = new Map<Slot, { readonly from: string; readonly id: string }>()
  const usedCallIds = new Set<string>()
  const clientCallId = (slot: Slot): string => {
    const known = callIds.get(slot)
    if (known !== undefined && known.from === slot.callId) return known.id
    if (known !== undefined) usedCallIds.delete(known.id)
    let id = slot.callId
    if (id !== "") {
      for (let n = 2; usedCallIds.has(id); n++) id = `${slot.callId}_${n}`
      usedCallIds.add(id)
    }
    callIds.set(slot, { from: slot.callId, id })
    return id
  }

  const item = (slot: Slot, itemStatus: string, complete: boolean): unknown =>
    itemJson(
      slot,
      itemStatus,
      complete,
      functionName(slot),
      slot.kind === "message" || slot.kind === "refusal" || slot.kind === "reasoning" || slot.kind === "verbatim"
        ? slot.callId
        : clientCallId(slot)
    )

  const open = (slot: Slot, out: Array<Event>) => {
    slot.opened = true
    slot.outputIndex = nextOutputIndex++
    active = slot
    // written when they close
    if (slot.kind === "verbatim" || isClientCall(slot.kind)) return
    emit(out, "response.output_item.added", { output_index: slot.outputIndex, item: item(slot, "in_progress", false) })
    if (slot.kind === "message" || slot.kind === "refusal") {
      slot.announced = slot.kind
      emit(out, "response.content_part.added", {
        item_id: slot.itemId,
        output_index: slot.outputIndex,
        content_index: 0,
        part: contentPart(slot, "")
      })
    }
  }

  const flush = (slot: Slot, out: Array<Event>) => {
    if (slot.kind === "reasoning") {
      for (let index = Math.max(slot.summaryOpen, 0); index < slot.summaries.length; index++) {
        const chunks = slot.summaries[index]!
        if (index > slot.summaryOpen) openSummary(slot, index, out)
        if (slot.summaryWritten < chunks.length) {
          const delta = slot.summaryWritten === 0 && chunks.length === 1 ? chunks[0]! : chunks.slice(slot.summaryWritten).join("")
          slot.summaryWritten = chunks.length
          if (delta !== "") {
            emit(out, "response.reasoning_summary_text.delta", {
              item_id: slot.itemId,
              output_index: slot.outputIndex,
              summary_index: index,
              delta
            })
          }
        }
      }
      return
    }
    if (slot.written >= slot.chunks.length || slot.kind === "verbatim" || isClientCall(slot.kind)) return
    if (slot.kind === "custom_tool_call") {
      let decoded = ""
      if (slot.customRaw) {
        // the input itself, from `CustomToolCallPart`s
        for (let index = slot.written; index < slot.chunks.length; index++) decoded += slot.chunks[index]!
      } else {
        const reader = slot.customReader ??= CustomInput.make()
        for (let index = slot.written; index < slot.chunks.length; index++) decoded += reader.feed(slot.chunks[index]!)
      }
      slot.written = slot.chunks.length
      compactWritten(slot)
      if (decoded !== "") {
        slot.customWritten += decoded
        emit(out, "response.custom_tool_call_input.delta", { item_id: slot.itemId, output_index: slot.outputIndex, delta: decoded })
      }
      return
    }
    if (slot.written === 0 && slot.kind === "function_call") {
      // arguments of JSON whitespace alone so far are held back: if nothing else comes, the call gets `{}`
      // (`close`), and deltas already written would not add up to it
      while (slot.blankChunks < slot.chunks.length && isBlank(slot.chunks[slot.blankChunks]!)) slot.blankChunks++
      if (slot.blankChunks === slot.chunks.length) return
    }
    const delta = slot.chunks.length - slot.written === 1
      ? slot.chunks[slot.written]!
      : slot.chunks.slice(slot.written).join("")
    slot.written = slot.chunks.length
    compactWritten(slot)
    if (delta === "") return
    switch (slot.kind) {
      case "message":
        // the hot path of a streamed answer: its frame is written from a template (`TextDelta`)
        out.push(new TextDelta(sequence++, slot.itemId, slot.outputIndex, delta))
        break
      case "refusal":
        emit(out, "response.refusal.delta", {
          item_id: slot.itemId,
          output_index: slot.outputIndex,
          content_index: 0,
          delta
        })
        break
      case "function_call":
        emit(out, "response.function_call_arguments.delta", {
          item_id: slot.itemId,
          output_index: slot.outputIndex,
          delta
        })
        break
    }
  }

  const openSummary = (slot: Slot, index: number, out: Array<Event>) => {
    if (slot.summaryOpen >= 0) closeSummary(slot, out)
    slot.summaryOpen = index
    slot.summaryWritten = 0
    emit(out, "response.reasoning_summary_part.added", {
      item_id: slot.itemId,
      output_index: slot.outputIndex,
      summary_index: index,
      part: { type: "summary_text", text: "" }
    })
  }

  const closeSummary = (slot: Slot, out: Array<Event>) => {
    const index = slot.summaryOpen
    const text = (slot.summaries[index] ?? []).join("")
    emit(out, "response.reasoning_summary_text.done", {
      item_id: slot.itemId,
      output_index: slot.outputIndex,
      summary_index: index,
      text
    })
    emit(out, "response.reasoning_summary_part.done", {
      item_id: slot.itemId,
      output_index: slot.outputIndex,
      summary_index: index,
      part: { type: "summary_text", text }
    })
  }

  /** Joins what a slot received once, as it closes (a custom tool call's input decoded from its arguments). */
  const settle = (slot: Slot, out: Array<Event>) => {
    if (slot.kind === "custom_tool_call") {
      const args = slot.chunks.join("")
      let input = slot.customRaw ? args : ChatCompletionsLanguageModel.customToolInput(args)
      // arguments cut off inside their JSON (an upstream that stalled or broke off): the input is what the
      // incremental reader decoded and the deltas gave, not the raw JSON (`{"input":"*** Begin`)
      if (!slot.customRaw && input === args && slot.customWritten !== "" && args.trimStart().startsWith("{")) {
        input = slot.customWritten
      }
      // what the incremental reader could not decode (an input written bare, not as JSON) comes now
      if (input.startsWith(slot.customWritten) && input.length > slot.customWritten.length) {
        emit(out, "response.custom_tool_call_input.delta", {
          item_id: slot.itemId,
          output_index: slot.outputIndex,
          delta: input.slice(slot.customWritten.length)
        })
      }
      slot.joined = input
      slot.chunks = []
      slot.written = 0
      slot.blocks = 0
      slot.customReader = undefined
    } else if (slot.kind !== "reasoning" && slot.kind !== "verbatim") {
      slot.joined = slot.chunks.join("")
      slot.chunks = []
      slot.written = 0
      slot.blocks = 0
    }
  }

  const close = (slot: Slot, itemStatus: string, out: Array<Event>) => {
    if (isClientCall(slot.kind) && !clientCallFits(slot.kind, textOf(slot))) {
      // arguments that are no apply_patch operation, (local) shell action or tool search: the function call
      // it was, so that nothing is lost (with a function call's id: nothing of it was written yet)
      changeKind(slot, "function_call", makeId)
      emit(out, "response.output_item.added", { output_index: slot.outputIndex, item: item(slot, "in_progress", false) })
    }
    // a call without arguments, or with JSON whitespace alone (`"  "`, `"\n"`), gets `{}`, which every client
    // parses as JSON (`""` and whitespace make strict ones throw). Whitespace was held back (`flush`), so `{}`
    // is the one delta; after a replacing snapshot of whitespace alone it comes with the `.done` events
    if (slot.kind === "function_call" && slot.chunks.every(isBlank)) {
      slot.chunks = ["{}"]
      slot.written = slot.blocks = slot.written === 0 ? 0 : 1
      slot.blankChunks = 0
    }
    flush(slot, out)
    slot.closed = true
    settle(slot, out)
    if (active === slot) active = undefined
    const finalStatus = itemStatus === "incomplete" ? "incomplete" : slot.status ?? "completed"
    switch (slot.kind) {
      case "message":
      case "refusal": {
        const text = textOf(slot)
        const part = contentPart(slot, text)
        if (slot.announced !== slot.kind) {
          // a replacing snapshot changed the content part's type after it was announced (a refusal where text
          // was written): the text `.done` event of either type contradicts the part a client holds (the
          // `openai` SDK throws on it), so `content_part.done` and the item bring the new part alone
        } else if (slot.kind === "message") {
          emit(out, "response.output_text.done", {
            item_id: slot.itemId,
            output_index: slot.outputIndex,
            content_index: 0,
            text,
            logprobs: []
          })
        } else {
          emit(out, "response.refusal.done", {
            item_id: slot.itemId,
            output_index: slot.outputIndex,
            content_index: 0,
            refusal: text
          })
        }
        emit(out, "response.content_part.done", {
          item_id: slot.itemId,
          output_index: slot.outputIndex,
          content_index: 0,
          part
        })
        break
      }
      case "reasoning":
        if (slot.summaryOpen >= 0) closeSummary(slot, out)
        break
      case "function_call":
        emit(out, "response.function_call_arguments.done", {
          item_id: slot.itemId,
          output_index: slot.outputIndex,
          ...functionName(slot),
          arguments: textOf(slot)
        })
        break
      case "custom_tool_call":
        emit(out, "response.custom_tool_call_input.done", {
          item_id: slot.itemId,
          output_index: slot.outputIndex,
          input: textOf(slot)
        })
        break
      case "shell_call": {
        // as the API streams one: the item without commands, then each command added, its text, done
        emit(out, "response.output_item.added", { output_index: slot.outputIndex, item: item(slot, "in_progress", false) })
        const commands = shellAction(textOf(slot))?.commands ?? []
        commands.forEach((command, index) => {
          const at = { output_index: slot.outputIndex, command_index: index }
          emit(out, "response.shell_call_command.added", { ...at, command: "" })
          if (command !== "") emit(out, "response.shell_call_command.delta", { ...at, delta: command })
          emit(out, "response.shell_call_command.done", { ...at, command })
        })
        break
      }
      case "local_shell_call":
        // the API has no events of a local shell call's own: the item, whole, added and done
        emit(out, "response.output_item.added", { output_index: slot.outputIndex, item: item(slot, "in_progress", true) })
        break
      case "tool_search_call":
        // as the API streams one: added with arguments `{}`, then done with them
        emit(out, "response.output_item.added", { output_index: slot.outputIndex, item: item(slot, "in_progress", false) })
        break
      case "apply_patch_call":
      case "verbatim":
        break
    }
    const done = item(slot, finalStatus, true)
    output.push(done)
    if (slot.kind === "verbatim" || slot.kind === "apply_patch_call") {
      emit(out, "response.output_item.added", { output_index: slot.outputIndex, item: done })
    }
    emit(out, "response.output_item.done", { output_index: slot.outputIndex, item: done })
  }

  // as the API writes a hosted search (`vai-openai-tool-search.chunks.txt`): each item added, then done, no
  // deltas; `call_id` null (the API's own search has none)
  const search = (deferred: DeferredTool, out: Array<Event>) => {
    // a namespace's tool is listed inside its namespace; a top-level one as declared, loaded by its name
    if (isObject(deferred.tool) && deferred.tool.type !== "namespace") searchedTopLevel.add(deferred.path)
    const callIndex = nextOutputIndex++
    const call = { id: makeId("tsc"), type: "tool_search_call", status: "in_progress", arguments: {}, call_id: null, execution: "server" }
    emit(out, "response.output_item.added", { output_index: callIndex, item: call })
    const called = { ...call, status: "completed", arguments: { paths: [deferred.path] } }
    output.push(called)
    emit(out, "response.output_item.done", { output_index: callIndex, item: called })
    const outputIndex = nextOutputIndex++
    const result = { id: makeId("tso"), type: "tool_search_output", status: "in_progress", call_id: null, execution: "server", tools: [deferred.tool] }
    emit(out, "response.output_item.added", { output_index: outputIndex, item: result })
    const loaded = { ...result, status: "completed" }
    output.push(loaded)
    emit(out, "response.output_item.done", { output_index: outputIndex, item: loaded })
  }

  return { output, active: () => active, emit, open, flush, close, search }
}
