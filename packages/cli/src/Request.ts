/**
 * `effect-responses request FILE|- [--model M] [--stream]` (options before or after the file; see
 * `Cli.normalizeArgs` for `-`): a `Prompt` in the JSON encoding of `core`
 * (`{"messages":[…]}`) -> the body of the Responses request it becomes (`ResponsesRequest.fromPrompt`),
 * pretty-printed on standard output. Nothing is sent.
 *
 * A bad input fails with one line naming the input and what is wrong: not JSON, the path of the first
 * field that does not match the prompt's schema (`messages[1].parts[0].mediaType: is missing`), or why the
 * prompt cannot be sent (`InvalidPrompt`).
 *
 * @since 0.1.0
 */
import { type AiError, Prompt } from "@effect-responses/core"
import { ResponsesRequest } from "@effect-responses/responses"
import * as Command from "@effect/cli/Command"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Commands from "./internal/commands.js"
import * as Defaults from "./internal/defaults.js"

/**
 * The input of `request` cannot become a request body. `source` is the file (or `<stdin>`); the message is
 * one line, `source: description`.
 *
 * @since 0.1.0
 * @category errors
 */
export class RequestInputError extends Schema.TaggedError<RequestInputError>("@effect-responses/cli/RequestInputError")("RequestInputError", {
  source: Schema.String,
  description: Schema.String
}) {
  override get message(): string {
    return `${this.source}: ${this.description}`
  }
}

/**
 * The model a body names when `--model` is not given.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MODEL: string = Defaults.DEFAULT_MODEL

/**
 * A parse issue's path as a JSON path: `messages[1].parts[0].mediaType`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`,
    ""
  )

/**
 * The request body of the prompt in `text` (JSON), with `options.model` and, when `options.stream`,
 * `stream: true` as `ResponsesClient.createStream` sends it. Fails with `RequestInputError` naming `source`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const requestBody = (
  text: string,
  source: string,
  options: { readonly model: string; readonly stream?: boolean | undefined }
): Effect.Effect<ResponsesRequest.RequestBody, RequestInputError> =>
  Effect.gen(function*() {
    const fail = (description: string) => new RequestInputError({ source, description })
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) => fail(`not JSON: ${error instanceof Error ? error.message : String(error)}`)
    })
    const prompt = yield* Prompt.decodeUnknown(json).pipe(
      Effect.mapError((error) => {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
        if (issue === undefined) return fail("not a prompt")
        const path = formatPath(issue.path)
        return fail(`not a prompt: ${path === "" ? "" : `${path}: `}${issue.message.replace(/\s+/g, " ")}`)
      })
    )
    if (prompt.messages.length === 0) return yield* fail("invalid prompt: no messages, nothing to ask")
    const body = yield* ResponsesRequest.fromPrompt(prompt, { model: options.model }).pipe(
      Effect.mapError((error: AiError.InvalidPrompt) => fail(error.message))
    )
    return options.stream === true ? { ...body, stream: true } : body
  })

const STDIN = "<stdin>"

const readText = (input: string): Effect.Effect<string, RequestInputError, FileSystem.FileSystem> =>
  input === "-"
    ? NodeStream.toString(() => process.stdin, {
      onFailure: (error) => new RequestInputError({ source: STDIN, description: `cannot read (${String(error)})` })
    })
    : Effect.flatMap(FileSystem.FileSystem, (fs) =>
      fs.readFileString(input).pipe(
        Effect.mapError((error) =>
          new RequestInputError({
            source: input,
            description: error._tag === "SystemError" && error.reason === "NotFound"
              ? "no such file"
              : `cannot read the file (${error.message})`
          })
        )
      ))

/**
 * The `request` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Commands.request.pipe(
  Command.withHandler(({ input, model, stream }) =>
    Effect.gen(function*() {
      const text = yield* readText(input)
      const body = yield* requestBody(text, input === "-" ? STDIN : input, { model, stream })
      yield* Effect.sync(() => process.stdout.write(`${JSON.stringify(body, null, 2)}\n`))
    })
  )
)
