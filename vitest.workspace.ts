import { readFileSync } from "node:fs"
import { defineWorkspace } from "vitest/config"

// One project per npm workspace. Every test gets 30 s: CI runs all packages at once on 2 cores, where a
// test that spawns the CLI or compiles the 3 MB OpenAPI description takes seconds, not milliseconds.
const workspaces: ReadonlyArray<string> = JSON.parse(readFileSync(new URL("package.json", import.meta.url), "utf8")).workspaces

export default defineWorkspace(
  workspaces.map((root) => ({
    test: {
      name: `@effect-responses/${root.slice("packages/".length)}`,
      root,
      testTimeout: 30_000,
      hookTimeout: 30_000
    }
  }))
)
