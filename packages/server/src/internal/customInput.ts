/**
 * The input of a custom tool call, read from the arguments of the function call the upstream made: the
 * gateway presents a custom tool as a function with one string parameter, `input`, so the upstream
 * answers `{"input": "<JSON string>"}`, in fragments. `make` decodes the string value as the fragments
 * arrive, so that the input streams (`response.custom_tool_call_input.delta`) rather than arriving whole.
 *
 * @internal
 */
import { ChatCompletionsRequest } from "@effect-responses/chat-completions"

/**
 * The opening of the arguments up to the value, `{"input": "`, token by token (whitespace allowed where
 * JSON allows it), built from the parameter's name (`ChatCompletionsRequest.CUSTOM_TOOL_INPUT`).
 */
const OPENING_TOKENS: ReadonlyArray<string> = [
  "\\{\\s*",
  "\"",
  ...[...ChatCompletionsRequest.CUSTOM_TOOL_INPUT].map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")),
  "\"\\s*",
  ":\\s*",
  "\""
]

/** The whole opening. */
const OPENING = new RegExp(`^\\s*${OPENING_TOKENS.join("")}`)

/** Any beginning of the opening (each token optional once the ones before it are there), and nothing more. */
const OPENING_PREFIX = new RegExp(`^\\s*${OPENING_TOKENS.reduceRight((rest, token) => `(${token}${rest})?`, "")}$`)

/**
 * An incremental reader of `{"input": "…"}`: `feed` takes the next fragment of the arguments and returns
 * the newly decoded input text (`""` when none). The whole input, once the arguments are complete, is
 * `ChatCompletionsLanguageModel.customToolInput` of them (which also reads arguments this reader gives up
 * on: another parameter name, the input written bare).
 *
 * Each returned text is well-formed UTF-16 where the input is: a high surrogate that ends the decoded text
 * while the string is still open (`\ud83d` escaped, as Python's `json.dumps` writes a non-BMP character, or
 * literal) is held back and returned with the next fragment's text, so that a fragment boundary inside
 * `\ud83d\ude00` never gives a delta holding half of the pair (which strict clients cannot encode). A lone
 * high surrogate the input itself holds comes out as it is once the next character or the closing quote
 * arrives; one held when the arguments end without their closing quote is not returned (the caller writes
 * the rest of the input, decoded whole, as the call completes).
 */
export const make = () => {
  // 0: before the value's opening quote; 1: inside the string; 2: after it (or given up)
  let state = 0
  let head = ""
  let pendingEscape = ""
  // a high surrogate that ended the text decoded last, waiting for its low half
  let heldSurrogate = ""
  const feed = (fragment: string): string => {
    let out = ""
    let i = 0
    if (state === 0) {
      head += fragment
      const match = OPENING.exec(head)
      if (match === null) {
        // not (yet) the expected opening: give up once it cannot become one
        if (head.length > 64 || !OPENING_PREFIX.test(head)) state = 2
        return ""
      }
      state = 1
      fragment = head.slice(match[0].length)
      head = ""
    }
    if (state !== 1) return ""
    let text = pendingEscape + fragment
    pendingEscape = ""
    for (i = 0; i < text.length; i++) {
      const c = text[i]!
      if (c === "\"") {
        state = 2
        break
      }
      if (c !== "\\") {
        out += c
        continue
      }
      const next = text[i + 1]
      if (next === undefined) {
        pendingEscape = text.slice(i)
        break
      }
      if (next === "u") {
        if (i + 6 > text.length) {
          pendingEscape = text.slice(i)
          break
        }
        out += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16))
        i += 5
        continue
      }
      out += ESCAPES[next] ?? next
      i++
    }
    text = ""
    if (heldSurrogate !== "") {
      out = heldSurrogate + out
      heldSurrogate = ""
    }
    if (state === 1 && out.length > 0 && isHighSurrogate(out.charCodeAt(out.length - 1))) {
      heldSurrogate = out.slice(-1)
      out = out.slice(0, -1)
    }
    return out
  }
  return { feed }
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

const ESCAPES: { readonly [c: string]: string } = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", "/": "/", "\\": "\\", "\"": "\"" }
