/**
 * Throughput: every contender decodes the same input, interleaved (the order rotates every round so that
 * no contender always runs right after another's garbage), after a warm-up. No GC is forced between runs:
 * a full GC shrinks the young generation, and the next run then pays for growing it again (it halved the
 * throughput of ours and of the `openai` SDK on the 5 MB stream), which no long-running process sees.
 *
 * @since 0.1.0
 */
import * as Contenders from "./Contenders.js"
import type * as Input from "./Input.js"

/**
 * The timings of one contender on one input, in milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly contender: Contenders.Contender
  readonly times: ReadonlyArray<number>
  readonly median: number
  /**
   * The CPU time of this process (user + system, every thread: GC helpers included) during each run, in
   * milliseconds. On a loaded machine the wall times include the waits for a core; the CPU times do not.
   */
  readonly cpuTimes: ReadonlyArray<number>
  readonly cpuMedian: number
  /** Median throughput: input bytes (10^6) per second. */
  readonly megabytesPerSecond: number
  /** Median throughput: SSE events per second. */
  readonly eventsPerSecond: number
}

/**
 * A contender ended with a text other than the expected one, or failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class WrongResult extends Error {
  constructor(readonly contender: string, readonly input: string, detail: string) {
    super(`${contender} on ${input}: ${detail}`)
  }
}

/**
 * Options of `measure`: rounds of warm-up (not timed) and of measurement; each round runs every contender
 * once.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly warmup: number
  readonly iterations: number
}

/**
 * The median of a non-empty list.
 *
 * @since 0.1.0
 * @category utils
 */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * The time of one run, in milliseconds: `wall` (elapsed) and `cpu` (this process's user + system time).
 *
 * @since 0.2.0
 * @category models
 */
export interface Time {
  readonly wall: number
  readonly cpu: number
}

/**
 * Runs a contender once on the input and checks its final text; the time taken, in milliseconds. Fails
 * with `WrongResult`.
 *
 * @since 0.1.0
 * @category measuring
 */
export const runOnce = async (contender: Contenders.Contender, input: Input.Input): Promise<Time> => {
  const body = Contenders.body(input.chunks)
  const cpu = process.cpuUsage()
  const start = performance.now()
  let text: string
  try {
    text = await contender.run(body)
  } catch (error) {
    throw new WrongResult(contender.name, input.name, `failed: ${error instanceof Error ? error.stack : String(error)}`)
  }
  const time = performance.now() - start
  const { system, user } = process.cpuUsage(cpu)
  if (text !== input.expectedText) {
    throw new WrongResult(
      contender.name,
      input.name,
      `final text of ${text.length} characters, expected ${input.expectedText.length}: ${JSON.stringify(text.slice(0, 60))}`
    )
  }
  return { wall: time, cpu: (user + system) / 1000 }
}

/**
 * Measures every contender on one input: `warmup` rounds, then `iterations` timed rounds, interleaved.
 *
 * @since 0.1.0
 * @category measuring
 */
export const measure = async (
  contenders: ReadonlyArray<Contenders.Contender>,
  input: Input.Input,
  options: Options
): Promise<ReadonlyArray<Result>> => {
  for (let round = 0; round < options.warmup; round++) {
    for (const contender of contenders) await runOnce(contender, input)
  }
  const times = contenders.map((): Array<Time> => [])
  for (let round = 0; round < options.iterations; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const index = (k + round) % contenders.length
      times[index]!.push(await runOnce(contenders[index]!, input))
    }
  }
  return contenders.map((contender, index) => {
    const m = median(times[index]!.map((time) => time.wall))
    const cpuTimes = times[index]!.map((time) => time.cpu)
    return {
      contender,
      times: times[index]!.map((time) => time.wall),
      median: m,
      cpuTimes,
      cpuMedian: median(cpuTimes),
      megabytesPerSecond: input.bytes.length / 1e6 / (m / 1000),
      eventsPerSecond: input.events / (m / 1000)
    }
  })
}
