/**
 * What the executable reads before it does anything: `--version` prints the package's version, and what
 * the start-up reads (the bundle's entry and the chunks it imports statically, which `--help` runs) holds
 * neither the HTTP stack (undici, ws), nor the SQL drivers, nor the verbs' own code: those are in chunks
 * imported when a verb runs. The start-up time itself is measured by `npm run bench`.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Cli from "./run.js"

const dist = fileURLToPath(new URL("../../dist/", import.meta.url))
const manifest = JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8"))

/** The files `file` imports statically (`import … from "./…"`, `import "./…"`), itself included. */
const staticClosure = (file: string, seen: Set<string> = new Set()): Set<string> => {
  if (seen.has(file)) return seen
  seen.add(file)
  const text = readFileSync(file, "utf8")
  for (const [, spec] of text.matchAll(/(?:^|[;}\s])import\s*(?:[^"'()]*?from\s*)?["'](\.[^"']+)["']/g)) {
    staticClosure(join(dirname(file), spec!), seen)
  }
  return seen
}

/** Text each of the lazily loaded parts holds, and the start-up must not. */
const markers = {
  undici: "undici",
  ws: "WebSocketServer",
  "@effect/sql": "@effect/sql/SqlClient",
  "the chat verb": "nothing is sent to a model",
  "the gateway": "previous_response_not_found",
  "the Chat Completions decoder": "chat.completion.chunk"
}

describe("effect-responses start-up (the executable)", () => {
  it("--version prints the package's version, alone or after --log-level", async () => {
    const bare = await Cli.run(["--version"])
    expect(bare).toMatchObject({ status: 0, stdout: `${manifest.version}\n`, stderr: "" })
    const after = await Cli.run(["--log-level", "debug", "--version"])
    expect(after).toMatchObject({ status: 0, stdout: `${manifest.version}\n`, stderr: "" })
  })

  it("the start-up reads neither the HTTP stack, nor the SQL drivers, nor the verbs, which are in chunks of their own", () => {
    const startup = staticClosure(join(dist, "effect-responses.mjs"))
    const chunks = readdirSync(dist).filter((f) => f.startsWith("cli-") && f.endsWith(".mjs"))
    const main = chunks.find((f) => f.startsWith("cli-main-"))
    expect(main).toBeDefined()
    staticClosure(join(dist, main!), startup)
    const all = chunks.map((f) => join(dist, f))
    for (const [what, marker] of Object.entries(markers)) {
      const holders = all.filter((file) => readFileSync(file, "utf8").includes(marker))
      expect(holders.length, `${what} is in the build`).toBeGreaterThan(0)
      expect(holders.filter((file) => startup.has(file)), `${what} is read at start-up`).toStrictEqual([])
    }
  })
})
