/**
 * Terminal rendering of a tool loop as it streams: the reasoning summary as it arrives, each tool call with
 * its arguments, each local tool result, the final answer (`commentary:` for a message of phase
 * `commentary`), a note when a response stopped early (output token limit, content filter), then one line
 * of usage.
 *
 * Every output item gets its own line (or lines, for a reasoning summary). The item being written is shown
 * as its deltas arrive; deltas of other items that arrive meanwhile (parallel tool calls whose argument
 * fragments interleave) are kept, per output index, and each such item is written whole, in order of first
 * appearance, once the line before it ends. Each character is written once, except when a part with
 * `replace: true` contradicts what was already shown for its item: a terminal cannot take back what it
 * printed, so the item is written again in full on a new line labelled `(corrected)` (`answer
 * (corrected): …`). A replacement of an item not shown yet, or equal to what was shown, shows nothing
 * more.
 *
 * @since 0.1.0
 */
import type { Part, StreamPart } from "@effect-responses/core"
import type { ToolLoop } from "@effect-responses/tools"

/** What a tool answer says, on one line of the terminal: the tool, whether it failed, and its text. */
const answerOf = (
  part: Part.ToolMessagePart
): { readonly name: string; readonly isError: boolean; readonly text: string } => {
  switch (part.type) {
    case "tool_result":
      return { name: part.name, isError: part.isError, text: part.output }
    case "shell_call_output":
      return {
        name: "shell",
        isError: part.output.some((out) => out.outcome.type === "timeout" || out.outcome.exitCode !== 0),
        text: part.output.map((out) => {
          const ended = out.outcome.type === "timeout" ? "timed out" : `exit ${out.outcome.exitCode}`
          const text = `${out.stdout}${out.stderr === "" ? "" : ` ${out.stderr}`}`.trim()
          return text === "" ? `[${ended}]` : `[${ended}] ${text}`
        }).join("; ")
      }
    case "apply_patch_call_output":
      return { name: "apply_patch", isError: part.status === "failed", text: part.output ?? part.status }
    case "local_shell_call_output":
      return { name: "local_shell", isError: false, text: part.output }
    case "mcp_approval_response":
      return { name: "mcp approval", isError: false, text: part.approve ? "approved" : "denied" }
    case "tool_search_output":
      return { name: "tool_search", isError: false, text: `${part.tools.length} tool(s) loaded` }
  }
}

/**
 * Colours, or none (when the output is not a terminal).
 *
 * @since 0.1.0
 * @category models
 */
export interface Style {
  readonly dim: (s: string) => string
  readonly bold: (s: string) => string
  readonly cyan: (s: string) => string
  readonly red: (s: string) => string
}

/**
 * ANSI colours.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ansi: Style = {
  dim: (s) => `\x1b[2m${s}\x1b[22m`,
  bold: (s) => `\x1b[1m${s}\x1b[22m`,
  cyan: (s) => `\x1b[36m${s}\x1b[39m`,
  red: (s) => `\x1b[31m${s}\x1b[39m`
}

/**
 * No colours.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plain: Style = { dim: (s) => s, bold: (s) => s, cyan: (s) => s, red: (s) => s }

/**
 * A renderer: `render(event)` gives the text to write for one event of `ToolLoop.stream` (possibly "").
 *
 * @since 0.1.0
 * @category models
 */
export interface Renderer {
  readonly render: (event: ToolLoop.Event) => string
  /**
   * What ends an unfinished line and writes what is still held back, when the stream stops in the middle
   * (e.g. on a failure). With a `marker` (e.g. `[interrupted]`), the open line ends with it, or, when no
   * line is open, it gets a line of its own: a half answer never looks complete.
   */
  readonly end: (marker?: string) => string
}

/** The state of one output item ("responseId/outputIndex"), or content part of a message ("…/contentIndex" after the first). */
interface Slot {
  readonly kind: "reasoning" | "tool_call" | "text" | "refusal" | "note"
  name: string
  phase: string | undefined
  /** The rendered content so far (without the header). */
  content: string
  /** The header, once it has been written (it no longer changes then). */
  header: string | undefined
  corrected: boolean
  /** How many characters of header + content have been written. */
  printed: number
  /** What the content is made of, to compare a replacement with. */
  summary: Array<string>
  text: string
  summaryIndex: number
  done: boolean
}

const INDENT = "\n           "

/** One line for a complete item of a client-run built-in tool, an MCP approval request or a tool search. */
const describeCall = (
  p: Exclude<
    StreamPart.PartUpdate["part"],
    { readonly type: "text" | "refusal" | "reasoning" | "tool_call" | "custom_tool_call" | "media" | "unknown" }
  >,
  style: Style
): string => {
  switch (p.type) {
    case "shell_call":
      return `${style.cyan("shell call:")} ${p.commands.join(" && ")}`
    case "apply_patch_call":
      return `${style.cyan("apply_patch call:")} ${p.operation.type} ${p.operation.path}`
    case "local_shell_call":
      return `${style.cyan("local shell call:")} ${p.command.join(" ")}`
    case "mcp_approval_request":
      return `${style.cyan("MCP approval request:")} ${style.bold(`${p.serverLabel}.${p.name}`)} ${p.arguments}`
    case "tool_search_call":
      return style.dim(`[tool search (${p.execution}): ${JSON.stringify(p.arguments)}]`)
    case "tool_search_output": {
      const names = p.tools.map((tool) =>
        typeof tool === "object" && tool !== null && "name" in tool ? String(tool.name) : "?"
      )
      return style.dim(`[tool search loaded: ${names.join(", ")}]`)
    }
  }
}

/**
 * A renderer with its own state (which output item is being written, what other items hold back).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (style: Style): Renderer => {
  const slots = new Map<string, Slot>()
  // the output item whose line is open (written as its deltas arrive)
  let live: string | undefined

  const headerOf = (slot: Slot): string => {
    const corrected = slot.corrected ? " (corrected)" : ""
    switch (slot.kind) {
      case "reasoning":
        return style.dim(`reasoning${corrected}: `)
      case "tool_call":
        return `${style.cyan(`tool call${corrected}:`)} ${style.bold(slot.name)} `
      case "text":
        return style.bold(`${slot.phase === "commentary" ? "commentary" : "answer"}${corrected}: `)
      case "refusal":
        return style.red(`refusal${corrected}: `)
      case "note":
        return ""
    }
  }
  // A tool call is shown even with no arguments; other items only once they have content.
  const visible = (slot: Slot): boolean => slot.kind === "tool_call" || slot.content !== ""
  const body = (slot: Slot): string => visible(slot) ? (slot.header ?? headerOf(slot)) + slot.content : ""
  const write = (slot: Slot): string => {
    if (!visible(slot)) return ""
    slot.header ??= headerOf(slot)
    const text = body(slot)
    const out = text.slice(slot.printed)
    slot.printed = text.length
    return out
  }

  /** Writes held-back items in order: whole lines for complete ones, up to the first incomplete one. */
  const flush = (): string => {
    let out = ""
    for (const [key, slot] of slots) {
      if (live !== undefined) break
      if (!visible(slot)) {
        if (slot.done) slots.delete(key)
        continue
      }
      out += write(slot)
      if (slot.done) {
        out += "\n"
        slots.delete(key)
      } else {
        live = key
      }
    }
    return out
  }

  /** Ends the open line and writes everything held back, complete or not; `marker` ends the open line. */
  const close = (marker?: string): string => {
    let out = ""
    let marked = marker === undefined
    for (const [key, slot] of slots) {
      const text = write(slot)
      if (text === "" && slot.printed === 0) continue
      out += text
      if (!marked && key === live) {
        out += ` ${style.dim(marker!)}`
        marked = true
      }
      out += "\n"
    }
    if (!marked) out += `${style.dim(marker!)}\n`
    slots.clear()
    live = undefined
    return out
  }

  const append = (slot: Slot, p: StreamPart.PartUpdate["part"]): void => {
    if (p.attributes.phase !== undefined) slot.phase = p.attributes.phase
    switch (p.type) {
      case "reasoning": {
        p.summary.forEach((entry, i) => {
          slot.summary[i] = (slot.summary[i] ?? "") + entry
          if (entry === "") return
          if (slot.content !== "" && i > slot.summaryIndex) slot.content += style.dim(INDENT)
          slot.summaryIndex = Math.max(slot.summaryIndex, i)
          slot.content += style.dim(entry.replace(/\n+/g, " "))
        })
        if (p.text !== undefined && p.text !== "") {
          slot.text += p.text
          slot.content += style.dim(p.text)
        }
        return
      }
      case "tool_call":
      case "custom_tool_call": {
        if (p.name !== "") slot.name = p.namespace === undefined ? p.name : `${p.namespace}.${p.name}`
        const text = p.type === "tool_call" ? p.arguments : p.input
        slot.text += text
        slot.content += text
        return
      }
      case "text":
      case "refusal":
        slot.text += p.text
        slot.content += p.text
        return
      case "media":
        slot.content = style.dim(`[${p.mediaType}${p.url === undefined ? "" : ` ${p.url}`}]`)
        return
      case "unknown":
        slot.content = style.dim(`[${p.kind}]`)
        return
      default:
        slot.content = describeCall(p, style)
        return
    }
  }

  const newSlot = (p: StreamPart.PartUpdate["part"]): Slot => ({
    kind: p.type === "custom_tool_call"
      ? "tool_call"
      : p.type === "text" || p.type === "refusal" || p.type === "reasoning" || p.type === "tool_call"
      ? p.type
      : "note",
    name: p.type === "tool_call" || p.type === "custom_tool_call" ? p.name : "",
    phase: undefined,
    content: "",
    header: undefined,
    corrected: false,
    printed: 0,
    summary: [],
    text: "",
    summaryIndex: 0,
    done: false
  })

  const part = (update: StreamPart.PartUpdate): string => {
    const p = update.part
    // media, unknown and built-in tool items are shown once complete (their deltas are previews and progress)
    if (newSlot(p).kind === "note" && update.partial) return ""
    const key = `${update.responseId}/${update.outputIndex}${update.contentIndex === undefined ? "" : `/${update.contentIndex}`}`
    let slot = slots.get(key)
    let out = ""
    if (slot === undefined || slot.kind !== newSlot(p).kind) {
      slot = newSlot(p)
      slots.set(key, slot)
    } else if (update.replace === true) {
      const fresh = newSlot(p)
      append(fresh, p)
      const same = fresh.text === slot.text && fresh.summary.join("\u0000") === slot.summary.join("\u0000") &&
        fresh.name === slot.name
      if (!same) {
        if (slot.printed > 0) {
          // shown already and contradicted: end its line, and write the replacement whole on a new one
          if (live === key) {
            out += "\n"
            live = undefined
          }
          fresh.corrected = true
        }
        fresh.phase ??= slot.phase
        // in place: the item keeps its position among the held-back ones
        Object.assign(slot, fresh)
      }
      slot.done = true
      return out + (live === key ? finish(key, slot) : flush())
    }
    const phase = slot.phase
    append(slot, p)
    if (!update.partial) {
      slot.done = true
      // the phase came with the completing part only, after the line was labelled `answer:`
      if (slot.kind === "text" && slot.header !== undefined && phase !== "commentary" && slot.phase === "commentary") {
        slot.content += style.dim(" (commentary)")
      }
    }
    // nothing open: held-back items before this one are written first, then this one (its line stays open
    // until it is complete); another item open: this one is held back
    if (live === undefined) return out + flush()
    return live === key ? out + finish(key, slot) : out
  }

  /** Writes what the live item has new, and ends its line when it is complete. */
  const finish = (key: string, slot: Slot): string => {
    let out = write(slot)
    if (!slot.done) return out
    if (slot.printed > 0) out += "\n"
    slots.delete(key)
    live = undefined
    return out + flush()
  }

  return {
    render: (event) => {
      switch (event.type) {
        case "part":
          return part(event)
        case "tool_result": {
          const r = answerOf(event.result)
          const label = r.isError ? style.red("tool error:") : style.cyan("tool result:")
          return `${close()}${label} ${style.bold(r.name)} -> ${r.text}\n`
        }
        case "response_finished": {
          const out = close()
          switch (event.finishReason) {
            case "length":
              return `${out}${style.dim("(stopped: output token limit)")}\n`
            case "content_filter":
              return `${out}${style.dim("(stopped: content filter)")}\n`
            default:
              return out
          }
        }
        case "loop_finished": {
          const u = event.usage
          const steps = `${event.steps} ${event.steps === 1 ? "step" : "steps"}`
          return `${close()}${
            style.dim(
              `usage: input ${u.inputTokens} (cached ${u.cachedInputTokens}), output ${u.outputTokens} (reasoning ${u.reasoningTokens}) tokens; ${steps}`
            )
          }\n`
        }
        case "response_started":
          return ""
      }
    },
    end: (marker) => close(marker)
  }
}
