/**
 * Custom (freeform) tools and the client-run built-in tools (shell, apply_patch, local_shell) through the
 * public API: their definitions, `ToolExecutor` answering each in its own item type, and `ToolLoop`
 * driven by a scripted model, with the reference handlers on a temporary directory. Call shapes follow the
 * recordings (`pai-gpt5-custom-tool-call-input-deltas.sse`, `vai-openai-apply-patch-call.chunks.txt`,
 * `vai-openai-shell-call.chunks.txt`); ids are invented.
 */
import { LanguageModel, Message, ModelResponse, Part, Prompt, Usage } from "@effect-responses/core"
import { ApplyPatch, Shell, Tool, Toolkit, ToolExecutor, ToolLoop } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fakeModel } from "./calculator.js"

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const answer = (id: string, parts: ReadonlyArray<Part.AssistantPart>) =>
  new ModelResponse.ModelResponse({
    id,
    model: "gpt-5.1",
    status: "completed",
    finishReason: ModelResponse.finishReasonOf(new Message.AssistantMessage({ parts })),
    usage: Usage.empty,
    message: new Message.AssistantMessage({ parts })
  })

const LARK = `start: expr
expr: term (("+" | "-") term)*
term: factor (("*" | "/") factor)*
factor: NUMBER | "(" expr ")"
%import common.NUMBER
%ignore " "`

const Evaluate = Tool.custom("evaluate", {
  description: "Evaluates an arithmetic expression.",
  format: { type: "grammar", syntax: "lark", definition: LARK }
})

class Unreadable extends Schema.TaggedError<Unreadable>()("Unreadable", { input: Schema.String }) {}

const Strict = Tool.custom("strict_echo", {
  description: "Echoes its input as JSON, fails on an empty one.",
  success: Schema.Struct({ echoed: Schema.String }),
  failure: Unreadable
})

/** A tiny evaluator for the grammar above (digits, + - * / and parentheses). */
const evaluate = (input: string): number => {
  const tokens = input.match(/\d+(?:\.\d+)?|[-+*/()]/g) ?? []
  let at = 0
  const factor = (): number => {
    const token = tokens[at++]
    if (token === "(") {
      const value = expr()
      at++
      return value
    }
    return Number(token)
  }
  const term = (): number => {
    let value = factor()
    while (tokens[at] === "*" || tokens[at] === "/") value = tokens[at++] === "*" ? value * factor() : value / factor()
    return value
  }
  const expr = (): number => {
    let value = term()
    while (tokens[at] === "+" || tokens[at] === "-") value = tokens[at++] === "+" ? value + term() : value - term()
    return value
  }
  return expr()
}

const Agent = Toolkit.make(Evaluate, Strict, Tool.shell, Tool.applyPatch, Tool.localShell)

const workspace = () => mkdtempSync(join(tmpdir(), "client-tools-"))

const agentLive = (root: string, shell: Shell.Options = {}) =>
  Agent.toLayer({
    evaluate: (input) => Effect.succeed(String(evaluate(input))),
    strict_echo: (input) => input === "" ? Effect.fail(new Unreadable({ input })) : Effect.succeed({ echoed: input }),
    shell: Shell.handler({ cwd: root, ...shell }),
    apply_patch: ApplyPatch.handler({ root }),
    local_shell: Shell.localHandler({ cwd: root, ...shell })
  })

describe("Tool.custom and the client-run built-in tools", () => {
  it("are offered as custom and client tool definitions", () => {
    expect(json(Agent.definitions)).toStrictEqual([
      {
        type: "custom",
        name: "evaluate",
        description: "Evaluates an arithmetic expression.",
        format: { type: "grammar", syntax: "lark", definition: LARK }
      },
      { type: "custom", name: "strict_echo", description: "Echoes its input as JSON, fails on an empty one." },
      { type: "client", name: "shell" },
      { type: "client", name: "apply_patch" },
      { type: "client", name: "local_shell" }
    ])
    assert.instanceOf(Agent.definitions[0], LanguageModel.CustomToolDefinition)
    assert.instanceOf(Agent.definitions[2], LanguageModel.ClientToolDefinition)
  })

  it.effect("ToolExecutor answers each call in its own item type", () =>
    Effect.gen(function*() {
      const root = workspace()
      const results = yield* ToolExecutor.execute(Agent, [
        new Part.CustomToolCallPart({ callId: "call_c1", name: "evaluate", input: "(12 + 7) * 3 * 10" }),
        new Part.CustomToolCallPart({ callId: "call_c2", name: "strict_echo", input: "hi" }),
        new Part.CustomToolCallPart({ callId: "call_c3", name: "strict_echo", input: "" }),
        new Part.ApplyPatchCallPart({
          callId: "call_p1",
          operation: { type: "create_file", path: "notes.md", diff: "+# Notes\n+- milk\n" }
        }),
        new Part.ShellCallPart({ callId: "call_s1", commands: ["cat notes.md", "exit 2"], maxOutputLength: 4096 }),
        new Part.LocalShellCallPart({ callId: "call_l1", command: ["printf", "%s", "ok"] })
      ]).pipe(Effect.provide(agentLive(root)))
      expect(json(results)).toStrictEqual([
        { type: "tool_result", callId: "call_c1", name: "evaluate", output: "570", isError: false, kind: "custom" },
        { type: "tool_result", callId: "call_c2", name: "strict_echo", output: "{\"echoed\":\"hi\"}", isError: false, kind: "custom" },
        {
          type: "tool_result",
          callId: "call_c3",
          name: "strict_echo",
          output: "{\"error\":{\"input\":\"\",\"_tag\":\"Unreadable\"}}",
          isError: true,
          kind: "custom"
        },
        { type: "apply_patch_call_output", callId: "call_p1", status: "completed", output: "created notes.md" },
        {
          type: "shell_call_output",
          callId: "call_s1",
          output: [
            { stdout: "# Notes\n- milk\n", stderr: "", outcome: { type: "exit", exitCode: 0 } },
            { stdout: "", stderr: "", outcome: { type: "exit", exitCode: 2 } }
          ],
          maxOutputLength: 4096
        },
        { type: "local_shell_call_output", callId: "call_l1", output: "{\"stdout\":\"ok\",\"stderr\":\"\",\"exit_code\":0}" }
      ])
    }))

  it.effect("runs built-in calls one after the other, in output order", () =>
    Effect.gen(function*() {
      const root = workspace()
      const results = yield* ToolExecutor.execute(Agent, [
        new Part.ApplyPatchCallPart({ callId: "p1", operation: { type: "create_file", path: "a.txt", diff: "+one\n" } }),
        new Part.ApplyPatchCallPart({ callId: "p2", operation: { type: "update_file", path: "a.txt", diff: "@@\n-one\n+two\n" } }),
        new Part.ShellCallPart({ callId: "s1", commands: ["cat a.txt"] }),
        new Part.ApplyPatchCallPart({ callId: "p3", operation: { type: "delete_file", path: "a.txt" } })
      ]).pipe(Effect.provide(agentLive(root)))
      expect(results.map((r) => r.type === "shell_call_output" ? r.output[0]!.stdout : r.type === "apply_patch_call_output" ? r.output : ""))
        .toStrictEqual(["created a.txt", "updated a.txt", "two\n", "deleted a.txt"])
    }))

  it.effect("a freeform apply_patch declared alone (as Codex declares it) runs alone too: create then read_file in one turn reads the file", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "tools-order-"))
      const ReadFile = Tool.make("read_file", { description: "Reads a file.", parameters: { path: Schema.String }, success: Schema.String, failure: Schema.String })
      const Patch = Tool.custom("apply_patch", { description: "Codex apply_patch", failure: Schema.String })
      const toolkit = Toolkit.make(Patch, ReadFile)
      const layer = toolkit.toLayer({
        apply_patch: (input) => Effect.mapError(ApplyPatch.applyPatchText(root, input), (error) => error.message),
        read_file: ({ path }) => Effect.try({ try: () => readFileSync(join(root, path), "utf8"), catch: (error) => String(error) })
      })
      const results = yield* ToolExecutor.execute(toolkit, [
        new Part.CustomToolCallPart({ callId: "p", name: "apply_patch", input: "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch" }),
        new Part.ToolCallPart({ callId: "r", name: "read_file", arguments: "{\"path\":\"a.txt\"}" })
      ]).pipe(Effect.provide(layer))
      assert.deepStrictEqual(results.map((result) => result.output), ["created a.txt", "\"hello\\n\""])
    }))

  it.effect("calls run in the model's order: a built-in call alone, after the calls before it, before those after it (as Codex)", () =>
    Effect.gen(function*() {
      // the builder's case: apply_patch creates src/a.txt, then read_file reads it, in one turn (it gave ENOENT)
      const root = workspace()
      const ReadFile = Tool.make("read_file", { description: "Reads a file.", parameters: { path: Schema.String }, success: Schema.String, failure: Schema.String })
      const log: Array<string> = []
      const Step = Tool.make("step", { description: "Logs a step.", parameters: { n: Schema.Number }, success: Schema.Number })
      const Reader = Toolkit.make(Tool.applyPatch, Tool.shell, ReadFile, Step)
      const live = Reader.toLayer({
        apply_patch: (call) => Effect.zipRight(Effect.sync(() => log.push(`patch ${call.callId} start`)), ApplyPatch.handler({ root })(call)).pipe(Effect.tap(() => log.push(`patch ${call.callId} end`))),
        shell: Shell.handler({ cwd: root }),
        read_file: ({ path }) => Effect.try({ try: () => readFileSync(join(root, path), "utf8"), catch: (error) => String(error) }),
        step: ({ n }) =>
          Effect.sync(() => log.push(`step ${n} start`)).pipe(
            Effect.zipRight(Effect.yieldNow()),
            Effect.zipRight(Effect.sync(() => log.push(`step ${n} end`))),
            Effect.as(n)
          )
      })
      const results = yield* ToolExecutor.execute(Reader, [
        new Part.ToolCallPart({ callId: "f1", name: "step", arguments: "{\"n\":1}" }),
        new Part.ToolCallPart({ callId: "f2", name: "step", arguments: "{\"n\":2}" }),
        new Part.ApplyPatchCallPart({ callId: "p1", operation: { type: "create_file", path: "src/a.txt", diff: "+hello\n" } }),
        new Part.ToolCallPart({ callId: "r1", name: "read_file", arguments: "{\"path\":\"src/a.txt\"}" }),
        new Part.ShellCallPart({ callId: "s1", commands: ["echo more >> src/a.txt"] }),
        new Part.ToolCallPart({ callId: "r2", name: "read_file", arguments: "{\"path\":\"src/a.txt\"}" })
      ]).pipe(Effect.provide(live))
      expect(results.map((result) => result.type === "tool_result" ? result.output : result.type)).toStrictEqual([
        "1",
        "2",
        "apply_patch_call_output",
        "\"hello\\n\"",
        "shell_call_output",
        "\"hello\\nmore\\n\""
      ])
      // the two function calls before the patch ran together, the patch after both
      expect(log).toStrictEqual(["step 1 start", "step 2 start", "step 1 end", "step 2 end", "patch p1 start", "patch p1 end"])
    }))

  it.effect("an unknown tool's answer lists the tools by the names the model calls them, not the handler keys", () =>
    Effect.gen(function*() {
      // Codex's freeform apply_patch beside the built-in: the built-in's handler key is built-in:apply_patch
      const Both = Toolkit.make(Tool.applyPatch, Tool.custom("apply_patch", { description: "Codex apply_patch" }), Tool.shell)
      const live = Both.toLayer({
        "built-in:apply_patch": () => Effect.die("not called"),
        apply_patch: () => Effect.die("not called"),
        shell: () => Effect.die("not called")
      })
      const [result] = yield* ToolExecutor.execute(Both, [new Part.ToolCallPart({ callId: "f1", name: "nosuchtool", arguments: "{}" })]).pipe(
        Effect.provide(live)
      )
      assert.strictEqual(result!.output, JSON.stringify({ error: "unknown tool \"nosuchtool\"; available tools: apply_patch, shell" }))
    }))

  it.effect("a call of a tool the toolkit lacks gets an error answer in the call's own type", () =>
    Effect.gen(function*() {
      const Only = Toolkit.make(Evaluate)
      const results = yield* ToolExecutor.execute(Only, [
        new Part.ShellCallPart({ callId: "s1", commands: ["rm -rf /"] }),
        new Part.ApplyPatchCallPart({ callId: "p1", operation: { type: "delete_file", path: "x" } }),
        new Part.ToolCallPart({ callId: "f1", name: "evaluate", arguments: "{}" })
      ]).pipe(Effect.provide(Only.toLayer({ evaluate: () => Effect.succeed("0") })))
      expect(json(results)).toStrictEqual([
        {
          type: "shell_call_output",
          callId: "s1",
          output: [{ stdout: "", stderr: "unknown tool \"shell\"; available tools: evaluate", outcome: { type: "exit", exitCode: 1 } }]
        },
        { type: "apply_patch_call_output", callId: "p1", status: "failed", output: "unknown tool \"apply_patch\"; available tools: evaluate" },
        {
          type: "tool_result",
          callId: "f1",
          name: "evaluate",
          output: "{\"error\":\"tool \\\"evaluate\\\" is a custom tool, called as a function tool\"}",
          isError: true
        }
      ])
    }))

  it.effect("a patch the file system refuses is a failed answer the model reads, not a defect", () =>
    Effect.gen(function*() {
      const root = workspace()
      // a directory where the patch expects a file (refused before it is opened), and a file where the
      // patch expects a directory: creating the directory fails, whoever runs the test
      mkdirSync(join(root, "src"))
      writeFileSync(join(root, "file.txt"), "x\n")
      const results = yield* ToolExecutor.execute(Agent, [
        new Part.ApplyPatchCallPart({ callId: "p1", operation: { type: "update_file", path: "missing.txt", diff: "@@\n-a\n+b\n" } }),
        new Part.ApplyPatchCallPart({ callId: "p2", operation: { type: "update_file", path: "src", diff: "@@\n-a\n+b\n" } }),
        new Part.ApplyPatchCallPart({ callId: "p3", operation: { type: "create_file", path: "file.txt/new.txt", diff: "+a\n" } })
      ]).pipe(Effect.provide(agentLive(root)))
      const [missing, directory, underFile] = results
      expect(json(missing)).toStrictEqual({
        type: "apply_patch_call_output",
        callId: "p1",
        status: "failed",
        output: "missing.txt: the file to update does not exist"
      })
      assert.strictEqual(directory!.status, "failed")
      assert.strictEqual(directory!.output, "src: the path names a directory, not a regular file: apply_patch changes regular files only")
      assert.strictEqual(underFile!.status, "failed")
      assert.match(underFile!.output!, /^file\.txt\/new\.txt: cannot write the file: (EEXIST|ENOTDIR) \(/)
    }))

  it.effect("a handler past the timeout, and an answer past maxOutputLength, in each item type", () =>
    Effect.gen(function*() {
      const Slow = Toolkit.make(Evaluate, Tool.shell, Tool.applyPatch, Tool.localShell)
      const layer = Slow.toLayer({
        evaluate: (input) => input === "long" ? Effect.succeed("x".repeat(1000) + "END") : Effect.never,
        shell: () => Effect.never,
        apply_patch: () => Effect.never,
        local_shell: () => Effect.never
      })
      const fiber = yield* ToolExecutor.execute(Slow, [
        new Part.CustomToolCallPart({ callId: "c1", name: "evaluate", input: "1" }),
        new Part.CustomToolCallPart({ callId: "c2", name: "evaluate", input: "long" }),
        new Part.ShellCallPart({ callId: "s1", commands: ["sleep 100"] }),
        new Part.ApplyPatchCallPart({ callId: "p1", operation: { type: "delete_file", path: "a" } }),
        new Part.LocalShellCallPart({ callId: "l1", command: ["sleep", "100"] })
      ], { timeout: "30 seconds", maxOutputLength: 100 }).pipe(Effect.provide(layer), Effect.fork)
      // in the model's order: the custom calls together, then the built-ins one after the other: four
      // timeouts in a row
      yield* TestClock.adjust("30 seconds")
      yield* TestClock.adjust("30 seconds")
      yield* TestClock.adjust("30 seconds")
      yield* TestClock.adjust("30 seconds")
      const [custom, long, shell, patch, local] = yield* Fiber.join(fiber)
      expect(json(custom)).toMatchObject({ isError: true, output: "{\"error\":\"tool \\\"evaluate\\\" timed out after 30s\"}" })
      assert.strictEqual((long as Part.ToolResultPart).output, `${"x".repeat(36)}\n[… 930 characters cut …]\n${"x".repeat(34)}END`)
      expect(json(shell)).toMatchObject({
        output: [{ stdout: "", stderr: "tool \"shell\" timed out after 30s", outcome: { type: "timeout" } }]
      })
      expect(json(patch)).toMatchObject({ status: "failed", output: "tool \"apply_patch\" timed out after 30s" })
      expect(json(local)).toMatchObject({ output: "{\"error\":\"tool \\\"local_shell\\\" timed out after 30s\"}" })
    }))

  it.effect("a shell answer over maxOutputLength: every command keeps the head and tail of each stream, each cut marked", () =>
    Effect.gen(function*() {
      const root = workspace()
      // the builder's case, with the defaults (50 000 per answer, 16 384 per stream): commands 3 and 4 came
      // back "" and "" with exit code 0 and no marker
      const both = "head -c 40000 /dev/zero | tr '\\0' a; echo; head -c 40000 /dev/zero | tr '\\0' b >&2"
      const [four] = yield* ToolExecutor.execute(Agent, [
        new Part.ShellCallPart({ callId: "call_s1", commands: [both, both, both, both] })
      ]).pipe(Effect.provide(agentLive(root)))
      const outputs = (four as Part.ShellCallOutputPart).output
      expect(outputs.map((out) => [out.stdout.length, out.stderr.length, out.outcome])).toStrictEqual(
        Array.from({ length: 4 }, () => [6250, 6250, { type: "exit", exitCode: 0 }])
      )
      // what the model reads is cut from the command's whole output: the characters kept and the count in the
      // marker add up to it (40 000 and a newline on stdout, 40 000 on stderr), though the handler cut it first
      const whole = (text: string) => {
        const [marker, count] = text.match(/\n\[… (\d+) characters cut …\]\n/)!
        return text.length - marker.length + Number(count)
      }
      for (const out of outputs) {
        // 8 streams of 16 384 (each already cut by the handler): 6 250 each, head and tail around a marker
        assert.match(out.stdout, /^a{3000,}\n\[… \d+ characters cut …\]\na{3000,}\n$/)
        assert.match(out.stderr, /^b{3000,}\n\[… \d+ characters cut …\]\nb{3000,}$/)
        expect([whole(out.stdout), whole(out.stderr)]).toStrictEqual([40_001, 40_000])
      }
      // `npm install` then `npm test`: the failing test's report, short, is kept whole after long output
      const [failing] = yield* ToolExecutor.execute(Agent, [
        new Part.ShellCallPart({ callId: "call_s2", commands: [both, both, both, both, "echo 'FAIL test/a.test.ts' >&2; exit 1"] })
      ]).pipe(Effect.provide(agentLive(root)))
      const last = (failing as Part.ShellCallOutputPart).output[4]!
      expect(last).toStrictEqual({ stdout: "", stderr: "FAIL test/a.test.ts\n", outcome: { type: "exit", exitCode: 1 } })
      const total = (failing as Part.ShellCallOutputPart).output.reduce((sum, out) => sum + out.stdout.length + out.stderr.length, 0)
      assert.strictEqual(total, ToolExecutor.DEFAULT_MAX_OUTPUT_LENGTH)
      // one command at a budget of 20 000: a share of 10 000 a stream, more than the handler's 16 384 keeps
      // on either side of its marker (8 178) but less than all of it: cut from the handler's head and tail,
      // still counting the whole output (it counted the handler's 16 384 alone)
      const [one] = yield* ToolExecutor.execute(Agent, [new Part.ShellCallPart({ callId: "call_s3", commands: [both] })], {
        maxOutputLength: 20_000
      }).pipe(Effect.provide(agentLive(root)))
      const [alone] = (one as Part.ShellCallOutputPart).output
      expect([alone!.stdout.length, alone!.stderr.length]).toStrictEqual([10_000, 10_000])
      expect([whole(alone!.stdout), whole(alone!.stderr)]).toStrictEqual([40_001, 40_000])
    }))

  it.effect("a shell stream cut twice at bounds too small for the marker line: the short marker counts the command's whole output", () =>
    Effect.gen(function*() {
      const root = workspace()
      // `seq 1 100` writes 292 characters; the handler's bound of 16 keeps "1\n2\n3\n[…286 cut]"
      const run = (handlerBound: number, maxOutputLength: number, commands: Array<string>) =>
        ToolExecutor.execute(Agent, [new Part.ShellCallPart({ callId: "call_t", commands })], { maxOutputLength }).pipe(
          Effect.provide(agentLive(root, { maxOutputLength: handlerBound })),
          Effect.map(([answer]) => (answer as Part.ShellCallOutputPart).output)
        )
      const [once] = yield* run(16, 100, ["seq 1 100"])
      assert.strictEqual(once!.stdout, "1\n2\n3\n[…286 cut]")
      // cut again to 12: 290 of the 292 left out (the handler's answer alone would say 13 or 14)
      const [twice] = yield* run(16, 12, ["seq 1 100"])
      assert.strictEqual(twice!.stdout, "1\n[…290 cut]")
      // the handler's full line, then a share too small for it: the short marker counts the whole output too
      const [full] = yield* run(100, 12, ["seq 1 100"])
      assert.strictEqual(full!.stdout, "1\n[…290 cut]")
      // a budget smaller than the number of streams it cuts: the first ones get `…`, the last has no room
      const [first, second] = yield* run(16384, 3, ["seq 1 100; seq 1 100 >&2", "seq 1 100; seq 1 100 >&2"])
      expect([first!.stdout, first!.stderr, second!.stdout, second!.stderr]).toStrictEqual(["…", "…", "…", ""])
    }))

  it.effect("a shell answer's budget: streams shorter than an equal share whole, the others cut to the same share", () =>
    Effect.gen(function*() {
      const Fixed = Toolkit.make(Tool.shell)
      const out = (stdout: string, stderr: string): Part.ShellCommandOutput => ({ stdout, stderr, outcome: { type: "exit", exitCode: 0 } })
      const layer = Fixed.toLayer({
        shell: () => Effect.succeed([out("a".repeat(100), "b".repeat(5)), out("", "c".repeat(300))])
      })
      const [answer] = yield* ToolExecutor.execute(Fixed, [new Part.ShellCallPart({ callId: "s", commands: ["x", "y"] })], {
        maxOutputLength: 200
      }).pipe(Effect.provide(layer))
      // 200 for 100 + 5 + 0 + 300: the 5 and the 0 whole, 195 left for two: 98 (the first gets the odd one), 97
      expect((answer as Part.ShellCallOutputPart).output).toStrictEqual([
        out(ToolExecutor.truncate("a".repeat(100), 98), "b".repeat(5)),
        out("", ToolExecutor.truncate("c".repeat(300), 97))
      ])
      // (a cut may keep a character less than its room: the marker is sized for the whole length)
      expect((answer as Part.ShellCallOutputPart).output.map((o) => [o.stdout.length, o.stderr.length])).toStrictEqual([[97, 5], [0, 97]])
    }))

  it("truncate keeps head and tail around a marker within the bound, never splitting a surrogate pair", () => {
    assert.strictEqual(ToolExecutor.truncate("short", 10), "short")
    const cut = ToolExecutor.truncate("0123456789".repeat(10), 40)
    assert.strictEqual(cut, "0123456\n[… 86 characters cut …]\n3456789")
    assert.strictEqual(cut.length, 39)
    // "😀" is two UTF-16 code units: the cut moves so that neither half is left alone, at the head and the tail
    assert.strictEqual(ToolExecutor.truncate("a😀" + "b".repeat(30), 29), "a\n[… 30 characters cut …]\nbb")
    assert.strictEqual(ToolExecutor.truncate("c".repeat(28) + "😀", 27), "c\n[… 29 characters cut …]\n")
    // a bound too small for the marker line: the head, then a shorter marker, always within the bound
    assert.strictEqual(ToolExecutor.truncate("0123456789".repeat(10), 12), "01[…98 cut]")
    assert.strictEqual(ToolExecutor.truncate("0123456789".repeat(10), 10), "[…100 cut]")
    assert.strictEqual(ToolExecutor.truncate("abcdefghij", 4), "abc…")
    assert.strictEqual(ToolExecutor.truncate("abcdefghij", 1), "…")
    assert.strictEqual(ToolExecutor.truncate("a😀bc", 3), "a…")
    // a bound of 0: nothing at all
    assert.strictEqual(ToolExecutor.truncate("abcdefghij", 0), "")
  })

  it.prop(
    "a text cut at any bound of 1 or more says so within the bound; one that fits is unchanged",
    [FastCheck.string({ unit: "binary", maxLength: 120 }), FastCheck.integer({ min: 1, max: 130 })],
    ([text, max]) => {
      const cut = ToolExecutor.truncate(text, max)
      if (text.length <= max) return cut === text
      return cut.length <= max && cut.includes("…")
    }
  )

  it.effect("shell output past the toolkit's bound: every cut stream says so, also when its share is under the marker line's length", () =>
    Effect.gen(function*() {
      const Only = Toolkit.make(Tool.shell)
      const outputs = (stdout: string, stderr: string) =>
        Only.toLayer({ shell: () => Effect.succeed([{ stdout, stderr, outcome: { type: "exit" as const, exitCode: 1 } }]) })
      const run = (stdout: string, stderr: string, maxOutputLength: number) =>
        ToolExecutor.execute(Only, [new Part.ShellCallPart({ callId: "s1", commands: ["make"] })], { maxOutputLength }).pipe(
          Effect.provide(outputs(stdout, stderr)),
          Effect.map(([answer]) => (answer as Part.ShellCallOutputPart).output[0]!)
        )
      // the error fits its share and is kept; the output is cut to the rest, with a marker that fits it
      expect(yield* run("0123456789", "FATAL", 10)).toMatchObject({ stdout: "0123…", stderr: "FATAL" })
      expect(yield* run("0".repeat(40), "FATAL", 40)).toMatchObject({
        stdout: "0".repeat(5) + Shell.truncationMarker(30) + "0".repeat(5),
        stderr: "FATAL"
      })
      expect(yield* run("x".repeat(50), "", 20)).toMatchObject({ stdout: "x".repeat(11) + "[…39 cut]", stderr: "" })
      expect(yield* run("ok", "E".repeat(30), 5)).toMatchObject({ stdout: "ok", stderr: "EE…" })
    }))

  it.effect("a command whose output holds marker-like text: the cut counts the output as it is, not as the text claims", () =>
    Effect.gen(function*() {
      const Only = Toolkit.make(Tool.shell)
      const run = (stdout: string, maxOutputLength: number) =>
        ToolExecutor.execute(Only, [new Part.ShellCallPart({ callId: "s1", commands: ["cat log.txt"] })], { maxOutputLength }).pipe(
          Effect.provide(Only.toLayer({ shell: () => Effect.succeed([{ stdout, stderr: "", outcome: { type: "exit" as const, exitCode: 0 } }]) })),
          Effect.map(([answer]) => (answer as Part.ShellCallOutputPart).output[0]!.stdout)
        )
      // a log that quotes an earlier cut, whole (224 characters): cut to 60, 190 of them left out (the line
      // read as the handler's marker made it 171: the quoted 5 in place of the line's own 24 characters)
      const quoted = "A".repeat(100) + "\n[… 5 characters cut …]\n" + "B".repeat(100)
      assert.strictEqual(yield* run(quoted, 60), ToolExecutor.truncate(quoted, 60))
      assert.strictEqual(yield* run(quoted, 60), "A".repeat(17) + "\n[… 190 characters cut …]\n" + "B".repeat(17))
      // a count no handler can have written (more than any string holds) is text too: not "1e+23 characters cut"
      for (const count of ["99999999999999999999999", "1e+23", "007"]) {
        const claimed = "A".repeat(100) + `\n[… ${count} characters cut …]\n` + "B".repeat(100)
        assert.strictEqual(yield* run(claimed, 60), ToolExecutor.truncate(claimed, 60))
      }
      // a short marker at the end of an output the handler did not cut: 13 of the 18 characters left out, not 10
      assert.strictEqual(yield* run("0123456789[…5 cut]", 14), "01234[…13 cut]")
      assert.strictEqual(yield* run("ab[…5 cut]", 8), ToolExecutor.truncate("ab[…5 cut]", 8))
      // the handler's own marker after a quoted one in its head: still read as the handler's, its count kept
      const [head, tail] = ["\n[… 5 characters cut …]\n" + "a".repeat(500), "b".repeat(500)]
      const cutByHandler = Shell.keepHeadAndTail(head, tail, 10_000, 200)
      assert.strictEqual(yield* run(cutByHandler, 60), Shell.keepHeadAndTail(head, tail, 10_000, 60))
      assert.include(yield* run(cutByHandler, 60), "\n[… 9968 characters cut …]\n")
    }))

  it.effect("a local_shell answer over the budget stays JSON: its values cut, head and tail around their markers", () =>
    Effect.gen(function*() {
      const root = workspace()
      const local = (script: string, options?: { readonly maxOutputLength: number }) =>
        ToolExecutor.execute(Agent, [new Part.LocalShellCallPart({ callId: "call_l", command: ["/bin/sh", "-c", script] })], options).pipe(
          Effect.provide(agentLive(root)),
          Effect.map(([answer]) => (answer as Part.LocalShellCallOutputPart).output)
        )
      const both = "head -c 40000 /dev/zero | tr '\\0' a; head -c 40000 /dev/zero | tr '\\0' b >&2"
      // a bound the application set under the two streams the handler keeps (16 384 each): it was cut as text,
      // its closing quotes and brace gone
      const cut = yield* local(both, { maxOutputLength: 20_000 })
      assert.isAtMost(cut.length, 20_000)
      const answer = JSON.parse(cut) as { stdout: string; stderr: string; exit_code: number }
      assert.strictEqual(answer.exit_code, 0)
      assert.match(answer.stdout, /^a{4000,}\n\[… \d+ characters cut …\]\na{4000,}$/)
      assert.match(answer.stderr, /^b{4000,}\n\[… \d+ characters cut …\]\nb{4000,}$/)
      // each marker counts what is left out of the command's whole output (40 000 characters a stream)
      const whole = (text: string) => {
        const [marker, count] = text.match(/\n\[… (\d+) characters cut …\]\n/)!
        return text.length - marker.length + Number(count)
      }
      expect([whole(answer.stdout), whole(answer.stderr)]).toStrictEqual([40_000, 40_000])
      // with the defaults too: quotes are two characters each in JSON, so two streams of 16 384 of them
      // (65 000 characters of JSON) were cut as text at 50 000
      const quotes = yield* local("head -c 20000 /dev/zero | tr '\\0' '\"'; head -c 20000 /dev/zero | tr '\\0' '\"' >&2")
      assert.isAtMost(quotes.length, ToolExecutor.DEFAULT_MAX_OUTPUT_LENGTH)
      const quoted = JSON.parse(quotes) as { stdout: string; stderr: string; exit_code: number }
      assert.match(quoted.stdout, /^"{6000,}\n\[… \d+ characters cut …\]\n"{6000,}$/)
      assert.strictEqual(quoted.exit_code, 0)
      // a bound under the fixed parts (39 characters here): cut as text, within the bound
      const under = yield* local(both, { maxOutputLength: 10 })
      assert.isAtMost(under.length, 10)
      assert.match(under, /^\{"std/)
      // the fixed parts and one character each: the values say they were cut
      assert.strictEqual(yield* local(both, { maxOutputLength: 41 }), "{\"stdout\":\"…\",\"stderr\":\"…\",\"exit_code\":0}")
    }))

  it.prop(
    "a local_shell answer of any output, cut at any bound, is JSON with its keys and exit code; within the bound when the fixed parts fit",
    [
      FastCheck.string({ unit: "binary", maxLength: 150 }),
      FastCheck.string({ unit: "binary", maxLength: 150 }),
      FastCheck.oneof(FastCheck.integer({ min: 0, max: 255 }), FastCheck.constant(null)),
      FastCheck.integer({ min: 0, max: 400 })
    ],
    ([stdout, stderr, exitCode, max]) => {
      const Only = Toolkit.make(Tool.localShell)
      const written = JSON.stringify({ stdout, stderr, exit_code: exitCode, ...(exitCode === null ? { timed_out: true } : {}) })
      const [answer] = Effect.runSync(
        ToolExecutor.execute(Only, [new Part.LocalShellCallPart({ callId: "l", command: ["x"] })], { maxOutputLength: max }).pipe(
          Effect.provide(Only.toLayer({ local_shell: () => Effect.succeed(written) }))
        )
      )
      const output = (answer as Part.LocalShellCallOutputPart).output
      if (written.length <= max) return output === written
      const fixed = JSON.stringify({ ...JSON.parse(written), stdout: "", stderr: "" }).length
      if (fixed > max) return output === ToolExecutor.truncate(written, max)
      const parsed = JSON.parse(output) as Record<string, unknown>
      return Object.keys(parsed).join() === Object.keys(JSON.parse(written)).join() && parsed.exit_code === exitCode &&
        output.length <= max
    }
  )

  it.effect("a local_shell answer of an application's own handler, JSON or not, is cut as text within the bound", () =>
    Effect.gen(function*() {
      const Only = Toolkit.make(Tool.localShell)
      const cut = (written: string, max: number) =>
        ToolExecutor.execute(Only, [new Part.LocalShellCallPart({ callId: "l", command: ["x"] })], { maxOutputLength: max }).pipe(
          Effect.provide(Only.toLayer({ local_shell: () => Effect.succeed(written) })),
          Effect.map(([answer]) => (answer as Part.LocalShellCallOutputPart).output)
        )
      // the breaker's cases (ls-json.mjs): JSON that is not Shell.localHandler's answer was rewritten, its numbers
      // and keys never cut (108 891 characters left at a bound of 1 000), its strings emptied (60 001 characters
      // of "" at 1 000), a long number turned into null, a duplicate key's value dropped
      const cases: ReadonlyArray<readonly [string, number]> = [
        [JSON.stringify(Array.from({ length: 20_000 }, (_, i) => i)), 1000],
        [JSON.stringify(Array.from({ length: 20_000 }, () => "ab")), 1000],
        ["1" + "0".repeat(2000), 100],
        [JSON.stringify({ stdout: "x".repeat(3000), stderr: "", exit_code: 0 }, null, 2), 2000],
        ["{\"stdout\":\"" + "a".repeat(200) + "\",\"stdout\":\"b\",\"exit_code\":0}", 100],
        [JSON.stringify("y".repeat(500)), 100],
        [JSON.stringify({ stdout: "x".repeat(300), stderr: "", exit_code: 1.5 }), 100],
        [JSON.stringify({ stdout: "x".repeat(300), stderr: "", exit_code: 0, extra: 1 }), 100]
      ]
      for (const [written, max] of cases) {
        expect(yield* cut(written, max)).toStrictEqual(ToolExecutor.truncate(written, max))
      }
      // the handler's own answer at a bound its fixed parts fit stays JSON, cut inside its values
      const own = JSON.stringify({ stdout: "x".repeat(300), stderr: "y".repeat(300), exit_code: 0 })
      const kept = yield* cut(own, 100)
      assert.isAtMost(kept.length, 100)
      const parsed = JSON.parse(kept) as { stdout: string; stderr: string; exit_code: number }
      expect(Object.keys(parsed)).toStrictEqual(["stdout", "stderr", "exit_code"])
      assert.match(parsed.stdout, /^x+\n?\[…/)
      assert.strictEqual(parsed.exit_code, 0)
    }))

  it.prop(
    "a local_shell answer of any JSON an application's handler writes, at any bound: within the bound",
    [FastCheck.json({ maxDepth: 3 }), FastCheck.integer({ min: 0, max: 300 })],
    ([written, max]) => {
      const Only = Toolkit.make(Tool.localShell)
      const [answer] = Effect.runSync(
        ToolExecutor.execute(Only, [new Part.LocalShellCallPart({ callId: "l", command: ["x"] })], { maxOutputLength: max }).pipe(
          Effect.provide(Only.toLayer({ local_shell: () => Effect.succeed(written) })),
          Effect.provide(Logger.remove(Logger.defaultLogger))
        )
      )
      const output = (answer as Part.LocalShellCallOutputPart).output
      return written.length <= max ? output === written : output === ToolExecutor.truncate(written, max)
    }
  )

  it.prop(
    "a shell stream with any marker-like text, cut at any budget: within the budget, never a failure",
    [
      FastCheck.array(
        FastCheck.oneof(
          FastCheck.string({ maxLength: 40 }),
          FastCheck.constantFrom("\n[… 5 characters cut …]\n", "\n[… 1e+23 characters cut …]\n", "[…5 cut]", "[…0 cut]", "…", "\n[… 99999999999999999999 characters cut …]\n")
        ),
        { maxLength: 8 }
      ),
      FastCheck.integer({ min: 0, max: 120 })
    ],
    ([pieces, max]) => {
      const Only = Toolkit.make(Tool.shell)
      const stdout = pieces.join("")
      const [answer] = Effect.runSync(
        ToolExecutor.execute(Only, [new Part.ShellCallPart({ callId: "s1", commands: ["x"] })], { maxOutputLength: max }).pipe(
          Effect.provide(Only.toLayer({ shell: () => Effect.succeed([{ stdout, stderr: "", outcome: { type: "exit" as const, exitCode: 0 } }]) }))
        )
      )
      const kept = (answer as Part.ShellCallOutputPart).output[0]!.stdout
      return stdout.length <= max ? kept === stdout : kept.length <= max
    }
  )
})

describe("ToolLoop with a custom tool and client-run built-in tools", () => {
  it.effect("runs a custom call, a patch and a shell command, and replays each answer in its item type", () =>
    Effect.gen(function*() {
      const root = workspace()
      const fake = fakeModel({
        responses: [
          answer("resp_1", [
            new Part.CustomToolCallPart({
              callId: "call_eval",
              name: "evaluate",
              input: "(12 + 7) * 3 * 10",
              attributes: { itemId: "ctc_1", status: "completed" }
            })
          ]),
          answer("resp_2", [
            new Part.ApplyPatchCallPart({
              callId: "call_patch",
              operation: { type: "create_file", path: "answer.md", diff: "+570\n" },
              attributes: { itemId: "apc_1", status: "completed" }
            }),
            new Part.ShellCallPart({
              callId: "call_shell",
              commands: ["cat answer.md"],
              timeoutMs: 5000,
              attributes: { itemId: "sh_1", status: "completed" }
            })
          ]),
          answer("resp_3", [new Part.TextPart({ text: "The answer, 570, is in answer.md." })])
        ]
      })
      const result = yield* ToolLoop.generate(Prompt.user("Compute (12 + 7) * 3 * 10 and save it."), { toolkit: Agent }).pipe(
        Effect.provide(agentLive(root)),
        Effect.provide(fake.layer)
      )
      assert.strictEqual(result.text, "The answer, 570, is in answer.md.")
      assert.strictEqual(readFileSync(join(root, "answer.md"), "utf8"), "570\n")
      // every call offers the custom and client tools
      expect(fake.calls[0]!.options?.tools).toStrictEqual(Agent.definitions)
      const step3 = fake.calls[2]!.prompt.messages
      expect(step3.map((m) => m.role)).toStrictEqual(["user", "assistant", "tool", "assistant", "tool"])
      expect(json((step3[2] as Message.ToolMessage).results)).toStrictEqual([
        { type: "tool_result", callId: "call_eval", name: "evaluate", output: "570", isError: false, kind: "custom" }
      ])
      expect(json((step3[4] as Message.ToolMessage).results)).toStrictEqual([
        { type: "apply_patch_call_output", callId: "call_patch", status: "completed", output: "created answer.md" },
        {
          type: "shell_call_output",
          callId: "call_shell",
          output: [{ stdout: "570\n", stderr: "", outcome: { type: "exit", exitCode: 0 } }]
        }
      ])
    }))

  it.effect("by default a hanging handler becomes an error answer after 5 minutes, and a long answer is cut", () =>
    Effect.gen(function*() {
      const fake = fakeModel({
        responses: [
          answer("resp_1", [
            new Part.CustomToolCallPart({ callId: "call_hang", name: "evaluate", input: "1" }),
            new Part.CustomToolCallPart({ callId: "call_long", name: "evaluate", input: "2" })
          ]),
          answer("resp_2", [new Part.TextPart({ text: "done" })])
        ]
      })
      const Only = Toolkit.make(Evaluate)
      const fiber = yield* ToolLoop.generate(Prompt.user("x"), { toolkit: Only }).pipe(
        Effect.provide(Only.toLayer({ evaluate: (input) => input === "1" ? Effect.never : Effect.succeed("y".repeat(60_000)) })),
        Effect.provide(fake.layer),
        Effect.fork
      )
      yield* TestClock.adjust(ToolExecutor.DEFAULT_TIMEOUT)
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(result.text, "done")
      const [hang, long] = (fake.calls[1]!.prompt.messages.at(-1) as Message.ToolMessage).toolResults
      assert.strictEqual(hang!.output, "{\"error\":\"tool \\\"evaluate\\\" timed out after 5m\"}")
      assert.strictEqual(long!.output.length, ToolExecutor.DEFAULT_MAX_OUTPUT_LENGTH)
      assert.include(long!.output, `\n[… ${10_000 + "\n[… 10000 characters cut …]\n".length} characters cut …]\n`)
    }))

  it.effect("a response with a call the loop cannot answer (an MCP approval request) ends the loop, nothing run", () =>
    Effect.gen(function*() {
      const root = workspace()
      const fake = fakeModel({
        responses: [
          answer("resp_1", [
            new Part.McpApprovalRequestPart({ approvalRequestId: "mcpr_1", serverLabel: "deepwiki", name: "ask", arguments: "{}" }),
            new Part.ShellCallPart({ callId: "call_shell", commands: ["touch ran.txt"] })
          ])
        ]
      })
      const result = yield* ToolLoop.generate(Prompt.user("x"), { toolkit: Agent }).pipe(
        Effect.provide(agentLive(root)),
        Effect.provide(fake.layer)
      )
      assert.strictEqual(fake.calls.length, 1)
      expect(result.response.message.clientCalls.map((c) => c.type)).toStrictEqual(["mcp_approval_request", "shell_call"])
      expect(result.transcript.messages.map((m) => m.role)).toStrictEqual(["user", "assistant"])
      assert.throws(() => readFileSync(join(root, "ran.txt")))
    }))
})
