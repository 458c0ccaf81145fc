/**
 * Peak heap growth: each contender decodes the large input once in a fresh child process (`--expose-gc`),
 * after one warm-up run on the recorded stream (so that one-time initialisation is not counted) and a full
 * GC. The heap (`v8.getHeapStatistics().used_heap_size`) is sampled before every chunk the body hands over,
 * and once more after the run while its result is still held; the peak growth is the largest sample minus
 * the heap after the GC. Two modes, each in its own process:
 *
 * - `live`: a full GC before each sample, so the samples are the memory the contender holds at that point
 *   (buffers, partial events, accumulated state): what grows with the stream.
 * - `sampled`: no forced GC (samples also every 2 ms on the event loop): the heap as the process sees it,
 *   garbage included. Any contender that allocates more than the young generation (16 MiB semi-spaces by
 *   default on 64-bit Node 20) reaches about that, so this mostly tells allocation-heavy code (garbage
 *   promoted to the old generation) from the rest.
 *
 * The input bytes live outside the V8 heap (in `ArrayBuffer`s), so they do not count.
 *
 * @since 0.1.0
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as v8 from "node:v8"
import * as Contenders from "./Contenders.js"
import * as Input from "./Input.js"
import * as Speed from "./Speed.js"

/**
 * The heap figures of one contender, in bytes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly id: string
  readonly name: string
  readonly mode: Mode
  /** Largest heap sample during the run, minus the heap before it. */
  readonly peak: number
  /** Heap after the run and a full GC, the final text still held, minus the heap before it. */
  readonly retained: number
}

/**
 * `live`: a full GC before each heap sample; `sampled`: none (see the module comment).
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "live" | "sampled"

const heap = (): number => v8.getHeapStatistics().used_heap_size

/**
 * The child side: measures the contender `id` on a stream generated to `bytes` bytes and prints its
 * `Result` as one JSON line. Needs `--expose-gc`.
 *
 * @since 0.1.0
 * @category child
 */
export const child = async (id: string, bytes: number, mode: Mode): Promise<void> => {
  const gc = (globalThis as { readonly gc?: () => void }).gc
  if (gc === undefined) throw new Error("the memory child needs --expose-gc")
  const contender = (await Contenders.make([id]))[0]!
  const input = Input.generated(bytes)
  await Speed.runOnce(contender, Input.fixture())
  gc()
  gc()
  const before = heap()
  let peak = before
  const sample = () => {
    if (mode === "live") gc()
    const used = heap()
    if (used > peak) peak = used
  }
  const timer = mode === "sampled" ? setInterval(sample, 2) : undefined
  const text = await contender.run(Contenders.body(input.chunks, sample))
  sample()
  clearInterval(timer)
  if (text !== input.expectedText) {
    throw new Speed.WrongResult(contender.name, input.name, `final text of ${text.length} characters`)
  }
  gc()
  const retained = heap() - before
  const result: Result = { id, name: contender.name, mode, peak: peak - before, retained }
  process.stdout.write(`${JSON.stringify({ ...result, held: text.length })}\n`)
}

const CHILD = fileURLToPath(new URL("./child.ts", import.meta.url))

/**
 * Runs `child.ts` with `args` in a fresh process with the flags of this one (the `tsx` loader, not
 * `--cpu-prof`) plus `--expose-gc`; its last line of output, parsed as JSON. Fails when the child fails.
 *
 * @since 0.1.0
 * @category child
 */
export const runChild = (args: ReadonlyArray<string>): Promise<unknown> =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...process.execArgv.filter((flag) => !flag.startsWith("--cpu-prof")), "--expose-gc", CHILD, ...args],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) return reject(new Error(`child ${args.join(" ")} failed: ${error.message}\n${stderr}`))
        const line = stdout.trim().split("\n").at(-1) ?? ""
        try {
          resolve(JSON.parse(line))
        } catch {
          reject(new Error(`child ${args.join(" ")}: unexpected output ${line.slice(0, 200)}`))
        }
      }
    )
  })

/**
 * The parent side: runs fresh child processes per contender and mode, one after the other, with the flags
 * of this process (the `tsx` loader) plus `--expose-gc`; with `repeats` > 1, the median peak and retained
 * heap of that many children (one child's peak varies with when optimised code and buffers happen to be
 * allocated: the `openai` SDK's live peak came out between 0.65 and 0.86 MiB in single runs of the same
 * tree). Fails when a child fails or checks a wrong final text.
 *
 * @since 0.1.0
 * @category measuring
 */
export const measure = async (
  ids: ReadonlyArray<string>,
  bytes: number,
  modes: ReadonlyArray<Mode>,
  repeats = 1
): Promise<ReadonlyArray<Result>> => {
  const results: Array<Result> = []
  for (const mode of modes) for (const id of ids) {
    const runs: Array<{ readonly name: string; readonly peak: number; readonly retained: number }> = []
    for (let run = 0; run < repeats; run++) {
      const parsed = await runChild(["memory", id, String(bytes), mode])
      if (
        typeof parsed !== "object" || parsed === null || !("peak" in parsed) || typeof parsed.peak !== "number" ||
        !("retained" in parsed) || typeof parsed.retained !== "number" || !("name" in parsed) ||
        typeof parsed.name !== "string"
      ) throw new Error(`memory child for ${id}: unexpected output ${JSON.stringify(parsed).slice(0, 200)}`)
      runs.push({ name: parsed.name, peak: parsed.peak, retained: parsed.retained })
    }
    results.push({
      id,
      name: runs[0]!.name,
      mode,
      peak: Speed.median(runs.map((r) => r.peak)),
      retained: Speed.median(runs.map((r) => r.retained))
    })
  }
  return results
}
