/**
 * The `effect-responses` executable, run as a user runs it: one line per error on stderr, a non-zero exit,
 * and nothing on stdout that looks like success.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fixturePath } from "../fixtures.js"
import * as Cli from "./run.js"

const dir = mkdtempSync(join(tmpdir(), "effect-responses-bin-"))

const run = (...args: ReadonlyArray<string>) => Cli.run(args)

describe("effect-responses chat (the executable)", () => {
  it("chat --replay FILE streams the capture to a final answer, says on stderr that it replays, exits 0", async () => {
    const file = fixturePath("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt")
    const result = await run("chat", "--replay", file)
    expect(result.stderr).toBe(
      `effect-responses: replaying ${file} (4 recorded responses of gpt-5.1-codex-max); nothing is sent to a model\n`
    )
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("answer: The final result is **570**.")
  })

  it("chat --replay of a capture whose call has \"\" arguments runs to its answer (\"{}\" sent back is accepted)", async () => {
    // The recorded calculator session, its first call made argument-less as some servers send it: no
    // argument deltas, "" in the done event, the item and the snapshot (sequence numbers kept consecutive).
    const lines = readFileSync(
      fixturePath("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt"),
      "utf8"
    ).split("\n").filter((line) => line.trim() !== "")
    const secondResponse = lines.findIndex((line, index) => index > 0 && line.includes("\"type\":\"response.created\""))
    const blanked = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(blanked)
      if (typeof value !== "object" || value === null) return value
      const out: Record<string, unknown> = {}
      for (const [key, field] of Object.entries(value)) out[key] = key === "arguments" ? "" : blanked(field)
      return out
    }
    const first = lines.slice(0, secondResponse)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((event) => event["type"] !== "response.function_call_arguments.delta")
      .map((event, sequence) => ({ ...(blanked(event) as Record<string, unknown>), sequence_number: sequence }))
    expect(first.filter((event) => JSON.stringify(event).includes("\"arguments\":\"\"")).length).toBeGreaterThanOrEqual(3)
    const file = join(dir, "empty-arguments.chunks.txt")
    writeFileSync(file, [...first.map((event) => JSON.stringify(event)), ...lines.slice(secondResponse)].join("\n") + "\n")
    const result = await run("chat", "--replay", file)
    expect(result.stderr).toBe(
      `effect-responses: replaying ${file} (4 recorded responses of gpt-5.1-codex-max); nothing is sent to a model\n`
    )
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("answer: The final result is **570**.")
  })

  it("chat --protocol chat-completions --replay of a capture whose tool call has \"\" arguments sends \"{}\" back, accepted, and runs to its answer", async () => {
    // The recorded gpt-4o-mini get_capital call made argument-less as some servers send it: the chunk that
    // opens the call keeps its `"arguments": ""`, the chunks with argument fragments are left out; then the
    // recorded answer.
    const chunks = readFileSync(fixturePath("chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse"), "utf8")
      .split("\n\n").filter((event) => event.trim() !== "")
    const argumentFragment = (event: string): boolean => {
      const data = event.replace(/^data: /, "")
      if (data === "[DONE]") return false
      const chunk = JSON.parse(data) as {
        choices: ReadonlyArray<{ delta?: { tool_calls?: ReadonlyArray<{ id?: string; function?: { arguments?: string } }> } }>
      }
      return (chunk.choices[0]?.delta?.tool_calls ?? []).some((call) => call.id === undefined && call.function?.arguments !== "")
    }
    const kept = chunks.filter((event) => !argumentFragment(event))
    expect(chunks.length - kept.length).toBe(5)
    expect(kept.filter((event) => event.includes("\"arguments\":\"\"")).length).toBe(1)
    const file = join(dir, "chat-empty-arguments.sse")
    const requestsOut = join(dir, "chat-empty-arguments.requests.jsonl")
    writeFileSync(
      file,
      kept.join("\n\n") + "\n\n" +
        readFileSync(fixturePath("chat-sse/pai-chat-gpt4omini-text-usage.sse"), "utf8")
    )
    const result = await run("chat", "--protocol", "chat-completions", "--replay", file, "--requests-out", requestsOut)
    expect(result.stderr).toBe(
      `effect-responses: replaying ${file} (2 recorded responses of gpt-4o-mini-2024-07-18); nothing is sent to a model\n`
    )
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("answer: The capital of the UK is London.")
    const requests = readFileSync(requestsOut, "utf8").trim().split("\n").map((line) =>
      JSON.parse(line) as {
        messages: ReadonlyArray<{ role: string; tool_calls?: ReadonlyArray<{ function: { arguments: string } }> }>
      }
    )
    expect(requests).toHaveLength(2)
    expect(requests[1]!.messages.find((message) => message.role === "assistant")?.tool_calls?.[0]?.function.arguments)
      .toBe("{}")
  })

  it("a capture that does not exist: one line naming the file, exit 1", async () => {
    const file = join(dir, "missing.sse")
    const result = await run("chat", "--replay", file)
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe(`effect-responses: ${file}: no such file\n`)
  })

  it("an empty capture: one line naming the file, exit 1", async () => {
    const file = join(dir, "empty.chunks.txt")
    writeFileSync(file, "")
    const result = await run("chat", "--replay", file)
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe(`effect-responses: ${file}: the capture is empty\n`)
  })

  it("a capture with malformed JSON: one line naming the file and the line, exit 1, nothing half-printed", async () => {
    const lines = readFileSync(
      fixturePath("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt"),
      "utf8"
    ).split("\n")
    lines[60] = "{\"type\": \"response.function_call_arguments.delta\", \"delta\": "
    const file = join(dir, "broken.chunks.txt")
    writeFileSync(file, lines.join("\n"))
    const result = await run("chat", "--replay", file)
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(new RegExp(`^effect-responses: ${file}:61: malformed JSON .*\\n$`))
    expect(result.stderr.split("\n")).toHaveLength(2)
  })

  it("--demo replays the embedded recording to 570 and says so on stderr in one line", async () => {
    const result = await run("chat", "--demo")
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/^answer: The final result is \*\*570\*\*\.$/m)
    expect(result.stderr).toBe(
      "effect-responses: replaying the demo recording (4 recorded responses of gpt-5.1-codex-max); nothing is sent to a model\n"
    )
  })

  it("without a key or server, a prompt or model other than the recording's is refused with the hint, exit 1", async () => {
    const prompt = await run("chat", "What is the capital of France?")
    expect(prompt.status).toBe(1)
    expect(prompt.stdout).toBe("")
    expect(prompt.stderr).toBe(
      "effect-responses: the embedded demo recording answers only its recorded question (\"What is (12 + 7) * 3 * 10? " +
        "Use the calculator for each step.\"), not \"What is the capital of France?\": to ask a model, set " +
        "OPENAI_API_KEY (the OpenAI API) or OPENAI_BASE_URL (any /v1 server, e.g. a local one or effect-responses " +
        "serve; no key needed)\n"
    )
    const model = await run("chat", "--model", "gpt-4o")
    expect(model.status).toBe(1)
    expect(model.stderr).toMatch(/^effect-responses: the embedded demo recording was made with gpt-5\.1-codex-max, and a replay cannot change it \(--model gpt-4o\): to ask a model, set OPENAI_API_KEY .*\n$/)
  })
})

describe("effect-responses chat, messages (the executable)", () => {
  it("--replay of a JSON body says it is a body, not a stream; a failed recording is named in the error", async () => {
    const body = join(dir, "response.json")
    writeFileSync(body, JSON.stringify({ object: "response", id: "resp_1", status: "completed", output: [] }))
    const result = await run("chat", "--replay", body)
    expect(result.status).toBe(1)
    expect(result.stderr).toBe(
      `effect-responses: ${body}: a JSON body (one whole response), not a stream: --replay takes a captured stream ` +
        "(raw SSE or line-JSON); `effect-responses aggregate` reads a body\n"
    )
    const failed = fixturePath("responses-sse/vai-openai-error-event-response-failed.chunks.txt")
    const error = await run("chat", "--replay", failed)
    expect(error.status).toBe(1)
    expect(error.stderr.split("\n")[1]).toMatch(new RegExp(`^effect-responses: ${failed}: .*insufficient_quota`))
  })

  it("a live server answering 503: each retry is said on stderr with its wait, then one error line, exit 1", async () => {
    let calls = 0
    const server = createServer((req, res) => {
      calls++
      req.resume()
      res.writeHead(503, { "content-type": "application/json", "retry-after-ms": "200" })
      res.end(JSON.stringify({ error: { message: "overloaded", type: "server_error", code: null, param: null } }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const result = await Cli.run(["chat", "hi"], {
        env: { OPENAI_BASE_URL: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1` }
      })
      expect(result.status).toBe(1)
      expect(calls).toBe(3)
      const lines = result.stderr.trimEnd().split("\n")
      expect(lines).toHaveLength(3)
      expect(lines[0]).toMatch(/^effect-responses: HTTP 503: overloaded.*; waiting 0\.2 s before retry 1$/)
      expect(lines[1]).toMatch(/; waiting 0\.2 s before retry 2$/)
      expect(lines[2]).toMatch(/^effect-responses: HTTP 503: overloaded/)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

/**
 * A local server answering `POST /v1/responses` with the first events of a recorded stream (the Azure text
 * recording, vercel/ai, Apache-2.0) up to its first text delta, then holding the stream open (the chat is
 * mid-answer when the test signals it), or, with `reset`, closing the connection.
 */
const holdingServer = async (options: { readonly reset?: boolean } = {}) => {
  const events = readFileSync(fixturePath("responses-sse/vai-azure-text.chunks.txt"), "utf8").split("\n")
  const upToDelta = events.slice(0, events.findIndex((line) => line.includes("response.output_text.delta")) + 1)
  const requests: Array<{ readonly headers: IncomingMessage["headers"]; readonly body: string }> = []
  let closed = 0
  const server: Server = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8").on("data", (data: string) => {
      body += data
    })
    req.on("end", () => {
      requests.push({ headers: req.headers, body })
      res.writeHead(200, { "content-type": "text/event-stream" })
      for (const line of upToDelta) res.write(`data: ${line}\n\n`)
      if (options.reset === true) setTimeout(() => res.socket?.destroy(), 100)
    })
    res.on("close", () => {
      closed++
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    closed: () => closed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

describe("effect-responses chat, live, interrupted (the executable)", () => {
  for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it(`OPENAI_BASE_URL without a key asks that server; ${signal} mid-answer: the line ends [interrupted], the request is aborted, exit ${status}`, async () => {
      const server = await holdingServer()
      try {
        const running = Cli.start(["chat", "What", "is", "the", "capital", "of", "France?"], {
          env: { OPENAI_BASE_URL: server.baseUrl }
        })
        await running.waitFor(/answer: \S/)
        running.child.kill(signal)
        const result = await running.done
        expect(result.status).toBe(status)
        expect(result.stderr).toBe("")
        expect(result.stdout).toBe("answer: Hello [interrupted]\n")
        expect(server.requests).toHaveLength(1)
        expect(server.requests[0]!.headers.authorization).toBeUndefined()
        expect(JSON.parse(server.requests[0]!.body)).toMatchObject({
          stream: true,
          input: [{ role: "user", content: [{ type: "input_text", text: "What is the capital of France?" }] }]
        })
        expect(server.closed()).toBe(1)
      } finally {
        await server.close()
      }
    })
  }
})

describe("effect-responses chat, live, failed mid-answer (the executable)", () => {
  it("the connection closes after the first delta: the line ends [failed], the error on stderr, exit 1", async () => {
    const server = await holdingServer({ reset: true })
    try {
      const result = await Cli.run(["chat", "What", "is", "the", "capital", "of", "France?"], {
        env: { OPENAI_BASE_URL: server.baseUrl }
      })
      expect(result.status).toBe(1)
      expect(result.stdout).toBe("answer: Hello [failed]\n")
      expect(result.stderr).toMatch(/^effect-responses: .+\n$/)
    } finally {
      await server.close()
    }
  })
})
