/**
 * The arguments of the functions the client-run built-ins are offered as: the recorded actions and operations
 * decode as the API wrote them, each malformed field is named, and a value decodes exactly when no problem is
 * named (the gateway writes the built-in's item exactly when the tool loop would run it).
 */
import { BuiltInArguments } from "@effect-responses/core"
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import { readFileSync } from "node:fs"

/** The completed items of a recorded stream of the `vai-openai-*.chunks.txt` form (one event's JSON a line). */
const recordedItems = (name: string): ReadonlyArray<{ readonly [key: string]: unknown }> =>
  readFileSync(new URL(`../../../fixtures/responses-sse/${name}`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { type: string; item?: { [key: string]: unknown } })
    .flatMap((event) => event.type === "response.output_item.done" && event.item !== undefined ? [event.item] : [])

describe("BuiltInArguments", () => {
  it("the recorded shell action and apply_patch operation decode as the API wrote them", () => {
    const shell = recordedItems("vai-openai-shell-call.chunks.txt").filter((item) => item.type === "shell_call")
    const patch = recordedItems("vai-openai-apply-patch-call.chunks.txt").filter((item) => item.type === "apply_patch_call")
    assert.isAbove(shell.length, 0)
    assert.isAbove(patch.length, 0)
    for (const { action } of shell) {
      assert.deepStrictEqual(Option.getOrThrow(BuiltInArguments.decodeShellAction(action)), action)
      assert.isUndefined(BuiltInArguments.problem("shell", action))
    }
    for (const { operation } of patch) {
      assert.deepStrictEqual(Option.getOrThrow(BuiltInArguments.decodeApplyPatchOperation(operation)), operation)
      assert.isUndefined(BuiltInArguments.problem("apply_patch", operation))
    }
  })

  it("fields not given decode as the API writes them: null, {} for env; a diff beside delete_file is dropped", () => {
    assert.deepStrictEqual(
      Option.getOrThrow(BuiltInArguments.decodeShellAction({ commands: ["ls"] })),
      { commands: ["ls"], timeout_ms: null, max_output_length: null }
    )
    assert.deepStrictEqual(
      Option.getOrThrow(BuiltInArguments.decodeLocalShellExecAction({ command: ["ls"], env: null, user: null, extra: 1 })),
      { command: ["ls"], timeout_ms: null, working_directory: null, env: {}, user: null }
    )
    assert.deepStrictEqual(
      Option.getOrThrow(BuiltInArguments.decodeApplyPatchOperation({ type: "delete_file", path: "a.txt", diff: 5 })),
      { type: "delete_file", path: "a.txt" }
    )
  })

  it("the first wrong field is named, in the fields' order", () => {
    const cases: ReadonlyArray<readonly [BuiltInArguments.Name, unknown, string]> = [
      ["shell", { commands: "notalist" }, "commands: Expected ReadonlyArray<string>, actual \"notalist\""],
      ["shell", { commands: ["ls"], timeout_ms: -1 }, "timeout_ms: Expected a non-negative number, actual -1"],
      ["shell", { commands: ["ls"], timeout_ms: 1.5, max_output_length: -1 }, "timeout_ms: Expected an integer, actual 1.5"],
      ["shell", {}, "commands is missing"],
      ["apply_patch", {}, "type is missing"],
      ["apply_patch", { type: null, path: "a" }, "type: Expected string, actual null"],
      ["apply_patch", { type: "rename_file", path: "a" }, "type: Expected \"create_file\" | \"update_file\" | \"delete_file\", actual \"rename_file\""],
      ["apply_patch", { type: "create_file", diff: "+x\n" }, "path is missing"],
      ["apply_patch", { type: "update_file", path: "a" }, "diff is missing"],
      ["apply_patch", { type: "update_file", path: "a", diff: 5 }, "diff: Expected string, actual 5"],
      ["local_shell", { command: "ls" }, "command: Expected ReadonlyArray<string>, actual \"ls\""],
      ["local_shell", { command: ["ls"], env: { A: 1 } }, "env.A: Expected string, actual 1"],
      ["local_shell", { command: ["ls"], user: 0 }, "user: Expected string, actual 0"]
    ]
    for (const [name, args, expected] of cases) assert.strictEqual(BuiltInArguments.problem(name, args), expected, JSON.stringify(args))
    assert.match(BuiltInArguments.problem("local_shell", "ls")!, /^the arguments: Expected /)
  })

  it("arguments decode exactly when no problem is named, for each built-in", () => {
    const field = FastCheck.oneof(
      FastCheck.constant(undefined),
      FastCheck.constant(null),
      FastCheck.integer({ min: -3, max: 3 }),
      FastCheck.constantFrom(1.5, 1e20, "create_file", "update_file", "delete_file", "x"),
      FastCheck.array(FastCheck.oneof(FastCheck.string(), FastCheck.integer()), { maxLength: 2 }),
      FastCheck.dictionary(FastCheck.string({ maxLength: 2 }), FastCheck.oneof(FastCheck.string(), FastCheck.integer()), { maxKeys: 2 })
    )
    const names = ["commands", "command", "timeout_ms", "max_output_length", "working_directory", "env", "user", "type", "path", "diff"]
    const args = FastCheck.record(Object.fromEntries(names.map((name) => [name, field])), { requiredKeys: [] }).map((value) =>
      // JSON has no undefined: as a parsed function call's arguments
      JSON.parse(JSON.stringify(value)) as unknown
    )
    FastCheck.assert(FastCheck.property(args, (value) => {
      assert.strictEqual(Option.isSome(BuiltInArguments.decodeShellAction(value)), BuiltInArguments.problem("shell", value) === undefined)
      assert.strictEqual(
        Option.isSome(BuiltInArguments.decodeApplyPatchOperation(value)),
        BuiltInArguments.problem("apply_patch", value) === undefined
      )
      assert.strictEqual(
        Option.isSome(BuiltInArguments.decodeLocalShellExecAction(value)),
        BuiltInArguments.problem("local_shell", value) === undefined
      )
    }), { numRuns: 2000 })
  })
})
