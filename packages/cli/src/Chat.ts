/**
 * `effect-responses chat [PROMPT] [--replay FILE] [--model M] [--requests-out FILE] [--protocol P]`: the main
 * job, a tool-calling conversation with the demo calculator, streamed to the terminal.
 *
 * `--protocol responses` (the default) speaks `POST /v1/responses`; `--protocol chat-completions` speaks
 * `POST /v1/chat/completions` (then `--replay FILE` is a chat capture, served by a loopback
 * `ChatReplayServer`; there is no embedded chat recording).
 *
 * Where the model is:
 * - `--replay FILE`: a loopback replay server on 127.0.0.1 (random free port) answering from the capture
 *   FILE (raw SSE or line-JSON), reached over real HTTP;
 * - else, with `OPENAI_API_KEY` set: the live API (or `OPENAI_BASE_URL`);
 * - else: the embedded default, the replay of the recorded session of `Demo.recordingPath`, which checks
 *   that every calculator result sent back is right.
 *
 * @since 0.1.0
 */
import { ChatCapture, ChatReplayServer } from "@effect-responses/chat-completions"
import { Prompt } from "@effect-responses/core"
import { Capture, ReplayServer, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ToolLoop } from "@effect-responses/tools"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { createServer } from "node:http"
import * as Demo from "./Demo.js"
import * as Protocol from "./Protocol.js"
import * as Render from "./Render.js"

/**
 * The chat command cannot start: nothing to replay and no API key, or an output file it cannot write.
 *
 * @since 0.1.0
 * @category errors
 */
export class ChatSetupError extends Schema.TaggedError<ChatSetupError>()("ChatSetupError", {
  description: Schema.String
}) {
  override get message(): string {
    return this.description
  }
}

/**
 * Where `chat` sends its requests.
 *
 * @since 0.1.0
 * @category models
 */
export type Target =
  | { readonly _tag: "Replay"; readonly capture: Capture.Capture; readonly embedded: boolean }
  | { readonly _tag: "ChatReplay"; readonly capture: ChatCapture.ChatCapture }
  | { readonly _tag: "Live"; readonly apiKey: Redacted.Redacted; readonly baseUrl: string }

/**
 * Decides where `chat` sends its requests (see the module doc). Fails with `CaptureError` (or
 * `ChatCaptureError` for `chat-completions`) for a capture that cannot be read, `ChatSetupError` when there is
 * nothing to replay and no key.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolveTarget = (
  replay: Option.Option<string>,
  recording: string = Demo.recordingPath,
  protocol: Protocol.Protocol = "responses"
) =>
  Effect.gen(function*() {
    if (Option.isSome(replay)) {
      return protocol === "chat-completions"
        ? { _tag: "ChatReplay", capture: yield* ChatCapture.load(replay.value) } as const
        : { _tag: "Replay", capture: yield* Capture.load(replay.value), embedded: false } as const
    }
    const apiKey = yield* Config.option(Config.redacted("OPENAI_API_KEY"))
    if (Option.isSome(apiKey) && Redacted.value(apiKey.value) !== "") {
      const baseUrl = yield* Config.string("OPENAI_BASE_URL").pipe(Config.withDefault(ResponsesClient.DEFAULT_BASE_URL))
      return { _tag: "Live", apiKey: apiKey.value, baseUrl } as const
    }
    if (protocol === "chat-completions") {
      return yield* new ChatSetupError({
        description: "there is no embedded Chat Completions recording: pass --replay FILE (a recorded Chat " +
          "Completions stream) or set OPENAI_API_KEY to talk to the live API."
      })
    }
    const fs = yield* FileSystem.FileSystem
    if (!(yield* Effect.orElseSucceed(fs.exists(recording), () => false))) {
      return yield* new ChatSetupError({
        description:
          `no recording to replay: ${recording} is missing (the shared/ folder is not beside this checkout). ` +
          "Pass --replay FILE (a recorded Responses stream) or set OPENAI_API_KEY to talk to the live API."
      })
    }
    return { _tag: "Replay", capture: yield* Capture.load(recording), embedded: true } as const
  })

const modelOf = (capture: Capture.Capture): string => {
  const created = capture.responses[0]?.events[0]?.json.response as { model?: unknown } | undefined
  return typeof created?.model === "string" ? created.model : "recorded"
}

/**
 * An `HttpClient` layer that appends every request body it sends to `path` as JSON Lines.
 */
const recordingHttpClient = (path: string) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      yield* fs.writeFileString(path, "").pipe(
        Effect.mapError((e) => new ChatSetupError({ description: `cannot write --requests-out ${path}: ${e.message}` }))
      )
      const client = yield* HttpClient.HttpClient
      return HttpClient.tapRequest(client, (request) =>
        request.body._tag === "Uint8Array"
          ? fs.writeFileString(path, `${new TextDecoder().decode(request.body.body)}\n`, { flag: "a" }).pipe(
            Effect.orDie
          )
          : Effect.void)
    })
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))

/**
 * Runs one chat: the tool loop over the target, rendered to `write`. Returns the final text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (options: {
  readonly prompt: string
  readonly target: Target
  readonly model: Option.Option<string>
  readonly requestsOut: Option.Option<string>
  readonly write: (text: string) => Effect.Effect<void>
  readonly style: Render.Style
  readonly protocol?: Protocol.Protocol | undefined
}) =>
  Effect.gen(function*() {
    const { target } = options
    const protocol = target._tag === "ChatReplay" ? "chat-completions" : options.protocol ?? "responses"
    const httpClient = Option.match(options.requestsOut, {
      onNone: () => NodeHttpClient.layerUndici,
      onSome: recordingHttpClient
    })
    const client = target._tag === "Live" || target._tag === "ChatReplay"
      ? ResponsesClient.layer(target._tag === "Live" ? { apiKey: target.apiKey, baseUrl: target.baseUrl } : {})
      : Layer.unwrapEffect(
        Effect.map(ReplayServer.ReplayServer, (server) => ResponsesClient.layer({ baseUrl: server.baseUrl }))
      ).pipe(
        Layer.provide(
          ReplayServer.layer({
            capture: target.capture,
            validate: target.embedded ? Demo.validateResults : undefined
          })
        ),
        Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    const model = Option.getOrElse(
      options.model,
      () =>
        target._tag === "Replay"
          ? modelOf(target.capture)
          : target._tag === "ChatReplay"
          ? ChatCapture.modelOf(target.capture.responses[0]!) || "recorded"
          : protocol === "chat-completions"
          ? "gpt-4o-mini"
          : "gpt-5.1"
    )
    const languageModel = protocol === "responses"
      ? ResponsesLanguageModel.layer({
        model,
        reasoning: { effort: "medium", summary: "auto" }
      }).pipe(Layer.provide(client), Layer.provide(httpClient))
      : target._tag === "ChatReplay"
      ? Layer.unwrapEffect(
        Effect.map(ChatReplayServer.ChatReplayServer, (server) =>
          Protocol.layer({ protocol, model, baseUrl: server.baseUrl }))
      ).pipe(
        Layer.provide(ChatReplayServer.layer({ capture: target.capture })),
        Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(httpClient)
      )
      : Protocol.layer({
        protocol,
        model,
        ...(target._tag === "Live" ? { apiKey: target.apiKey, baseUrl: target.baseUrl } : {})
      }).pipe(Layer.provide(httpClient))

    const renderer = Render.make(options.style)
    let finalText = ""
    yield* ToolLoop.stream(Prompt.user(options.prompt), { toolkit: Demo.CalculatorToolkit, maxSteps: 10 }).pipe(
      Stream.runForEach((event) => {
        if (event.type === "loop_finished") finalText = event.finalText
        const text = renderer.render(event)
        return text === "" ? Effect.void : options.write(text)
      }),
      Effect.ensuring(Effect.suspend(() => {
        const text = renderer.end()
        return text === "" ? Effect.void : options.write(text)
      })),
      Effect.provide(Demo.CalculatorToolkitLive),
      Effect.provide(languageModel)
    )
    return finalText
  }).pipe(Effect.scoped)

/**
 * The `chat` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "chat",
  {
    prompt: Args.text({ name: "PROMPT" }).pipe(
      Args.withDescription(`what to ask (default: "${Demo.defaultPrompt}")`),
      Args.optional
    ),
    replay: Options.text("replay").pipe(
      Options.withDescription("replay a capture of consecutive responses (raw SSE or line-JSON) on a loopback server"),
      Options.optional
    ),
    model: Options.text("model").pipe(Options.withDescription("the model to ask"), Options.optional),
    requestsOut: Options.text("requests-out").pipe(
      Options.withDescription("write every request body sent, as JSON Lines, to this file"),
      Options.optional
    ),
    protocol: Options.choice("protocol", ["responses", "chat-completions"]).pipe(
      Options.withDescription("the wire protocol: responses (POST /v1/responses) or chat-completions"),
      Options.withDefault("responses" as const)
    )
  },
  ({ model, prompt, protocol, replay, requestsOut }) =>
    Effect.gen(function*() {
      const target = yield* resolveTarget(replay, Demo.recordingPath, protocol)
      const write = (text: string) => Effect.sync(() => void process.stdout.write(text))
      yield* run({
        prompt: Option.getOrElse(prompt, () => Demo.defaultPrompt),
        target,
        model,
        requestsOut,
        write,
        style: process.stdout.isTTY ? Render.ansi : Render.plain,
        protocol
      })
    })
).pipe(Command.withDescription("a tool-calling conversation with a calculator, streamed to the terminal"))
