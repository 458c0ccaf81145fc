/**
 * `effect-responses chat [PROMPT] [--replay FILE] [--model M] [--requests-out FILE] [--protocol P]
 * [--replay-reasoning-content]`: the main job, a tool-calling conversation with the demo calculator, streamed
 * to the terminal.
 *
 * `--protocol responses` (the default) speaks `POST /v1/responses`; `--protocol chat-completions` speaks
 * `POST /v1/chat/completions` (then `--replay FILE` is a chat capture, served by a loopback
 * `ChatReplayServer`; there is no embedded chat recording). With `chat-completions`,
 * `--replay-reasoning-content` sends the model's reasoning back as `reasoning_content` on its assistant
 * messages (`ChatCompletionsRequest.RequestOptions.replayReasoningContent`), which DeepSeek's thinking mode
 * requires on the turns after a tool call; it is off by default (OpenAI refuses the field), and a 400 that
 * names `reasoning_content` without it prints a line naming the flag. With `responses` it is refused.
 *
 * Where the model is:
 * - `--replay FILE`: a loopback replay server on 127.0.0.1 (random free port) answering from the capture
 *   FILE (raw SSE or line-JSON), reached over real HTTP; a Responses capture gets the tools of
 *   `Demo.ReplayToolkit` (the calculator, the custom tool `evaluate`, `math.power` deferred in a namespace
 *   with OpenAI's hosted tool search beside it, `apply_patch` applied in a temporary directory, `shell` and
 *   `local_shell` as stand-ins that run nothing), so a capture of a custom, shell or apply_patch call, or of
 *   a namespaced call after a tool search, runs to its final answer; a capture whose model calls
 *   `apply_patch` as a freeform custom tool (Codex's, a whole V4A patch as raw text) gets
 *   `Demo.FreeformReplayToolkit`, the same tools with that `apply_patch` beside the built-in one, both
 *   applied in one temporary directory; its MCP approval requests are approved (`McpApprovals.approveAll`,
 *   said in the replay's notice on standard error);
 * - else, with `OPENAI_API_KEY` set: the live API (or `OPENAI_BASE_URL`);
 * - else: the embedded default, the replay of the recorded session of `Demo.recordingPath`, which checks
 *   that every calculator result sent back is right.
 *
 * A `--replay FILE` of the other protocol fails with the `--protocol` to pass, a JSON body with a pointer to
 * `aggregate` (`ChatSetupError`); a replay that runs out while the conversation goes on fails with
 * `ReplayEnded` (the responses it held, the tools the model asked for) rather than the replay server's HTTP
 * 400; any other failure of a replay is a `RecordingFailed` naming the recording.
 *
 * `--requests-out FILE` is created before anything is read or sent (a path that cannot be written is a
 * `ChatSetupError`); a write that fails later (a full disk, the file removed or replaced) is one warning,
 * `requestsOutFailed`, and the chat goes on without recording: the file is a debugging aid, not the answer.
 *
 * @since 0.1.0
 */
import { ChatCapture } from "@effect-responses/chat-completions"
import { type Part, Prompt } from "@effect-responses/core"
import { BuiltInTool, Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ChatReplayServer, ReplayServer } from "@effect-responses/testing"
import { McpApprovals, ToolLoop } from "@effect-responses/tools"
import * as Command from "@effect/cli/Command"
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { createServer } from "node:http"
import { dirname } from "node:path"
import * as Demo from "./Demo.js"
import * as Commands from "./internal/commands.js"
import { useColour } from "./internal/args.js"
import * as CaptureInput from "./internal/captureInput.js"
import * as Sniff from "./internal/sniff.js"
import * as Protocol from "./Protocol.js"
import * as Render from "./Render.js"

/**
 * The chat command cannot start: nothing to replay and no API key, or an output file it cannot write, or
 * options that do not go together (`--demo` with `--replay FILE` or with `--protocol chat-completions`,
 * `--replay-reasoning-content` without `--protocol chat-completions`). `commandLine` (since 0.2.0) is `true`
 * for the last: the command line itself is refused, whatever the environment and files hold, and the
 * executable exits with status 2 and the verb's usage (`Cli.main`), as for an unknown option.
 *
 * @since 0.1.0
 * @category errors
 */
export class ChatSetupError extends Schema.TaggedError<ChatSetupError>("@effect-responses/cli/ChatSetupError")("ChatSetupError", {
  description: Schema.String,
  commandLine: Schema.optional(Schema.Boolean)
}) {
  override get message(): string {
    return this.description
  }
}

/**
 * A replayed recording has no more responses while the conversation goes on: the model of the last
 * recorded response asked for tools (`tools`) whose results this chat sends back, and the recording holds
 * no answer to them (the replay server's `replay_exhausted`). Typical of a capture recorded with other
 * tools than the demo's (`available`: the tools this chat has; default the calculator alone), which the
 * message names; when this chat has every tool asked for, the message says the recording stops before the
 * answer to their results (a capture of the first turns of a session).
 *
 * @since 0.1.0
 * @category errors
 */
export class ReplayEnded extends Schema.TaggedError<ReplayEnded>("@effect-responses/cli/ReplayEnded")("ReplayEnded", {
  source: Schema.String,
  responses: Schema.Number,
  tools: Schema.Array(Schema.String),
  available: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [Demo.Calculator.name] })
}) {
  override get message(): string {
    const held = `${this.responses} ${this.responses === 1 ? "response" : "responses"}`
    const has = this.available.length === 1
      ? `the ${this.available[0]} tool`
      : `the tools ${this.available.join(", ")}`
    // a key `math.power` is the tool `power` a call names
    const lacking = this.tools.some((tool) =>
      !this.available.some((key) => key === tool || key.endsWith(`.${tool}`))
    )
    const asked = this.tools.length === 0
      ? ""
      : ` after the model asked for ${this.tools.length === 1 ? "the tool" : "the tools"} ${this.tools.join(", ")}` +
        (lacking
          ? ` (this chat has only ${has})`
          : ` (this chat ran ${this.tools.length === 1 ? "it" : "them"}; the recording stops before the answer to the results)`)
    return `the recording ${this.source} has no more responses: it holds ${held}, and the conversation went on${asked}`
  }
}

/**
 * A replayed recording made the conversation fail (an `error` event, `response.failed`, a stream cut
 * short): the failure's message, prefixed with the recording (`source`).
 *
 * @since 0.2.0
 * @category errors
 */
export class RecordingFailed extends Schema.TaggedError<RecordingFailed>()("RecordingFailed", {
  source: Schema.String,
  description: Schema.String
}) {
  override get message(): string {
    return `${this.source}: ${this.description}`
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
  | { readonly _tag: "Live"; readonly apiKey: Redacted.Redacted | undefined; readonly baseUrl: string }

/**
 * Decides where `chat` sends its requests (see the module doc): `--replay FILE`, else with `demo` the
 * embedded recording, else the live API when `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set (a server at
 * `OPENAI_BASE_URL` without a key gets no `Authorization` header), else the embedded recording. Fails with
 * `CaptureError` (or `ChatCaptureError` for `chat-completions`) for a capture that cannot be read,
 * `ChatSetupError` when there is nothing to replay and no server, or both `replay` and `demo` are given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolveTarget = (
  replay: Option.Option<string>,
  recording: string = Demo.recordingPath,
  protocol: Protocol.Protocol = "responses",
  demo: boolean = false
) =>
  Effect.gen(function*() {
    if (demo && Option.isSome(replay)) {
      return yield* new ChatSetupError({
        description: "--demo replays the embedded recording and --replay FILE another one: pass one of them",
        commandLine: true
      })
    }
    if (Option.isSome(replay)) {
      const path = replay.value
      // A capture of the other protocol does not parse: say which --protocol to pass instead.
      const withHint = <A, E>(
        load: Effect.Effect<A, E, FileSystem.FileSystem>
      ): Effect.Effect<A, E | ChatSetupError, FileSystem.FileSystem> =>
        Effect.catchAll(load, (error) =>
          Effect.flatMap(
            Effect.scoped(Effect.map(CaptureInput.open(path), (opened) =>
              Sniff.protocolHint(opened.kind, protocol) ??
                (opened.kind._tag === "Body"
                  ? "a JSON body (one whole response), not a stream: --replay takes a captured stream (raw SSE or " +
                    "line-JSON); `effect-responses aggregate` reads a body"
                  : undefined))).pipe(
              Effect.orElseSucceed(() => undefined)
            ),
            (hint): Effect.Effect<never, E | ChatSetupError> =>
              hint === undefined
                ? Effect.fail(error)
                : Effect.fail(new ChatSetupError({ description: `${path}: ${hint}` }))
          ))
      return protocol === "chat-completions"
        ? { _tag: "ChatReplay", capture: yield* withHint(ChatCapture.load(path)) } as const
        : { _tag: "Replay", capture: yield* withHint(Capture.load(path)), embedded: false } as const
    }
    if (protocol === "chat-completions" && demo) {
      return yield* new ChatSetupError({
        description: "there is no embedded Chat Completions recording: pass --replay FILE (a recorded Chat " +
          "Completions stream), or drop --demo and set OPENAI_API_KEY or OPENAI_BASE_URL to ask a model.",
        commandLine: true
      })
    }
    if (!demo) {
      const apiKey = yield* Config.option(Config.redacted("OPENAI_API_KEY")).pipe(
        Effect.map(Option.filter((key) => Redacted.value(key) !== ""))
      )
      const baseUrl = yield* Config.option(Config.string("OPENAI_BASE_URL")).pipe(
        Effect.map(Option.filter((url) => url.trim() !== ""))
      )
      if (Option.isSome(apiKey) || Option.isSome(baseUrl)) {
        return {
          _tag: "Live",
          apiKey: Option.getOrUndefined(apiKey),
          baseUrl: Option.getOrElse(baseUrl, () => ResponsesClient.DEFAULT_BASE_URL)
        } as const
      }
    }
    if (protocol === "chat-completions") {
      return yield* new ChatSetupError({
        description: "there is no embedded Chat Completions recording: pass --replay FILE (a recorded Chat " +
          "Completions stream) or set OPENAI_API_KEY or OPENAI_BASE_URL to ask a model."
      })
    }
    const fs = yield* FileSystem.FileSystem
    if (!(yield* Effect.orElseSucceed(fs.exists(recording), () => false))) {
      return yield* new ChatSetupError({
        description:
          `no recording to replay: ${recording} is missing (the package was installed without its demo/ folder). ` +
          "Pass --replay FILE (a recorded Responses stream) or set OPENAI_API_KEY or OPENAI_BASE_URL to ask a model."
      })
    }
    return { _tag: "Replay", capture: yield* Capture.load(recording), embedded: true } as const
  })

const modelOf = (capture: Capture.Capture): string => {
  const created = capture.responses[0]?.events[0]?.json.response as { model?: unknown } | undefined
  return typeof created?.model === "string" ? created.model : "recorded"
}

const ASK_A_MODEL = "to ask a model, set OPENAI_API_KEY (the OpenAI API) or OPENAI_BASE_URL (any /v1 server, " +
  "e.g. a local one or effect-responses serve; no key needed)"

/**
 * The model a replay answers as: the `model` of the recording's first response, `recorded` when none shows.
 *
 * @since 0.2.0
 * @category replay
 */
export const recordedModel = (target: Target): string | undefined =>
  target._tag === "Replay"
    ? modelOf(target.capture)
    : target._tag === "ChatReplay"
    ? ChatCapture.modelOf(target.capture.responses[0]!) || "recorded"
    : undefined

/**
 * A replay plays what was recorded, whatever it is asked: it refuses a `prompt` other than the recorded one
 * (the embedded recording's is `Demo.defaultPrompt`; a `--replay FILE` capture holds no question, so any
 * prompt is refused) and a `model` other than the recorded one, with `ChatSetupError` saying how to ask a
 * model instead. A live target takes anything.
 *
 * @since 0.2.0
 * @category replay
 */
export const checkReplay = (
  target: Target,
  prompt: Option.Option<string>,
  model: Option.Option<string>
): Effect.Effect<void, ChatSetupError> => {
  if (target._tag === "Live") return Effect.void
  const embedded = target._tag === "Replay" && target.embedded
  const what = embedded ? "the embedded demo recording" : `the recording ${target.capture.source}`
  if (Option.isSome(prompt) && !(embedded && prompt.value.trim() === Demo.defaultPrompt)) {
    return Effect.fail(
      new ChatSetupError({
        description: embedded
          ? `${what} answers only its recorded question ("${Demo.defaultPrompt}"), not "${prompt.value}": ${ASK_A_MODEL}`
          : `${what} answers only its recorded question, whatever PROMPT says: drop PROMPT to replay it, or ${ASK_A_MODEL}`
      })
    )
  }
  const recorded = recordedModel(target) ?? "recorded"
  if (Option.isSome(model) && !(recorded === model.value || recorded.startsWith(`${model.value}-`))) {
    return Effect.fail(
      new ChatSetupError({
        description: `${what} was made with ${recorded}, and a replay cannot change it (--model ${model.value}): ${ASK_A_MODEL}`
      })
    )
  }
  return Effect.void
}

/** Whether a response of the capture asks for an MCP approval (an `mcp_approval_request` output item). */
const holdsMcpApprovalRequest = (capture: Capture.Capture): boolean =>
  capture.responses.some((response) =>
    Capture.outputItems(response).some((item) => item.type === "mcp_approval_request")
  )

/** Whether the capture's model calls `apply_patch` as a freeform custom tool (as Codex declares it). */
const callsFreeformApplyPatch = (capture: Capture.Capture): boolean =>
  capture.responses.some((response) =>
    Capture.outputItems(response).some((item) => item.type === "custom_tool_call" && item.name === "apply_patch")
  )

/**
 * Whether the capture's model calls `apply_patch` both as a freeform custom tool and as the client-run built-in
 * (an `apply_patch_call` item): the replay runs both, in one directory.
 */
const callsBothApplyPatches = (capture: Capture.Capture): boolean =>
  callsFreeformApplyPatch(capture) &&
  capture.responses.some((response) => Capture.outputItems(response).some((item) => item.type === "apply_patch_call"))

/**
 * The one line `chat` writes on standard error before a replay, so that nobody takes it for a live answer:
 * what is replayed, and why when nothing asked for it (`implicit`: no `--demo`, no key, no server); for a
 * `--replay FILE` capture holding MCP approval requests, that the chat approves them
 * (`McpApprovals.approveAll`: a replay runs no MCP tool, and the recorded answer follows an approval); for one
 * whose model calls `apply_patch` both as a freeform custom tool and as the built-in (`apply_patch_call`), that
 * the chat runs both forms in one temporary directory (`Demo.FreeformReplayToolkit`), so a patch of one form
 * sees the files the other made.
 *
 * @since 0.2.0
 * @category replay
 */
export const replayNotice = (target: Target, implicit: boolean): string | undefined => {
  if (target._tag === "Live") return undefined
  const responses = target.capture.responses.length
  const held = `${responses} recorded ${responses === 1 ? "response" : "responses"} of ${recordedModel(target)}`
  const embedded = target._tag === "Replay" && target.embedded
  const what = embedded ? `the demo recording (${held})` : `${target.capture.source} (${held})`
  const approves = target._tag === "Replay" && !embedded && holdsMcpApprovalRequest(target.capture)
    ? "; its MCP approval requests are approved (no MCP tool runs in a replay)"
    : ""
  const bothPatches = target._tag === "Replay" && !embedded && callsBothApplyPatches(target.capture)
    ? "; its model calls apply_patch both as a custom tool and as the built-in apply_patch: this chat runs both, " +
      "in one temporary directory"
    : ""
  return implicit
    ? `effect-responses: no OPENAI_API_KEY or OPENAI_BASE_URL: replaying ${what}; nothing is sent to a model (--demo says so explicitly)\n`
    : `effect-responses: replaying ${what}; nothing is sent to a model${approves}${bothPatches}\n`
}

/** Why a file could not be written, in the system's words (`ENOSPC: no space left on device, write`). */
const writeFailure = (e: PlatformError.PlatformError): string =>
  e._tag === "SystemError" && e.description !== undefined && e.description !== "" ? e.description : e.message

/**
 * Creates (or empties) the `--requests-out` file; fails with `ChatSetupError` naming the path when it cannot
 * be written (a missing directory is said so).
 */
const openRequestsOut = (path: string) =>
  path.trim() === ""
    ? Effect.fail(new ChatSetupError({ description: "option --requests-out: the path is empty (give a file name)" }))
    : Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.writeFileString(path, "").pipe(
      Effect.mapError((e) =>
        new ChatSetupError({
          description: `cannot write --requests-out ${path}: ${
            e._tag === "SystemError" && e.reason === "NotFound" ? `no such directory: ${dirname(path)}` : writeFailure(e)
          }`
        })
      )
    ))

/**
 * The warning logged when the `--requests-out` file cannot take the body of the `request`th request (the
 * disk is full, the file was removed or replaced after it was opened): the file, the cause, and that the chat
 * goes on unrecorded.
 *
 * @since 0.2.0
 * @category constants
 */
export const requestsOutFailed = (path: string, request: number, cause: string): string =>
  `--requests-out ${path}: cannot write the body of request ${request} (${cause}); the chat goes on, and ` +
  "this request and the later ones are not recorded (the file's last line may be cut)"

/**
 * An `HttpClient` layer that appends every request body it sends to `path` as JSON Lines. A write that fails
 * mid-chat is a debugging aid lost, not the chat: it is logged once (`requestsOutFailed`), the request is sent
 * and no later one is recorded.
 */
const recordingHttpClient = (path: string) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      yield* openRequestsOut(path)
      const client = yield* HttpClient.HttpClient
      // the requests with a body seen so far, or -1 once a write failed
      const seen = yield* Ref.make(0)
      return HttpClient.tapRequest(client, (request) => {
        const body = request.body
        if (body._tag !== "Uint8Array") return Effect.void
        return Effect.flatMap(Ref.modify(seen, (n) => n < 0 ? [n, n] : [n + 1, n + 1]), (n) =>
          n < 0
            ? Effect.void
            : fs.writeFileString(path, `${new TextDecoder().decode(body.body)}\n`, { flag: "a" }).pipe(
              Effect.catchAll((e) =>
                Effect.zipRight(Ref.set(seen, -1), Effect.logWarning(requestsOutFailed(path, n, writeFailure(e))))
              )
            ))
      })
    })
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** The tool a part calls, if it is a call: its name, or a built-in tool's (`shell`, `apply_patch`, …). */
const calledTool = (part: Part.AssistantPart): string | undefined => {
  switch (part.type) {
    case "tool_call":
    case "custom_tool_call":
      return part.name
    case "shell_call":
    case "apply_patch_call":
    case "local_shell_call":
      return part.type.slice(0, -"_call".length)
    default:
      return undefined
  }
}

/**
 * What ends the partial line of an interrupted chat (Ctrl-C): a half answer never looks complete.
 *
 * @since 0.2.0
 * @category constants
 */
export const INTERRUPTED = "[interrupted]"

/**
 * What ends the partial line of a chat that failed after its answer began (the stream broke off, the
 * upstream failed mid-answer): a half answer never looks complete. The error itself goes to standard error.
 *
 * @since 0.2.0
 * @category constants
 */
export const FAILED = "[failed]"

/**
 * Runs one chat: the tool loop over the target, rendered to `write`. Returns the final text. Each retry of
 * a live request (429, 5xx, a connection failure) is said on standard error with its wait. When
 * interrupted, the HTTP request in flight is aborted and the open line ends with `INTERRUPTED`; when it
 * fails after some output, the open line ends with `FAILED`.
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
  /** `--replay-reasoning-content`: with `chat-completions`, send reasoning back as `reasoning_content` */
  readonly replayReasoningContent?: boolean | undefined
}) =>
  Effect.gen(function*() {
    const { target } = options
    // a retry is said on stderr, with its wait: a silent pause looks like a hang
    const retry: ResponsesClient.RetryOptions = {
      onRetry: ({ attempt, error, wait }) =>
        Effect.sync(() =>
          void process.stderr.write(
            `effect-responses: ${error.message}; waiting ${(Duration.toMillis(wait) / 1000).toFixed(1)} s before retry ${attempt}\n`
          )
        )
    }
    const protocol = target._tag === "ChatReplay" ? "chat-completions" : options.protocol ?? "responses"
    const httpClient = Option.match(options.requestsOut, {
      onNone: () => NodeHttpClient.layerUndici,
      onSome: recordingHttpClient
    })
    const client = target._tag === "Live" || target._tag === "ChatReplay"
      ? ResponsesClient.layer(target._tag === "Live" ? { apiKey: target.apiKey, baseUrl: target.baseUrl, retry } : {})
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
      () => recordedModel(target) ?? (protocol === "chat-completions" ? "gpt-4o-mini" : "gpt-5.1")
    )
    // a replayed Responses capture other than the embedded one may hold custom, shell or apply_patch calls,
    // or a hosted tool search loading the deferred math.power
    const replaying = target._tag === "Replay" && !target.embedded
    const freeform = replaying && callsFreeformApplyPatch(target.capture)
    const chatCompletions = options.replayReasoningContent === true ? { replayReasoningContent: true } : undefined
    const languageModel = protocol === "responses"
      ? ResponsesLanguageModel.layer({
        model,
        reasoning: { effort: "medium", summary: "auto" },
        ...(replaying ? { builtInTools: [BuiltInTool.toolSearch()] } : {})
      }).pipe(Layer.provide(client), Layer.provide(httpClient))
      : target._tag === "ChatReplay"
      ? Layer.unwrapEffect(
        Effect.map(ChatReplayServer.ChatReplayServer, (server) =>
          Protocol.layer({ protocol, model, baseUrl: server.baseUrl, chatCompletions }))
      ).pipe(
        Layer.provide(ChatReplayServer.layer({ capture: target.capture })),
        Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(httpClient)
      )
      : Protocol.layer({
        protocol,
        model,
        chatCompletions,
        ...(target._tag === "Live" ? { apiKey: target.apiKey, baseUrl: target.baseUrl, retry } : {})
      }).pipe(Layer.provide(httpClient))

    const renderer = Render.make(options.style)
    let finalText = ""
    // whether any output was written: a failure after it ends the open line with `FAILED`
    let began = false
    // the tools the last response asked for, to explain a replay that runs out
    let tools: Array<string> = []
    const prompt = Prompt.user(options.prompt)
    const loop = freeform
      ? ToolLoop.stream(prompt, { toolkit: Demo.FreeformReplayToolkit, maxSteps: 10 }).pipe(
        Stream.provideSomeLayer(Layer.merge(Demo.FreeformReplayToolkitLive, McpApprovals.approveAll))
      )
      : replaying
      ? ToolLoop.stream(prompt, { toolkit: Demo.ReplayToolkit, maxSteps: 10 }).pipe(
        Stream.provideSomeLayer(Layer.merge(Demo.ReplayToolkitLive, McpApprovals.approveAll))
      )
      : ToolLoop.stream(prompt, { toolkit: Demo.CalculatorToolkit, maxSteps: 10 }).pipe(
        Stream.provideSomeLayer(Demo.CalculatorToolkitLive)
      )
    yield* loop.pipe(
      Stream.runForEach((event) => {
        if (event.type === "loop_finished") finalText = event.finalText
        if (event.type === "response_started") tools = []
        if (event.type === "part" && !event.partial) {
          const name = calledTool(event.part)
          if (name !== undefined && !tools.includes(name)) tools.push(name)
        }
        const text = renderer.render(event)
        if (text === "") return Effect.void
        began = true
        return options.write(text)
      }),
      Effect.catchIf(
        (error) => error._tag === "HttpError" && error.code === "replay_exhausted" && target._tag !== "Live",
        () =>
          new ReplayEnded({
            source: target._tag === "Live" ? "" : target.capture.source,
            responses: target._tag === "Live" ? 0 : target.capture.responses.length,
            tools,
            available: freeform
              ? Demo.FreeformReplayToolkit.names
              : replaying
              ? Demo.ReplayToolkit.names
              : Demo.CalculatorToolkit.names
          })
      ),
      Effect.mapError((error) =>
        target._tag === "Live" || error._tag === "ReplayEnded"
          ? error
          : new RecordingFailed({ source: target.capture.source, description: error.message })
      ),
      Effect.onExit((exit) => {
        // a failure before any output (a refused request) is said on standard error alone
        const text = renderer.end(
          Exit.isSuccess(exit) ? undefined : Cause.isInterruptedOnly(exit.cause) ? INTERRUPTED : began ? FAILED : undefined
        )
        return text === "" ? Effect.void : options.write(text)
      }),
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
export const command = Commands.chat.pipe(
  Command.withHandler(
    ({ demo, model, prompt, protocol, replay, replayReasoningContent, requestsOut }) =>
      Effect.gen(function*() {
        const question = prompt.length === 0 ? Option.none() : Option.some(prompt.join(" "))
        if (replayReasoningContent && protocol !== "chat-completions") {
          return yield* new ChatSetupError({
            description: "--replay-reasoning-content is for --protocol chat-completions (the Responses API gets " +
              "reasoning back as reasoning items)",
            commandLine: true
          })
        }
        // the output file first: a path that cannot be written fails before anything is read, said or sent
        if (Option.isSome(requestsOut)) yield* openRequestsOut(requestsOut.value)
        const target = yield* resolveTarget(replay, Demo.recordingPath, protocol, demo)
        yield* checkReplay(target, question, model)
        const notice = replayNotice(target, !demo && Option.isNone(replay))
        if (notice !== undefined) yield* Effect.sync(() => void process.stderr.write(notice))
        const write = (text: string) => Effect.sync(() => void process.stdout.write(text))
        yield* run({
          prompt: Option.getOrElse(question, () => Demo.defaultPrompt),
          target,
          model,
          requestsOut,
          write,
          style: useColour(process.stdout) ? Render.ansi : Render.plain,
          protocol,
          replayReasoningContent
        }).pipe(Effect.tapError((error) =>
          !replayReasoningContent && error._tag === "HttpError" && error.status === 400 &&
            error.description.includes("reasoning_content")
            ? Effect.sync(() =>
              void process.stderr.write(
                "effect-responses: the server asks for the model's reasoning back: pass --replay-reasoning-content\n"
              )
            )
            : Effect.void
        ))
      })
  )
)
