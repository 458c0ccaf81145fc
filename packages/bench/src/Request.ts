/**
 * The cost of a large `POST /v1/responses` body before the upstream is called: a conversation of many
 * input items (a coding agent's long tool loop: user messages, function calls, their outputs, assistant
 * messages, a quarter each), decoded in this process.
 *
 * - `JSON.parse` of the body: CPU per MB, and the longest stretch without a yield (the parse is one call);
 * - `ResponsesRequestDecoder.decode` of the parsed body: CPU per MB and per item, and the longest stretch
 *   the event loop was held meanwhile (a `setImmediate` ticker runs beside it: the decoder yields every few
 *   milliseconds, so that other requests are served).
 *
 * Every decode must give one message per user item, tool message per output, … (checked), so that an
 * error is never measured.
 *
 * @since 0.1.0
 */
import { ResponsesRequestDecoder } from "@effect-responses/server"
import * as Effect from "effect/Effect"
import { median } from "./Speed.js"

/**
 * `items`: input items per request; `warmup`, `iterations`: untimed and timed decodes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly items: number
  readonly warmup: number
  readonly iterations: number
}

/**
 * A full run (20,000 items, the gateway's default bound: about 1.5 MB; 3 + 9 rounds) and `--quick` (2,000
 * items, 1 + 3 rounds).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = (quick: boolean): Options =>
  quick ? { items: 2_000, warmup: 1, iterations: 3 } : { items: 20_000, warmup: 3, iterations: 9 }

/**
 * The measurements, CPU times in milliseconds (this process's user + system time), medians of the timed
 * rounds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly items: number
  /** Size of the body, in bytes (its JSON text as UTF-16 code units, ASCII here). */
  readonly bytes: number
  readonly parseCpu: number
  readonly decodeCpu: number
  /** The longest gap between two ticks of the ticker while decoding, in milliseconds (median over rounds). */
  readonly decodeLongestBlock: number
}

/**
 * The body of a request with `items` input items (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const body = (items: number): string => {
  const input: Array<unknown> = []
  for (let i = 0; i < items; i++) {
    switch (i % 4) {
      case 0:
        input.push({ type: "message", role: "user", content: [{ type: "input_text", text: `Open file ${i} and fix the bug.` }] })
        break
      case 1:
        input.push({ type: "function_call", call_id: `call_${i}`, name: "read_file", arguments: `{"path":"src/file${i}.ts"}` })
        break
      case 2:
        input.push({ type: "function_call_output", call_id: `call_${i - 1}`, output: `export const value${i} = ${i}\n` })
        break
      default:
        input.push({
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: `Fixed file ${i}.`, annotations: [] }]
        })
    }
  }
  return JSON.stringify({
    model: "bench-model",
    stream: true,
    tools: [{ type: "function", name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } }],
    input
  })
}

const cpuMillis = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000
}

/** Runs `work` with a `setImmediate` ticker beside it: the CPU time, and the longest gap between ticks. */
const withTicker = async (work: () => Promise<unknown>): Promise<{ cpu: number; longest: number }> => {
  let last = performance.now()
  let longest = 0
  let running = true
  const tick = () => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  const start = process.cpuUsage()
  last = performance.now()
  await work()
  const cpu = cpuMillis(start)
  running = false
  longest = Math.max(longest, performance.now() - last)
  return { cpu, longest }
}

/**
 * Measures (see the module doc). Fails when a decode does not give the expected prompt.
 *
 * @since 0.1.0
 * @category measuring
 */
export const measure = async (options: Options): Promise<Result> => {
  const text = body(options.items)
  const expectedMessages = options.items // user, assistant (call), tool, assistant (text): one message per item
  const parse: Array<number> = []
  const decode: Array<number> = []
  const blocks: Array<number> = []
  for (let round = 0; round < options.warmup + options.iterations; round++) {
    const parseStart = process.cpuUsage()
    const json: unknown = JSON.parse(text)
    const parseCpu = cpuMillis(parseStart)
    let messages = 0
    const { cpu, longest } = await withTicker(async () => {
      const decoded = await Effect.runPromise(ResponsesRequestDecoder.decode(json, { maxInputItems: options.items }))
      messages = decoded.prompt.messages.length
    })
    if (messages !== expectedMessages) {
      throw new Error(`request decoding: ${messages} messages decoded from ${options.items} items, expected ${expectedMessages}`)
    }
    if (round < options.warmup) continue
    parse.push(parseCpu)
    decode.push(cpu)
    blocks.push(longest)
  }
  return {
    items: options.items,
    bytes: text.length,
    parseCpu: median(parse),
    decodeCpu: median(decode),
    decodeLongestBlock: median(blocks)
  }
}
