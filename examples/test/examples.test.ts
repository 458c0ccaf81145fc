/**
 * Every example in `examples/` runs as written, in this one process: `NodeRuntime.runMain` is replaced by a
 * function that runs the program and hands its outcome to the test, and what the program writes
 * (`console.log`, `process.stdout.write`) is captured and checked. The examples reach only loopback
 * servers replaying recorded fixtures.
 */
import { Effect, Exit } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"

const runs = vi.hoisted(() => [] as Array<Promise<unknown>>)

vi.mock("@effect/platform-node", async (importOriginal) => {
  const original = await importOriginal<typeof import("@effect/platform-node")>()
  return {
    ...original,
    NodeRuntime: {
      ...original.NodeRuntime,
      runMain: (effect: Effect.Effect<unknown, unknown>) => {
        runs.push(
          Effect.runPromiseExit(effect).then((exit) =>
            Exit.isSuccess(exit) ? exit.value : Promise.reject(new Error(String(exit.cause)))
          )
        )
      }
    }
  }
})

afterEach(() => {
  vi.restoreAllMocks()
})

/** Imports the example (which calls `runMain` once), waits for its program and returns what it wrote. */
const run = async (load: () => Promise<unknown>): Promise<string> => {
  let output = ""
  vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
    output += `${args.map(String).join(" ")}\n`
  })
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    output += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)
    return true
  })
  const before = runs.length
  await load()
  expect(runs.length, "the example calls NodeRuntime.runMain once").toBe(before + 1)
  await runs[before]
  return output
}

describe("examples", () => {
  it("tool.ts: a tool of one's own answers the recorded session's three calculator calls", async () => {
    expect(await run(() => import("../tool.js"))).toBe("4 model calls, answer: The final result is **570**.\n")
  })

  it("stream.ts: reasoning, tool calls, tool results and the answer, each once, on their own lines", async () => {
    const output = await run(() => import("../stream.js"))
    expect(output.split("\n").filter((line) => /^(tool|answer)/.test(line))).toEqual([
      "tool call: calculator {\"a\":12,\"b\":7,\"op\":\"add\"}",
      "tool result: calculator = 19",
      "tool call: calculator {\"a\":19,\"b\":3,\"op\":\"multiply\"}",
      "tool result: calculator = 57",
      "tool call: calculator {\"a\":57,\"b\":10,\"op\":\"multiply\"}",
      "tool result: calculator = 570",
      "answer: The final result is **570**."
    ])
    expect(output).toContain("\nreasoning: **Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7")
    expect(output.endsWith("(4 model calls, 1006 tokens)\n")).toBe(true)
  })

  it("structured.ts: the recorded JSON answer decoded with the Schema", async () => {
    expect(await run(() => import("../structured.js"))).toBe("Mexico City (Mexico), 105 tokens\n")
  })

  it("options.ts: the layer's options and the call's own, merged, in the body sent", async () => {
    const [body, summary] = (await run(() => import("../options.js"))).trimEnd().split("\n")
    expect(JSON.parse(body!)).toEqual({
      model: "gpt-5",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "What are the top world news stories today?" }] }],
      store: false,
      include: ["reasoning.encrypted_content"],
      tools: [
        { type: "web_search", search_context_size: "low" },
        { type: "mcp", server_label: "deepwiki", server_url: "https://mcp.deepwiki.com/mcp", require_approval: "never" }
      ],
      max_output_tokens: 4000,
      reasoning: { effort: "high", summary: "auto" },
      stream: false
    })
    expect(summary).toBe("6 web searches, 1173 characters of answer")
  })

  it("chat-completions.ts: the recorded Chat Completions stream written as it arrives", async () => {
    expect(await run(() => import("../chat-completions.js"))).toBe("The capital of the UK is London.\n(stop, 87 tokens)\n")
  })

  it("gateway.ts: a Responses request answered through the gateway by the Chat Completions backend", async () => {
    expect(await run(() => import("../gateway.js"))).toBe("completed: The capital of the UK is London. (87 tokens)\n")
  })
})
