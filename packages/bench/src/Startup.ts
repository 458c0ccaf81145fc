/**
 * Start-up costs of the built CLI, as a user meets them: the wall time of a whole `effect-responses
 * --version` process (Node's own start included), the same for `--help`, and the resident set size (RSS) of an idle gateway
 * (`effect-responses serve`, once `/health` answers and a second has passed, before any request).
 * Both run `packages/cli/bin/effect-responses.mjs`, which `npm run build` must have written.
 *
 * @since 0.2.0
 */
import { spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../../cli/bin/effect-responses.mjs", import.meta.url))

/** Wall times in milliseconds of `runs` processes `effect-responses ...args` after `warmup` uncounted ones. */
const processTimes = (
  args: ReadonlyArray<string>,
  expected: RegExp,
  warmup: number,
  runs: number
): ReadonlyArray<number> => {
  const times: Array<number> = []
  for (let i = 0; i < warmup + runs; i++) {
    const start = performance.now()
    const result = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8" })
    const elapsed = performance.now() - start
    if (result.status !== 0 || !expected.test(result.stdout)) {
      throw new Error(`effect-responses ${args.join(" ")} failed (${result.status}): ${result.stderr.slice(0, 500)}`)
    }
    if (i >= warmup) times.push(elapsed)
  }
  return times
}

/**
 * Wall times in milliseconds of `runs` `--version` processes after `warmup` uncounted ones.
 *
 * @since 0.2.0
 */
export const versionTimes = (warmup: number, runs: number): ReadonlyArray<number> =>
  processTimes(["--version"], /^\d+\.\d+\.\d+/, warmup, runs)

/**
 * Wall times in milliseconds of `runs` `--help` processes after `warmup` uncounted ones: the command line
 * is loaded (`@effect/cli`, the verbs' declarations), the verbs' modules are not.
 *
 * @since 0.2.0
 */
export const helpTimes = (warmup: number, runs: number): ReadonlyArray<number> =>
  processTimes(["--help"], /^effect-responses /, warmup, runs)

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const rssOf = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const match = /VmRSS:\s+(\d+) kB/.exec(status)
  if (match === null) throw new Error("no VmRSS in /proc status")
  return Number(match[1]) * 1024
}

/**
 * The RSS in bytes of an idle gateway process: started with an upstream nobody listens on (no request is
 * made), measured once `GET /health` answered and one more second passed. Linux only (`/proc`).
 *
 * @since 0.2.0
 */
export const gatewayIdleRss = async (): Promise<number> => {
  const port = await freePort()
  const child = spawn(process.execPath, [bin, "serve", "--upstream", "http://127.0.0.1:9/v1", "--port", String(port)], {
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  try {
    const deadline = Date.now() + 20_000
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode}): ${stderr.slice(0, 500)}`)
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)
      if (ok) break
      if (Date.now() > deadline) throw new Error("the gateway did not answer /health within 20 s")
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
    return rssOf(child.pid!)
  } finally {
    child.kill("SIGTERM")
  }
}
