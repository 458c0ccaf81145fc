// The executable (bundled into dist/effect-responses.mjs by scripts/bundle.mjs). `effect-responses --version`
// is answered here, before anything else is read: Node's start and this file, well under 0.1 s of work.
// Everything else, `--help` included, runs the command line (`internal/main.ts`, a chunk of its own), whose
// verbs import their modules (the HTTP client and server, the decoders, the store) only when they run.
import { VERSION } from "./internal/version.js"

if (process.argv.length === 3 && process.argv[2] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  await import("./internal/main.js")
}
