/**
 * A client-run call that no output answers later in `input` is refused alike whatever its type (function,
 * custom, apply_patch, shell, local_shell), with the API's 400 ("No tool output found for local shell call
 * call_…", param `input`, as openai/openai-agents-python#1855 quotes it for a `local_shell_call`), naming
 * the first such call in input order, also when the calls come from a stored response continued with
 * `previous_response_id`. A client-run tool search (`execution: "client"`, with a `call_id`) without its
 * `tool_search_output` is one too (Codex gives such a search an output before it sends a conversation, as it
 * does a function call: openai/codex `codex-rs/core/src/context_manager/normalize.rs`). Hosted built-in calls,
 * reasoning, a server-run tool search and an answered one are no such calls.
 * Driven with the official `openai` SDK through the gateway to a scripted loopback upstream; item shapes
 * follow the API reference (`ShellCall`, `ApplyPatchToolCall`, `LocalShellToolCall`); ids are invented.
 */
import * as ResponseStoreSqlite from "@effect-responses/server/ResponseStoreSqlite"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { completion } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"

const TOOLS = [
  { type: "function", name: "f", parameters: { type: "object", properties: {} } },
  { type: "custom", name: "g" },
  { type: "apply_patch" },
  { type: "shell", environment: { type: "local" } },
  { type: "local_shell" }
]

/** Each client-run call type, one call of it, and the words of its 400. */
const CALLS = [
  { item: { type: "function_call", call_id: "call_f", name: "f", arguments: "{}" }, words: "function call call_f" },
  { item: { type: "custom_tool_call", call_id: "call_g", name: "g", input: "x" }, words: "custom tool call call_g" },
  {
    item: { type: "apply_patch_call", call_id: "call_a", status: "completed", operation: { type: "delete_file", path: "a.txt" } },
    words: "apply patch call call_a"
  },
  {
    item: { type: "shell_call", call_id: "call_s", status: "completed", action: { commands: ["ls"], timeout_ms: null, max_output_length: null } },
    words: "shell call call_s"
  },
  {
    item: {
      type: "local_shell_call",
      id: "lsh_1",
      call_id: "call_l",
      status: "completed",
      action: { type: "exec", command: ["ls"], env: {} }
    },
    words: "local shell call call_l"
  }
] as const

/** The SDK's error of a refused request (`undefined` when it was answered). */
const refusal = (client: OpenAI, body: Record<string, unknown>) =>
  client.responses.create({ model: "m", tools: TOOLS, ...body } as never).then(
    () => undefined,
    (error: unknown) => error as { status?: number; message?: string; param?: string }
  )

describe("a client-run call without its output", () => {
  it.effect("stateless: every type is a 400 naming it (param input), nothing goes upstream", () =>
    withScriptedGateway([completion({ content: "never" })], {}, (url, received) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        for (const { item, words } of CALLS) {
          const error = await refusal(client, {
            input: [{ role: "user", content: "hi" }, item, { role: "user", content: "and?" }]
          })
          expect(error?.status, item.type).toBe(400)
          expect(error?.param, item.type).toBe("input")
          expect(error?.message, item.type).toContain(`No tool output found for ${words}: input[1] has no ${item.type}_output after it.`)
        }
        expect(received).toHaveLength(0)
      })))

  it.effect("the first unanswered call in input order is named, whatever its type", () =>
    withScriptedGateway([completion({ content: "never" })], {}, (url) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const [, custom, , shell] = CALLS
        const error = await refusal(client, { input: [{ role: "user", content: "hi" }, shell.item, custom.item] })
        expect(error?.message).toContain(`No tool output found for ${shell.words}: input[1]`)
      })))

  it.effect("answered (a local_shell_call_output naming its call by the item's id included): sent upstream", () =>
    withScriptedGateway([completion({ content: "done" })], {}, (url, received) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const outputs = [
          { type: "function_call_output", call_id: "call_f", output: "ok" },
          { type: "custom_tool_call_output", call_id: "call_g", output: "ok" },
          { type: "apply_patch_call_output", call_id: "call_a", status: "completed", output: "deleted" },
          { type: "shell_call_output", call_id: "call_s", output: [{ stdout: "a.txt\n", stderr: "", outcome: { type: "exit", exit_code: 0 } }] },
          { type: "local_shell_call_output", id: "lsh_1", output: "a.txt" }
        ]
        const response = await client.responses.create({
          model: "m",
          tools: TOOLS,
          input: [{ role: "user", content: "hi" }, ...CALLS.map((call) => call.item), ...outputs]
        } as never)
        expect(response.output_text).toBe("done")
        const messages = received[0]!.body.messages as ReadonlyArray<{ role: string; tool_call_id?: string }>
        expect(messages.filter((message) => message.role === "tool").map((message) => message.tool_call_id)).toEqual(
          ["call_f", "call_g", "call_a", "call_s", "call_l"]
        )
      })))

  it.effect("no false 400: hosted built-in calls, reasoning and a tool search with its output need no answer", () =>
    withScriptedGateway([completion({ content: "done" })], {}, (url) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const response = await client.responses.create({
          model: "m",
          tools: [{ type: "web_search" }, { type: "tool_search", execution: "client" }],
          input: [
            { role: "user", content: "hi" },
            { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Searching." }] },
            { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } },
            { type: "tool_search_call", call_id: "call_t", execution: "client", status: "completed", arguments: { paths: [] } },
            { type: "tool_search_output", call_id: "call_t", execution: "client", status: "completed", tools: [] },
            { role: "user", content: "and?" }
          ]
        } as never)
        expect(response.output_text).toBe("done")
      })))

  it.effect("a client-run tool search without its tool_search_output is a 400 as the other calls are; server-run and answered ones are not", () =>
    withScriptedGateway([completion({ content: "done" }), completion({ content: "done" })], {}, (url, received) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const tools = [{ type: "tool_search", execution: "client" }, ...TOOLS]
        // as the gateway writes the upstream's search for the client to run (`execution: "client"`)
        const search = { type: "tool_search_call", id: "tsc_1", call_id: "call_t", execution: "client", status: "completed", arguments: { query: "mail" } }
        const error = await refusal(client, {
          tools,
          input: [{ role: "user", content: "hi" }, search, { role: "user", content: "and?" }]
        })
        expect(error?.status).toBe(400)
        expect(error?.param).toBe("input")
        expect(error?.message).toContain("No tool output found for tool search call call_t: input[1] has no tool_search_output after it.")
        // first in input order, before a function call left unanswered after it
        const first = await refusal(client, { tools, input: [{ role: "user", content: "hi" }, search, CALLS[0].item] })
        expect(first?.message).toContain("No tool output found for tool search call call_t: input[1]")
        expect(received).toHaveLength(0)
        // answered by its output: sent upstream
        const answered = await client.responses.create({
          model: "m",
          tools,
          input: [
            { role: "user", content: "hi" },
            search,
            { type: "tool_search_output", call_id: "call_t", execution: "client", status: "completed", tools: [] },
            { role: "user", content: "and?" }
          ]
        } as never)
        expect(answered.output_text).toBe("done")
        // a search the API ran (its output written beside it, call_id null) waits for nothing
        const hosted = await client.responses.create({
          model: "m",
          tools: [{ type: "tool_search" }],
          input: [
            { role: "user", content: "hi" },
            { type: "tool_search_call", id: "tsc_2", call_id: null, execution: "server", status: "completed", arguments: { paths: ["x"] } },
            { role: "user", content: "and?" }
          ]
        } as never)
        expect(hosted.output_text).toBe("done")
        expect(received).toHaveLength(2)
      })))

  it.effect("continued with previous_response_id after a response holding a client-run tool search: the search is named", () =>
    Effect.gen(function*() {
      const filename = join(mkdtempSync(join(tmpdir(), "effect-responses-unanswered-")), "responses.db")
      yield* withScriptedGateway([
        completion({
          content: null,
          tool_calls: [{ id: "call_t", type: "function", function: { name: "tool_search", arguments: "{\"query\":\"mail\"}" } }]
        }, "tool_calls"),
        completion({ content: "never" })
      ], { store: ResponseStoreSqlite.layer({ filename }) }, (url, received) =>
        Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const tools = [{ type: "tool_search", execution: "client" }]
          const first = await client.responses.create({ model: "m", tools, store: true, input: "hi" } as never)
          expect(first.output).toMatchObject([{ type: "tool_search_call", call_id: "call_t", execution: "client" }])
          const error = await refusal(client, { tools, previous_response_id: first.id, input: [{ role: "user", content: "and?" }] })
          expect(error?.status).toBe(400)
          expect(error?.message).toContain("No tool output found for tool search call call_t: input[1] has no tool_search_output after it.")
          expect(received).toHaveLength(1)
        }))
    }))

  it.effect("continued with previous_response_id after a response holding a shell call and a custom call: the shell call (input[1]) is named", () =>
    Effect.gen(function*() {
      const filename = join(mkdtempSync(join(tmpdir(), "effect-responses-unanswered-")), "responses.db")
      yield* withScriptedGateway([
        completion({
          content: null,
          tool_calls: [
            { id: "call_s", type: "function", function: { name: "shell", arguments: "{\"commands\":[\"ls\"]}" } },
            { id: "call_g", type: "function", function: { name: "g", arguments: "{\"input\":\"x\"}" } }
          ]
        }, "tool_calls"),
        completion({ content: "never" })
      ], { store: ResponseStoreSqlite.layer({ filename }) }, (url, received) =>
        Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const first = await client.responses.create({ model: "m", tools: TOOLS, store: true, input: "hi" } as never)
          expect(first.output.map((item) => item.type)).toEqual(["shell_call", "custom_tool_call"])
          const error = await refusal(client, { previous_response_id: first.id, input: [{ role: "user", content: "and?" }] })
          expect(error?.status).toBe(400)
          expect(error?.message).toContain("No tool output found for shell call call_s: input[1] has no shell_call_output after it.")
          expect(received).toHaveLength(1)
        }))
    }))
})
