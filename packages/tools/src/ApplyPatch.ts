/**
 * A reference handler for the `apply_patch` tool: applies the V4A diff format (the format of Codex's
 * `apply_patch`, and of the Responses `apply_patch_call` operations) to files under a root directory it
 * may not leave.
 *
 * - `create_file`: the diff's lines all start with `+`; the file is written with them (without the `+`),
 *   each ending with `\n`. A file already there is replaced, as Codex's `*** Add File:` does (the log says
 *   so: `created a.txt, replacing the file there`).
 * - `update_file`: the diff is a list of hunks. A line `@@` (optionally followed by a space and a line of
 *   context to find first, e.g. `@@ def main():`) starts a hunk; in a hunk a line starting with ` ` is
 *   context, `-` a line removed, `+` a line added; `*** End of File` anchors the hunk at the end of the file.
 *   Consecutive `@@` lines stack (V4A's way to reach a repeated function: `@@ class B:` then
 *   `@@     def m(self):`): each context is looked for after the one before, as OpenAI's `applyDiff`
 *   (openai-agents-js) reads them; Codex's parser refuses them. A diff without a hunk (empty, `@@` alone) or with a hunk without a line is refused, as Codex refuses
 *   it (a `failed` answer from `handler`; the file untouched). As Codex's
 *   `compute_replacements`, each hunk's old lines (context and removed) are found in the file as it was
 *   before the patch, from where the previous hunk's ended (a hunk never finds a line an earlier one added),
 *   and the replacements are made once all are found (a `@@` context before the previous hunk is refused, as
 *   Codex refuses it; the error says where it is); the search runs Codex's `seek_sequence` passes:
 *   exactly, then ignoring trailing whitespace, then surrounding whitespace (Rust's: U+0085 is whitespace,
 *   U+FEFF is not), then with typographic dashes, quotes and spaces read as ASCII (`say "hi" - ok` finds
 *   `say “hi” — ok`); a hunk ending in an empty context line that is not found is looked for again without
 *   it. As Codex's line-preserving update mode (`CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS`, the mode its
 *   end-to-end scenarios run in), context lines stay as the file has them (text and ending), a hunk of `+`
 *   lines only adds them at the very end of the file, and an `*** End of File` hunk is found only after the
 *   hunk before it (see `applyHunks`, with where OpenAI's `applyDiff` differs). The search takes time
 *   linear in the file's length and yields to the event loop every few milliseconds, so a tool call's
 *   timeout (an interruption) ends it. A `moveTo`
 *   (`*** Move to:`) writes the result there and removes the file (replacing a file already there, as Codex
 *   does); a move onto the file itself is a plain update.
 * - `delete_file`: the file is removed; a symbolic link is removed itself, never its target, so a link
 *   inside the root to a file outside it may be deleted (as Codex removes the path it is given); the
 *   directories the path goes through must still be inside the root.
 * - A whole patch (`*** Begin Patch` … `*** End Patch` with `*** Add File:`, `*** Update File:` (and
 *   `*** Move to:`), `*** Delete File:` sections) is what a Codex-style freeform `apply_patch` custom tool
 *   receives: `applyPatchText`. As Codex's parser, it may come wrapped in a heredoc (`<<'EOF'` … `EOF`),
 *   and an `*** Update File:` without a hunk or a patch without a section is an error.
 *
 * Line endings (`applyHunks`): an updated file keeps its lines' endings (`\r\n`, `\n`, a lone `\r`) and the
 * lines a hunk writes take the ending of the file's first line, so a CRLF file stays CRLF; the result ends
 * with a newline (a file without one gains it, as with Codex); a byte order mark at the start stays. The patch text and diffs may
 * use `\n` or `\r\n`; the `\r` belongs to no line.
 *
 * Only regular files are read or written: a named pipe, a socket, a device or a directory where a file is
 * read or written fails with `PatchError` before it is opened (reading a pipe would block), and the file is
 * opened so that one put there meanwhile cannot block either. A file to update must be UTF-8 text (a byte
 * order mark allowed): a binary file or one in another encoding (Latin-1) fails with `PatchError` and stays
 * as it is, as Codex refuses it; a delete reads nothing, so any file may be deleted.
 *
 * Paths are relative to the root; an absolute path, a path with `..` that leaves the root, a directory's
 * name (`a.txt/`), or one whose write would land outside the root through a symbolic link (dangling or
 * not) fails with `PatchError`, as does a hunk that does not apply (the message names the file and the
 * hunk). A change whose hunks or paths do not apply writes nothing (a move whose source cannot be removed
 * leaves the destination written, and says so). A whole patch (`applyPatchText`) is checked as a whole
 * before its first write, as Codex's agent verifies one (`maybe_parse_apply_patch_verified`) before applying
 * it: every change's new content is computed against the files as the changes before it leave them (a file
 * added then updated, or updated twice, in one patch; a symbolic link deleted or moved away is gone, so a
 * later `*** Add File:` of its name makes a regular file there, never one through the old link; a directory
 * an earlier change writes into is no file to write), and a missing file, a hunk that does not apply, a path
 * out of the root, a directory to delete or a file where a directory must be written in any change writes
 * nothing; only a file system call that fails midway (a disk full, a permission denied) leaves the changes
 * before it made, and the error lists them (`PatchError.applied`). A hard link in the root to a
 * file outside it is that file: an update or a create through it writes the file outside, as Codex does (no
 * path shows it; a delete or a move removes the name only). The checks are not
 * atomic with the writes: a process changing the root's links meanwhile is not guarded against. Running a
 * patch the model wrote is the application's decision: give it a root it may change.
 *
 * Concurrency: `applyChange`, `applyPatchText` and `handler` run one at a time on one file, whoever calls
 * them and whatever root they were given (a lock per file, by its real path and, once it exists, by its device
 * and inode too, the keys worked out again from the patch's plan once the locks are held and taken again if
 * a file changed meanwhile: through `root` and a root nested in it such as `root/sub`, a link to the root,
 * another spelling of the path, or a hard link to it, a file is one, a patch queued while the file is being
 * created and one started after it was take one lock, and a file written under a directory link an earlier
 * change of the patch deleted is locked where it is written, not in the link's old target): the
 * tool loop runs function and custom tool calls concurrently, and two patches of one file read together
 * would each write their own edit over the other's. A whole patch takes the locks of all the files it
 * touches before its first change and holds them until its last. Patches of other files run concurrently.
 *
 * @since 0.2.0
 */
import type { Part } from "@effect-responses/core"
import { type Budget, makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { constants as FsConstants, type Stats } from "node:fs"
import * as Fs from "node:fs/promises"
import * as NodePath from "node:path"
import { fileKey, fileKeys, withResolvedFileLocks } from "./internal/fileLock.js"

/**
 * A patch that cannot be applied: malformed, a hunk whose lines are not in the file, a file that exists
 * (create) or does not (update, delete), a path outside the root, a file to update that is not UTF-8 text,
 * a path that names no regular file (a named pipe, a socket, a device, a directory), or a file system call
 * that failed (a
 * permission denied, a directory where a file was expected, a missing root: the message names the error
 * code). `path` names the file when known. `applied`: when a file system call failed midway through a whole
 * patch (`applyPatchText`: every change is checked before the first write, so only a write or delete the
 * disk refuses can stop it there), the log lines of the changes already made, which stay made; the message
 * then starts with them: `updated a.py; then b.py: cannot write the file: EACCES (…)`.
 *
 * @since 0.2.0
 * @category errors
 */
export class PatchError extends Schema.TaggedError<PatchError>()("PatchError", {
  description: Schema.String,
  path: Schema.optional(Schema.String),
  applied: Schema.optional(Schema.Array(Schema.String))
}) {
  /**
   * `<path>: <description>`, after `<applied, joined by "; ">; then ` when changes were made before it.
   *
   * @since 0.2.0
   */
  override get message(): string {
    const failed = this.path === undefined ? this.description : `${this.path}: ${this.description}`
    return this.applied === undefined || this.applied.length === 0 ? failed : `${this.applied.join("; ")}; then ${failed}`
  }
}

/**
 * One file change of a whole patch.
 *
 * @since 0.2.0
 * @category models
 */
export type FileChange =
  | { readonly type: "create_file"; readonly path: string; readonly diff: string }
  | { readonly type: "update_file"; readonly path: string; readonly diff: string; readonly moveTo?: string | undefined }
  | { readonly type: "delete_file"; readonly path: string }

// ---------------------------------------------------------------------------------------------------------
// pure: hunks
// ---------------------------------------------------------------------------------------------------------

interface Hunk {
  /** The hunk's `@@ ` headers, in order (consecutive `@@` lines stack: each looked for after the one before). */
  readonly headers: Array<string>
  readonly oldLines: Array<string>
  readonly newLines: Array<string>
  /**
   * Where each context line (` `, or an empty line) is in `oldLines` and in `newLines`: the file's own line
   * stays there (Codex's `context_line_indices`), so a line found only once whitespace or dashes were
   * normalised keeps its text and ending.
   */
  readonly contexts: Array<readonly [old: number, new: number]>
  endOfFile: boolean
}

/**
 * Whether `code` (a UTF-16 code unit) is a character of Unicode's White_Space property, which Rust's
 * `str::trim` and `trim_end` strip (and so Codex's parser and `seek_sequence`): U+0009-U+000D, U+0020, U+0085,
 * U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. JavaScript's `trim` strips another
 * set: U+FEFF too, and not U+0085.
 */
const isWhiteSpace = (code: number): boolean =>
  code === 0x20 || (code >= 0x09 && code <= 0x0d) ||
  code >= 0x85 && (code === 0x85 || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000)

/** `text` without its trailing White_Space characters, as Rust's `str::trim_end`. */
const trimEnd = (text: string): string => {
  let end = text.length
  while (end > 0 && isWhiteSpace(text.charCodeAt(end - 1))) end--
  return end === text.length ? text : text.slice(0, end)
}

/** `text` without its leading and trailing White_Space characters, as Rust's `str::trim`. */
const trim = (text: string): string => {
  const end = trimEnd(text)
  let start = 0
  while (start < end.length && isWhiteSpace(end.charCodeAt(start))) start++
  return start === 0 ? end : end.slice(start)
}

/** The first line of a hunk: `@@` alone, or `@@ ` and a line of context (Codex's two markers). */
const isHunkStart = (line: string): boolean => line === "@@" || line.startsWith("@@ ")

/**
 * The hunks of an `update_file` diff, as Codex's parser (`parse_update_file_chunk`, in `parse_one_hunk`)
 * reads them, or the `PatchError` it would answer: see `applyHunks`.
 */
const parseHunks = (diff: string, path: string): Array<Hunk> | PatchError => {
  // an operation without a diff (its type says there is one; a handler may be given one that skipped the
  // schema) has no hunk either
  const lines = (typeof diff === "string" ? diff : "").split(/\r?\n/)
  if (lines.at(-1) === "") lines.pop()
  const hunks: Array<Hunk> = []
  const error = (index: number, description: string) =>
    new PatchError({ description: `line ${index + 1} of the diff ${description}`, path })
  // the hunk being read; undefined before the first and once one ended ("*** End of File", or a line that is
  // no hunk line: the next hunk's "@@")
  let current: Hunk | undefined
  let read = 0
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    if (line.startsWith("@@") && !isHunkStart(line)) {
      return error(index, `is no hunk header: "@@" is alone or followed by a space and a line of context ("@@ def f():"): ${JSON.stringify(line)}`)
    }
    if (current === undefined) {
      // between hunks blank lines are skipped
      if (trim(line) === "") continue
      if (isHunkStart(line)) {
        // the header as written, not trimmed (Codex's seek_sequence trims in its later passes); one of
        // whitespace only is none (Codex would look for a blank line)
        const header = line.slice(3)
        current = { headers: trim(header) === "" ? [] : [header], oldLines: [], newLines: [], contexts: [], endOfFile: false }
        hunks.push(current)
        read = 0
        continue
      }
      if (hunks.length > 0) {
        return error(
          index,
          `starts no hunk: after a hunk ends (at "*** End of File" or a line that starts with neither " ", "-" nor "+") ` +
            `the next starts with "@@" or "@@ <a line of context>": ${JSON.stringify(line)}`
        )
      }
      // the first hunk may start without "@@"
      current = { headers: [], oldLines: [], newLines: [], contexts: [], endOfFile: false }
      hunks.push(current)
      read = 0
    }
    if (line === "*** End of File") {
      if (read === 0) {
        return error(index, "ends a hunk that has no line (\"*** End of File\" follows the hunk's lines)")
      }
      current.endOfFile = true
      current = undefined
      continue
    }
    const marker = line[0]
    const text = line.slice(1)
    if (marker === " " || line === "") {
      current.contexts.push([current.oldLines.length, current.newLines.length])
      current.oldLines.push(text)
      current.newLines.push(text)
    } else if (marker === "-") {
      current.oldLines.push(text)
    } else if (marker === "+") {
      current.newLines.push(text)
    } else if (read === 0 && isHunkStart(line)) {
      // stacked anchors (V4A's way to reach a repeated function: "@@ class B:" then "@@     def m(self):"),
      // as OpenAI's applyDiff (readAnchors) reads them: the hunk's next header, looked for after the one
      // before; an "@@" alone adds none
      const header = line.slice(3)
      if (trim(header) !== "") current.headers.push(header)
      continue
    } else if (read === 0) {
      return error(index, `starts with neither " ", "-", "+" nor "@@ ": ${JSON.stringify(line)}`)
    } else {
      // the hunk ends here: the line starts the next one
      current = undefined
      index--
      continue
    }
    read++
  }
  if (current !== undefined && read === 0) {
    return error(lines.length - 1, `starts a hunk that has no line: ${JSON.stringify(lines.at(-1))}`)
  }
  if (hunks.length === 0) {
    return new PatchError({
      description: "the diff has no hunk: nothing to change (a hunk is \"@@\", then its context \" \", removed \"-\" and added \"+\" lines)",
      path
    })
  }
  return hunks
}

/**
 * A line as Codex's `seek_sequence` compares it in its last pass: trimmed (`trim`), its typographic dashes,
 * quotes and odd spaces made ASCII (U+2010-U+2015 and U+2212 `-`, U+2018-U+201B `'`, U+201C-U+201F `"`, U+00A0,
 * U+2002-U+200A, U+202F, U+205F and U+3000 a space).
 */
const normalise = (line: string): string =>
  trim(line)
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/[\u2018-\u201B]/g, "'")
    .replace(/[\u201C-\u201F]/g, "\"")
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, " ")

/**
 * The file's lines as each of `seek`'s passes compares them (its key of a line: the line; `trimEnd`; `trim`;
 * `normalise`), each list made once per `applyHunks`, when a pass first needs it.
 */
interface Keyed {
  readonly lines: ReadonlyArray<string>
  readonly passes: Array<ReadonlyArray<string> | undefined>
}

const PASSES: ReadonlyArray<(line: string) => string> = [(line) => line, trimEnd, trim, normalise]

const keysOf = (keyed: Keyed, pass: number, budget: Budget): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    if (pass === 0) return keyed.lines
    const made = keyed.passes[pass]
    if (made !== undefined) return made
    const key = PASSES[pass]!
    const keys: Array<string> = new Array(keyed.lines.length)
    for (let index = 0; index < keys.length; index++) {
      keys[index] = key(keyed.lines[index]!)
      if (budget.tick()) yield* yieldToIo
    }
    keyed.passes[pass] = keys
    return keys
  })

/**
 * Where `wanted` first occurs in `keys` at `from` or after, or -1: the first index a line-by-line comparison
 * from `from` on finds, found in one pass over `keys` (Knuth-Morris-Pratt over whole lines), so a file of
 * near repeats (100,000 lines `    }`, a hunk of 1,000 of them that is not there) costs its length, not its
 * length times the hunk's. Yields to the event loop as `budget` says.
 */
const firstMatch = (
  keys: ReadonlyArray<string>,
  wanted: ReadonlyArray<string>,
  from: number,
  budget: Budget
): Effect.Effect<number> =>
  Effect.gen(function*() {
    // border[i]: the length of the longest proper prefix of wanted[0..i] that ends it too
    const border = new Int32Array(wanted.length)
    for (let index = 1, length = 0; index < wanted.length; index++) {
      while (length > 0 && wanted[index] !== wanted[length]) length = border[length - 1]!
      if (wanted[index] === wanted[length]) length++
      border[index] = length
      if (budget.tick()) yield* yieldToIo
    }
    for (let index = from, length = 0; index < keys.length; index++) {
      while (length > 0 && keys[index] !== wanted[length]) length = border[length - 1]!
      if (keys[index] === wanted[length]) length++
      if (length === wanted.length) return index - length + 1
      if (budget.tick()) yield* yieldToIo
    }
    return -1
  })

/**
 * Where `pattern` starts in the file's lines, or -1, as Codex's `seek_sequence`: from `from` on, or with
 * `endOfFile` only at the end (at `lines.length - pattern.length`, wherever `from` is); four passes, each over
 * the whole range: lines equal, then equal but for trailing whitespace, then for surrounding whitespace
 * (Rust's `trim_end` and `trim`: `trimEnd`, `trim`), then once `normalise`d. An empty pattern is found at
 * `from`. The same index as Codex's window-by-window comparison, found in time linear in the file's length
 * (`firstMatch`), and cooperatively: the work yields to the event loop every few milliseconds (`budget`), so
 * other fibers run meanwhile and an interruption (a tool call's timeout) ends the search.
 */
const seek = (
  keyed: Keyed,
  pattern: ReadonlyArray<string>,
  from: number,
  endOfFile: boolean,
  budget: Budget
): Effect.Effect<number> =>
  Effect.gen(function*() {
    const lines = keyed.lines
    if (pattern.length === 0) return from
    if (pattern.length > lines.length) return -1
    // an End of File hunk is looked for at the end only, and not before the cursor (it would overlap the
    // hunk before it: Codex refuses that in its line-preserving mode)
    const start = endOfFile ? lines.length - pattern.length : from
    if (start < from) return -1
    for (let pass = 0; pass < PASSES.length; pass++) {
      const key = PASSES[pass]!
      if (endOfFile) {
        // one place to look at: its lines only
        if (pattern.every((line, offset) => key(lines[start + offset]!) === key(line))) return start
        continue
      }
      const at = yield* firstMatch(yield* keysOf(keyed, pass, budget), pattern.map(key), start, budget)
      if (at >= 0) return at
    }
    return -1
  })

/**
 * A file's lines without their endings, and each line's ending (`"\r\n"`, `"\n"`, `"\r"`, or `""` for a
 * last line without one): a line ends at `\r\n`, `\n` or a `\r` alone, as Codex's `SourceFile::parse`.
 */
const splitLines = (content: string): { readonly texts: Array<string>; readonly endings: Array<string> } => {
  // texts at the even places, the endings between them at the odd ones
  const parts = content.split(/(\r\n|\r|\n)/)
  const texts: Array<string> = []
  const endings: Array<string> = []
  for (let index = 0; index + 1 < parts.length; index += 2) {
    texts.push(parts[index]!)
    endings.push(parts[index + 1]!)
  }
  const last = parts.at(-1)!
  if (last !== "") {
    texts.push(last)
    endings.push("")
  }
  return { texts, endings }
}

/**
 * Applies the hunks of an `update_file` diff to a file's text and returns the new text. Fails with
 * `PatchError` naming the first hunk that does not apply (1-based) and its first old line.
 *
 * As Codex's `apply_patch` (`compute_replacements`, then `SourceFile::apply_replacements` in one pass):
 * every hunk is looked for in the file as it was before the patch, from a cursor that starts at its first
 * line and moves past each hunk found (past its `@@` header lines, then past its old lines), so a hunk never
 * finds a line an earlier hunk added; then the hunks' replacements are made, in the order of where they
 * start. A hunk's old lines (context and removed) are looked for in the four passes of Codex's
 * `seek_sequence`, each over the rest of the file before the next (lines equal; equal but for trailing
 * whitespace; for surrounding whitespace; trimmed with the dashes U+2010-U+2015 and U+2212 read as `-`, the
 * quotes U+2018-U+201B as `'` and U+201C-U+201F as `"`, and no-break and other odd spaces as a space), where
 * whitespace is what Rust's `trim` strips (Unicode's White_Space: U+0085 is, U+FEFF is not); a hunk marked
 * `*** End of File` is looked for at the end of the file only, and only at or after the cursor (one that
 * would overlap the hunk before it is refused); when not found and the last of its old lines is empty, it is
 * looked for again without it. A hunk with no context and no removed line (only `+` lines) adds them at the
 * very end of the file (after a final blank line too), whatever its `@@` header. A line ends at `\r\n`, `\n`
 * or a lone `\r`. The context lines of a hunk found stay as the file has them, text and ending (a line found
 * only once whitespace or punctuation was set aside keeps its own), and so does every line the patch leaves;
 * the lines it writes (the added ones) take the file's ending, the one of its first line (`\r\n` in a CRLF
 * file, `\n` in an empty file); the result ends with a newline (a last line without one gains it). A
 * context or a hunk not found after the cursor but before it fails saying where it is (`… not found after
 * line 3; it is at line 1, before it …`).
 *
 * These rules are Codex's line-preserving update mode (codex-rs `apply-patch`, `file_update.rs` and
 * `text_file.rs` at upstream main of 2026-08-22, `ApplyPatchFileUpdateMode::PreserveLineEndings`: the mode
 * its end-to-end scenarios run in; a feature flag, `apply_patch_preserve_line_endings`, off by default in
 * the CLI). Codex's default mode (`NormalizeToLf`) writes the file with `\n`, writes the patch's text for
 * context lines, puts a `+`-only hunk before a final blank line, and lets an End of File hunk overlap the one
 * before. OpenAI's `applyDiff` (openai-agents-js `utils/applyDiff.ts`) keeps the file's context lines too,
 * but takes a `@@` context it finds before the cursor as found (the cursor staying where it is: two hunks
 * both anchored at `@@ class Foo:` apply there, and fail here and with Codex) and one found nowhere as absent
 * (unless several are stacked), and inserts a `+`-only hunk at the cursor (after its context, after the
 * previous hunk, or at the start of the file); here, as with Codex, those are refused or go at the end.
 *
 * The diff is read as Codex's parser reads it (`parse_update_file_chunk`): a hunk starts with `@@` alone or
 * `@@ ` and a line of context, kept as written (not trimmed: the search's later passes trim it; one of
 * whitespace only is no header, where Codex would look for a blank line); the first hunk may start without
 * it. Unlike Codex's parser (which refuses a hunk without a line followed by another `@@`), consecutive
 * `@@` lines stack, as OpenAI's `applyDiff` (openai-agents-js, `readAnchors`) reads them: the hunk's
 * contexts are looked for in order, each after the line the one before was found at (`@@ class B:` then
 * `@@     def m(self):` reaches B's method, not A's); one not found there fails the hunk naming it and the
 * context before it (anchors out of order are refused, not looked for backwards); an `@@` alone among
 * them adds no context. A hunk ends at `*** End of File` or at a line that starts with neither ` `, `-` nor `+`, where the next
 * must start; blank lines between hunks are skipped. Fails with `PatchError` naming the line when the diff
 * has no hunk (an empty diff, blank lines only), a hunk has no line (`@@` alone, `@@ ctx` then
 * `*** End of File`), a line starting with `@@` is no marker (`@@foo`), or a line after a
 * hunk ended starts no hunk: an update with nothing in it is refused, not a rewrite of the file as it was.
 * The search finds what Codex's window-by-window comparison finds, in one pass over the file per pass of
 * `seek_sequence` (Knuth-Morris-Pratt over whole lines): a hunk of 1,000 lines of a file of 100,000 near
 * repeats that is not there took 44 s, now under a second. It yields to the event loop every 2 ms of work
 * (`@effect-responses/wire/Cooperative`), so other fibers run meanwhile and an interruption (a timeout)
 * ends it.
 *
 * Besides: a byte order mark at the start of the
 * file stays there (the hunks do not see it), and the diff's lines may end with `\r\n` (the `\r` is not part
 * of the line).
 *
 * @since 0.2.0
 * @category patches
 */
export const applyHunks = (content: string, diff: string, path: string): Effect.Effect<string, PatchError> =>
  Effect.suspend(() => {
    const hunks = parseHunks(diff, path)
    return hunks instanceof PatchError ? Effect.fail(hunks) : applyParsedHunks(content, hunks, path)
  })

/** `applyHunks` with the diff's hunks already parsed (`parseHunks`). */
const applyParsedHunks = (content: string, hunks: ReadonlyArray<Hunk>, path: string): Effect.Effect<string, PatchError> =>
  Effect.gen(function*() {
    // a byte order mark stays in front, out of the first line's text (where the search would not see it)
    const bom = content.startsWith("\ufeff") ? "\ufeff" : ""
    const { endings, texts: lines } = splitLines(content.slice(bom.length))
    const ending = endings[0] || "\n"
    // Codex's compute_replacements: each hunk found in the original lines, from a cursor
    const replacements: Array<{ readonly at: number; readonly count: number; readonly added: ReadonlyArray<string> }> = []
    let cursor = 0
    const keyed: Keyed = { lines, passes: [] }
    const budget = makeBudget()
    // where `pattern` is before the cursor, when it is not after it: said in the error (hunks apply in order)
    const before = (pattern: ReadonlyArray<string>) =>
      cursor === 0 ? Effect.succeed("") : Effect.map(seek(keyed, pattern, 0, false, budget), (at) =>
        at >= 0 && at < cursor
          ? ` after line ${cursor}; it is at line ${at + 1}, before it (a hunk is looked for after the hunk before ` +
            `it and after its own "@@" context: hunks apply in the order of the file)`
          : "")
    for (let index = 0; index < hunks.length; index++) {
      const hunk = hunks[index]!
      for (let anchor = 0; anchor < hunk.headers.length; anchor++) {
        const header = hunk.headers[anchor]!
        const at = yield* seek(keyed, [header], cursor, false, budget)
        if (at < 0) {
          return yield* new PatchError({
            description: anchor === 0
              ? `hunk ${index + 1} does not apply: context ${JSON.stringify(header)} not found` +
                (yield* before([header]))
              : `hunk ${index + 1} does not apply: context ${JSON.stringify(header)} not found after its context ` +
                `${JSON.stringify(hunk.headers[anchor - 1])} (line ${cursor}; stacked "@@" lines are looked for in order, ` +
                `each after the one before)`,
            path
          })
        }
        cursor = at + 1
      }
      if (hunk.oldLines.length === 0) {
        // a pure addition: at the very end of the file, after a final blank line too; the cursor stays
        replacements.push({ at: lines.length, count: 0, added: hunk.newLines })
        continue
      }
      let oldLines: ReadonlyArray<string> = hunk.oldLines
      let newLines: ReadonlyArray<string> = hunk.newLines
      let at = yield* seek(keyed, oldLines, cursor, hunk.endOfFile, budget)
      if (at < 0 && oldLines.at(-1) === "") {
        // a hunk ending in an empty context line (often the patch's blank line before the next section) is
        // looked for again without it
        oldLines = oldLines.slice(0, -1)
        if (newLines.at(-1) === "") newLines = newLines.slice(0, -1)
        at = yield* seek(keyed, oldLines, cursor, hunk.endOfFile, budget)
      }
      if (at < 0) {
        return yield* new PatchError({
          description: `hunk ${index + 1} does not apply: its lines (from ${JSON.stringify(hunk.oldLines[0] ?? "")}) are not in the file` +
            (hunk.endOfFile ? " at its end, after the hunk before it" : yield* before(oldLines)),
          path
        })
      }
      // the runs of removed and added lines between the context lines, which stay as they are in the file
      let oldStart = 0
      let newStart = 0
      for (const [old, added] of hunk.contexts) {
        // a trailing empty context line may have been dropped above
        if (old >= oldLines.length || added >= newLines.length) break
        if (old !== oldStart || added !== newStart) {
          replacements.push({ at: at + oldStart, count: old - oldStart, added: newLines.slice(newStart, added) })
        }
        oldStart = old + 1
        newStart = added + 1
      }
      if (oldStart !== oldLines.length || newStart !== newLines.length) {
        replacements.push({ at: at + oldStart, count: oldLines.length - oldStart, added: newLines.slice(newStart) })
      }
      cursor = at + oldLines.length
    }
    // Codex's SourceFile::apply_replacements: by where they start (a stable sort: two additions at one place
    // keep the patch's order), the file rebuilt in one pass; the lines left keep their endings, the lines
    // written take the file's
    replacements.sort((a, b) => a.at - b.at)
    const texts: Array<string> = []
    const ends: Array<string> = []
    let source = 0
    for (const { added, at, count } of replacements) {
      for (; source < at && source < lines.length; source++) {
        texts.push(lines[source]!)
        ends.push(endings[source]!)
      }
      source = Math.max(source, Math.min(at + count, lines.length))
      for (const text of added) {
        texts.push(text)
        ends.push(ending)
      }
    }
    for (; source < lines.length; source++) {
      texts.push(lines[source]!)
      ends.push(endings[source]!)
    }
    return bom + texts.map((line, index) => line + (ends[index] || ending)).join("")
  })

/**
 * The text of a created file from a `create_file` diff: each line without its leading `+`, each ending
 * with `\n` (also when the diff's lines end with `\r\n`, as Codex writes an added file). Fails with
 * `PatchError` on a line without it.
 *
 * @since 0.2.0
 * @category patches
 */
export const createdText = (diff: string, path: string): Effect.Effect<string, PatchError> =>
  Effect.suspend(() => {
    const lines = diff.split(/\r?\n/)
    if (lines.at(-1) === "") lines.pop()
    const out: Array<string> = []
    for (let index = 0; index < lines.length; index++) {
      const line = lines[index]!
      if (!line.startsWith("+")) {
        return Effect.fail(
          new PatchError({ description: `line ${index + 1} of a new file does not start with "+": ${JSON.stringify(line)}`, path })
        )
      }
      out.push(line.slice(1))
    }
    return Effect.succeed(out.length === 0 ? "" : out.join("\n") + "\n")
  })

/**
 * Parses a whole patch (`*** Begin Patch` … `*** End Patch`) into its file changes, in order; its lines may
 * end with `\n` or `\r\n` (the `\r` belongs to no line: an added file gets `\n` endings, as with Codex). As
 * Codex's lenient parser, a patch wrapped in a heredoc (a first line `<<EOF`, `<<'EOF'` or `<<"EOF"`, a last
 * line ending with `EOF`) is the patch inside. As Codex's parser, the envelope's lines and the section
 * headers may be padded with whitespace (` *** Begin Patch`, `  *** Update File: a.txt`; whitespace as Rust's
 * `trim` strips it: U+0085 is, U+FEFF is not), and an `*** Add File:` section's lines are those that follow
 * it starting with `+`. Fails with `PatchError` when the envelope or a section header is missing or unknown,
 * an `*** Update File:` section has no hunk (as Codex's "Update file hunk for path … is empty"; a
 * `*** Move to:` alone is none) or a hunk that does not parse (see `applyHunks`: checked here, so a patch
 * that does not parse changes nothing, as with Codex), or a blank line follows an `*** Add File:` section
 * (as Codex; it may be a line of the file whose `+` was left out). A blank line after `*** Begin Patch` or
 * a `*** Delete File:` line is skipped (Codex refuses the patch; nothing in it is unclear). A patch without
 * a section parses to no change (`applyPatchText` refuses it).
 *
 * @since 0.2.0
 * @category patches
 */
export const parsePatch = (text: string): Effect.Effect<ReadonlyArray<FileChange>, PatchError> =>
  Effect.map(parseChanges(text), ({ changes }) => changes)

/**
 * `parsePatch`, with the hunks of each update (parsed to check them) kept for `applyPatchText`, so that a
 * diff is parsed once.
 */
const parseChanges = (
  text: string
): Effect.Effect<{ readonly changes: ReadonlyArray<FileChange>; readonly hunks: ReadonlyMap<FileChange, ReadonlyArray<Hunk>> }, PatchError> =>
  Effect.suspend(() => {
    let lines = trim(text).split(/\r?\n/)
    const enveloped = (candidate: ReadonlyArray<string>) =>
      candidate.length > 0 && trim(candidate[0]!) === "*** Begin Patch" && trim(candidate.at(-1)!) === "*** End Patch"
    // as Codex's lenient parser: a patch wrapped in a heredoc (`<<'EOF'` … `EOF`), as a model writes it for a
    // shell, is the patch inside
    if (
      !enveloped(lines) && lines.length >= 4 && ["<<EOF", "<<'EOF'", "<<\"EOF\""].includes(lines[0]!) &&
      lines.at(-1)!.endsWith("EOF")
    ) {
      lines = lines.slice(1, -1)
    }
    if (!enveloped(lines)) {
      return Effect.fail(new PatchError({ description: "a patch starts with \"*** Begin Patch\" and ends with \"*** End Patch\"" }))
    }
    const changes: Array<FileChange> = []
    const hunksOf = new Map<FileChange, ReadonlyArray<Hunk>>()
    let index = 1
    // a section's lines: an added file's while they start with "+" (as Codex's parser reads them), an update's
    // up to the next line starting with "*** " (but "*** End of File")
    const body = (added: boolean): string => {
      const out: Array<string> = []
      while (
        index < lines.length - 1 &&
        (added ? lines[index]!.startsWith("+") : !lines[index]!.startsWith("*** ") || lines[index] === "*** End of File")
      ) {
        out.push(lines[index]!)
        index++
      }
      return out.length === 0 ? "" : out.join("\n") + "\n"
    }
    // the path of the section just read when it was an "*** Add File:" one
    let added: string | undefined
    while (index < lines.length - 1) {
      // as Codex's parser: a section header may be padded with whitespace ("  *** Update File: a.txt")
      const line = trim(lines[index]!)
      index++
      if (line === "" && added !== undefined) {
        // as Codex's parser; and a line of the new file whose "+" was left out would be lost unseen
        return Effect.fail(
          new PatchError({
            description: `a blank line follows the "*** Add File: ${added}" section: each line of a new file starts with "+" ` +
              `(an empty one is "+" alone), and no blank line separates sections`
          })
        )
      }
      added = undefined
      if (line.startsWith("*** Add File: ")) {
        added = trim(line.slice("*** Add File: ".length))
        changes.push({ type: "create_file", path: added, diff: body(true) })
      } else if (line.startsWith("*** Delete File: ")) {
        changes.push({ type: "delete_file", path: trim(line.slice("*** Delete File: ".length)) })
      } else if (line.startsWith("*** Update File: ")) {
        const path = trim(line.slice("*** Update File: ".length))
        let moveTo: string | undefined
        if (lines[index]?.startsWith("*** Move to: ")) {
          moveTo = trim(lines[index]!.slice("*** Move to: ".length))
          index++
        }
        const diff = body(false)
        if (trim(diff) === "") {
          // as Codex's parser ("Update file hunk for path '…' is empty"): a move alone is no update either
          return Effect.fail(
            new PatchError({ description: "the \"*** Update File:\" section has no hunk (no line after it before the next section)", path })
          )
        }
        // a malformed hunk fails the patch before its first change, as Codex parses all of it first
        const hunks = parseHunks(diff, path)
        if (hunks instanceof PatchError) return Effect.fail(hunks)
        const change: FileChange = { type: "update_file", path, diff, moveTo }
        changes.push(change)
        hunksOf.set(change, hunks)
      } else if (line !== "") {
        return Effect.fail(new PatchError({ description: `unexpected line in the patch: ${JSON.stringify(line)}` }))
      }
      // a blank line after "*** Begin Patch" or a "*** Delete File:" line is skipped: Codex refuses the patch
      // ("'' is not a valid hunk header") though nothing in it is unclear
    }
    return Effect.succeed({ changes, hunks: hunksOf })
  })

// ---------------------------------------------------------------------------------------------------------
// files
// ---------------------------------------------------------------------------------------------------------

/**
 * Where a write to the absolute path `file` lands: its symbolic links followed, dangling ones too (by the
 * text of the link, as `open` would create the file it names), and a missing part appended to the real path
 * of its deepest existing ancestor. `undefined` after 40 links (a loop).
 */
const landing = (file: string): Effect.Effect<string | undefined> =>
  Effect.promise(async () => {
    let current = file
    for (let hop = 0; hop < 40; hop++) {
      const real = await Fs.realpath(current).catch(() => undefined)
      if (real !== undefined) return real
      // the deepest entry that exists (lstat: a dangling link exists), and the missing rest below it
      let existing = current
      let rest: Array<string> = []
      while ((await Fs.lstat(existing).catch(() => undefined)) === undefined) {
        const parent = NodePath.dirname(existing)
        if (parent === existing) return current
        rest = [NodePath.basename(existing), ...rest]
        existing = parent
      }
      const realExisting = await Fs.realpath(existing).catch(() => undefined)
      if (realExisting !== undefined) return NodePath.join(realExisting, ...rest)
      // a link that does not resolve: follow it one step by its text
      const link = await Fs.readlink(existing).catch(() => undefined)
      // no longer a link (removed or replaced since the lstat): looked at again
      if (link === undefined) continue
      current = NodePath.join(NodePath.resolve(NodePath.dirname(existing), link), ...rest)
    }
    return undefined
  })

/**
 * Where a write to the absolute path `file` lands for a change planned after those in `plan` (see
 * `Plan`), as `landing` finds it on the disk but with the earlier changes of the patch made: its parts
 * resolved one by one, symbolic links followed (dangling ones by their text), and an entry an earlier change
 * removed (a deleted or moved-away link) is gone, so the path ends there (a write creates a regular file
 * there, not one through the old link); a file an earlier change wrote is a regular file; a directory an
 * earlier write created is one. `gone`: the path goes through or ends at an entry an earlier change removed,
 * so what the disk has at or below it is not there (only the plan's writes are). `undefined` after 40
 * links (a loop).
 */
const landingIn = (
  plan: Plan,
  file: string
): Effect.Effect<{ readonly real: string; readonly gone: boolean } | undefined> =>
  Effect.promise(async () => {
    let pending = file.split(NodePath.sep).filter((part) => part !== "")
    let current = NodePath.parse(file).root
    let gone = false
    let hops = 0
    while (pending.length > 0) {
      const name = pending.shift()!
      if (name === ".") continue
      if (name === "..") {
        current = NodePath.dirname(current)
        continue
      }
      const next = NodePath.join(current, name)
      const state = plan.byPath.get(next)
      if (typeof state === "string") return { real: NodePath.join(next, ...pending), gone }
      if (state === null) gone = true
      if (plan.directories.has(next)) {
        current = next
        continue
      }
      if (gone) return { real: NodePath.join(next, ...pending), gone }
      const stats = await Fs.lstat(next).catch(() => undefined)
      if (stats === undefined) return { real: NodePath.join(next, ...pending), gone }
      if (stats.isSymbolicLink()) {
        if (++hops > 40) return undefined
        const link = await Fs.readlink(next).catch(() => undefined)
        if (link === undefined) {
          // no longer a link (removed or replaced since the lstat): looked at again
          pending.unshift(name)
          continue
        }
        const target = NodePath.resolve(current, link)
        pending = [...target.split(NodePath.sep).filter((part) => part !== ""), ...pending]
        current = NodePath.parse(target).root
        continue
      }
      current = next
    }
    return { real: current, gone }
  })

/**
 * `path` under `root`, checked (see `resolveUnder`): `file` is the path itself, `real` where a write to it lands once symbolic links are followed (what a write
 * opens, so a dangling link's missing directories are created inside the root; two spellings of one file
 * have the same `real`).
 */
const locate = (
  root: string,
  path: string,
  plan?: Plan
): Effect.Effect<{ readonly file: string; readonly real: string; readonly gone: boolean }, PatchError> =>
  locateAs(root, path, false, plan)

/**
 * `path` under `root`, checked as `locate` does but for its last part: the entry itself in the real path of
 * its directory (which must be the root or inside it), a symbolic link and not where it points. What a delete
 * removes. With `plan`, as the changes planned before leave the files (`landingIn`).
 */
const locateEntry = (root: string, path: string, plan?: Plan): Effect.Effect<string, PatchError> =>
  Effect.map(locateAs(root, path, true, plan), ({ real }) => real)

const locateAs = (
  root: string,
  path: string,
  entry: boolean,
  plan?: Plan
): Effect.Effect<{ readonly file: string; readonly real: string; readonly gone: boolean }, PatchError> =>
  Effect.gen(function*() {
    if (path === "" || NodePath.isAbsolute(path)) {
      return yield* new PatchError({ description: "the path must be relative to the workspace root", path })
    }
    // "a.txt/", "dir/." or "dir/..": a directory's name, never a file's (resolving would drop the ending)
    if (/(?:^|\/)\.{0,2}$/.test(path)) {
      return yield* new PatchError({ description: "the path names a directory, not a file", path })
    }
    const realRoot = yield* fsCall(() => Fs.realpath(root), "cannot open the workspace root", path)
    const file = NodePath.resolve(realRoot, path)
    const inside = (candidate: string) => candidate.startsWith(realRoot + NodePath.sep)
    if (!inside(file)) return yield* new PatchError({ description: "the path leaves the workspace root", path })
    // where a write lands must be inside the root too: no symbolic link out of it, dangling or not (for an
    // entry: where its directory is); in a whole patch, with the changes planned before it made
    const target = entry ? NodePath.dirname(file) : file
    const landed = plan === undefined
      ? yield* Effect.map(landing(target), (real) => real === undefined ? undefined : { real, gone: false })
      : yield* landingIn(plan, target)
    if (landed === undefined) return yield* new PatchError({ description: "the path goes through too many symbolic links", path })
    if (!(inside(landed.real) || entry && landed.real === realRoot)) {
      return yield* new PatchError({ description: "the path leads out of the workspace root", path })
    }
    if (!entry) return { file, real: landed.real, gone: landed.gone }
    const real = NodePath.join(landed.real, NodePath.basename(file))
    return { file, real, gone: landed.gone || plan?.byPath.get(real) === null }
  })

/**
 * The absolute path of `path` under `root`, checked: `path` is relative, names a file (not `a.txt/`,
 * `dir/.` or `..`), stays under `root` once normalized, and does not lead out of `root` through a symbolic
 * link: where a write to it lands, its links followed (a dangling link by the path it names, as writing
 * through it would create that file), must be under `root`. Fails with `PatchError` otherwise.
 *
 * @since 0.2.0
 * @category files
 */
export const resolveUnder = (root: string, path: string): Effect.Effect<string, PatchError> =>
  Effect.map(locate(root, path), ({ file }) => file)

/**
 * A file system call whose failure (a missing file, a permission denied, a directory where a file was
 * expected) becomes a `PatchError` the model can read: `<what>: <code> (<message>)`. Uninterruptible: an
 * interruption (a tool call's timeout) waits for the call to end, so that a file's lock is never released
 * while a write or delete it started goes on underneath the next operation.
 */
const fsCall = <A>(run: () => Promise<A>, what: string, path: string): Effect.Effect<A, PatchError> =>
  Effect.uninterruptible(Effect.tryPromise({
    try: run,
    catch: (error) => {
      const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined
      const message = error instanceof Error ? error.message : String(error)
      return new PatchError({ description: `${what}: ${code === undefined ? message : `${code} (${message})`}`, path })
    }
  }))

const exists = (file: string) => Effect.promise(() => Fs.lstat(file).then(() => true, () => false))

/** What a file that is not a regular one is, in the words of a `PatchError`. */
const kindOf = (stats: Stats): string =>
  stats.isDirectory()
    ? "a directory"
    : stats.isFIFO()
    ? "a named pipe (FIFO)"
    : stats.isSocket()
    ? "a socket"
    : stats.isCharacterDevice() || stats.isBlockDevice()
    ? "a device"
    : "not a regular file"

const notRegular = (stats: Stats, path: string) =>
  new PatchError({ description: `the path names ${kindOf(stats)}, not a regular file: apply_patch changes regular files only`, path })

/**
 * Fails with `PatchError` when `file` exists (its links followed) and is not a regular file: a named pipe, a
 * socket or a device would block the read or write that opens it (in libuv's thread pool, whose four threads
 * every file system call of the process shares), a directory is not a file.
 */
const requireRegular = (file: string, path: string): Effect.Effect<void, PatchError> =>
  Effect.flatMap(
    Effect.promise(() => Fs.stat(file).catch(() => undefined)),
    (stats) => stats === undefined || stats.isFile() ? Effect.void : Effect.fail(notRegular(stats, path))
  )

// O_NONBLOCK: opening a named pipe put there after the check returns at once (no writer: reading it ends at
// once, no reader: ENXIO) instead of blocking; a regular file ignores it. (Both are 0 where undefined.)
const NON_BLOCKING = (FsConstants.O_NONBLOCK ?? 0) | (FsConstants.O_NOCTTY ?? 0)

/** `file`'s bytes, refused (`PatchError`) unless it is a regular file: checked before and after opening it. */
const readBytes = (file: string, path: string): Effect.Effect<Uint8Array, PatchError> =>
  Effect.zipRight(
    requireRegular(file, path),
    Effect.flatMap(
      fsCall(async () => {
        const handle = await Fs.open(file, FsConstants.O_RDONLY | NON_BLOCKING)
        try {
          const stats = await handle.stat()
          return stats.isFile() ? await handle.readFile() : stats
        } finally {
          await handle.close()
        }
      }, "cannot read the file", path),
      (read) => read instanceof Uint8Array ? Effect.succeed(read) : Effect.fail(notRegular(read, path))
    )
  )

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * The text of a file to update: its bytes as UTF-8 (a byte order mark kept), or a `PatchError` when they are
 * not UTF-8 (a binary file, Latin-1 text): decoding would replace them by U+FFFD, and writing the result back
 * would corrupt every such byte, on untouched lines too. Codex's `apply_patch` refuses them too (its
 * `read_to_string` fails on invalid UTF-8).
 */
const decodeText = (bytes: Uint8Array, path: string): Effect.Effect<string, PatchError> =>
  Effect.try({
    try: () => utf8.decode(bytes),
    catch: () =>
      new PatchError({
        description: "the file is not UTF-8 text (a binary file, or text in another encoding such as Latin-1): " +
          "apply_patch updates UTF-8 text files only; nothing was written",
        path
      })
  })

/**
 * Writes `text` (UTF-8) to `file`, its directories created: a regular file, created or truncated; anything
 * else is refused (`PatchError`) before opening it, and after opening it (opened without blocking, so a named
 * pipe put there meanwhile fails instead of hanging).
 */
const writeText = (file: string, text: string, path: string): Effect.Effect<void, PatchError> =>
  Effect.zipRight(
    requireRegular(file, path),
    Effect.flatMap(
      fsCall(async () => {
        await Fs.mkdir(NodePath.dirname(file), { recursive: true })
        // no O_TRUNC: what was opened is checked before it is emptied
        const handle = await Fs.open(file, FsConstants.O_WRONLY | FsConstants.O_CREAT | NON_BLOCKING, 0o666)
        try {
          const stats = await handle.stat()
          if (!stats.isFile()) return stats
          await handle.truncate(0)
          await handle.writeFile(text, "utf8")
          return undefined
        } finally {
          await handle.close()
        }
      }, "cannot write the file", path),
      (stats) => stats === undefined ? Effect.void : Effect.fail(notRegular(stats, path))
    )
  )
// unlink, not rm: rm takes a file gone since its lstat as removed; a file not there to remove is an error
const remove = (file: string, path: string) => fsCall(() => Fs.unlink(file), "cannot delete the file", path)

/**
 * Applies one file change under `root` and returns a one-line log of what it did (`created a.txt`,
 * `created a.txt, replacing the file there` (a create replaces a file there, as Codex's `*** Add File:`),
 * `updated a.txt`, `updated a.txt and moved it to b.txt`, `deleted a.txt` (a symbolic link is deleted
 * itself, wherever it points)). A `moveTo` that names the
 * updated file itself in another spelling (`./a.txt`, `sub/../a.txt`) is a plain update (`updated a.txt`);
 * one that names another existing file replaces it, as Codex's `apply_patch` does (`*** Move to:` writes
 * the destination whatever is there). Fails with `PatchError` when it does not apply (nothing written then)
 * or when the file system refuses (reading, writing or deleting the file: the error code and message; a
 * move whose source cannot be removed says that its new content was written to the destination).
 *
 * @since 0.2.0
 * @category files
 */
export const applyChange = (root: string, change: FileChange): Effect.Effect<string, PatchError> =>
  withResolvedFileLocks(
    lockKeys(root, change),
    Effect.map(planAll(root, [change]), ({ keys, run }) => ({ keys, run: Effect.map(run, (logs) => logs[0]!) }))
  )

/**
 * The keys of the locks a change is first given (`withResolvedFileLocks`'s guess), from the disk as it is:
 * of the files it reads or writes (an update's file and its move's destination, where a write lands; a
 * delete's entry), each its real path and, when a file is there, its device and inode (`fileKeys`: two hard
 * links to one file share a key, and so do a change that found no file and one that found the file created
 * meanwhile). The keys held when the change runs are its plan's (`planAll`, the same files as the changes
 * before it in the patch leave them), worked out once the locks are held. A path that does not resolve
 * (outside the root, a missing root) has none: the change fails on it before touching a file.
 */
const lockKeys = (root: string, change: FileChange): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(
    Effect.all(
      change.type === "delete_file"
        ? [Effect.flatMap(locateEntry(root, change.path), (real) => fileKeys(real, true))]
        : [
          Effect.flatMap(locate(root, change.path), ({ real }) => fileKeys(real, false)),
          ...(change.type === "update_file" && change.moveTo !== undefined
            ? [
              Effect.flatMap(locate(root, change.moveTo), ({ real }) => fileKeys(real, false)),
              Effect.flatMap(locateEntry(root, change.path), (real) => fileKeys(real, true))
            ]
            : [])
        ],
      { mode: "either" }
    ),
    (resolved) => resolved.flatMap((keys) => keys._tag === "Right" ? keys.right : [])
  )

/** One file system call of a planned change: a file written with its new text, or a path removed. */
type Step =
  | { readonly _tag: "write"; readonly file: string; readonly text: string; readonly path: string }
  | { readonly _tag: "remove"; readonly file: string; readonly path: string }

/** A change computed and checked against the files (and the changes planned before it): what to do. */
interface Planned {
  readonly log: string
  readonly steps: ReadonlyArray<Step>
}

/**
 * What the changes of a whole patch planned so far do to the files: a later change of the patch sees these,
 * not the disk, and its paths are resolved against them (`landingIn`: an entry removed is gone, so a deleted
 * link is not followed by a later write at its path).
 */
class Plan {
  /**
   * By absolute path: the text written there (at a write's real path), or `null` where an entry was removed
   * (a delete's entry, a move's source).
   */
  readonly byPath = new Map<string, string | null>()
  /**
   * By device and inode (`fileKey`): the text written to a file that was on disk at its path and not removed
   * by an earlier change. A write lands in the file already there (`writeText` truncates it in place), so
   * every hard link of it sees the text.
   */
  readonly byInode = new Map<string, string>()
  /** The real paths written that are new files (removed, or reached through a removed entry, before): not in `byInode`. */
  readonly fresh = new Set<string>()
  /** The directories a write of the patch goes into (created if missing): a later write there is refused. */
  readonly directories = new Set<string>()
  /**
   * The files the changes read, write or remove, where their paths lead with the changes before them made
   * (a delete's `entry`, not followed; `gone`: a new file, whatever the disk has there): whose locks the
   * patch must hold (`planAll`). A change that fails is in it from the paths it resolved.
   */
  readonly files: Array<{ readonly real: string; readonly entry: boolean; readonly gone: boolean }> = []
}

/** The device and inode of the file on disk at `real` (symbolic links followed), if one is there. */
const inodeOf = (real: string): Effect.Effect<string | undefined> =>
  Effect.map(fileKey(real, false), (key) => key === real ? undefined : key)

/**
 * What is at a path for a change planned after those in `plan`: a text, `null` (removed), or `undefined`
 * (ask the disk). A file on disk written by an earlier change through another hard link has that text.
 */
const seen = (plan: Plan, entry: string, real: string): Effect.Effect<string | null | undefined> => {
  const atPath = plan.byPath.get(entry) === null ? null : plan.byPath.get(real)
  if (atPath === null || plan.fresh.has(real)) return Effect.succeed(atPath)
  return Effect.map(inodeOf(real), (inode) => (inode === undefined ? undefined : plan.byInode.get(inode)) ?? atPath)
}

/**
 * Records in `plan` that `text` is written to `real` (and to every hard link of the file there, unless
 * `gone`: the path went through a removed entry, so the file is a new one), and that its directories are.
 */
const recordWrite = (plan: Plan, real: string, text: string, gone: boolean): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let directory = NodePath.dirname(real); !plan.directories.has(directory); directory = NodePath.dirname(directory)) {
      plan.directories.add(directory)
      if (NodePath.dirname(directory) === directory) break
    }
    // a path through or at a removed entry: the disk's file there (an old link's target) is not this one
    if (gone || plan.byPath.get(real) === null) plan.fresh.add(real)
    plan.byPath.set(real, text)
    if (plan.fresh.has(real)) return
    const inode = yield* inodeOf(real)
    if (inode !== undefined) plan.byInode.set(inode, text)
  })

/**
 * Fails with `PatchError` when a write to `real` could not create its directories: an ancestor of it that is
 * a file (on disk, or written by an earlier change of the patch); a removed one (`plan`) does not count.
 */
const requireDirectories = (real: string, path: string, plan: Plan): Effect.Effect<void, PatchError> =>
  Effect.promise(async () => {
    for (let directory = NodePath.dirname(real); ; directory = NodePath.dirname(directory)) {
      const state = plan.byPath.get(directory)
      if (typeof state === "string") return directory
      if (state === undefined) {
        const stats = await Fs.stat(directory).catch(() => undefined)
        if (stats !== undefined) return stats.isDirectory() ? undefined : directory
      }
      if (NodePath.dirname(directory) === directory) return undefined
    }
  }).pipe(Effect.flatMap((blocking) =>
    blocking === undefined ? Effect.void : Effect.fail(
      new PatchError({
        description: `cannot write the file: ENOTDIR (${blocking} is a file, not a directory)`,
        path
      })
    )
  ))

/**
 * Computes and checks one change without writing anything: the file to update or delete exists (on disk, or
 * left by an earlier change of the patch in `plan`), is a regular file (a delete: not a directory) and an
 * update's is UTF-8 text whose hunks all apply, each write's target is no pipe, socket, device or directory
 * and its directories can be created, every path stays in the root. Records in `plan` what the change
 * does. `hunks`: the update's diff already parsed (`parseChanges`), else it is parsed here.
 */
const planChange = (
  root: string,
  change: FileChange,
  plan: Plan,
  hunks?: ReadonlyArray<Hunk>
): Effect.Effect<Planned, PatchError> =>
  Effect.gen(function*() {
    if (change.type === "delete_file") {
      // the entry itself, a symbolic link and never its target (as Codex removes the path it is given): only
      // the directories it is in must be inside the root
      const { gone, real: entry } = yield* locateAs(root, change.path, true, plan)
      plan.files.push({ real: entry, entry: true, gone })
      if (plan.directories.has(entry)) {
        return yield* new PatchError({ description: "the path names a directory, not a file: apply_patch deletes files only", path: change.path })
      }
      const state = plan.byPath.get(entry) ?? (gone ? null : undefined)
      if (state === null) return yield* new PatchError({ description: "the file to delete does not exist", path: change.path })
      if (state === undefined) {
        const stats = yield* Effect.promise(() => Fs.lstat(entry).catch(() => undefined))
        if (stats === undefined) return yield* new PatchError({ description: "the file to delete does not exist", path: change.path })
        if (stats.isDirectory()) {
          return yield* new PatchError({ description: "the path names a directory, not a file: apply_patch deletes files only", path: change.path })
        }
      }
      plan.byPath.set(entry, null)
      return { log: `deleted ${change.path}`, steps: [{ _tag: "remove", file: entry, path: change.path }] }
    }
    const { file, gone, real } = yield* locate(root, change.path, plan)
    plan.files.push({ real, entry: false, gone })
    // the entry, to see an earlier removal of it; a path whose directory leads out of the root through a
    // link that leads back in (its file is inside) has none there, and is looked up by where it lands
    const entry = yield* Effect.orElseSucceed(locateEntry(root, change.path, plan), () => real)
    // a path through a removed entry (a deleted link, a directory link too) has only what the patch wrote
    const state = gone ? plan.byPath.get(real) ?? null : yield* seen(plan, entry, real)
    // a directory an earlier write of the patch went into (Add d/x.txt, then Add d) is no file
    const requireNoDirectory = (at: string, path: string) =>
      plan.directories.has(at)
        ? Effect.fail(
          new PatchError({ description: "the path names a directory, not a regular file: apply_patch changes regular files only", path })
        )
        : Effect.void
    yield* requireNoDirectory(real, change.path)
    switch (change.type) {
      case "create_file": {
        // a file there is replaced, as Codex's *** Add File: writes whatever is there (a directory, a pipe:
        // refused)
        const text = yield* createdText(change.diff, change.path)
        const replaced = state === undefined ? yield* exists(file) : state !== null
        if (state === undefined) yield* requireRegular(real, change.path)
        yield* requireDirectories(real, change.path, plan)
        yield* recordWrite(plan, real, text, gone)
        return {
          log: replaced ? `created ${change.path}, replacing the file there` : `created ${change.path}`,
          steps: [{ _tag: "write", file: real, text, path: change.path }]
        }
      }
      case "update_file": {
        // read where the path led when planned (`real`, under its lock), not re-resolved: a directory link on
        // the way deleted meanwhile does not move the file
        if (state === null || state === undefined && !(yield* exists(real))) {
          return yield* new PatchError({ description: "the file to update does not exist", path: change.path })
        }
        const content = state ?? (yield* decodeText(yield* readBytes(real, change.path), change.path))
        const text = yield* (hunks === undefined
          ? applyHunks(content, change.diff, change.path)
          : applyParsedHunks(content, hunks, change.path))
        const destination = change.moveTo === undefined ? undefined : yield* locate(root, change.moveTo, plan)
        if (destination !== undefined) plan.files.push({ real: destination.real, entry: false, gone: destination.gone })
        // a move onto the file itself ("./a.txt", "sub/../a.txt" for "a.txt", a link to it) is a plain
        // update: writing the destination then removing the source would remove the only copy
        if (change.moveTo !== undefined && destination !== undefined && destination.real !== real) {
          yield* requireNoDirectory(destination.real, change.moveTo)
          const there = plan.byPath.get(destination.real)
          if (there === undefined && !destination.gone) yield* requireRegular(destination.real, change.moveTo)
          yield* requireDirectories(destination.real, change.moveTo, plan)
          yield* recordWrite(plan, destination.real, text, destination.gone)
          plan.byPath.set(entry, null)
          // the entry it removes (a link itself, in its directory's real path) is locked too, and removed as
          // planned: the path resolved again when the step runs could lead elsewhere (its link deleted meanwhile)
          plan.files.push({ real: entry, entry: true, gone })
          return {
            log: `updated ${change.path} and moved it to ${change.moveTo}`,
            steps: [
              { _tag: "write", file: destination.real, text, path: change.moveTo },
              { _tag: "remove", file: entry, path: change.path }
            ]
          }
        }
        yield* recordWrite(plan, real, text, gone)
        return { log: `updated ${change.path}`, steps: [{ _tag: "write", file: real, text, path: change.path }] }
      }
    }
  })

/**
 * Plans `changes` in order (`planChange`, each against the files as the changes before it leave them), and
 * the keys of the locks it needs: of every file in the plan (`Plan.files`), its real path and, unless it is a
 * new file (`gone`), its device and inode when a file is there (`fileKeys`). `run` makes the changes, or fails
 * with the first change's `PatchError` that did not plan.
 */
const planAll = (
  root: string,
  changes: ReadonlyArray<FileChange>,
  hunks?: ReadonlyMap<FileChange, ReadonlyArray<Hunk>>
): Effect.Effect<{ readonly keys: ReadonlyArray<string>; readonly run: Effect.Effect<ReadonlyArray<string>, PatchError> }> =>
  Effect.gen(function*() {
    const plan = new Plan()
    const planned = yield* Effect.either(Effect.forEach(changes, (change) => planChange(root, change, plan, hunks?.get(change))))
    const keys = yield* Effect.forEach(plan.files, ({ entry, gone, real }) => gone ? Effect.succeed([real]) : fileKeys(real, entry))
    return { keys: keys.flat(), run: planned._tag === "Right" ? runPlanned(planned.right) : Effect.fail(planned.left) }
  })

/**
 * Makes the planned changes, in order: the file system calls only (everything was checked by `planChange`).
 * Uninterruptible: a tool call's timeout waits for the writes to end, so the model never gets a timeout for
 * a patch half written. A call that fails (a disk full, a permission denied, a file changed meanwhile)
 * stops it with a `PatchError` whose `applied` lists the changes already made, and for a move whose new
 * file was written the description says so.
 */
const runPlanned = (planned: ReadonlyArray<Planned>): Effect.Effect<ReadonlyArray<string>, PatchError> =>
  Effect.uninterruptible(Effect.gen(function*() {
    const applied: Array<string> = []
    for (const { log, steps } of planned) {
      for (let index = 0; index < steps.length; index++) {
        const step = steps[index]!
        const done = yield* Effect.either(step._tag === "write" ? writeText(step.file, step.text, step.path) : remove(step.file, step.path))
        if (done._tag === "Left") {
          const written = steps.slice(0, index).map((before) => before.path)
          return yield* new PatchError({
            description: written.length === 0
              ? done.left.description
              : `${done.left.description} (its new content was written to ${written.join(", ")})`,
            path: done.left.path,
            ...(applied.length === 0 ? {} : { applied: [...applied] })
          })
        }
      }
      applied.push(log)
    }
    return applied
  }))

/**
 * Applies a whole patch text under `root` (see `parsePatch`) and returns the log lines of its changes joined
 * by newlines. Every change is computed and checked before the first write, as Codex's agent verifies a
 * patch (`maybe_parse_apply_patch_verified`) before applying it: each one against the files as the changes
 * before it in the patch leave them (its paths resolved so too: a symbolic link deleted or moved away
 * earlier is gone, so an `*** Add File:` of its name writes a regular file there, not its old target); a change that fails there (a missing file to update or delete, a hunk
 * that does not apply, a path out of the root, a directory to delete, a pipe or a directory where a file is
 * written, a file where a directory is needed) fails the patch with its `PatchError` and nothing is written,
 * so the same patch sent again once the model fixed it applies each change once. Then the files are written
 * in order, uninterruptibly (a timeout waits for the writes); a write or delete the file system refuses
 * midway stops it with a `PatchError` whose `applied` lists the changes made before it (its message:
 * `updated a.py; then b.py: cannot write the file: …`). A patch without a change fails (`No files were
 * modified: …`, as Codex's). The locks of all the files of the patch are held from the first check to the
 * last write.
 *
 * Codex's `apply_patch` crate run alone (its executable, after the agent verified the patch) writes change
 * after change: its scenario `015_failure_after_partial_success_leaves_changes` keeps a file added before a
 * missing file to update; the agent, and this function, refuse that patch before writing.
 *
 * The handler of a freeform `apply_patch` custom tool (as Codex declares it): its typed failure is the
 * message the model reads, so the tool declares `failure: Schema.String` and the handler maps the error.
 *
 * ```ts
 * const FreeformApplyPatch = Tool.custom("apply_patch", {
 *   description: "Edit files: send a whole patch, from *** Begin Patch to *** End Patch.",
 *   failure: Schema.String
 * })
 * const Tools = Toolkit.make(FreeformApplyPatch)
 * const ToolsLive = Tools.toLayer({
 *   apply_patch: (input) => Effect.mapError(ApplyPatch.applyPatchText("/srv/workspace", input), (error) => error.message)
 * })
 * ```
 *
 * @since 0.2.0
 * @category files
 */
export const applyPatchText = (root: string, text: string): Effect.Effect<string, PatchError> =>
  Effect.flatMap(parseChanges(text), ({ changes, hunks }) =>
    changes.length === 0
      ? Effect.fail(
        new PatchError({
          description: "No files were modified: the patch has no \"*** Add File:\", \"*** Update File:\" or \"*** Delete File:\" section"
        })
      )
      : withResolvedFileLocks(
            Effect.map(Effect.forEach(changes, (change) => lockKeys(root, change)), (keys) => keys.flat()),
            // every change computed and checked (against the files and the changes before it) before the first
            // write, as Codex verifies a whole patch (maybe_parse_apply_patch_verified) before applying it
            Effect.map(planAll(root, changes, hunks), ({ keys, run }) => ({ keys, run: Effect.map(run, (logs) => logs.join("\n")) }))
          )
      )

/**
 * The handler of the `apply_patch` client tool (`Tool.applyPatch`) over `root`: applies the call's
 * operation and answers `completed` with the log, or `failed` with the `PatchError`'s message for the model
 * to read: a hunk that does not apply, a missing file, a permission denied. Its effect has no failure
 * (every `PatchError` is such an answer); a defect, a bug of this module, is not caught here (the tool loop
 * answers a dying handler with an error the model reads).
 *
 * ```ts
 * const Tools = Toolkit.make(Tool.applyPatch)
 * const ToolsLive = Tools.toLayer({ apply_patch: ApplyPatch.handler({ root: "/srv/workspace" }) })
 * ```
 *
 * @since 0.2.0
 * @category handlers
 */
export const handler = (options: { readonly root: string }) =>
(call: Part.ApplyPatchCallPart): Effect.Effect<{ readonly status: "completed" | "failed"; readonly output: string }> =>
  applyChange(options.root, call.operation).pipe(
    Effect.map((output) => ({ status: "completed" as const, output })),
    Effect.catchAll((error) => Effect.succeed({ status: "failed" as const, output: error.message }))
  )
