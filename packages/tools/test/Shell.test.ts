/**
 * The reference shell handler: the recorded `shell_call`'s shape run in a temporary directory, a timeout,
 * an output bound.
 */
import { Part } from "@effect-responses/core"
import { Shell } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir, userInfo } from "node:os"
import { dirname, join } from "node:path"

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
      // a bound too small for the marker line, or even for `[…N cut]`, keeps the head and says it was cut
      const [long] = yield* Shell.handler({ maxOutputLength: 10 })(
        new Part.ShellCallPart({ callId: "c", commands: ["yes a | head -c 100000 | tr -d '\\n'"] })
      )
      assert.strictEqual(long!.stdout, "aaaaaaaaa…")
      // a bound landing inside a surrogate pair (U+1F600 is two UTF-16 code units) keeps one character fewer
      for (const [max, kept] of [[6, "a\u{1F600}a…"], [11, "a[…17 cut]"]] as const) {
        const [emoji] = yield* Shell.handler({ maxOutputLength: max })(
          new Part.ShellCallPart({ callId: "c", commands: ["printf 'a\\360\\237\\230\\200%.0s' 1 2 3 4 5 6"] })
        )
        assert.strictEqual(emoji!.stdout, kept)
      }
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

  it.effect("output past the bound keeps its head and its tail within the bound, as Codex does", () =>
    Effect.gen(function*() {
      // the builder's case: an error at the end of a long output (a bound of 1000 gave 1019 characters, head only)
      const [failed] = yield* Shell.handler({})(
        new Part.ShellCallPart({
          callId: "c",
          commands: ["seq 1 100000; echo FATAL-ERROR >&2; echo LAST-LINE; exit 1"],
          maxOutputLength: 1000
        })
      )
      // 588 905 characters: room for the marker of that count (29), the rest, 971, half to the head
      const marker = Shell.truncationMarker(588905 - 971)
      assert.strictEqual(failed!.stdout.length, 1000)
      assert.strictEqual(failed!.stdout.slice(485, 485 + marker.length), marker)
      assert.isTrue(failed!.stdout.startsWith("1\n2\n3\n"))
      assert.isTrue(failed!.stdout.endsWith("99999\n100000\nLAST-LINE\n"))
      assert.strictEqual(failed!.stderr, "FATAL-ERROR\n")
      // a surrogate pair at either cut is kept whole or left out whole
      const faces = "😀".repeat(40)
      assert.strictEqual(Shell.keepHeadAndTail(faces, faces, 80, 42), "😀".repeat(4) + Shell.truncationMarker(64) + "😀".repeat(4))
      assert.strictEqual(Shell.keepHeadAndTail(faces, faces, 80, 40), "😀".repeat(3) + Shell.truncationMarker(66) + "😀".repeat(4))
      assert.strictEqual(Shell.keepHeadAndTail("short", "short", 5, 5), "short")
      // a bound too small for the marker line still says the output was cut: a shorter marker after the head
      const [tiny] = yield* Shell.handler({})(new Part.ShellCallPart({ callId: "t", commands: ["printf 0123456789; printf oops >&2"], maxOutputLength: 4 }))
      expect(tiny).toMatchObject({ stdout: "012…", stderr: "oops" })
      const [small] = yield* Shell.handler({})(new Part.ShellCallPart({ callId: "s", commands: ["seq 1 100"], maxOutputLength: 12 }))
      expect(small).toMatchObject({ stdout: "1\n[…290 cut]" })
    }))

  it.effect("the model's timeout_ms and max_output_length: a huge timeout is clamped, a negative one or a negative bound refused", () =>
    Effect.gen(function*() {
      // 3e9 ms overflowed Node's timer: a TimeoutOverflowWarning and a kill after 1 ms
      const [slept] = yield* Shell.handler({})(new Part.ShellCallPart({ callId: "c", commands: ["sleep 0.3; echo slept"], timeoutMs: 3_000_000_000 }))
      expect(slept).toStrictEqual({ stdout: "slept\n", stderr: "", outcome: { type: "exit", exitCode: 0 } })
      const refused = yield* Shell.handler({})(
        new Part.ShellCallPart({ callId: "c", commands: ["echo hi > ran.txt", "echo again"], timeoutMs: -5, maxOutputLength: -1 })
      )
      expect(refused).toStrictEqual([{
        stdout: "",
        stderr: "timeout_ms -5 is not a positive integer (milliseconds); max_output_length -1 is not an integer of 0 or more (characters): nothing was run",
        outcome: { type: "exit", exitCode: 1 }
      }])
      const local = yield* Shell.localHandler({})(new Part.LocalShellCallPart({ callId: "c", command: ["echo", "hi"], timeoutMs: 0 }))
      assert.strictEqual(local, '{"error":"timeout_ms 0 is not a positive integer (milliseconds): nothing was run"}')
      // 0 characters is a bound the model may ask for
      const [none] = yield* Shell.handler({})(new Part.ShellCallPart({ callId: "c", commands: ["echo hi"], maxOutputLength: 0 }))
      assert.strictEqual(none!.stdout, "")
    }))

  it.effect("run without timeoutMs or maxOutputLength (plain JavaScript) takes the documented defaults", () =>
    Effect.gen(function*() {
      // 40,000 characters: cut to DEFAULT_MAX_OUTPUT_LENGTH around a marker, not dropped
      const long = yield* Shell.run("head -c 40000 /dev/zero | tr '\\0' a", {})
      assert.deepStrictEqual(long.outcome, { type: "exit", exitCode: 0 })
      assert.match(long.stdout, /^a+\n\[… \d+ characters cut …\]\na+$/)
      assert.isAtMost(long.stdout.length, Shell.DEFAULT_MAX_OUTPUT_LENGTH)
      assert.isAbove(long.stdout.length, Shell.DEFAULT_MAX_OUTPUT_LENGTH / 2)
      // undefined written out, and no options at all: a command that takes a moment is not timed out at once
      const options = { timeoutMs: undefined, maxOutputLength: undefined } as unknown as Parameters<typeof Shell.run>[1]
      const slow = yield* Shell.run("sleep 0.2; echo done", options)
      expect(slow).toStrictEqual({ stdout: "done\n", stderr: "", outcome: { type: "exit", exitCode: 0 } })
      const bare = yield* (Shell.run as (command: string) => ReturnType<typeof Shell.run>)("echo hi")
      expect(bare).toStrictEqual({ stdout: "hi\n", stderr: "", outcome: { type: "exit", exitCode: 0 } })
    }))

  it.effect("a working directory that does not exist is named, not reported as the shell missing", () =>
    Effect.gen(function*() {
      const missing = join(mkdtempSync(join(tmpdir(), "shell-")), "gone")
      const output = yield* Shell.run("echo hi", { cwd: missing, timeoutMs: 1000, maxOutputLength: 1000 })
      expect(output).toStrictEqual({
        stdout: "",
        stderr: `cannot run the command: the working directory ${missing} does not exist`,
        outcome: { type: "exit", exitCode: 127 }
      })
      const file = join(mkdtempSync(join(tmpdir(), "shell-")), "f")
      writeFileSync(file, "x")
      const notDir = yield* Shell.run("echo hi", { cwd: file, timeoutMs: 1000, maxOutputLength: 1000 })
      assert.strictEqual(notDir.stderr, `cannot run the command: the working directory ${file} is not a directory`)
      // a missing program is still named by the system's message
      const program = yield* Shell.run(["/no/such/bin"], { timeoutMs: 1000, maxOutputLength: 1000 })
      assert.strictEqual(program.stderr, "spawn /no/such/bin ENOENT")
    }))

  /** A workspace with a `sub` directory, and `pwd` run there by `local_shell` with a working_directory. */
  const pwdIn = () => {
    const ws = realpathSync(mkdtempSync(join(tmpdir(), "shell-ws-")))
    mkdirSync(join(ws, "sub"))
    const local = Shell.localHandler({ cwd: ws })
    const pwd = (workingDirectory?: string) =>
      Effect.map(
        local(new Part.LocalShellCallPart({ callId: "c", command: ["pwd"], ...(workingDirectory === undefined ? {} : { workingDirectory }) })),
        (text) => JSON.parse(text) as { stdout: string; stderr: string; exit_code: number }
      )
    return { ws, pwd }
  }

  it.effect("local_shell: a relative working_directory is taken from the handler's cwd, not the process's", () =>
    Effect.gen(function*() {
      // the builder's cases: "." ran in the application's directory (a model's `rm -rf *` there), "sub" (in
      // the workspace) did not exist
      const { pwd, ws } = pwdIn()
      expect(yield* pwd(".")).toStrictEqual({ stdout: `${ws}\n`, stderr: "", exit_code: 0 })
      expect(yield* pwd("sub")).toStrictEqual({ stdout: `${ws}/sub\n`, stderr: "", exit_code: 0 })
      expect(yield* pwd()).toStrictEqual({ stdout: `${ws}\n`, stderr: "", exit_code: 0 })
    }))

  it.effect("local_shell: `..` in a working_directory is read by the system from the handler's cwd, and may leave it (as Codex)", () =>
    Effect.gen(function*() {
      // the builder's case: "node_modules/.." ran in the repository (the process's cwd has a node_modules);
      // the workspace has none, and a missing directory then `..` does not exist
      const { pwd, ws } = pwdIn()
      expect(yield* pwd("node_modules/..")).toStrictEqual({
        stdout: "",
        stderr: `cannot run the command: the working directory ${ws}/node_modules/.. does not exist`,
        exit_code: 127
      })
      expect(yield* pwd("sub/..")).toStrictEqual({ stdout: `${ws}\n`, stderr: "", exit_code: 0 })
      // cwd is where commands start, not a boundary: `..` leads out of it, as Codex's `cwd.join(workdir)`
      expect(yield* pwd("..")).toStrictEqual({ stdout: `${dirname(ws)}\n`, stderr: "", exit_code: 0 })
    }))

  it.effect("local_shell: an absolute working_directory is used as it is (as Codex)", () =>
    Effect.gen(function*() {
      // unchanged behaviour, stated: cwd is no boundary (a command can `cd` anywhere itself)
      const { pwd } = pwdIn()
      const elsewhere = realpathSync(mkdtempSync(join(tmpdir(), "shell-elsewhere-")))
      expect(yield* pwd(elsewhere)).toStrictEqual({ stdout: `${elsewhere}\n`, stderr: "", exit_code: 0 })
    }))

  it.effect("a call with nothing to run, and a local_shell user the handler cannot run as, are refused naming the field", () =>
    Effect.gen(function*() {
      const cwd = mkdtempSync(join(tmpdir(), "shell-"))
      // the builder's case: `commands: []` answered `output: []`
      expect(yield* Shell.handler({ cwd })(new Part.ShellCallPart({ callId: "c", commands: [] }))).toStrictEqual([{
        stdout: "",
        stderr: "commands is empty (the commands to run, in order): nothing was run",
        outcome: { type: "exit", exitCode: 1 }
      }])
      const local = Shell.localHandler({ cwd })
      assert.strictEqual(
        yield* local(new Part.LocalShellCallPart({ callId: "c", command: [] })),
        '{"error":"command is empty (the program and its arguments): nothing was run"}'
      )
      // `user` was ignored: the command ran as the process's user, unsaid
      const own = userInfo().username
      const other = own === "nobody" ? "root" : "nobody"
      const refused = yield* local(new Part.LocalShellCallPart({ callId: "c", command: ["touch", "ran.txt"], user: other }))
      expect(JSON.parse(refused)).toStrictEqual({
        error: `user "${other}" cannot be honoured: commands run as "${own}", the user this process runs as (leave user out): nothing was run`
      })
      expect(() => realpathSync(join(cwd, "ran.txt"))).toThrow()
      // the process's own user, or an empty one, runs
      for (const user of [own, ""]) {
        const ran = yield* local(new Part.LocalShellCallPart({ callId: "c", command: ["id", "-un"], user }))
        expect(JSON.parse(ran)).toStrictEqual({ stdout: `${own}\n`, stderr: "", exit_code: 0 })
      }
    }))
})
