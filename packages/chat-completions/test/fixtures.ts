/**
 * Paths and contents of the recorded payloads in `fixtures`, read in place (the repository's unchanged copy;
 * see `fixtures/SOURCES.md` for sources and licenses).
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** The absolute path of a file under `fixtures`, e.g. `fixturePath("chat-sse/x.sse")`. */
export const fixturePath = (relative: string): string =>
  fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url))

/** The text of a file under `fixtures`. */
export const readFixture = (relative: string): string => readFileSync(fixturePath(relative), "utf8")

/** UTF-8 bytes of a string. */
export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

/** The bytes of `data` cut at the given positions (out-of-range and repeated cuts ignored). */
export const splitAt = (data: Uint8Array, cuts: ReadonlyArray<number>): ReadonlyArray<Uint8Array> => {
  const positions = Array.from(new Set(cuts.filter((cut) => cut > 0 && cut < data.length))).sort((a, b) => a - b)
  const out: Array<Uint8Array> = []
  let start = 0
  for (const cut of positions) {
    out.push(data.subarray(start, cut))
    start = cut
  }
  out.push(data.subarray(start))
  return out
}

/** The recorded gpt-4o-mini tool call (pydantic-ai, MIT): one call, arguments in 5 fragments, usage chunk. */
export const TOOL_CALL_SSE = "chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse"
/** Its follow-up after the tool result (pydantic-ai, MIT): text deltas, usage chunk. */
export const TEXT_SSE = "chat-sse/pai-chat-gpt4omini-text-usage.sse"
