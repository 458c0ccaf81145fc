/**
 * Provider data that must come back with a tool call, carried inside the call id the client sends back.
 *
 * The gateway keeps no state, and a Responses `function_call` has no field for a Chat Completions tool
 * call's `extra_content` (where Gemini's OpenAI compatibility puts the thought signature it refuses the next
 * turn without). What every client does send back, unchanged, is the call's `call_id`: in the
 * `function_call` item of its history and in the `function_call_output` answering it. So a call whose part
 * has such a payload goes to the client with the call id `<upstream id>__extra_content__<base64url of the
 * extra_content JSON>`, and a call id of that form coming back is split again: the upstream id goes
 * upstream, the payload back on its call. The client treats the id as the opaque string it is (the
 * `openai` SDK, the Agents SDK and Codex only compare and echo it).
 *
 * A call id is read as one of these only when the text after the marker is exactly the base64url (no
 * padding) of the JSON text of an object, the form `encode` writes; any other call id, one the gateway
 * did not make, is left as it is. LiteLLM carries Gemini's signature the same way with another marker
 * (`<id>__thought__<signature>`, the signature alone); this form carries the whole `extra_content`, and is
 * not mistaken for LiteLLM's.
 *
 * @internal
 */
import { ChatCompletionsOutput } from "@effect-responses/chat-completions"
import { Part } from "@effect-responses/core"

/** What separates the upstream's call id from the encoded `extra_content`. */
export const MARKER = "__extra_content__"

/** Whether `payload` is a Chat Completions tool call's `extra_content` (the only payload a call id carries). */
export const isExtraContent = (payload: Part.OpaquePayload | undefined): payload is Part.OpaquePayload =>
  payload !== undefined && payload.provider === ChatCompletionsOutput.PROVIDER &&
  payload.kind === ChatCompletionsOutput.EXTRA_CONTENT

/** The call id the client gets for a call with `extraContent` (the JSON text of the object), or `callId` without. */
export const encode = (callId: string, extraContent: string | undefined): string =>
  extraContent === undefined ? callId : `${callId}${MARKER}${Buffer.from(extraContent, "utf8").toString("base64url")}`

/** A call id as the client sent it, split: the upstream's call id, and the payload it carried if any. */
export interface Decoded {
  readonly callId: string
  readonly payload: Part.OpaquePayload | undefined
}

const BASE64URL = /^[A-Za-z0-9_-]+$/

/** The JSON text of an object that `text` is the base64url of, in the form `encode` writes; else `undefined`. */
const extraContentOf = (text: string): string | undefined => {
  if (!BASE64URL.test(text)) return undefined
  const bytes = Buffer.from(text, "base64url")
  if (bytes.toString("base64url") !== text) return undefined
  const json = bytes.toString("utf8")
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return undefined
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? json : undefined
}

const NONE = (callId: string): Decoded => ({ callId, payload: undefined })

/** Splits a call id the client sent (see the module doc); one without the marker costs one `indexOf`. */
export const decode = (callId: string): Decoded => {
  let at = callId.indexOf(MARKER)
  while (at > 0) {
    const extra = extraContentOf(callId.slice(at + MARKER.length))
    if (extra !== undefined) {
      return {
        callId: callId.slice(0, at),
        payload: new Part.OpaquePayload({
          provider: ChatCompletionsOutput.PROVIDER,
          kind: ChatCompletionsOutput.EXTRA_CONTENT,
          data: extra
        }, true)
      }
    }
    at = callId.indexOf(MARKER, at + 1)
  }
  return NONE(callId)
}
