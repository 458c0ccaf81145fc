/**
 * Entry point of a memory child process (see `Memory.measure`):
 * `memoryChild.ts <contender id> <bytes> <live | sampled>`.
 *
 * @since 0.1.0
 */
import * as Memory from "./Memory.js"

const [id, bytes, mode] = process.argv.slice(2)
if (id === undefined || bytes === undefined || (mode !== "live" && mode !== "sampled")) {
  process.stderr.write("usage: memoryChild.ts <contender id> <bytes> <live | sampled>\n")
  process.exit(2)
}
Memory.child(id, Number(bytes), mode).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
