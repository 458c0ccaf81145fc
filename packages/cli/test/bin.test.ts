/**
 * The `effect-responses` executable, run as a user runs it: one line per error on stderr, a non-zero exit,
 * and nothing on stdout that looks like success.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { fixturePath } from "./fixtures.js"

const bin = fileURLToPath(new URL("../bin/effect-responses.mjs", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "effect-responses-bin-"))

const run = (...args: ReadonlyArray<string>) => {
  const env = { ...process.env }
  delete env.OPENAI_API_KEY
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", env, timeout: 60_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

// Each run starts Node and the bundled CLI: allow for a slow, loaded 2-core machine.
describe("effect-responses (the executable)", { timeout: 60_000 }, () => {
  it("chat --replay FILE streams the capture to a final answer and exits 0", () => {
    const result = run("chat", "--replay", fixturePath("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt"))
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("answer: The final result is **570**.")
  })

  it("a capture that does not exist: one line naming the file, exit 1", () => {
    const file = join(dir, "missing.sse")
    const result = run("chat", "--replay", file)
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe(`effect-responses: ${file}: no such file\n`)
  })

  it("an empty capture: one line naming the file, exit 1", () => {
    const file = join(dir, "empty.chunks.txt")
    writeFileSync(file, "")
    const result = run("chat", "--replay", file)
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe(`effect-responses: ${file}: the capture is empty\n`)
  })

  it("a capture with malformed JSON: one line naming the file and the line, exit 1, nothing half-printed", () => {
    const lines = readFileSync(
      fixturePath("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt"),
      "utf8"
    ).split("\n")
    lines[60] = "{\"type\": \"response.function_call_arguments.delta\", \"delta\": "
    const file = join(dir, "broken.chunks.txt")
    writeFileSync(file, lines.join("\n"))
    const result = run("chat", "--replay", file)
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(new RegExp(`^effect-responses: ${file}:61: malformed JSON .*\\n$`))
    expect(result.stderr.split("\n")).toHaveLength(2)
  })
})
