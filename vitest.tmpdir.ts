/**
 * The test run's global setup (`vitest.config.ts`): a temporary directory of the run's own, set as `TMPDIR`
 * (which `os.tmpdir()` reads, in the test workers and in the processes the tests spawn) and removed with
 * everything in it when the run ends, so that tests leave nothing behind in the machine's temp directory.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export default function setup(): () => void {
  const previous = process.env.TMPDIR
  const dir = mkdtempSync(join(tmpdir(), "effect-responses-test-"))
  process.env.TMPDIR = dir
  return () => {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
    rmSync(dir, { recursive: true, force: true })
  }
}
