/**
 * Codex's own end-to-end scenarios for `apply_patch` (openai/codex, Apache-2.0: `codex-scenarios/`, see its
 * SOURCES.md), run through `ApplyPatch.applyPatchText`: each scenario's `input/` is copied to a temporary root,
 * its `patch.txt` applied there, and the root must then hold exactly what `expected/` holds (the same files with
 * the same bytes, the same directories), as Codex's `tests/suite/scenarios.rs` checks after running its
 * `apply_patch`, but for `VERIFIED_FIRST` (a patch Codex's agent refuses before writing). The patch must also succeed or fail as it does with Codex (`OUTCOMES`: the scenarios do not
 * record it; it is what Codex's `apply_patch` answers for each, as their names say). Codex runs them in its
 * line-preserving update mode (`CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS=1`): `023` and `024` (a CRLF file, and
 * one mixing `\r\n`, `\r` and `\n`) keep every line's ending but the written lines', which take the first
 * line's.
 */
import { ApplyPatch } from "@effect-responses/tools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const scenarios = fileURLToPath(new URL("codex-scenarios/scenarios/", import.meta.url))

/**
 * Whether Codex's `apply_patch` applies each scenario's patch (`true`) or answers an error (`false`): an empty
 * patch ("No files were modified"), context not found, a missing file to delete or update, an update without a
 * hunk, a directory to delete, an unknown section header, and a patch failing after its first change.
 */
const OUTCOMES: Record<string, boolean> = {
  "001_add_file": true,
  "002_multiple_operations": true,
  "003_multiple_chunks": true,
  "004_move_to_new_directory": true,
  "005_rejects_empty_patch": false,
  "006_rejects_missing_context": false,
  "007_rejects_missing_file_delete": false,
  "008_rejects_empty_update_hunk": false,
  "009_requires_existing_file_for_update": false,
  "010_move_overwrites_existing_destination": true,
  "011_add_overwrites_existing_file": true,
  "012_delete_directory_fails": false,
  "013_rejects_invalid_hunk_header": false,
  "014_update_file_appends_trailing_newline": true,
  "015_failure_after_partial_success_leaves_changes": false,
  "016_pure_addition_update_chunk": true,
  "017_whitespace_padded_hunk_header": true,
  "018_whitespace_padded_patch_markers": true,
  "019_unicode_simple": true,
  "020_delete_file_success": true,
  "020_whitespace_padded_patch_marker_lines": true,
  "021_update_file_deletion_only": true,
  "022_update_file_end_of_file_marker": true,
  "023_preserves_crlf_line_endings": true,
  "024_preserves_mixed_line_endings": true
}

/**
 * The scenarios whose `expected/` is what Codex's `apply_patch` crate leaves when run alone (its executable,
 * which writes change after change) but not what Codex does with a model's patch: Codex's agent first
 * verifies the whole patch against the files (`maybe_parse_apply_patch_verified`, in
 * `codex-rs/apply-patch/src/invocation.rs`: each file to update read and its new content computed, a file to
 * delete read) and answers a patch that fails there with an error, nothing written. `applyPatchText` does the
 * same, so for these the files after the patch are those before it (`input/`), and the patch fails.
 * `015`: an `*** Add File:` then an `*** Update File:` of a missing file; the crate's run alone leaves the
 * added file.
 */
const VERIFIED_FIRST: ReadonlySet<string> = new Set(["015_failure_after_partial_success_leaves_changes"])

/** Every file (its bytes, as hex) and directory under `root`, by relative path, as Codex's `snapshot_dir`. */
const snapshot = (root: string): Record<string, string> => {
  const entries: Record<string, string> = {}
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(root, relative), { withFileTypes: true })) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`
      if (entry.isDirectory()) {
        entries[path] = "dir"
        walk(path)
      } else if (entry.isFile()) {
        entries[path] = readFileSync(join(root, path)).toString("hex")
      }
    }
  }
  if (existsSync(root)) walk("")
  return entries
}

const names = readdirSync(scenarios, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
  .sort()

describe("Codex's apply_patch scenarios", () => {
  it("every scenario has an outcome", () => {
    assert.deepStrictEqual(names, Object.keys(OUTCOMES).sort())
  })

  for (const name of names) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const dir = join(scenarios, name)
        const root = mkdtempSync(join(tmpdir(), "codex-scenario-"))
        if (existsSync(join(dir, "input"))) cpSync(join(dir, "input"), root, { recursive: true })
        const result = yield* Effect.either(ApplyPatch.applyPatchText(root, readFileSync(join(dir, "patch.txt"), "utf8")))
        assert.deepStrictEqual(
          snapshot(root),
          snapshot(join(dir, VERIFIED_FIRST.has(name) ? "input" : "expected")),
          `${name}: the files after the patch`
        )
        assert.strictEqual(
          Either.isRight(result),
          OUTCOMES[name],
          `${name}: ${Either.isRight(result) ? `applied: ${result.right}` : `failed: ${result.left.message}`}`
        )
      }))
  }
})
