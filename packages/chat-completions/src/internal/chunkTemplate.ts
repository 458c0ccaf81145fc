/**
 * The fast path of the Chat Completions decoder: the common chunk, one text or reasoning delta of choice 0
 * or one piece of a tool call's arguments, read without `JSON.parse`.
 *
 * A server writes the chunks of one answer from one template: OpenAI's differ only in `delta.content` and
 * the trailing `obfuscation` string (`{"id":"chatcmpl-…","object":"chat.completion.chunk","created":…,
 * "model":"…","service_tier":"default","system_fingerprint":"fp_…","choices":[{"index":0,"delta":{"content":
 * "…"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"…"}`, fixtures/chat-sse), DeepSeek's
 * and xAI's in `delta.reasoning_content` or `delta.content`; a tool call's chunks after its first carry only
 * the call's `index` and a piece of its arguments (`"delta":{"tool_calls":[{"index":0,"function":{"arguments":
 * "…"}}]}`, fixtures/chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse and the other recorded tool call
 * streams). `JSON.parse` of such a chunk (330 characters,
 * a dozen fields, five strings the decoder never reads) was most of the decoder's cost per chunk. A
 * `ChunkTemplate` is learned from a chunk the decoder parsed: its text before the delta's string (`prefix`),
 * and after it (`middle`), either to the end or up to the last member's string value, which must be one the
 * decoder does not read (`tailed`). A later chunk matches when it is that prefix, a string literal, that
 * middle and (tailed) a string literal and `}`: it is then, as JSON, the learned chunk with those two strings
 * in place, so it decodes to one delta of the string's value, which is all the decoder needs.
 *
 * Whether a template decodes that way is not assumed from where the strings were found: it is checked by
 * parsing the template with sentinel strings in place (`learn`) and reading the result as the decoder does
 * (`plainDelta`, which mirrors `Decoder.feed`'s reads). A chunk that does not match (a string with a control
 * character, any other chunk) goes through `JSON.parse`, so its elements and errors are the decoder's own.
 *
 * @internal
 */
import { arrayField, isObject, type JsonObject, numberField, objectField, scanString, stringField } from "@effect-responses/wire/Json"

/**
 * Which delta field the template's string is: `delta.content` (text), the reasoning text, or the
 * `function.arguments` of the one entry of `delta.tool_calls` (a piece of a call's arguments).
 */
export type TemplateKind = "text" | "reasoning" | "tool_arguments"

/** What the decoder reads of a chunk that is one plain delta of choice 0. */
export interface PlainDelta {
  readonly id: string
  readonly kind: TemplateKind
  /** The field holding the text: `content`, `reasoning_content`, `reasoning` or `arguments`. */
  readonly field: string
  readonly text: string
  /** The tool call's `index` (`tool_arguments`; the decoder's 0 when it has none), else 0. */
  readonly index: number
}

const isNone = (value: unknown): boolean => value === undefined || value === null

/**
 * The chunk read as `Decoder.feed` reads it, when all it yields in an open response under its own `id` is
 * (at most) one text or reasoning delta, or one piece of a known tool call's arguments: a non-empty string
 * `id`, `choices` of one object with `index` 0 (or none) and a `delta` object, no `finish_reason` (`null`,
 * `""` or none), no `error` beside or inside the choice, no usage (`usage` and `x_groq.usage`), no Perplexity
 * sources, no annotations or refusal, and a delta whose only part is either a string `content` or a string
 * reasoning text (the other empty; no tool calls or legacy `function_call`), or (`tool_arguments`) a
 * `tool_calls` list of one object with a string `function.arguments` and no call `id`, `function.name` or
 * `extra_content` (no text or reasoning beside it): what `Decoder.feed` reads as a piece of the arguments
 * of the call of that `index` (a call of its own when none came under that index: the decoder checks).
 * Anything else is `undefined`.
 */
export const plainDelta = (chunk: JsonObject): PlainDelta | undefined => {
  const choices = arrayField(chunk, "choices")
  if (choices === undefined || choices.length !== 1) return undefined
  const choice = choices[0]
  if (!isObject(choice) || (numberField(choice, "index") ?? 0) !== 0) return undefined
  const id = stringField(chunk, "id")
  if (id === undefined || id === "") return undefined
  if (!isNone(chunk.error) || !isNone(choice.error)) return undefined
  const finishReason = choice.finish_reason
  if (!isNone(finishReason) && finishReason !== "") return undefined
  if (isObject(chunk.usage)) return undefined
  const groq = objectField(chunk, "x_groq")
  if (groq !== undefined && objectField(groq, "usage") !== undefined) return undefined
  const citations = arrayField(chunk, "citations") ?? arrayField(chunk, "search_results")
  if (citations !== undefined && citations.length > 0) return undefined
  const delta = objectField(choice, "delta")
  if (delta === undefined) return undefined
  const annotations = arrayField(delta, "annotations")
  if (annotations !== undefined && annotations.length > 0) return undefined
  const refusal = delta.refusal
  if (typeof refusal === "string" && refusal !== "") return undefined
  const content = delta.content
  const toolCalls = arrayField(delta, "tool_calls")
  if (toolCalls !== undefined) return toolArguments(id, delta, content, toolCalls)
  if (isObject(delta.function_call)) return undefined
  const reasoningField = typeof delta.reasoning_content === "string"
    ? "reasoning_content"
    : typeof delta.reasoning === "string"
    ? "reasoning"
    : undefined
  const reasoning = reasoningField === undefined ? "" : delta[reasoningField] as string
  if (typeof content === "string") {
    return reasoning === "" ? { id, kind: "text", field: "content", text: content, index: 0 } : undefined
  }
  if (Array.isArray(content) || reasoningField === undefined) return undefined
  return { id, kind: "reasoning", field: reasoningField, text: reasoning, index: 0 }
}

/** `plainDelta` of a delta with `tool_calls`: a piece of one call's arguments and nothing else, else `undefined`. */
const toolArguments = (
  id: string,
  delta: JsonObject,
  content: unknown,
  toolCalls: ReadonlyArray<unknown>
): PlainDelta | undefined => {
  if (toolCalls.length !== 1 || Array.isArray(content) || (typeof content === "string" && content !== "")) {
    return undefined
  }
  // the reasoning text as `ChatCompletionsOutput.reasoningTextOf` reads it
  const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning
  if (typeof reasoning === "string" && reasoning !== "") return undefined
  const call = toolCalls[0]
  if (!isObject(call) || isObject(call.extra_content)) return undefined
  const fn = objectField(call, "function")
  if (fn === undefined || (stringField(call, "id") ?? "") !== "" || (stringField(fn, "name") ?? "") !== "") {
    return undefined
  }
  const text = fn.arguments
  if (typeof text !== "string") return undefined
  return { id, kind: "tool_arguments", field: "arguments", text, index: numberField(call, "index") ?? 0 }
}

const QUOTE = 34

/** The sentinels the template is checked with: strings no escape is needed for. */
const SENTINEL_TEXT = "effect-responses template text"
const SENTINEL_TAIL = "effect-responses template tail"

/**
 * A learned chunk template (see the module's doc): `match` gives the delta's text of a chunk written from it,
 * or `undefined`.
 */
export class ChunkTemplate {
  constructor(
    /** The chunk `id` (parsed) the template's chunks carry. */
    readonly id: string,
    readonly kind: TemplateKind,
    /** The tool call's `index` (`tool_arguments`), else 0. */
    readonly index: number,
    /** The text up to and including the opening quote of the delta's string. */
    readonly prefix: string,
    /** The text after the delta's string: to the end, or (tailed) up to and including the last string's opening quote. */
    readonly middle: string,
    /** Whether a string value (not read) and `}` follow `middle`. */
    readonly tailed: boolean
  ) {}

  /** How many chunks matched. */
  hits = 0

  /** The delta's text when `data` is written from this template, else `undefined`. */
  match(data: string): string | undefined {
    // `slice` and `===`, not `startsWith`: with a chunk that is a slice of the body's text (as the framer
    // gives it) `startsWith` took 1.1 µs a chunk of the recorded OpenAI stream, `slice` and `===` 0.1 µs (Node 20)
    const prefix = this.prefix
    const start = prefix.length
    if (data.slice(0, start) !== prefix) return undefined
    const scanned = scanString(data, start)
    if (scanned === -1) return undefined
    const end = scanned >> 1
    const middle = this.middle
    const after = end + 1 + middle.length
    if (data.slice(end + 1, after) !== middle) return undefined
    if (this.tailed) {
      // the tail's value is not read: one without escapes (`obfuscation`'s letters) or the chunk goes to `JSON.parse`
      const tail = scanString(data, after)
      if ((tail & 1) === 1 || tail >> 1 !== data.length - 2 || data.charCodeAt(data.length - 1) !== 125) return undefined
    } else if (after !== data.length) {
      return undefined
    }
    let text: string
    if ((scanned & 1) === 1) {
      try {
        // an escape `JSON.parse` refuses (`\x`, a short `\u`) fails the whole chunk: left to the decoder
        text = JSON.parse(data.slice(start - 1, end + 1)) as string
      } catch {
        return undefined
      }
    } else {
      text = data.slice(start, end)
    }
    this.hits++
    return text
  }
}

/** Whether the template decodes, with the sentinels in place, to a plain delta of its own id, kind, field and index. */
const checks = (prefix: string, middle: string, tailed: boolean, plain: PlainDelta): boolean => {
  const tails = tailed ? [SENTINEL_TAIL, ""] : [undefined]
  for (const tail of tails) {
    let json: unknown
    try {
      json = JSON.parse(`${prefix}${SENTINEL_TEXT}"${middle}${tail === undefined ? "" : `${tail}"}`}`)
    } catch {
      return false
    }
    const read = isObject(json) ? plainDelta(json) : undefined
    if (
      read === undefined || read.id !== plain.id || read.kind !== plain.kind || read.field !== plain.field ||
      read.index !== plain.index || read.text !== SENTINEL_TEXT
    ) return false
  }
  return true
}

const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13

/**
 * The template of `data`, a chunk whose parsed form `plainDelta` read as `plain`, or `undefined` when none
 * is found that checks (see the module's doc). Tries the first few places where the delta's field name
 * appears as a key; a trailing string member of the chunk becomes the template's tail when that checks,
 * else the whole rest is fixed.
 */
export const learn = (data: string, plain: PlainDelta): ChunkTemplate | undefined => {
  const key = `"${plain.field}"`
  let from = 0
  for (let tries = 0; tries < 4; tries++) {
    const at = data.indexOf(key, from)
    if (at === -1) return undefined
    from = at + key.length
    let i = from
    while (i < data.length && isSpace(data.charCodeAt(i))) i++
    if (data.charCodeAt(i) !== 58) continue
    i++
    while (i < data.length && isSpace(data.charCodeAt(i))) i++
    if (data.charCodeAt(i) !== QUOTE) continue
    const start = i + 1
    const scanned = scanString(data, start)
    if (scanned === -1) continue
    const end = scanned >> 1
    const prefix = data.slice(0, start)
    const rest = data.slice(end + 1)
    if (rest.endsWith("\"}")) {
      const open = rest.lastIndexOf("\"", rest.length - 3)
      const tail = open === -1 ? "" : rest.slice(open + 1, rest.length - 2)
      if (open !== -1 && !tail.includes("\\")) {
        const middle = rest.slice(0, open + 1)
        if (checks(prefix, middle, true, plain)) return new ChunkTemplate(plain.id, plain.kind, plain.index, prefix, middle, true)
      }
    }
    if (checks(prefix, rest, false, plain)) return new ChunkTemplate(plain.id, plain.kind, plain.index, prefix, rest, false)
  }
  return undefined
}
