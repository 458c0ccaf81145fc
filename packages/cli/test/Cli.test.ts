/**
 * The command line in process: what goes to standard output and standard error, the argument order, the
 * error line.
 */
import { Cli, Demo, Request } from "@effect-responses/cli"
import { Gateway, ResponseStore } from "@effect-responses/server"
import { assert, describe, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { afterEach, vi } from "vitest"
import { fixturePath } from "./fixtures.js"

/** Runs `Cli.main` on `args`, capturing standard output and standard error (and standard input from `stdin`). */
const main = (args: ReadonlyArray<string>, stdin?: string) =>
  Effect.gen(function*() {
    let stdout = ""
    let stderr = ""
    const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      stdout += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)
      return true
    })
    const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      stderr += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)
      return true
    })
    if (stdin !== undefined) vi.spyOn(process, "stdin", "get").mockReturnValue(Readable.from([stdin]) as typeof process.stdin)
    const exitCode = process.exitCode
    yield* Cli.main(["node", "effect-responses", ...args]).pipe(
      Effect.provide(NodeContext.layer),
      Effect.ensuring(Effect.sync(() => {
        out.mockRestore()
        err.mockRestore()
      }))
    )
    const status = process.exitCode ?? 0
    process.exitCode = exitCode
    return { stdout, stderr, status }
  })

/** What `--max-body-mb N` over its bound gets: the bound, and why there is one. */
const MAX_BODY_MB_OVER = (n: number) =>
  `option --max-body-mb: '${n}' is more than 511 (allowed: 1 to 511 MiB: Node's longest string, which a body that ` +
  `is no JSON is read into, is 512 MiB less 24 characters)`

/** The refusal of a `--store postgres:` value that is no URL (not echoed: it may hold a password). */
const POSTGRES_URL =
  "option --store: 'postgres:…' is not a PostgreSQL URL (postgres:postgres://USER@HOST:PORT/DATABASE, or postgres://…)"

afterEach(() => {
  vi.restoreAllMocks()
})

describe("effect-responses (in process)", () => {
  it.effect("log warnings go to standard error: aggregate's standard output is JSON only", () =>
    Effect.gen(function*() {
      const result = yield* main(["aggregate", fixturePath("responses-sse/vai-azure-gpt54-multi-summary-encrypted.chunks.txt")])
      assert.strictEqual(result.status, 0)
      const responses = JSON.parse(result.stdout) as Array<{ text?: string }>
      assert.strictEqual(responses.length, 1)
      assert.match(result.stderr, /^effect-responses: warning: output item 1 of response resp_anonymized_synth_001: .*contradicts/)
      assert.strictEqual(result.stderr.split("\n").length, 2)
    }))

  it.effect("request - --stream --model M: options after the standard-input argument are read", () =>
    Effect.gen(function*() {
      const prompt = JSON.stringify({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] })
      const result = yield* main(["request", "-", "--stream", "--model", "m-1"], prompt)
      assert.strictEqual(result.stderr, "")
      assert.strictEqual(result.status, 0)
      const body = JSON.parse(result.stdout) as { model: string; stream?: boolean }
      assert.strictEqual(body.model, "m-1")
      assert.strictEqual(body.stream, true)
    }))

  it.effect("every verb's options are read from its @effect/cli command: the help lists each with its default", () =>
    Effect.sync(() => {
      const serve = Cli.help("serve")
      assert.include(serve, "  --port N ")
      assert.include(serve, "(default: 8787)")
      assert.include(serve, "(default: 127.0.0.1)")
      assert.include(serve, "(default: drop)")
      assert.include(serve, "--upstream URL")
      assert.include(Cli.help("chat"), "[PROMPT...]")
      assert.include(Cli.help("chat"), "  --demo ")
      assert.include(Cli.help("request"), "(default: gpt-5.1)")
      assert.notInclude(Cli.help(undefined) + Cli.help("chat"), "A user-defined piece of text")
      assert.notMatch(Cli.help("chat"), /\x1b\[/)
      assert.match(Cli.help("chat", true), /\x1b\[1mUsage:/)
    }))

  it.effect("serve --help says that keep-alives (SSE comments, event: ping) count as silence for the idle timeout", () =>
    Effect.sync(() => {
      const idle = Cli.help("serve").replace(/\s+/g, " ")
      assert.include(idle, "keep-alives (SSE comments such as `: keep-alive`, `event: ping`) count as silence")
    }))

  it.effect("serve --help says --api-key-env names one variable whose value may be a comma-separated list of keys, trimmed", () =>
    Effect.sync(() => {
      const serve = Cli.help("serve").replace(/\s+/g, " ")
      assert.include(
        serve,
        "the name of one environment variable holding the key clients must send as a bearer token, read once at start; its value may be a comma-separated list of keys (KEYS=keyA,keyB), one per tenant, each trimmed"
      )
      assert.include(serve, "or a comma-separated list of keys (VAR=keyA,keyB; spaces around each trimmed)")
    }))

  it.effect("the help's defaults are those the verbs use: the store's bound, the demo prompt, the model of request", () =>
    Effect.sync(() => {
      assert.include(Cli.help("serve"), `(default: ${ResponseStore.DEFAULT_MAX_RESPONSES})`)
      // --max-body-mb's bound is the whole MiB within the gateway's own
      assert.include(Cli.help("serve").replace(/\s+/g, " "), `1 to ${Math.floor(Gateway.MAX_BODY_BYTES_LIMIT / (1024 * 1024))})`)
      assert.include(Cli.help("chat").replace(/\s+/g, " "), Demo.defaultPrompt)
      assert.include(Cli.help("request"), `(default: ${Request.DEFAULT_MODEL})`)
    }))

  it.effect("chat takes a prompt of several words, and a word starting with - after --", () =>
    Effect.gen(function*() {
      const result = yield* main(["chat", "--demo", "--model", "gpt-4o"])
      assert.strictEqual(result.status, 1)
      assert.include(result.stderr, "cannot change it (--model gpt-4o)")
      const words = yield* main(["chat", "--demo", "--", "what", "is", "-5", "--x"])
      assert.strictEqual(words.status, 1)
      assert.include(words.stderr, `not "what is -5 --x"`)
    }))

  it.effect("options chat refuses together are a bad command line: exit status 2, the message and the verb's usage", () =>
    Effect.gen(function*() {
      const replay = fixturePath("responses-sse/vai-openai-shell-call.chunks.txt")
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["chat", "--replay-reasoning-content", "--demo"], "--replay-reasoning-content is for --protocol chat-completions"],
        [["chat", "--demo", "--replay", replay], "--demo replays the embedded recording and --replay FILE another one"],
        [["chat", "--demo", "--protocol", "chat-completions"], "there is no embedded Chat Completions recording"]
      ]
      for (const [args, message] of cases) {
        const result = yield* main(args)
        assert.strictEqual(result.status, 2, args.join(" "))
        assert.strictEqual(result.stdout, "", args.join(" "))
        const lines = result.stderr.split("\n")
        assert.isTrue(lines[0]!.startsWith(`effect-responses chat: ${message}`), result.stderr)
        assert.match(lines[1]!, /^usage: effect-responses chat /)
        assert.strictEqual(lines[2], "(more: effect-responses chat --help)")
      }
    }))

  it.effect("--completions: bash, fish and zsh get a script; sh, pwsh and no shell are refused naming the supported shells", () =>
    Effect.gen(function*() {
      // (the script goes through console.log, which vitest captures: its text is checked by the spawned tests)
      for (const shell of ["bash", "fish", "zsh"]) assert.strictEqual((yield* main(["--completions", shell])).status, 0, shell)
      for (const args of [["--completions", "sh"], ["--completions", "pwsh"], ["--completions=sh"], ["--completions"]]) {
        const result = yield* main(args)
        assert.strictEqual(result.status, 2, args.join(" "))
        assert.strictEqual(result.stdout, "", args.join(" "))
        const first = result.stderr.split("\n")[0]!
        assert.match(first, /^effect-responses: option --completions: .*the supported shells are bash, fish, zsh$/, args.join(" "))
        assert.notInclude(result.stderr, "subcommand")
      }
      assert.include((yield* main(["--completions", "sh"])).stderr, "'sh' is not supported (POSIX sh has no programmable completion)")
      assert.include((yield* main(["--completions", "pwsh"])).stderr, "the shell 'pwsh' is not supported")
      assert.include(Cli.help(undefined), "print a completion script for bash, fish or zsh")
    }))

  it.effect("a log entry is one line: line breaks and control characters in its text (an upstream's error body) are escaped", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      // what an upstream may answer: a multi-line error page, a forged log line, a terminal escape sequence
      yield* Effect.logWarning("upstream error: HTTP 500: internal\r\neffect-responses: info: forged\u001b[2Jend\u2028").pipe(
        Effect.provide(Cli.logger((text) => void lines.push(text)))
      )
      assert.deepStrictEqual(lines, [
        "effect-responses: warning: upstream error: HTTP 500: internal\\r\\neffect-responses: info: forged\\u001b[2Jend\\u2028\n"
      ])
    }))

  it("the error line is never empty: an error without a message shows its tag, reason and cause", () => {
    class ServeError extends Error {
      readonly _tag = "ServeError"
      constructor(override readonly cause: unknown) {
        super("")
      }
    }
    const message = Cli.errorMessage(Cause.fail(new ServeError(new Error("listen EADDRINUSE: address already in use"))))
    assert.strictEqual(message, "ServeError: listen EADDRINUSE: address already in use")
    assert.strictEqual(Cli.errorMessage(Cause.fail({ _tag: "SystemError", reason: "NotFound" })), "SystemError NotFound")
    assert.strictEqual(Cli.errorMessage(Cause.die(new Error(""))), "Error")
  })

  /** Each `serve` command line of `cases` exits 2 with one line `effect-responses serve: <message>`, then the usage. */
  const expectServeUsageErrors = (cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]>) =>
    Effect.gen(function*() {
      for (const [args, message] of cases) {
        const result = yield* main(["serve", "--upstream", "http://127.0.0.1:1/v1", ...args])
        assert.strictEqual(result.status, 2, args.join(" "))
        const lines = result.stderr.split("\n")
        assert.strictEqual(lines[0], `effect-responses serve: ${message}`)
        assert.match(lines[1]!, /^usage: effect-responses serve /)
        assert.strictEqual(result.stdout, "")
      }
    })

  it.effect("serve's --store, --store-ttl and --store-max-responses refuse a bad value as --port abc is refused: one line naming the option, the usage, exit 2", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["--port", "abc"], "option --port: 'abc' is not an integer"],
        [["--store", "foo"], "option --store: 'foo' is not none, sqlite:PATH or postgres:URL"],
        [["--store", "sqlite:"], "option --store: 'sqlite:' is not none, sqlite:PATH or postgres:URL"],
        [["--store-ttl", "5x"], "option --store-ttl: '5x' is not a duration (30d, 12h, 90m, 3600s, or seconds)"],
        [["--store-max-responses", "0"], "option --store-max-responses: '0' is not a positive integer"],
        [["--store", "postgres:garbage"], POSTGRES_URL]
      ]
      yield* expectServeUsageErrors(cases)
    }))

  it.effect("serve's numeric options, --host and --upstream refuse a value out of range at parse time: the option, what it allows, the usage, exit 2", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["--port", "99999"], "option --port: '99999' is not a port (allowed: 0 to 65535; 0 picks a free one)"],
        [["--port", "-5"], "option --port: '-5' is not a port (allowed: 0 to 65535; 0 picks a free one)"],
        // an empty address listened on every interface (--host "$HOST" with HOST unset)
        [["--host", ""], "option --host: the address is empty (give one, e.g. 127.0.0.1, or 0.0.0.0 to listen on every interface)"],
        [["--host", " "], "option --host: the address is empty (give one, e.g. 127.0.0.1, or 0.0.0.0 to listen on every interface)"],
        [["--upstream-retries", "-1"], "option --upstream-retries: '-1' is less than 0 (allowed: 0 or more retries)"],
        [["--max-input-items", "0"], "option --max-input-items: '0' is less than 1 (allowed: 1 or more items)"],
        [["--max-body-mb", "-1"], "option --max-body-mb: '-1' is less than 1 (allowed: 1 to 511 MiB)"],
        // a body past Node's longest string cannot be read: a value over it was taken, and such a body failed
        [["--max-body-mb", "512"], MAX_BODY_MB_OVER(512)],
        [["--max-body-mb", "1000000000000"], MAX_BODY_MB_OVER(1000000000000)],
        [
          ["--upstream-headers-timeout", "0"],
          "option --upstream-headers-timeout: '0' is less than 1 (allowed: 1 or more seconds)"
        ],
        [["--upstream-idle-timeout", "0"], "option --upstream-idle-timeout: '0' is less than 1 (allowed: 1 or more seconds)"],
        [["--request-body-timeout", "-3"], "option --request-body-timeout: '-3' is less than 1 (allowed: 1 to 2147483 seconds)"],
        // a longer JS timer fires after 1 ms: every slow body got a 408 at once
        [
          ["--request-body-timeout", "2147484"],
          "option --request-body-timeout: '2147484' is more than 2147483 (allowed: 1 to 2147483 seconds)"
        ],
        [["--client-stall-timeout", "0"], "option --client-stall-timeout: '0' is less than 1 (allowed: 1 to 2147483 seconds)"],
        [["--shutdown-grace", "-1"], "option --shutdown-grace: '-1' is less than 0 (allowed: 0 to 2147483 seconds)"]
      ]
      yield* expectServeUsageErrors(cases)
      const upstream = yield* main(["serve", "--upstream", "notaurl"])
      assert.strictEqual(upstream.status, 2)
      assert.strictEqual(
        upstream.stderr.split("\n")[0],
        "effect-responses serve: option --upstream: 'notaurl' is not an http(s) URL (e.g. http://localhost:11434/v1)"
      )
      assert.match(upstream.stderr.split("\n")[1]!, /^usage: effect-responses serve /)
    }))

  it("the README's usage block and option table of chat and serve name every option their --help lists", () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    for (const verb of ["chat", "serve"]) {
      const options = [...Cli.help(verb).matchAll(/^  (--[a-z-]+)/gm)].map((match) => match[1]!)
        .filter((name) => name !== "--log-level" && name !== "--help")
      assert.isAbove(options.length, 3)
      const start = readme.indexOf(`\`\`\`\neffect-responses ${verb} `)
      assert.notStrictEqual(start, -1, verb)
      const usage = readme.slice(start, readme.indexOf("\n```\n", start + 3))
      const table = readme.slice(readme.indexOf("| option | does |", start)).split("\n\n")[0]!
      for (const name of options) {
        assert.match(usage, new RegExp(`[ []${name}[ \\]]`), `${verb}'s usage in the README: ${name}`)
        assert.include(table, `| \`${name}`, `${verb}'s option table in the README: ${name}`)
      }
    }
  })

  it.effect("chat --requests-out '' is a usage error saying the path is empty (not 'no such directory: .'), nothing said or sent, exit 2", () =>
    Effect.gen(function*() {
      for (const path of ["", " "]) {
        const result = yield* main(["chat", "--demo", "--requests-out", path])
        assert.strictEqual(result.status, 2, JSON.stringify(path))
        assert.strictEqual(result.stdout, "")
        const lines = result.stderr.split("\n")
        assert.strictEqual(lines[0], "effect-responses chat: option --requests-out: the path is empty (give a file name)")
        assert.match(lines[1]!, /^usage: effect-responses chat /)
      }
    }))

  it.effect("chat --requests-out in a directory that does not exist fails first: one line naming the path, nothing said or sent, exit 1", () =>
    Effect.gen(function*() {
      const missing = join(tmpdir(), `effect-responses-no-such-dir-${process.pid}`)
      const path = join(missing, "requests.jsonl")
      const result = yield* main(["chat", "--demo", "--requests-out", path])
      assert.strictEqual(result.status, 1)
      assert.strictEqual(result.stdout, "")
      // no replay notice before it: the file is opened before the target is read
      assert.strictEqual(result.stderr, `effect-responses: cannot write --requests-out ${path}: no such directory: ${missing}\n`)
    }))
})
