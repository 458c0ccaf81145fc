/**
 * Entry point of the harness's child processes, each a fresh V8 heap:
 *
 * - `child.ts memory <contender id> <bytes> <live | sampled>`: see `Memory.child`;
 * - `child.ts aggregation <small> <large> <repeats>`: prints `Aggregation.measure` as one JSON line.
 *
 * @since 0.1.0
 */
import * as Aggregation from "./Aggregation.js"
import * as Memory from "./Memory.js"

const usage = () => {
  process.stderr.write(
    "usage: child.ts memory <contender id> <bytes> <live | sampled>\n       child.ts aggregation <small> <large> <repeats>\n"
  )
  process.exit(2)
}

const run = async (): Promise<void> => {
  const [command, ...rest] = process.argv.slice(2)
  if (command === "memory") {
    const [id, bytes, mode] = rest
    if (id === undefined || bytes === undefined || (mode !== "live" && mode !== "sampled")) return usage()
    return Memory.child(id, Number(bytes), mode)
  }
  if (command === "aggregation") {
    const [small, large, repeats] = rest.map(Number)
    if (small === undefined || large === undefined || repeats === undefined) return usage()
    process.stdout.write(`${JSON.stringify(Aggregation.measure(small, large, repeats))}\n`)
    return
  }
  usage()
}

run().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
