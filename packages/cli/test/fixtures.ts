/**
 * Paths of the recorded payloads in `shared/fixtures`, read in place (never copied): `shared/` lies beside
 * the checkout (see `shared/fixtures/SOURCES.md` for sources and licenses).
 */
import { fileURLToPath } from "node:url"

/** The absolute path of a file under `shared/fixtures`. */
export const fixturePath = (relative: string): string =>
  fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url))
