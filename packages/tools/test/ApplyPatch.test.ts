/**
 * The reference apply_patch handler: the recorded `apply_patch_call` (vercel/ai, Apache-2.0) applied to a
 * temporary directory, V4A hunks, a hunk that does not apply, and paths that leave the root.
 */
import { Part } from "@effect-responses/core"
import { ApplyPatch, Shell, Tool, Toolkit, ToolExecutor } from "@effect-responses/tools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import { execFileSync } from "node:child_process"
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import * as Fs from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const fixture = fileURLToPath(new URL("../../../fixtures/responses-sse/vai-openai-apply-patch-call.chunks.txt", import.meta.url))

const recordedCall = (): Part.ApplyPatchCallPart => {
  const done = readFileSync(fixture, "utf8").split("\n").filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { readonly type: string; readonly item?: { readonly type: string; readonly call_id: string; readonly operation: Part.ApplyPatchOperation } })
    .find((event) => event.type === "response.output_item.done" && event.item?.type === "apply_patch_call")!
  return new Part.ApplyPatchCallPart({ callId: done.item!.call_id, operation: done.item!.operation })
}

const workspace = () => mkdtempSync(join(tmpdir(), "apply-patch-"))

const lstatSyncOrUndefined = (path: string) => {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

/** An entry `planCase` makes: a file's text, a symbolic link (`link`: its target as written), or a hard link of a file made before it. */
type Entry = string | { readonly link: string } | { readonly hardLinkOf: string }

/**
 * A whole patch applied to a fresh workspace holding `files` (made in order, with their directories): the
 * answer (`failed: ` and the message when refused or failed) and `at(path)`, what the workspace has at
 * `path` afterwards (a file's text, `link -> ` and its target, `directory`, or `missing`). `patch` is the
 * text between `*** Begin Patch` and `*** End Patch`, each line ending in `\n`.
 */
const planCase = (files: Readonly<Record<string, Entry>>, patch: string) =>
  Effect.gen(function*() {
    const root = workspace()
    for (const [path, entry] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      if (typeof entry === "string") writeFileSync(join(root, path), entry)
      else if ("link" in entry) symlinkSync(entry.link, join(root, path))
      else linkSync(join(root, entry.hardLinkOf), join(root, path))
    }
    const answer = yield* Effect.either(ApplyPatch.applyPatchText(root, `*** Begin Patch\n${patch}*** End Patch`))
    const at = (path: string) => {
      const stats = lstatSyncOrUndefined(join(root, path))
      return stats === undefined
        ? "missing"
        : stats.isSymbolicLink()
        ? `link -> ${readlinkSync(join(root, path))}`
        : stats.isDirectory()
        ? "directory"
        : readFileSync(join(root, path), "utf8")
    }
    return { answer: answer._tag === "Right" ? answer.right : `failed: ${answer.left.message}`, at }
  })

describe("ApplyPatch", () => {
  it.effect("the recorded create_file operation writes the file under the root", () =>
    Effect.gen(function*() {
      const root = workspace()
      const result = yield* ApplyPatch.handler({ root })(recordedCall())
      assert.deepStrictEqual(result, { status: "completed", output: "created shopping-checklist.md" })
      assert.strictEqual(
        readFileSync(join(root, "shopping-checklist.md"), "utf8"),
        "## Shopping Checklist\n\n- [ ] Milk\n- [ ] Bread\n- [ ] Eggs\n- [ ] Fresh fruit\n- [ ] Coffee\n"
      )
      // a second create of the same file replaces it (as Codex's *** Add File: does), and says so
      writeFileSync(join(root, "shopping-checklist.md"), "old\n")
      const again = yield* ApplyPatch.handler({ root })(recordedCall())
      assert.deepStrictEqual(again, { status: "completed", output: "created shopping-checklist.md, replacing the file there" })
      assert.match(readFileSync(join(root, "shopping-checklist.md"), "utf8"), /^## Shopping Checklist\n/)
    }))

  it.effect("update_file hunks apply in order, with context headers and whitespace-tolerant matching", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "main.py"), "def main():\n    x = 1\n    print(x)\n\ndef other():\n    x = 1  \n    return x\n")
      const call = new Part.ApplyPatchCallPart({
        callId: "call_u1",
        operation: {
          type: "update_file",
          path: "main.py",
          diff: "@@ def other():\n-    x = 1\n+    x = 2\n     return x\n@@\n-def main():\n+def main() -> None:\n"
        }
      })
      // the second hunk's line comes before the first's: hunks apply from where the previous ended
      const failed = yield* ApplyPatch.handler({ root })(call)
      assert.strictEqual(failed.status, "failed")
      assert.match(failed.output, /main\.py: hunk 2 does not apply/)
      assert.strictEqual(readFileSync(join(root, "main.py"), "utf8").includes("x = 2"), false)
      const ordered = new Part.ApplyPatchCallPart({
        callId: "call_u2",
        operation: {
          type: "update_file",
          path: "main.py",
          diff: "@@\n-def main():\n+def main() -> None:\n@@ def other():\n-    x = 1\n+    x = 2\n     return x\n"
        }
      })
      assert.deepStrictEqual(yield* ApplyPatch.handler({ root })(ordered), { status: "completed", output: "updated main.py" })
      assert.strictEqual(
        readFileSync(join(root, "main.py"), "utf8"),
        "def main() -> None:\n    x = 1\n    print(x)\n\ndef other():\n    x = 2\n    return x\n"
      )
    }))

  it.effect("paths outside the root are refused: absolute, .., and through a symbolic link", () =>
    Effect.gen(function*() {
      const root = workspace()
      const outside = workspace()
      symlinkSync(outside, join(root, "link"))
      for (const path of ["/etc/passwd", "../escape.txt", "a/../../escape.txt", "link/escape.txt"]) {
        const result = yield* ApplyPatch.handler({ root })(
          new Part.ApplyPatchCallPart({ callId: "c", operation: { type: "create_file", path, diff: "+x\n" } })
        )
        assert.strictEqual(result.status, "failed", path)
        assert.match(result.output, /workspace root/, path)
      }
      assert.isFalse(existsSync(join(outside, "escape.txt")))
    }))

  it.effect("a whole Codex-style patch: add, update with a move, delete", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "a.txt"), "one\ntwo\nthree\n")
      writeFileSync(join(root, "old.txt"), "bye\n")
      const log = yield* ApplyPatch.applyPatchText(root, [
        "*** Begin Patch",
        "*** Add File: dir/new.txt",
        "+hello",
        "*** Update File: a.txt",
        "*** Move to: b.txt",
        "@@",
        " one",
        "-two",
        "+2",
        "*** Delete File: old.txt",
        "*** End Patch"
      ].join("\n"))
      assert.strictEqual(log, "created dir/new.txt\nupdated a.txt and moved it to b.txt\ndeleted old.txt")
      assert.strictEqual(readFileSync(join(root, "dir/new.txt"), "utf8"), "hello\n")
      assert.strictEqual(readFileSync(join(root, "b.txt"), "utf8"), "one\n2\nthree\n")
      assert.isFalse(existsSync(join(root, "a.txt")))
      assert.isFalse(existsSync(join(root, "old.txt")))
      const bad = yield* Effect.flip(ApplyPatch.applyPatchText(root, "*** Update File: b.txt\n"))
      assert.match(bad.message, /Begin Patch/)
    }))

  it.effect("a move onto the updated file itself, spelled differently, is a plain update (the file stays)", () =>
    Effect.gen(function*() {
      const root = workspace()
      mkdirSync(join(root, "sub"))
      for (const moveTo of ["./a.txt", "sub/../a.txt", "a.txt"]) {
        writeFileSync(join(root, "a.txt"), "keep me\n")
        const log = yield* ApplyPatch.applyChange(root, { type: "update_file", path: "a.txt", diff: "@@\n-keep me\n+kept\n", moveTo })
        assert.strictEqual(log, "updated a.txt", moveTo)
        assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "kept\n", moveTo)
      }
      // a directory's spelling is refused, the file untouched
      for (const moveTo of ["a.txt/", "sub/."]) {
        const error = yield* Effect.flip(ApplyPatch.applyChange(root, { type: "update_file", path: "a.txt", diff: "@@\n-kept\n+lost\n", moveTo }))
        assert.strictEqual(error.message, `${moveTo}: the path names a directory, not a file`)
        assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "kept\n", moveTo)
      }
      writeFileSync(join(root, "b.txt"), "b\n")
      const log = yield* ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Update File: b.txt\n*** Move to: ./b.txt\n@@\n-b\n+B\n*** End Patch")
      assert.strictEqual(log, "updated b.txt")
      assert.strictEqual(readFileSync(join(root, "b.txt"), "utf8"), "B\n")
    }))

  it.effect("no write leaves the root through a symbolic link, dangling or not", () =>
    Effect.gen(function*() {
      const root = workspace()
      const outside = workspace()
      writeFileSync(join(root, "m.txt"), "secret\n")
      symlinkSync(join(outside, "pwned.txt"), join(root, "link.txt"))
      symlinkSync(join(outside, "newdir"), join(root, "dlink"))
      symlinkSync("dlink/deeper.txt", join(root, "chain.txt"))
      symlinkSync("loop", join(root, "loop"))
      const refused = (change: ApplyPatch.FileChange) =>
        Effect.map(Effect.flip(ApplyPatch.applyChange(root, change)), (error) => error.message)
      const diff = "@@\n-secret\n+written\n"
      assert.strictEqual(yield* refused({ type: "update_file", path: "m.txt", diff, moveTo: "link.txt" }), "link.txt: the path leads out of the workspace root")
      assert.strictEqual(yield* refused({ type: "update_file", path: "m.txt", diff, moveTo: "chain.txt" }), "chain.txt: the path leads out of the workspace root")
      assert.strictEqual(yield* refused({ type: "create_file", path: "link.txt", diff: "+x\n" }), "link.txt: the path leads out of the workspace root")
      assert.strictEqual(yield* refused({ type: "create_file", path: "dlink/x.txt", diff: "+x\n" }), "dlink/x.txt: the path leads out of the workspace root")
      assert.strictEqual(yield* refused({ type: "create_file", path: "loop", diff: "+x\n" }), "loop: the path goes through too many symbolic links")
      const whole = yield* Effect.flip(ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Update File: m.txt\n*** Move to: link.txt\n@@\n-secret\n+written\n*** End Patch"))
      assert.strictEqual(whole.message, "link.txt: the path leads out of the workspace root")
      assert.strictEqual(readFileSync(join(root, "m.txt"), "utf8"), "secret\n")
      assert.deepStrictEqual(readdirSync(outside), [])
      // a dangling link to a new file inside the root may be moved onto (the write creates that file), and a
      // move onto a link to the file itself is a plain update
      symlinkSync("sub/target.txt", join(root, "inner.txt"))
      assert.strictEqual(yield* ApplyPatch.applyChange(root, { type: "update_file", path: "m.txt", diff, moveTo: "inner.txt" }), "updated m.txt and moved it to inner.txt")
      assert.strictEqual(readFileSync(join(root, "sub/target.txt"), "utf8"), "written\n")
      symlinkSync("sub/target.txt", join(root, "again.txt"))
      assert.strictEqual(yield* ApplyPatch.applyChange(root, { type: "update_file", path: "sub/target.txt", diff: "@@\n-written\n+kept\n", moveTo: "again.txt" }), "updated sub/target.txt")
      assert.strictEqual(readFileSync(join(root, "sub/target.txt"), "utf8"), "kept\n")
    }))

  it.effect("line endings as Codex: a CRLF file stays CRLF, an empty file gains one line, a pure addition goes at the end", () =>
    Effect.gen(function*() {
      // the patch's lines take the file's ending; lines it leaves keep theirs
      assert.strictEqual(
        yield* ApplyPatch.applyHunks("l1\r\nl2\r\nl3\r\nl4\r\nl5\r\n", "@@\n l2\n-l3\n+L3\n l4\n", "f"),
        "l1\r\nl2\r\nL3\r\nl4\r\nl5\r\n"
      )
      assert.strictEqual(yield* ApplyPatch.applyHunks("a\nb\r\nc\n", "@@\n-a\n+A\n", "f"), "A\nb\r\nc\n")
      assert.strictEqual(yield* ApplyPatch.applyHunks("", "@@\n+hello\n", "f"), "hello\n")
      assert.strictEqual(yield* ApplyPatch.applyHunks("one\ntwo\n", "@@\n+three\n", "f"), "one\ntwo\nthree\n")
      // at the very end, after a final blank line too (Codex's line-preserving mode; its LF mode put it before)
      assert.strictEqual(yield* ApplyPatch.applyHunks("one\ntwo\n\n", "@@ one\n+three\n", "f"), "one\ntwo\n\nthree\n")
      // a last line without a newline gains one (Codex's updates do too)
      assert.strictEqual(yield* ApplyPatch.applyHunks("x\ny", "@@\n x\n-y\n+z\n", "f"), "x\nz\n")
      const root = workspace()
      writeFileSync(join(root, "crlf.txt"), "a\r\nb\r\nc\r\n")
      assert.strictEqual(yield* ApplyPatch.applyChange(root, { type: "update_file", path: "crlf.txt", diff: "@@\n a\n-b\n+B\n+B2\n c\n" }), "updated crlf.txt")
      assert.strictEqual(readFileSync(join(root, "crlf.txt"), "utf8"), "a\r\nB\r\nB2\r\nc\r\n")
    }))

  it.effect("a whole patch with CRLF line endings, a byte order mark, a move onto an existing file", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "e.txt"), "a\nb\n")
      const crlf = [
        "*** Begin Patch",
        "*** Add File: c2.txt",
        "+hi",
        "*** Update File: e.txt",
        "@@",
        " a",
        "-b",
        "+c",
        "*** End of File",
        "*** End Patch",
        ""
      ].join("\r\n")
      assert.strictEqual(yield* ApplyPatch.applyPatchText(root, crlf), "created c2.txt\nupdated e.txt")
      // the patch's \r belongs to no line: an added file gets \n endings, as Codex writes it
      assert.strictEqual(readFileSync(join(root, "c2.txt"), "utf8"), "hi\n")
      assert.strictEqual(readFileSync(join(root, "e.txt"), "utf8"), "a\nc\n")
      assert.strictEqual(yield* ApplyPatch.createdText("+x\r\n+y\r\n", "f"), "x\ny\n")
      // a byte order mark stays in front of the first line
      assert.strictEqual(yield* ApplyPatch.applyHunks("\ufeffa\nb\n", "@@\n-a\n+A\n b\n", "f"), "\ufeffA\nb\n")
      // a move onto another existing file replaces it (as Codex's *** Move to: does)
      writeFileSync(join(root, "src.txt"), "s\n")
      assert.strictEqual(
        yield* ApplyPatch.applyChange(root, { type: "update_file", path: "src.txt", diff: "@@\n-s\n+S\n", moveTo: "e.txt" }),
        "updated src.txt and moved it to e.txt"
      )
      assert.strictEqual(readFileSync(join(root, "e.txt"), "utf8"), "S\n")
      assert.isFalse(existsSync(join(root, "src.txt")))
    }))

  it.effect("concurrent patches of one file all land: the built-in and a freeform apply_patch of any name share one lock per file", () =>
    Effect.gen(function*() {
      const root = workspace()
      const link = `${root}-link`
      symlinkSync(root, link)
      writeFileSync(join(root, "f.txt"), Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(""))
      const patch = (i: number) => `*** Begin Patch\n*** Update File: f.txt\n@@\n-line ${i}\n+LINE ${i}\n*** End Patch`
      // as Codex declares it: apply_patch a freeform custom tool; the loop runs custom calls 4 at a time
      const Patch = Tool.custom("apply_patch", { description: "Codex apply_patch", failure: Schema.String })
      const toolkit = Toolkit.make(Patch, Tool.shell)
      const layer = toolkit.toLayer({ apply_patch: (input) => Effect.mapError(ApplyPatch.applyPatchText(root, input), (error) => error.message), shell: Shell.handler({ cwd: root }) })
      const calls = [1, 10, 20, 30].map((i) => new Part.CustomToolCallPart({ callId: `e${i}`, name: "apply_patch", input: patch(i) }))
      const results = yield* ToolExecutor.execute(toolkit, calls).pipe(Effect.provide(layer))
      assert.deepStrictEqual(results.map((result) => result.output), Array(4).fill("updated f.txt"))
      // and the built-in handler, and applyChange, through another spelling of the root, at once
      const handler = ApplyPatch.handler({ root: join(root, ".") })
      yield* Effect.all<ReadonlyArray<Effect.Effect<unknown, ApplyPatch.PatchError>>, { concurrency: "unbounded" }>([
        ...[2, 11].map((i) =>
          handler(new Part.ApplyPatchCallPart({ callId: `p${i}`, operation: { type: "update_file", path: "f.txt", diff: `@@\n-line ${i}\n+LINE ${i}\n` } }))
        ),
        ApplyPatch.applyChange(root + "/", { type: "update_file", path: "f.txt", diff: "@@\n-line 21\n+LINE 21\n" }),
        ApplyPatch.applyPatchText(root, patch(31)),
        // a symbolic link to the root is the same root (its real path)
        ApplyPatch.applyPatchText(link, patch(32)),
        ApplyPatch.applyPatchText(link, patch(33))
      ], { concurrency: "unbounded" })
      const text = readFileSync(join(root, "f.txt"), "utf8")
      assert.deepStrictEqual([1, 2, 10, 11, 20, 21, 30, 31, 32, 33].filter((i) => !text.includes(`LINE ${i}\n`)), [])
    }))

  it.live("an operation interrupted while it writes (a call past its timeout) holds the file until the write has ended", () =>
    Effect.gen(function*() {
      const root = workspace()
      const file = join(root, "f.txt")
      const big = ApplyPatch.applyChange(root, { type: "create_file", path: "f.txt", diff: `+${"x".repeat(40 * 1024 * 1024)}\n` })
      const fiber = yield* Effect.fork(big)
      // the file appears once the write has begun (created, then filled)
      while (!existsSync(file)) yield* Effect.sleep("1 millis")
      yield* Fiber.interrupt(fiber)
      yield* ApplyPatch.applyChange(root, { type: "create_file", path: "f.txt", diff: "+small\n" })
      // the interrupted write went on under the next one: a file of 40 MB starting "small\n" then NULs
      yield* Effect.sleep("200 millis")
      assert.strictEqual(readFileSync(file, "utf8"), "small\n")
    }))

  it.effect("a hunk adding 200,000 lines applies (no stack overflow spreading them)", () =>
    Effect.gen(function*() {
      const added = Array.from({ length: 200_000 }, (_, index) => `new ${index}`)
      const diff = "@@\n first\n" + added.map((line) => `+${line}\n`).join("") + " last\n"
      const root = workspace()
      writeFileSync(join(root, "big.txt"), "first\nlast\n")
      const result = yield* ApplyPatch.handler({ root })(
        new Part.ApplyPatchCallPart({ callId: "call_big", operation: { type: "update_file", path: "big.txt", diff } })
      )
      assert.deepStrictEqual(result, { status: "completed", output: "updated big.txt" })
      assert.strictEqual(readFileSync(join(root, "big.txt"), "utf8"), ["first", ...added, "last"].join("\n") + "\n")
      // a CRLF file: the added lines take its ending
      assert.strictEqual(
        yield* ApplyPatch.applyHunks("first\r\nlast\r\n", diff, "f"),
        ["first", ...added, "last"].join("\r\n") + "\r\n"
      )
    }))

  it.effect("a file that is not UTF-8 is not updated (nor moved with hunks); it is deleted as it is", () =>
    Effect.gen(function*() {
      const root = workspace()
      // "café\na\nb\n" in Latin-1, and bytes that are no text at all
      const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x61, 0x0a, 0x62, 0x0a])
      const binary = Buffer.from([0x00, 0xff, 0xfe, 0x0a, 0x61, 0x0a, 0x80, 0x81])
      writeFileSync(join(root, "l.txt"), latin1)
      writeFileSync(join(root, "b.bin"), binary)
      const apply = (operation: Part.ApplyPatchOperation) =>
        ApplyPatch.handler({ root })(new Part.ApplyPatchCallPart({ callId: "call_b", operation }))
      const refused = /: the file is not UTF-8 text \(a binary file, or text in another encoding such as Latin-1\): apply_patch updates UTF-8 text files only; nothing was written$/
      const latin = yield* apply({ type: "update_file", path: "l.txt", diff: "@@\n-a\n+A\n" })
      assert.strictEqual(latin.status, "failed")
      assert.match(latin.output, new RegExp(`^l\\.txt${refused.source}`))
      assert.deepStrictEqual(readFileSync(join(root, "l.txt")), latin1)
      const moved = yield* Effect.flip(ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Update File: b.bin\n*** Move to: c.bin\n@@\n-a\n+A\n*** End Patch"))
      assert.match(moved.message, new RegExp(`^b\\.bin${refused.source}`))
      assert.deepStrictEqual(readFileSync(join(root, "b.bin")), binary)
      assert.isFalse(existsSync(join(root, "c.bin")))
      // valid UTF-8 with a byte order mark still updates, the mark kept
      writeFileSync(join(root, "u.txt"), "\ufeffcafé\na\n")
      assert.deepStrictEqual(yield* apply({ type: "update_file", path: "u.txt", diff: "@@\n-a\n+A\n" }), { status: "completed", output: "updated u.txt" })
      assert.strictEqual(readFileSync(join(root, "u.txt"), "utf8"), "\ufeffcafé\nA\n")
      // deleting reads nothing: a binary file goes
      assert.deepStrictEqual(yield* apply({ type: "delete_file", path: "b.bin" }), { status: "completed", output: "deleted b.bin" })
      assert.isFalse(existsSync(join(root, "b.bin")))
    }))

  it.effect("a named pipe or a directory is refused before it is opened (reading a pipe would block)", () =>
    Effect.gen(function*() {
      const root = workspace()
      execFileSync("mkfifo", [join(root, "pipe")])
      mkdirSync(join(root, "dir"))
      writeFileSync(join(root, "a.txt"), "a\n")
      const apply = (operation: Part.ApplyPatchOperation) =>
        ApplyPatch.handler({ root })(new Part.ApplyPatchCallPart({ callId: "call_p", operation }))
      // more calls than libuv's four threads: none of them blocks one
      for (let index = 0; index < 5; index++) {
        assert.deepStrictEqual(yield* apply({ type: "update_file", path: "pipe", diff: "@@\n-a\n+b\n" }), {
          status: "failed",
          output: "pipe: the path names a named pipe (FIFO), not a regular file: apply_patch changes regular files only"
        })
      }
      assert.deepStrictEqual(yield* apply({ type: "update_file", path: "dir", diff: "@@\n-a\n+b\n" }), {
        status: "failed",
        output: "dir: the path names a directory, not a regular file: apply_patch changes regular files only"
      })
      // a move onto a pipe: refused before writing, the source kept
      const move = yield* Effect.flip(ApplyPatch.applyChange(root, { type: "update_file", path: "a.txt", diff: "@@\n-a\n+b\n", moveTo: "pipe" }))
      assert.strictEqual(move.message, "pipe: the path names a named pipe (FIFO), not a regular file: apply_patch changes regular files only")
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "a\n")
      assert.deepStrictEqual(yield* apply({ type: "update_file", path: "a.txt", diff: "@@\n-a\n+b\n" }), { status: "completed", output: "updated a.txt" })
      // the pipe itself may be deleted (unlinking opens nothing)
      assert.deepStrictEqual(yield* apply({ type: "delete_file", path: "pipe" }), { status: "completed", output: "deleted pipe" })
    }))

  it.effect("hunks found as Codex finds them: a trailing empty context line dropped, then Unicode punctuation normalised", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "a.txt"), "foo\nbaz\n")
      writeFileSync(join(root, "b.txt"), "q\n")
      // the blank line before the next section is an empty context line of a.txt's hunk: not in the file
      // after "foo", so the hunk is looked for again without it
      const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-foo\n+bar\n\n*** Update File: b.txt\n@@\n-q\n+Q\n*** End Patch"
      assert.strictEqual(yield* ApplyPatch.applyPatchText(root, patch), "updated a.txt\nupdated b.txt")
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "bar\nbaz\n")
      assert.strictEqual(readFileSync(join(root, "b.txt"), "utf8"), "Q\n")
      // ASCII quotes and dash match typographic ones (and a no-break space a space) in the last pass
      assert.strictEqual(
        yield* ApplyPatch.applyHunks("say \u201chi\u201d \u2014 ok\u00a0now\nnext\n", "@@\n-say \"hi\" - ok now\n+say hello\n next\n", "f"),
        "say hello\nnext\n"
      )
      // the passes run in Codex's order, each over the whole file: an exact match after a normalised one wins
      assert.strictEqual(yield* ApplyPatch.applyHunks("a \u2013 b\na - b\n", "@@\n-a - b\n+X\n", "f"), "a \u2013 b\nX\n")
      // and a trimmed match after a normalised one
      assert.strictEqual(yield* ApplyPatch.applyHunks("a \u2013 b\n  a - b\n", "@@\n-a - b\n+X\n", "f"), "a \u2013 b\nX\n")
    }))

  it.effect("every hunk is looked for in the file as it was, from a cursor past the hunks before (Codex's compute_replacements)", () =>
    Effect.gen(function*() {
      const fails = (content: string, diff: string) =>
        Effect.map(Effect.flip(ApplyPatch.applyHunks(content, diff, "f")), (error) => error.description)
      // a line an earlier hunk added (a pure addition, at the end) is not there for a later hunk: as context
      assert.strictEqual(
        yield* fails("a\nb\n", "@@\n+def f():\n@@\n def f():\n+    pass\n"),
        "hunk 2 does not apply: its lines (from \"def f():\") are not in the file"
      )
      // nor as a header
      assert.strictEqual(
        yield* fails("a\nb\n", "@@\n+def f():\n@@ def f():\n+    pass\n"),
        "hunk 2 does not apply: context \"def f():\" not found"
      )
      // nor a line an earlier hunk wrote: "b" is found where it was, after the cursor
      assert.strictEqual(yield* ApplyPatch.applyHunks("a\nx\nb\n", "@@\n-a\n+b\n@@\n-b\n+B\n", "f"), "b\nx\nB\n")
      // two additions at the end keep the patch's order
      assert.strictEqual(yield* ApplyPatch.applyHunks("a\n", "@@\n+1\n@@\n+2\n", "f"), "a\n1\n2\n")
      // an End of File hunk is looked for at the end, and not before the cursor, as Codex's line-preserving
      // mode (its test_apply_patch_cli_rejects_overlapping_end_of_file_chunks): a hunk overlapping the one
      // before it, or one whose header is its own line, is refused (Codex's LF mode took both)
      assert.strictEqual(
        yield* fails("one\n", "@@\n-one\n+first\n@@\n-one\n+second\n*** End of File\n"),
        "hunk 2 does not apply: its lines (from \"one\") are not in the file at its end, after the hunk before it"
      )
      assert.strictEqual(
        yield* fails("a\nb\n", "@@ b\n-b\n+B\n*** End of File\n"),
        "hunk 1 does not apply: its lines (from \"b\") are not in the file at its end, after the hunk before it"
      )
      assert.strictEqual(yield* ApplyPatch.applyHunks("a\nb\n", "@@ a\n-b\n+B\n*** End of File\n", "f"), "a\nB\n")
      // and a pure addition after a hunk that changed the last line goes after the changed line
      assert.strictEqual(yield* ApplyPatch.applyHunks("a\nb\n", "@@\n-b\n+B\n@@\n+c\n", "f"), "a\nB\nc\n")
    }))

  it.effect("the file's own context lines stay, text and ending, as Codex's line-preserving mode and OpenAI's applyDiff keep them", () =>
    Effect.gen(function*() {
      // found only once trailing whitespace, surrounding whitespace or typographic punctuation was set aside:
      // the context line is the file's, not the patch's (Codex's LF mode wrote the patch's)
      assert.strictEqual(
        yield* ApplyPatch.applyHunks("def f():  \n    return 1\n", "@@\n def f():\n-    return 1\n+    return 2\n", "f"),
        "def f():  \n    return 2\n"
      )
      assert.strictEqual(
        yield* ApplyPatch.applyHunks("\tkeep()\nx\n", "@@\n keep()\n-x\n+y\n", "f"),
        "\tkeep()\ny\n"
      )
      assert.strictEqual(
        yield* ApplyPatch.applyHunks("say “hi” — ok\nx\n", "@@\n say \"hi\" - ok\n-x\n+y\n", "f"),
        "say “hi” — ok\ny\n"
      )
      // Codex's tests (codex-rs/apply-patch tests/suite/tool.rs, line-preserving mode), byte for byte: a mixed
      // file keeps each line's ending, the lines written take the first line's
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        ["one\r\ntwo\r\nthree\r\n", "@@\n-one\n+uno\n@@\n two\n+\n+between\n three\n", "uno\r\ntwo\r\n\r\nbetween\r\nthree\r\n"],
        ["a\r\n\r\n", "@@\n+new\n", "a\r\n\r\nnew\r\n"],
        ["one\rtwo\rthree\r", "@@\n-one\n+uno\n@@\n two\n+\n+between\n three\n", "uno\rtwo\r\rbetween\rthree\r"],
        ["a\nb\n", "@@\n-a\n-b\n+b\n+b\n+a\n", "b\nb\na\n"],
        ["same\r\nsame\n", "@@\n-same\n same\n", "same\n"],
        ["one\r\ntwo\rthree\nfour\r\n", "@@\n one\n two\n-three\n+THREE\n four\n", "one\r\ntwo\rTHREE\r\nfour\r\n"],
        ["one\r\ntwo", "@@\n-one\n+ONE\n", "ONE\r\ntwo\r\n"]
      ]
      for (const [content, diff, expected] of cases) {
        assert.strictEqual(yield* ApplyPatch.applyHunks(content, diff, "f"), expected, JSON.stringify(diff))
      }
    }))

  it.effect("a hunk's @@ context before the hunk before it is refused, as Codex refuses it, saying where it is", () =>
    Effect.gen(function*() {
      // two methods of one class, each hunk anchored at the class: the second anchor is before the cursor.
      // Codex answers "Failed to find context"; OpenAI's applyDiff takes an anchor it finds before the cursor
      // as found and looks for the hunk's lines after the hunk before (it applies this patch)
      const file = "class Foo:\n    def a(self):\n        return 1\n    def b(self):\n        return 2\n"
      const diff = "@@ class Foo:\n-        return 1\n+        return 10\n@@ class Foo:\n-        return 2\n+        return 20\n"
      const error = yield* Effect.flip(ApplyPatch.applyHunks(file, diff, "f"))
      assert.strictEqual(
        error.description,
        "hunk 2 does not apply: context \"class Foo:\" not found after line 3; it is at line 1, before it (a hunk is " +
          "looked for after the hunk before it and after its own \"@@\" context: hunks apply in the order of the file)"
      )
      // the hunks in the file's order apply; so does the second one without its anchor
      assert.strictEqual(
        yield* ApplyPatch.applyHunks(file, "@@ class Foo:\n-        return 1\n+        return 10\n@@\n-        return 2\n+        return 20\n", "f"),
        "class Foo:\n    def a(self):\n        return 10\n    def b(self):\n        return 20\n"
      )
      // a hunk's lines before the cursor: said too
      const lines = yield* Effect.flip(ApplyPatch.applyHunks("a\nb\nc\n", "@@\n-c\n+C\n@@\n-a\n+A\n", "f"))
      assert.strictEqual(
        lines.description,
        "hunk 2 does not apply: its lines (from \"a\") are not in the file after line 3; it is at line 1, before it (a hunk " +
          "is looked for after the hunk before it and after its own \"@@\" context: hunks apply in the order of the file)"
      )
    }))

  it.effect("blank lines where a hunk would start are skipped, as Codex's parser skips them", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "a.txt"), "x\n\na\n")
      // a blank line between the section header and the first "@@" is no empty context line (which would
      // find the file's blank line and move the cursor past "x")
      const patch = "*** Begin Patch\n*** Update File: a.txt\n\n  \n@@\n-x\n+X\n*** End Patch"
      assert.strictEqual(yield* ApplyPatch.applyPatchText(root, patch), "updated a.txt")
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "X\n\na\n")
      // nor are the blank lines after a hunk ended by "*** End of File" (two of them did not apply)
      assert.strictEqual(yield* ApplyPatch.applyHunks("a\nb\n", "@@\n-b\n+B\n*** End of File\n\n\n", "f"), "a\nB\n")
      // a line after it that starts no hunk is an error, as Codex's "Expected update hunk to start with a @@"
      const after = yield* Effect.flip(ApplyPatch.applyHunks("a\nb\n", "@@\n-b\n+B\n*** End of File\n-a\n", "f"))
      assert.strictEqual(
        after.description,
        'line 5 of the diff starts no hunk: after a hunk ends (at "*** End of File" or a line that starts with neither " ", "-" nor "+") ' +
          'the next starts with "@@" or "@@ <a line of context>": "-a"'
      )
    }))

  it.effect("an update_file with nothing to apply is a failed answer, the file untouched (as Codex refuses it)", () =>
    Effect.gen(function*() {
      const root = workspace()
      const apply = ApplyPatch.handler({ root })
      const update = (diff: string | undefined) =>
        apply(
          diff === undefined
            ? { callId: "e", operation: { type: "update_file", path: "f.txt" } } as unknown as Part.ApplyPatchCallPart
            : new Part.ApplyPatchCallPart({ callId: "e", operation: { type: "update_file", path: "f.txt", diff } })
        )
      const refused = {
        "": "f.txt: the diff has no hunk: nothing to change (a hunk is \"@@\", then its context \" \", removed \"-\" and added \"+\" lines)",
        "\n\n": "f.txt: the diff has no hunk: nothing to change (a hunk is \"@@\", then its context \" \", removed \"-\" and added \"+\" lines)",
        "@@\n": "f.txt: line 1 of the diff starts a hunk that has no line: \"@@\"",
        "@@ def main\n": "f.txt: line 1 of the diff starts a hunk that has no line: \"@@ def main\"",
        "@@ def main\n*** End of File\n":
          "f.txt: line 2 of the diff ends a hunk that has no line (\"*** End of File\" follows the hunk's lines)",
        "*** End of File\n": "f.txt: line 1 of the diff ends a hunk that has no line (\"*** End of File\" follows the hunk's lines)"
      }
      writeFileSync(join(root, "f.txt"), "no newline at end")
      for (const [diff, output] of Object.entries(refused)) {
        assert.deepStrictEqual(yield* update(diff), { status: "failed", output }, JSON.stringify(diff))
      }
      // an operation without a diff at all (past the schema)
      assert.deepStrictEqual(yield* update(undefined), { status: "failed", output: refused[""] })
      assert.strictEqual(readFileSync(join(root, "f.txt"), "utf8"), "no newline at end")
    }))

  it.effect("a hunk looked for in a large file of near repeats yields to other fibers: an interruption (a timeout) ends the search", () =>
    Effect.gen(function*() {
      // 200,000 lines "    }" and a hunk of three "     }" then "-nope": in no pass is it there (the old search
      // held the event loop until it had tried every place; 100,000 lines and a hunk of 1,000 took 44 s,
      // past any timeout)
      const content = "    }\n".repeat(200_000)
      const diff = "@@\n" + "     }\n".repeat(3) + "-nope\n+yes\n"
      const search = yield* Effect.fork(ApplyPatch.applyHunks(content, diff, "big.txt"))
      // this fiber runs again (a turn of the event loop later) while the search is under way, and interrupts it
      yield* Effect.async<void>((resume) => {
        setImmediate(() => resume(Effect.void))
      })
      yield* Fiber.interrupt(search)
      const exit = yield* Fiber.await(search)
      assert.isTrue(Exit.isInterrupted(exit), String(exit))
      // not interrupted, the same search answers that the hunk is not there
      const error = yield* Effect.flip(ApplyPatch.applyHunks(content, diff, "big.txt"))
      assert.strictEqual(error.description, "hunk 1 does not apply: its lines (from \"    }\") are not in the file")
    }))

  it.effect("hunks parsed as Codex's parser reads them: the @@ markers, the header as written, hunks without lines", () =>
    Effect.gen(function*() {
      const fails = (diff: string) => Effect.map(Effect.flip(ApplyPatch.applyHunks("a\nb\n", diff, "f")), (error) => error.description)
      const noHeader = 'is no hunk header: "@@" is alone or followed by a space and a line of context ("@@ def f():")'
      // "@@" followed by anything but a space is no header (it was "@@ a")
      assert.strictEqual(yield* fails("@@a\n-b\n+B\n"), `line 1 of the diff ${noHeader}: "@@a"`)
      assert.strictEqual(yield* fails("@@\n-a\n+A\n@@b\n-b\n+B\n"), `line 4 of the diff ${noHeader}: "@@b"`)
      // "@@ a" then "@@" alone: stacked anchors, the "@@" alone adding none (it was refused since 2229ab3)
      assert.strictEqual(yield* ApplyPatch.applyHunks("a\nb\n", "@@ a\n@@\n-b\n+B\n", "f"), "a\nB\n")
      assert.strictEqual(yield* fails("@@ a\n@@\n"), 'line 2 of the diff starts a hunk that has no line: "@@"')
      // the header is looked for as written: "foo " is found exactly (line 3), before "foo" trimmed (line 1)
      assert.strictEqual(yield* ApplyPatch.applyHunks("foo\nx\nfoo \nx\n", "@@ foo \n-x\n+X\n", "f"), "foo\nx\nfoo \nX\n")
      // a header of spaces is none (Codex would look for a blank line: there is none here)
      assert.strictEqual(yield* ApplyPatch.applyHunks("a\nb\n", "@@  \n-b\n+B\n", "f"), "a\nB\n")
    }))

  it.effect("stacked @@ anchors reach a repeated function: each looked for after the one before, in an operation and a whole patch", () =>
    Effect.gen(function*() {
      // the breaker's case (refused since 2229ab3: 'the hunk before it has no line: "@@ class B:"'); V4A's
      // documented way to reach a repeated method (OpenAI's GPT-4.1 prompting guide), accepted by OpenAI's
      // applyDiff (openai-agents-js readAnchors)
      const file = "class A:\n    def m(self):\n        return 1\nclass B:\n    def m(self):\n        return 1\n"
      const diff = "@@ class B:\n@@     def m(self):\n-        return 1\n+        return 2\n"
      const expected = "class A:\n    def m(self):\n        return 1\nclass B:\n    def m(self):\n        return 2\n"
      assert.strictEqual(yield* ApplyPatch.applyHunks(file, diff, "a.py"), expected)
      // the operation form through the handler
      const root = workspace()
      writeFileSync(join(root, "a.py"), file)
      const answer = yield* ApplyPatch.handler({ root })(
        new Part.ApplyPatchCallPart({ callId: "call_s1", operation: { type: "update_file", path: "a.py", diff } })
      )
      assert.strictEqual(answer.status, "completed", answer.output)
      assert.strictEqual(readFileSync(join(root, "a.py"), "utf8"), expected)
      // the whole-patch form
      writeFileSync(join(root, "a.py"), file)
      assert.strictEqual(
        yield* ApplyPatch.applyPatchText(root, `*** Begin Patch\n*** Update File: a.py\n${diff}*** End Patch`),
        "updated a.py"
      )
      assert.strictEqual(readFileSync(join(root, "a.py"), "utf8"), expected)
      // three stacked, after an earlier hunk: each searched after the one before
      const three = "def f():\n    x = 1\nclass A:\n    def m(self):\n        x = 1\nclass B:\n    def m(self):\n        x = 1\n"
      assert.strictEqual(
        yield* ApplyPatch.applyHunks(three, "@@ def f():\n-    x = 1\n+    x = 0\n@@ class B:\n@@\n@@     def m(self):\n-        x = 1\n+        x = 2\n", "c.py"),
        "def f():\n    x = 0\nclass A:\n    def m(self):\n        x = 1\nclass B:\n    def m(self):\n        x = 2\n"
      )
      // out of order (the method before its class): refused naming both, the file untouched
      const reversed = yield* Effect.flip(
        ApplyPatch.applyHunks("class B:\n    def m(self):\n        return 1\n", "@@     def m(self):\n@@ class B:\n-        return 1\n+        return 2\n", "b.py")
      )
      assert.strictEqual(
        reversed.description,
        'hunk 1 does not apply: context "class B:" not found after its context "    def m(self):" (line 2; stacked "@@" lines ' +
          "are looked for in order, each after the one before)"
      )
      writeFileSync(join(root, "b.py"), "class B:\n    def m(self):\n        return 1\n")
      const refused = yield* ApplyPatch.handler({ root })(
        new Part.ApplyPatchCallPart({
          callId: "call_s2",
          operation: { type: "update_file", path: "b.py", diff: "@@     def m(self):\n@@ class B:\n-        return 1\n+        return 2\n" }
        })
      )
      assert.strictEqual(refused.status, "failed")
      assert.include(refused.output, 'context "class B:" not found after its context "    def m(self):"')
      assert.strictEqual(readFileSync(join(root, "b.py"), "utf8"), "class B:\n    def m(self):\n        return 1\n")
    }))

  it.effect("a whole patch as Codex parses it: all hunks checked before the first change, no blank line after an added file", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "c.txt"), "c\n")
      // a malformed hunk in the second section: nothing is written (the added file was, before)
      const malformed = yield* Effect.flip(
        ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Add File: d.txt\n+d\n*** Update File: c.txt\n@@c\n-c\n+C\n*** End Patch")
      )
      assert.strictEqual(malformed.path, "c.txt")
      assert.isFalse(existsSync(join(root, "d.txt")))
      // a blank line after an Add File section: an empty line of the file without its "+"? refused, as Codex
      const blank = yield* Effect.flip(
        ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Add File: d.txt\n+d\n\n*** Update File: c.txt\n@@\n-c\n+C\n*** End Patch")
      )
      assert.strictEqual(
        blank.message,
        'a blank line follows the "*** Add File: d.txt" section: each line of a new file starts with "+" (an empty one is "+" alone), ' +
          "and no blank line separates sections"
      )
      assert.isFalse(existsSync(join(root, "d.txt")))
      assert.strictEqual(readFileSync(join(root, "c.txt"), "utf8"), "c\n")
      // after "*** Begin Patch" or a Delete File section it is skipped (Codex refuses it, though it is plain)
      writeFileSync(join(root, "e.txt"), "e\n")
      assert.strictEqual(
        yield* ApplyPatch.applyPatchText(root, "*** Begin Patch\n\n*** Delete File: e.txt\n\n*** Update File: c.txt\n@@\n-c\n+C\n*** End Patch"),
        "deleted e.txt\nupdated c.txt"
      )
    }))

  it.effect("a whole patch is checked against the files before its first write, so a retry does not apply a change twice", () =>
    Effect.gen(function*() {
      const root = workspace()
      const before = "import os\n\ndef main():\n    pass\n"
      writeFileSync(join(root, "a.py"), before)
      // the tester's patch: a.py updated, then b.py, which is missing
      const patch = "*** Begin Patch\n*** Update File: a.py\n@@\n import os\n+import sys\n \n*** Update File: b.py\n@@\n-x\n+y\n*** End Patch"
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = yield* Effect.flip(ApplyPatch.applyPatchText(root, patch))
        assert.strictEqual(error.message, "b.py: the file to update does not exist")
        assert.isUndefined(error.applied)
        assert.strictEqual(readFileSync(join(root, "a.py"), "utf8"), before)
      }
      writeFileSync(join(root, "b.py"), "x\n")
      assert.strictEqual(yield* ApplyPatch.applyPatchText(root, patch), "updated a.py\nupdated b.py")
      assert.strictEqual(readFileSync(join(root, "a.py"), "utf8"), "import os\nimport sys\n\ndef main():\n    pass\n")
      assert.strictEqual(readFileSync(join(root, "b.py"), "utf8"), "y\n")

      // every other check of a later change also comes before the first write
      writeFileSync(join(root, "c.txt"), "c\n")
      mkdirSync(join(root, "dir"))
      const first = "*** Begin Patch\n*** Add File: new.txt\n+new\n*** Update File: c.txt\n@@\n-c\n+C\n"
      const refused = (section: string) => Effect.map(Effect.flip(ApplyPatch.applyPatchText(root, `${first}${section}*** End Patch`)), (error) => error.message)
      assert.strictEqual(yield* refused("*** Update File: b.py\n@@\n-absent\n+z\n"), "b.py: hunk 1 does not apply: its lines (from \"absent\") are not in the file")
      assert.strictEqual(yield* refused("*** Delete File: gone.txt\n"), "gone.txt: the file to delete does not exist")
      assert.strictEqual(yield* refused("*** Delete File: dir\n"), "dir: the path names a directory, not a file: apply_patch deletes files only")
      assert.strictEqual(yield* refused("*** Add File: ../out.txt\n+o\n"), "../out.txt: the path leaves the workspace root")
      assert.strictEqual(yield* refused("*** Add File: dir\n+o\n"), "dir: the path names a directory, not a regular file: apply_patch changes regular files only")
      assert.strictEqual(
        yield* refused("*** Update File: b.py\n*** Move to: c.txt/b.py\n@@\n-y\n+z\n"),
        `c.txt/b.py: cannot write the file: ENOTDIR (${realpathSync(root)}/c.txt is a file, not a directory)`
      )
      assert.isFalse(existsSync(join(root, "new.txt")))
      assert.strictEqual(readFileSync(join(root, "c.txt"), "utf8"), "c\n")
      assert.strictEqual(readFileSync(join(root, "b.py"), "utf8"), "y\n")
    }))

  it.effect("the changes of a whole patch each see those before them: add then update, two updates, delete then add", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "a.txt"), "a\n")
      writeFileSync(join(root, "m.txt"), "m\n")
      assert.strictEqual(
        yield* ApplyPatch.applyPatchText(
          root,
          "*** Begin Patch\n*** Add File: n.txt\n+n\n*** Update File: n.txt\n@@\n-n\n+N\n" +
            "*** Update File: a.txt\n@@\n-a\n+b\n*** Update File: a.txt\n@@\n-b\n+c\n" +
            "*** Delete File: m.txt\n*** Add File: m.txt\n+again\n" +
            "*** Update File: n.txt\n*** Move to: moved/n.txt\n@@\n-N\n+moved\n*** End Patch"
        ),
        "created n.txt\nupdated n.txt\nupdated a.txt\nupdated a.txt\ndeleted m.txt\ncreated m.txt\nupdated n.txt and moved it to moved/n.txt"
      )
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "c\n")
      assert.strictEqual(readFileSync(join(root, "m.txt"), "utf8"), "again\n")
      assert.strictEqual(readFileSync(join(root, "moved/n.txt"), "utf8"), "moved\n")
      assert.isFalse(existsSync(join(root, "n.txt")))
      // a file moved or deleted earlier in the patch is gone for the changes after it
      const gone = yield* Effect.flip(
        ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Delete File: a.txt\n*** Update File: a.txt\n@@\n-c\n+d\n*** End Patch")
      )
      assert.strictEqual(gone.message, "a.txt: the file to update does not exist")
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "c\n")
    }))

  /** x.txt and y.txt, a hard link of it; the patch's update of x.txt */
  const hardLinked = { "x.txt": "one\ntwo\n", "y.txt": { hardLinkOf: "x.txt" } }
  const updateX = "*** Update File: x.txt\n@@\n-one\n+ONE\n two\n"

  it.effect("a hard link's update written against its file before an earlier change in the patch does not apply", () =>
    Effect.gen(function*() {
      // the breaker's patch-hardlink.mjs: y.txt a hard link of x.txt, updated after x.txt in one patch. y.txt was
      // planned against the disk, and its write (in place, the same file) wiped out x.txt's change while the
      // answer said both were updated. y's hunk written against the file as it was: it does not apply to x's
      // result, nothing written
      const stale = yield* planCase(hardLinked, `${updateX}*** Update File: y.txt\n@@\n one\n-two\n+TWO\n`)
      assert.match(stale.answer, /^failed: y\.txt: hunk 1 does not apply/)
      assert.strictEqual(stale.at("x.txt"), "one\ntwo\n")
    }))

  it.effect("a hard link's update written against an earlier change to its file in the patch keeps both", () =>
    Effect.gen(function*() {
      // y's hunk written against x's result: both changes kept, in the one file (refused before: planned
      // against the disk)
      const fresh = yield* planCase(hardLinked, `${updateX}*** Update File: y.txt\n@@\n ONE\n-two\n+TWO\n`)
      assert.deepStrictEqual([fresh.answer, fresh.at("x.txt"), fresh.at("y.txt")], ["updated x.txt\nupdated y.txt", "ONE\nTWO\n", "ONE\nTWO\n"])
      // a link whose name was deleted then added again is a new file: the other link keeps the old one
      const renewed = yield* planCase(hardLinked, "*** Delete File: x.txt\n*** Add File: x.txt\n+new\n*** Update File: y.txt\n@@\n-one\n+ONE\n two\n")
      assert.deepStrictEqual([renewed.answer, renewed.at("x.txt"), renewed.at("y.txt")], [
        "deleted x.txt\ncreated x.txt\nupdated y.txt",
        "new\n",
        "ONE\ntwo\n"
      ])
      // a symbolic link sees the change to its target, as before
      const symbolic = yield* planCase(
        { "x.txt": "one\ntwo\n", "y.txt": { link: "x.txt" } },
        `${updateX}*** Update File: y.txt\n@@\n ONE\n-two\n+TWO\n`
      )
      assert.deepStrictEqual([symbolic.answer, symbolic.at("x.txt")], ["updated x.txt\nupdated y.txt", "ONE\nTWO\n"])
    }))

  it.effect("a symbolic link deleted or moved away earlier in a whole patch is gone: a later write at its path makes a file there", () =>
    Effect.gen(function*() {
      // the breaker's ap_link_overlay.mjs: the later Add was planned against the disk as it was, so it wrote
      // through the link removed before it (link.txt missing, its old target overwritten)
      const linked = { "target.txt": "target\n", "link.txt": { link: "target.txt" } }
      const deleted = yield* planCase(linked, "*** Delete File: link.txt\n*** Add File: link.txt\n+new\n")
      assert.strictEqual(deleted.answer, "deleted link.txt\ncreated link.txt")
      assert.deepStrictEqual([deleted.at("link.txt"), deleted.at("target.txt")], ["new\n", "target\n"])
      const moved = yield* planCase(linked, "*** Update File: link.txt\n*** Move to: moved.txt\n@@\n-target\n+moved\n*** Add File: link.txt\n+new\n")
      assert.strictEqual(moved.answer, "updated link.txt and moved it to moved.txt\ncreated link.txt")
      assert.deepStrictEqual([moved.at("link.txt"), moved.at("target.txt"), moved.at("moved.txt")], ["new\n", "target\n", "moved\n"])
      const dangling = yield* planCase({ "link.txt": { link: "nowhere.txt" } }, "*** Delete File: link.txt\n*** Add File: link.txt\n+new\n")
      assert.strictEqual(dangling.answer, "deleted link.txt\ncreated link.txt")
      assert.deepStrictEqual([dangling.at("link.txt"), dangling.at("nowhere.txt")], ["new\n", "missing"])
      // a link to a directory: a file under its name is in a new directory, the old one's file untouched; a
      // file the old directory has is not there any more
      const directory = yield* planCase(
        { "realdir/x.txt": "x\n", "realdir/y.txt": "y\n", d: { link: "realdir" } },
        "*** Delete File: d\n*** Add File: d/x.txt\n+new\n"
      )
      assert.strictEqual(directory.answer, "deleted d\ncreated d/x.txt")
      assert.deepStrictEqual(
        [directory.at("d"), directory.at("d/x.txt"), directory.at("realdir/x.txt")],
        ["directory", "new\n", "x\n"]
      )
      const below = yield* planCase(
        { "realdir/y.txt": "y\n", d: { link: "realdir" } },
        "*** Delete File: d\n*** Add File: d/x.txt\n+new\n*** Update File: d/y.txt\n@@\n-y\n+Y\n"
      )
      assert.strictEqual(below.answer, "failed: d/y.txt: the file to update does not exist")
      assert.deepStrictEqual([below.at("d"), below.at("realdir/y.txt")], ["link -> realdir", "y\n"])
      // refused before: the update looked for the old target's text; the Add, for where the link led
      const updated = yield* planCase(linked, "*** Delete File: link.txt\n*** Add File: link.txt\n+new\n*** Update File: link.txt\n@@\n-new\n+NEW\n")
      assert.strictEqual(updated.answer, "deleted link.txt\ncreated link.txt\nupdated link.txt")
      assert.deepStrictEqual([updated.at("link.txt"), updated.at("target.txt")], ["NEW\n", "target\n"])
      const outside = workspace()
      writeFileSync(join(outside, "secret.txt"), "secret\n")
      const out = yield* planCase({ "link.txt": { link: join(outside, "secret.txt") } }, "*** Delete File: link.txt\n*** Add File: link.txt\n+new\n")
      assert.strictEqual(out.answer, "deleted link.txt\ncreated link.txt")
      assert.strictEqual(out.at("link.txt"), "new\n")
      assert.strictEqual(readFileSync(join(outside, "secret.txt"), "utf8"), "secret\n")
      // a link not removed is still followed: an Add through it writes its target
      const kept = yield* planCase(linked, "*** Add File: link.txt\n+new\n")
      assert.deepStrictEqual([kept.answer, kept.at("link.txt"), kept.at("target.txt")], [
        "created link.txt, replacing the file there",
        "link -> target.txt",
        "new\n"
      ])
    }))

  it.effect("a directory an earlier change of a whole patch writes into is no file to write: refused, nothing written", () =>
    Effect.gen(function*() {
      // Add d/x.txt then Add d passed the plan, then wrote d/x.txt and failed on d
      const root = workspace()
      const added = yield* Effect.flip(ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Add File: d/x.txt\n+x\n*** Add File: d\n+d\n*** End Patch"))
      assert.strictEqual(added.message, "d: the path names a directory, not a regular file: apply_patch changes regular files only")
      assert.isUndefined(added.applied)
      assert.deepStrictEqual(readdirSync(root), [])
      writeFileSync(join(root, "a.txt"), "a\n")
      const moved = yield* Effect.flip(
        ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Add File: d/x.txt\n+x\n*** Update File: a.txt\n*** Move to: d\n@@\n-a\n+b\n*** End Patch")
      )
      assert.strictEqual(moved.message, "d: the path names a directory, not a regular file: apply_patch changes regular files only")
      const deleted = yield* Effect.flip(ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Add File: d/x.txt\n+x\n*** Delete File: d\n*** End Patch"))
      assert.strictEqual(deleted.message, "d: the path names a directory, not a file: apply_patch deletes files only")
      assert.deepStrictEqual(readdirSync(root), ["a.txt"])
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "a\n")
    }))

  it.effect("a file reached through a directory link out of the root and a file link back in is updated where it lands", () =>
    Effect.gen(function*() {
      const root = workspace()
      const outside = workspace()
      writeFileSync(join(root, "a.txt"), "a\n")
      symlinkSync(outside, join(root, "out"))
      symlinkSync(join(root, "a.txt"), join(outside, "back.txt"))
      assert.strictEqual(
        yield* ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Update File: out/back.txt\n@@\n-a\n+A\n*** End Patch"),
        "updated out/back.txt"
      )
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "A\n")
    }))

  it.effect("a write the disk refuses midway through a whole patch: the error names the changes already made", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "a.txt"), "a\n")
      // a name longer than the file system allows passes every check; its write fails (ENAMETOOLONG)
      const long = `${"x".repeat(300)}.txt`
      const error = yield* Effect.flip(
        ApplyPatch.applyPatchText(root, `*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: ${long}\n+x\n*** Delete File: a.txt\n*** End Patch`)
      )
      assert.deepStrictEqual(error.applied, ["updated a.txt"])
      assert.strictEqual(error.path, long)
      assert.match(error.message, new RegExp(`^updated a\\.txt; then ${long}: cannot write the file: ENAMETOOLONG \\(`))
      // the change made stays made; those after the failing one are not made
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "A\n")
    }))

  it.effect("whitespace in the fuzzy passes is Rust's: U+0085 is trimmed, U+FEFF is not", () =>
    Effect.gen(function*() {
      // a trailing NEL (U+0085) is whitespace to Rust's trim_end: the second pass finds "x"
      assert.strictEqual(yield* ApplyPatch.applyHunks("x\u0085\ny\n", "@@\n-x\n+X\n", "f"), "X\ny\n")
      assert.strictEqual(yield* ApplyPatch.applyHunks("\u0085x\ny\n", "@@\n-x\n+X\n", "f"), "X\ny\n")
      // a zero-width no-break space (U+FEFF) inside the file is not (JavaScript's trim would strip it)
      const feff = yield* Effect.flip(ApplyPatch.applyHunks("a\n\ufeffb\n", "@@\n-b\n+B\n", "f"))
      assert.strictEqual(feff.description, "hunk 1 does not apply: its lines (from \"b\") are not in the file")
      // the patch's markers too: a "*** End Patch" followed by U+0085 ends the patch, one followed by U+FEFF does not
      const root = workspace()
      writeFileSync(join(root, "a.txt"), "a\n")
      assert.strictEqual(
        yield* ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch\u0085"),
        "updated a.txt"
      )
      const unended = yield* Effect.flip(ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\ufeff"))
      assert.strictEqual(unended.message, "a patch starts with \"*** Begin Patch\" and ends with \"*** End Patch\"")
      assert.isFalse(existsSync(join(root, "b.txt")))
    }))

  it.effect("concurrent patches of one file through roots nested in one another all land (one lock per file)", () =>
    Effect.gen(function*() {
      const root = workspace()
      const sub = join(root, "sub")
      mkdirSync(sub)
      writeFileSync(join(sub, "f.txt"), Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(""))
      const edit = (i: number) => `@@\n-line ${i}\n+LINE ${i}\n`
      const patch = (path: string, i: number) => `*** Begin Patch\n*** Update File: ${path}\n${edit(i)}*** End Patch`
      yield* Effect.all([
        ApplyPatch.applyPatchText(root, patch("sub/f.txt", 1)),
        ApplyPatch.applyPatchText(sub, patch("f.txt", 2)),
        ApplyPatch.applyChange(root, { type: "update_file", path: "sub/f.txt", diff: edit(3) }),
        ApplyPatch.applyChange(sub, { type: "update_file", path: "f.txt", diff: edit(4) }),
        ApplyPatch.handler({ root: sub })(
          new Part.ApplyPatchCallPart({ callId: "n5", operation: { type: "update_file", path: "./f.txt", diff: edit(5) } })
        ),
        ApplyPatch.applyPatchText(root, patch("sub/../sub/f.txt", 6))
      ], { concurrency: "unbounded" })
      const text = readFileSync(join(sub, "f.txt"), "utf8")
      assert.deepStrictEqual([1, 2, 3, 4, 5, 6].filter((i) => !text.includes(`LINE ${i}\n`)), [])
      // a whole patch of two files and one of them alone, at once through both roots: no edit lost, no wait
      // for each other forever (the locks are taken in one order)
      writeFileSync(join(root, "g.txt"), "g\n")
      const both = `*** Begin Patch\n*** Update File: g.txt\n@@\n-g\n+G\n*** Update File: sub/f.txt\n${edit(7)}*** End Patch`
      const reversed = `*** Begin Patch\n*** Update File: sub/f.txt\n${edit(8)}*** Update File: g.txt\n@@\n+g2\n*** End Patch`
      yield* Effect.all([
        ApplyPatch.applyPatchText(root, both),
        ApplyPatch.applyPatchText(root, reversed),
        ApplyPatch.applyPatchText(sub, patch("f.txt", 9))
      ], { concurrency: "unbounded" })
      const after = readFileSync(join(sub, "f.txt"), "utf8")
      assert.deepStrictEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].filter((i) => !after.includes(`LINE ${i}\n`)), [])
      assert.includeMembers(readFileSync(join(root, "g.txt"), "utf8").split("\n"), ["G", "g2"])
    }))

  it.effect("concurrent patches of one file through two hard links all land (a lock per file, not per real path)", () =>
    Effect.gen(function*() {
      // the breaker's case: two names of one file have two real paths; the lock was keyed by real path, so
      // patches through the two names read the file together and lost edits (7 of 60 per run)
      const root = workspace()
      const count = 40
      writeFileSync(join(root, "f.txt"), Array.from({ length: count }, (_, i) => `line ${i}\n`).join(""))
      linkSync(join(root, "f.txt"), join(root, "hard.txt"))
      const edit = (i: number) => `@@\n-line ${i}\n+LINE ${i}\n`
      yield* Effect.all(
        Array.from({ length: count }, (_, i) => {
          const path = i % 2 === 0 ? "f.txt" : "hard.txt"
          return i % 3 === 0
            ? ApplyPatch.applyPatchText(root, `*** Begin Patch\n*** Update File: ${path}\n${edit(i)}*** End Patch`)
            : ApplyPatch.applyChange(root, { type: "update_file", path, diff: edit(i) })
        }),
        { concurrency: "unbounded" }
      )
      const text = readFileSync(join(root, "f.txt"), "utf8")
      assert.strictEqual(readFileSync(join(root, "hard.txt"), "utf8"), text)
      assert.deepStrictEqual(Array.from({ length: count }, (_, i) => i).filter((i) => !text.includes(`LINE ${i}\n`)), [])
    }))

  it.effect("an update queued while the file is created and one started after the create run one at a time", () =>
    Effect.gen(function*() {
      // the breaker's ap_lock_race.mjs: an Add of a.txt runs; an update started meanwhile keyed its lock by the
      // path (no file yet), one started after the Add by the file's inode, and the two ran together: one edit
      // answered "updated a.txt" and was lost (29 of 30 rounds). Now both take the path's key, and a change
      // whose keys changed before it held its locks takes them again.
      const body = Array.from({ length: 400 }, (_, i) => `line ${i}`)
      const add = `*** Begin Patch\n*** Add File: a.txt\n${body.map((line) => "+" + line).join("\n")}\n*** End Patch`
      const update = (i: number) => `*** Begin Patch\n*** Update File: a.txt\n@@\n-line ${i}\n+LINE ${i} edited\n*** End Patch`
      let lost = 0
      for (let round = 0; round < 20; round++) {
        const root = workspace()
        const created = yield* Effect.fork(ApplyPatch.applyPatchText(root, add))
        const early = yield* Effect.fork(Effect.either(ApplyPatch.applyPatchText(root, update(1))))
        yield* Fiber.join(created)
        const late = yield* Effect.fork(Effect.either(round % 2 === 0
          ? ApplyPatch.applyPatchText(root, update(300))
          : ApplyPatch.applyChange(root, { type: "update_file", path: "a.txt", diff: "@@\n-line 300\n+LINE 300 edited\n" })))
        // the early one may run before the Add and find no file (refused, nothing written): only an edit
        // answered as made counts
        const answers = [[yield* Fiber.join(early), 1], [yield* Fiber.join(late), 300]] as const
        const text = readFileSync(join(root, "a.txt"), "utf8")
        for (const [answer, line] of answers) {
          if (answer._tag === "Right" && !text.includes(`LINE ${line} edited\n`)) lost++
        }
      }
      assert.strictEqual(lost, 0)
    }))

  it.effect("a write under a directory link an earlier change of the patch deleted holds its file's lock: an update started meanwhile waits", () =>
    Effect.gen(function*() {
      // d a link to realdir; the patch deletes d, adds d/x.txt (a new directory d), writes other files, and
      // updates d/x.txt. Its locks were keyed from the disk, where d/x.txt is realdir/x.txt: an update of
      // d/x.txt started once d was a directory took no lock the patch held, ran beside it, and one of the two
      // edits, each answered as made, was lost
      const others = Array.from({ length: 50 }, (_, i) => `*** Add File: f${i}.txt\n+${i}\n`).join("")
      const patch = `*** Begin Patch\n*** Delete File: d\n*** Add File: d/x.txt\n+one\n${others}*** Update File: d/x.txt\n@@\n one\n+two\n*** End Patch`
      const update = "*** Begin Patch\n*** Update File: d/x.txt\n@@\n one\n+B\n*** End Patch"
      let lost = 0
      for (let round = 0; round < 5; round++) {
        const root = workspace()
        mkdirSync(join(root, "realdir"))
        symlinkSync("realdir", join(root, "d"))
        const patched = yield* Effect.fork(ApplyPatch.applyPatchText(root, patch))
        // the update starts as soon as d/x.txt is in the new directory d
        const file = join(root, "d", "x.txt")
        while (!(yield* Effect.promise(() => Fs.lstat(join(root, "d")).then((stats) => stats.isDirectory() && existsSync(file), () => false)))) {
          yield* Effect.yieldNow()
        }
        const updated = yield* Effect.either(ApplyPatch.applyPatchText(root, update))
        assert.strictEqual(yield* Fiber.join(patched), [`deleted d`, "created d/x.txt", ...Array.from({ length: 50 }, (_, i) => `created f${i}.txt`), "updated d/x.txt"].join("\n"))
        // the update may run on the file before the patch wrote its first line (refused): only an edit answered
        // as made counts
        const text = readFileSync(file, "utf8")
        if (!text.includes("two\n") || updated._tag === "Right" && !text.includes("B\n")) lost++
        assert.strictEqual(readdirSync(join(root, "realdir")).length, 0)
      }
      assert.strictEqual(lost, 0)
    }))

  it.effect("a move through a link and a delete of the link run one at a time: the move removes the entry it planned, under its lock", () =>
    Effect.gen(function*() {
      // the breaker's moverace.mjs: l.txt -> a.txt (or d -> realdir, moving d/x.txt) moved to m.txt while another
      // patch deletes the link. The move locked a.txt (realdir/x.txt) and m.txt, not the link it removes, and
      // removed the path as written, resolved again then: with the link gone, it failed after writing m.txt
      // ("cannot delete the file: ENOENT ... (its new content was written to m.txt)"), or both answered made
      // with realdir/x.txt still there (Fs.rm took the missing file as removed); a link removed while its
      // path was resolved refused the move with "too many symbolic links" (serially: "does not exist").
      // Only serial outcomes count as right: 7 of these 40 were not on the old code (moverace.mjs: 73 of 300).
      const wrong: Array<string> = []
      const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
      for (let round = 0; round < 20; round++) {
        for (const dir of [false, true]) {
          const root = workspace()
          if (dir) {
            mkdirSync(join(root, "realdir"))
            writeFileSync(join(root, "realdir", "x.txt"), "one\n")
            symlinkSync("realdir", join(root, "d"))
          } else {
            writeFileSync(join(root, "a.txt"), "one\n")
            symlinkSync("a.txt", join(root, "l.txt"))
          }
          const [move, del] = yield* Effect.all([
            Effect.either(ApplyPatch.applyPatchText(root, `*** Begin Patch\n*** Update File: ${dir ? "d/x.txt" : "l.txt"}\n*** Move to: m.txt\n@@\n+moved\n*** End Patch`)),
            Effect.zipRight(pause(round % 3), Effect.either(ApplyPatch.applyPatchText(root, `*** Begin Patch\n*** Delete File: ${dir ? "d" : "l.txt"}\n*** End Patch`)))
          ], { concurrency: "unbounded" })
          const moved = existsSync(join(root, "m.txt"))
          const left = existsSync(join(root, dir ? "realdir/x.txt" : "a.txt"))
          // serially: the move first (made; it removed l.txt, so the delete finds none, or realdir/x.txt, and d
          // is deleted), or the delete first (made; the move refused, as the file to update does not exist)
          const serial = move._tag === "Right"
            ? moved && left === !dir && (dir
              ? del._tag === "Right"
              : del._tag === "Left" && del.left.message === "l.txt: the file to delete does not exist")
            : del._tag === "Right" && !moved && left &&
              move.left.message === `${dir ? "d/x.txt" : "l.txt"}: the file to update does not exist`
          if (!serial) {
            const answer = (either: typeof move) => either._tag === "Left" ? either.left.message : either.right
            wrong.push(`${answer(move)} | ${answer(del)} | m.txt ${moved}, source ${left}`)
          }
        }
      }
      assert.deepStrictEqual(wrong, [])
    }))

  it.effect("a whole patch as Codex reads it: in a heredoc, Add File onto a file, no change or an empty update refused", () =>
    Effect.gen(function*() {
      const root = workspace()
      writeFileSync(join(root, "a.txt"), "a\n")
      // as a model writes it for a shell: Codex's lenient parser takes the patch inside
      assert.strictEqual(
        yield* ApplyPatch.applyPatchText(root, "<<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\nEOF\n"),
        "updated a.txt"
      )
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "b\n")
      assert.strictEqual(yield* ApplyPatch.applyPatchText(root, "<<EOF\n*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\nEOF"), "deleted a.txt")
      // *** Add File: onto an existing file replaces it
      writeFileSync(join(root, "c.txt"), "old\n")
      assert.strictEqual(
        yield* ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Add File: c.txt\n+new\n*** End Patch"),
        "created c.txt, replacing the file there"
      )
      assert.strictEqual(readFileSync(join(root, "c.txt"), "utf8"), "new\n")
      // a patch without a file section modifies nothing: an error, as Codex's "No files were modified."
      const empty = yield* Effect.flip(ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** End Patch"))
      assert.strictEqual(
        empty.message,
        "No files were modified: the patch has no \"*** Add File:\", \"*** Update File:\" or \"*** Delete File:\" section"
      )
      // an *** Update File: without a hunk (a move alone too) is refused when parsed, before any change
      const noHunk = yield* Effect.flip(
        ApplyPatch.applyPatchText(root, "*** Begin Patch\n*** Add File: d.txt\n+d\n*** Update File: c.txt\n*** Move to: e.txt\n\n*** End Patch")
      )
      assert.strictEqual(noHunk.message, "c.txt: the \"*** Update File:\" section has no hunk (no line after it before the next section)")
      assert.isFalse(existsSync(join(root, "d.txt")))
      assert.strictEqual(readFileSync(join(root, "c.txt"), "utf8"), "new\n")
    }))

  it.effect("delete_file of a symbolic link to outside the root removes the link, never its target", () =>
    Effect.gen(function*() {
      const root = workspace()
      const outside = workspace()
      writeFileSync(join(outside, "target.txt"), "secret\n")
      symlinkSync(join(outside, "target.txt"), join(root, "link.txt"))
      symlinkSync(outside, join(root, "dir"))
      assert.strictEqual(yield* ApplyPatch.applyChange(root, { type: "delete_file", path: "link.txt" }), "deleted link.txt")
      assert.isFalse(existsSync(join(root, "link.txt")))
      assert.strictEqual(readFileSync(join(outside, "target.txt"), "utf8"), "secret\n")
      // a directory link out of the root still stops the delete of what is behind it
      const through = yield* Effect.flip(ApplyPatch.applyChange(root, { type: "delete_file", path: "dir/target.txt" }))
      assert.strictEqual(through.message, "dir/target.txt: the path leads out of the workspace root")
      assert.strictEqual(readFileSync(join(outside, "target.txt"), "utf8"), "secret\n")
      // the link to the directory itself may go
      assert.strictEqual(yield* ApplyPatch.applyChange(root, { type: "delete_file", path: "dir" }), "deleted dir")
      assert.isTrue(existsSync(join(outside, "target.txt")))
    }))
})
