/**
 * Paths and contents of the recorded payloads in `fixtures`, read in place (the repository's unchanged copy;
 * see `fixtures/SOURCES.md` for sources and licenses).
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** The absolute path of a file under `fixtures`, e.g. `fixturePath("responses-sse/x.sse")`. */
export const fixturePath = (relative: string): string =>
  fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url))

/** The text of a file under `fixtures`. */
export const readFixture = (relative: string): string => readFileSync(fixturePath(relative), "utf8")

/** The recorded four-step `gpt-5.1-codex-max` calculator session (vercel/ai, Apache-2.0), line-JSON. */
export const MULTISTEP = "responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt"
