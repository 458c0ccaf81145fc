#!/usr/bin/env node
// Bundles the compiled CLI (dist/bin.js, written by `tsc -b`) and what it imports into ESM files:
// dist/effect-responses.mjs, which bin/effect-responses.mjs runs, and chunks beside it, dist/cli-*.mjs. Node then reads
// a few files instead of about a thousand modules (effect, @effect/cli, @effect/platform-node, undici).
// The code is split where the sources import on demand, so start-up reads only what it needs:
// - dist/effect-responses.mjs answers `--version` alone and imports the command line (`internal/main.js`);
// - the command line (@effect/cli, the verbs' declarations, the front end, `--help`) is one chunk group;
// - each verb's module (`Chat.js`, `Serve.js`, …) and what only it uses (undici and ws for the HTTP client
//   and server, the gateway, the decoders) is imported when the verb runs (`Cli.command`'s handlers);
// - the database drivers of `serve --store` only by `serve --store sqlite:…|postgres:…`.
// The library modules of this package (dist/*.js) stay unbundled and import `effect` as a peer dependency;
// only the executable carries its own copy.
// The licences of everything bundled are written to dist/THIRD_PARTY_LICENSES.md.
import * as esbuild from "esbuild"
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..")

// chunk names carry a content hash: clear the previous build's, or a package would ship stale chunks
// (dist/chunks/ is where an earlier layout put them)
rmSync(join(root, "dist/chunks"), { recursive: true, force: true })
for (const file of readdirSync(join(root, "dist"))) {
  if (file.startsWith("cli-") && file.endsWith(".mjs")) rmSync(join(root, "dist", file))
}

const result = await esbuild.build({
  entryPoints: [{ in: join(root, "dist/bin.js"), out: "effect-responses" }],
  outdir: join(root, "dist"),
  outExtension: { ".js": ".mjs" },
  // what the sources import on demand goes into chunks of its own (see above): the native
  // module of better-sqlite3 (a peer dependency installed by those who use SQLite) is loaded only by
  // `serve --store sqlite:…`
  splitting: true,
  // the chunks sit beside the entry, in dist/ as the modules they come from: a path a module finds from
  // its own `import.meta.url` (`Demo.recordingPath`, `../demo/…`) is then the same bundled or not
  chunkNames: "cli-[name]-[hash]",
  external: ["better-sqlite3", "pg-native", "pg-cloudflare"],
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  // whitespace and syntax minified (identifiers kept, so stack traces still name functions): Node parses
  // and compiles about half the bytes at start-up
  minifyWhitespace: true,
  minifySyntax: true,
  metafile: true,
  logLevel: "warning",
  // CommonJS dependencies (undici's) call `require`, which an ES module does not have.
  banner: { js: "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);" }
})

// One entry per bundled npm package: name, version, licence and licence text.
const packages = new Map()
for (const input of Object.keys(result.metafile.inputs)) {
  const at = input.lastIndexOf("node_modules/")
  if (at < 0) continue
  const rest = input.slice(at + "node_modules/".length).split("/")
  const name = rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]
  const dir = join(process.cwd(), input.slice(0, at + "node_modules/".length), name)
  if (packages.has(dir)) continue
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
  const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.md|\.txt)?$/i.test(f))
  packages.set(dir, {
    name: manifest.name,
    version: manifest.version,
    license: manifest.license ?? "see text",
    text: file !== undefined && existsSync(join(dir, file)) ? readFileSync(join(dir, file), "utf8").trim() : ""
  })
}
const sorted = [...packages.values()].sort((a, b) => a.name.localeCompare(b.name))
writeFileSync(
  join(root, "dist/THIRD_PARTY_LICENSES.md"),
  "# Third-party licences\n\n`dist/effect-responses.mjs` and its chunks (`dist/cli-*.mjs`) bundle these packages:\n\n" +
    sorted.map((p) => `## ${p.name} ${p.version} (${p.license})\n\n${p.text}\n`).join("\n")
)
