/**
 * `effect-responses serve`, run as a user runs it (one spawned process: they cost about 2 s each): it
 * prints where it listens, answers `/health`, and demands the key named by `--api-key-env`.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { bin } from "./run.js"

describe("effect-responses serve (the executable)", () => {
  it("listens on a loopback port, answers /health, and answers 401 without the key", async () => {
    const child = spawn(
      process.execPath,
      [bin, "serve", "--upstream", "http://127.0.0.1:9/v1", "--port", "0", "--api-key-env", "GATEWAY_TEST_KEY"],
      { env: { ...process.env, GATEWAY_TEST_KEY: "sekret" }, stdio: ["ignore", "pipe", "pipe"] }
    )
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = ""
        let err = ""
        child.stdout.on("data", (data: Buffer) => {
          out += data.toString("utf8")
          if (out.includes("\n")) resolve(out.split("\n")[0]!)
        })
        child.stderr.on("data", (data: Buffer) => {
          err += data.toString("utf8")
        })
        child.on("exit", (code) => reject(new Error(`exited with ${code}: ${err}`)))
      })
      const match = /^effect-responses: serving (http:\/\/127\.0\.0\.1:\d+\/v1) -> http:\/\/127\.0\.0\.1:9\/v1$/.exec(line)
      expect(match, line).not.toBeNull()
      const base = match![1]!
      const health = await fetch(base.replace(/\/v1$/, "/health"))
      expect(await health.json()).toEqual({ status: "ok" })
      const denied = await fetch(`${base}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", input: "hi" })
      })
      expect(denied.status).toBe(401)
      expect((await denied.json()).error.code).toBe("invalid_api_key")
    } finally {
      child.kill("SIGTERM")
    }
  }, 60_000)
})
