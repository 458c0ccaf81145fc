/**
 * Every TypeScript block of the READMEs (the root one and each package's) is an example file as it is:
 * the line before the block links to `examples/….ts`, and the block is that file's text. The files are
 * type-checked by `npm run check` (the root tsconfig.json includes `examples/`) and run by
 * `examples.test.ts`.
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

const root = new URL("../../", import.meta.url)
const readmes = [
  "README.md",
  ...readdirSync(new URL("packages/", root)).map((dir) => `packages/${dir}/README.md`).filter((path) => {
    try {
      readFileSync(new URL(path, root))
      return true
    } catch {
      return false
    }
  })
]

interface Block {
  readonly line: number
  readonly lead: string
  readonly text: string
}

/** The fenced TypeScript blocks of a Markdown text, each with the nearest non-empty line above it. */
const blocks = (markdown: string): ReadonlyArray<Block> => {
  const lines = markdown.split("\n")
  const found: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue
    const end = lines.indexOf("```", i + 1)
    expect(end, `the block at line ${i + 1} is closed`).toBeGreaterThan(i)
    let lead = i - 1
    while (lead >= 0 && lines[lead]!.trim() === "") lead--
    found.push({ line: i + 1, lead: lead >= 0 ? lines[lead]! : "", text: lines.slice(i + 1, end).join("\n") })
    i = end
  }
  return found
}

describe("package READMEs", () => {
  const published = readdirSync(new URL("packages/", root)).filter((dir) =>
    JSON.parse(readFileSync(new URL(`packages/${dir}/package.json`, root), "utf8")).private !== true
  )
  for (const dir of published) {
    it(`packages/${dir}: a README with the install line, an example and the link to the main README, shipped`, () => {
      const manifest = JSON.parse(readFileSync(new URL(`packages/${dir}/package.json`, root), "utf8"))
      const readme = readFileSync(new URL(`packages/${dir}/README.md`, root), "utf8")
      expect(readme.startsWith(`# ${manifest.name}\n`)).toBe(true)
      const install = /^npm install (?:-g )?(.*?)(?:\s+#.*)?$/m.exec(readme)?.[1]?.split(/\s+/) ?? []
      expect(install).toContain(manifest.name)
      // optional peers (a store's database driver) are installed by those who use them, not on the install line
      const optional = new Set(
        Object.entries(manifest.peerDependenciesMeta ?? {}).filter(([, meta]) => (meta as { optional?: boolean }).optional === true)
          .map(([name]) => name)
      )
      // each peer with the line of its range (`effect@3`): unpinned, npm installs the registry's latest
      const named = new Map(install.map((token) => [token.replace(/(?<=.)@[^/]*$/, ""), token]))
      for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) {
        if (optional.has(peer)) continue
        const major = /^\^(0\.\d+|\d+)/.exec(range as string)?.[1]
        expect(named.get(peer), `peer ${peer}`).toBe(`${peer}@${major}`)
      }
      expect(blocks(readme)).toHaveLength(1)
      expect(readme).toContain("https://github.com/effect-responses/effect-responses#readme")
      expect(manifest.files).toContain("README.md")
    })
  }
})

describe("README TypeScript blocks", () => {
  for (const readme of readmes) {
    it(`${readme}: every block is an example file, as written`, () => {
      const found = blocks(readFileSync(new URL(readme, root), "utf8"))
      if (readme === "README.md") expect(found.length).toBeGreaterThanOrEqual(8)
      for (const block of found) {
        const file = /examples\/[\w./-]+\.ts/.exec(block.lead)?.[0]
        expect(file, `${readme}:${block.line}: the line before the block links to its examples/ file`).toBeDefined()
        expect(block.text, `${readme}:${block.line} equals ${file}`).toBe(
          readFileSync(new URL(file!, root), "utf8").trimEnd()
        )
      }
    })
  }
})
