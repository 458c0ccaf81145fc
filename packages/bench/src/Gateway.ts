/**
 * The gateway's cost (events per second through it, and the latency it adds per event against the
 * upstream alone), measured in the harness process: a loopback Chat Completions upstream (`node:http`) and
 * the gateway (`Gateway.layer()` over `Upstream.chatCompletions`, `NodeHttpClient.layerUndici`, on a
 * loopback `NodeHttpServer`), both started once per `measure` and closed at its end.
 *
 * - Throughput: a long upstream stream (the content deltas of the recorded 303-chunk gpt-4.1-nano Chat
 *   stream of vercel/ai, Apache-2.0, see `fixtures/SOURCES.md`, repeated to `deltas`) read whole
 *   from the upstream directly and through the gateway as Responses SSE, interleaved after a warm-up.
 * - Paced latency: an upstream that writes one content delta at a time, `intervalMs` apart, each delta
 *   carrying its send time (`performance.now()`, the clock shared by server and client in this process);
 *   the client reads the body incrementally and takes receive time − send time for every text delta,
 *   directly and through the gateway.
 *
 * Every stream read through the gateway must end with `response.completed` and carry exactly the
 * upstream's text (else `measure` fails), so that an error page is never measured.
 *
 * @since 0.1.0
 */
import { Gateway, Upstream } from "@effect-responses/server"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { median } from "./Speed.js"

/**
 * The recorded Chat Completions stream whose chunks build the upstream bodies (vercel/ai, Apache-2.0: see
 * `fixtures/SOURCES.md`), one JSON chunk per line, resolved relative to this file.
 *
 * @since 0.1.0
 * @category constants
 */
export const FIXTURE_URL = new URL(
  "../../../fixtures/chat-sse/vai-chat-openai-text-usage.chunks.txt",
  import.meta.url
)

/**
 * Sizes and rounds of `measure`:
 *
 * - `deltas`: content deltas in the throughput stream;
 * - `warmup`, `iterations`: untimed and timed rounds of the throughput part, each round reading the stream
 *   once directly and once through the gateway (the order alternates every round);
 * - `pacedDeltas`: content deltas in each paced stream; `intervalMs`: the pause between two of its writes,
 *   in milliseconds; `pacedRounds`: paced streams read per path (all their events pooled).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly deltas: number
  readonly warmup: number
  readonly iterations: number
  readonly pacedDeltas: number
  readonly intervalMs: number
  readonly pacedRounds: number
}

/**
 * The options of a full run (5,000-delta stream, 3 warm-up + 15 timed rounds; 3 paced streams of 200
 * deltas 2 ms apart per path) and of `--quick` (500 deltas, 1 + 3 rounds; one paced stream of 40 deltas per
 * path): well under a second.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = (quick: boolean): Options =>
  quick
    ? { deltas: 500, warmup: 1, iterations: 3, pacedDeltas: 40, intervalMs: 2, pacedRounds: 1 }
    : { deltas: 5_000, warmup: 3, iterations: 15, pacedDeltas: 200, intervalMs: 2, pacedRounds: 3 }

/**
 * The timings of one path of the throughput part: wall time from the request until its whole body was
 * read, in milliseconds, per timed round, and their median.
 *
 * @since 0.1.0
 * @category models
 */
export interface Timings {
  readonly times: ReadonlyArray<number>
  /** Median wall time per stream, in milliseconds. */
  readonly median: number
  /** SSE events received per stream (frames with a `data:` field; upstream: `[DONE]` included). */
  readonly events: number
  /** Median throughput: `events` / median time, in events per second. */
  readonly eventsPerSecond: number
}

/**
 * The throughput part: the same upstream stream of `deltas` content deltas read whole directly
 * (`upstream`) and through the gateway (`gateway`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Throughput {
  readonly deltas: number
  /** Size of the upstream's SSE body, in bytes. */
  readonly upstreamBytes: number
  /** Size of the gateway's SSE body, in bytes. */
  readonly gatewayBytes: number
  readonly warmup: number
  readonly iterations: number
  readonly upstream: Timings
  readonly gateway: Timings
  /**
   * Time the gateway adds per event: (median gateway time − median upstream time) / events received through
   * the gateway, in microseconds.
   */
  readonly addedMicrosPerEvent: number
}

/**
 * Per-event latency of one path of the paced part: receive time − send time of every text delta, in
 * microseconds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Latency {
  /** Text deltas measured (all paced rounds pooled). */
  readonly events: number
  /** Median latency, in microseconds. */
  readonly median: number
  /** 90th percentile latency (nearest rank), in microseconds. */
  readonly p90: number
  /** Largest latency, in microseconds. */
  readonly max: number
}

/**
 * The paced part: per-event latency directly (`upstream`) and through the gateway (`gateway`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Paced {
  readonly deltas: number
  /** Pause between two upstream writes, in milliseconds. */
  readonly intervalMs: number
  readonly rounds: number
  readonly upstream: Latency
  readonly gateway: Latency
  /** Latency the gateway adds per event: gateway median − upstream median, in microseconds. */
  readonly addedMicros: number
}

/**
 * What `measure` returns: both parts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly throughput: Throughput
  readonly paced: Paced
}

/**
 * A stream read from the upstream or through the gateway was not what the upstream sent: an HTTP error,
 * an event stream not ending with `response.completed` (gateway) or `[DONE]` (upstream), or a different
 * text.
 *
 * @since 0.1.0
 * @category errors
 */
export class WrongStream extends Error {
  constructor(readonly path: string, detail: string) {
    super(`${path}: ${detail}`)
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON and SSE helpers

type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const field = (value: unknown, key: string): unknown => (isObject(value) ? value[key] : undefined)

/** `choices[0].delta.content` of a Chat Completions chunk, `undefined` when absent or not a string. */
const chatContent = (chunk: unknown): string | undefined => {
  const choices = field(chunk, "choices")
  const content = Array.isArray(choices) ? field(field(choices[0], "delta"), "content") : undefined
  return typeof content === "string" ? content : undefined
}

/** Cuts complete SSE frames off `buffer`: the `data:` payload of each (frames without one skipped), and the rest. */
const cutFrames = (buffer: string): { readonly data: Array<string>; readonly rest: string } => {
  const data: Array<string> = []
  let start = 0
  for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n", start)) {
    const lines = buffer.slice(start, end).split("\n").filter((line) => line.startsWith("data:"))
    if (lines.length > 0) data.push(lines.map((line) => line.slice(line.startsWith("data: ") ? 6 : 5)).join("\n"))
    start = end + 2
  }
  return { data, rest: buffer.slice(start) }
}

/**
 * Checks the Responses events (the `data:` payloads) read through the gateway: the last one is
 * `response.completed` and the `response.output_text.delta`s add up to `expected`. Returns the number of
 * events.
 */
const checkGateway = (payloads: ReadonlyArray<string>, expected: string): number => {
  const events = payloads.map((data): unknown => JSON.parse(data))
  const last = events[events.length - 1]
  if (field(last, "type") !== "response.completed") {
    throw new WrongStream(
      "through the gateway",
      `the event stream ended with ${JSON.stringify(field(last, "type"))}, not response.completed: ` +
        JSON.stringify(payloads[payloads.length - 1] ?? "").slice(0, 200)
    )
  }
  let text = ""
  for (const event of events) {
    if (field(event, "type") === "response.output_text.delta") text += String(field(event, "delta"))
  }
  if (text !== expected) {
    throw new WrongStream(
      "through the gateway",
      `text of ${text.length} characters, the upstream sent ${expected.length}: ${JSON.stringify(text.slice(0, 60))}`
    )
  }
  return events.length
}

/** Checks a Chat Completions stream read directly: ends with `[DONE]`, content adds up to `expected`. */
const checkUpstream = (payloads: ReadonlyArray<string>, expected: string): void => {
  if (payloads[payloads.length - 1] !== "[DONE]") throw new WrongStream("upstream alone", "the stream did not end with [DONE]")
  const text = payloads.slice(0, -1).map((data) => chatContent(JSON.parse(data)) ?? "").join("")
  if (text !== expected) {
    throw new WrongStream("upstream alone", `text of ${text.length} characters, expected ${expected.length}`)
  }
}

const post = async (url: string, body: unknown): Promise<Response> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (response.status !== 200 || response.body === null) {
    throw new WrongStream(url, `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`)
  }
  return response
}

// ---------------------------------------------------------------------------------------------------------
// The upstreams

const CHAT_REQUEST = { model: "gpt-4.1-nano", messages: [{ role: "user", content: "Write a long story." }], stream: true }
const RESPONSES_REQUEST = { model: "gpt-4.1-nano", input: "Write a long story.", stream: true }

const readChunks = (): ReadonlyArray<string> =>
  readFileSync(FIXTURE_URL, "utf8").split("\n").filter((line) => line.trim() !== "")

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
}

const close = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })

/** Answers every request with `handler` once its body was read. */
const upstreamServer = (handler: (response: ServerResponse) => void): Server =>
  createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume()
    request.on("end", () => handler(response))
  })

/** The throughput stream: the first chunk, `deltas` content chunks of the recording cycled, the last two. */
const longStream = (chunks: ReadonlyArray<string>, deltas: number): { readonly sse: string; readonly text: string } => {
  const content = chunks.filter((line) => (chatContent(JSON.parse(line)) ?? "") !== "")
  const body: Array<string> = [chunks[0]!]
  for (let i = 0; i < deltas; i++) body.push(content[i % content.length]!)
  body.push(...chunks.slice(-2))
  const text = body.map((line) => chatContent(JSON.parse(line)) ?? "").join("")
  return { sse: `${body.map((line) => `data: ${line}\n\n`).join("")}data: [DONE]\n\n`, text }
}

/**
 * The paced upstream: the recording's first chunk, then `deltas` content chunks whose content is the send
 * time (`performance.now()`) followed by `;`, one `write` each, `intervalMs` apart; then the recording's
 * last two chunks and `[DONE]`. `sent` holds the text of the stream being written (one stream at a time).
 */
const pacedServer = (chunks: ReadonlyArray<string>, deltas: number, intervalMs: number) => {
  const first = chunks[0]!
  const template: unknown = JSON.parse(chunks[1]!)
  const state = { sent: "" }
  const server = upstreamServer((response) => {
    response.socket?.setNoDelay(true)
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    response.write(`data: ${first}\n\n`)
    state.sent = chatContent(JSON.parse(first)) ?? ""
    let written = 0
    let closed = false
    response.on("close", () => {
      closed = true
    })
    const next = () => {
      if (closed) return
      if (written === deltas) {
        response.end(`${chunks.slice(-2).map((line) => `data: ${line}\n\n`).join("")}data: [DONE]\n\n`)
        return
      }
      written++
      const content = `${performance.now().toFixed(4)};`
      const chunk = isObject(template)
        ? { ...template, choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] }
        : template
      state.sent += content
      response.write(`data: ${JSON.stringify(chunk)}\n\n`)
      setTimeout(next, intervalMs)
    }
    setTimeout(next, intervalMs)
  })
  return { server, state }
}

// ---------------------------------------------------------------------------------------------------------
// Measuring

/** Reads the whole body; the wall time from the request to the last byte in milliseconds, and the text. */
const readWhole = async (url: string, body: unknown): Promise<{ readonly time: number; readonly text: string }> => {
  const start = performance.now()
  const response = await post(url, body)
  const bytes = await response.arrayBuffer()
  const time = performance.now() - start
  return { time, text: new TextDecoder().decode(bytes) }
}

/**
 * Reads a body incrementally; for every complete SSE frame, `onData` gets its `data:` payload and the time
 * (`performance.now()`) its last bytes were received. Returns every payload.
 */
const readIncrementally = async (
  url: string,
  body: unknown,
  onData: (data: string, receivedAt: number) => void
): Promise<ReadonlyArray<string>> => {
  const response = await post(url, body)
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const payloads: Array<string> = []
  let buffer = ""
  for (;;) {
    const { done, value } = await reader.read()
    const receivedAt = performance.now()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    const frames = cutFrames(buffer)
    buffer = frames.rest
    for (const data of frames.data) {
      payloads.push(data)
      onData(data, receivedAt)
    }
  }
  if ((buffer + decoder.decode()).trim() !== "") throw new WrongStream(url, "the body ended inside an SSE frame")
  return payloads
}

const nearestRank = (sorted: ReadonlyArray<number>, fraction: number): number =>
  sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)]!

const latency = (samples: ReadonlyArray<number>): Latency => {
  if (samples.length === 0) throw new Error("paced: no text delta received")
  const sorted = [...samples].sort((a, b) => a - b)
  return { events: samples.length, median: median(sorted), p90: nearestRank(sorted, 0.9), max: sorted[sorted.length - 1]! }
}

/** The send times carried by a delta text (`<time>;` once per upstream delta, whatever the grouping). */
const sendTimes = (text: string): Array<number> => text.split(";").filter((part) => part !== "").map(Number)

/**
 * Starts the gateway in front of the Chat Completions upstream at `upstreamUrl` on a loopback port; its
 * logs go to stderr so that the report on stdout stays clean.
 */
const startGateway = async (upstreamUrl: string) => {
  const runtime = ManagedRuntime.make(
    Gateway.layer().pipe(
      Layer.provide(Upstream.chatCompletions({ baseUrl: upstreamUrl, retry: { times: 0 } })),
      Layer.provide(NodeHttpClient.layerUndici),
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      // stderr, warnings up: the access log lines (info, one per request) would fill the report and cost time
      Layer.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.stringLogger))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )
  const url = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => {
    const address = server.address
    if (address._tag !== "TcpAddress") throw new Error("gateway: not listening on TCP")
    return `http://${address.hostname}:${address.port}/v1`
  }))
  return { runtime, url }
}

/**
 * Measures the gateway's throughput and per-event latency against the upstream alone (see the module doc),
 * with every stream checked. Starts two loopback upstreams and the gateway for each of them, and closes them
 * all before returning or failing. Fails with `WrongStream`.
 *
 * @since 0.1.0
 * @category measuring
 */
export const measure = async (options: Options, progress: (message: string) => void = () => {}): Promise<Result> => {
  const chunks = readChunks()
  const long = longStream(chunks, options.deltas)
  const bulk = upstreamServer((response) => {
    response.writeHead(200, { "content-type": "text/event-stream" })
    response.end(long.sse)
  })
  const paced = pacedServer(chunks, options.pacedDeltas, options.intervalMs)
  const servers: Array<Server> = []
  const runtimes: Array<ManagedRuntime.ManagedRuntime<never, unknown>> = []
  try {
    servers.push(bulk, paced.server)
    const bulkUrl = await listen(bulk)
    const pacedUrl = await listen(paced.server)
    const bulkGateway = await startGateway(bulkUrl)
    runtimes.push(bulkGateway.runtime)
    const pacedGateway = await startGateway(pacedUrl)
    runtimes.push(pacedGateway.runtime)

    // Throughput.
    progress(`gateway: ${options.deltas}-delta stream, ${options.warmup} warm-up + ${options.iterations} rounds per path`)
    let gatewayEvents = 0
    let gatewayBytes = 0
    const upstreamRound = async () => {
      const { time, text } = await readWhole(`${bulkUrl}/chat/completions`, CHAT_REQUEST)
      if (text !== long.sse) throw new WrongStream("upstream alone", `a body of ${text.length} characters, sent ${long.sse.length}`)
      return time
    }
    const gatewayRound = async () => {
      const { time, text } = await readWhole(`${bulkGateway.url}/responses`, RESPONSES_REQUEST)
      const frames = cutFrames(text)
      if (frames.rest.trim() !== "") throw new WrongStream("through the gateway", "the body ended inside an SSE frame")
      gatewayEvents = checkGateway(frames.data, long.text)
      gatewayBytes = text.length
      return time
    }
    for (let round = 0; round < options.warmup; round++) {
      await upstreamRound()
      await gatewayRound()
    }
    const upstreamTimes: Array<number> = []
    const gatewayTimes: Array<number> = []
    for (let round = 0; round < options.iterations; round++) {
      if (round % 2 === 0) {
        upstreamTimes.push(await upstreamRound())
        gatewayTimes.push(await gatewayRound())
      } else {
        gatewayTimes.push(await gatewayRound())
        upstreamTimes.push(await upstreamRound())
      }
    }
    const upstreamEvents = cutFrames(long.sse).data.length
    const timings = (times: ReadonlyArray<number>, events: number): Timings => {
      const m = median(times)
      return { times, median: m, events, eventsPerSecond: events / (m / 1000) }
    }
    const upstream = timings(upstreamTimes, upstreamEvents)
    const gateway = timings(gatewayTimes, gatewayEvents)
    const throughput: Throughput = {
      deltas: options.deltas,
      upstreamBytes: long.sse.length,
      gatewayBytes,
      warmup: options.warmup,
      iterations: options.iterations,
      upstream,
      gateway,
      addedMicrosPerEvent: ((gateway.median - upstream.median) / gatewayEvents) * 1000
    }

    // Paced latency.
    progress(`gateway: ${options.pacedRounds} paced stream(s) of ${options.pacedDeltas} deltas ${options.intervalMs} ms apart per path`)
    const upstreamSamples: Array<number> = []
    const gatewaySamples: Array<number> = []
    const pacedUpstream = async () => {
      const payloads = await readIncrementally(`${pacedUrl}/chat/completions`, CHAT_REQUEST, (data, at) => {
        if (data === "[DONE]") return
        for (const sent of sendTimes(chatContent(JSON.parse(data)) ?? "")) upstreamSamples.push((at - sent) * 1000)
      })
      checkUpstream(payloads, paced.state.sent)
    }
    const pacedGatewayRound = async () => {
      const payloads = await readIncrementally(`${pacedGateway.url}/responses`, RESPONSES_REQUEST, (data, at) => {
        const event: unknown = JSON.parse(data)
        if (field(event, "type") !== "response.output_text.delta") return
        for (const sent of sendTimes(String(field(event, "delta")))) gatewaySamples.push((at - sent) * 1000)
      })
      checkGateway(payloads, paced.state.sent)
    }
    for (let round = 0; round < options.pacedRounds; round++) {
      if (round % 2 === 0) {
        await pacedUpstream()
        await pacedGatewayRound()
      } else {
        await pacedGatewayRound()
        await pacedUpstream()
      }
    }
    const expectedSamples = options.pacedDeltas * options.pacedRounds
    for (const [path, samples] of [["upstream alone", upstreamSamples], ["through the gateway", gatewaySamples]] as const) {
      if (samples.length !== expectedSamples || samples.some((sample) => !Number.isFinite(sample))) {
        throw new WrongStream(path, `paced: ${samples.length} send times read, expected ${expectedSamples}`)
      }
    }
    const upstreamLatency = latency(upstreamSamples)
    const gatewayLatency = latency(gatewaySamples)
    return {
      throughput,
      paced: {
        deltas: options.pacedDeltas,
        intervalMs: options.intervalMs,
        rounds: options.pacedRounds,
        upstream: upstreamLatency,
        gateway: gatewayLatency,
        addedMicros: gatewayLatency.median - upstreamLatency.median
      }
    }
  } finally {
    for (const runtime of runtimes) await runtime.dispose()
    for (const server of servers) await close(server)
  }
}
