/**
 * The `decode` and `aggregate` verbs of the `effect-responses` executable, run as a user runs them (few
 * tests: each spawns a process).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fixturePath } from "../fixtures.js"
import * as Cli from "./run.js"

const run = (args: ReadonlyArray<string>, input?: string) => Cli.run(args, input === undefined ? {} : { input })

describe("effect-responses decode / aggregate (the executable)", () => {
  it("aggregate FILE prints a JSON array with one ModelResponse per response and exits 0", async () => {
    const result = await run(["aggregate", fixturePath("responses-sse/vai-openai-shell-call.chunks.txt")])
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    const responses = JSON.parse(result.stdout) as Array<{ id: string; status: string; message: { parts: Array<unknown> } }>
    expect(responses.map((r) => r.status)).toStrictEqual(["completed", "completed"])
  })

  it("decode - with malformed JSON: whole lines before it, one error line naming <stdin> and the line, exit 1", async () => {
    const lines = readFileSync(fixturePath("responses-sse/vai-azure-text.chunks.txt"), "utf8").split("\n")
    lines[5] = "{\"type\": \"response.output_text.delta\", \"delta\": "
    const result = await run(["decode", "-"], lines.join("\n"))
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/^effect-responses: <stdin>:6: malformed output .*\n$/)
    expect(result.stderr.split("\n")).toHaveLength(2)
    const printed = result.stdout.split("\n").filter((line) => line !== "")
    expect(printed.map((line) => (JSON.parse(line) as { type: string }).type)[0]).toBe("response_started")
  })

  for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it(`decode - interrupted by ${signal} mid-input: the lines decoded so far, exit ${status} (never 0)`, async () => {
      const lines = readFileSync(fixturePath("responses-sse/vai-azure-text.chunks.txt"), "utf8").split("\n")
      const running = Cli.start(["decode", "-"])
      // the first event only: standard input stays open, so decode waits for more
      running.child.stdin.write(`${lines[0]}\n`)
      await running.waitFor(/"type":"response_started".*\n/)
      running.child.kill(signal)
      const result = await running.done
      expect(result.status).toBe(status)
      expect(result.stderr).toBe("")
      expect(result.stdout.trimEnd().split("\n")).toHaveLength(1)
    })
  }

  it("decode streams: a 50 MB capture goes through a process whose heap is capped at 64 MB", async () => {
    // the Azure text recording (vercel/ai, Apache-2.0) repeated: 10,000 consecutive responses, ~50 MB
    const recording = readFileSync(fixturePath("responses-sse/vai-azure-text.chunks.txt"), "utf8").trim() + "\n"
    const copies = Math.ceil(50_000_000 / recording.length)
    const dir = mkdtempSync(join(tmpdir(), "effect-responses-big-"))
    const input = join(dir, "big.chunks.txt")
    writeFileSync(input, recording.repeat(copies))
    const output = openSync(join(dir, "out.jsonl"), "w")
    const child = spawn(process.execPath, ["--max-old-space-size=64", Cli.bin, "decode", input], {
      stdio: ["ignore", output, "pipe"],
      env: Cli.environment()
    })
    let stderr = ""
    child.stderr!.setEncoding("utf8").on("data", (data: string) => {
      stderr += data
    })
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve))
    closeSync(output)
    expect(stderr).toBe("")
    expect(status).toBe(0)
    expect(statSync(input).size).toBeGreaterThan(50_000_000)
    const lines = readFileSync(join(dir, "out.jsonl"), "utf8").trimEnd().split("\n")
    rmSync(dir, { recursive: true, force: true })
    expect(lines.filter((line) => line.startsWith("{\"type\":\"response_finished\"")).length).toBe(copies)
  }, 180_000)
})
