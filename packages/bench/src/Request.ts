/**
 * The cost of a large `POST /v1/responses` body before the upstream is called: a conversation of many
 * input items (a coding agent's long tool loop: user messages, function calls, their outputs, assistant
 * messages, a quarter each), decoded in this process.
 *
 * - `JSON.parse` of the body: CPU per MB, and the longest stretch without a yield (the parse is one call);
 * - `ResponsesRequestDecoder.decode` of the parsed body: CPU per MB and per item, and the longest stretch
 *   the event loop was held meanwhile (a `setImmediate` ticker runs beside it, and the block is the CPU time
 *   between two of its ticks: the decoder yields every few milliseconds, so that other requests are served).
 *
 * - `POST /v1/responses` of a body near the gateway's 16 MiB bound (`gatewayItems` items) to a gateway in
 *   this process whose model refuses at once: the wall time until the answer and the longest stretch the
 *   event loop was held meanwhile (the gateway parses the `input` elements one by one, yielding), beside
 *   the time one `JSON.parse` of that body takes.
 *
 * Every decode must give one message per user item, tool message per output, … (checked), and the gateway
 * must answer the model's refusal (400 `invalid_prompt`), so that an error is never measured.
 *
 * @since 0.1.0
 */
import { AiError, LanguageModel } from "@effect-responses/core"
import { Gateway, ResponsesRequestDecoder, Upstream } from "@effect-responses/server"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import { createServer } from "node:http"
import { median } from "./Speed.js"

/**
 * `items`: input items per request; `warmup`, `iterations`: untimed and timed decodes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly items: number
  readonly warmup: number
  readonly iterations: number
  readonly gatewayItems: number
}

/**
 * A full run (20,000 items, the gateway's default bound: about 2.2 MB; 3 + 9 rounds; 130,000 items, about
 * 14 MB, through the gateway) and `--quick` (2,000 items, 1 + 3 rounds; 20,000 through the gateway).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = (quick: boolean): Options =>
  quick
    ? { items: 2_000, warmup: 1, iterations: 3, gatewayItems: 20_000 }
    : { items: 20_000, warmup: 3, iterations: 9, gatewayItems: 130_000 }

/**
 * The measurements, CPU times in milliseconds (this process's user + system time), medians of the timed
 * rounds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly items: number
  /** Size of the body, in bytes (its JSON text as UTF-16 code units, ASCII here). */
  readonly bytes: number
  readonly parseCpu: number
  readonly decodeCpu: number
  /** The most CPU time between two ticks of the ticker while decoding, in milliseconds (median over rounds). */
  readonly decodeLongestBlock: number
  /** Through the gateway: the body's items and size, wall ms until the answer, longest block (CPU ms), `JSON.parse` CPU ms of it. */
  readonly gateway: {
    readonly items: number
    readonly bytes: number
    readonly wall: number
    readonly longestBlock: number
    readonly parseCpu: number
  }
}

/**
 * The body of a request with `items` input items (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const body = (items: number): string => {
  const input: Array<unknown> = []
  for (let i = 0; i < items; i++) {
    switch (i % 4) {
      case 0:
        input.push({ type: "message", role: "user", content: [{ type: "input_text", text: `Open file ${i} and fix the bug.` }] })
        break
      case 1:
        input.push({ type: "function_call", call_id: `call_${i}`, name: "read_file", arguments: `{"path":"src/file${i}.ts"}` })
        break
      case 2:
        input.push({ type: "function_call_output", call_id: `call_${i - 1}`, output: `export const value${i} = ${i}\n` })
        break
      default:
        input.push({
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: `Fixed file ${i}.`, annotations: [] }]
        })
    }
  }
  return JSON.stringify({
    model: "bench-model",
    stream: true,
    tools: [{ type: "function", name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } }],
    input
  })
}

const cpuMillis = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000
}

/**
 * Runs `work` with a `setImmediate` ticker beside it: the CPU time, and the longest block, the most CPU
 * time this process spent between two ticks (in CPU rather than wall time, so that the waits for a core on
 * a loaded machine do not count as blocks).
 */
const withTicker = async (work: () => Promise<unknown>): Promise<{ cpu: number; longest: number }> => {
  let last = process.cpuUsage()
  let longest = 0
  let running = true
  const tick = () => {
    const now = process.cpuUsage()
    longest = Math.max(longest, (now.user - last.user + now.system - last.system) / 1000)
    last = now
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  const start = process.cpuUsage()
  last = start
  await work()
  const cpu = cpuMillis(start)
  running = false
  tick()
  return { cpu, longest }
}

/**
 * Measures (see the module doc). Fails when a decode does not give the expected prompt.
 *
 * @since 0.1.0
 * @category measuring
 */
export const measure = async (options: Options): Promise<Result> => {
  const text = body(options.items)
  const expectedMessages = options.items // user, assistant (call), tool, assistant (text): one message per item
  const parse: Array<number> = []
  const decode: Array<number> = []
  const blocks: Array<number> = []
  for (let round = 0; round < options.warmup + options.iterations; round++) {
    const parseStart = process.cpuUsage()
    const json: unknown = JSON.parse(text)
    const parseCpu = cpuMillis(parseStart)
    let messages = 0
    const { cpu, longest } = await withTicker(async () => {
      const decoded = await Effect.runPromise(ResponsesRequestDecoder.decode(json, { maxInputItems: options.items }))
      messages = decoded.prompt.messages.length
    })
    if (messages !== expectedMessages) {
      throw new Error(`request decoding: ${messages} messages decoded from ${options.items} items, expected ${expectedMessages}`)
    }
    if (round < options.warmup) continue
    parse.push(parseCpu)
    decode.push(cpu)
    blocks.push(longest)
  }
  return {
    items: options.items,
    bytes: text.length,
    parseCpu: median(parse),
    decodeCpu: median(decode),
    decodeLongestBlock: median(blocks),
    gateway: await throughGateway(options.gatewayItems)
  }
}

/** A model that refuses every call at once: the gateway's answer comes right after the request is decoded. */
const refusing = Layer.succeed(
  LanguageModel.LanguageModel,
  LanguageModel.LanguageModel.of({
    generate: () => Effect.fail(new AiError.InvalidPrompt({ description: "bench: refused" })),
    stream: () => Stream.fail(new AiError.InvalidPrompt({ description: "bench: refused" }))
  })
)

const throughGateway = async (items: number): Promise<Result["gateway"]> => {
  const text = body(items)
  const runtime = ManagedRuntime.make(
    Gateway.layer({ maxInputItems: items, accessLog: false }).pipe(
      Layer.provide(Upstream.fromLanguageModel().pipe(Layer.provide(refusing))),
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.stringLogger))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )
  try {
    const url = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => {
      const address = server.address
      if (address._tag !== "TcpAddress") throw new Error("gateway: not listening on TCP")
      return `http://${address.hostname}:${address.port}/v1/responses`
    }))
    const post = async () => {
      const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: text })
      const error = (await answer.json() as { readonly error?: { readonly code?: unknown } }).error
      if (answer.status !== 400 || error?.code !== "invalid_prompt") {
        throw new Error(`request decoding through the gateway: HTTP ${answer.status} ${JSON.stringify(error)}`)
      }
    }
    await post() // warm-up
    const start = performance.now()
    const { longest } = await withTicker(post)
    const wall = performance.now() - start
    const parseStart = process.cpuUsage()
    JSON.parse(text)
    return { items, bytes: text.length, wall, longestBlock: longest, parseCpu: cpuMillis(parseStart) }
  } finally {
    await runtime.dispose()
  }
}
