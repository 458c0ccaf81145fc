/**
 * Paths of the recorded payloads in `fixtures`, read in place (the repository's unchanged copy; see
 * `fixtures/SOURCES.md` for sources and licenses).
 */
import { fileURLToPath } from "node:url"

/** The absolute path of a file under `fixtures`. */
export const fixturePath = (relative: string): string =>
  fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url))

/** The absolute path of a capture written by hand for this package's tests (`test/captures/`). */
export const capturePath = (name: string): string => fileURLToPath(new URL(`./captures/${name}`, import.meta.url))
