/**
 * The PostgreSQL server of the store tests (`packages/server/test/storeBackends.ts`), a global setup of the
 * `@effect-responses/server` test project (`vitest.config.ts`), so that `npm test` passes on a fresh machine
 * without any set-up of its own:
 *
 * - `EFFECT_RESPONSES_TEST_PG_URL` set: the tests use that server; nothing is started.
 * - else, when a test file of the run uses the store backends (or in watch mode): `scripts/postgres.sh start`
 *   starts a throwaway cluster of Debian's `postgresql` in a state directory of this run's own
 *   (`$EFFECT_RESPONSES_PG_STATE`) on the first free port, and its URL goes to the tests by `provide`; it is
 *   stopped and removed when the run ends: by the teardown, or, when vitest is killed before that, by a
 *   watcher process that waits for vitest's process to end.
 * - PostgreSQL's binaries missing (or the server not starting): the PostgreSQL tests fail with the reason and
 *   how to get a server; the rest of the run goes on.
 */
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The test PostgreSQL server's URL, or why there is none (`vitest.postgres.ts`). */
    effectResponsesPostgres: { readonly url: string } | { readonly error: string }
  }
}

const script = fileURLToPath(new URL("scripts/postgres.sh", import.meta.url))

/** Whether a test file uses the store backends (and so the PostgreSQL server). */
const usesPostgres = (file: string): boolean => {
  try {
    return readFileSync(file, "utf8").includes("storeBackends")
  } catch {
    return true
  }
}

const run = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile("bash", [script, ...args], { env }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout.trim())
      else reject(new Error(stderr.trim() || error.message))
    })
  })

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const fromEnv = process.env.EFFECT_RESPONSES_TEST_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") {
    project.provide("effectResponsesPostgres", { url: fromEnv })
    return undefined
  }
  // the files of this run (the state API is experimental: without it, a server is started)
  const files = project.vitest.state?.getPaths?.() ?? []
  const needed = project.vitest.config.watch || files.length === 0 || files.some(usesPostgres)
  if (!needed) {
    project.provide("effectResponsesPostgres", { error: "no PostgreSQL server: no test file of this run was seen to need one" })
    return undefined
  }
  // in /tmp, which PostgreSQL's user can enter when the tests run as root (postgres.sh recreates the directory)
  const state = mkdtempSync("/tmp/effect-responses-pg-")
  const env = { ...process.env, EFFECT_RESPONSES_PG_STATE: state }
  let url: string
  try {
    url = await run(["start"], env)
  } catch (error) {
    rmSync(state, { recursive: true, force: true })
    const reason = error instanceof Error ? error.message : String(error)
    project.provide("effectResponsesPostgres", {
      error: `no PostgreSQL server for the store tests: \`scripts/postgres.sh start\` failed (${reason}). ` +
        "Install PostgreSQL's server (Debian, Ubuntu: `apt-get install postgresql`; the tests start and stop a " +
        "throwaway cluster of their own) or set EFFECT_RESPONSES_TEST_PG_URL to the URL of a server whose user " +
        "may create databases."
    })
    return undefined
  }
  project.provide("effectResponsesPostgres", { url })
  // stops the server should this process end without the teardown (killed)
  const watcher = spawn(
    "bash",
    ["-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; exec bash "$0" stop`, script],
    { env, detached: true, stdio: "ignore" }
  )
  watcher.unref()
  return async () => {
    if (watcher.pid !== undefined) {
      try {
        process.kill(-watcher.pid)
      } catch {
        // already gone
      }
    }
    await run(["stop"], env).catch(() => undefined)
  }
}
