/**
 * Recorded Chat Completions streams ("chat captures") read from a file: raw SSE as it came off the wire
 * (`data:` frames, `data: [DONE]`), or line-JSON, one `chat.completion.chunk` per line, as in vercel/ai's
 * `*.chunks.txt` recordings. A capture may hold several consecutive
 * responses: one ends at `[DONE]`, or where a chunk with a choice and a non-empty `id` other than the
 * response's follows a chunk carrying a finish reason (the rule `ChatCompletionsStream` follows; a chunk of
 * the same id, or of an empty one, after the finish reason is the same response's: OpenRouter's and
 * LiteLLM's usage chunks, Azure's asynchronous content filter results). Chunks before the first response's
 * id (Azure's `prompt_filter_results` chunk) belong to the response after them.
 *
 * @since 0.1.0
 */
import * as CaptureFile from "@effect-responses/wire/CaptureFile"
import { arrayField, isObject, type JsonObject, numberField, objectField, stringField } from "@effect-responses/wire/Json"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { eventData, fieldData } from "./internal/decoder.js"

/**
 * A chat capture could not be read: the file is missing or unreadable, empty, holds malformed JSON, or
 * holds no chunk. `source` names the file, `line` (1-based) the line at fault when there is one.
 *
 * @since 0.1.0
 * @category errors
 */
export class ChatCaptureError
  extends Schema.TaggedError<ChatCaptureError>("@effect-responses/chat-completions/ChatCaptureError")("ChatCaptureError", {
    source: Schema.String,
    line: Schema.optionalWith(Schema.Number, { exact: true }),
    description: Schema.String
  })
{
  override get message(): string {
    return `${this.source}${this.line === undefined ? "" : `:${this.line}`}: ${this.description}`
  }
}

/**
 * One chunk of a capture: its JSON text as recorded (`data`), the parsed object, and the 1-based line of
 * the file where its data starts.
 *
 * @since 0.1.0
 * @category models
 */
export interface CapturedChunk {
  readonly data: string
  readonly json: JsonObject
  readonly line: number
}

/**
 * One recorded response: its chunks (without `[DONE]`) and its id (the first non-empty chunk id, `""` when
 * none has one).
 *
 * Of a raw SSE capture (since 0.2.0), `frames` holds the response as the server sent it, each frame's SSE
 * text in order: its chunks, the named events the stream decoder reads (`event: ping`, `event: error`, a
 * chunk under another event name), a line of llama.cpp's `error: {json}` field, and `data: [DONE]` when the
 * capture has it after the response; `toSse` serves them. `error` is the error object (`{"message",
 * "code"}`, as the server sent it) of an `event: error` or `error:` line, which ends the response as it
 * ends the live stream: a response may hold such an error and no chunk (llama.cpp's refusal of a request
 * before any output). Line-JSON captures have neither.
 *
 * @since 0.1.0
 * @category models
 */
export interface CapturedChatResponse {
  readonly id: string
  readonly chunks: ReadonlyArray<CapturedChunk>
  readonly frames?: ReadonlyArray<string>
  readonly error?: JsonObject
}

/**
 * A chat capture: its source (a file name) and its responses in recorded order.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatCapture {
  readonly source: string
  readonly responses: ReadonlyArray<CapturedChatResponse>
}

/**
 * The function call a recorded response made: call id, name and the arguments joined from their fragments.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

const makeError = (fields: CaptureFile.ErrorFields): ChatCaptureError => new ChatCaptureError(fields)

/** The field of its own a Chat Completions server may send (llama.cpp's `error: {json}`). */
const FIELDS = ["error"]

const choiceZero = (chunk: JsonObject): JsonObject | undefined => {
  for (const choice of arrayField(chunk, "choices") ?? []) {
    if (isObject(choice) && (numberField(choice, "index") ?? 0) === 0) return choice
  }
  return undefined
}

/** The SSE text of a frame as the server sent it (comments and `id:` left out: the decoder ignores them). */
const frameSse = (frame: CaptureFile.Frame): string => {
  if (frame.field !== undefined) return `${frame.field}: ${frame.data}\n\n`
  const data = frame.data.split("\n").map((line) => `data: ${line}\n`).join("")
  return `${frame.event === undefined ? "" : `event: ${frame.event}\n`}${data}\n`
}

/**
 * The error object a frame stands for when the stream decoder fails on it (`event: error`, or llama.cpp's
 * `error: {json}` line), read as the decoder reads it; `undefined` for any other frame.
 */
const errorOf = (frame: CaptureFile.Frame): JsonObject | undefined => {
  const payload = frame.field !== undefined
    ? fieldData(frame.field, frame.data)
    : frame.event === "error"
    ? eventData(frame.event, frame.data)
    : undefined
  if (payload === undefined) return undefined
  const json: unknown = JSON.parse(payload)
  if (!isObject(json)) return undefined
  return isObject(json.error) ? json.error : { message: typeof json.error === "string" ? json.error : payload }
}

/**
 * Parses the text of a chat capture. `source` names it in errors.
 *
 * Fails with `ChatCaptureError` when the text is empty, a frame is not a JSON object (naming the line and
 * an excerpt), or it holds no response (no chunk with an id or a choice, and no error).
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (text: string, source: string): Effect.Effect<ChatCapture, ChatCaptureError> =>
  Effect.suspend(() => {
    if (text.trim() === "") return Effect.fail(new ChatCaptureError({ source, description: "the capture is empty" }))
    const sse = CaptureFile.isSse(text, FIELDS)
    const frames = CaptureFile.frames(text, FIELDS)
    type Building = { id: string; chunks: Array<CapturedChunk>; frames?: Array<string>; error?: JsonObject; done?: true }
    const responses: Array<Building> = []
    let current: Building | undefined
    let finished = false
    let pending: Array<CapturedChunk> = []
    let pendingFrames: Array<string> = []
    const open = (id: string): Building => {
      const response: Building = { id, chunks: pending }
      if (sse) response.frames = pendingFrames
      pending = []
      pendingFrames = []
      finished = false
      responses.push(response)
      return response
    }
    for (const frame of frames) {
      if (frame.data === "[DONE]" && frame.field === undefined) {
        const last = responses[responses.length - 1]
        if (last !== undefined && last.done === undefined) {
          last.frames?.push(frameSse(frame))
          last.done = true
        }
        current = undefined
        continue
      }
      if (frame.event === "ping") {
        ;(current?.frames ?? pendingFrames).push(frameSse(frame))
        continue
      }
      if (frame.event === "error" || frame.field !== undefined) {
        const error = errorOf(frame)
        if (error === undefined) continue
        const response = current ?? open("")
        response.frames?.push(frameSse(frame))
        response.error = error
        current = undefined
        continue
      }
      const parsed = CaptureFile.parseJson(frame, source, makeError)
      if (Either.isLeft(parsed)) return Effect.fail(parsed.left)
      const json = parsed.right
      if (!isObject(json)) {
        return Effect.fail(
          new ChatCaptureError({
            source,
            line: frame.line,
            description: `not a chunk (a JSON object): ${CaptureFile.excerpt(frame.data)}`
          })
        )
      }
      const chunk: CapturedChunk = { data: frame.data, json, line: frame.line }
      const choice = choiceZero(json)
      const id = stringField(json, "id") ?? ""
      if (current !== undefined && finished && choice !== undefined && id !== "" && id !== current.id) current = undefined
      if (current === undefined) {
        if (choice === undefined && id === "") {
          pending.push(chunk)
          pendingFrames.push(frameSse(frame))
          continue
        }
        current = open(id)
      }
      if (current.id === "" && id !== "") current.id = id
      current.chunks.push(chunk)
      current.frames?.push(frameSse(frame))
      const reason = choice?.finish_reason
      if (reason !== undefined && reason !== null && reason !== "") finished = true
    }
    if (responses.length === 0) {
      return Effect.fail(
        new ChatCaptureError({ source, description: "the capture holds no chunk with an id or a choice, and no error" })
      )
    }
    return Effect.succeed({
      source,
      responses: responses.map(({ done: _, ...response }): CapturedChatResponse => response)
    })
  })

/**
 * Reads and parses the chat capture file at `path`. Fails with `ChatCaptureError` when the file cannot be
 * read (missing, a directory, no permission) or does not parse (see `parse`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (path: string): Effect.Effect<ChatCapture, ChatCaptureError, FileSystem.FileSystem> =>
  Effect.flatMap(CaptureFile.readText(path, makeError), (text) => parse(text, path))

/**
 * The SSE wire body of a captured response: its `frames` as the server sent them when the capture was raw
 * SSE (named events and llama.cpp's `error:` lines included, `data: [DONE]` only when recorded: the stream
 * a live client read); else (line-JSON) one `data:` frame per chunk, then `data: [DONE]`, as OpenAI sends
 * it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const toSse = (response: CapturedChatResponse): string =>
  response.frames !== undefined
    ? response.frames.join("")
    : `${response.chunks.map((chunk) => `data: ${chunk.data}\n\n`).join("")}data: [DONE]\n\n`

/**
 * The model name of a captured response: the first non-empty chunk `model`, or `""`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const modelOf = (response: CapturedChatResponse): string => {
  for (const chunk of response.chunks) {
    const model = stringField(chunk.json, "model")
    if (model !== undefined && model !== "") return model
  }
  return ""
}

interface Assembled {
  content: Array<string>
  refusal: Array<string>
  reasoning: Array<string>
  readonly calls: Array<{ id: string; name: string; arguments: Array<string>; extraContent?: unknown }>
  finishReason: unknown
  usage: unknown
}

const assemble = (response: CapturedChatResponse): Assembled => {
  const out: Assembled = { content: [], refusal: [], reasoning: [], calls: [], finishReason: null, usage: null }
  const byIndex = new Map<number, { id: string; name: string; arguments: Array<string>; extraContent?: unknown }>()
  for (const chunk of response.chunks) {
    if (isObject(chunk.json.usage)) out.usage = chunk.json.usage
    const choice = choiceZero(chunk.json)
    if (choice === undefined) continue
    const reason = choice.finish_reason
    if (reason !== null && reason !== undefined && reason !== "") out.finishReason = reason
    const delta = objectField(choice, "delta")
    if (delta === undefined) continue
    if (typeof delta.content === "string") out.content.push(delta.content)
    if (typeof delta.refusal === "string") out.refusal.push(delta.refusal)
    if (typeof delta.reasoning_content === "string") out.reasoning.push(delta.reasoning_content)
    const calls = arrayField(delta, "tool_calls") ?? []
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]
      if (!isObject(call)) continue
      const index = numberField(call, "index") ?? i
      const fn = objectField(call, "function")
      let slot = byIndex.get(index)
      if (slot === undefined) {
        slot = { id: "", name: "", arguments: [] }
        byIndex.set(index, slot)
        out.calls.push(slot)
      }
      const id = stringField(call, "id")
      if (id !== undefined && id !== "") slot.id = id
      const name = fn && stringField(fn, "name")
      if (name !== undefined && name !== "" && slot.name === "") slot.name = name
      const args = fn && stringField(fn, "arguments")
      if (args !== undefined) slot.arguments.push(args)
      if (isObject(call.extra_content)) slot.extraContent = call.extra_content
    }
  }
  return out
}

/**
 * The function calls a captured response made, in `index` order of first appearance.
 *
 * @since 0.1.0
 * @category accessors
 */
export const toolCalls = (response: CapturedChatResponse): ReadonlyArray<RecordedToolCall> =>
  assemble(response).calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments.join("") }))

/**
 * The text (`content` deltas joined) of a captured response.
 *
 * @since 0.1.0
 * @category accessors
 */
export const text = (response: CapturedChatResponse): string => assemble(response).content.join("")

/**
 * The `chat.completion` body the captured stream stands for (the non-streaming answer): `id`, `model`,
 * `created`, one choice with the assistant message (content, refusal, `reasoning_content` when present,
 * `tool_calls`, each with its `extra_content` when the stream gave one) and its finish reason, and the usage.
 *
 * @since 0.1.0
 * @category encoding
 */
export const toCompletion = (response: CapturedChatResponse): JsonObject => {
  const assembled = assemble(response)
  const created = response.chunks.map((chunk) => numberField(chunk.json, "created")).find((n) => n !== undefined && n > 0)
  const message: Record<string, unknown> = {
    role: "assistant",
    content: assembled.content.length === 0 && assembled.calls.length > 0 ? null : assembled.content.join(""),
    refusal: assembled.refusal.length === 0 ? null : assembled.refusal.join("")
  }
  if (assembled.reasoning.length > 0) message.reasoning_content = assembled.reasoning.join("")
  if (assembled.calls.length > 0) {
    message.tool_calls = assembled.calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments.join("") },
      ...(call.extraContent === undefined ? {} : { extra_content: call.extraContent })
    }))
  }
  return {
    id: response.id,
    object: "chat.completion",
    created: created ?? 0,
    model: modelOf(response),
    choices: [{ index: 0, message, logprobs: null, finish_reason: assembled.finishReason }],
    usage: assembled.usage
  }
}
