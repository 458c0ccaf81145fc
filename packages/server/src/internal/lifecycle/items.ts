/**
 * The pieces of the lifecycle encoder that hold no state of their own: the per-item state (`Slot`), the
 * JSON of an output item and of a content part, what a part adds to an item, and usage on the wire.
 *
 * @internal
 */
import { BuiltInArguments, type Part, type Usage } from "@effect-responses/core"
import * as Option from "effect/Option"
import { ResponsesRequest } from "@effect-responses/responses"
import * as CallId from "../callId.js"
import type * as CustomInput from "../customInput.js"
import * as ReasoningToken from "../reasoningToken.js"

/** The kind of an output item being written. */
export type Kind =
  | "message"
  | "refusal"
  | "reasoning"
  | "function_call"
  | "custom_tool_call"
  | "apply_patch_call"
  | "shell_call"
  | "local_shell_call"
  | "tool_search_call"
  | "verbatim"

/** Whether an item is a tool call (its deltas do not close other items). */
export const isCall = (kind: Kind): boolean =>
  kind === "function_call" || kind === "custom_tool_call" || isClientCall(kind)

/** Whether an item is a message content part: text (`message`) or a refusal. */
export const isContent = (kind: Kind): boolean => kind === "message" || kind === "refusal"

/** The kinds of the calls of client-run built-in tools presented upstream as functions. */
export type ClientCallKind = "apply_patch_call" | "shell_call" | "local_shell_call" | "tool_search_call"

/**
 * Whether an item is the call of a client-run built-in tool presented upstream as a function
 * (`apply_patch_call`, `shell_call`, `local_shell_call`, a client-run `tool_search_call`): written when the
 * call is complete, from its arguments.
 */
export const isClientCall = (kind: Kind): kind is ClientCallKind =>
  kind === "apply_patch_call" || kind === "shell_call" || kind === "local_shell_call" || kind === "tool_search_call"

/** What the encoder knows about one output item (one upstream output index). */
export interface Slot {
  readonly upstreamIndex: number
  kind: Kind
  itemId: string
  outputIndex: number
  opened: boolean
  closed: boolean
  /**
   * text, refusal or reasoning not written yet (another item is open) that another item then received a
   * delta after: over, as an open one would be closed then; written whole when its turn comes, and content
   * that still arrives for its upstream index opens a new item (`ordering.ts`)
   */
  ended: boolean
  completing: boolean
  /**
   * call: its name is known to be whole (a part of another upstream item came after it). A call is not
   * written before its name is whole: before its first arguments, this, or its completing part (`ordering.ts`)
   */
  nameWhole: boolean
  status: string | undefined
  phase: string | undefined
  /** text, refusal or arguments: every chunk received */
  chunks: Array<string>
  /** text, refusal or arguments joined, once the item is closed (so that it is joined once) */
  joined: string | undefined
  /** how many of `chunks` were written as deltas */
  written: number
  /** how many of the first `chunks` are blocks: written chunks joined (`compactWritten`) */
  blocks: number
  /**
   * function call: how many of the first `chunks` were found to be JSON whitespace alone while nothing was
   * written, held back (`ItemWriter.flush`: arguments of whitespace alone become `{}`)
   */
  blankChunks: number
  /** reasoning: the chunks of each summary part */
  summaries: Array<Array<string>>
  /** reasoning: the summary part being written, -1 before the first */
  summaryOpen: number
  /** reasoning: how many chunks of the open summary part were written */
  summaryWritten: number
  annotations: ReadonlyArray<Part.Annotation>
  /** the upstream's call id */
  callId: string
  /** the call's `extra_content` (JSON text), carried to the client inside its call id (`callId.ts`) */
  extraContent: string | undefined
  name: string
  encryptedContent: string | undefined
  /**
   * reasoning: the chunks of the upstream's reasoning text (`ReasoningPart.text`), kept only when the
   * request asked for `reasoning.encrypted_content` (then carried in one, `reasoningToken.ts`)
   */
  reasoningText: Array<string> | undefined
  verbatim: unknown
  /** custom tool call: the reader of its input, and the input written as deltas so far */
  customReader: ReturnType<typeof CustomInput.make> | undefined
  customWritten: string
  /**
   * custom tool call: `chunks` hold the input itself (`CustomToolCallPart`s of a `LanguageModel` upstream),
   * not the arguments of the function standing for the tool (`{"input": "…"}`)
   */
  customRaw: boolean
  /** custom tool call: the namespace its `CustomToolCallPart` named, if any */
  namespace: string | undefined
  /**
   * message or refusal: the kind its `response.content_part.added` announced, which a replacing snapshot may
   * have changed since (`replaceContent`)
   */
  announced: Kind | undefined
}

const ID_PREFIXES: { readonly [K in Kind]: string } = {
  message: "msg",
  refusal: "msg",
  reasoning: "rs",
  function_call: "fc",
  custom_tool_call: "ctc",
  apply_patch_call: "apc",
  shell_call: "sh",
  local_shell_call: "lsh",
  tool_search_call: "tsc",
  verbatim: "msg"
}

/** A new slot for upstream output index `index`, with a fresh item id of its kind. */
export const newSlot = (index: number, kind: Kind, makeId: (prefix: string) => string): Slot => ({
  upstreamIndex: index,
  kind,
  itemId: makeId(ID_PREFIXES[kind]),
  outputIndex: -1,
  opened: false,
  closed: false,
  ended: false,
  completing: false,
  nameWhole: false,
  status: undefined,
  phase: undefined,
  chunks: [],
  joined: undefined,
  written: 0,
  blocks: 0,
  blankChunks: 0,
  summaries: [],
  summaryOpen: -1,
  summaryWritten: 0,
  annotations: [],
  callId: "",
  extraContent: undefined,
  name: "",
  encryptedContent: undefined,
  reasoningText: undefined,
  verbatim: undefined,
  customReader: undefined,
  customWritten: "",
  customRaw: false,
  namespace: undefined,
  announced: undefined
})

/** Makes an unwritten `slot` an item of `kind`, with a fresh item id of that kind. */
export const changeKind = (slot: Slot, kind: Kind, makeId: (prefix: string) => string): void => {
  slot.kind = kind
  slot.itemId = makeId(ID_PREFIXES[kind])
}

/** Written chunks are joined into one block every this many (`compactWritten`). */
const BLOCK_CHUNKS = 4096

/**
 * Joins the chunks written since the last block into one string once there are `BLOCK_CHUNKS` of them, so
 * that a long answer in small deltas is held as a few strings per megabyte rather than one per delta
 * (each small string costs a header and an array slot beside its characters).
 */
export const compactWritten = (slot: Slot): void => {
  const loose = slot.written - slot.blocks
  if (loose < BLOCK_CHUNKS) return
  slot.chunks.splice(slot.blocks, loose, slot.chunks.slice(slot.blocks, slot.written).join(""))
  slot.blocks++
  slot.written = slot.blocks
}

/** Whether `text` is JSON whitespace alone (space, tab, line feed, carriage return; RFC 8259 §2), or empty. */
export const isBlank = (text: string): boolean => {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return false
  }
  return true
}

/** The whole text, refusal or arguments of a slot (joined once when closed). */
export const textOf = (slot: Slot): string => slot.joined ?? slot.chunks.join("")

/** The content part of a message or refusal item holding `text`. */
export const contentPart = (slot: Slot, text: string): Record<string, unknown> =>
  slot.kind === "refusal"
    ? { type: "refusal", refusal: text }
    : {
      type: "output_text",
      text,
      annotations: slot.annotations.map(ResponsesRequest.annotationToWire),
      logprobs: []
    }

/**
 * The JSON of a slot's output item with `itemStatus`; `complete: false` gives the empty item of
 * `response.output_item.added`. `name` is the call's name (and namespace) as the client declared it;
 * `callId` the call's id as the client gets it (before its `extra_content` is added, `callId.ts`): unique
 * within the response (`itemEvents.ts`), the upstream's by default.
 */
export const itemJson = (
  slot: Slot,
  itemStatus: string,
  complete: boolean,
  name: { readonly name: string; readonly namespace?: string },
  callId: string = slot.callId
): unknown => {
  switch (slot.kind) {
    case "message":
    case "refusal": {
      const message: Record<string, unknown> = { id: slot.itemId, type: "message", status: itemStatus, role: "assistant" }
      if (slot.phase !== undefined) message.phase = slot.phase
      message.content = complete ? [contentPart(slot, textOf(slot))] : []
      return message
    }
    case "reasoning": {
      const reasoning: Record<string, unknown> = {
        id: slot.itemId,
        type: "reasoning",
        summary: complete ? slot.summaries.map((chunks) => ({ type: "summary_text", text: chunks.join("") })) : []
      }
      if (complete) {
        // the upstream's own encrypted reasoning, else (when asked for) the text in the gateway's token
        if (slot.encryptedContent !== undefined) reasoning.encrypted_content = slot.encryptedContent
        else if (slot.reasoningText !== undefined && slot.reasoningText.length > 0) {
          reasoning.encrypted_content = ReasoningToken.encode(slot.reasoningText.join(""))
        }
      }
      return reasoning
    }
    case "function_call":
      return {
        id: slot.itemId,
        type: "function_call",
        status: itemStatus,
        arguments: complete ? textOf(slot) : "",
        call_id: CallId.encode(callId, slot.extraContent),
        ...name
      }
    case "custom_tool_call":
      return {
        id: slot.itemId,
        type: "custom_tool_call",
        status: itemStatus,
        call_id: CallId.encode(callId, slot.extraContent),
        input: complete ? textOf(slot) : "",
        ...name
      }
    case "apply_patch_call":
      return {
        id: slot.itemId,
        type: "apply_patch_call",
        status: itemStatus,
        call_id: CallId.encode(callId, slot.extraContent),
        operation: applyPatchOperation(textOf(slot)) ?? {}
      }
    case "shell_call":
      return {
        id: slot.itemId,
        type: "shell_call",
        status: itemStatus,
        action: complete ? shellAction(textOf(slot)) ?? NO_ACTION : NO_ACTION,
        call_id: CallId.encode(callId, slot.extraContent)
      }
    case "local_shell_call":
      return {
        id: slot.itemId,
        type: "local_shell_call",
        status: itemStatus,
        call_id: CallId.encode(callId, slot.extraContent),
        action: localShellAction(textOf(slot)) ?? { ...NO_EXEC, command: [] }
      }
    case "tool_search_call":
      // as the API writes one (`vai-openai-tool-search.chunks.txt`): `arguments` `{}` until it is complete
      return {
        id: slot.itemId,
        type: "tool_search_call",
        status: itemStatus,
        arguments: complete ? parseObject(textOf(slot)) ?? {} : {},
        call_id: CallId.encode(callId, slot.extraContent),
        execution: "client"
      }
    case "verbatim":
      return slot.verbatim
  }
}

/**
 * The `operation` of an `apply_patch_call` from the arguments of the function standing for the tool:
 * `{type, path, diff}` (`diff` for `create_file` and `update_file` only); `undefined` when the arguments are
 * no such operation (`BuiltInArguments.ApplyPatchOperation`).
 */
export const applyPatchOperation = (args: string): BuiltInArguments.ApplyPatchOperation | undefined =>
  Option.getOrUndefined(BuiltInArguments.decodeApplyPatchOperation(parseObject(args)))

/** The action of a `shell_call` not known yet (`response.output_item.added`, as the API writes it). */
const NO_ACTION = { commands: [], max_output_length: null, timeout_ms: null }

/**
 * The `action` of a `shell_call` from the arguments of the function standing for the tool:
 * `{commands, max_output_length, timeout_ms}` (the limits `null` when not given); `undefined` when the
 * arguments are no such action (`BuiltInArguments.ShellAction`).
 */
export const shellAction = (
  args: string
): { commands: ReadonlyArray<string>; max_output_length: number | null; timeout_ms: number | null } | undefined => {
  const action = BuiltInArguments.decodeShellAction(parseObject(args))
  if (Option.isNone(action)) return undefined
  const { commands, max_output_length, timeout_ms } = action.value
  return { commands, max_output_length, timeout_ms }
}

/** The limits of an exec action the model did not give (`null` on the wire, as the API writes them). */
const NO_EXEC = { type: "exec", timeout_ms: null, working_directory: null, env: {}, user: null } as const

/**
 * The `action` of a `local_shell_call` from the arguments of the function standing for the tool:
 * `{type: "exec", command, timeout_ms, working_directory, env, user}` (`null`, or `{}` for `env`, when not
 * given); `undefined` when the arguments are no such action (`BuiltInArguments.LocalShellExecAction`).
 */
export const localShellAction = (args: string): {
  type: "exec"
  command: ReadonlyArray<string>
  timeout_ms: number | null
  working_directory: string | null
  env: { readonly [name: string]: string }
  user: string | null
} | undefined => {
  const action = BuiltInArguments.decodeLocalShellExecAction(parseObject(args))
  if (Option.isNone(action)) return undefined
  const { command, env, timeout_ms, user, working_directory } = action.value
  return { type: "exec", command, timeout_ms, working_directory, env, user }
}

/**
 * Whether the arguments of a client-run built-in tool's call hold what its item needs (an operation, an
 * action, a tool search's JSON object); when they do not, the call is written as the function call it was.
 */
export const clientCallFits = (kind: ClientCallKind, args: string): boolean => {
  switch (kind) {
    case "apply_patch_call":
      return applyPatchOperation(args) !== undefined
    case "shell_call":
      return shellAction(args) !== undefined
    case "local_shell_call":
      return localShellAction(args) !== undefined
    case "tool_search_call":
      return args.trim() === "" || parseObject(args) !== undefined
  }
}

/** JSON arguments as an object, `undefined` when they are not JSON or no object. */
const parseObject = (args: string): { readonly [key: string]: unknown } | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(args)
  } catch {
    return undefined
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed as { readonly [key: string]: unknown } : undefined
}

/** The kind of output item a part belongs to (`undefined`: none, e.g. media without data). */
export const kindOf = (part: Part.AssistantPart): Kind | undefined => {
  switch (part.type) {
    case "text":
      return "message"
    case "refusal":
      return "refusal"
    case "reasoning":
      return "reasoning"
    case "tool_call":
      return "function_call"
    case "custom_tool_call":
      return "custom_tool_call"
    case "unknown":
      return typeof part.item === "object" && part.item !== null ? "verbatim" : undefined
    case "media":
      return part.data === undefined ? undefined : "verbatim"
    default:
      // typed call items (shell, apply_patch, ...) arrive complete and are written as items
      return "verbatim"
  }
}

/**
 * Adds what `part` brings to `slot`; a `replace` part first empties it (of a slot being written, what was
 * written is kept by `replaceContent`). A part's text, arguments or custom
 * tool input is appended, as `MessageAggregator` folds them: a delta holds only new content, and so does a
 * completing part (`partial: false`) after deltas (the rest, usually `""`); a complete part without deltas
 * holds it all.
 */
export const absorb = (slot: Slot, part: Part.AssistantPart, partial: boolean, replace: boolean) => {
  if (replace) {
    slot.chunks = []
    slot.blocks = 0
    slot.blankChunks = 0
    slot.summaries = []
    if (slot.reasoningText !== undefined) slot.reasoningText = []
  }
  if (
    part.type === "text" || part.type === "refusal" || part.type === "reasoning" || part.type === "tool_call" ||
    part.type === "custom_tool_call"
  ) {
    if (part.attributes.phase !== undefined) slot.phase = part.attributes.phase
    if (!partial && part.attributes.status !== undefined) slot.status = part.attributes.status
  }
  switch (part.type) {
    case "text":
      if (part.text !== "") slot.chunks.push(part.text)
      if (!partial) slot.annotations = part.annotations
      break
    case "refusal":
      if (part.text !== "") slot.chunks.push(part.text)
      break
    case "tool_call":
      if (part.arguments !== "") slot.chunks.push(part.arguments)
      if (part.callId !== "") slot.callId = part.callId
      if (part.name !== "") slot.name = part.name
      if (CallId.isExtraContent(part.payload)) slot.extraContent = part.payload.data
      break
    case "custom_tool_call":
      slot.customRaw = true
      if (part.input !== "") slot.chunks.push(part.input)
      if (part.callId !== "") slot.callId = part.callId
      if (part.name !== "") slot.name = part.name
      if (part.namespace !== undefined) slot.namespace = part.namespace
      if (CallId.isExtraContent(part.payload)) slot.extraContent = part.payload.data
      break
    case "reasoning": {
      if (part.summary.length > 0) {
        for (let index = 0; index < part.summary.length; index++) {
          const text = part.summary[index]!
          while (slot.summaries.length <= index) slot.summaries.push([])
          if (text !== "") slot.summaries[index]!.push(text)
        }
      } else if (part.text !== undefined && part.text !== "") {
        if (slot.summaries.length === 0) slot.summaries.push([])
        slot.summaries[slot.summaries.length - 1]!.push(part.text)
      }
      if (slot.reasoningText !== undefined && part.text !== undefined && part.text !== "") slot.reasoningText.push(part.text)
      if (part.payload !== undefined && part.payload.kind === "encrypted_content") {
        slot.encryptedContent = part.payload.data
      }
      break
    }
    case "unknown":
      slot.verbatim = part.item
      break
    case "media":
      slot.verbatim = {
        id: slot.itemId.replace(/^msg_/, "ig_"),
        type: "image_generation_call",
        status: "completed",
        result: part.data,
        output_format: part.mediaType.replace(/^image\//, "")
      }
      break
    default:
      slot.verbatim = ResponsesRequest.callItem(part)
      break
  }
}

/**
 * Replaces what an item being written (`slot.opened`) holds with `part`, a complete part with `replace: true`:
 * the upstream's final snapshot of the item (its `response.output_item.done`) contradicts what its deltas
 * delivered, and the snapshot wins, as `MessageAggregator` folds it. What was written as deltas cannot be
 * taken back, so what is written from here on is chosen for a client that accumulates the events (the
 * `openai` SDK's `accumulateResponse`: deltas appended, then the `.done` events' text, content part and item
 * set over them) to end with the snapshot and see no text twice:
 *
 * - the part's text, refusal, arguments or input (of a reasoning item, the open summary part's text)
 *   extends what was written: the rest is written as deltas, as a completing part's would be;
 * - it does not: nothing more is written as deltas (writing the part's text would append it to the text
 *   written), and the item's `.done` events carry it (`textOf`), as the API's own `.done` events carry the
 *   final text.
 *
 * Summary parts closed already keep their `.done` events; `response.output_item.done` carries the new ones.
 * `appendable: false` (the content part changed type: a refusal where text was written): nothing is written
 * as deltas.
 */
export const replaceContent = (slot: Slot, part: Part.AssistantPart, appendable = true): void => {
  if (slot.kind === "reasoning") {
    const open = slot.summaryOpen
    const written = open >= 0 ? (slot.summaries[open] ?? []).slice(0, slot.summaryWritten).join("") : ""
    absorb(slot, part, false, true)
    if (open >= 0 && open < slot.summaries.length) {
      slot.summaries[open] = keepWritten(written, slot.summaries[open]!.join(""))
      slot.summaryWritten = written === "" ? 0 : 1
    }
    return
  }
  const written = slot.chunks.slice(0, slot.written).join("")
  absorb(slot, part, false, true)
  const text = slot.chunks.join("")
  if (appendable) {
    slot.chunks = keepWritten(written, text)
    slot.written = written === "" ? 0 : 1
  } else {
    // a refusal where text was announced (or the reverse): a delta of the new kind would not fit the content
    // part the client holds, so all of it comes with the `.done` events
    slot.chunks = [text]
    slot.written = 1
  }
  slot.blocks = slot.written
}

/**
 * The chunks of `text` after `written` was written as deltas: `written` first (counted as written), then
 * the rest when `text` extends it; `text` alone (nothing of it to write as deltas) when it does not.
 */
const keepWritten = (written: string, text: string): Array<string> => {
  if (written === "") return text === "" ? [] : [text]
  if (!text.startsWith(written)) return [text]
  return text.length === written.length ? [written] : [written, text.slice(written.length)]
}

/** Whether a part adds anything to an item (text, arguments, a summary, a whole item). */
export const carriesContent = (part: Part.AssistantPart): boolean => {
  switch (part.type) {
    case "text":
    case "refusal":
      return part.text !== ""
    case "tool_call":
      return part.arguments !== ""
    case "custom_tool_call":
      return part.input !== ""
    case "reasoning":
      return (part.text ?? "") !== "" || part.summary.some((text) => text !== "")
    default:
      return true
  }
}

/** Usage as the Response object writes it. */
export const usageToWire = (u: Usage.Usage) => ({
  input_tokens: u.inputTokens,
  input_tokens_details: { cached_tokens: u.cachedInputTokens },
  output_tokens: u.outputTokens,
  output_tokens_details: { reasoning_tokens: u.reasoningTokens },
  total_tokens: u.totalTokens
})

/**
 * Whether the upstream reported usage: a decoder that received none (a Chat Completions stream without
 * its usage chunk) gives `Usage.empty`, and all-zero counts say nothing either.
 */
export const reported = (u: Usage.Usage): boolean =>
  u.inputTokens !== 0 || u.outputTokens !== 0 || u.totalTokens !== 0 || u.cachedInputTokens !== 0 ||
  u.reasoningTokens !== 0
