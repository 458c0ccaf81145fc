/**
 * Test helpers: an SSE reader, the event-order checker every streamed body in these tests passes, a
 * scripted `LanguageModel`, and the gateway started on a loopback port.
 */
import { LanguageModel, type ModelResponse, type Prompt, type StreamPart } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { Gateway, Upstream } from "@effect-responses/server"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { createServer, request as httpRequest } from "node:http"
import { fileURLToPath } from "node:url"
import type OpenAI from "openai"
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator.js"

/**
 * A body read off the wire (an SSE event's data, a request the scripted upstream received), walked several
 * levels deep in tests whose every read value is checked with `expect`, which fails the test on a wrong shape:
 * `any` (not `unknown`) keeps those walks readable without a cast at each level. Test code only.
 */
export type WireJson = { readonly [key: string]: any }

/** The absolute path of a file under `fixtures` (read in place; see `SOURCES.md` there). */
export const fixturePath = (relative: string): string =>
  fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url))

/** The text of a file under `fixtures`. */
export const readFixture = (relative: string): string => readFileSync(fixturePath(relative), "utf8")

/** One SSE frame: its `event:` name and its parsed `data:` payload. */
export interface Frame {
  readonly event: string | undefined
  readonly data: { readonly type: string; readonly sequence_number: number; readonly [key: string]: unknown }
}

/** Splits an SSE body into frames. */
export const parseSse = (body: string): ReadonlyArray<Frame> =>
  body.split("\n\n").filter((block) => block.trim() !== "").map((block) => {
    let event: string | undefined
    const data: Array<string> = []
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7)
      else if (line.startsWith("data: ")) data.push(line.slice(6))
    }
    return { event, data: JSON.parse(data.join("\n")) }
  })

type Json = { readonly [key: string]: unknown }
const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"])

/**
 * The event-order check of the Responses streaming lifecycle the gateway writes, as the API sends it: `event:` equals
 * the payload `type`; `sequence_number` from 0 rising by one; `response.created` then
 * `response.in_progress` first; items appended at output indices 0, 1, 2… each closed before the next
 * opens; every item event names the open item; text, refusal, argument and summary deltas add up to their
 * `.done` (custom tool input deltas too, and each shell command's); `logprobs: []` on text events; `name` on `function_call_arguments.done`; exactly one terminal
 * event, last, whose `output` equals the done items and whose status matches it; only `response.failed` may
 * leave the item being written open (never done, not in `output`), and only there may finished items follow
 * it (whole, at the next output indices: a failed response writes the items the upstream finished that waited
 * behind it). Returns the terminal response.
 *
 * `corrected`: the stream of an upstream whose final snapshot contradicted its deltas (`replace: true`
 * parts): a `.done` event may then carry other text than the deltas (the final one), and each `.done`
 * sets the text the next ones of the item are checked against, as the `openai` SDK's accumulator sets it;
 * `response.output_item.done`'s item is taken as it is, as that accumulator takes it.
 */
export const checkLifecycle = (frames: ReadonlyArray<Frame>, options: { readonly corrected?: boolean } = {}): Json => {
  const corrected = options.corrected === true
  /** The text of a `.done` event: checked against the deltas, or (`corrected`) taken in their place. */
  const doneText = (value: unknown, what: string) => {
    if (corrected) text = [value as string]
    else expect(value, what).toBe(text.join(""))
  }
  expect(frames.length).toBeGreaterThanOrEqual(3)
  frames.forEach((frame, index) => {
    expect(frame.event, `event name of frame ${index}`).toBe(frame.data.type)
    expect(frame.data.sequence_number, `sequence number of frame ${index}`).toBe(index)
  })
  const types = frames.map((frame) => frame.data.type)
  expect(types[0]).toBe("response.created")
  expect(types[1]).toBe("response.in_progress")
  for (const first of [frames[0]!, frames[1]!]) expect((first.data.response as Json).status).toBe("in_progress")
  const terminals = types.filter((type) => TERMINAL.has(type))
  expect(terminals, "exactly one terminal event").toHaveLength(1)
  expect(TERMINAL.has(types[types.length - 1]!), "the terminal event is last").toBe(true)

  const done: Array<Json> = []
  // items left open when the next one opened (allowed at response.failed only), and the items opened so far
  const leftOpen: Array<Json> = []
  let opened = 0
  let open: Json | undefined
  let openIndex = -1
  let text: Array<string> = []
  let contentOpen = false
  let summaryIndex = -1
  let summaryOpen = false
  const summaries: Array<string> = []
  const commands: Array<string> = []
  const itemEvent = (data: Json, what: string) => {
    expect(open, `${what} outside an open item`).toBeDefined()
    expect(data.output_index, `${what} output index`).toBe(openIndex)
    if (data.item_id !== undefined) expect(data.item_id, `${what} item id`).toBe(open!.id)
  }
  // a failed response: an `error` event right before `response.failed`, as OpenAI sends them
  // (`vai-openai-error-event-response-failed.chunks.txt`), with the failure's code and message
  const failedTerminal = types[types.length - 1] === "response.failed"
  if (failedTerminal) {
    const errorEvent = frames[frames.length - 2]!.data
    expect(errorEvent.type, "an error event right before response.failed").toBe("error")
    const failure = (frames[frames.length - 1]!.data.response as Json).error as Json
    expect(errorEvent).toEqual({
      type: "error",
      sequence_number: frames.length - 2,
      code: failure.code,
      message: failure.message,
      param: null,
      error: { type: failure.code, code: failure.code, message: failure.message, param: null }
    })
  }
  expect(types.filter((type) => type === "error"), "error events").toHaveLength(failedTerminal ? 1 : 0)
  for (const { data } of frames.slice(2, failedTerminal ? -2 : -1)) {
    switch (data.type) {
      case "response.output_item.added": {
        if (open !== undefined) leftOpen.push(open)
        expect(data.output_index, "output indices appended without gaps").toBe(opened++)
        open = data.item as Json
        openIndex = data.output_index as number
        text = []
        contentOpen = false
        summaryIndex = -1
        summaryOpen = false
        summaries.length = 0
        commands.length = 0
        break
      }
      case "response.content_part.added":
        itemEvent(data, data.type)
        expect(open!.type).toBe("message")
        expect(contentOpen).toBe(false)
        contentOpen = true
        break
      case "response.output_text.delta":
      case "response.refusal.delta":
        itemEvent(data, data.type)
        expect(contentOpen, `${data.type} outside a content part`).toBe(true)
        if (data.type === "response.output_text.delta") expect(data.logprobs).toEqual([])
        text.push(data.delta as string)
        break
      case "response.output_text.done":
        itemEvent(data, data.type)
        expect(data.logprobs).toEqual([])
        doneText(data.text, "text deltas add up to output_text.done")
        break
      case "response.refusal.done":
        itemEvent(data, data.type)
        doneText(data.refusal, "refusal deltas add up to refusal.done")
        break
      case "response.content_part.done": {
        itemEvent(data, data.type)
        const part = data.part as Json
        doneText(part.type === "output_text" ? part.text : part.refusal, "content_part.done holds the deltas")
        contentOpen = false
        break
      }
      case "response.function_call_arguments.delta":
        itemEvent(data, data.type)
        expect(open!.type).toBe("function_call")
        text.push(data.delta as string)
        break
      case "response.function_call_arguments.done":
        itemEvent(data, data.type)
        doneText(data.arguments, "argument deltas add up to .done")
        expect(data.name, "name on function_call_arguments.done").toBe(open!.name)
        break
      case "response.custom_tool_call_input.delta":
        itemEvent(data, data.type)
        expect(open!.type).toBe("custom_tool_call")
        text.push(data.delta as string)
        break
      case "response.custom_tool_call_input.done":
        itemEvent(data, data.type)
        doneText(data.input, "input deltas add up to .done")
        break
      case "response.shell_call_command.added":
        itemEvent(data, data.type)
        expect(open!.type).toBe("shell_call")
        expect(data.command_index, "commands added in order").toBe(commands.length)
        expect(data.command).toBe("")
        commands.push("")
        break
      case "response.shell_call_command.delta":
        itemEvent(data, data.type)
        expect(data.command_index).toBe(commands.length - 1)
        commands[commands.length - 1] += data.delta as string
        break
      case "response.shell_call_command.done":
        itemEvent(data, data.type)
        expect(data.command_index).toBe(commands.length - 1)
        expect(data.command, "command deltas add up to .done").toBe(commands[commands.length - 1])
        break
      case "response.reasoning_summary_part.added":
        itemEvent(data, data.type)
        expect(open!.type).toBe("reasoning")
        expect(summaryOpen).toBe(false)
        expect(data.summary_index).toBe(summaryIndex + 1)
        summaryIndex++
        summaryOpen = true
        text = []
        break
      case "response.reasoning_summary_text.delta":
        itemEvent(data, data.type)
        expect(summaryOpen).toBe(true)
        expect(data.summary_index).toBe(summaryIndex)
        text.push(data.delta as string)
        break
      case "response.reasoning_summary_text.done":
        itemEvent(data, data.type)
        doneText(data.text, "summary deltas add up to reasoning_summary_text.done")
        break
      case "response.reasoning_summary_part.done":
        itemEvent(data, data.type)
        doneText((data.part as Json).text, "reasoning_summary_part.done holds the deltas")
        summaries.push(text.join(""))
        summaryOpen = false
        break
      case "response.output_item.done": {
        itemEvent(data, data.type)
        expect(contentOpen || summaryOpen, "content or summary part left open").toBe(false)
        const item = data.item as Json
        expect(item.id).toBe(open!.id)
        expect(item.type).toBe(open!.type)
        if (corrected) {
          // the item as it is
        } else if (item.type === "message") {
          const content = (item.content as ReadonlyArray<Json>)[0]!
          expect(content.type === "output_text" ? content.text : content.refusal).toBe(text.join(""))
        } else if (item.type === "function_call") {
          expect(item.arguments).toBe(text.join(""))
        } else if (item.type === "custom_tool_call") {
          expect(item.input).toBe(text.join(""))
        } else if (item.type === "shell_call") {
          expect((item.action as Json).commands).toEqual(commands)
        } else if (item.type === "reasoning") {
          expect((item.summary as ReadonlyArray<Json>).map((s) => s.text)).toEqual(summaries)
        }
        done.push(item)
        open = undefined
        break
      }
      default:
        throw new Error(`unexpected event ${data.type}`)
    }
  }
  const terminal = frames[frames.length - 1]!.data
  // a failed response leaves the item the upstream never finished open: no `.done`, not in `output`
  if (terminal.type !== "response.failed") {
    expect(open, "an item left open at the terminal event").toBeUndefined()
    expect(leftOpen, "an item opened before the previous one was done").toEqual([])
  }
  const response = terminal.response as Json
  expect(response.status).toBe(terminal.type.slice("response.".length))
  expect(response.output).toEqual(done)
  if (terminal.type !== "response.failed") expect(response.usage).toBeDefined()
  return response
}

/**
 * The text that arrived of the message a failed response left unfinished: its `output_text.delta`s, checked
 * to be closed by no `output_text.done`, `content_part.done` or `output_item.done`.
 */
export const unfinishedText = (frames: ReadonlyArray<Frame>): string => {
  const types = frames.map((frame) => frame.data.type)
  expect(types[types.length - 1]).toBe("response.failed")
  const added = frames.filter((frame) => frame.data.type === "response.output_item.added")
  const item = (added[added.length - 1]?.data.item ?? {}) as Json
  expect(item.type, "the last item written is a message").toBe("message")
  const ofItem = frames.filter((frame) => frame.data.item_id === item.id || (frame.data.item as Json | undefined)?.id === item.id)
  expect(ofItem.map((frame) => frame.data.type).filter((type) => type.endsWith(".done")), "no .done event for the unfinished message")
    .toEqual([])
  return ofItem.filter((frame) => frame.data.type === "response.output_text.delta").map((frame) => frame.data.delta as string).join("")
}

const isParts = (
  u: ReadonlyArray<StreamPart.StreamPart> | Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError>
): u is ReadonlyArray<StreamPart.StreamPart> => Array.isArray(u)

/** A `LanguageModel` that answers every call with the given elements / response, and records the calls. */
export const scriptedModel = (script: {
  readonly stream?: ReadonlyArray<StreamPart.StreamPart> | Stream.Stream<StreamPart.StreamPart, LanguageModel.ModelError> | undefined
  readonly generate?: ModelResponse.ModelResponse | undefined
}) => {
  const calls: Array<{ readonly prompt: Prompt.Prompt; readonly options: LanguageModel.CallOptions | undefined }> = []
  const service = LanguageModel.LanguageModel.of({
    generate: (prompt, options) =>
      Effect.suspend(() => {
        calls.push({ prompt, options })
        return script.generate === undefined ? Effect.die("no generate script") : Effect.succeed(script.generate)
      }),
    stream: (prompt, options) =>
      Stream.suspend(() => {
        calls.push({ prompt, options })
        const parts = script.stream ?? []
        return isParts(parts) ? Stream.fromIterable(parts) : parts
      })
  })
  return { calls, layer: Layer.succeed(LanguageModel.LanguageModel, service) }
}

/** A loopback HTTP server on a random free port of 127.0.0.1. */
export const loopback = NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })

/** The `http://127.0.0.1:PORT` of the `HttpServer` in the context. */
export const serverUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address
  return address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : "http://localhost"
})

/**
 * Runs `body` with the gateway serving `upstream` on a loopback port; `body` gets the base URL
 * (`http://127.0.0.1:PORT/v1`).
 */
export const withGateway = <A, E, R>(
  upstream: Layer.Layer<Upstream.Upstream>,
  options: Gateway.Options,
  body: (baseUrl: string) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const url = yield* serverUrl
    return yield* body(`${url}/v1`)
  }).pipe(
    Effect.provide(Gateway.layer(options).pipe(Layer.provide(upstream), Layer.provideMerge(loopback))),
    Effect.scoped
  )

/**
 * The built-in Responses model (`ResponsesLanguageModel`, model `gpt-4o-mini`, no retry) as the gateway's
 * upstream of model `m`, every call answered with the SSE text `sse` (a recording, cut or changed), for
 * `withGateway`.
 */
export const responsesUpstream = (sse: string): Layer.Layer<Upstream.Upstream> =>
  Upstream.fromLanguageModel({ models: ["m"] }).pipe(
    Layer.provide(ResponsesLanguageModel.layer({ model: "gpt-4o-mini" })),
    Layer.provide(ResponsesClient.layer({ retry: { times: 0 } })),
    Layer.provide(Layer.succeed(
      HttpClient.HttpClient,
      HttpClient.make((request) =>
        Effect.succeed(HttpClientResponse.fromWeb(request, new Response(sse, { headers: { "content-type": "text/event-stream" } })))
      )
    ))
  )

/**
 * What a client of the official `openai` SDK holds after `events`: its accumulator (`accumulateResponse`)
 * folded over them in order (`undefined` for no event).
 */
export const accumulateEvents = (events: Iterable<OpenAI.Responses.ResponseStreamEvent>): OpenAI.Responses.Response | undefined => {
  let snapshot: OpenAI.Responses.Response | undefined
  for (const event of events) snapshot = accumulateResponse(event, snapshot)
  return snapshot
}

/** POSTs JSON (or a raw string) to `url` and reads the whole answer. */
export const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

/**
 * POSTs `chunks` to `url` with `Transfer-Encoding: chunked` (no `Content-Length`) through `node:http`, and
 * reads the whole answer. A connection reset before the answer arrived fails the effect with its error.
 */
export const postChunked = (url: string, chunks: Iterable<Uint8Array | string>) =>
  Effect.tryPromise({
    try: () =>
      new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
        const request = httpRequest(url, {
          method: "POST",
          headers: { "content-type": "application/json", "transfer-encoding": "chunked" }
        }, (response) => {
          const body: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => body.push(chunk))
          response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(body).toString("utf8") }))
          response.on("error", reject)
        })
        request.on("error", reject)
        const iterator = chunks[Symbol.iterator]()
        const writeMore = (): void => {
          for (;;) {
            const next = iterator.next()
            if (next.done === true) {
              request.end()
              return
            }
            if (!request.write(next.value)) {
              request.once("drain", writeMore)
              return
            }
          }
        }
        writeMore()
      }),
    catch: (error) => error
  })

/**
 * A logger layer that records every line from debug up (`"<LEVEL>: <message>"`) into `logs`; provide it
 * outside the gateway's layers so that the server's fibers inherit it.
 */
export const captureLogs = () => {
  const logs: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    logs.push(`${logLevel.label}: ${Array.isArray(message) ? message.join(" ") : String(message)}`)
  })
  return { logs, layer: Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.Debug)) }
}

/**
 * Waits until the lines of `captureLogs` hold `n` access-log lines (`access: `), checking every 10 ms for
 * up to 2 s (then returns, and the test's own check of the lines fails): the gateway writes a request's
 * line once its handler's finalizers ran, which may be after the client saw the answer end or left it.
 */
export const waitForAccessLines = async (
  captured: { readonly logs: ReadonlyArray<string> },
  n: number
): Promise<void> => {
  for (let i = 0; i < 200 && captured.logs.filter((line) => line.includes("access: ")).length < n; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
