/**
 * A closed standard output (the reader went away, as `| head -1` does) ends every verb quietly with exit
 * status 0: no stack trace, no error line.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fixturePath } from "../fixtures.js"
import * as Cli from "./run.js"

// The Azure text recording (vercel/ai, Apache-2.0) repeated: 300 consecutive responses, more output than a
// pipe's buffer holds for every verb.
const big = (() => {
  const recording = readFileSync(fixturePath("responses-sse/vai-azure-text.chunks.txt"), "utf8").trim() + "\n"
  const file = join(mkdtempSync(join(tmpdir(), "effect-responses-pipe-")), "many.chunks.txt")
  writeFileSync(file, recording.repeat(300))
  return file
})()

/** Runs `effect-responses ARGS | head -1` in bash with pipefail: the pipeline's status is the CLI's. */
const headOne = (args: ReadonlyArray<string>) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const quoted = args.map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ")
    const child = spawn("bash", ["-c", `set -o pipefail; '${process.execPath}' '${Cli.bin}' ${quoted} | head -1`], {
      env: Cli.environment(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (data: string) => {
      stdout += data
    })
    child.stderr.setEncoding("utf8").on("data", (data: string) => {
      stderr += data
    })
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

describe("effect-responses | head -1 (the executable)", () => {
  it("decode, aggregate, chat and --help end quietly with 0 when the reader stops reading", async () => {
    const decode = await headOne(["decode", big])
    expect(decode).toMatchObject({ status: 0, stderr: "" })
    expect(decode.stdout).toMatch(/^\{"type":"response_started"/)

    const aggregate = await headOne(["aggregate", big])
    expect(aggregate).toStrictEqual({ status: 0, stdout: "[\n", stderr: "" })

    const chat = await headOne(["chat", "--demo"])
    expect(chat.status).toBe(0)
    expect(chat.stdout).toMatch(/^reasoning: /)
    expect(chat.stderr).toBe(
      "effect-responses: replaying the demo recording (4 recorded responses of gpt-5.1-codex-max); nothing is sent to a model\n"
    )
  })

  it("a reader that closes before anything is written: request and --help end quietly with 0 too", async () => {
    for (const args of [["request", "-"], ["chat", "--help"], ["--help"]]) {
      const running = Cli.start(args)
      running.child.stdout.destroy()
      running.child.stdin.end(JSON.stringify({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] }))
      const result = await running.done
      expect({ args, status: result.status, stderr: result.stderr }).toStrictEqual({ args, status: 0, stderr: "" })
    }
  })
})
