#!/usr/bin/env node
// Keeps the published packages' manifests and build configs in step with their sources:
// `exports` (one entry per public module in src/, `./internal/*` sealed), `files`, `sideEffects`,
// `repository`, `license` (and a copy of the root LICENSE, which npm ships), the internal dependency versions, and each package's `tsconfig.build.json`
// (a composite project referencing the packages it imports); and `.changeset/config.json`, whose one fixed group
// is every published package (they share one version while 0.x); and the CLI's version constant
// (`packages/cli/src/internal/version.ts`). It also fails when a module in src/ imports a
// package its manifest declares in neither `dependencies` nor `peerDependencies`.
//
//   node scripts/packages.mjs          rewrite what is out of step
//   node scripts/packages.mjs --check  exit 1 and name each file that is out of step (CI runs this)
import { readdirSync, readFileSync, writeFileSync, existsSync, statSync } from "node:fs"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const check = process.argv.includes("--check")
const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const dirs = rootManifest.workspaces.map((w) => w.slice("packages/".length))
const manifests = new Map(dirs.map((d) => [d, JSON.parse(readFileSync(join(root, "packages", d, "package.json"), "utf8"))]))
const published = dirs.filter((d) => manifests.get(d).private !== true)
const version = manifests.get("core").version
const stale = []
const undeclared = []

// Every package a module in src/ imports (bare specifiers, `node:` built-ins aside), so that each one is
// declared in `dependencies` or `peerDependencies`: a package that is only present because another one
// depends on it works in this workspace and with npm's hoisting, and fails under a strict installer.
const importedPackages = (dir) => {
  const names = new Set()
  for (const f of readdirSync(dir)) {
    const file = join(dir, f)
    if (statSync(file).isDirectory()) {
      for (const name of importedPackages(file)) names.add(name)
      continue
    }
    if (!f.endsWith(".ts")) continue
    // Lines of code only: a docstring's example may import a package this one does not depend on.
    const code = readFileSync(file, "utf8").split("\n").filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line)).join("\n")
    for (const [, spec] of code.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*"([^"]+)"/g)) {
      if (spec.startsWith(".") || spec.startsWith("node:")) continue
      const segments = spec.split("/")
      names.add(spec.startsWith("@") ? `${segments[0]}/${segments[1]}` : segments[0])
    }
  }
  return names
}

const write = (file, text) => {
  const current = existsSync(file) ? readFileSync(file, "utf8") : undefined
  if (current === text) return
  if (check) stale.push(file.slice(root.length))
  else writeFileSync(file, text)
}

const entry = (module) => ({
  types: `./dist/${module}.d.ts`,
  import: `./dist/${module}.js`,
  default: `./dist/${module}.js`
})

for (const dir of published) {
  const manifest = manifests.get(dir)
  const src = join(root, "packages", dir, "src")
  const modules = readdirSync(src)
    .filter((f) => f.endsWith(".ts") && f !== "index.ts" && f !== "bin.ts")
    .map((f) => f.slice(0, -3))
    .sort()
  const exports = { "./package.json": "./package.json", ".": entry("index") }
  for (const module of modules) exports[`./${module}`] = entry(module)
  exports["./internal/*"] = null
  const internal = new Set()
  for (const field of ["dependencies", "devDependencies"]) {
    for (const name of Object.keys(manifest[field] ?? {})) {
      if (name.startsWith("@effect-responses/")) {
        manifest[field][name] = version
        if (field === "dependencies") internal.add(name.slice("@effect-responses/".length))
      }
    }
  }
  for (const name of importedPackages(src)) {
    if (name === manifest.name) continue
    if (!(name in (manifest.dependencies ?? {})) && !(name in (manifest.peerDependencies ?? {}))) {
      undeclared.push(`packages/${dir} imports ${name}`)
    }
  }
  manifest.version = version
  manifest.license = "MIT"
  manifest.repository = {
    type: "git",
    url: "git+https://github.com/effect-responses/effect-responses.git",
    directory: `packages/${dir}`
  }
  manifest.sideEffects = []
  const own = ["dist", "src", "README.md", "CHANGELOG.md"]
  manifest.files = [...own, ...(manifest.files ?? []).filter((f) => !own.includes(f))]
  manifest.exports = exports
  // for tools that do not read `exports` (TypeScript's `moduleResolution: "node"`, the default with
  // `module: "commonjs"`): the root, and each module's declarations by its subpath (which the declarations
  // of the other packages import)
  manifest.main = "./dist/index.js"
  manifest.types = "./dist/index.d.ts"
  manifest.typesVersions = { "*": Object.fromEntries(modules.map((module) => [module, [`./dist/${module}.d.ts`]])) }
  const ordered = {}
  for (const key of ["name", "version", "description", "license", "repository", "type", "sideEffects", "files", "bin", "main", "types", "typesVersions", "exports", "scripts", "engines", "peerDependencies", "dependencies", "devDependencies"]) {
    if (key in manifest) ordered[key] = manifest[key]
  }
  for (const key of Object.keys(manifest)) if (!(key in ordered)) ordered[key] = manifest[key]
  write(join(root, "packages", dir, "package.json"), JSON.stringify(ordered, null, 2) + "\n")
  write(join(root, "packages", dir, "LICENSE"), readFileSync(join(root, "LICENSE"), "utf8"))

  const tsconfig = {
    extends: "../../tsconfig.build.base.json",
    compilerOptions: { rootDir: "src", outDir: "dist", tsBuildInfoFile: "build/tsconfig.build.tsbuildinfo" },
    include: ["src"],
    references: [...internal].sort().map((d) => ({ path: `../${d}/tsconfig.build.json` }))
  }
  write(join(root, "packages", dir, "tsconfig.build.json"), JSON.stringify(tsconfig, null, 2) + "\n")
}

// The command line's version, which `effect-responses --version` prints before it loads anything else.
write(
  join(root, "packages", "cli", "src", "internal", "version.ts"),
  `/**
 * The version of the command line, the package's \`version\` (written by \`scripts/packages.mjs\`, which keeps
 * it in step with \`package.json\`). A module of its own, importing nothing, so that the executable answers
 * \`--version\` before it loads anything else.
 *
 * @internal
 */
export const VERSION = ${JSON.stringify(manifests.get("cli").version)}
`
)

const changesets = {
  $schema: "https://unpkg.com/@changesets/config@3.1.4/schema.json",
  changelog: "@changesets/cli/changelog",
  commit: false,
  fixed: [published.map((d) => manifests.get(d).name)],
  linked: [],
  access: "public",
  baseBranch: "main",
  updateInternalDependencies: "patch",
  ignore: [],
  privatePackages: { version: false, tag: false }
}
write(join(root, ".changeset", "config.json"), JSON.stringify(changesets, null, 2) + "\n")

const build = { files: [], references: published.map((d) => ({ path: `packages/${d}/tsconfig.build.json` })) }
write(join(root, "tsconfig.build.json"), JSON.stringify(build, null, 2) + "\n")

if (undeclared.length > 0) {
  console.error(`undeclared dependencies (add them to dependencies or peerDependencies): ${undeclared.join(", ")}`)
  process.exit(1)
}
if (stale.length > 0) {
  console.error(`out of step with the sources (run node scripts/packages.mjs): ${stale.join(", ")}`)
  process.exit(1)
}
