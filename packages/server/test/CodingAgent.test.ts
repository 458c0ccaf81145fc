/**
 * Requests real coding agents send, through the gateway to a scripted loopback Chat Completions upstream:
 * custom (freeform) tools with a grammar, namespaced tools called by any of their names, a client-run tool
 * search with deferred tools, `additional_tools`, built-in tools, the client-run `apply_patch`, `shell` and
 * `local_shell` tools, an AI SDK `item_reference` to reasoning, two assistant messages in a row, empty
 * arguments. Checked on the raw SSE (`checkLifecycle`), with the
 * official `openai` SDK (`finalResponse()`, which checks item ids per output index), and on the request
 * the upstream received. Request shapes follow the API reference (`CreateResponse`, `CustomToolParam`,
 * `AdditionalToolsItemParam`, `ToolSearchCall`, `ToolSearchOutput`, `LocalShellToolCall`,
 * `LocalShellToolCallOutput`); ids are invented.
 */
import { ChatCompletionsRequest } from "@effect-responses/chat-completions"
import { LanguageModel } from "@effect-responses/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { completion, finishChunks, type Handler, sse, textChunk, toolChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { type Entry, orders, toolsOf } from "./toolOrders.js"
import { captureLogs, checkLifecycle, parseSse, post, type WireJson as Json } from "./utils.js"

const APPLY_PATCH_GRAMMAR = `start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?
hunk: add_hunk
add_hunk: "*** Add File: " filename LF add_line+
filename: /(.+)/
add_line: "+" /(.*)/ LF -> line
%import common.LF`

/** A request shaped like a coding agent's (Codex-style tools, an AI SDK-style reasoning reference). */
const agentRequest = (stream: boolean) => ({
  model: "gpt-5-codex",
  instructions: "You are a coding agent.",
  stream,
  store: false,
  include: ["reasoning.encrypted_content"],
  parallel_tool_calls: false,
  tools: [
    {
      type: "custom",
      name: "apply_patch",
      description: "Use the `apply_patch` tool to edit files.",
      format: { type: "grammar", syntax: "lark", definition: APPLY_PATCH_GRAMMAR }
    },
    {
      type: "function",
      name: "shell",
      description: "Runs a shell command.",
      parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } }, required: ["command"] },
      strict: false
    },
    {
      type: "namespace",
      name: "crm",
      description: "The CRM.",
      tools: [
        { type: "function", name: "lookup", parameters: { type: "object", properties: { id: { type: "string" } } } },
        { type: "function", name: "archive", defer_loading: true, parameters: { type: "object", properties: {} } }
      ]
    },
    { type: "tool_search", execution: "client", description: "Search the deferred tools." },
    { type: "web_search" }
  ],
  input: [
    { type: "message", role: "user", content: [{ type: "input_text", text: "Add a.txt" }] },
    { type: "item_reference", id: "rs_0123456789abcdef" },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "again" }] },
    { type: "custom_tool_call", call_id: "call_patch_1", name: "apply_patch", input: "*** Begin Patch\n*** End Patch\n" },
    { type: "custom_tool_call_output", call_id: "call_patch_1", output: "Done!" },
    {
      type: "additional_tools",
      role: "developer",
      tools: [{ type: "function", name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } }]
    },
    { type: "tool_search_call", id: "tsc_1", call_id: "call_search_1", execution: "client", arguments: { query: "billing" }, status: "completed" },
    {
      type: "tool_search_output",
      id: "tso_1",
      call_id: "call_search_1",
      execution: "client",
      status: "completed",
      tools: [{ type: "function", name: "refund", defer_loading: true, parameters: { type: "object", properties: {} } }]
    },
    { type: "function_call", call_id: "call_shell_1", name: "shell", arguments: "" },
    { type: "function_call_output", call_id: "call_shell_1", output: "a.txt" }
  ]
})

/**
 * A request of a client with the `local_shell` tool and three earlier calls of it, their outputs naming the
 * call by `id` (the call id, as the API reference has it), by `call_id`, and by the call item's `id`.
 */
const localShellRequest = (stream: boolean) => ({
  model: "codex-mini-latest",
  stream,
  tools: [{ type: "local_shell" }],
  input: [
    { role: "user", content: "What is in a.txt?" },
    {
      type: "local_shell_call",
      id: "lsh_0",
      call_id: "call_0",
      status: "completed",
      action: { type: "exec", command: ["cat", "a.txt"], env: {}, timeout_ms: null, working_directory: "/work", user: null }
    },
    { type: "local_shell_call_output", id: "call_0", output: JSON.stringify({ output: "hi\n", metadata: { exit_code: 0 } }) },
    {
      type: "local_shell_call",
      id: "lsh_1",
      call_id: "call_1",
      status: "completed",
      action: { type: "exec", command: ["pwd"], env: { A: "b" }, timeout_ms: 500, user: "me" }
    },
    { type: "local_shell_call_output", call_id: "call_1", output: "/work" },
    { type: "local_shell_call", id: "lsh_2", call_id: "call_2", status: "completed", action: { type: "exec", command: ["true"], env: {} } },
    { type: "local_shell_call_output", id: "lsh_2", output: "done" }
  ]
})

/** The arguments of an apply_patch call, split so that fragments cut an escape (`\n`) and a `\u00e9`. */
const PATCH_INPUT = "*** Begin Patch\n*** Add File: caf\u00e9.txt\n+h\"i\n*** End Patch\n"
const patchFragments = (): ReadonlyArray<string> => {
  const json = JSON.stringify({ input: PATCH_INPUT }).replace("\u00e9", "\\u00e9")
  const cuts = [3, 11, json.indexOf("\\n") + 1, json.indexOf("\\u00e9") + 3, json.length - 4]
  const out: Array<string> = []
  let from = 0
  for (const cut of cuts) {
    out.push(json.slice(from, cut))
    from = cut
  }
  out.push(json.slice(from))
  return out
}

const patchStream = () =>
  sse(
    toolChunk({ id: "call_p", name: "apply_patch", arguments: "" }),
    ...patchFragments().map((fragment) => toolChunk({ arguments: fragment })),
    finishChunks("tool_calls")
  )

describe("a coding agent's request through the gateway", () => {
  it.effect("what the upstream receives: the tools the client may call now (a deferred one once a search loaded it) and its search, custom ones as one-string functions, the items as context", () =>
    withScriptedGateway([patchStream()], {}, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, agentRequest(true))
        expect(answer.status).toBe(200)
        checkLifecycle(parseSse(answer.text))
        const body = received[0]!.body as Json
        const tools = body.tools.map((tool: Json) => tool.function.name)
        // crm.archive waits for the client's search (defer_loading, no search loaded it); refund was loaded
        expect(tools).toEqual(["apply_patch", "shell", "crm__lookup", "read_file", "refund", "tool_search"])
        // the namespace's description, which the upstream (no namespaces) would not see otherwise
        expect(body.tools[2].function.description).toBe("Namespace crm: The CRM.")
        const search = body.tools[5].function
        expect(search.description).toBe("Search the deferred tools.\n\nTools to load:\n- crm (namespace): The CRM.")
        expect(search.parameters).toMatchObject({ properties: { paths: { type: "array" } }, required: ["paths"] })
        // the function Chat Completions offers a custom tool as: the grammar in the description, one string parameter
        const patch = body.tools[0]
        expect(patch).toEqual(ChatCompletionsRequest.customToolAsFunction(
          new LanguageModel.CustomToolDefinition({
            name: "apply_patch",
            description: "Use the `apply_patch` tool to edit files.",
            format: { type: "grammar", syntax: "lark", definition: APPLY_PATCH_GRAMMAR }
          })
        ))
        expect(patch.function.parameters).toMatchObject({ properties: { input: { type: "string" } }, required: ["input"] })
        expect(patch.function.description).toContain("Use the `apply_patch` tool")
        expect(patch.function.description).toContain(`lark grammar (write the raw text it describes, not JSON):\n${APPLY_PATCH_GRAMMAR}`)
        const messages = body.messages as ReadonlyArray<Json>
        expect(messages.map((message) => message.role)).toEqual([
          "system",
          "user",
          "assistant",
          "assistant",
          "tool",
          "assistant",
          "tool",
          "assistant",
          "tool"
        ])
        // two assistant messages in a row stay apart
        expect(messages[2]!.content).toBe("ok")
        expect(messages[3]!.content).toBe("again")
        // the custom tool call as a call of the function standing for it
        expect(messages[3]!.tool_calls[0]).toMatchObject({
          id: "call_patch_1",
          function: { name: "apply_patch", arguments: JSON.stringify({ input: "*** Begin Patch\n*** End Patch\n" }) }
        })
        expect(messages[4]).toMatchObject({ role: "tool", tool_call_id: "call_patch_1", content: "Done!" })
        // the client's tool search as a call and its result
        expect(messages[5]!.tool_calls[0]).toMatchObject({
          id: "call_search_1",
          function: { name: "tool_search", arguments: "{\"query\":\"billing\"}" }
        })
        expect(messages[6]).toMatchObject({ tool_call_id: "call_search_1", content: "Tools loaded: refund." })
        // empty arguments go upstream as {}
        expect(messages[7]!.tool_calls[0].function).toEqual({ name: "shell", arguments: "{}" })
      })))

  it.effect("an apply_patch call streams back as custom_tool_call_input deltas (escapes split across fragments)", () =>
    withScriptedGateway([patchStream()], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, agentRequest(true))
        const frames = parseSse(answer.text)
        const response = checkLifecycle(frames)
        expect(response.status).toBe("completed")
        const item = (response.output as ReadonlyArray<Json>)[0]!
        expect(item).toMatchObject({ type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: PATCH_INPUT })
        expect(item.id).toMatch(/^ctc_/)
        const deltas = frames.filter((frame) => frame.data.type === "response.custom_tool_call_input.delta")
        expect(deltas.length).toBeGreaterThan(2)
        expect(frames.some((frame) => frame.data.type.startsWith("response.function_call"))).toBe(false)
      })))

  /** `{"input":"a\u00e9\ud83d\ude00b"}` as Python's `json.dumps` writes it, in 7-character fragments. */
  const sevens = (json: string) => Array.from({ length: Math.ceil(json.length / 7) }, (_, i) => json.slice(i * 7, i * 7 + 7))
  /** A lone surrogate (a pair is one code point to a `u` pattern). */
  const LONE_SURROGATE = /\p{Cs}/u
  for (
    const c of [
      {
        what: "escaped, 7-character fragments (\\u00e9\\ud8 | 3d\\ude0 | 0b\"})",
        fragments: sevens(String.raw`{"input":"a\u00e9\ud83d\ude00b"}`),
        input: "a\u00e9\u{1F600}b"
      },
      {
        what: "escaped, a fragment ending right after each high surrogate",
        fragments: [String.raw`{"input":"\ud83d`, String.raw`\ude00\ud83d`, String.raw`\ude01"}`],
        input: "\u{1F600}\u{1F601}"
      },
      {
        what: "literal, the pair cut between two fragments",
        fragments: ["{\"input\":\"x\ud83d", "\ude00y\"}"],
        input: "x\u{1F600}y"
      },
      {
        what: "a lone high surrogate the input itself ends with: written as it is, in the last delta",
        fragments: [String.raw`{"input":"z\ud83d`, "\"}"],
        input: "z\ud83d"
      }
    ]
  ) {
    it.effect(`an apply_patch input with a surrogate pair cut between fragments, ${c.what}: no delta holds half a pair, together they are the input`, () =>
      withScriptedGateway([
        sse(
          toolChunk({ id: "call_s", name: "apply_patch", arguments: "" }),
          ...c.fragments.map((fragment) => toolChunk({ arguments: fragment })),
          finishChunks("tool_calls")
        )
      ], {}, (url) =>
        Effect.gen(function*() {
          const answer = yield* post(`${url}/responses`, agentRequest(true))
          const frames = parseSse(answer.text)
          const response = checkLifecycle(frames)
          expect((response.output as ReadonlyArray<Json>)[0]).toMatchObject({ type: "custom_tool_call", input: c.input })
          const deltas = frames.filter((frame) => frame.data.type === "response.custom_tool_call_input.delta").map((frame) => frame.data.delta as string)
          expect(deltas.join("")).toBe(c.input)
          // a lone surrogate only where the input has one (its end, so the last delta)
          const whole = LONE_SURROGATE.test(c.input) ? deltas.slice(0, -1) : deltas
          expect(whole.filter((delta) => LONE_SURROGATE.test(delta))).toEqual([])
          if (LONE_SURROGATE.test(c.input)) expect(deltas.at(-1)).toBe("\ud83d")
        })))
  }

  it.effect("an apply_patch call cut off inside its JSON (the upstream breaks off): its input deltas give what arrived, decoded, and nothing closes it (no .done, not in the failed output)", () =>
    withScriptedGateway([(_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write(toolChunk({ index: 0, id: "call_c", name: "apply_patch", arguments: "{\"input\":\"*** Begin" }))
      response.write(toolChunk({ index: 0, arguments: " Patch\\n*** Upd" }), () => setTimeout(() => response.socket?.destroy(), 50))
    }], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, agentRequest(true))
        const frames = parseSse(answer.text)
        const response = checkLifecycle(frames)
        expect(response.status).toBe("failed")
        const deltas = frames.filter((frame) => frame.data.type === "response.custom_tool_call_input.delta")
        const streamed = deltas.map((frame) => frame.data.delta).join("")
        expect(streamed).toBe("*** Begin Patch\n*** Upd")
        const types = frames.map((frame) => frame.data.type)
        expect(types).not.toContain("response.custom_tool_call_input.done")
        expect(types).not.toContain("response.output_item.done")
        expect(response.output).toEqual([])
      })))

  it.effect("an apply_patch call whose upstream named the parameter otherwise, or wrote the input bare, still gives the input", () =>
    withScriptedGateway([
      sse(
        toolChunk({ index: 0, id: "call_n", name: "apply_patch", arguments: "{\"patch\": " }),
        toolChunk({ index: 0, arguments: JSON.stringify(PATCH_INPUT) + "}" }),
        toolChunk({ index: 1, id: "call_b", name: "apply_patch", arguments: PATCH_INPUT.slice(0, 9) }),
        toolChunk({ index: 1, arguments: PATCH_INPUT.slice(9) }),
        finishChunks("tool_calls")
      )
    ], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, agentRequest(true))
        const output = checkLifecycle(parseSse(answer.text)).output as ReadonlyArray<Json>
        expect(output.map((item) => [item.type, item.call_id, item.input])).toEqual([
          ["custom_tool_call", "call_n", PATCH_INPUT],
          ["custom_tool_call", "call_b", PATCH_INPUT]
        ])
      })))

  it.effect("a custom or namespaced call whose name the upstream streams in pieces (apply_ + patch, crm. + lookup) is still that call, its input whole", () =>
    withScriptedGateway([
      sse(
        toolChunk({ index: 0, id: "call_s", name: "apply_", arguments: "" }),
        toolChunk({ index: 0, name: "patch", arguments: "{\"input\": " }),
        toolChunk({ index: 0, arguments: JSON.stringify(PATCH_INPUT) + "}" }),
        toolChunk({ index: 1, id: "call_l", name: "crm.", arguments: "{\"id\"" }),
        toolChunk({ index: 1, name: "lookup", arguments: ": \"7\"}" }),
        toolChunk({ index: 2, id: "call_h", name: "sh", arguments: "" }),
        toolChunk({ index: 2, name: "ell", arguments: "{\"command\": [\"ls\"]}" }),
        finishChunks("tool_calls")
      )
    ], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, agentRequest(true))
        const frames = parseSse(answer.text)
        const output = checkLifecycle(frames).output as ReadonlyArray<Json>
        expect(output.map((item) => [item.type, item.id.split("_")[0], item.call_id, item.namespace, item.name, item.input ?? item.arguments])).toEqual([
          ["custom_tool_call", "ctc", "call_s", undefined, "apply_patch", PATCH_INPUT],
          ["function_call", "fc", "call_l", "crm", "lookup", "{\"id\": \"7\"}"],
          ["function_call", "fc", "call_h", undefined, "shell", "{\"command\": [\"ls\"]}"]
        ])
        const added = frames.filter((frame) => frame.data.type === "response.output_item.added").map((frame) => (frame.data.item as Json).type)
        expect(added).toEqual(["custom_tool_call", "function_call", "function_call"])
      })))

  it.effect("openai SDK: stream() + finalResponse() and create() (non-streaming) both give the custom_tool_call", () =>
    withScriptedGateway([
      patchStream(),
      completion({
        content: null,
        tool_calls: [{ id: "call_w", type: "function", function: { name: "apply_patch", arguments: JSON.stringify({ input: PATCH_INPUT }) } }]
      }, "tool_calls")
    ], {}, (url) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const stream = client.responses.stream(agentRequest(true) as never)
        const final = await stream.finalResponse()
        expect(final.output[0]).toMatchObject({ type: "custom_tool_call", name: "apply_patch", input: PATCH_INPUT })
        const whole = await client.responses.create(agentRequest(false) as never)
        expect((whole as Json).output[0]).toMatchObject({ type: "custom_tool_call", call_id: "call_w", input: PATCH_INPUT })
      })))

  it.effect("an upstream call of tool_search (the client's tool search, as the history shows it) comes back as a client tool_search_call", () =>
    withScriptedGateway([
      sse(
        toolChunk({ index: 0, id: "call_ts", name: "tool_", arguments: "" }),
        toolChunk({ index: 0, name: "search", arguments: "{\"query\":" }),
        toolChunk({ index: 0, arguments: "\"refunds\"}" }),
        finishChunks("tool_calls")
      ),
      completion({
        content: null,
        tool_calls: [{ id: "call_tw", type: "function", function: { name: "tool_search", arguments: "{\"query\":\"invoices\"}" } }]
      }, "tool_calls"),
      // arguments that are no JSON object: the function call it was, nothing lost
      sse(toolChunk({ index: 0, id: "call_tx", name: "tool_search", arguments: "refunds" }), finishChunks("tool_calls"))
    ], {}, (url) =>
      Effect.gen(function*() {
        const frames = parseSse((yield* post(`${url}/responses`, agentRequest(true))).text)
        const output = checkLifecycle(frames).output as ReadonlyArray<Json>
        expect(output).toHaveLength(1)
        expect(output[0]).toMatchObject({
          type: "tool_search_call",
          status: "completed",
          call_id: "call_ts",
          execution: "client",
          arguments: { query: "refunds" }
        })
        expect(output[0]!.id).toMatch(/^tsc_/)
        // as the API streams one: added with arguments {}, then done
        const added = frames.find((frame) => frame.data.type === "response.output_item.added")!.data.item as Json
        expect(added).toMatchObject({ type: "tool_search_call", status: "in_progress", arguments: {}, call_id: "call_ts" })
        expect(frames.some((frame) => frame.data.type.startsWith("response.function_call"))).toBe(false)
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const whole = yield* Effect.promise(() => client.responses.create(agentRequest(false) as never))
        expect((whole as Json).output[0]).toMatchObject({ type: "tool_search_call", call_id: "call_tw", execution: "client", arguments: { query: "invoices" } })
        const bare = checkLifecycle(parseSse((yield* post(`${url}/responses`, agentRequest(true))).text)).output as ReadonlyArray<Json>
        expect(bare[0]).toMatchObject({ type: "function_call", name: "tool_search", arguments: "refunds" })
        expect(bare[0]!.id).toMatch(/^fc_/)
      })))

  it.effect("without a client-run tool_search tool in the request, an upstream call of tool_search stays a function call", () =>
    withScriptedGateway([sse(toolChunk({ index: 0, id: "call_ts", name: "tool_search", arguments: "{}" }), finishChunks("tool_calls"))], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools: [{ type: "tool_search" }] })
        const output = checkLifecycle(parseSse(answer.text)).output as ReadonlyArray<Json>
        expect(output[0]).toMatchObject({ type: "function_call", name: "tool_search", call_id: "call_ts" })
      })))

  it.effect("namespaced calls by flattened, dotted and bare name come back with their namespace; an ambiguous bare name does not", () => {
    const captured = captureLogs()
    return withScriptedGateway([
      sse(
        toolChunk({ index: 0, id: "call_1", name: "crm__lookup", arguments: "{}" }),
        toolChunk({ index: 1, id: "call_2", name: "crm.lookup", arguments: "{}" }),
        toolChunk({ index: 2, id: "call_3", name: "lookup", arguments: "{}" }),
        toolChunk({ index: 3, id: "call_4", name: "find", arguments: "{}" }),
        finishChunks("tool_calls")
      )
    ], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          input: "hi",
          stream: true,
          tools: [
            { type: "namespace", name: "crm", tools: [{ type: "function", name: "lookup" }, { type: "function", name: "find" }] },
            { type: "namespace", name: "erp", tools: [{ type: "function", name: "find" }] }
          ]
        })
        const output = checkLifecycle(parseSse(answer.text)).output as ReadonlyArray<Json>
        expect(output.map((item) => [item.namespace, item.name])).toEqual([
          ["crm", "lookup"],
          ["crm", "lookup"],
          ["crm", "lookup"],
          [undefined, "find"]
        ])
        expect(captured.logs.some((line) => line.startsWith("WARN") && line.includes("find") && line.includes("crm, erp"))).toBe(true)
      })).pipe(Effect.provide(captured.layer))
  })

  for (const order of ["the top-level tool first", "the namespaced tool first"] as const) {
    it.effect(`a top-level crm__lookup beside namespace crm's custom tool lookup (${order}): both are offered, each call comes back as its own tool, streamed and not`, () => {
      const topLevel = { type: "function", name: "crm__lookup", parameters: { type: "object", properties: { id: { type: "string" } } } }
      const namespace = { type: "namespace", name: "crm", tools: [{ type: "custom", name: "lookup", description: "looks a customer up" }] }
      const tools = order === "the top-level tool first" ? [topLevel, namespace] : [namespace, topLevel]
      // the upstream calls each tool it was offered, by the name it was offered it under
      const offered: Array<ReadonlyArray<string>> = []
      const callEach: Handler = (request, response, body) => {
        const names = (body.tools as ReadonlyArray<{ function: { name: string; parameters: { properties: Record<string, unknown> } } }>)
          .map((tool) => tool.function)
        offered.push(names.map((tool) => tool.name))
        const args = (tool: (typeof names)[number]) => "input" in tool.parameters.properties ? "{\"input\":\"42\"}" : "{\"id\":\"7\"}"
        const answer = body.stream === true
          ? sse(...names.map((tool, index) => toolChunk({ index, id: `call_${index}`, name: tool.name, arguments: args(tool) })), finishChunks("tool_calls"))
          : completion({
            content: null,
            tool_calls: names.map((tool, index) => ({ id: `call_${index}`, type: "function", function: { name: tool.name, arguments: args(tool) } }))
          }, "tool_calls")
        answer(request, response, body)
      }
      return withScriptedGateway([callEach], {}, (url) =>
        Effect.gen(function*() {
          for (const stream of [true, false]) {
            const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream, tools })
            expect(answer.status, answer.text).toBe(200)
            const output = (stream ? checkLifecycle(parseSse(answer.text)) : JSON.parse(answer.text)).output as ReadonlyArray<Json>
            const sent = offered[offered.length - 1]!
            expect(sent).toHaveLength(2)
            expect(new Set(sent).size).toBe(2)
            const items = output.map((item) => [item.type, item.namespace, item.name, item.arguments ?? item.input])
            const expected = [["function_call", undefined, "crm__lookup", "{\"id\":\"7\"}"], ["custom_tool_call", "crm", "lookup", "42"]]
            expect(items).toEqual(order === "the top-level tool first" ? expected : [expected[1], expected[0]])
          }
        }))
    })
  }

  it.effect("a namespaced tool renamed for a top-level tool of its flattened name, called by its bare name: comes back as itself (its kind, its namespace), in every order, streamed and not", () => {
    const fn = (name: string, id: string) => ({ type: "function", name, description: id, parameters: { type: "object", properties: {} } })
    const custom = (name: string, id: string) => ({ type: "custom", name, description: id })
    // crm's custom lookup beside the top-level function crm__lookup; and a set where the top-level custom tool
    // is literally named as crm's lookup is renamed, beside crm's function of that name
    const sets: ReadonlyArray<{ readonly entries: ReadonlyArray<Entry>; readonly calls: ReadonlyArray<readonly [string, Json]> }> = [
      {
        entries: [{ tool: fn("crm__lookup", "T1") }, { namespace: "crm", tool: custom("lookup", "T2") }],
        calls: [["lookup", ["custom_tool_call", "crm", "lookup", "X"]]]
      },
      {
        entries: [
          { tool: fn("crm__lookup", "T1") },
          { namespace: "crm", tool: fn("lookup", "T2") },
          { tool: custom("crm__lookup_8f66a0a4f1", "T3") },
          { namespace: "crm", tool: fn("lookup_8f66a0a4f1", "T4") }
        ],
        calls: [
          ["lookup", ["function_call", "crm", "lookup", "{\"input\":\"X\"}"]],
          ["lookup_8f66a0a4f1", ["function_call", "crm", "lookup_8f66a0a4f1", "{\"input\":\"X\"}"]]
        ]
      }
    ]
    // the upstream calls the tools by the bare names the test gives in the user message
    const callBare: Handler = (request, response, body) => {
      const messages = body.messages as ReadonlyArray<{ role: string; content: string }>
      const names = JSON.parse(messages.find((message) => message.role === "user")!.content) as ReadonlyArray<string>
      const answer = body.stream === true
        ? sse(...names.map((name, index) => toolChunk({ index, id: `call_${index}`, name, arguments: "{\"input\":\"X\"}" })), finishChunks("tool_calls"))
        : completion({
          content: null,
          tool_calls: names.map((name, index) => ({ id: `call_${index}`, type: "function", function: { name, arguments: "{\"input\":\"X\"}" } }))
        }, "tool_calls")
      answer(request, response, body)
    }
    return withScriptedGateway([callBare], {}, (url) =>
      Effect.gen(function*() {
        let checked = 0
        for (const { calls, entries } of sets) {
          for (const order of orders(entries)) {
            for (const stream of [true, false]) {
              const input = JSON.stringify(calls.map(([name]) => name))
              const answer = yield* post(`${url}/responses`, { model: "m", input, stream, tools: toolsOf(order) })
              expect(answer.status, answer.text).toBe(200)
              const output = (stream ? checkLifecycle(parseSse(answer.text)) : JSON.parse(answer.text)).output as ReadonlyArray<Json>
              const items = output.map((item) => [item.type, item.namespace, item.name, item.arguments ?? item.input])
              expect(items, JSON.stringify(order)).toEqual(calls.map(([, item]) => item))
              checked++
            }
          }
        }
        expect(checked).toBe((2 + 24) * 2)
      }))
  })

  it.effect("names over 64 characters or with dots go upstream renamed (stable across turns), and their calls come back as declared, streamed and not", () => {
    const longNamespace = "billing_and_invoicing_service_for_enterprise_customers"
    const tools = [
      {
        type: "namespace",
        name: longNamespace,
        tools: [
          { type: "function", name: "lookup_customer_by_email_address", parameters: { type: "object", properties: {} } },
          { type: "custom", name: "apply_invoice_patch_to_the_customer_ledger" }
        ]
      },
      { type: "function", name: "crm.lookup", parameters: { type: "object", properties: {} } },
      { type: "function", name: "crm_lookup", parameters: { type: "object", properties: {} } }
    ]
    const turn = (stream: boolean) => ({
      model: "m",
      stream,
      tools,
      input: [
        { role: "user", content: "hi" },
        { type: "function_call", call_id: "call_0", namespace: longNamespace, name: "lookup_customer_by_email_address", arguments: "{}" },
        { type: "function_call_output", call_id: "call_0", output: "found" }
      ]
    })
    // the upstream calls every tool it was offered, by the name it was offered
    const names = (body: Record<string, unknown>) =>
      (body.tools as ReadonlyArray<{ function: { name: string } }>).map((tool) => tool.function.name)
    const args = (index: number) => index === 1 ? JSON.stringify({ input: "patch" }) : "{}"
    return withScriptedGateway([
      (request, response, body) =>
        sse(...names(body).map((name, index) => toolChunk({ index, id: `call_${index + 1}`, name, arguments: args(index) })), finishChunks("tool_calls"))(
          request,
          response,
          body
        ),
      (request, response, body) =>
        completion({
          content: null,
          tool_calls: names(body).map((name, index) => ({ id: `call_${index + 1}`, type: "function", function: { name, arguments: args(index) } }))
        }, "tool_calls")(request, response, body)
    ], {}, (url, received) =>
      Effect.gen(function*() {
        const streamed = yield* post(`${url}/responses`, turn(true))
        const whole = yield* post(`${url}/responses`, turn(false))
        const sent = names(received[0]!.body)
        for (const name of sent) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
        expect(new Set(sent).size).toBe(4)
        expect(sent[3]).toBe("crm_lookup")
        // the same names in the second request, and the earlier call in the input under the name its tool has
        expect(names(received[1]!.body)).toEqual(sent)
        const history = (received[0]!.body.messages as ReadonlyArray<Json>)[1] as Json
        expect((history.tool_calls as ReadonlyArray<Json>)[0]).toMatchObject({ function: { name: sent[0] } })
        const expected = [
          ["function_call", longNamespace, "lookup_customer_by_email_address"],
          ["custom_tool_call", longNamespace, "apply_invoice_patch_to_the_customer_ledger"],
          ["function_call", undefined, "crm.lookup"],
          ["function_call", undefined, "crm_lookup"]
        ]
        const outputs = [
          checkLifecycle(parseSse(streamed.text)).output as ReadonlyArray<Json>,
          (JSON.parse(whole.text) as Json).output as ReadonlyArray<Json>
        ]
        for (const output of outputs) {
          expect(output.map((item) => [item.type, item.namespace, item.name])).toEqual(expected)
          expect(output[1]).toMatchObject({ input: "patch" })
        }
      }))
  })

  it.effect("an upstream call with empty arguments reaches the client as {} (the SDK's finalResponse parses it)", () =>
    withScriptedGateway([
      sse(toolChunk({ id: "call_e", name: "shell", arguments: "" }), finishChunks("tool_calls"))
    ], {}, (url) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const tools = [{ type: "function" as const, name: "shell", parameters: { type: "object", properties: {} }, strict: false }]
        const stream = client.responses.stream({ model: "m", input: "hi", tools })
        const final = await stream.finalResponse()
        expect(final.output[0]).toMatchObject({ type: "function_call", name: "shell", arguments: "{}" })
      })))

  it.effect("an answer with text after its tool call goes back with the call's result: the text joins the message holding the call", () =>
    withScriptedGateway([
      // text, a call, more text in one upstream answer: three output items (message, function_call, message)
      sse(
        textChunk("Let me check."),
        toolChunk({ id: "call_t", name: "shell", arguments: "{}" }),
        textChunk(" Checking now."),
        finishChunks("tool_calls")
      ),
      completion({ content: "done" })
    ], {}, (url, received) =>
      Effect.gen(function*() {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const tools = [{ type: "function" as const, name: "shell", parameters: { type: "object", properties: {} }, strict: false }]
        const first = yield* Effect.promise(() => client.responses.stream({ model: "m", input: "hi", tools }).finalResponse())
        expect(first.output.map((item) => item.type)).toEqual(["message", "function_call", "message"])
        // the next turn as the Agents SDK sends it: the output items as they came, then the call's result
        const second = yield* Effect.promise(() =>
          client.responses.create({
            model: "m",
            tools,
            input: [
              { role: "user", content: "hi" },
              ...first.output.map(({ parsed_arguments: _, ...item }: Json) => item),
              { type: "function_call_output", call_id: "call_t", output: "ok" }
            ] as never
          })
        )
        expect(second.output_text).toBe("done")
        const messages = (received[1]!.body as Json).messages as ReadonlyArray<Json>
        // as the upstream's one message had it: its whole text and its call, then the call's result, last
        expect(messages.map((message) => [message.role, message.content ?? null, message.tool_call_id ?? null])).toEqual([
          ["user", "hi", null],
          ["assistant", "Let me check. Checking now.", null],
          ["tool", "ok", "call_t"]
        ])
        expect(messages[1]!.tool_calls[0]).toMatchObject({ id: "call_t", function: { name: "shell" } })
      })))

  it.effect("two assistant messages after a tool call, before its result: joined to the call's message with a blank line, not glued", () =>
    withScriptedGateway([completion({ content: "done" })], {}, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          tools: [{ type: "custom", name: "apply_patch", description: "Edit files." }],
          input: [
            { role: "user", content: "hi" },
            { type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: "*** Begin Patch" },
            { type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] },
            { type: "message", role: "assistant", content: [{ type: "output_text", text: "again" }] },
            { type: "custom_tool_call_output", call_id: "call_p", output: "applied" }
          ]
        })
        expect(answer.status).toBe(200)
        const messages = (received[0]!.body as Json).messages as ReadonlyArray<Json>
        expect(messages.map((message) => [message.role, message.content ?? null, message.tool_call_id ?? null])).toEqual([
          ["user", "hi", null],
          ["assistant", "ok\n\nagain", null],
          ["tool", "applied", "call_p"]
        ])
        expect(messages[1]!.tool_calls[0]).toMatchObject({ id: "call_p", function: { name: "apply_patch" } })
      })))

  it.effect("an assistant message of output_text and refusal parts: the upstream gets its content and its refusal (alone, and after a tool call)", () =>
    withScriptedGateway([completion({ content: "done" }), completion({ content: "done" }), completion({ content: "done" })], {}, (url, received) =>
      Effect.gen(function*() {
        const both = [{ type: "output_text", text: "ok" }, { type: "refusal", refusal: "no" }]
        const inputs = [
          [{ role: "user", content: "a" }, { role: "assistant", content: both }, { role: "user", content: "b" }],
          [{ role: "user", content: "a" }, { role: "assistant", content: [{ type: "refusal", refusal: "no" }] }, { role: "user", content: "b" }],
          [
            { role: "user", content: "a" },
            { type: "function_call", call_id: "call_f", name: "shell", arguments: "{}" },
            { type: "message", role: "assistant", content: both },
            { type: "function_call_output", call_id: "call_f", output: "done" }
          ]
        ]
        for (const input of inputs) {
          const answer = yield* post(`${url}/responses`, { model: "m", input, tools: [{ type: "function", name: "shell" }] })
          expect(answer.status).toBe(200)
        }
        const assistants = received.map((request) => ((request.body as Json).messages as ReadonlyArray<Json>)[1]!)
        expect(assistants[0]).toEqual({ role: "assistant", content: "ok", refusal: "no" })
        expect(assistants[1]).toMatchObject({ role: "assistant", refusal: "no" })
        expect(assistants[2]).toMatchObject({ role: "assistant", content: "ok", refusal: "no", tool_calls: [{ id: "call_f" }] })
      })))

  it.effect("the client-run apply_patch tool: its call comes back as an apply_patch_call item; arguments that are no operation stay a function call", () =>
    withScriptedGateway([
      sse(
        toolChunk({ index: 0, id: "call_a", name: "apply_patch", arguments: "{\"type\":\"update_file\",\"path\":\"a.txt\"," }),
        toolChunk({ index: 0, arguments: "\"diff\":\"@@\\n-a\\n+b\\n\"}" }),
        toolChunk({ index: 1, id: "call_b", name: "apply_patch", arguments: "{\"type\":\"rename\"}" }),
        finishChunks("tool_calls")
      )
    ], {}, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          stream: true,
          tools: [{ type: "apply_patch" }],
          tool_choice: { type: "apply_patch" },
          input: [
            { role: "user", content: "Fix a.txt" },
            { type: "apply_patch_call", call_id: "call_0", status: "completed", operation: { type: "delete_file", path: "old.txt" } },
            { type: "apply_patch_call_output", call_id: "call_0", status: "failed", output: "old.txt: no such file" }
          ]
        })
        expect(answer.status, answer.text).toBe(200)
        const output = checkLifecycle(parseSse(answer.text)).output as ReadonlyArray<Json>
        expect(output[0]).toMatchObject({
          type: "apply_patch_call",
          call_id: "call_a",
          status: "completed",
          operation: { type: "update_file", path: "a.txt", diff: "@@\n-a\n+b\n" }
        })
        expect(output[0]!.id).toMatch(/^apc_/)
        expect(output[1]).toMatchObject({ type: "function_call", call_id: "call_b", name: "apply_patch", arguments: "{\"type\":\"rename\"}" })
        const body = received[0]!.body as Json
        expect(body.tool_choice).toEqual({ type: "function", function: { name: "apply_patch" } })
        const messages = body.messages as ReadonlyArray<Json>
        expect(messages[1]!.tool_calls[0].function).toEqual({ name: "apply_patch", arguments: "{\"type\":\"delete_file\",\"path\":\"old.txt\"}" })
        expect(messages[2]).toMatchObject({ role: "tool", tool_call_id: "call_0", content: "The patch was not applied. old.txt: no such file" })
      })))

  it.effect("the client-run shell tool: its call streams back as a shell_call item, command by command; arguments that are no action stay a function call", () =>
    withScriptedGateway([
      sse(
        toolChunk({ index: 0, id: "call_s", name: "shell", arguments: "{\"commands\":[\"ls -a\"," }),
        toolChunk({ index: 0, arguments: "\"cat a.txt\"],\"timeout_ms\":5000}" }),
        toolChunk({ index: 1, id: "call_t", name: "shell", arguments: "{\"command\":\"ls\"}" }),
        finishChunks("tool_calls")
      )
    ], {}, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          stream: true,
          tools: [{ type: "shell", environment: { type: "local" } }],
          tool_choice: { type: "shell" },
          input: [
            { role: "user", content: "What is in a.txt?" },
            { type: "shell_call", call_id: "call_0", status: "completed", action: { commands: ["pwd", "sleep 9"], timeout_ms: 1000, max_output_length: null } },
            {
              type: "shell_call_output",
              call_id: "call_0",
              max_output_length: null,
              output: [
                { stdout: "/work\n", stderr: "", outcome: { type: "exit", exit_code: 0 } },
                { stdout: "", stderr: "", outcome: { type: "timeout" } }
              ]
            }
          ]
        })
        expect(answer.status, answer.text).toBe(200)
        const frames = parseSse(answer.text)
        const output = checkLifecycle(frames).output as ReadonlyArray<Json>
        expect(output[0]).toEqual({
          id: expect.stringMatching(/^sh_/),
          type: "shell_call",
          status: "completed",
          action: { commands: ["ls -a", "cat a.txt"], max_output_length: null, timeout_ms: 5000 },
          call_id: "call_s"
        })
        // the recorded shape of a shell call's events (vai-openai-shell-call.chunks.txt)
        expect(frames.map((frame) => frame.data.type).slice(2, 11)).toEqual([
          "response.output_item.added",
          "response.shell_call_command.added",
          "response.shell_call_command.delta",
          "response.shell_call_command.done",
          "response.shell_call_command.added",
          "response.shell_call_command.delta",
          "response.shell_call_command.done",
          "response.output_item.done",
          "response.output_item.added"
        ])
        expect((frames[2]!.data.item as Json).action).toEqual({ commands: [], max_output_length: null, timeout_ms: null })
        expect(output[1]).toMatchObject({ type: "function_call", call_id: "call_t", name: "shell", arguments: "{\"command\":\"ls\"}" })
        const body = received[0]!.body as Json
        expect(body.tools.map((tool: Json) => tool.function.name)).toEqual(["shell"])
        expect(body.tools[0].function.parameters.required).toEqual(["commands"])
        expect(body.tool_choice).toEqual({ type: "function", function: { name: "shell" } })
        const messages = body.messages as ReadonlyArray<Json>
        expect(messages[1]!.tool_calls[0].function).toEqual({ name: "shell", arguments: "{\"commands\":[\"pwd\",\"sleep 9\"],\"timeout_ms\":1000}" })
        expect(messages[2]).toMatchObject({ role: "tool", tool_call_id: "call_0", content: "/work\n\n(exit code 0)\n\n(timed out)" })
      })))

  it.effect("the client-run local_shell tool: its call comes back as a local_shell_call item; arguments that are no exec action stay a function call", () =>
    withScriptedGateway([
      sse(
        toolChunk({ index: 0, id: "call_l", name: "local_shell", arguments: "{\"command\":[\"ls\",\"-la\"]," }),
        toolChunk({ index: 0, arguments: "\"working_directory\":\"/work\",\"timeout_ms\":2000}" }),
        toolChunk({ index: 1, id: "call_m", name: "local_shell", arguments: "{\"command\":\"ls\"}" }),
        finishChunks("tool_calls")
      )
    ], {}, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, localShellRequest(true))
        expect(answer.status, answer.text).toBe(200)
        const frames = parseSse(answer.text)
        const output = checkLifecycle(frames).output as ReadonlyArray<Json>
        expect(output[0]).toEqual({
          id: expect.stringMatching(/^lsh_/),
          type: "local_shell_call",
          status: "completed",
          call_id: "call_l",
          action: { type: "exec", command: ["ls", "-la"], timeout_ms: 2000, working_directory: "/work", env: {}, user: null }
        })
        expect(frames.map((frame) => frame.data.type).slice(2, 5)).toEqual([
          "response.output_item.added",
          "response.output_item.done",
          "response.output_item.added"
        ])
        expect(frames[2]!.data.item).toEqual({ ...output[0], status: "in_progress" })
        expect(output[1]).toMatchObject({ type: "function_call", call_id: "call_m", name: "local_shell", arguments: "{\"command\":\"ls\"}" })
        const body = received[0]!.body as Json
        expect(body.tools.map((tool: Json) => tool.function.name)).toEqual(["local_shell"])
        expect(body.tools[0].function.parameters.required).toEqual(["command"])
        const messages = body.messages as ReadonlyArray<Json>
        expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant", "tool"])
        expect(messages[1]!.tool_calls[0]).toMatchObject({
          id: "call_0",
          function: { name: "local_shell", arguments: "{\"command\":[\"cat\",\"a.txt\"],\"working_directory\":\"/work\"}" }
        })
        expect(messages[3]!.tool_calls[0].function.arguments).toBe("{\"command\":[\"pwd\"],\"timeout_ms\":500,\"env\":{\"A\":\"b\"},\"user\":\"me\"}")
        // the output names its call by `id` (the call id, as the API reference has it), by `call_id`, or by the call item's `id`
        expect(messages.filter((message) => message.role === "tool").map((message) => [message.tool_call_id, message.content])).toEqual([
          ["call_0", "{\"output\":\"hi\\n\",\"metadata\":{\"exit_code\":0}}"],
          ["call_1", "/work"],
          ["call_2", "done"]
        ])
      })))

  it.effect("openai SDK: stream() + finalResponse() and create() (non-streaming) both give the local_shell_call", () =>
    withScriptedGateway([
      sse(toolChunk({ id: "call_l", name: "local_shell", arguments: "{\"command\":[\"ls\"]}" }), finishChunks("tool_calls")),
      completion({
        content: null,
        tool_calls: [{ id: "call_w", type: "function", function: { name: "local_shell", arguments: "{\"command\":[\"pwd\"],\"user\":\"me\"}" } }]
      }, "tool_calls")
    ], {}, (url) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const final = await client.responses.stream(localShellRequest(true) as never).finalResponse()
        expect(final.output[0]).toMatchObject({ type: "local_shell_call", call_id: "call_l", action: { type: "exec", command: ["ls"] } })
        const whole = await client.responses.create(localShellRequest(false) as never)
        expect((whole as Json).output[0]).toMatchObject({
          type: "local_shell_call",
          status: "completed",
          call_id: "call_w",
          action: { type: "exec", command: ["pwd"], user: "me", env: {} }
        })
      })))

  it.effect("item_reference: to reasoning dropped with a debug line; to anything else a 400 naming the parameter and the id", () => {
    const captured = captureLogs()
    return withScriptedGateway([sse(textChunk("fine"), finishChunks())], {}, (url) =>
      Effect.gen(function*() {
        const ok = yield* post(`${url}/responses`, {
          model: "m",
          stream: true,
          input: [{ role: "user", content: "hi" }, { type: "item_reference", id: "rs_abc" }]
        })
        expect(ok.status).toBe(200)
        expect(captured.logs.some((line) => line.startsWith("DEBUG") && line.includes("rs_abc"))).toBe(true)
        const refused = yield* post(`${url}/responses`, {
          model: "m",
          input: [{ role: "user", content: "hi" }, { type: "item_reference", id: "msg_abc" }]
        })
        expect(refused.status).toBe(400)
        const error = JSON.parse(refused.text).error
        expect(error).toMatchObject({ param: "input[1].id", code: "unsupported_value" })
        expect(error.message).toContain("msg_abc")
      })).pipe(Effect.provide(captured.layer))
  })

  it.effect("images in function call outputs: the text as the tool message, the images and files in a user message after all the turn's tool messages", () =>
    withScriptedGateway([completion({ content: "seen" })], {}, (url, received) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          input: [
            { role: "user", content: "look" },
            { type: "function_call", call_id: "c1", name: "shot", arguments: "{}" },
            { type: "function_call", call_id: "c2", name: "shot", arguments: "{}" },
            {
              type: "function_call_output",
              call_id: "c1",
              output: [{ type: "input_text", text: "see" }, { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" }]
            },
            {
              type: "custom_tool_call_output",
              call_id: "c2",
              output: [
                { type: "input_image", image_url: "https://example.com/b.jpg", detail: "low" },
                { type: "input_file", filename: "r.pdf", file_data: "data:application/pdf;base64,JVBERi0x" }
              ]
            },
            { role: "user", content: "and?" }
          ],
          tools: [{ type: "function", name: "shot", parameters: { type: "object", properties: {} } }]
        })
        expect(answer.status).toBe(200)
        const messages = received[0]!.body.messages as ReadonlyArray<Json>
        expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "tool", "user", "user"])
        expect(messages[2]).toEqual({ role: "tool", tool_call_id: "c1", content: "see" })
        expect(messages[3]).toMatchObject({ role: "tool", tool_call_id: "c2" })
        expect(messages[3]!.content).toContain("attached")
        expect(messages[4]!.content).toEqual([
          { type: "text", text: "Output of tool call c1 (shot), continued:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "text", text: "Output of tool call c2 (shot), continued:" },
          { type: "image_url", image_url: { url: "https://example.com/b.jpg", detail: "low" } },
          { type: "file", file: { filename: "r.pdf", file_data: "data:application/pdf;base64,JVBERi0x" } }
        ])
        expect(messages[5]!.content).toBe("and?")
        // a part of another type is still refused, naming it
        const refused = yield* post(`${url}/responses`, {
          model: "m",
          input: [
            { type: "function_call", call_id: "c1", name: "shot", arguments: "{}" },
            { type: "function_call_output", call_id: "c1", output: [{ type: "input_audio", input_audio: {} }] }
          ]
        })
        expect(refused.status).toBe(400)
        expect(JSON.parse(refused.text).error).toMatchObject({ param: "input[1].output[0].type", code: "unsupported_value" })
      })))
})
