/**
 * How long one large legal request stalls the gateway's other requests: the built `effect-responses serve`
 * in a child process (`GatewayLoad.startGateway`) in front of a loopback Chat Completions upstream that
 * reads the whole request and answers a short stream, with `GET /health` polled meanwhile, one request at
 * a time, 1 ms apart, over one keep-alive connection, from a third process (`poller`, at a raised priority
 * where permitted: not from this one, whose event loop is busy sending megabytes and reading them as the
 * upstream).
 *
 * - **First request**: a fresh gateway's first request (small, streamed).
 * - **Warm small request**: the same once the gateway has served a few, for scale.
 * - **Large request**: `rounds` streamed requests of `items` input items shaped like a coding agent's long
 *   session (a sixth each: user messages, reasoning items with a summary and 700 characters of encrypted
 *   content, function calls, their outputs, reasoning items with encrypted content only, assistant
 *   messages), after the small ones.
 * - **Other kinds** (`KINDS`): `rounds` non-streamed requests each of one message, 10,000 function tools,
 *   10,000 function tools in one `namespace` tool, a 10 MB `instructions`, a tool's 10 MB description and
 *   an unknown field holding 100 arrays of 78,000 zeros (15 MB), after two of each as warm-up.
 *
 * Each reports the longest `/health` wait and the 99th percentile (wall ms), and the most main-thread CPU
 * time the gateway spent during one wait (`/proc/<pid>/task/<pid>/schedstat`; the kernel updates it about
 * every 4 ms; the `/health` answer itself included, about 1-2 ms): what the gateway itself held its event
 * loop for, which on a loaded machine the wall time overstates by the waits for a core. Both count the
 * poller's own delays (at load 5 it has received an answer 100+ ms after the gateway wrote it, the
 * gateway's CPU meanwhile counted too): compare runs at a similar load. Every request must end with
 * `response.completed`, and the upstream must have received a body of the same size in every round (else
 * `measure` fails).
 *
 * @since 0.2.0
 */
import { completionText, finishChunks, textChunk } from "@effect-responses/testing/ScriptedServer"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { setPriority } from "node:os"
import { createServer, type Server } from "node:http"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import * as GatewayLoad from "./GatewayLoad.js"
import { median } from "./Speed.js"

const CHILD = fileURLToPath(new URL("./child.ts", import.meta.url))

/**
 * `items`: input items of the large request; `rounds`: large requests measured.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly items: number
  readonly rounds: number
  /** The labels of the `KINDS` measured (all when absent); with `items` 0 the large request is not measured. */
  readonly kinds?: ReadonlyArray<string> | undefined
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
  /** Per kind of `KINDS`, in its order: its body's size in bytes and its rounds. */
  readonly kinds: ReadonlyArray<{ readonly label: string; readonly bytes: number; readonly rounds: ReadonlyArray<Waits> }>
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

/** `length` characters of lorem ipsum. */
const filler = (length: number): string => "lorem ipsum dolor sit amet, ".repeat(Math.ceil(length / 28)).slice(0, length)

/** A function tool of the shape coding agents declare, named `tool_{i}`. */
const tool = (i: number) => ({
  type: "function",
  name: `tool_${i}`,
  description: `Tool number ${i}`,
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
})

/**
 * The other kinds of large legal request measured (non-streamed; see the module doc): a label and the body.
 * Each takes a different path through the gateway's sliced parse and writers: the top-level tools a run at
 * a time, a namespace's tools the same one level deeper, a long string in slices and made whole once.
 *
 * @since 0.2.0
 * @category constants
 */
export const KINDS: ReadonlyArray<{ readonly label: string; readonly body: () => string }> = [
  { label: "one message", body: () => JSON.stringify({ model: "bench-model", input: "x" }) },
  {
    label: "10,000 tools",
    body: () => JSON.stringify({ model: "bench-model", input: "x", tools: Array.from({ length: 10_000 }, (_, i) => tool(i)) })
  },
  {
    label: "10,000 tools in one namespace",
    body: () =>
      JSON.stringify({
        model: "bench-model",
        input: "x",
        tools: [{ type: "namespace", name: "geo", description: "Places", tools: Array.from({ length: 10_000 }, (_, i) => tool(i)) }]
      })
  },
  { label: "10 MB instructions", body: () => JSON.stringify({ model: "bench-model", input: "x", instructions: filler(10_000_000) }) },
  {
    label: "a tool's 10 MB description",
    body: () => JSON.stringify({ model: "bench-model", input: "x", tools: [{ ...tool(0), description: filler(10_000_000) }] })
  },
  {
    // issue 15's report, within the bounds: a member no other slicing knows, 7.8 million values of the densest
    // kind (one flat array of them is refused: `MAX_ARRAY_ELEMENTS`), 100 arrays of 78,000 zeros
    label: "an unknown field's 100 arrays of 78,000 zeros",
    body: () => `{"model":"bench-model","input":"x","client_blob":[${Array.from({ length: 100 }, () => `[${"0,".repeat(77_999)}0]`).join(",")}]}`
  }
]

/**
 * The upstream: reads the request whole and answers `bytes: N`, N the size of the body it received (counted,
 * not parsed: the upstream's own work is kept out of the figures, even on a machine of two cores), as a
 * stream when the request asked for one (`"stream":true` in its first or last 300 bytes, where the Chat
 * request builder writes it), else as one Chat completion.
 */
const upstream = (): Server =>
  createServer((request, response) => {
    let bytes = 0
    let head = ""
    let tail: Buffer = Buffer.alloc(0)
    request.on("data", (piece: Buffer) => {
      bytes += piece.length
      if (head.length < 300) head += piece.toString("latin1", 0, 300)
      tail = piece.length >= 300 ? piece : Buffer.concat([tail, piece]).subarray(-300)
    })
    request.on("end", () => {
      const content = `bytes: ${bytes}`
      if (`${head}${tail.toString("latin1")}`.includes("\"stream\":true")) {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end(`${textChunk(content)}${finishChunks()}`)
        return
      }
      response.writeHead(200, { "content-type": "application/json" })
      response.end(completionText({ content }))
    })
  })

/** The gateway's main-thread CPU time so far, in ms (`schedstat` of the thread whose id is the pid). */
const mainThreadMs = (pid: number): number =>
  Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6

/** What the poller reports for one polled stretch: `Waits` but the request's own time. */
type Polled = Omit<Waits, "requestMs">

/**
 * The poller's side (`child.ts stall-poller <gateway base URL> <gateway pid>`): reads commands, one a line,
 * from stdin. `start` starts polling `<base>/health` (one request at a time over one keep-alive connection,
 * 1 ms apart; `started` is written once the first answer came); `stop` stops and writes the waits since
 * `start` as one JSON line. Ends when stdin closes.
 *
 * It runs in a process of its own because the process that sends the large request (and hosts the
 * upstream that reads it) spends milliseconds at a time on its megabytes: polls from there would wait for
 * that process's event loop, not only for the gateway's.
 *
 * @since 0.2.0
 * @category the poller
 */
export const poller = async (base: string, pid: number): Promise<void> => {
  const { Agent, get } = await import("node:http")
  const { createInterface } = await import("node:readline")
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const health = (): Promise<void> =>
    new Promise((resolve, reject) => {
      get(`${base}/health`, { agent }, (response) => {
        response.on("data", () => {})
        response.on("end", () => (response.statusCode === 200 ? resolve() : reject(new Error(`/health: HTTP ${response.statusCode}`))))
        response.on("error", reject)
      }).on("error", reject)
    })
  const loop = async (state: { stop: boolean }, started: () => void): Promise<Polled> => {
    const waits: Array<{ readonly ms: number; readonly cpu: number }> = []
    while (!state.stop) {
      const cpu = mainThreadMs(pid)
      const start = performance.now()
      await health()
      waits.push({ ms: performance.now() - start, cpu: mainThreadMs(pid) - cpu })
      if (waits.length === 1) started()
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    const sorted = waits.map((wait) => wait.ms).sort((a, b) => a - b)
    return {
      maxMs: sorted.at(-1) ?? 0,
      p99Ms: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
      cpuMs: Math.max(0, ...waits.map((wait) => wait.cpu)),
      polls: waits.length
    }
  }
  let current: { readonly state: { stop: boolean }; readonly done: Promise<Polled> } | undefined
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "start" && current === undefined) {
      const state = { stop: false }
      current = { state, done: loop(state, () => process.stdout.write("started\n")) }
    } else if (line === "stop" && current !== undefined) {
      current.state.stop = true
      process.stdout.write(`${JSON.stringify(await current.done)}\n`)
      current = undefined
    }
  }
}

/**
 * POSTs `text` to `/v1/responses`; the text the upstream answered (after checking the stream completed, or
 * the answer is a completed Response object).
 */
const post = async (url: string, text: string | Uint8Array<ArrayBuffer>): Promise<string> => {
  const response = await fetch(`${url}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: text })
  const answer = await response.text()
  if (response.headers.get("content-type")?.startsWith("application/json") === true) {
    const text = /"text":"(bytes: [0-9]+)"/.exec(answer)?.[1]
    if (response.status !== 200 || !answer.includes("\"status\":\"completed\"") || text === undefined) {
      throw new Error(`gateway: HTTP ${response.status}, not a completed response: ${answer.slice(0, 300)}`)
    }
    return text
  }
  if (response.status !== 200 || !answer.includes("\"type\":\"response.completed\"")) {
    throw new Error(`gateway: HTTP ${response.status}, not a completed stream: ${answer.slice(0, 300)}`)
  }
  const done = /"type":"response\.output_text\.done"[^\n]*"text":"([^"]*)"/.exec(answer)
  return done?.[1] ?? ""
}

/**
 * Starts `poller` in a child process (with this process's flags: the `tsx` loader): `polled` runs a request
 * with `/health` polled from 20 ms before it to 20 ms after it; `close` ends the child.
 */
const startPoller = (base: string, pid: number) => {
  const flags = process.execArgv.filter((flag) => !flag.startsWith("--cpu-prof"))
  const child = spawn(process.execPath, [...flags, CHILD, "stall-poller", base, String(pid)], { stdio: ["pipe", "pipe", "inherit"] })
  // the instrument ahead of other processes for a core (it sleeps 1 ms between polls): on a loaded machine a
  // poll it was slow to send would count as the gateway's wait; only where the user may raise a priority
  try {
    setPriority(child.pid!, -10)
  } catch {
    // not permitted: the polls run at the default priority
  }
  const exited = new Promise((resolve) => child.once("exit", resolve))
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async (): Promise<string> => {
    const line = await lines.next()
    if (line.done === true) throw new Error(`the /health poller exited (${child.exitCode})`)
    return line.value
  }
  const polled = async (request: () => Promise<string>) => {
    child.stdin.write("start\n")
    if ((await next()) !== "started") throw new Error("the /health poller did not start")
    await new Promise((resolve) => setTimeout(resolve, 20))
    const start = performance.now()
    const answer = await request()
    const requestMs = performance.now() - start
    await new Promise((resolve) => setTimeout(resolve, 20))
    child.stdin.write("stop\n")
    const waits: Waits = { ...(JSON.parse(await next()) as Polled), requestMs }
    return { answer, waits }
  }
  const close = async () => {
    child.stdin.end()
    await exited
  }
  return { polled, close }
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
  const poller = startPoller(gateway.url.replace(/\/v1$/, ""), gateway.pid)
  try {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const small = JSON.stringify({ model: "bench-model", input: "hi", stream: true })
    progress("gateway stall: a fresh gateway's first request")
    const first = await poller.polled(() => post(gateway.url, small))
    for (let i = 0; i < 3; i++) await post(gateway.url, small)
    const warm = await poller.polled(() => post(gateway.url, small))
    // encoded once here, not in every round
    const large = new TextEncoder().encode(body(options.items))
    progress(`gateway stall: ${options.rounds} requests of ${options.items} input items`)
    // `rounds` polled requests of `body`, the upstream receiving as many bytes each time
    const measureRounds = async (body: Uint8Array<ArrayBuffer>): Promise<Array<Waits>> => {
      const rounds: Array<Waits> = []
      let answer: string | undefined
      for (let round = 0; round < options.rounds; round++) {
        const result = await poller.polled(() => post(gateway.url, body))
        if (!/^bytes: [1-9]/.test(result.answer) || (answer !== undefined && result.answer !== answer)) {
          throw new Error(`gateway stall: the upstream answered "${result.answer}", in an earlier round "${answer}"`)
        }
        answer = result.answer
        rounds.push(result.waits)
      }
      return rounds
    }
    const rounds = options.items === 0 ? [] : await measureRounds(large)
    const kinds: Array<Result["kinds"][number]> = []
    for (const kind of KINDS) {
      if (options.kinds !== undefined && !options.kinds.includes(kind.label)) continue
      progress(`gateway stall: ${options.rounds} requests of ${kind.label}`)
      const body = new TextEncoder().encode(kind.body())
      for (let i = 0; i < 2; i++) await post(gateway.url, body)
      kinds.push({ label: kind.label, bytes: body.length, rounds: await measureRounds(body) })
    }
    return { options, bytes: large.length, first: first.waits, warm: warm.waits, large: rounds, kinds, load: [loadStart, loadavg()[0]!] }
  } finally {
    await poller.close()
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
