/**
 * Terminal rendering of a tool loop as it streams: the reasoning summary as it arrives, each tool call with
 * its arguments, each local tool result, the final answer, then one line of usage. Every character of the
 * stream is written once (deltas as they come, then only what the completing part adds).
 *
 * @since 0.1.0
 */
import type { StreamPart } from "@effect-responses/core"
import type { ToolLoop } from "@effect-responses/tools"

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
  /** What ends an unfinished line, when the stream stops in the middle of one (e.g. on a failure). */
  readonly end: () => string
}

/**
 * A renderer with its own state (which output item is being written).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (style: Style): Renderer => {
  // the output item being written ("responseId/outputIndex"), and the reasoning summary entry within it
  let current: string | undefined
  let summaryIndex = 0
  let lineOpen = false

  const open = (key: string, header: string): string => {
    if (current === key) return ""
    const prefix = lineOpen ? "\n" : ""
    current = key
    summaryIndex = 0
    lineOpen = true
    return `${prefix}${header}`
  }
  const close = (): string => {
    current = undefined
    if (!lineOpen) return ""
    lineOpen = false
    return "\n"
  }

  const part = (update: StreamPart.PartUpdate): string => {
    const key = `${update.responseId}/${update.outputIndex}`
    const p = update.part
    switch (p.type) {
      case "reasoning": {
        let out = ""
        p.summary.forEach((entry, i) => {
          if (entry === "") return
          if (current !== key) out += open(key, style.dim("reasoning: "))
          else if (i > summaryIndex) out += style.dim("\n           ")
          summaryIndex = Math.max(summaryIndex, i)
          out += style.dim(entry.replace(/\n+/g, " "))
        })
        if (p.text !== undefined && p.text !== "") {
          out += open(key, style.dim("reasoning: ")) + style.dim(p.text)
        }
        return update.partial ? out : out + (current === key ? close() : "")
      }
      case "tool_call": {
        const out = open(key, `${style.cyan("tool call:")} ${style.bold(p.name)} `) + p.arguments
        return update.partial ? out : out + close()
      }
      case "text": {
        const out = p.text === "" && current !== key ? "" : open(key, style.bold("answer: ")) + p.text
        return update.partial ? out : out + (current === key ? close() : "")
      }
      case "refusal": {
        const out = open(key, style.red("refusal: ")) + p.text
        return update.partial ? out : out + close()
      }
      case "media":
        return update.partial ? "" : `${close()}${style.dim(`[${p.mediaType}${p.url === undefined ? "" : ` ${p.url}`}]`)}\n`
      case "unknown":
        return update.partial ? "" : `${close()}${style.dim(`[${p.kind}]`)}\n`
    }
  }

  return {
    render: (event) => {
      switch (event.type) {
        case "part":
          return part(event)
        case "tool_result": {
          const r = event.result
          const label = r.isError ? style.red("tool error:") : style.cyan("tool result:")
          return `${close()}${label} ${style.bold(r.name)} -> ${r.output}\n`
        }
        case "loop_finished": {
          const u = event.usage
          return `${close()}${
            style.dim(
              `usage: input ${u.inputTokens} (cached ${u.cachedInputTokens}), output ${u.outputTokens} (reasoning ${u.reasoningTokens}) tokens; ${event.steps} steps`
            )
          }\n`
        }
        case "response_started":
        case "response_finished":
          return ""
      }
    },
    end: close
  }
}
