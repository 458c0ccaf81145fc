// The executable (bundled into dist/effect-responses.mjs by scripts/bundle.mjs). `effect-responses --version`
// is answered here, before anything else is read: Node's start and this file, well under 0.1 s of work.
// Everything else, `--help` included, runs the command line (`internal/main.ts`, a chunk of its own), whose
// verbs import their modules (the HTTP client and server, the decoders, the store) only when they run.
// `serve` first sets its V8 options (`internal/v8Flags.ts`), before any of that code is compiled.
import { setFlagsFromString } from "node:v8"
import { flagsFor } from "./internal/v8Flags.js"
import { VERSION } from "./internal/version.js"

if (process.argv.length === 3 && process.argv[2] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  for (const flag of flagsFor(process.argv.slice(2), process.execArgv)) setFlagsFromString(flag)
  await import("./internal/main.js")
}
