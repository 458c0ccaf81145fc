/**
 * The reference shell handler: the recorded `shell_call`'s shape run in a temporary directory, a timeout,
 * an output bound.
 */
import { Part } from "@effect-responses/core"
import { Shell } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

describe("Shell", () => {
  it.effect("runs each command in the working directory", () =>
    Effect.gen(function*() {
      const cwd = mkdtempSync(join(tmpdir(), "shell-"))
      writeFileSync(join(cwd, "a.txt"), "x")
      const call = new Part.ShellCallPart({ callId: "call_sh_1", commands: ["ls -a", "echo oops >&2; exit 3"], maxOutputLength: 8912 })
      const output = yield* Shell.handler({ cwd })(call)
      expect(output).toStrictEqual([
        { stdout: ".\n..\na.txt\n", stderr: "", outcome: { type: "exit", exitCode: 0 } },
        { stdout: "", stderr: "oops\n", outcome: { type: "exit", exitCode: 3 } }
      ])
    }))

  it.effect("a command past its timeout is killed and reported as a timeout; output beyond the bound is cut", () =>
    Effect.gen(function*() {
      const [slow] = yield* Shell.handler({})(new Part.ShellCallPart({ callId: "c", commands: ["sleep 5"], timeoutMs: 100 }))
      expect(slow!.outcome).toStrictEqual({ type: "timeout" })
      const [long] = yield* Shell.handler({ maxOutputLength: 10 })(
        new Part.ShellCallPart({ callId: "c", commands: ["yes a | head -c 100000 | tr -d '\\n'"] })
      )
      assert.strictEqual(long!.stdout, `aaaaaaaaaa${Shell.TRUNCATED}`)
      // a bound landing inside a surrogate pair (U+1F600 is two UTF-16 code units) keeps one character fewer
      const [emoji] = yield* Shell.handler({ maxOutputLength: 11 })(
        new Part.ShellCallPart({ callId: "c", commands: ["printf 'a\\360\\237\\230\\200%.0s' 1 2 3 4 5 6"] })
      )
      assert.strictEqual(emoji!.stdout, `a\u{1F600}a\u{1F600}a\u{1F600}a${Shell.TRUNCATED}`)
    }))

  it.effect("a character whose bytes arrive in two writes is one character, on stdout and stderr", () =>
    Effect.gen(function*() {
      // é is C3 A9 and U+1F600 F0 9F 98 80: each written in two pieces, a pause between them (two pipe reads)
      const [split] = yield* Shell.handler({})(
        new Part.ShellCallPart({
          callId: "c",
          commands: [
            "printf 'a\\303'; sleep 0.2; printf '\\251b\\360\\237'; sleep 0.2; printf '\\230\\200'; " +
            "printf '\\303' >&2; sleep 0.2; printf '\\251' >&2"
          ]
        })
      )
      expect(split).toStrictEqual({ stdout: "a\u00e9b\u{1F600}", stderr: "\u00e9", outcome: { type: "exit", exitCode: 0 } })
      // bytes that never complete a character are one U+FFFD at the end, as a whole read would give
      const [cut] = yield* Shell.handler({})(new Part.ShellCallPart({ callId: "c", commands: ["printf 'x\\360\\237'"] }))
      expect(cut!.stdout).toBe("x\uFFFD")
    }))

  it.effect("the command ends at its process's exit: a background job holding the pipes delays neither the result nor the timeout", () =>
    Effect.gen(function*() {
      // `&` leaves a job holding stdout: the result is the shell's exit, at once, and the job keeps running
      const [background] = yield* Shell.handler({})(
        new Part.ShellCallPart({ callId: "c", commands: ["sleep 30 & echo $!; echo started"], timeoutMs: 20_000 })
      )
      const [pid, started] = background!.stdout.split("\n")
      expect({ started, stderr: background!.stderr, outcome: background!.outcome }).toStrictEqual({
        started: "started",
        stderr: "",
        outcome: { type: "exit", exitCode: 0 }
      })
      // the job is still alive (kill with signal 0 only checks), then ended here
      expect(() => process.kill(Number(pid), 0)).not.toThrow()
      process.kill(Number(pid), "SIGKILL")
      // a job out of the process group (setsid) holding stdout: the timeout still gives the timeout outcome,
      // with what was written before it
      const [escaped] = yield* Shell.handler({})(
        new Part.ShellCallPart({ callId: "c", commands: ["setsid sleep 30 & echo $!; echo started; sleep 30"], timeoutMs: 300 })
      )
      const [escapedPid, escapedStarted] = escaped!.stdout.split("\n")
      process.kill(Number(escapedPid), "SIGKILL")
      expect({ started: escapedStarted, outcome: escaped!.outcome }).toStrictEqual({
        started: "started",
        outcome: { type: "timeout" }
      })
    }))

  it.effect("a command killed by a signal exits with 128 + the signal's number, as shells report it", () =>
    Effect.gen(function*() {
      const outputs = yield* Shell.handler({})(new Part.ShellCallPart({ callId: "c", commands: ["kill -9 $$", "kill -TERM $$"] }))
      expect(outputs.map((output) => output.outcome)).toStrictEqual([
        { type: "exit", exitCode: 137 },
        { type: "exit", exitCode: 143 }
      ])
      // local_shell too: its exit_code
      const text = yield* Shell.localHandler({})(new Part.LocalShellCallPart({ callId: "c", command: ["/bin/sh", "-c", "kill -9 $$"] }))
      assert.strictEqual(JSON.parse(text).exit_code, 137)
    }))

  it.effect("local_shell: an argument vector, its output as JSON text", () =>
    Effect.gen(function*() {
      const text = yield* Shell.localHandler({})(new Part.LocalShellCallPart({ callId: "c", command: ["printf", "%s", "hi"] }))
      expect(JSON.parse(text)).toStrictEqual({ stdout: "hi", stderr: "", exit_code: 0 })
      const missing = yield* Shell.localHandler({})(new Part.LocalShellCallPart({ callId: "c", command: ["/no/such/binary"] }))
      assert.strictEqual(JSON.parse(missing).exit_code, 127)
    }))
})
