/**
 * How long one large legal request stalls the gateway's other requests: the built `effect-responses serve`
 * in a child process (`GatewayLoad.startGateway`) in front of a loopback Chat Completions upstream that
 * reads the whole request and answers a short stream, with `GET /health` polled meanwhile, one request at
 * a time, 1 ms apart.
 *
 * - **First request**: a fresh gateway's first request (small, streamed).
 * - **Warm small request**: the same once the gateway has served a few, for scale.
 * - **Large request**: `rounds` streamed requests of `items` input items shaped like a coding agent's long
 *   session (a sixth each: user messages, reasoning items with a summary and 700 characters of encrypted
 *   content, function calls, their outputs, reasoning items with encrypted content only, assistant
 *   messages), after the small ones.
 *
 * Each reports the longest `/health` wait and the 99th percentile (wall ms), and the most main-thread CPU
 * time the gateway spent during one wait (`/proc/<pid>/task/<pid>/schedstat`; the kernel updates it about
 * every 4 ms; the `/health` answer itself included, about 1-2 ms): what the gateway itself held its event
 * loop for, which on a loaded machine the wall time overstates by the waits for a core. Every request must end with `response.completed`, and the upstream
 * must have received a body of the same size in every round (else `measure` fails).
 *
 * @since 0.2.0
 */
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import * as GatewayLoad from "./GatewayLoad.js"
import { median } from "./Speed.js"

/**
 * `items`: input items of the large request; `rounds`: large requests measured.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly items: number
  readonly rounds: number
  /** As `GatewayLoad.Options`: node options and the CLI script of the gateway process. */
  readonly nodeArgs?: ReadonlyArray<string> | undefined
  readonly entry?: string | undefined
}

/**
 * A full run (20,000 items, the gateway's default bound: about 7.7 MB; 5 rounds) and `--quick` (2,000
 * items, 1 round).
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults = (quick: boolean): Options => quick ? { items: 2_000, rounds: 1 } : { items: 20_000, rounds: 5 }

/**
 * The `/health` waits while one request ran: the longest and the 99th percentile (wall ms), how many were
 * polled, and the most main-thread CPU the gateway spent during one of them (ms).
 *
 * @since 0.2.0
 * @category models
 */
export interface Waits {
  readonly maxMs: number
  readonly p99Ms: number
  readonly cpuMs: number
  readonly polls: number
  /** The request's own wall time, ms. */
  readonly requestMs: number
}

/**
 * What `measure` returns.
 *
 * @since 0.2.0
 * @category models
 */
export interface Result {
  readonly options: Options
  /** Size of the large request's body, in bytes. */
  readonly bytes: number
  readonly first: Waits
  readonly warm: Waits
  readonly large: ReadonlyArray<Waits>
  /** The load average when the measurement started and ended (1 minute). */
  readonly load: readonly [number, number]
}

/**
 * The body of a streamed request with `items` input items (see the module doc).
 *
 * @since 0.2.0
 * @category constructors
 */
export const body = (items: number): string => {
  const encrypted = `gAAAAAB${"x".repeat(700)}`
  const input: Array<unknown> = [{ type: "message", role: "system", content: "You are a coding agent." }]
  for (let i = 1; i < items; i++) {
    switch (i % 6) {
      case 0:
        input.push({ type: "message", role: "user", content: [{ type: "input_text", text: `Open file ${i} and fix the bug, then run the tests.` }] })
        break
      case 1:
        input.push({ type: "reasoning", id: `rs_${i}`, summary: [{ type: "summary_text", text: `Looking at file ${i}.` }], encrypted_content: encrypted })
        break
      case 2:
        input.push({ type: "function_call", id: `fc_${i}`, call_id: `call_${i}`, name: "read_file", arguments: `{"path":"src/file${i}.ts"}`, status: "completed" })
        break
      case 3:
        input.push({ type: "function_call_output", call_id: `call_${i - 1}`, output: `export const value${i} = ${i}\n`.repeat(6) })
        break
      case 4:
        input.push({ type: "reasoning", id: `rs_${i}`, summary: [], encrypted_content: encrypted })
        break
      default:
        input.push({ type: "message", role: "assistant", id: `msg_${i}`, status: "completed", content: [{ type: "output_text", text: `Fixed file ${i}.`, annotations: [] }] })
    }
  }
  return JSON.stringify({
    model: "bench-model",
    stream: true,
    tools: [{ type: "function", name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } }],
    input
  })
}

const chunk = (delta: object, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: "chatcmpl-stall", object: "chat.completion.chunk", created: 0, model: "bench-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/**
 * The upstream: reads the request whole and answers `bytes: N`, N the size of the body it received (counted,
 * not parsed: this process polls `/health`, and a parse of megabytes here would delay the polls).
 */
const upstream = (): Server =>
  createServer((request, response) => {
    let bytes = 0
    request.on("data", (piece: Buffer) => (bytes += piece.length))
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.end(`${chunk({ role: "assistant", content: `bytes: ${bytes}` })}${chunk({}, "stop")}data: [DONE]\n\n`)
    })
  })

/** The gateway's main-thread CPU time so far, in ms (`schedstat` of the thread whose id is the pid). */
const mainThreadMs = (pid: number): number =>
  Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6

/** Polls `/health` (one at a time, 1 ms apart) until `stop` is called, which gives the waits. */
const poll = (base: string, pid: number) => {
  const waits: Array<{ readonly ms: number; readonly cpu: number }> = []
  let running = true
  const loop = (async () => {
    while (running) {
      const cpu = mainThreadMs(pid)
      const start = performance.now()
      const response = await fetch(`${base}/health`)
      await response.text()
      waits.push({ ms: performance.now() - start, cpu: mainThreadMs(pid) - cpu })
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  })()
  return async (requestMs: number): Promise<Waits> => {
    running = false
    await loop
    const sorted = waits.map((wait) => wait.ms).sort((a, b) => a - b)
    return {
      maxMs: sorted.at(-1) ?? 0,
      p99Ms: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
      cpuMs: Math.max(0, ...waits.map((wait) => wait.cpu)),
      polls: waits.length,
      requestMs
    }
  }
}

/** POSTs `text` to `/v1/responses`; the text the upstream answered (after checking the stream completed). */
const post = async (url: string, text: string | Uint8Array<ArrayBuffer>): Promise<string> => {
  const response = await fetch(`${url}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: text })
  const events = await response.text()
  if (response.status !== 200 || !events.includes("\"type\":\"response.completed\"")) {
    throw new Error(`gateway: HTTP ${response.status}, not a completed stream: ${events.slice(0, 300)}`)
  }
  const done = /"type":"response\.output_text\.done"[^\n]*"text":"([^"]*)"/.exec(events)
  return done?.[1] ?? ""
}

/** Runs `request` with `/health` polled around it (20 ms before and after). */
const polled = async (base: string, pid: number, request: () => Promise<string>) => {
  const stop = poll(base, pid)
  await new Promise((resolve) => setTimeout(resolve, 20))
  const start = performance.now()
  const answer = await request()
  const requestMs = performance.now() - start
  await new Promise((resolve) => setTimeout(resolve, 20))
  return { answer, waits: await stop(requestMs) }
}

/**
 * Measures (see the module doc) against a fresh gateway process, stopped before returning or failing.
 *
 * @since 0.2.0
 * @category measuring
 */
export const measure = async (options: Options, progress: (message: string) => void = () => {}): Promise<Result> => {
  const { loadavg } = await import("node:os")
  const loadStart = loadavg()[0]!
  const server = upstream()
  const gateway = await GatewayLoad.startGateway(await GatewayLoad.listen(server), options)
  const base = gateway.url.replace(/\/v1$/, "")
  try {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const small = JSON.stringify({ model: "bench-model", input: "hi", stream: true })
    progress("gateway stall: a fresh gateway's first request")
    const first = await polled(base, gateway.pid, () => post(gateway.url, small))
    for (let i = 0; i < 3; i++) await post(gateway.url, small)
    const warm = await polled(base, gateway.pid, () => post(gateway.url, small))
    // encoded once here: encoding megabytes during a round would delay this process's polls
    const large = new TextEncoder().encode(body(options.items))
    progress(`gateway stall: ${options.rounds} requests of ${options.items} input items`)
    const rounds: Array<Waits> = []
    let answer: string | undefined
    for (let round = 0; round < options.rounds; round++) {
      const result = await polled(base, gateway.pid, () => post(gateway.url, large))
      if (!/^bytes: [1-9]/.test(result.answer) || (answer !== undefined && result.answer !== answer)) {
        throw new Error(`gateway stall: the upstream answered "${result.answer}", in an earlier round "${answer}"`)
      }
      answer = result.answer
      rounds.push(result.waits)
    }
    return { options, bytes: large.length, first: first.waits, warm: warm.waits, large: rounds, load: [loadStart, loadavg()[0]!] }
  } finally {
    await GatewayLoad.stop(gateway.child, server)
  }
}

/**
 * The median of each measure over the large rounds, and the worst of each.
 *
 * @since 0.2.0
 * @category measuring
 */
export const summary = (rounds: ReadonlyArray<Waits>): { readonly median: Waits; readonly worst: Waits } => {
  const over = (combine: (values: Array<number>) => number): Waits => ({
    maxMs: combine(rounds.map((waits) => waits.maxMs)),
    p99Ms: combine(rounds.map((waits) => waits.p99Ms)),
    cpuMs: combine(rounds.map((waits) => waits.cpuMs)),
    polls: combine(rounds.map((waits) => waits.polls)),
    requestMs: combine(rounds.map((waits) => waits.requestMs))
  })
  return { median: over(median), worst: over((values) => Math.max(...values)) }
}
