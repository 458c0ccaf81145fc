/**
 * The README's "Formats" section shows what the code reads and prints: its Prompt JSON decodes as a
 * `Prompt` (and keeps every field it sets when encoded again), and each block of StreamPart lines is a run of
 * consecutive lines `effect-responses decode` prints for the recording the text before it names.
 */
import * as Decode from "@effect-responses/cli/Decode"
import { Prompt } from "@effect-responses/core"
import { NodeContext } from "@effect/platform-node"
import { Effect, Logger, Stream } from "effect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = new URL("../../", import.meta.url)
const readme = readFileSync(new URL("README.md", root), "utf8")
const formats = readme.slice(readme.indexOf("## Formats\n"), readme.indexOf("\n## ", readme.indexOf("## Formats\n") + 1))

/** The fenced blocks of `lang` in `markdown`, each with the 400 characters of text before it. */
const blocks = (markdown: string, lang: string): ReadonlyArray<{ readonly before: string; readonly text: string }> =>
  [...markdown.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)\\n```", "g"))].map((match) => ({
    before: markdown.slice(Math.max(0, match.index - 400), match.index),
    text: match[1]!
  }))

/** What `decode` prints for the recording at `path`, and the messages it logs (the CLI's stderr). */
const decodeLines = (path: string): Promise<{ readonly printed: string; readonly logged: ReadonlyArray<string> }> => {
  const logged: Array<string> = []
  const logger = Logger.make(({ message }) => {
    logged.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  return Decode.lines(fileURLToPath(new URL(path, root))).pipe(
    Stream.runFold("", (out, lines) => out + lines),
    Effect.map((printed) => ({ printed, logged })),
    Effect.provide(NodeContext.layer),
    Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
    Effect.runPromise
  )
}

describe("README Formats", () => {
  it("the Prompt JSON decodes, one message per role, and encodes back with every field it sets", async () => {
    const [block] = blocks(formats, "json")
    const json = JSON.parse(block!.text)
    const prompt = await Effect.runPromise(Prompt.decodeUnknown(json))
    expect(prompt.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool"])
    expect(await Effect.runPromise(Prompt.encode(prompt))).toMatchObject(json)
  })

  it("the StreamPart lines are what decode prints for the named recording", async () => {
    const found = blocks(formats, "jsonl")
    expect(found).toHaveLength(2)
    const logs: Array<ReadonlyArray<string>> = []
    for (const block of found) {
      const recording = [...block.before.matchAll(/fixtures\/[\w./-]+\.(?:sse|txt)/g)].at(-1)?.[0]
      expect(recording, "the text before the block names its recording").toBeDefined()
      const { logged, printed } = await decodeLines(recording!)
      expect(printed.includes(`\n${block.text}\n`), `${recording}: the lines are printed, consecutive`).toBe(true)
      logs.push(logged)
    }
    // the recording of the `replace` block contradicts its deltas, and decode says so (a warning on stderr)
    expect(logs[0]).toStrictEqual([])
    expect(logs[1]!.join("\n")).toContain("contradicts what its deltas delivered; the snapshot wins")
    expect(found[0]!.text).toContain("\"partial\":false,\"part\":{\"type\":\"tool_call\"")
    expect(found[0]!.text).toContain("\"arguments\":\"\"")
    expect(found[1]!.text).toContain("\"replace\":true")
  })
})
