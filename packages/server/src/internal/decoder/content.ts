/**
 * The content of input messages: system and developer text, user parts (text, images, files), assistant
 * text and refusals, function call outputs, and the item attributes (`id`, `status`, `phase`). Parts are
 * built without validating them again (`promptObjects`, `new Part.X(props, true)`): every field is a string
 * checked here, and the check costs microseconds per part, which a request of many items multiplies. For the same
 * reason a helper takes the parts in one loop and returns an `Either` (no fiber step per content part); but a
 * message may hold as many parts as a request holds items (20,000 took 0.1-0.2 s at once), so the loop over a
 * long array runs in a generator that yields with the decoder's budget (`Cooperative`) every few milliseconds
 * (`eachPart`).
 *
 * @internal
 */
import { Part } from "@effect-responses/core"
import { isObject, type JsonObject, stringField } from "@effect-responses/wire/Json"
import { type Budget, yieldToIo } from "@effect-responses/wire/Cooperative"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { FileInput } from "../../ResponsesRequestDecoder.js"
import { jsonTypeOf, Nullable, RequestError } from "./common.js"
import * as Prompt from "./promptObjects.js"

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

/** The attributes of a part without any (shared: nothing writes to a part's attributes). */
export const NO_ATTRIBUTES: Part.Attributes = {}

export const attributes = (item: ItemAttributes): Part.Attributes => {
  const out: { itemId?: string; status?: string; phase?: string } = {}
  if (typeof item.id === "string") out.itemId = item.id
  if (typeof item.status === "string") out.status = item.status
  if (typeof item.phase === "string") out.phase = item.phase
  return out
}

/** A `RequestError` as the left of an `Either` (these helpers run synchronously, once per content part). */
const fail = (description: string, param: string, code: string): Either.Either<never, RequestError> =>
  Either.left(new RequestError({ description, param, code }))

/** The `RequestError` of `fail`, for the steps of `eachPart`. */
const failure = (description: string, param: string, code: string): RequestError =>
  new RequestError({ description, param, code })

const contentPart = (
  content: ReadonlyArray<unknown>,
  index: number,
  at: number
): Either.Either<JsonObject & { readonly type: string }, RequestError> => {
  const part = content[at]
  return isObject(part) && typeof part.type === "string"
    ? Either.right(part as JsonObject & { readonly type: string })
    : fail("Each content part must be an object with a string 'type'.", `input[${index}].content[${at}]`, "invalid_type")
}

/**
 * The error of a content part's string field `key` that is not a string, at `where` (`input[i].content[j]`):
 * missing (absent or `null`: "Missing required parameter: 'text'.") or of another type, in OpenAI's words
 * ("Invalid type for 'input[0].content[0].text': expected a string, but got a number instead.", code
 * `invalid_type`).
 */
const notAString = (part: JsonObject, key: string, where: string): RequestError => {
  const value = part[key]
  return value == null
    ? failure(`Missing required parameter: '${key}'.`, `${where}.${key}`, "missing_required_parameter")
    : wrongType(value, `${where}.${key}`)
}

/** "Invalid type for '<param>': expected a string, but got a number instead." (code `invalid_type`). */
const wrongType = (value: unknown, param: string): RequestError =>
  failure(
    `Invalid type for '${param}': expected a string, but got ${jsonTypeOf(value)} instead.`,
    param,
    "invalid_type"
  )

/** The error of an optional string field `key` of a part that is present (not `null`) and not a string. */
const optionalNotAString = (part: JsonObject, keys: ReadonlyArray<string>, where: string): RequestError | undefined => {
  for (const key of keys) {
    const value = part[key]
    if (value != null && typeof value !== "string") return wrongType(value, `${where}.${key}`)
  }
  return undefined
}

const textOf = (part: JsonObject, index: number, at: number): Either.Either<string, RequestError> =>
  typeof part.text === "string"
    ? Either.right(part.text)
    : Either.left(notAString(part, "text", `input[${index}].content[${at}]`))

export const systemText = (
  content: string | ReadonlyArray<unknown>,
  index: number,
  budget: Budget
): Effect.Effect<string, RequestError> => {
  if (typeof content === "string") return Either.right(content)
  const texts: Array<string> = []
  return eachPart(content.length, budget, (at) => {
    const part = contentPart(content, index, at)
    if (Either.isLeft(part)) return part.left
    const type = part.right.type
    if (type !== "input_text" && type !== "text") {
      return failure(
        `Invalid content type ${type} in a system or developer message: only input_text is allowed.`,
        `input[${index}].content[${at}].type`,
        "invalid_value"
      )
    }
    const text = textOf(part.right, index, at)
    if (Either.isLeft(text)) return text.left
    texts.push(text.right)
    return undefined
  }, () => texts.join("\n"))
}

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

/** How the upstream takes images and files: the ways of giving an `input_file`, and images by `file_id`. */
export interface MediaInputs {
  readonly files: ReadonlyArray<FileInput>
  readonly imageFileIds: boolean
}

/**
 * An `input_image` or `input_file` part (of a user message, or of a function call output) as a `MediaPart`;
 * `where` is its path (`input[i].content[j]`). A part of another type is `undefined`.
 */
const mediaPart = (
  part: JsonObject & { readonly type: string },
  where: string,
  media: MediaInputs
): Either.Either<Part.MediaPart, RequestError> | undefined => {
  const inputFiles = media.files
  switch (part.type) {
    case "input_image": {
      const wrong = optionalNotAString(part, ["image_url", "file_id", "detail"], where)
      if (wrong !== undefined) return Either.left(wrong)
      const detail = stringField(part, "detail")
      const url = stringField(part, "image_url")
      const fileId = stringField(part, "file_id")
      const common = detail === undefined ? {} : { detail }
      if (url !== undefined) {
        const inline = parseDataUrl(url)
        return Either.right(
          inline === undefined
            ? new Part.MediaPart({ mediaType: imageTypeOfUrl(url), url, ...common }, true)
            : new Part.MediaPart({ mediaType: inline.mediaType ?? "image/png", data: inline.data, ...common }, true)
        )
      }
      if (fileId !== undefined) {
        if (!media.imageFileIds) {
          return fail(
            "An input_image given by file_id cannot be sent: file ids need the Files API, which this gateway does not have. Send the image as image_url (a URL or a data URL).",
            `${where}.file_id`,
            "unsupported_value"
          )
        }
        return Either.right(new Part.MediaPart({ mediaType: "image/*", fileId, ...common }, true))
      }
      return fail("An input_image needs 'image_url' or 'file_id'.", `${where}.image_url`, "missing_required_parameter")
    }
    case "input_file": {
      const wrong = optionalNotAString(part, ["file_data", "file_url", "file_id", "filename"], where)
      if (wrong !== undefined) return Either.left(wrong)
      const filename = stringField(part, "filename")
      const fileData = stringField(part, "file_data")
      const fileUrl = stringField(part, "file_url")
      const fileId = stringField(part, "file_id")
      const named = filename === undefined ? {} : { filename }
      if (fileData !== undefined) {
        if (!inputFiles.includes("data")) return unsupportedFile(`${where}.file_data`, "inline file_data")
        const inline = parseDataUrl(fileData)
        return Either.right(
          new Part.MediaPart({
            mediaType: inline?.mediaType ?? fileTypeOfName(filename),
            data: inline?.data ?? fileData,
            ...named
          }, true)
        )
      }
      if (fileUrl !== undefined) {
        if (!inputFiles.includes("url")) return unsupportedFile(`${where}.file_url`, "a file_url")
        return Either.right(new Part.MediaPart({ mediaType: fileTypeOfName(filename ?? fileUrl), url: fileUrl, ...named }, true))
      }
      if (fileId !== undefined) {
        if (!inputFiles.includes("id")) return unsupportedFile(`${where}.file_id`, "a file_id")
        return Either.right(new Part.MediaPart({ mediaType: fileTypeOfName(filename), fileId, ...named }, true))
      }
      return fail(
        "An input_file needs 'file_data', 'file_url' or 'file_id'.",
        `${where}.file_data`,
        "missing_required_parameter"
      )
    }
    default:
      return undefined
  }
}

export const userParts = (
  content: string | ReadonlyArray<unknown>,
  index: number,
  media: MediaInputs,
  budget: Budget
): Effect.Effect<ReadonlyArray<Part.UserPart>, RequestError> => {
  if (typeof content === "string") return Either.right([Prompt.textPart(content, NO_ATTRIBUTES)])
  const parts: Array<Part.UserPart> = []
  return eachPart(content.length, budget, (at) => {
    const checked = contentPart(content, index, at)
    if (Either.isLeft(checked)) return checked.left
    const part = checked.right
    const where = `input[${index}].content[${at}]`
    if (part.type === "input_text") {
      const text = textOf(part, index, at)
      if (Either.isLeft(text)) return text.left
      parts.push(Prompt.textPart(text.right, NO_ATTRIBUTES))
      return undefined
    }
    const decoded = mediaPart(part, where, media)
    if (decoded === undefined) {
      return failure(`Unsupported content type in a user message: ${part.type}.`, `${where}.type`, "unsupported_value")
    }
    if (Either.isLeft(decoded)) return decoded.left
    parts.push(decoded.right)
    return undefined
  }, () => Prompt.copyOf(parts))
}

const unsupportedFile = (param: string, what: string): Either.Either<never, RequestError> =>
  fail(`The upstream of this gateway cannot take an input_file given as ${what}.`, param, "unsupported_value")

/**
 * The parts of an assistant message's content: its text (the `output_text` / `input_text` parts joined) and,
 * when it has `refusal` parts, their text as a `RefusalPart` after it (a Chat Completions upstream gets them
 * as the message's `content` and `refusal`); a message of refusals alone is that `RefusalPart` alone.
 */
export const assistantContent = (
  message: typeof MessageInput.Type,
  index: number,
  attrs: Part.Attributes,
  budget: Budget
): Effect.Effect<ReadonlyArray<Part.TextPart | Part.RefusalPart>, RequestError> => {
  const content = message.content
  if (typeof content === "string") return Either.right([Prompt.textPart(content, attrs)])
  const texts: Array<string> = []
  const refusals: Array<string> = []
  return eachPart(content.length, budget, (at) => {
    const checked = contentPart(content, index, at)
    if (Either.isLeft(checked)) return checked.left
    const part = checked.right
    switch (part.type) {
      case "output_text":
      case "input_text": {
        const text = textOf(part, index, at)
        if (Either.isLeft(text)) return text.left
        texts.push(text.right)
        return undefined
      }
      case "refusal": {
        const refusal = stringField(part, "refusal")
        if (refusal === undefined) return notAString(part, "refusal", `input[${index}].content[${at}]`)
        refusals.push(refusal)
        return undefined
      }
      default:
        return failure(
          `Unsupported content type in an assistant message: ${part.type}.`,
          `input[${index}].content[${at}].type`,
          "unsupported_value"
        )
    }
  }, () =>
    refusals.length === 0
      ? [Prompt.textPart(texts.join(""), attrs)]
      : texts.length === 0
      ? [Prompt.refusalPart(refusals.join(""), attrs)]
      : [Prompt.textPart(texts.join(""), attrs), Prompt.refusalPart(refusals.join(""), attrs)])
}

/**
 * The `output` list of a function (or custom tool) call output: its text parts (`input_text`,
 * `output_text`) joined, and its images and files (`input_image`, `input_file`), which a Chat Completions
 * tool message cannot hold (its content is text), as `MediaPart`s for a user message after the tool
 * messages (`decodeInput`).
 */
export const outputContent = (
  output: ReadonlyArray<unknown>,
  index: number,
  media: MediaInputs,
  budget: Budget
): Effect.Effect<{ readonly text: string; readonly media: ReadonlyArray<Part.MediaPart> }, RequestError> => {
  let text = ""
  const attached: Array<Part.MediaPart> = []
  return eachPart(output.length, budget, (at) => {
    const part = output[at]
    const where = `input[${index}].output[${at}]`
    if (!isObject(part) || typeof part.type !== "string") {
      return failure("Each content part must be an object with a string 'type'.", where, "invalid_type")
    }
    if (part.type === "input_text" || part.type === "output_text") {
      if (typeof part.text !== "string") return notAString(part, "text", where)
      text += part.text
      return undefined
    }
    const decoded = mediaPart(part as JsonObject & { readonly type: string }, where, media)
    if (decoded === undefined) {
      return failure(
        `Unsupported content type in a function call output: ${part.type} (input_text, input_image and input_file are).`,
        `${where}.type`,
        "unsupported_value"
      )
    }
    if (Either.isLeft(decoded)) return decoded.left
    attached.push(decoded.right)
    return undefined
  }, () => ({ text, media: attached }))
}

/** Arrays of at most this many parts are taken in one loop, without a yield (a message usually holds one to three). */
const SHORT_CONTENT = 64

/**
 * `step(at)` for every index of an array of `length` parts, in order, until one gives an error; then `done()`.
 * A short array in one loop (an `Either`: no fiber step); a longer one in a generator that yields with `budget`
 * every few milliseconds.
 */
const eachPart = <A>(
  length: number,
  budget: Budget,
  step: (at: number) => RequestError | undefined,
  done: () => A
): Effect.Effect<A, RequestError> => {
  if (length <= SHORT_CONTENT) {
    for (let at = 0; at < length; at++) {
      const error = step(at)
      if (error !== undefined) return Either.left(error)
    }
    return Either.right(done())
  }
  return Effect.gen(function*() {
    for (let at = 0; at < length; at++) {
      if (budget.tick()) yield* yieldToIo
      const error = step(at)
      if (error !== undefined) return yield* Either.left(error)
    }
    return done()
  })
}
