/**
 * Bytes allocated per run of one contender, by source area (sampled by V8's heap profiler through the
 * inspector): what the young generation has to collect. With `--survivors`, only the objects that outlived
 * a young-generation collection (the ones that make collections slow).
 *
 * ```sh
 * npx tsx packages/bench/src/alloc.ts ours            # the recorded 194 KB stream, 500 runs after 200
 * npx tsx packages/bench/src/alloc.ts floor --survivors
 * ```
 *
 * @since 0.1.0
 */
import * as inspector from "node:inspector"
import { parseArgs } from "node:util"
import * as Contenders from "./Contenders.js"
import * as Input from "./Input.js"
import * as Speed from "./Speed.js"

interface SamplingNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<SamplingNode>
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { survivors: { type: "boolean", default: false }, runs: { type: "string", default: "500" } }
})
const id = positionals[0] ?? "ours"
const runs = Number(values.runs)

/** The package a frame belongs to: ours by package, else the npm package, else node's or V8's. */
const area = (url: string): string =>
  url.includes("/packages/")
    ? url.replace(/^.*\/packages\/([^/]+)\/.*$/, "ours: $1")
    : url.includes("node_modules/")
    ? url.replace(/^.*node_modules\/((?:@[^/]+\/)?[^/]+).*$/, "$1")
    : url.replace(/^.*\//, "")

const main = async () => {
  const input = Input.fixture()
  const contender = (await Contenders.make([id]))[0]!
  for (let i = 0; i < 200; i++) await Speed.runOnce(contender, input)
  const session = new inspector.Session()
  session.connect()
  const post = <A>(method: string, params?: object) =>
    new Promise<A>((resolve, reject) =>
      session.post(method, params, (error, result) => (error === null ? resolve(result as A) : reject(error)))
    )
  await post("HeapProfiler.enable")
  await post("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !values.survivors
  })
  for (let i = 0; i < runs; i++) await Speed.runOnce(contender, input)
  const { profile } = await post<{ readonly profile: { readonly head: SamplingNode } }>("HeapProfiler.stopSampling")
  session.disconnect()

  // A frame without a script (a builtin such as JSON.parse or Array.prototype.join) counts for its caller's area.
  const areas = new Map<string, number>()
  const walk = (node: SamplingNode, owner: string) => {
    const own = node.callFrame.url === "" ? owner : area(node.callFrame.url)
    if (node.selfSize > 0) areas.set(own, (areas.get(own) ?? 0) + node.selfSize)
    for (const child of node.children) walk(child, own)
  }
  walk(profile.head, "(root)")
  const total = [...areas.values()].reduce((sum, bytes) => sum + bytes, 0)
  const kib = (bytes: number) => `${(bytes / runs / 1024).toFixed(1).padStart(8)} KiB`
  process.stdout.write(
    `${id}, ${input.name}: ${values.survivors ? "outlived a young-generation collection" : "allocated"} per run ` +
      `${kib(total).trim()}\n`
  )
  for (const [name, bytes] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    process.stdout.write(`${kib(bytes)}  ${name}\n`)
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
