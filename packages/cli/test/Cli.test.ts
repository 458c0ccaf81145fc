/**
 * The command line in process: what goes to standard output and standard error, the argument order, the
 * error line.
 */
import { Cli } from "@effect-responses/cli"
import { assert, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { Readable } from "node:stream"
import { afterEach, vi } from "vitest"
import { fixturePath } from "./fixtures.js"

/** Runs `Cli.main` on `args`, capturing standard output and standard error (and standard input from `stdin`). */
const main = (args: ReadonlyArray<string>, stdin?: string) =>
  Effect.gen(function*() {
    let stdout = ""
    let stderr = ""
    const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      stdout += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)
      return true
    })
    const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      stderr += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)
      return true
    })
    if (stdin !== undefined) vi.spyOn(process, "stdin", "get").mockReturnValue(Readable.from([stdin]) as typeof process.stdin)
    const exitCode = process.exitCode
    yield* Cli.main(["node", "effect-responses", ...args]).pipe(
      Effect.provide(NodeContext.layer),
      Effect.ensuring(Effect.sync(() => {
        out.mockRestore()
        err.mockRestore()
      }))
    )
    const status = process.exitCode ?? 0
    process.exitCode = exitCode
    return { stdout, stderr, status }
  })

afterEach(() => {
  vi.restoreAllMocks()
})

describe("effect-responses (in process)", () => {
  it.effect("log warnings go to standard error: aggregate's standard output is JSON only", () =>
    Effect.gen(function*() {
      const result = yield* main(["aggregate", fixturePath("responses-sse/vai-azure-gpt54-multi-summary-encrypted.chunks.txt")])
      assert.strictEqual(result.status, 0)
      const responses = JSON.parse(result.stdout) as Array<{ text?: string }>
      assert.strictEqual(responses.length, 1)
      assert.match(result.stderr, /^effect-responses: warning: output item 1 of response resp_anonymized_synth_001: .*contradicts/)
      assert.strictEqual(result.stderr.split("\n").length, 2)
    }))

  it.effect("request - --stream --model M: options after the standard-input argument are read", () =>
    Effect.gen(function*() {
      const prompt = JSON.stringify({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] })
      const result = yield* main(["request", "-", "--stream", "--model", "m-1"], prompt)
      assert.strictEqual(result.stderr, "")
      assert.strictEqual(result.status, 0)
      const body = JSON.parse(result.stdout) as { model: string; stream?: boolean }
      assert.strictEqual(body.model, "m-1")
      assert.strictEqual(body.stream, true)
    }))

  it("normalizeArgs moves a lone - after the options, but not the value of an option", () => {
    expect(Cli.normalizeArgs(["node", "bin", "request", "-", "--stream", "--model", "x"])).toStrictEqual(
      ["node", "bin", "request", "--stream", "--model", "x", "-"]
    )
    expect(Cli.normalizeArgs(["node", "bin", "decode", "--protocol", "chat-completions", "-"])).toStrictEqual(
      ["node", "bin", "decode", "--protocol", "chat-completions", "-"]
    )
    expect(Cli.normalizeArgs(["node", "bin", "chat", "--model", "-", "hi"])).toStrictEqual(
      ["node", "bin", "chat", "--model", "-", "hi"]
    )
    expect(Cli.normalizeArgs(["node", "bin", "chat", "--", "-", "--x"])).toStrictEqual(["node", "bin", "chat", "--", "-", "--x"])
  })

  it("the error line is never empty: an error without a message shows its tag, reason and cause", () => {
    class ServeError extends Error {
      readonly _tag = "ServeError"
      constructor(override readonly cause: unknown) {
        super("")
      }
    }
    const message = Cli.errorMessage(Cause.fail(new ServeError(new Error("listen EADDRINUSE: address already in use"))))
    assert.strictEqual(message, "ServeError: listen EADDRINUSE: address already in use")
    assert.strictEqual(Cli.errorMessage(Cause.fail({ _tag: "SystemError", reason: "NotFound" })), "SystemError NotFound")
    assert.strictEqual(Cli.errorMessage(Cause.die(new Error(""))), "Error")
  })
})
