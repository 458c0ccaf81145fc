/**
 * The content of input messages: system and developer text, user parts (text, images, files), assistant
 * text and refusals, function call outputs, and the item attributes (`id`, `status`, `phase`).
 *
 * @internal
 */
import { Part } from "@effect-responses/core"
import { isObject, type JsonObject, stringField } from "@effect-responses/wire/Json"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { FileInput } from "../../ResponsesRequestDecoder.js"
import { fail, Nullable, type RequestError } from "./common.js"

/** An input message item. */
export const MessageInput = Schema.Struct({
  role: Schema.Literal("user", "assistant", "system", "developer"),
  content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown)),
  id: Nullable(Schema.String),
  status: Nullable(Schema.String),
  phase: Nullable(Schema.String)
})

export interface ItemAttributes {
  readonly id?: string | null | undefined
  readonly status?: string | null | undefined
  readonly phase?: string | null | undefined
}

export const attributes = (item: ItemAttributes): Part.Attributes => {
  const out: { itemId?: string; status?: string; phase?: string } = {}
  if (typeof item.id === "string") out.itemId = item.id
  if (typeof item.status === "string") out.status = item.status
  if (typeof item.phase === "string") out.phase = item.phase
  return out
}

const contentPart = (content: ReadonlyArray<unknown>, index: number, at: number) => {
  const part = content[at]
  return isObject(part) && typeof part.type === "string"
    ? Effect.succeed(part as JsonObject & { readonly type: string })
    : fail("Each content part must be an object with a string 'type'.", `input[${index}].content[${at}]`, "invalid_type")
}

const textOf = (part: JsonObject, index: number, at: number): Effect.Effect<string, RequestError> =>
  typeof part.text === "string"
    ? Effect.succeed(part.text)
    : fail("Missing required parameter: 'text'.", `input[${index}].content[${at}].text`, "missing_required_parameter")

export const systemText = (content: string | ReadonlyArray<unknown>, index: number): Effect.Effect<string, RequestError> =>
  Effect.gen(function*() {
    if (typeof content === "string") return content
    const texts: Array<string> = []
    for (let at = 0; at < content.length; at++) {
      const part = yield* contentPart(content, index, at)
      if (part.type !== "input_text" && part.type !== "text") {
        return yield* fail(
          `Invalid content type ${part.type} in a system or developer message: only input_text is allowed.`,
          `input[${index}].content[${at}].type`,
          "invalid_value"
        )
      }
      texts.push(yield* textOf(part, index, at))
    }
    return texts.join("\n")
  })

const DATA_URL = /^data:([^;,]+)?((?:;[^;,]*)*?);base64,(.*)$/s

const parseDataUrl = (url: string): { readonly mediaType: string | undefined; readonly data: string } | undefined => {
  const match = DATA_URL.exec(url)
  return match === null ? undefined : { mediaType: match[1], data: match[3] ?? "" }
}

const IMAGE_TYPES: { readonly [extension: string]: string } = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp"
}

/** The media type of an image given by URL, from its extension; `image/*` when it says nothing. */
const imageTypeOfUrl = (url: string): string => {
  const path = url.split(/[?#]/)[0] ?? ""
  const extension = path.slice(path.lastIndexOf(".") + 1).toLowerCase()
  return IMAGE_TYPES[extension] ?? "image/*"
}

const fileTypeOfName = (filename: string | undefined): string =>
  filename !== undefined && filename.toLowerCase().endsWith(".pdf") ? "application/pdf" : "application/octet-stream"

export const userParts = (
  content: string | ReadonlyArray<unknown>,
  index: number,
  inputFiles: ReadonlyArray<FileInput>
): Effect.Effect<ReadonlyArray<Part.UserPart>, RequestError> =>
  Effect.gen(function*() {
    if (typeof content === "string") return [new Part.TextPart({ text: content })]
    const parts: Array<Part.UserPart> = []
    for (let at = 0; at < content.length; at++) {
      const part = yield* contentPart(content, index, at)
      const where = `input[${index}].content[${at}]`
      switch (part.type) {
        case "input_text": {
          parts.push(new Part.TextPart({ text: yield* textOf(part, index, at) }))
          break
        }
        case "input_image": {
          const detail = stringField(part, "detail")
          const url = stringField(part, "image_url")
          const fileId = stringField(part, "file_id")
          const common = detail === undefined ? {} : { detail }
          if (url !== undefined) {
            const inline = parseDataUrl(url)
            parts.push(
              inline === undefined
                ? new Part.MediaPart({ mediaType: imageTypeOfUrl(url), url, ...common })
                : new Part.MediaPart({ mediaType: inline.mediaType ?? "image/png", data: inline.data, ...common })
            )
          } else if (fileId !== undefined) {
            parts.push(new Part.MediaPart({ mediaType: "image/*", fileId, ...common }))
          } else {
            return yield* fail("An input_image needs 'image_url' or 'file_id'.", `${where}.image_url`, "missing_required_parameter")
          }
          break
        }
        case "input_file": {
          const filename = stringField(part, "filename")
          const fileData = stringField(part, "file_data")
          const fileUrl = stringField(part, "file_url")
          const fileId = stringField(part, "file_id")
          const named = filename === undefined ? {} : { filename }
          if (fileData !== undefined) {
            if (!inputFiles.includes("data")) return yield* unsupportedFile(`${where}.file_data`, "inline file_data")
            const inline = parseDataUrl(fileData)
            parts.push(
              new Part.MediaPart({
                mediaType: inline?.mediaType ?? fileTypeOfName(filename),
                data: inline?.data ?? fileData,
                ...named
              })
            )
          } else if (fileUrl !== undefined) {
            if (!inputFiles.includes("url")) return yield* unsupportedFile(`${where}.file_url`, "a file_url")
            parts.push(new Part.MediaPart({ mediaType: fileTypeOfName(filename ?? fileUrl), url: fileUrl, ...named }))
          } else if (fileId !== undefined) {
            if (!inputFiles.includes("id")) return yield* unsupportedFile(`${where}.file_id`, "a file_id")
            parts.push(new Part.MediaPart({ mediaType: fileTypeOfName(filename), fileId, ...named }))
          } else {
            return yield* fail(
              "An input_file needs 'file_data', 'file_url' or 'file_id'.",
              `${where}.file_data`,
              "missing_required_parameter"
            )
          }
          break
        }
        default:
          return yield* fail(
            `Unsupported content type in a user message: ${part.type}.`,
            `${where}.type`,
            "unsupported_value"
          )
      }
    }
    return parts
  })

const unsupportedFile = (param: string, what: string) =>
  fail(`The upstream of this gateway cannot take an input_file given as ${what}.`, param, "unsupported_value")

export const assistantPart = (
  message: typeof MessageInput.Type,
  index: number
): Effect.Effect<Part.AssistantPart, RequestError> =>
  Effect.gen(function*() {
    const attrs = attributes(message)
    if (typeof message.content === "string") return new Part.TextPart({ text: message.content, attributes: attrs })
    const texts: Array<string> = []
    const refusals: Array<string> = []
    for (let at = 0; at < message.content.length; at++) {
      const part = yield* contentPart(message.content, index, at)
      switch (part.type) {
        case "output_text":
        case "input_text":
          texts.push(yield* textOf(part, index, at))
          break
        case "refusal": {
          const refusal = stringField(part, "refusal")
          if (refusal === undefined) {
            return yield* fail("Missing required parameter: 'refusal'.", `input[${index}].content[${at}].refusal`, "missing_required_parameter")
          }
          refusals.push(refusal)
          break
        }
        default:
          return yield* fail(
            `Unsupported content type in an assistant message: ${part.type}.`,
            `input[${index}].content[${at}].type`,
            "unsupported_value"
          )
      }
    }
    return texts.length === 0 && refusals.length > 0
      ? new Part.RefusalPart({ text: refusals.join(""), attributes: attrs })
      : new Part.TextPart({ text: texts.join(""), attributes: attrs })
  })

export const outputText = (output: ReadonlyArray<unknown>, index: number): Effect.Effect<string, RequestError> =>
  Effect.gen(function*() {
    const texts: Array<string> = []
    for (let at = 0; at < output.length; at++) {
      const part = output[at]
      if (!isObject(part) || (part.type !== "input_text" && part.type !== "output_text") || typeof part.text !== "string") {
        return yield* fail(
          "The upstream of this gateway takes function call outputs as text only (input_text content).",
          `input[${index}].output[${at}]`,
          "unsupported_value"
        )
      }
      texts.push(part.text)
    }
    return texts.join("")
  })
