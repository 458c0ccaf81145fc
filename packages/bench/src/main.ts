/**
 * The benchmark harness: throughput (wall and CPU time) of every contender on an empty stream (the fixed
 * cost per call, reported beside the cost per MB), on the recorded stream and on a ~5 MB
 * stream generated from it, peak heap growth per contender in fresh child processes, and the aggregation
 * cost at 10k vs 100k deltas (in a child process too), and the gateway's events per second and added latency
 * per event against its upstream alone (loopback servers in this process). Prints a Markdown report on stdout (progress on stderr) and exits non-zero
 * when a contender ends with a wrong final text.
 *
 * ```sh
 * npx tsx packages/bench/src/main.ts            # full run (a few minutes; `npm run bench`)
 * npx tsx packages/bench/src/main.ts --quick    # CI: small inputs, few rounds (asserts results only)
 * npx tsx packages/bench/src/main.ts --only=ours --no-memory --no-aggregation   # e.g. under --cpu-prof
 * ```
 *
 * Options: `--quick`; `--only=id,id` (contenders: ours, ours-decode, ours-client, openai, ai-sdk, effect-ai, ours-effect-ai, floor, effect-floor);
 * `--warmup=N`, `--iterations=N` (rounds, overriding the mode's); `--bytes=N` (size of the generated
 * stream); `--no-memory`, `--no-aggregation`, `--no-speed`, `--no-gateway` (the gateway section; `--quick` shrinks it
 * too), `--no-gateway-load` (the built gateway in a child process: its CPU per request and per event, paced and
 * unpaced, and its RSS idle and under load; beside it the same for a bare `node:http` proxy, the floor), `--no-gateway-stall`
 * (how long `/health` waits while a fresh gateway's first request, one request of 20,000 input items, or one of
 * the other large kinds runs: 10,000 tools, top-level or in one namespace, a 10 MB string), `--no-startup` (the built CLI's `--version` and `--help` times and the idle gateway's RSS), `--no-store` (streams per
 * second through the gateway stateless, with SQLite and with PostgreSQL), `--no-request` (the cost of decoding
 * a large request body). It runs the built packages (`dist/`): a package whose `src/` changed since its last build is
 * named in a warning at the top of the report.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import { parseArgs } from "node:util"
import * as Aggregation from "./Aggregation.js"
import * as Contenders from "./Contenders.js"
import * as Gateway from "./Gateway.js"
import * as GatewayLoad from "./GatewayLoad.js"
import * as GatewayStall from "./GatewayStall.js"
import * as Input from "./Input.js"
import * as Memory from "./Memory.js"
import * as Request from "./Request.js"
import * as Speed from "./Speed.js"
import * as Startup from "./Startup.js"
import * as Store from "./Store.js"

const { values: flags } = parseArgs({
  options: {
    "quick": { type: "boolean", default: false },
    "only": { type: "string" },
    "warmup": { type: "string" },
    "iterations": { type: "string" },
    "bytes": { type: "string" },
    "no-memory": { type: "boolean", default: false },
    "no-aggregation": { type: "boolean", default: false },
    "no-speed": { type: "boolean", default: false },
    "no-gateway": { type: "boolean", default: false },
    "no-gateway-load": { type: "boolean", default: false },
    "no-gateway-stall": { type: "boolean", default: false },
    "no-startup": { type: "boolean", default: false },
    "no-store": { type: "boolean", default: false },
    "no-request": { type: "boolean", default: false }
  }
})

const quick = flags.quick
const only = flags.only?.split(",").map((id) => id.trim())
const ids = only ?? Contenders.IDS
const chatIds = only === undefined ? Contenders.CHAT_IDS : only.filter((id) => Contenders.CHAT_IDS.includes(id))
const bytes = flags.bytes === undefined ? (quick ? 400_000 : 5_000_000) : Number(flags.bytes)
// Warm-up: the JIT. The client path (a few hundred functions of Effect's runtime and ours) reaches its steady
// state after about 200 calls: its first 20 calls cost about 4x its CPU per call after 400 (measured one call
// at a time, as `Speed.measure` does). A long-running app lives in that steady state; every contender gets the
// same rounds.
const rounds = (small: boolean): Speed.Options => ({
  warmup: flags.warmup === undefined ? (quick ? 1 : small ? 30 : 2) : Number(flags.warmup),
  iterations: flags.iterations === undefined ? (quick ? 2 : small ? 15 : 7) : Number(flags.iterations)
})

// The empty stream takes a few milliseconds a run: more rounds for the same time.
const emptyRounds: Speed.Options = quick ? rounds(true) : {
  warmup: flags.warmup === undefined ? 300 : Number(flags.warmup),
  iterations: flags.iterations === undefined ? 41 : Number(flags.iterations)
}

/** The rounds of an input: `large` (the generated stream) gets fewer. */
const optionsOf = (input: Input.Input, large: Input.Input | undefined): Speed.Options =>
  input.events <= 3 ? emptyRounds : rounds(input !== large)

const progress = (message: string) => process.stderr.write(`[bench] ${message}\n`)

/**
 * The workspace packages whose last build (`dist/`, `build/`) is older than their `src/`: the harness runs the built packages, so a
 * source change not yet built is not what it measures (`npm run bench` builds first; a direct `tsx` run does not).
 */
const staleBuilds = (): ReadonlyArray<string> => {
  const newest = (dir: string): number => {
    let time = 0
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) time = Math.max(time, fs.statSync(`${entry.parentPath}/${entry.name}`).mtimeMs)
    }
    return time
  }
  const packages = new URL("../../", import.meta.url)
  return fs.readdirSync(packages).filter((name) => {
    const src = new URL(`${name}/src`, packages).pathname
    const dist = new URL(`${name}/dist`, packages).pathname
    // `tsc -b` leaves dist/ alone for a source touched but not changed; it rewrites build/'s tsbuildinfo
    const build = new URL(`${name}/build`, packages).pathname
    return name !== "bench" && fs.existsSync(src) && fs.existsSync(dist) &&
      newest(src) > Math.max(newest(dist), fs.existsSync(build) ? newest(build) : 0)
  })
}
const print = (line = "") => process.stdout.write(`${line}\n`)

/** The client-path contenders, the peer each is held against, and the line's label. */
const ClientPaths = [
  ["ours-client", "openai", "client path (ResponsesLanguageModel.stream + aggregate)"],
  ["ours-chat-client", "openai-chat", "Chat Completions client path (ChatCompletionsLanguageModel.stream + aggregate)"]
] as const

const fixed = (value: number, digits: number) => value.toFixed(digits)
const ratio = (value: number) => `${value.toFixed(value < 0.1 ? 3 : 2)}x`
const mib = (value: number) => `${(value / 1024 / 1024).toFixed(2)} MiB`

/**
 * The speed section of one family of contenders: a table per input, the ratios to the floors and the target
 * lines, then (with `empty`) the fixed cost per call and the cost per MB of the last input. False when a
 * contender failed or ended with a wrong text.
 */
const speed = async (
  contenders: ReadonlyArray<Contenders.Contender>,
  runs: ReadonlyArray<{ readonly input: Input.Input; readonly options: Speed.Options }>,
  empty: Input.Input | undefined
): Promise<boolean> => {
  let ok = true
  const measured: Array<{ readonly input: Input.Input; readonly results: ReadonlyArray<Speed.Result> }> = []
  for (const { input, options } of runs) {
    progress(`speed: ${input.name}, ${options.warmup} warm-up + ${options.iterations} rounds of ${contenders.length}`)
    let results: ReadonlyArray<Speed.Result>
    try {
      results = await Speed.measure(contenders, input, options)
    } catch (error) {
      ok = false
      print()
      print(`**FAILED** on ${input.name}: ${error instanceof Error ? error.message : String(error)}`)
      continue
    }
    measured.push({ input, results })
    const ours = results.find((r) => r.contender.id === "ours")
    const floor = results.find((r) => r.contender.id === "floor" || r.contender.id === "chat-floor")
    print()
    print(`### ${input.name}: ${Input.megabytes(input.bytes.length)}, ${input.events} events, ${input.chunks.length} chunks`)
    print()
    print(`${options.warmup} warm-up rounds, median of ${options.iterations} rounds. CPU ms: this process's user + system ` +
      "time during the run (all threads), which the waits for a core on a loaded machine do not inflate.")
    print()
    print("| contender | median ms | median CPU ms | MB/s | events/s | vs ours | CPU vs ours | min–max ms | best MB/s | best vs ours |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    const best = (r: Speed.Result) => input.bytes.length / 1e6 / (Math.min(...r.times) / 1000)
    for (const r of results) {
      print(`| ${r.contender.name} | ${fixed(r.median, 1)} | ${fixed(r.cpuMedian, 1)} | ${fixed(r.megabytesPerSecond, 2)} | ` +
        `${Math.round(r.eventsPerSecond).toLocaleString("en-US")} | ` +
        `${ours === undefined ? "–" : ratio(r.megabytesPerSecond / ours.megabytesPerSecond)} | ` +
        `${ours === undefined ? "–" : ratio(ours.cpuMedian / r.cpuMedian)} | ` +
        `${fixed(Math.min(...r.times), 1)}–${fixed(Math.max(...r.times), 1)} | ${fixed(best(r), 2)} | ` +
        `${ours === undefined ? "–" : ratio(best(r) / best(ours))} |`)
    }
    if (input === empty) continue
    const effectFloor = results.find((r) => r.contender.id === "effect-floor")
    print()
    for (const [base, label] of [[floor, "the floor"], [effectFloor, "the Effect floor"]] as const) {
      if (base === undefined) continue
      for (const r of results.filter((r) => r.contender.id.startsWith("ours") || (r.contender.id === "effect-floor" && base === floor))) {
        print(`- ${r.contender.name} vs ${label}: ${ratio(r.megabytesPerSecond / base.megabytesPerSecond)} ` +
          `(best: ${ratio(best(r) / best(base))}; CPU: ${ratio(base.cpuMedian / r.cpuMedian)})`)
      }
    }
    const openai = results.find((r) => r.contender.id === "openai")
    const decode = results.find((r) => r.contender.id === "ours-decode")
    const target = (met: boolean) => (met ? "met" : "not met")
    if (ours !== undefined && openai !== undefined && floor !== undefined) {
      print(`- targets: decode + aggregate >= 2x openai: ${target(ours.megabytesPerSecond >= 2 * openai.megabytesPerSecond)}; ` +
        `>= 0.5x floor: ${target(ours.megabytesPerSecond >= 0.5 * floor.megabytesPerSecond)}` +
        (decode === undefined ? "" : `; decode only >= 0.6x floor: ${target(decode.megabytesPerSecond >= 0.6 * floor.megabytesPerSecond)}`))
    }
    for (const [clientId, peerId, label] of ClientPaths) {
      const client = results.find((r) => r.contender.id === clientId)
      const peer = results.find((r) => r.contender.id === peerId)
      if (client === undefined || peer === undefined) continue
      const wall = client.megabytesPerSecond / peer.megabytesPerSecond
      const cpu = peer.cpuMedian / client.cpuMedian
      print(`- ${label}: ${ratio(wall)} ${peerId} (CPU: ${ratio(cpu)}; target 2x: ${target(wall >= 2)}, CPU ${target(cpu >= 2)})` +
        (floor === undefined ? "" : `, ${ratio(client.megabytesPerSecond / floor.megabytesPerSecond)} floor (CPU: ` +
          `${ratio(floor.cpuMedian / client.cpuMedian)}; target 0.5x: ${target(client.megabytesPerSecond >= 0.5 * floor.megabytesPerSecond)}, ` +
          `CPU ${target(floor.cpuMedian / client.cpuMedian >= 0.5)})`))
    }
  }
  const fixedCost = measured.find((m) => m.input === empty)
  const large = measured.findLast((m) => m.input !== empty)
  if (empty !== undefined && fixedCost !== undefined && large !== undefined) {
    const megabytes = (large.input.bytes.length - empty.bytes.length) / 1e6
    print()
    print(`### Fixed cost per call and cost per MB (${large.input.name})`)
    print()
    print("Fixed: the median on the empty stream. Per MB: (median on the larger stream − fixed) / its MB.")
    print()
    print("| contender | fixed ms | fixed CPU ms | ms per MB | CPU ms per MB |")
    print("|---|---:|---:|---:|---:|")
    for (const r of fixedCost.results) {
      const l = large.results.find((l) => l.contender.id === r.contender.id)
      if (l === undefined) continue
      print(`| ${r.contender.name} | ${fixed(r.median, 2)} | ${fixed(r.cpuMedian, 2)} | ` +
        `${fixed((l.median - r.median) / megabytes, 2)} | ${fixed((l.cpuMedian - r.cpuMedian) / megabytes, 2)} |`)
    }
  }
  return ok
}

const main = async () => {
  const cpus = os.cpus()
  print(`## Run of ${new Date().toISOString()}${quick ? " (--quick: smoke run, numbers not meaningful)" : ""}`)
  print()
  print(`- Node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? "?"}), ` +
    `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; load average at start ${os.loadavg().map((l) => l.toFixed(2)).join(", ")}`)
  print(`- bodies delivered from memory as a \`ReadableStream\` of ${Input.CHUNK_SIZE / 1024} KiB chunks; contenders interleaved ` +
    "(rotating order), no GC forced between runs")
  const stale = staleBuilds()
  if (stale.length > 0) {
    const warning = `**warning:** the built \`dist/\` of ${stale.join(", ")} is older than its \`src/\`: these numbers are ` +
      "of the last build (run `npm run build` first)"
    print(`- ${warning}`)
    progress(warning)
  }

  const inputs = [Input.fixture(), Input.generated(bytes)]
  const empty = Input.empty()
  const contenders = await Contenders.make(ids.filter((id) => Contenders.IDS.includes(id)))
  const chatContenders = await Contenders.make(chatIds)
  let failed = false

  if (!flags["no-speed"]) {
    // --quick: the recorded streams only; the memory children still generate and check a larger one.
    const responses = [empty, ...(quick ? inputs.slice(0, 1) : inputs)]
    if (contenders.length > 0) {
      if (!await speed(contenders, responses.map((input) => ({ input, options: optionsOf(input, inputs[1]!) })), empty)) failed = true
    }
    if (chatContenders.length > 0) {
      const chat = Input.chat()
      const chatInputs = quick ? [chat] : [chat, Input.chatGenerated(Math.min(bytes, 1_000_000))]
      print()
      print("## Chat Completions client path")
      if (!await speed(chatContenders, chatInputs.map((input) => ({ input, options: optionsOf(input, chatInputs[1]) })), undefined)) {
        failed = true
      }
    }
  }

  if (!flags["no-memory"]) {
    progress(`memory: one child process per contender and mode on a ${Input.megabytes(bytes)} stream`)
    try {
      const modes: ReadonlyArray<Memory.Mode> = quick ? ["live"] : ["live", "sampled"]
      // --quick keeps the child-process path alive with two children; the speed rounds checked every text.
      const memoryIds = contenders.map((c) => c.id).filter((id) => !quick || id === "ours" || id === "openai")
      const repeats = quick ? 1 : 3
      const results = await Memory.measure(memoryIds, bytes, modes, repeats)
      print()
      print(`### Peak heap growth: generated stream of ${Input.megabytes(inputs[1]!.bytes.length)}, one fresh process per contender and mode` +
        (repeats > 1 ? `, median of ${repeats} processes` : ""))
      print()
      print("live: full GC before each sample (memory held); sampled: no forced GC (garbage included, capped by the young generation).")
      print()
      print(`| contender | ${modes.map((mode) => `peak ${mode} | vs openai`).join(" | ")} | retained after GC |`)
      print(`|---|${modes.map(() => "---:|---:").join("|")}|---:|`)
      for (const contender of contenders.filter((c) => memoryIds.includes(c.id))) {
        const cells = modes.map((mode) => {
          const r = results.find((r) => r.id === contender.id && r.mode === mode)
          const openai = results.find((r) => r.id === "openai" && r.mode === mode)
          return r === undefined ? "– | –" : `${mib(r.peak)} | ${openai === undefined ? "–" : ratio(r.peak / openai.peak)}`
        })
        const live = results.find((r) => r.id === contender.id && r.mode === modes[0])
        print(`| ${contender.name} | ${cells.join(" | ")} | ${live === undefined ? "–" : mib(live.retained)} |`)
      }
    } catch (error) {
      failed = true
      print()
      print(`**FAILED** memory: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (!flags["no-aggregation"]) {
    const [small, large, repeats] = quick ? [1_000, 10_000, 2] : [10_000, 100_000, 41]
    progress(`aggregation: ${small} vs ${large} deltas, in a child process`)
    try {
      const results = (await Memory.runChild(["aggregation", String(small), String(large), String(repeats)])) as ReadonlyArray<Aggregation.Result>
      print()
      print(`### Aggregation cost (MessageAggregator), ${repeats} runs each after one warm-up run`)
      print()
      print(`| deltas | path | ${small.toLocaleString("en-US")}: median ms | ${large.toLocaleString("en-US")}: median ms | ` +
        `ratio of medians (linear: ${large / small}x) | ${small.toLocaleString("en-US")}: best ms | ` +
        `${large.toLocaleString("en-US")}: best ms | ratio of bests |`)
      print("|---|---|---:|---:|---:|---:|---:|---:|")
      for (const r of results) {
        print(`| ${r.kind} | ${r.path === "fold" ? "fromIterable" : "aggregate(Stream)"} | ${fixed(r.small.median, 2)} | ` +
          `${fixed(r.large.median, 2)} | ${ratio(r.large.median / r.small.median)} | ${fixed(r.small.best, 2)} | ` +
          `${fixed(r.large.best, 2)} | ${ratio(r.large.best / r.small.best)} |`)
      }
    } catch (error) {
      failed = true
      print()
      print(`**FAILED** aggregation: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (!flags["no-gateway"]) {
    try {
      const { paced, throughput: t } = await Gateway.measure(Gateway.defaults(quick), progress)
      const integer = (value: number) => Math.round(value).toLocaleString("en-US")
      const micros = (value: number) => `${value.toFixed(1)} µs`
      print()
      print("### Gateway (Chat Completions upstream and gateway on loopback, in this process)")
      print()
      print(`Throughput: the recorded gpt-4.1-nano Chat stream's content deltas repeated to ${integer(t.deltas)} ` +
        `(${Input.megabytes(t.upstreamBytes)} of Chat SSE; ${Input.megabytes(t.gatewayBytes)} of Responses SSE through ` +
        `the gateway), whole body read with \`fetch\`; ${t.warmup} warm-up + ${t.iterations} interleaved rounds, median.`)
      print()
      print("| path | median ms | min–max ms | events | events/s |")
      print("|---|---:|---:|---:|---:|")
      for (const [name, r] of [
        ["upstream alone: `POST /v1/chat/completions`", t.upstream],
        ["through the gateway: `POST /v1/responses` (stream)", t.gateway]
      ] as const) {
        print(`| ${name} | ${fixed(r.median, 1)} | ${fixed(Math.min(...r.times), 1)}–${fixed(Math.max(...r.times), 1)} | ` +
          `${integer(r.events)} | ${integer(r.eventsPerSecond)} |`)
      }
      print()
      print(`- time added per event: ${micros(t.addedMicrosPerEvent)} ((gateway median − upstream median) / ` +
        `${integer(t.gateway.events)} gateway events)`)
      print()
      print(`Paced: ${paced.rounds} stream(s) of ${paced.deltas} content deltas per path, one write every ${paced.intervalMs} ms, ` +
        "each delta carrying its send time; latency = receive time − send time of each text delta, read incrementally.")
      print()
      print("| path | text deltas | median µs | p90 µs | max µs |")
      print("|---|---:|---:|---:|---:|")
      for (const [name, r] of [
        ["upstream alone (`choices[0].delta.content`)", paced.upstream],
        ["through the gateway (`response.output_text.delta`)", paced.gateway]
      ] as const) {
        print(`| ${name} | ${integer(r.events)} | ${fixed(r.median, 1)} | ${fixed(r.p90, 1)} | ${fixed(r.max, 1)} |`)
      }
      print()
      print(`- latency added per event by the gateway: ${micros(paced.addedMicros)} (difference of medians)`)
    } catch (error) {
      failed = true
      print()
      print(`**FAILED** gateway: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (!flags["no-request"]) {
    const options = Request.defaults(quick)
    progress(`request decoding: ${options.items} input items, ${options.warmup} warm-up + ${options.iterations} rounds`)
    try {
      const r = await Request.measure(options)
      const megabytes = r.bytes / 1e6
      print()
      print(`### Decoding a large request: ${r.items.toLocaleString("en-US")} input items, ${Input.megabytes(r.bytes)}`)
      print()
      print("CPU time of this process, median of the rounds; the longest block is the most CPU time between two ticks " +
        "of a `setImmediate` ticker run beside the decode (what another request waits at most, on an idle core).")
      print()
      print("| step | CPU ms | CPU ms per MB | CPU µs per item | longest block ms |")
      print("|---|---:|---:|---:|---:|")
      print(`| \`JSON.parse\` of the body | ${fixed(r.parseCpu, 1)} | ${fixed(r.parseCpu / megabytes, 2)} | ` +
        `${fixed((r.parseCpu * 1000) / r.items, 2)} | ${fixed(r.parseCpu, 1)} (one call) |`)
      print(`| \`ResponsesRequestDecoder.decode\` | ${fixed(r.decodeCpu, 1)} | ${fixed(r.decodeCpu / megabytes, 2)} | ` +
        `${fixed((r.decodeCpu * 1000) / r.items, 2)} | ${fixed(r.decodeLongestBlock, 1)} |`)
      print()
      print(`- \`POST /v1/responses\` of ${r.gateway.items.toLocaleString("en-US")} items (${Input.megabytes(r.gateway.bytes)}) to a ` +
        `gateway whose model refuses at once: answered in ${fixed(r.gateway.wall, 0)} ms; the longest block of the event loop ` +
        `meanwhile ${fixed(r.gateway.longestBlock, 1)} CPU ms (one \`JSON.parse\` of that body: ${fixed(r.gateway.parseCpu, 1)} CPU ms)`)
    } catch (error) {
      failed = true
      print()
      print(`**FAILED** request decoding: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (!flags["no-gateway-load"]) {
    try {
      const r = await GatewayLoad.measure(GatewayLoad.defaults(quick), progress)
      progress("gateway load: the same against the floor (a bare node:http proxy)")
      const f = await GatewayLoad.measure({ ...GatewayLoad.defaults(quick), server: "floor" }, progress)
      const o = r.options
      const micros = (value: number) => `${value.toFixed(1)} µs`
      const integer = (value: number) => Math.round(value).toLocaleString("en-US")
      const met = (ok: boolean) => (ok ? "met" : "not met")
      const both = (show: (x: GatewayLoad.Result) => string) => `${show(r)} | ${show(f)}`
      print()
      print("### The gateway under load (`effect-responses serve` in a child process, its own CPU time and RSS)")
      print()
      print(`Load average ${r.load[0].toFixed(1)} at the start, ${f.load[1].toFixed(1)} at the end: wall times here include the ` +
        "waits for a core; CPU times (the server's threads, from /proc) do not. **floor**: the same parts against a bare " +
        "`node:http` proxy in a child process (`FloorProxy.ts`: no Effect; per upstream chunk a `JSON.parse` per line and " +
        "one write of whole delta frames), what Node itself costs per socket wake-up.")
      print()
      print("| measure | ours | floor | target (ours) |")
      print("|---|---:|---:|---|")
      print(`| idle RSS (the floor with the \`tsx\` loader) | ${both((x) => mib(x.idleRss))} | < 100 MiB: ${met(r.idleRss < 100 * 1024 * 1024)} |`)
      print(`| CPU per \`GET /health\` (the HTTP server alone, for scale) | ${both((x) => `${fixed(x.cpuPerHealth / 1000, 2)} ms`)} | – |`)
      print(`| CPU per streamed request (${integer(o.requests)} one-delta requests, ${o.concurrency} at a time; ` +
        `${r.requests.eventsPerRequest.toFixed(0)} / ${f.requests.eventsPerRequest.toFixed(0)} events each) | ` +
        `${both((x) => `${fixed(x.requests.cpuPerRequest / 1000, 2)} ms`)} | ≤ 2 ms: ${met(r.requests.cpuPerRequest <= 2000)} |`)
      print(`| CPU per streamed request, warm (${integer(o.requests)} more right after the first; after 1,000 the JIT's warm-up is done) | ` +
        `${both((x) => `${fixed(x.requests.cpuPerRequestWarm / 1000, 2)} ms`)} | ≤ 2 ms: ${met(r.requests.cpuPerRequestWarm <= 2000)} |`)
      print(`| paced: CPU per event (${o.streams} streams x ${o.deltas} deltas, ${o.intervalMs} ms apart; ` +
        `${integer(r.paced.events)} / ${integer(f.paced.events)} events in ${fixed(r.paced.seconds, 1)} / ${fixed(f.paced.seconds, 1)} s) | ` +
        `${both((x) => micros(x.paced.cpuPerEvent))} | ≤ 10 µs: ${met(r.paced.cpuPerEvent <= 10)} |`)
      print(`| paced: CPU per stream (request included) | ${both((x) => `${fixed(x.paced.cpuPerStream / 1000, 1)} ms`)} | – |`)
      print(`| paced: share of a core used | ${both((x) => `${fixed(x.paced.coreShare * 100, 0)} %`)} | – |`)
      print(`| paced: streams per core at 100 tokens/s | ${both((x) => integer(x.paced.streamsPerCore))} | – |`)
      print(`| RSS under ${o.streams} concurrent streams (peak, sampled every 100 ms) | ${both((x) => mib(x.paced.peakRss))} | reported |`)
      print(`| unpaced: events/s through /v1/responses (${integer(r.unpaced.events)} events, median of ${o.longRounds}) | ` +
        `${both((x) => integer(x.unpaced.eventsPerSecond))} | ≥ 400,000: ${met(r.unpaced.eventsPerSecond >= 400_000)} |`)
      print(`| unpaced: time added per event (ours ${fixed(r.unpaced.gatewayMs, 0)} ms, floor ${fixed(f.unpaced.gatewayMs, 0)} ms, ` +
        `upstream alone ${fixed(r.unpaced.upstreamMs, 0)} / ${fixed(f.unpaced.upstreamMs, 0)} ms) | ` +
        `${both((x) => micros(x.unpaced.addedMicrosPerEvent))} | ≤ 3 µs: ${met(r.unpaced.addedMicrosPerEvent <= 3)} |`)
      print(`| unpaced: time added to the first byte | ` +
        `${both((x) => `${fixed(x.unpaced.gatewayFirstByteMs - x.unpaced.upstreamFirstByteMs, 1)} ms`)} | ` +
        `≤ 2 ms: ${met(r.unpaced.gatewayFirstByteMs - r.unpaced.upstreamFirstByteMs <= 2)} |`)
      print(`| unpaced: CPU per event | ${both((x) => micros(x.unpaced.cpuPerEvent))} | – |`)
    } catch (error) {
      failed = true
      print()
      print(`**FAILED** gateway load: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (!flags["no-gateway-stall"]) {
    try {
      const r = await GatewayStall.measure(GatewayStall.defaults(quick), progress)
      const { median: m, worst: w } = GatewayStall.summary(r.large)
      const ms = (value: number) => `${fixed(value, 1)} ms`
      const row = (label: string, x: GatewayStall.Waits, target: string) =>
        print(`| ${label} | ${ms(x.maxMs)} | ${ms(x.p99Ms)} | ${ms(x.cpuMs)} | ${x.polls} | ${ms(x.requestMs)} | ${target} |`)
      print()
      print(`### Stalls: \`/health\` while one request runs (\`effect-responses serve\` in a child process)`)
      print()
      print(`Load average ${r.load[0].toFixed(1)} at the start, ${r.load[1].toFixed(1)} at the end. \`GET /health\` polled one at ` +
        "a time, 1 ms apart, from a process of its own; wall times include the waits for a core on a loaded machine, the gateway's main-thread CPU " +
        "during one wait (\`/proc\`, about 4 ms resolution; the \`/health\` answer included) does not. Large request: " +
        `${r.options.items.toLocaleString("en-US")} input items of a coding agent's session, ${Input.megabytes(r.bytes)}; ` +
        `rounds: ${r.options.rounds}. The other kinds: non-streamed, as many rounds each after two of warm-up.`)
      print()
      print("| while | longest wait | p99 wait | most main-thread CPU in one wait | polls | request | target (longest, quiet machine) |")
      print("|---|---:|---:|---:|---:|---:|---|")
      row("a fresh gateway's first request (small, streamed)", r.first, "≤ 10 ms")
      row("a small request, warm", r.warm, "–")
      row("the large request (median of the rounds)", m, "≤ 10 ms")
      row("the large request (worst of each)", w, "–")
      for (const kind of r.kinds) {
        const { median: km, worst: kw } = GatewayStall.summary(kind.rounds)
        row(`${kind.label}, non-streamed, ${Input.megabytes(kind.bytes)} (median of the rounds)`, km, "≤ 10 ms")
        row(`${kind.label} (worst of each)`, kw, "–")
      }
    } catch (error) {
      failed = true
      print()
      print(`**FAILED** gateway stall: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (!flags["no-store"]) {
    const options: Store.Options = quick
      ? { streams: 20, concurrency: 2, deltas: 20 }
      : { streams: 400, concurrency: 8, deltas: 100 }
    try {
      const results = await Store.measure(options, progress)
      print()
      print(`### The gateway with a store: ${options.streams} streamed responses of ${options.deltas} text deltas, ` +
        `${options.concurrency} clients at once`)
      print()
      print("Half the responses continue the previous one by `previous_response_id` (stateless: by replaying it); an in-memory upstream.")
      print()
      print("| store | streams/s | vs none | seconds |")
      print("|---|---:|---:|---:|")
      const none = results.find((r) => r.mode === "none")
      for (const r of results) {
        print(r.skipped !== undefined
          ? `| ${r.mode} | not measured: ${r.skipped} | – | – |`
          : `| ${r.mode} | ${fixed(r.streamsPerSecond, 0)} | ${none === undefined ? "–" : ratio(r.streamsPerSecond / none.streamsPerSecond)} | ${fixed(r.seconds, 2)} |`)
      }
    } catch (error) {
      failed = true
      print()
      print(`**FAILED** store: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (!flags["no-startup"]) {
    const [warmup, runs] = quick ? [1, 3] : [2, 11]
    progress(`start-up: ${runs} effect-responses --version and --help processes each, then an idle gateway`)
    try {
      const times = [...Startup.versionTimes(warmup, runs)].sort((a, b) => a - b)
      const help = [...Startup.helpTimes(warmup, runs)].sort((a, b) => a - b)
      const rss = await Startup.gatewayIdleRss()
      const median = times[Math.floor(times.length / 2)]!
      print()
      print("### Start-up of the built CLI (whole processes)")
      print()
      print(`- \`effect-responses --version\`: median ${fixed(median, 0)} ms of ${runs} runs after ${warmup} warm-up ` +
        `(min–max ${fixed(times[0]!, 0)}–${fixed(times[times.length - 1]!, 0)} ms); target < 500 ms: ${median < 500 ? "met" : "not met"}`)
      print(`- \`effect-responses --help\` (loads the command line, not the verbs): median ` +
        `${fixed(help[Math.floor(help.length / 2)]!, 0)} ms (min–max ${fixed(help[0]!, 0)}–${fixed(help[help.length - 1]!, 0)} ms)`)
      print(`- idle gateway (\`effect-responses serve\`, before any request): RSS ${mib(rss)}; target < 100 MiB: ` +
        `${rss < 100 * 1024 * 1024 ? "met" : "not met"}`)
    } catch (error) {
      failed = true
      print()
      print(`**FAILED** start-up: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  if (failed) {
    progress("FAILED: a contender did not produce the expected final text, or a section failed (see the report)")
    process.exitCode = 1
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
