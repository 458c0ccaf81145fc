import { Serve } from "@effect-responses/cli"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Supervisor from "effect/Supervisor"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"
import * as Logger from "effect/Logger"
import { createServer } from "node:http"

let steps = 0
const tally = new Map<string, number>()
const marks = new Map<string, number>()
let last = 0
;(globalThis as any).__mark = (name: string) => { if (name === 'sse ended') (globalThis as any).__tally = true; marks.set(name, (marks.get(name) ?? 0) + steps - last); last = steps }
const fibers = new Set<unknown>()
class Counter extends Supervisor.AbstractSupervisor<void> {
  get value() { return Effect.void }
  override onStart(_c: any, _e: any, _p: any, fiber: any) { fibers.add(fiber) }
  override onEffect(_fiber: any, effect: any) { steps++; if ((globalThis as any).__tally) { const f = effect?.effect_instruction_i1 ?? effect?.effect_instruction_i0; const k = String(effect?._op) + ' | ' + (typeof f === 'function' ? f.toString().replace(/\s+/g, ' ').slice(0, 110) : (f === undefined ? 'undefined' : (f?.constructor?.name ?? typeof f) + ':' + String(f?._tag ?? f?._op ?? '').slice(0,30))); tally.set(k, (tally.get(k) ?? 0) + 1) } }
}
const body = Buffer.from([
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}\n\n`,
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`,
  "data: [DONE]\n\n"
].join(""))
const upstream = createServer((req, res) => { req.resume(); req.on("end", () => { res.writeHead(200, { "content-type": "text/event-stream" }); res.end(body) }) })
await new Promise<void>((r) => upstream.listen(18521, "127.0.0.1", () => r()))
const path = process.argv[2] ?? "/v1/responses"
const one = async () => {
  last = steps
  const res = await fetch(`http://127.0.0.1:18522${path}`, path === "/health" ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", input: "hi", stream: true }) })
  await res.text()
  ;(globalThis as any).__tally = false
  marks.set('end', (marks.get('end') ?? 0) + steps - last)
}
const program = Effect.gen(function*() {
  for (let i = 0; i < 200; i++) yield* Effect.promise(one)
  const n = 200
  steps = 0; fibers.clear(); marks.clear(); last = 0; tally.clear()
  for (let i = 0; i < n; i++) yield* Effect.promise(one)
  console.log(`${path}: fiber steps per request ${(steps / n).toFixed(0)}, fibers per request ${(fibers.size / n).toFixed(2)}`)
  for (const [k, v] of [...tally].sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log(`    ${(v / n).toFixed(1)}  ${k}`)
  for (const [k, v] of marks) console.log(`  until ${k}: ${(v / n).toFixed(0)}`)
})
const layer = Serve.layer({ upstream: "http://127.0.0.1:18521/v1", port: 18522, host: "127.0.0.1", upstreamKeyEnv: Option.none(), apiKeyEnv: Option.none(), builtinTools: "drop" })
await Effect.runPromise(program.pipe(
  Effect.provide(layer),
  Effect.provide(Logger.remove(Logger.defaultLogger)),
  Effect.provide(Layer.mergeAll(Supervisor.addSupervisor(new Counter()), Layer.effectDiscard(Effect.void))),
  Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
))
upstream.close()
process.exit(0)
