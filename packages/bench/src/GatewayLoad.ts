/**
 * The gateway as it is deployed: the built `effect-responses serve` in a child process of its own (access
 * log on, as a user runs it) in front of a loopback Chat Completions upstream in this process, so that its
 * CPU time and memory are its own. The CPU time is read from `/proc/<pid>/task/<tid>/schedstat` (nanoseconds
 * on a core, summed over the gateway's threads: GC and libuv helpers included), which the waits for a core on
 * a loaded machine do not inflate; the memory from `/proc/<pid>/status` (`VmRSS`, `VmHWM`).
 *
 * - **Idle**: RSS one second after the gateway answers `/health`, before any request; then the CPU per
 *   `GET /health` (`requests` of them, `concurrency` at a time): the HTTP server's own floor per request.
 * - **Requests**: `requests` streamed requests of one content delta each, `concurrency` at a time: the
 *   gateway's CPU per request (decoding the request, calling the upstream, the lifecycle events, the access
 *   log line).
 * - **Paced**: `streams` concurrent streams of `deltas` content deltas each, one upstream write every
 *   `intervalMs`: the gateway's CPU per event it sends (all its CPU during the run over the events it wrote),
 *   its RSS while they run, and what that makes for streams per core at 100 tokens/s.
 * - **Unpaced**: one stream of `longDeltas` content deltas, written by the upstream as fast as the socket
 *   takes them, read whole directly and through the gateway, interleaved: events per second through the
 *   gateway, the time it adds per event and to the first byte (medians), its CPU per event.
 *
 * Every stream read through the gateway must end with `response.completed` and carry exactly the text the
 * upstream sent (else `measure` fails): an error page is never measured.
 *
 * With `server: "floor"` the same parts measure `FloorProxy` (a bare `node:http` proxy, no Effect, one
 * delta frame written per upstream chunk) in place of the gateway: what Node itself costs per event.
 *
 * @since 0.2.0
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, readdirSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { createServer as createNetServer } from "node:net"
import { fileURLToPath } from "node:url"
import { median } from "./Speed.js"

const bin = fileURLToPath(new URL("../../cli/bin/effect-responses.mjs", import.meta.url))
const child = fileURLToPath(new URL("./child.ts", import.meta.url))

/**
 * Sizes of `measure` (see the module doc).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly requests: number
  readonly concurrency: number
  readonly streams: number
  readonly deltas: number
  readonly intervalMs: number
  readonly longDeltas: number
  readonly longRounds: number
  /** Node options for the gateway process (e.g. `["--cpu-prof", "--cpu-prof-dir=/tmp/prof"]` to profile it). */
  readonly nodeArgs?: ReadonlyArray<string> | undefined
  /** The CLI script to run (default the bundled `bin/effect-responses.mjs`; `dist/bin.js` profiles readably). */
  readonly entry?: string | undefined
  /** What is measured: the gateway (default) or the floor, `FloorProxy` (see the module doc). */
  readonly server?: "gateway" | "floor" | undefined
}

/**
 * A full run (1,000 one-delta requests 20 at a time; 200 streams x 500 deltas 10 ms apart, the issue's
 * figure of 100 tokens/s; a 50,000-delta stream, 2 warm-up + 7 rounds per path) and `--quick` (a smoke run).
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults = (quick: boolean): Options =>
  quick
    ? { requests: 20, concurrency: 4, streams: 4, deltas: 20, intervalMs: 10, longDeltas: 2_000, longRounds: 2 }
    : { requests: 1_000, concurrency: 20, streams: 200, deltas: 500, intervalMs: 10, longDeltas: 50_000, longRounds: 7 }

/**
 * What `measure` returns. CPU times in microseconds, RSS in bytes.
 *
 * @since 0.2.0
 * @category models
 */
export interface Result {
  readonly options: Options
  readonly idleRss: number
  /** The gateway's CPU per `GET /health` (the HTTP server and router alone: the floor of any request). */
  readonly cpuPerHealth: number
  /**
   * The one-delta requests: `cpuPerRequest` over the first batch of `requests` (after 50 warm-up requests,
   * so it still holds the JIT's warm-up of the request path), `cpuPerRequestWarm` over a second batch of the
   * same size right after it (a gateway that has served its first thousand requests).
   */
  readonly requests: {
    readonly cpuPerRequest: number
    readonly cpuPerRequestWarm: number
    readonly eventsPerRequest: number
    readonly seconds: number
  }
  readonly paced: {
    readonly events: number
    readonly seconds: number
    readonly cpuPerEvent: number
    /** The gateway's CPU per stream of the run (its whole CPU during the run / streams). */
    readonly cpuPerStream: number
    /** The gateway's CPU as a share of one core during the run. */
    readonly coreShare: number
    readonly peakRss: number
    /** Streams one core keeps going at 100 content deltas per second: 1 s / (CPU per event x events per second). */
    readonly streamsPerCore: number
  }
  readonly unpaced: {
    readonly events: number
    readonly upstreamMs: number
    readonly gatewayMs: number
    readonly eventsPerSecond: number
    readonly addedMicrosPerEvent: number
    readonly upstreamFirstByteMs: number
    readonly gatewayFirstByteMs: number
    readonly cpuPerEvent: number
  }
  /** The load average when the measurement started and ended (1 minute). */
  readonly load: readonly [number, number]
}

// ---------------------------------------------------------------------------------------------------------
// the upstream

const CHUNK_BASE = {
  id: "chatcmpl-bench",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "gpt-4.1-nano-2025-04-14",
  service_tier: "default",
  system_fingerprint: "fp_bench"
}

const chunk = (delta: object, finish: string | null = null, usage?: object): string =>
  `data: ${JSON.stringify({ ...CHUNK_BASE, choices: usage === undefined ? [{ index: 0, delta, logprobs: null, finish_reason: finish }] : [], ...(usage === undefined ? {} : { usage }) })}\n\n`

const FIRST = chunk({ role: "assistant", content: "", refusal: null })
const LAST = `${chunk({}, "stop")}${chunk({}, null, { prompt_tokens: 12, completion_tokens: 500, total_tokens: 512 })}data: [DONE]\n\n`

/** The content of delta `i`: a word, as a model sends about one token per chunk. */
const word = (i: number): string => ` w${i % 1000}`

const textOf = (deltas: number): string => {
  let text = ""
  for (let i = 0; i < deltas; i++) text += word(i)
  return text
}

/** What the request asks for: its user message is `<deltas> <intervalMs>` (the bench's own convention). */
const askedFor = (body: string): { readonly deltas: number; readonly interval: number } => {
  const request = JSON.parse(body) as { messages?: ReadonlyArray<{ content?: unknown }> }
  const content = request.messages?.at(-1)?.content
  const [deltas = 0, interval = 0] = (typeof content === "string" ? content : "").split(" ").map(Number)
  return { deltas, interval }
}

/**
 * The whole body of an unpaced stream of `deltas` content deltas, made once per count: made per request, a
 * 10 MB body took tens of milliseconds (and its garbage) in this process before either path's first byte,
 * which made the first-byte figures differ by more than the gateway adds.
 */
const unpacedBody = (() => {
  const bodies = new Map<number, Buffer>()
  return (deltas: number): Buffer => {
    let body = bodies.get(deltas)
    if (body === undefined) {
      const parts: Array<string> = [FIRST]
      for (let i = 0; i < deltas; i++) parts.push(chunk({ content: word(i) }))
      parts.push(LAST)
      body = Buffer.from(parts.join(""))
      bodies.set(deltas, body)
    }
    return body
  }
})()

/**
 * The upstream: the user message says `<deltas> <intervalMs>`; it answers a Chat Completions stream of that
 * many content deltas, paced (one write per delta, `intervalMs` apart) or, with 0, written in one go.
 */
const upstream = (): Server =>
  createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (piece: string) => (body += piece))
    request.on("end", () => {
      const { deltas, interval } = askedFor(body)
      response.socket?.setNoDelay(true)
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      if (interval === 0) return void response.end(unpacedBody(deltas))
      response.write(FIRST)
      let written = 0
      let closed = false
      response.on("close", () => (closed = true))
      const next = () => {
        if (closed) return
        if (written === deltas) return void response.end(LAST)
        response.write(chunk({ content: word(written++) }))
        setTimeout(next, interval)
      }
      setTimeout(next, interval)
    })
  })

// ---------------------------------------------------------------------------------------------------------
// the gateway process

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createNetServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/** Nanoseconds the process's threads have spent on a core (`schedstat`, summed over its live threads). */
const cpuNanos = (pid: number): number => {
  let total = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0])
    } catch {
      // a thread that ended meanwhile
    }
  }
  return total
}

const statusField = (pid: number, field: string): number => {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  if (match === null) throw new Error(`no ${field} in /proc/${pid}/status`)
  return Number(match[1]) * 1024
}

/**
 * Listens with `upstream` on a loopback port: its base URL (`http://127.0.0.1:PORT/v1`).
 *
 * @since 0.2.0
 * @category the gateway process
 */
export const listen = async (upstream: Server): Promise<string> => {
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", () => resolve()))
  return `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`
}

/**
 * Starts the gateway (or the floor) in a child process in front of `upstreamUrl` and waits until it answers
 * `/health` (30 s at most): its process, pid, base URL (`…/v1`) and what it wrote to stderr so far.
 *
 * @since 0.2.0
 * @category the gateway process
 */
export const startGateway = async (upstreamUrl: string, options: Pick<Options, "nodeArgs" | "entry" | "server">) => {
  const port = await freePort()
  const nodeArgs = options.nodeArgs ?? []
  // the floor runs through `child.ts` with this process's loader (`tsx`), never under its `--cpu-prof`
  const args = options.server === "floor"
    ? [...process.execArgv.filter((flag) => !flag.startsWith("--cpu-prof")), ...nodeArgs, child, "floor-proxy", upstreamUrl, String(port)]
    : [...nodeArgs, options.entry ?? bin, "serve", "--upstream", upstreamUrl, "--port", String(port)]
  const server = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] })
  let stderr = ""
  server.stderr.on("data", (piece) => (stderr += piece))
  const url = `http://127.0.0.1:${port}/v1`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the gateway exited (${server.exitCode}): ${stderr.slice(0, 500)}`)
    if (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)) break
    if (Date.now() > deadline) throw new Error("the gateway did not answer /health within 30 s")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { child: server, pid: server.pid!, url, stderr: () => stderr }
}

// ---------------------------------------------------------------------------------------------------------
// clients

/** Streams `<deltas> <interval>` through `/v1/responses`; checks the events; the count and the first-byte time. */
const throughGateway = async (url: string, deltas: number, interval: number) => {
  const start = performance.now()
  const response = await fetch(`${url}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4.1-nano", input: `${deltas} ${interval}`, stream: true })
  })
  if (response.status !== 200 || response.body === null) {
    throw new Error(`gateway: HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`)
  }
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let firstByte = 0
  let text = ""
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (firstByte === 0) firstByte = performance.now() - start
    text += decoder.decode(value, { stream: true })
  }
  const time = performance.now() - start
  const frames = text.split("\n\n").filter((frame) => frame.trim() !== "")
  let deltaText = ""
  let last = ""
  for (const frame of frames) {
    const at = frame.indexOf("data: ")
    const event = JSON.parse(frame.slice(at + 6)) as { type?: string; delta?: string }
    if (event.type === "response.output_text.delta") deltaText += event.delta
    last = event.type ?? ""
  }
  if (last !== "response.completed") throw new Error(`gateway: the stream ended with ${last}, not response.completed`)
  if (deltaText !== textOf(deltas)) throw new Error(`gateway: a text of ${deltaText.length} characters, expected ${textOf(deltas).length}`)
  return { events: frames.length, firstByte, time }
}

/** The same stream read from the upstream directly (Chat Completions), whole. */
const direct = async (url: string, deltas: number) => {
  const start = performance.now()
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content: `${deltas} 0` }], stream: true })
  })
  const reader = response.body!.getReader()
  let firstByte = 0
  let bytes = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (firstByte === 0) firstByte = performance.now() - start
    bytes += value.length
  }
  if (bytes === 0) throw new Error("upstream: an empty body")
  return { firstByte, time: performance.now() - start }
}

const pool = async (count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> => {
  let next = 0
  const worker = async () => {
    while (next < count) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, worker))
}

// ---------------------------------------------------------------------------------------------------------
// measuring

/**
 * Runs the four parts against one gateway process, and stops it and the upstream before returning or
 * failing.
 *
 * @since 0.2.0
 * @category measuring
 */
export const measure = async (options: Options, progress: (message: string) => void = () => {}): Promise<Result> => {
  const { loadavg } = await import("node:os")
  const loadStart = loadavg()[0]!
  const server = upstream()
  const upstreamUrl = await listen(server)
  const gateway = await startGateway(upstreamUrl, options)
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const idleRss = statusField(gateway.pid, "VmRSS")

    const health = async () => {
      const response = await fetch(gateway.url.replace(/\/v1$/, "/health"))
      if (!response.ok) throw new Error(`gateway: /health answered ${response.status}`)
      await response.text()
    }
    await pool(Math.min(50, options.requests), options.concurrency, health)
    const healthCpu = cpuNanos(gateway.pid)
    await pool(options.requests, options.concurrency, health)
    const cpuPerHealth = (cpuNanos(gateway.pid) - healthCpu) / 1000 / options.requests

    progress(`gateway load: ${options.requests} one-delta requests, ${options.concurrency} at a time`)
    await pool(Math.min(50, options.requests), options.concurrency, () => throughGateway(gateway.url, 1, 0).then(() => {}))
    let requestEvents = 0
    let cpu = cpuNanos(gateway.pid)
    let start = performance.now()
    await pool(options.requests, options.concurrency, async () => {
      const { events } = await throughGateway(gateway.url, 1, 0)
      requestEvents += events
    })
    const cpuPerRequest = (cpuNanos(gateway.pid) - cpu) / 1000 / options.requests
    const seconds = (performance.now() - start) / 1000
    cpu = cpuNanos(gateway.pid)
    await pool(options.requests, options.concurrency, () => throughGateway(gateway.url, 1, 0).then(() => {}))
    const requests = {
      cpuPerRequest,
      cpuPerRequestWarm: (cpuNanos(gateway.pid) - cpu) / 1000 / options.requests,
      eventsPerRequest: requestEvents / options.requests,
      seconds
    }

    progress(`gateway load: ${options.streams} streams of ${options.deltas} deltas ${options.intervalMs} ms apart`)
    let pacedEvents = 0
    let peakRss = 0
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, statusField(gateway.pid, "VmRSS"))
    }, 100)
    cpu = cpuNanos(gateway.pid)
    start = performance.now()
    try {
      await pool(options.streams, options.streams, async () => {
        const { events } = await throughGateway(gateway.url, options.deltas, options.intervalMs)
        pacedEvents += events
      })
    } finally {
      clearInterval(sampler)
    }
    const pacedCpu = (cpuNanos(gateway.pid) - cpu) / 1000
    const pacedSeconds = (performance.now() - start) / 1000
    const cpuPerEvent = pacedCpu / pacedEvents
    const eventsPerStream = pacedEvents / options.streams
    const paced = {
      events: pacedEvents,
      seconds: pacedSeconds,
      cpuPerEvent,
      cpuPerStream: pacedCpu / options.streams,
      coreShare: pacedCpu / 1e6 / pacedSeconds,
      peakRss,
      // a stream of 100 deltas/s sends about eventsPerStream / deltas events per delta
      streamsPerCore: 1e6 / (cpuPerEvent * 100 * (eventsPerStream / options.deltas))
    }

    progress(`gateway load: a ${options.longDeltas}-delta stream, ${options.longRounds} rounds per path`)
    for (let i = 0; i < 2; i++) {
      await direct(upstreamUrl, options.longDeltas)
      await throughGateway(gateway.url, options.longDeltas, 0)
    }
    const upstreamTimes: Array<number> = []
    const upstreamFirst: Array<number> = []
    const gatewayTimes: Array<number> = []
    const gatewayFirst: Array<number> = []
    const cpus: Array<number> = []
    let longEvents = 0
    for (let round = 0; round < options.longRounds; round++) {
      const d = await direct(upstreamUrl, options.longDeltas)
      upstreamTimes.push(d.time)
      upstreamFirst.push(d.firstByte)
      const before = cpuNanos(gateway.pid)
      const g = await throughGateway(gateway.url, options.longDeltas, 0)
      cpus.push((cpuNanos(gateway.pid) - before) / 1000)
      gatewayTimes.push(g.time)
      gatewayFirst.push(g.firstByte)
      longEvents = g.events
    }
    const upstreamMs = median(upstreamTimes)
    const gatewayMs = median(gatewayTimes)
    const unpaced = {
      events: longEvents,
      upstreamMs,
      gatewayMs,
      eventsPerSecond: longEvents / (gatewayMs / 1000),
      addedMicrosPerEvent: ((gatewayMs - upstreamMs) / longEvents) * 1000,
      upstreamFirstByteMs: median(upstreamFirst),
      gatewayFirstByteMs: median(gatewayFirst),
      cpuPerEvent: median(cpus) / longEvents
    }
    return { options, idleRss, cpuPerHealth, requests, paced, unpaced, load: [loadStart, loadavg()[0]!] }
  } finally {
    await stop(gateway.child, server)
  }
}

/**
 * Stops the gateway process and the upstream: SIGTERM (which lets it write a `--cpu-prof` profile), SIGKILL
 * if it has not exited 5 s later.
 *
 * @since 0.2.0
 * @category the gateway process
 */
export const stop = async (gateway: ChildProcess, upstream: Server): Promise<void> => {
  const exited = new Promise((resolve) => gateway.once("exit", resolve))
  gateway.kill("SIGTERM")
  const kill = setTimeout(() => gateway.kill("SIGKILL"), 5000)
  await exited
  clearTimeout(kill)
  upstream.closeAllConnections()
  await new Promise<void>((resolve) => upstream.close(() => resolve()))
}
