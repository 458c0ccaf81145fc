import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

// The test projects (`test.projects`): one per npm workspace, named after its package
// (`npx vitest run --project @effect-responses/core`), the README's examples, and the tests that spawn the
// built CLI. Every test gets 30 s: CI runs all packages at once on 2 cores, where a test that spawns the CLI
// or compiles the 3 MB OpenAPI description takes seconds, not milliseconds.
const workspaces: ReadonlyArray<string> = JSON.parse(readFileSync(new URL("package.json", import.meta.url), "utf8")).workspaces
const packages = fileURLToPath(new URL("packages/", import.meta.url))

// Tests import the packages by name and run on their sources (as the Effect monorepo's tests do), so a test
// never runs a stale build; the consumer test in `.ci/run` covers the built `dist/` as users install it.
const alias = [
  { find: /^@effect-responses\/([^/]+)$/, replacement: `${packages}$1/src/index.ts` },
  { find: /^@effect-responses\/([^/]+)\/(.+)$/, replacement: `${packages}$1/src/$2.ts` }
]

// Tests that spawn the built CLI (`packages/cli/test/spawned/`) are a project of their own: one forked
// worker, one file at a time (each test starts Node processes; several at once on 2 cores made vitest's worker RPC
// time out on a loaded machine), with 90 s per test.
const spawned = "packages/cli/test/spawned/**/*.test.ts"

// The store tests' PostgreSQL server (`vitest.postgres.ts`): started for the server package's tests when a
// file of the run needs it and `EFFECT_RESPONSES_TEST_PG_URL` names none, stopped at the end.
const postgres = fileURLToPath(new URL("vitest.postgres.ts", import.meta.url))

export default defineConfig({
  test: {
    // every run in a temporary directory of its own, removed at the end (TMPDIR for the workers and the
    // processes they spawn)
    globalSetup: ["./vitest.tmpdir.ts"],
    projects: [
      ...workspaces.map((root) => ({
        resolve: { alias },
        test: {
          name: `@effect-responses/${root.slice("packages/".length)}`,
          root,
          exclude: ["**/node_modules/**", "**/dist/**", "test/spawned/**"],
          ...(root === "packages/server" ? { globalSetup: [postgres] } : {}),
          testTimeout: 30_000,
          hookTimeout: 30_000
        }
      })),
      // The README's examples (`examples/*.ts`, each run in this one process by `examples/test/`) and the
      // example test of an app (`examples/app.test.ts`).
      {
        resolve: { alias },
        test: { name: "examples", root: "examples", testTimeout: 30_000, hookTimeout: 30_000 }
      },
      {
        resolve: { alias },
        test: {
          name: "@effect-responses/cli:spawned",
          root: "packages/cli",
          include: [spawned.slice("packages/cli/".length)],
          pool: "forks",
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 90_000,
          hookTimeout: 90_000
        }
      }
    ]
  }
})
