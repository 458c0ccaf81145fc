/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and the share of
 * self time per source area (our packages, effect, node internals, GC…).
 *
 * ```sh
 * node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx packages/bench/src/main.ts \
 *   --only=ours --no-memory --no-aggregation --iterations=20
 * npx tsx packages/bench/src/profile.ts /tmp/prof/CPU.*.cpuprofile [top=30]
 * ```
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const [file, topArgument] = process.argv.slice(2)
if (file === undefined) {
  process.stderr.write("usage: profile.ts <file.cpuprofile> [top]\n")
  process.exit(2)
}
const top = Number(topArgument ?? 30)
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile

const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const selfTime = new Map<number, number>()
profile.samples.forEach((id, index) => {
  selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0))
})
const total = [...selfTime.values()].reduce((sum, time) => sum + time, 0)

/** The source of a frame, shortened to the package and file. */
const where = (frame: CallFrame): string => {
  const url = frame.url.replace(/^file:\/\//, "")
  const modules = url.lastIndexOf("node_modules/")
  const short = modules !== -1 ? url.slice(modules + "node_modules/".length) : url.replace(/^.*\/packages\//, "packages/")
  return short === "" ? "" : `${short}:${frame.lineNumber + 1}`
}

const area = (frame: CallFrame): string => {
  const url = frame.url
  if (url === "") return frame.functionName.startsWith("(") ? frame.functionName : "(native)"
  if (url.includes("/packages/")) return url.replace(/^.*\/packages\/([^/]+)\/.*$/, "ours: $1")
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (match !== null) return match[1]!
  return url.startsWith("node:") ? "node internals" : url
}

const functions = new Map<string, number>()
const areas = new Map<string, number>()
for (const [id, time] of selfTime) {
  const frame = byId.get(id)?.callFrame
  if (frame === undefined) continue
  const key = `${frame.functionName || "(anonymous)"}  ${where(frame)}`
  functions.set(key, (functions.get(key) ?? 0) + time)
  areas.set(area(frame), (areas.get(area(frame)) ?? 0) + time)
}

const percent = (time: number) => `${((time / total) * 100).toFixed(1).padStart(5)}%`
process.stdout.write(`total sampled: ${(total / 1000).toFixed(0)} ms\n\nself time by area:\n`)
for (const [name, time] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  process.stdout.write(`${percent(time)}  ${name}\n`)
}
process.stdout.write(`\ntop ${top} functions by self time:\n`)
for (const [name, time] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${percent(time)}  ${name}\n`)
}

// Total time: a sample counts for every distinct function on its stack (once, however deep it recurses).
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
const totals = new Map<string, number>()
for (const [id, time] of selfTime) {
  const seen = new Set<string>()
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at)?.callFrame
    if (frame === undefined || frame.url === "") continue
    seen.add(`${frame.functionName || "(anonymous)"}  ${where(frame)}`)
  }
  for (const key of seen) totals.set(key, (totals.get(key) ?? 0) + time)
}
process.stdout.write(`\ntop ${top} functions by total time (self + callees):\n`)
for (const [name, time] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${percent(time)}  ${name}\n`)
}
