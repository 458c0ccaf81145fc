/**
 * Every example in `examples/` runs as written, in this one process: `NodeRuntime.runMain` is replaced by a
 * function that runs the program and hands its outcome to the test, and what the program writes
 * (`console.log`, `process.stdout.write`) is captured and checked. The examples reach only loopback
 * servers replaying recorded fixtures.
 */
import { ChatCapture } from "@effect-responses/chat-completions"
import { Capture } from "@effect-responses/responses"
import { ChatReplayServer, ReplayServer } from "@effect-responses/testing"
import { NodeContext, NodeHttpServer } from "@effect/platform-node"
import { Effect, Exit, Layer } from "effect"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"
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

/** Imports the example, waits for the program it hands to `runMain` (if any) and returns what it wrote. */
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
  // an example with effects runs them with runMain, once; a synchronous one has written its output already
  expect(runs.length - before, "the example calls NodeRuntime.runMain at most once").toBeLessThanOrEqual(1)
  if (runs.length > before) await runs[before]
  return output
}

const fixture = (path: string): string =>
  fileURLToPath(new URL(path.startsWith("packages/") ? `../../${path}` : `../../fixtures/${path}`, import.meta.url))
const loopback = Layer.merge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }), NodeContext.layer)

/**
 * Runs an example that reads `OPENAI_BASE_URL` (and `OPENAI_PROTOCOL`) from the environment, as a program
 * talking to the API would, with the base URL of a replay server of `recording` (a Responses capture, or a
 * Chat Completions one with `protocol: "chat-completions"`).
 */
const runAgainst = (
  recording: string,
  load: () => Promise<unknown>,
  protocol: "responses" | "chat-completions" = "responses"
): Promise<string> =>
  Effect.gen(function*() {
    const baseUrl = protocol === "responses"
      ? (yield* Layer.build(
        Layer.unwrapEffect(Effect.map(Capture.load(fixture(recording)), (capture) => ReplayServer.layer({ capture })))
          .pipe(Layer.provide(loopback))
      )).unsafeMap.get(ReplayServer.ReplayServer.key).baseUrl as string
      : (yield* Layer.build(
        Layer.unwrapEffect(
          Effect.map(ChatCapture.load(fixture(recording)), (capture) => ChatReplayServer.layer({ capture }))
        ).pipe(Layer.provide(loopback))
      )).unsafeMap.get(ChatReplayServer.ChatReplayServer.key).baseUrl as string
    const saved = { ...process.env }
    process.env.OPENAI_BASE_URL = baseUrl
    process.env.OPENAI_PROTOCOL = protocol
    delete process.env.OPENAI_API_KEY
    return yield* Effect.promise(() => run(load)).pipe(Effect.ensuring(Effect.sync(() => (process.env = saved))))
  }).pipe(Effect.scoped, Effect.provide(NodeContext.layer), Effect.runPromise)

describe("package README examples", () => {
  it("core.ts: a prompt's JSON", async () => {
    expect(JSON.parse(await run(() => import("../packages/core.js")))).toEqual({
      messages: [
        { role: "system", content: "Answer in one sentence." },
        { role: "user", parts: [{ type: "text", text: "What is the capital of the UK?", annotations: [], attributes: {} }] }
      ]
    })
  })

  it("wire.ts: the frames of raw SSE, with their lines", async () => {
    expect(await run(() => import("../packages/wire.js"))).toBe(
      "2: {\"type\":\"response.created\",\"sequence_number\":0}\n4: [DONE]\n"
    )
  })

  it("aggregate.ts: deltas and a completing part folded into one message", async () => {
    expect(await run(() => import("../packages/aggregate.js"))).toBe("Hello, world.\n")
  })

  it("responses.ts: one call configured from the environment (a recorded gpt-5.1 answer)", async () => {
    expect(await runAgainst("responses-sse/vai-azure-text.chunks.txt", () => import("../packages/responses.js"))).toBe(
      "Hello\n"
    )
  })

  it("chat-completions.ts: one call to a Chat Completions server configured from the environment", async () => {
    expect(
      await runAgainst(
        "chat-sse/pai-chat-gpt4omini-text-usage.sse",
        () => import("../packages/chat-completions.js"),
        "chat-completions"
      )
    ).toBe("The capital of the UK is London.\n")
  })

  it("tools.ts: a tool loop against the recorded calculator session", async () => {
    expect(
      await runAgainst("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt", () => import("../packages/tools.js"))
    ).toBe("The final result is **570**.\n")
  })

  it("effect-ai.ts: an @effect/ai toolkit app over the Responses layer, against the recorded calculator session", async () => {
    expect(
      await runAgainst("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt", () => import("../packages/effect-ai.js"))
    ).toBe("The final result is **570**.\n")
  })

  it("cli.ts: the demo calculator over the protocol chosen by configuration", async () => {
    expect(
      await runAgainst("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt", () => import("../packages/cli.js"))
    ).toBe("The final result is **570**.\n")
  })

  // packages/server.ts serves forever on port 8787 in front of a local Ollama: it is type-checked only;
  // gateway.ts above runs the same layers on loopback ports.
})

describe("examples", () => {
  it("tool.ts: a tool of one's own answers the recorded session's three calculator calls", async () => {
    expect(await run(() => import("../tool.js"))).toBe("4 model calls, answer: The final result is **570**.\n")
  })

  it("agent.ts: apply_patch calls applied in a workspace directory (a capture written for the CLI's tests)", async () => {
    expect(await runAgainst("packages/cli/test/captures/apply-patch-todo.chunks.txt", () => import("../agent.js"))).toBe(
      "I created `notes/todo.md`, checked off milk and added eggs.\n# Todo\n\n- [x] milk\n- [ ] bread\n- [ ] eggs\n\n"
    )
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

  it("testing.ts: the recorded session replayed by ReplayHttpClient, the request kept", async () => {
    expect(await run(() => import("../testing.js"))).toBe(
      "1 request sent; the model asked for: calculator {\"a\":12,\"b\":7,\"op\":\"add\"}\n"
    )
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
    const lines = (await run(() => import("../gateway.js"))).trimEnd().split("\n")
    // the gateway's access log (an info line through Effect's default logger) comes before the program's answer
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/level=INFO .*access: POST \/v1\/responses 200 model=\\?"?gpt-4o-mini\\?"? stream=false/)
    expect(lines[1]).toBe("completed: The capital of the UK is London. (87 tokens)")
  })
})
