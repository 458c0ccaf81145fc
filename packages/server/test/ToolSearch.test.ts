/**
 * Tools declared with `defer_loading` and the `tool_search` tool through the gateway, over loopback HTTP, to a
 * scripted Chat Completions upstream: with the OpenAI Agents SDK (`@openai/agents`, which fails a run whose
 * model calls a deferred tool no tool search loaded) running the whole loop, with a hosted search (the
 * default, which a Chat Completions upstream cannot run) and with a client-run one, streamed and not; and with
 * the `openai` SDK (`stream()` + `finalResponse()`, `create()`) on the request of the recorded hosted search
 * (`vai-openai-tool-search.chunks.txt`), whose items the gateway's must look like.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool, toolSearchTool } from "@openai/agents"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { z } from "zod"
import { callTurn, crmNamespace, textTurn } from "./agentsSdk.js"
import { finishChunks, type Handler, type Received, sse, textChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, parseSse, post, readFixture, type WireJson as Json } from "./utils.js"

setTracingDisabled(true)

/** An agent with a deferred top-level tool and a deferred namespaced one, and a tool search (hosted or client-run). */
const searchingAgent = (url: string, execution: "server" | "client") => {
  const executed: Array<string> = []
  const weather = tool({
    name: "get_weather",
    description: "The weather in a city.",
    parameters: z.object({ city: z.string() }),
    deferLoading: true,
    execute: async ({ city }) => {
      executed.push(`get_weather ${city}`)
      return `Sunny in ${city}`
    }
  })
  const crm = crmNamespace((id) => executed.push(`crm.lookup ${id}`), { deferLoading: true })
  const agent = new Agent({
    name: "searcher",
    instructions: "Load the tools you need, then use them.",
    model: new OpenAIResponsesModel(new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }), "scripted-model"),
    tools: [weather, ...crm, execution === "client" ? toolSearchTool({ execution: "client" }) : toolSearchTool()]
  })
  return { agent, executed }
}

/** Runs `agent` on `input`, streamed or not; its final output and the types of the items of the run. */
const runAgent = async (agent: Agent, input: string, stream: boolean) => {
  const result = stream ? await run(agent, input, { stream: true }) : await run(agent, input)
  if ("completed" in result) await result.completed
  return {
    finalOutput: result.finalOutput,
    items: result.newItems.map((item) => item.rawItem as Json)
  }
}

/** The tool names of the request the upstream received, and its messages as role (and tool call names). */
const upstreamView = (body: Json) => ({
  tools: ((body.tools ?? []) as ReadonlyArray<Json>).map((tool) => tool.function.name),
  messages: (body.messages as ReadonlyArray<Json>).map((message) =>
    message.role === "assistant" && message.tool_calls !== undefined
      ? `assistant: ${message.tool_calls.map((call: Json) => call.function.name).join(", ")}`
      : message.role === "tool"
      ? `tool: ${message.content}`
      : message.role
  )
})

/** One search mode's run of the same request by `searchingAgent`: its title, the upstream's turns, the run's item types and the mode's own checks. */
interface SearchMode {
  readonly execution: "server" | "client"
  readonly title: string
  readonly script: ReadonlyArray<Handler>
  readonly types: ReadonlyArray<string>
  readonly check: (items: ReadonlyArray<Json>, received: ReadonlyArray<Received>) => void
}

const bothCalls = callTurn(
  { id: "call_w", name: "get_weather", args: "{\"city\":\"Paris\"}" },
  { id: "call_c", name: "crm__lookup", args: "{\"id\":\"42\"}" }
)

const searchModes: ReadonlyArray<SearchMode> = [
  {
    execution: "server",
    title: "hosted tool search: the upstream calls the deferred tools it was offered; each call comes after a search loading its tool, and runs",
    // before: ModelBehaviorError "Model produced deferred function call get_weather before it was loaded via tool_search."
    script: [bothCalls, textTurn("Sunny in Paris, Ada.")],
    types: [
      "tool_search_call",
      "tool_search_output",
      "function_call",
      "tool_search_call",
      "tool_search_output",
      "function_call",
      "function_call_result",
      "function_call_result",
      "message"
    ],
    check: (items, received) => {
      expect(items[0]).toMatchObject({ arguments: { paths: ["get_weather"] }, providerData: { execution: "server" } })
      expect(items[1]!.tools).toEqual([expect.objectContaining({ type: "function", name: "get_weather", deferLoading: true })])
      expect(items[3]).toMatchObject({ arguments: { paths: ["crm.lookup"] } })
      expect(items[4]!.tools).toEqual([
        expect.objectContaining({ type: "namespace", name: "crm", tools: [expect.objectContaining({ name: "lookup" })] })
      ])

      // a hosted search cannot run over Chat Completions: every deferred tool is offered
      expect(upstreamView(received[0]!.body)).toEqual({ tools: ["get_weather", "crm__lookup"], messages: ["system", "user"] })
      expect(upstreamView(received[1]!.body)).toEqual({
        tools: ["get_weather", "crm__lookup"],
        messages: [
          "system",
          "user",
          // one response's calls in one assistant message, their outputs after it (the searches' first)
          "assistant: tool_search, get_weather, tool_search, crm__lookup",
          "tool: Tools loaded: get_weather.",
          "tool: Tools loaded: crm__lookup.",
          "tool: Sunny in Paris",
          "tool: Customer 42: Ada"
        ]
      })
    }
  },
  {
    execution: "client",
    title: "client-run tool search: the upstream is offered the search, not the deferred tools; the SDK runs the search and the tools it loaded are offered next",
    script: [
      callTurn({ id: "call_s", name: "tool_search", args: "{\"paths\":[\"get_weather\",\"crm\"]}" }),
      bothCalls,
      textTurn("Sunny in Paris, Ada.")
    ],
    types: [
      "tool_search_call",
      "tool_search_output",
      "function_call",
      "function_call",
      "function_call_result",
      "function_call_result",
      "message"
    ],
    check: (items, received) => {
      expect(items[0]).toMatchObject({ arguments: { paths: ["get_weather", "crm"] }, providerData: { call_id: "call_s", execution: "client" } })
      // the calls of the tools the client's search loaded, each with its namespace (the top-level one's its own name)
      expect(items[2]).toMatchObject({ name: "get_weather", namespace: "get_weather" })
      expect(items[3]).toMatchObject({ name: "lookup", namespace: "crm" })

      // before: every deferred tool offered and no search, so a model called them unloaded
      const first = received[0]!.body as Json
      expect(upstreamView(first).tools).toEqual(["tool_search"])
      const search = first.tools[0].function
      expect(search.parameters).toEqual({
        type: "object",
        properties: { paths: expect.objectContaining({ type: "array", items: { type: "string" } }) },
        required: ["paths"],
        additionalProperties: false
      })
      expect(search.description).toContain("Tools to load:\n- get_weather: The weather in a city.\n- crm (namespace): The customer database.")
      expect(upstreamView(received[1]!.body)).toEqual({
        tools: ["get_weather", "crm__lookup", "tool_search"],
        messages: ["system", "user", "assistant: tool_search", "tool: Tools loaded: get_weather, crm__lookup."]
      })
      // all loaded: the search has nothing left to list
      expect((received[1]!.body as Json).tools[2].function.description).not.toContain("Tools to load")
      expect(upstreamView(received[2]!.body).messages.slice(4)).toEqual([
        "assistant: get_weather, crm__lookup",
        "tool: Sunny in Paris",
        "tool: Customer 42: Ada"
      ])
    }
  }
]

describe("@openai/agents with deferred tools and tool search through the gateway", () => {
  for (const stream of [false, true]) {
    const mode = stream ? "streamed" : "not streamed"

    for (const { check, execution, script, title, types } of searchModes) {
      it.effect(`${title} (${mode})`, () =>
        withScriptedGateway(script, {}, (url, received) =>
          Effect.promise(async () => {
            const { agent, executed } = searchingAgent(url, execution)
            const { finalOutput, items } = await runAgent(agent, "Weather in Paris, and who is customer 42?", stream)
            expect(finalOutput).toBe("Sunny in Paris, Ada.")
            expect(executed).toEqual(["get_weather Paris", "crm.lookup 42"])
            expect(items.map((item) => item.type)).toEqual(types)
            expect(received).toHaveLength(script.length)
            check(items, received)
          })))
    }

    it.effect(`client-run tool search with its own parameters and description: the upstream is offered them, the SDK's execute gets the call's arguments (${mode})`, () =>
      withScriptedGateway([
        callTurn({ id: "call_s", name: "tool_search", args: "{\"query\":\"weather\"}" }),
        callTurn({ id: "call_w", name: "get_weather", args: "{\"city\":\"Paris\"}" }),
        textTurn("Sunny in Paris.")
      ], {}, (url, received) =>
        Effect.promise(async () => {
          const { agent, executed } = searchingAgent(url, "client")
          const queries: Array<unknown> = []
          const parameters = { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false }
          const search = toolSearchTool({
            execution: "client",
            description: "Finds tools by a word.",
            parameters,
            execute: ({ loadDefault, toolCall }) => {
              queries.push(toolCall.arguments)
              return loadDefault(["get_weather"])
            }
          })
          const custom = agent.clone({ tools: [...agent.tools.slice(0, -1), search] })
          const { finalOutput } = await runAgent(custom, "Weather in Paris?", stream)
          expect(finalOutput).toBe("Sunny in Paris.")
          expect(queries).toEqual([{ query: "weather" }])
          expect(executed).toEqual(["get_weather Paris"])
          const offered = (received[0]!.body as Json).tools as ReadonlyArray<Json>
          expect(offered.map((tool) => tool.function.name)).toEqual(["tool_search"])
          expect(offered[0]!.function.parameters).toEqual(parameters)
          expect(offered[0]!.function.description).toBe(
            "Finds tools by a word.\n\nTools to load:\n- get_weather: The weather in a city.\n- crm (namespace): The customer database."
          )
          expect(upstreamView(received[1]!.body).tools).toEqual(["get_weather", "tool_search"])
        })))

    it.effect(`client-run tool search: a deferred tool the upstream calls without searching comes after a search loading it, and runs (${mode})`, () =>
      withScriptedGateway([
        callTurn({ id: "call_w", name: "get_weather", args: "{\"city\":\"Paris\"}" }),
        textTurn("Sunny in Paris.")
      ], {}, (url, received) =>
        Effect.promise(async () => {
          const { agent, executed } = searchingAgent(url, "client")
          const { finalOutput, items } = await runAgent(agent, "Weather in Paris?", stream)
          expect(finalOutput).toBe("Sunny in Paris.")
          expect(executed).toEqual(["get_weather Paris"])
          expect(items.map((item) => item.type)).toEqual([
            "tool_search_call",
            "tool_search_output",
            "function_call",
            "function_call_result",
            "message"
          ])
          // the gateway loaded it: a search the client has not to run
          expect(items[0]).toMatchObject({ providerData: { execution: "server" } })
          expect(upstreamView(received[1]!.body).tools).toEqual(["get_weather", "tool_search"])
        })))
  }
})

/** The events and items of the recorded hosted search of gpt-5.4 (`vai-openai-tool-search.chunks.txt`). */
const recorded = readFixture("responses-sse/vai-openai-tool-search.chunks.txt").split("\n").filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as Json)
const recordedRequestTools = recorded[0]!.response.tools as ReadonlyArray<Json>
const recordedOutput = recorded.at(-1)!.response.output as ReadonlyArray<Json>

/** The recorded request (three deferred functions, a hosted tool search) through the gateway. */
const recordedRequest = (stream: boolean) => ({
  model: "gpt-5.4",
  stream,
  input: "What is the weather in San Francisco?",
  tools: recordedRequestTools
})

/** The keys of an item and the type of each value (the shape, not the generated ids). */
const shape = (item: Json) => Object.fromEntries(Object.entries(item).map(([key, value]) => [key, value === null ? "null" : typeof value]))

describe("the openai SDK with deferred tools and tool search through the gateway", () => {
  const weatherCall = callTurn({ id: "call_w", name: "get_weather", args: "{\"location\":\"San Francisco, CA\",\"unit\":\"fahrenheit\"}" })

  it.effect("hosted search (the recorded request): a call of a deferred tool comes after a tool_search_call and tool_search_output shaped as the API's, streamed as it streams them", () =>
    withScriptedGateway([weatherCall], {}, (url, received) =>
      Effect.gen(function*() {
        const frames = parseSse((yield* post(`${url}/responses`, recordedRequest(true))).text)
        const response = checkLifecycle(frames)
        const output = response.output as ReadonlyArray<Json>
        expect(output.map((item) => item.type)).toEqual(recordedOutput.map((item) => item.type))
        // the same fields as the API's items, the same values but for the ids
        for (const index of [0, 1]) {
          expect(shape(output[index]!)).toEqual(shape(recordedOutput[index]!))
          const { id: _id, ...rest } = recordedOutput[index]!
          expect(output[index]).toMatchObject(rest)
        }
        expect(output[0]!.id).toMatch(/^tsc_/)
        expect(output[1]!.id).toMatch(/^tso_/)
        // the call as the API writes a deferred top-level tool's: its own name as its namespace, after the name
        expect(Object.keys(output[2]!)).toEqual(Object.keys(recordedOutput[2]!))
        expect(shape(output[2]!)).toEqual(shape(recordedOutput[2]!))
        const { arguments: recordedArguments, name, namespace } = recordedOutput[2]!
        expect(output[2]).toMatchObject({ type: "function_call", name, namespace, arguments: recordedArguments, call_id: "call_w" })
        expect(namespace).toBe("get_weather")
        // the events of the recorded stream: each search item added (as the API writes it then) and done
        const events = (stream: ReadonlyArray<Json>) =>
          stream.filter((event) => event.type.startsWith("response.output_item.")).map((event) => [event.type, event.output_index, event.item.type])
        expect(events(frames.map((frame) => frame.data))).toEqual(events(recorded))
        const added = frames.filter((frame) => frame.data.type === "response.output_item.added").map((frame) => frame.data.item as Json)
        const recordedAdded = recorded.filter((event) => event.type === "response.output_item.added").map((event) => event.item)
        for (const index of [0, 1]) {
          const { id: _id, ...rest } = recordedAdded[index]!
          expect(added[index]).toMatchObject(rest)
        }
        expect(added[2]).toMatchObject({ status: "in_progress", name: "get_weather", namespace: "get_weather", arguments: "" })
        // every deferred tool is offered (a hosted search cannot run over Chat Completions), no search function
        expect(upstreamView(received[0]!.body).tools).toEqual(["get_weather", "search_files", "send_email"])
      })))

  it.effect("the recorded API items sent back as history (a deferred top-level tool's call with its own name as namespace): the upstream gets the call of the tool it was offered", () =>
    withScriptedGateway([textTurn("Sunny.")], {}, (url, received) =>
      Effect.gen(function*() {
        const call = recordedOutput[2]!
        const answer = yield* post(`${url}/responses`, {
          ...recordedRequest(false),
          input: [
            { role: "user", content: "What is the weather in San Francisco?" },
            ...recordedOutput,
            { type: "function_call_output", call_id: call.call_id, output: "Sunny, 70F" }
          ]
        })
        expect(answer.status).toBe(200)
        const body = received[0]!.body
        expect(upstreamView(body).tools).toContain("get_weather")
        expect(upstreamView(body).tools).not.toContain("get_weather__get_weather")
        const calls = (body.messages as ReadonlyArray<Json>).flatMap((message) => (message.tool_calls ?? []) as ReadonlyArray<Json>)
        expect(calls.find((toolCall) => toolCall.id === call.call_id)?.function).toEqual({ name: "get_weather", arguments: call.arguments })
      })))

  for (const stream of [false, true]) {
    it.effect(`a later call of a tool the recorded tool_search_output of the input loaded: written with the tool's own name as namespace, as the API's, no search before it; none when the request declares the tool without defer_loading (${stream ? "streamed" : "not streamed"})`, () =>
      withScriptedGateway([weatherCall, weatherCall], {}, (url) =>
        Effect.gen(function*() {
          const call = recordedOutput[2]!
          const request = {
            ...recordedRequest(stream),
            input: [
              { role: "user", content: "What is the weather in San Francisco?" },
              ...recordedOutput,
              { type: "function_call_output", call_id: call.call_id, output: "Sunny, 70F" },
              { role: "user", content: "And again?" }
            ]
          }
          const answer = yield* post(`${url}/responses`, request)
          expect(answer.status).toBe(200)
          const frames = stream ? parseSse(answer.text) : []
          const output = (stream ? checkLifecycle(frames) : JSON.parse(answer.text)).output as ReadonlyArray<Json>
          // before: {"name":"get_weather"}, which OpenAI refuses in input ("Missing namespace for function_call 'get_weather'")
          expect(output.map((item) => item.type)).toEqual(["function_call"])
          expect(Object.keys(output[0]!)).toEqual(Object.keys(call))
          expect(output[0]).toMatchObject({ name: "get_weather", namespace: "get_weather", call_id: "call_w" })
          if (stream) {
            const added = frames.find((frame) => frame.data.type === "response.output_item.added")!.data.item as Json
            expect(added).toMatchObject({ name: "get_weather", namespace: "get_weather" })
          }
          // declared without defer_loading, the tool is in the default namespace whatever a search listed
          const eager = recordedRequestTools.map((tool) => tool.name === "get_weather" ? { ...tool, defer_loading: false } : tool)
          const again = yield* post(`${url}/responses`, { ...request, stream: false, tools: eager })
          const [eagerCall] = JSON.parse(again.text).output as ReadonlyArray<Json>
          expect(eagerCall).toMatchObject({ type: "function_call", name: "get_weather" })
          expect(eagerCall!.namespace).toBeUndefined()
        })))
  }

  it.effect("the gateway's own hosted-search items sent back as history: the deferred tool's call (namespace its own name) goes upstream by the tool's name", () =>
    withScriptedGateway([weatherCall, textTurn("Sunny.")], {}, (url, received) =>
      Effect.gen(function*() {
        const first = JSON.parse((yield* post(`${url}/responses`, recordedRequest(false))).text)
        const output = first.output as ReadonlyArray<Json>
        expect(output[2]).toMatchObject({ name: "get_weather", namespace: "get_weather" })
        const answer = yield* post(`${url}/responses`, {
          ...recordedRequest(false),
          input: [
            { role: "user", content: "What is the weather in San Francisco?" },
            ...output,
            { type: "function_call_output", call_id: output[2]!.call_id, output: "Sunny, 70F" }
          ]
        })
        expect(answer.status).toBe(200)
        const calls = (received[1]!.body.messages as ReadonlyArray<Json>).flatMap((message) => (message.tool_calls ?? []) as ReadonlyArray<Json>)
        expect(calls.map((toolCall) => toolCall.function.name)).toEqual(["tool_search", "get_weather"])
      })))

  it.effect("two of the recorded searches (call_id null) before their two outputs: each output answers its own search, first to first", () =>
    withScriptedGateway([textTurn("Done.")], {}, (url, received) =>
      Effect.gen(function*() {
        const [search, searchOutput, call] = recordedOutput as [Json, Json, Json]
        // the recorded search and output, and the same for the recorded request's second deferred tool
        const filesSearch = { ...search, id: "tsc_files", arguments: { paths: ["search_files"] } }
        const filesOutput = { ...searchOutput, id: "tso_files", tools: [recordedRequestTools[1]] }
        const answer = yield* post(`${url}/responses`, {
          ...recordedRequest(false),
          input: [
            { role: "user", content: "What is the weather in San Francisco, and which files mention it?" },
            search,
            filesSearch,
            searchOutput,
            filesOutput,
            call,
            { type: "function_call", call_id: "call_f", name: "search_files", arguments: "{\"query\":\"weather\"}" },
            { type: "function_call_output", call_id: call.call_id, output: "Sunny, 70F" },
            { type: "function_call_output", call_id: "call_f", output: "notes.txt" }
          ]
        })
        expect(answer.status).toBe(200)
        const messages = received[0]!.body.messages as ReadonlyArray<Json>
        const calls = messages.flatMap((message) => (message.tool_calls ?? []) as ReadonlyArray<Json>)
          .map((toolCall) => [toolCall.id, toolCall.function.name, toolCall.function.arguments])
        expect(calls).toEqual([
          [search.id, "tool_search", JSON.stringify(search.arguments)],
          ["tsc_files", "tool_search", "{\"paths\":[\"search_files\"]}"],
          [call.call_id, "get_weather", call.arguments],
          ["call_f", "search_files", "{\"query\":\"weather\"}"]
        ])
        const results = messages.filter((message) => message.role === "tool").map((message) => [message.tool_call_id, message.content])
        expect(results).toEqual([
          [search.id, "Tools loaded: get_weather."],
          ["tsc_files", "Tools loaded: search_files."],
          [call.call_id, "Sunny, 70F"],
          ["call_f", "notes.txt"]
        ])
      })))

  it.effect("a tool_search_output whose call_id names no earlier call: 400 naming the item, as for a function call output, the upstream not asked", () =>
    withScriptedGateway([textTurn("ok")], {}, (url, received) =>
      Effect.gen(function*() {
        for (
          const body of [
            // the recorded search's output, given a call id no search has
            { ...recordedRequest(false), input: [{ role: "user", content: "q" }, { ...recordedOutput[1]!, call_id: "nope" }] },
            {
              model: "m",
              tools: [{ type: "tool_search", execution: "client" }],
              input: [{ role: "user", content: "q" }, { type: "tool_search_output", call_id: "nope", execution: "client", status: "completed", tools: [] }]
            }
          ]
        ) {
          const answer = yield* post(`${url}/responses`, body)
          expect(answer.status).toBe(400)
          expect(JSON.parse(answer.text).error).toEqual({
            type: "invalid_request_error",
            code: "invalid_value",
            param: "input[1]",
            message: "No tool call found for tool search output with call_id nope: no call with that id comes before it in the conversation."
          })
        }
        expect(received).toHaveLength(0)
      })))

  for (const stream of [true, false]) {
    it.effect(`hosted search: the openai SDK's ${stream ? "stream() + finalResponse()" : "create()"} gives the search, its output and the call`, () =>
      withScriptedGateway([weatherCall], {}, (url) =>
        Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const final = stream
            ? await client.responses.stream(recordedRequest(true) as never).finalResponse()
            : await client.responses.create(recordedRequest(false) as never)
          const output = (final as Json).output as ReadonlyArray<Json>
          expect(output.map((item) => item.type)).toEqual(["tool_search_call", "tool_search_output", "function_call"])
          expect(output[0]).toMatchObject({ execution: "server", call_id: null, arguments: { paths: ["get_weather"] } })
          expect(output[1]).toMatchObject({ execution: "server", tools: [recordedRequestTools[0]] })
          expect(output[2]).toMatchObject({ name: "get_weather", arguments: "{\"location\":\"San Francisco, CA\",\"unit\":\"fahrenheit\"}" })
        })))

    it.effect(`client-run search: the openai SDK's ${stream ? "stream() + finalResponse()" : "create()"} gives the upstream's search as a client tool_search_call; its output loads the tool for the next turn`, () =>
      withScriptedGateway([callTurn({ id: "call_s", name: "tool_search", args: "{\"paths\":[\"send_email\"]}" }), weatherCall], {}, (url, received) =>
        Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const tools = [...recordedRequestTools.slice(0, 3), { type: "tool_search", execution: "client" }]
          const request = { model: "gpt-5.4", input: "Email Ada.", tools }
          const final = stream
            ? await client.responses.stream({ ...request, stream: true } as never).finalResponse()
            : await client.responses.create(request as never)
          const output = (final as Json).output as ReadonlyArray<Json>
          expect(output).toHaveLength(1)
          expect(output[0]).toMatchObject({ type: "tool_search_call", call_id: "call_s", execution: "client", arguments: { paths: ["send_email"] } })
          expect(upstreamView(received[0]!.body).tools).toEqual(["tool_search"])

          const next = {
            ...request,
            input: [
              { role: "user", content: "Email Ada." },
              output[0],
              { type: "tool_search_output", call_id: "call_s", execution: "client", tools: [recordedRequestTools[2]] }
            ]
          }
          const second = stream
            ? await client.responses.stream({ ...next, stream: true } as never).finalResponse()
            : await client.responses.create(next as never)
          expect(upstreamView(received[1]!.body)).toEqual({
            tools: ["send_email", "tool_search"],
            messages: ["user", "assistant: tool_search", "tool: Tools loaded: send_email."]
          })
          // get_weather was never loaded: its call comes after the search loading it
          expect(((second as Json).output as ReadonlyArray<Json>).map((item) => item.type)).toEqual([
            "tool_search_call",
            "tool_search_output",
            "function_call"
          ])
        })))
  }

  it.effect("a deferred tool's description cut at 200 characters in the search's list: never inside a surrogate pair", () =>
    withScriptedGateway([sse(textChunk("ok"), finishChunks())], {}, (url, received) =>
      Effect.gen(function*() {
        // `d` and 150 x U+1F600: code unit 199 is a high surrogate
        const description = `d${"\u{1F600}".repeat(150)}`
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          input: "hi",
          stream: true,
          tools: [
            { type: "function", name: "emoji", description, defer_loading: true, parameters: { type: "object", properties: {} } },
            { type: "tool_search", execution: "client" }
          ]
        })
        expect(answer.status).toBe(200)
        const search = ((received[0]!.body as Json).tools as ReadonlyArray<Json>).find((tool) => tool.function.name === "tool_search")!
        expect(search.function.description).toContain(`- emoji: ${description.slice(0, 199)}…`)
        expect(/\p{Cs}/u.test(search.function.description)).toBe(false)
      })))
})
