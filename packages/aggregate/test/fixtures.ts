/**
 * The recorded Responses streams of `fixtures/responses-sse`, read in place (the repository's unchanged copy,
 * see `fixtures/README.md`). Sources and licenses (vercel/ai, Apache-2.0; pydantic-ai, MIT) are in
 * `fixtures/SOURCES.md`.
 */
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** The absolute path of a file under `fixtures`. */
export const fixturePath = (relative: string): string =>
  fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url))

/** The file names of every recorded Responses stream, sorted. */
export const recordings: ReadonlyArray<string> = readdirSync(fixturePath("responses-sse")).sort()

/** The bytes of a recording. */
export const recordingBytes = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(fixturePath(`responses-sse/${name}`)))

/** The JSON payloads (events) of a recording, raw SSE (`data:` lines) or line-JSON, `[DONE]` left out. */
export const recordedEvents = (name: string): ReadonlyArray<Record<string, unknown>> => {
  const text = readFileSync(fixturePath(`responses-sse/${name}`), "utf8")
  const payloads = name.endsWith(".sse")
    ? text.split(/\r?\n/).filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim())
    : text.split("\n").map((line) => line.trim()).filter((line) => line !== "")
  return payloads.filter((data) => data !== "[DONE]").map((data) => JSON.parse(data) as Record<string, unknown>)
}
