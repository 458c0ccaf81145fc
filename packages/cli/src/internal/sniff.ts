/**
 * What an input of `decode`, `aggregate` or `chat --replay` is, told from a bounded prefix of its text
 * (never by parsing a line that may be cut off): a stream capture (raw SSE or line-JSON) or a single JSON
 * body, and of which protocol when that shows.
 *
 * - SSE (the first line that is not blank is an SSE field or comment): a stream; `event: response.…` or a
 *   first `data:` payload with a top-level `"type"` means Responses, one with `"object":
 *   "chat.completion.chunk"` or `"choices"` means Chat Completions.
 * - A JSON object: its top-level keys are scanned as they come (nested values and strings skipped) until
 *   one decides: a string `"type"` is a Responses event (line-JSON capture); `"object": "response"` a
 *   Response JSON body, `"chat.completion"` a Chat Completions body, `"chat.completion.chunk"` a chat
 *   capture. When the object closes undecided: `"choices"` means a chat chunk (Azure's first chunk has
 *   `"object": ""`), anything else a JSON body (an `"error"` key: an HTTP error body).
 * - Undecided within `PREFIX_LIMIT` characters (a huge first key), or anything else: a stream of unknown
 *   protocol, left to the decoder, which bounds its events.
 *
 * @internal
 */

/** @internal */
export type Protocol = "responses" | "chat-completions"

/** @internal */
export type Kind =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Stream"; readonly protocol: Protocol | undefined }
  | { readonly _tag: "Body"; readonly protocol: Protocol | undefined }

/** How much text is scanned at most before the input is left to the stream decoder. @internal */
export const PREFIX_LIMIT = 64 * 1024

const SSE_START = /^(?::|(?:event|data|id|retry)(?::|[ \t]*(?:\r|\n|$)))/

/** The top-level keys of the JSON object starting `text` (at index 0) seen so far: string values, or `true`. */
interface ObjectScan {
  readonly keys: Map<string, string | true>
  /** Whether the object closed within `text`. */
  readonly closed: boolean
}

/** The index of the quote closing the string whose contents start at `from`, or -1 when cut off. */
const stringEnd = (text: string, from: number): number => {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x5c) i++
    else if (c === 0x22) return i
  }
  return -1
}

const scanObject = (text: string, decided: (keys: Map<string, string | true>) => boolean): ObjectScan => {
  const keys = new Map<string, string | true>()
  let depth = 0
  let expectKey = false
  let key: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "\"") {
      const end = stringEnd(text, i + 1)
      if (end === -1) return { keys, closed: false }
      if (depth === 1) {
        let value: string
        try {
          value = JSON.parse(text.slice(i, end + 1)) as string
        } catch {
          return { keys, closed: false }
        }
        if (expectKey) {
          key = value
          expectKey = false
        } else if (key !== undefined) {
          keys.set(key, value)
          key = undefined
          if (decided(keys)) return { keys, closed: false }
        }
      }
      i = end
    } else if (c === "{" || c === "[") {
      if (depth === 1 && key !== undefined) {
        keys.set(key, true)
        key = undefined
        if (decided(keys)) return { keys, closed: false }
      }
      depth++
      if (depth === 1) expectKey = c === "{"
    } else if (c === "}" || c === "]") {
      depth--
      if (depth === 0) return { keys, closed: true }
    } else if (depth === 1) {
      if (c === ",") {
        expectKey = true
        key = undefined
      } else if (key !== undefined && c !== ":" && c !== " " && c !== "\t" && c !== "\n" && c !== "\r") {
        keys.set(key, true)
        key = undefined
        if (decided(keys)) return { keys, closed: false }
      }
    }
  }
  return { keys, closed: false }
}

const decisive = (keys: Map<string, string | true>): boolean =>
  typeof keys.get("type") === "string" ||
  ["response", "chat.completion", "chat.completion.chunk"].includes(keys.get("object") as string)

/** What the keys of a first JSON object say, or `undefined` while they say nothing. */
const kindOfKeys = (scan: ObjectScan): Kind | undefined => {
  const { keys } = scan
  if (typeof keys.get("type") === "string") return { _tag: "Stream", protocol: "responses" }
  const object = keys.get("object")
  if (object === "response") return { _tag: "Body", protocol: "responses" }
  if (object === "chat.completion") return { _tag: "Body", protocol: "chat-completions" }
  if (object === "chat.completion.chunk") return { _tag: "Stream", protocol: "chat-completions" }
  if (!scan.closed) return undefined
  if (keys.has("choices")) return { _tag: "Stream", protocol: "chat-completions" }
  return { _tag: "Body", protocol: undefined }
}

/**
 * The kind of the input whose first characters are `text`; `undefined` when more text is needed to tell
 * (never when `final`: the input ended, or `PREFIX_LIMIT` was reached).
 *
 * @internal
 */
export const classify = (text: string, final: boolean): Kind | undefined => {
  const start = text.replace(/^\uFEFF/, "").trimStart()
  if (start === "") return final && text.length < PREFIX_LIMIT ? { _tag: "Empty" } : final ? unknownStream : undefined
  const bounded = final || text.length >= PREFIX_LIMIT
  if (start.startsWith("{")) {
    const kind = kindOfKeys(scanObject(start, decisive))
    return kind ?? (bounded ? unknownStream : undefined)
  }
  const firstLineEnded = /[\r\n]/.test(start)
  if (!firstLineEnded && start.length < 7 && !bounded) return undefined
  if (!SSE_START.test(start)) return unknownStream
  // SSE: the protocol shows in an `event:` name or in the first payload.
  for (const line of start.split(/\r\n|\r|\n/)) {
    if (/^event:\s*response\./.test(line)) return { _tag: "Stream", protocol: "responses" }
    const data = /^data:\s?(.*)$/.exec(line)
    if (data !== null) {
      const payload = data[1]!.trimStart()
      if (!payload.startsWith("{")) continue
      const kind = kindOfKeys(scanObject(payload, decisive))
      if (kind !== undefined) return { _tag: "Stream", protocol: kind._tag === "Empty" ? undefined : kind.protocol }
      break
    }
  }
  return bounded ? unknownStream : undefined
}

/**
 * Whether the first line of `text` that is not blank is an SSE field or comment; `undefined` when more text
 * is needed to tell (never when `final`). @internal
 */
export const startsAsSse = (text: string, final: boolean): boolean | undefined => {
  const start = text.replace(/^\uFEFF/, "").trimStart()
  if (!final && !/[\r\n]/.test(start) && start.length < 7 && text.length < PREFIX_LIMIT) return undefined
  return SSE_START.test(start)
}

const unknownStream: Kind = { _tag: "Stream", protocol: undefined }

/**
 * The hint for an input of `detected` protocol read as `requested`, or `undefined` when they agree (or the
 * protocol did not show).
 *
 * @internal
 */
export const protocolHint = (
  kind: Kind,
  requested: Protocol
): string | undefined => {
  if (kind._tag === "Empty" || kind.protocol === undefined || kind.protocol === requested) return undefined
  const what = kind._tag === "Body" ? "JSON body" : "capture"
  return kind.protocol === "chat-completions"
    ? `this looks like a Chat Completions ${what}: pass --protocol chat-completions`
    : `this looks like a Responses ${what}: pass --protocol responses (the default)`
}
