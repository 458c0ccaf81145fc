/**
 * The command line as a person meets it, through the built executable: typos are named as unknown options
 * with the verb's usage, a prompt may be several words, `--log-level` goes anywhere, `--help` reads well in
 * a pipe, `--wizard` needs a terminal on standard input only (it asks on standard error).
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fixturePath } from "../fixtures.js"
import * as Cli from "./run.js"

const ESC = "\x1b["

describe("effect-responses command line (the executable)", () => {
  it("an unknown option is named with the verb's usage, exit 2, nothing sent and nothing printed", async () => {
    const chat = await Cli.run(["chat", "--frobnicate"])
    expect(chat.status).toBe(2)
    expect(chat.stdout).toBe("")
    expect(chat.stderr.split("\n")[0]).toBe("effect-responses chat: unknown option --frobnicate")
    expect(chat.stderr).toContain("\nusage: effect-responses chat [PROMPT...] [--demo] [--replay FILE]")

    const decode = await Cli.run(["decode", "--frobnicate", fixturePath("responses-sse/vai-azure-text.chunks.txt")])
    expect(decode.status).toBe(2)
    expect(decode.stdout).toBe("")
    expect(decode.stderr.split("\n").slice(0, 2)).toStrictEqual([
      "effect-responses decode: unknown option --frobnicate",
      "usage: effect-responses decode FILE [--protocol responses|chat-completions]"
    ])
  })

  it("--completions bash writes a script; sh (POSIX sh has no completion) and pwsh are refused naming the supported shells, exit 2", async () => {
    const bash = await Cli.run(["--completions", "bash"])
    expect(bash.status).toBe(0)
    expect(bash.stdout).toContain("complete -F")
    for (const [shell, why] of [["sh", "'sh' is not supported (POSIX sh has no programmable completion)"], ["pwsh", "the shell 'pwsh' is not supported"]]) {
      const refused = await Cli.run(["--completions", shell!])
      expect(refused.status).toBe(2)
      expect(refused.stdout).toBe("")
      expect(refused.stderr.split("\n")[0]).toBe(
        `effect-responses: option --completions: ${why}; the supported shells are bash, fish, zsh`
      )
    }
  })

  it("a prompt of several words is one prompt (refused by the demo replay, which answers its own question)", async () => {
    const result = await Cli.run(["chat", "what", "is", "2", "plus", "2"])
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain(`not "what is 2 plus 2": to ask a model, set OPENAI_API_KEY`)
    expect(result.stderr.split("\n")).toHaveLength(2)
  })

  it("--log-level is read after the verb's own options and arguments too", async () => {
    const file = fixturePath("responses-sse/vai-azure-gpt54-multi-summary-encrypted.chunks.txt")
    const quiet = await Cli.run(["aggregate", "--protocol", "responses", file, "--log-level", "error"])
    expect(quiet.status).toBe(0)
    expect(quiet.stderr).toBe("")
    const loud = await Cli.run(["aggregate", file, "--protocol", "responses"])
    expect(loud.stderr).toMatch(/^effect-responses: warning: /)
  })

  it("--help of every verb, piped: plain text with defaults, environment and examples; NO_COLOR is honoured", async () => {
    for (const verb of ["chat", "decode", "aggregate", "serve", "request"]) {
      const result = await Cli.run([verb, "--help"], { env: { NO_COLOR: "1" } })
      expect(result.status).toBe(0)
      expect(result.stderr).toBe("")
      expect(result.stdout).not.toContain(ESC)
      expect(result.stdout).not.toContain("A user-defined piece of text")
      expect(result.stdout).toMatch(new RegExp(`^effect-responses ${verb}: `))
      expect(result.stdout).toContain(`Usage:\n  effect-responses ${verb} `)
      expect(result.stdout).toContain("Examples:\n  ")
      expect(result.stdout).toContain("--log-level LEVEL")
    }
    const serve = await Cli.run(["serve", "--help"])
    expect(serve.stdout).toMatch(/--port N +the port to listen on \(0 picks a free port\)\s+\(default: 8787\)/)
    expect(serve.stdout).toMatch(/--host HOST +the address to listen on; one other machines can\s+reach \(0\.0\.0\.0\) with\s+--upstream-key-env and no\s+--api-key-env lets anyone on the network spend\s+the upstream key \(a warning is logged at start\)\s+\(default: 127\.0\.0\.1\)/)
    expect(serve.stdout).toMatch(/\(default: drop\)/)
    expect(serve.stdout).toMatch(/Environment:\n  VAR of --upstream-key-env +the upstream's API key/)
    expect(serve.stdout).toMatch(/\n  PGPASSWORD +with --store postgres:URL/)
    const chat = await Cli.run(["chat", "--model", "x", "--help"])
    expect(chat.stdout).toContain("Environment:\n  OPENAI_API_KEY")
    expect(chat.stdout).toContain("OPENAI_BASE_URL")
    expect(chat.stdout).toContain("OPENAI_PROTOCOL")
    const root = await Cli.run(["--help"])
    expect(root.stdout).not.toContain(ESC)
    expect(root.stdout).toContain("Commands:\n  chat ")
  })

  it("on a terminal, --help and the chat are in colour, and not with NO_COLOR", async () => {
    for (const args of [["--help"], ["chat", "--demo"]]) {
      const coloured = Cli.onTerminal(args)
      expect(await coloured.done).toBe(0)
      expect(coloured.screen(true)).toContain(ESC)
      const plain = Cli.onTerminal(args, { env: { NO_COLOR: "1" } })
      expect(await plain.done).toBe(0)
      expect(plain.screen(true)).not.toContain(ESC)
    }
  })

  it("--wizard without a terminal on standard input fails at once, exit 2", async () => {
    const result = await Cli.run(["--wizard"])
    expect(result.status).toBe(2)
    expect(result.stderr).toBe(
      "effect-responses: --wizard reads its answers from a terminal, and standard input is not one\n"
    )
  })

  it("--wizard with standard output redirected: the questions on the terminal, the command's output in the file", async () => {
    // a terminal on standard input and standard error, standard output to a file; each answer is typed once
    // its question shows
    const dir = mkdtempSync(join(tmpdir(), "effect-responses-wizard-"))
    const out = join(dir, "out.json")
    const file = fixturePath("responses-sse/vai-azure-text.chunks.txt")
    const wizard = Cli.onTerminal(["--wizard"], { stdoutTo: out })
    try {
      const DOWN = "\x1b[B"
      await wizard.answer("Select which command you would like to execute", `${DOWN}${DOWN}\r`)
      await wizard.answer("use the default?", "\r")
      await wizard.answer("Enter some text", `${file}\r`)
      await wizard.answer("Would you like to run the command?", "\r")
      wizard.child.stdin.end()
      expect(await wizard.done).toBe(0)
      expect(wizard.screen()).toContain(`effect-responses aggregate ${file}`)
      const printed = JSON.parse(readFileSync(out, "utf8")) as ReadonlyArray<{ readonly status: string }>
      expect(printed.map((response) => response.status)).toStrictEqual(["completed"])
    } finally {
      wizard.child.kill()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
