import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { defineWorkspace } from "vitest/config"

// One project per npm workspace. Every test gets 30 s: CI runs all packages at once on 2 cores, where a
// test that spawns the CLI or compiles the 3 MB OpenAPI description takes seconds, not milliseconds.
const workspaces: ReadonlyArray<string> = JSON.parse(readFileSync(new URL("package.json", import.meta.url), "utf8")).workspaces
const packages = fileURLToPath(new URL("packages/", import.meta.url))

// Tests import the packages by name and run on their sources (as the Effect monorepo's tests do), so a test
// never runs a stale build; the consumer test in `.ci/run` covers the built `dist/` as users install it.
const alias = [
  { find: /^@effect-responses\/([^/]+)$/, replacement: `${packages}$1/src/index.ts` },
  { find: /^@effect-responses\/([^/]+)\/(.+)$/, replacement: `${packages}$1/src/$2.ts` }
]

export default defineWorkspace([
  ...workspaces.map((root) => ({
    resolve: { alias },
    test: {
      name: `@effect-responses/${root.slice("packages/".length)}`,
      root,
      testTimeout: 30_000,
      hookTimeout: 30_000
    }
  })),
  // The README's examples (`examples/*.ts`, each run in this one process by `examples/test/`) and the
  // example test of an app (`examples/app.test.ts`).
  {
    resolve: { alias },
    test: { name: "examples", root: "examples", testTimeout: 30_000, hookTimeout: 30_000 }
  }
])
