/**
 * `chat --protocol chat-completions` and `serve`, run as a user runs them, against scripted upstreams that
 * refuse a tool turn unless what the model sent on the turn before comes back: DeepSeek's thinking mode
 * (`reasoning_content` on the assistant message, api-docs.deepseek.com/guides/thinking_mode#tool-calls) and
 * Gemini 3 (the tool call's `extra_content.google.thought_signature`,
 * ai.google.dev/gemini-api/docs/thought-signatures).
 */
import { chunk, completionText } from "@effect-responses/testing/ScriptedServer"
import { describe, expect, it } from "@effect/vitest"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Cli from "./run.js"

const REASONING = "Need the calculator."

type Message = { readonly role: string; readonly reasoning_content?: unknown; readonly tool_calls?: unknown }

/**
 * DeepSeek's thinking mode with tools: the first turn thinks and calls the calculator; a turn after the
 * call is refused (400, DeepSeek's message) unless the assistant message holding the call has its
 * `reasoning_content` back.
 */
const deepSeek = (messages: ReadonlyArray<Message>): { status: number; body: string } => {
  if (!messages.some((message) => message.role === "tool")) {
    return {
      status: 200,
      body: chunk({ role: "assistant", content: null, reasoning_content: REASONING }) +
        chunk({ tool_calls: [{ index: 0, id: "call_00_abc", type: "function", function: { name: "calculator", arguments: "{\"a\":2,\"b\":3,\"op\":\"add\"}" } }] }) +
        chunk({ content: "" }, "tool_calls") + "data: [DONE]\n\n"
    }
  }
  const call = messages.find((message) => message.role === "assistant" && message.tool_calls !== undefined)
  if (typeof call?.reasoning_content !== "string") {
    return {
      status: 400,
      body: JSON.stringify({
        error: {
          message: "The `reasoning_content` in the thinking mode must be passed back to the API.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_request_error"
        }
      })
    }
  }
  return { status: 200, body: chunk({ role: "assistant", content: "The sum is 5." }) + chunk({ content: "" }, "stop") + "data: [DONE]\n\n" }
}

const SIGNATURE = "CiQB0e2Kb8cfVQ8n1sQ8qGvZ7uYtBmW1tqk6Gx3m2Ew3kX0="

/**
 * Gemini 3 through its OpenAI compatibility: the first turn calls the calculator, the call carrying a thought
 * signature in `extra_content` (the call whole in one chunk, no `index`, `finish_reason: "stop"`, as
 * captured); a turn after the call is refused (400, Gemini's error list) unless the tool call carries the
 * signature back.
 */
const gemini = (messages: ReadonlyArray<Message>): { status: number; body: string } => {
  if (!messages.some((message) => message.role === "tool")) {
    const call = {
      extra_content: { google: { thought_signature: SIGNATURE } },
      function: { arguments: "{\"a\":2,\"b\":3,\"op\":\"add\"}", name: "calculator" },
      id: "function-call-8723457193",
      type: "function"
    }
    return { status: 200, body: chunk({ role: "assistant", tool_calls: [call] }, "stop") + "data: [DONE]\n\n" }
  }
  const calls = messages.find((message) => message.role === "assistant")?.tool_calls as
    | ReadonlyArray<{ readonly extra_content?: { readonly google?: { readonly thought_signature?: unknown } } }>
    | undefined
  if (calls?.[0]?.extra_content?.google?.thought_signature !== SIGNATURE) {
    return {
      status: 400,
      body: JSON.stringify([{
        error: { code: 400, message: "Function call is missing a thought_signature in functionCall parts.", status: "INVALID_ARGUMENT" }
      }])
    }
  }
  return { status: 200, body: chunk({ role: "assistant", content: "The sum is 5." }, "stop") + "data: [DONE]\n\n" }
}

/** A scripted upstream answering every request with `answer`; the request bodies it received. */
const upstream = async (answer: (messages: ReadonlyArray<Message>) => { status: number; body: string }) => {
  const bodies: Array<{ readonly messages: ReadonlyArray<Message>; readonly stream?: boolean }> = []
  const server: Server = createServer((request, response) => {
    let text = ""
    request.on("data", (data: Buffer) => (text += data.toString("utf8")))
    request.on("end", () => {
      const body = JSON.parse(text)
      bodies.push(body)
      const { body: out, status } = answer(body.messages)
      if (status === 200 && body.stream === false) {
        // a whole answer: the streamed deltas joined into one message
        const message: Record<string, unknown> = { role: "assistant" }
        for (const frame of out.split("\n\n")) {
          if (!frame.startsWith("data: {")) continue
          const delta = JSON.parse(frame.slice(6)).choices[0].delta as Record<string, unknown>
          for (const [key, value] of Object.entries(delta)) if (value !== null && value !== "") message[key] = value
        }
        response.writeHead(200, { "content-type": "application/json" })
        response.end(completionText(message, message.tool_calls === undefined ? "stop" : "tool_calls"))
        return
      }
      response.writeHead(status, { "content-type": status === 200 ? "text/event-stream" : "application/json" })
      response.end(out)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    bodies,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Starts `serve` over `upstreamUrl` with `args`; its base URL, what it wrote, and a way to stop it. */
const serve = async (upstreamUrl: string, args: ReadonlyArray<string>) => {
  const running = Cli.start(["serve", "--upstream", upstreamUrl, "--port", "0", ...args])
  await running.waitFor(/serving http:\/\/127\.0\.0\.1:\d+\/v1/)
  const base = /serving (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(running.output().stdout)![1]!
  return {
    base,
    stderr: () => running.output().stderr,
    stop: async () => {
      running.child.kill("SIGTERM")
      await running.done
    }
  }
}

const TOOLS = [{
  type: "function",
  name: "calculator",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" }, op: { type: "string" } } }
}]

/** Two turns through the gateway at `base`, as a client sends them: turn 1 streamed, turn 2 whole with turn 1's output and the result. */
const twoTurns = async (base: string) => {
  const input = [{ role: "user", content: "2 + 3?" }]
  const first = await fetch(`${base}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "deepseek-v4-flash", input, tools: TOOLS, stream: true })
  })
  const frames = (await first.text()).split("\n\n").filter((frame) => frame.includes("response.completed"))
  const completed = JSON.parse(frames[0]!.slice(frames[0]!.indexOf("data: ") + 6))
  const output = completed.response.output as ReadonlyArray<{ type: string; call_id?: string }>
  const call = output.find((item) => item.type === "function_call")!
  const second = await fetch(`${base}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "deepseek-v4-flash",
      input: [...input, ...output, { type: "function_call_output", call_id: call.call_id, output: "5" }],
      tools: TOOLS
    })
  })
  return { output, second: { status: second.status, json: await second.json() } }
}

describe("chat and serve against upstreams that want something back", () => {
  it("DeepSeek thinking mode: chat --protocol chat-completions --replay-reasoning-content completes the tool loop; without it the 400 names the flag", async () => {
    const backend = await upstream(deepSeek)
    try {
      const env = { OPENAI_BASE_URL: backend.url }
      const args = ["chat", "--protocol", "chat-completions", "--model", "deepseek-v4-flash", "2 + 3?"]
      const replayed = await Cli.run([...args, "--replay-reasoning-content"], { env })
      expect(replayed.status, replayed.stderr).toBe(0)
      expect(replayed.stdout).toContain("The sum is 5.")
      const turn2 = backend.bodies[1]!.messages.find((message) => message.role === "assistant")
      expect(turn2).toMatchObject({ role: "assistant", reasoning_content: REASONING, tool_calls: [{ id: "call_00_abc" }] })

      const plain = await Cli.run(args, { env })
      expect(plain.status).toBe(1)
      expect(plain.stderr).toContain("The `reasoning_content` in the thinking mode must be passed back to the API.")
      expect(plain.stderr).toContain("--replay-reasoning-content")
    } finally {
      await backend.close()
    }
  }, 90_000)

  it("Gemini 3: chat --protocol chat-completions sends the thought signature back and completes the tool loop", async () => {
    const backend = await upstream(gemini)
    try {
      const result = await Cli.run(["chat", "--protocol", "chat-completions", "--model", "gemini-3-pro-preview", "2 + 3?"], {
        env: { OPENAI_BASE_URL: backend.url }
      })
      expect(result.status, result.stderr).toBe(0)
      expect(result.stdout).toContain("The sum is 5.")
      expect(backend.bodies).toHaveLength(2)
      expect(backend.bodies[1]!.messages.find((message) => message.role === "assistant")?.tool_calls).toEqual([{
        id: "function-call-8723457193",
        type: "function",
        function: { name: "calculator", arguments: "{\"a\":2,\"b\":3,\"op\":\"add\"}" },
        extra_content: { google: { thought_signature: SIGNATURE } }
      }])
    } finally {
      await backend.close()
    }
  }, 90_000)

  it("DeepSeek thinking mode: serve --replay-reasoning-content sends the client's reasoning item back as reasoning_content on the message of its call", async () => {
    const backend = await upstream(deepSeek)
    const gateway = await serve(backend.url, ["--replay-reasoning-content"])
    try {
      const { output, second } = await twoTurns(gateway.base)
      expect(output.map((item) => item.type)).toEqual(["reasoning", "function_call"])
      expect(second.status, JSON.stringify(second.json)).toBe(200)
      expect(second.json.output_text ?? second.json.output[0].content[0].text).toBe("The sum is 5.")
      expect(backend.bodies[1]!.messages).toMatchObject([
        { role: "user", content: "2 + 3?" },
        { role: "assistant", reasoning_content: REASONING, tool_calls: [{ id: "call_00_abc" }] },
        { role: "tool", tool_call_id: "call_00_abc", content: "5" }
      ])
    } finally {
      await gateway.stop()
      await backend.close()
    }
  }, 90_000)

  it("DeepSeek thinking mode: serve without the flag passes the upstream's 400 on and logs a warning naming the flag", async () => {
    const backend = await upstream(deepSeek)
    const gateway = await serve(backend.url, [])
    try {
      const { second } = await twoTurns(gateway.base)
      expect(second.status).toBe(400)
      expect(second.json.error.message).toContain("must be passed back to the API")
      expect(backend.bodies[1]!.messages[1]).not.toHaveProperty("reasoning_content")
      expect(gateway.stderr()).toContain("--replay-reasoning-content")
    } finally {
      await gateway.stop()
      await backend.close()
    }
  }, 90_000)
})
