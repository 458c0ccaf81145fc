/**
 * `CreateResponse` request body -> `Prompt` plus options (the decoding side of the protocol).
 */
import { Message, Part, Prompt } from "@effect-responses/core"
import { ResponsesRequestDecoder } from "@effect-responses/server"
import { assert, describe, expect, it, vi } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { type Entry as ToolEntry, orders, toolsOf } from "./toolOrders.js"
import { readFixture } from "./utils.js"

const decodeWithLogs = (body: unknown, options?: ResponsesRequestDecoder.Options) =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      logs.push(`${logLevel.label}: ${String(message)}`)
    })
    const result = yield* ResponsesRequestDecoder.decode(body, options).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    )
    return { result, logs }
  })

// an accepted body fails the test with a short message (a whole decoded request in the report of a failed
// test takes vitest minutes to format when it holds long strings)
const rejected = (body: unknown, options?: ResponsesRequestDecoder.Options) =>
  ResponsesRequestDecoder.decode(body, options).pipe(Effect.matchEffect({
    onFailure: Effect.succeed,
    onSuccess: () => Effect.dieMessage(`accepted, expected a RequestError: ${JSON.stringify(body).slice(0, 200)}`)
  }))

describe("ResponsesRequestDecoder", () => {
  it.effect("decodeElements: the input read element by element decodes as the same body does; an element's failure is its", () =>
    Effect.gen(function*() {
      const input: ReadonlyArray<unknown> = [
        { role: "user", content: "Hi" },
        { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "ok" },
        { role: "assistant", content: "Done." }
      ]
      const body = { model: "m", instructions: "Be brief.", tools: [{ type: "function", name: "f", parameters: {} }] }
      const read: Array<number> = []
      const elements: ResponsesRequestDecoder.InputElements<string> = {
        length: input.length,
        element: (index) => {
          read.push(index)
          return Either.right(input[index])
        }
      }
      const decoded = yield* ResponsesRequestDecoder.decodeElements({ ...body, input: null }, elements)
      expect(decoded).toEqual(yield* ResponsesRequestDecoder.decode({ ...body, input }))
      expect(read).toEqual([0, 1, 2, 3])
      const failing = { length: 2, element: (index: number) => index === 0 ? Either.right(input[0]) : Either.left("unparsed") }
      expect(yield* Effect.flip(ResponsesRequestDecoder.decodeElements(body, failing))).toBe("unparsed")
      const tooMany = yield* Effect.flip(ResponsesRequestDecoder.decodeElements(body, failing, { maxInputItems: 1 }))
      expect(tooMany).toMatchObject({ code: "array_above_max_length", param: "input" })
    }))

  it.effect("more than MAX_TOOLS tools: array_above_max_length naming tools", () =>
    Effect.gen(function*() {
      const tools = Array.from({ length: ResponsesRequestDecoder.MAX_TOOLS + 1 }, (_, i) => ({ type: "function", name: `f${i}` }))
      const error = yield* Effect.flip(ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools }))
      expect(error).toMatchObject({ code: "array_above_max_length", param: "tools" })
      const decoded = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools: tools.slice(1) })
      expect(decoded.tools.length).toBe(ResponsesRequestDecoder.MAX_TOOLS)
    }))

  it.effect("MAX_TOOLS counts every tool the upstream is sent: namespace members, additional_tools and tool_search_output tools together", () =>
    Effect.gen(function*() {
      const fns = (prefix: string, length: number) => Array.from({ length }, (_, i) => ({ type: "function", name: `${prefix}${i}` }))
      const max = ResponsesRequestDecoder.MAX_TOOLS
      // one namespace of 10,001 tools
      const namespaced = yield* Effect.flip(ResponsesRequestDecoder.decode({
        model: "m",
        input: "hi",
        tools: [{ type: "namespace", name: "gh", description: "GitHub", tools: fns("f", max + 1) }]
      }))
      expect(namespaced).toMatchObject({ code: "array_above_max_length", param: "tools" })
      expect(namespaced.message).toContain(`at most ${max} tools in all`)
      expect(namespaced.message).toContain(`declares ${max + 1}`)
      // ten additional_tools items of 5,000 tools: refused at the item that crossed the bound (the third)
      const additional = Array.from({ length: 10 }, (_, i) => ({ type: "additional_tools", tools: fns(`a${i}_`, 5_000) }))
      const added = yield* Effect.flip(ResponsesRequestDecoder.decode({
        model: "m",
        input: [{ role: "user", content: "hi" }, ...additional]
      }))
      expect(added).toMatchObject({ code: "array_above_max_length", param: "input[3].tools" })
      expect(added.message).toContain(`declares ${15_000}`)
      // top-level tools and a tool search's output together
      const searched = yield* Effect.flip(ResponsesRequestDecoder.decode({
        model: "m",
        tools: fns("t", 6_000),
        input: [
          { role: "user", content: "hi" },
          { type: "tool_search_call", call_id: "s1", arguments: {}, execution: "client", status: "completed" },
          { type: "tool_search_output", call_id: "s1", execution: "client", status: "completed", tools: fns("s", 4_001) }
        ]
      }))
      expect(searched).toMatchObject({ code: "array_above_max_length", param: "input[2].tools" })
      // exactly the bound, spread over the lists: decoded
      const decoded = yield* ResponsesRequestDecoder.decode({
        model: "m",
        tools: [...fns("t", 4_000), { type: "namespace", name: "gh", description: "GitHub", tools: fns("g", 3_000) }],
        input: [{ role: "user", content: "hi" }, { type: "additional_tools", tools: fns("a", 3_000) }]
      })
      expect(decoded.tools.length).toBe(max)
    }))

  it.effect("a namespace's description goes upstream on each of its tools: 'Namespace <name>: <its first line>', a blank line, the tool's own", () =>
    Effect.gen(function*() {
      const long = "x".repeat(250)
      const decoded = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input: "hi",
        tools: [
          {
            type: "namespace",
            name: "gh",
            description: "  GitHub: issues and pull requests.\nUse owner/repo names.",
            tools: [
              { type: "function", name: "list_issues", description: "Lists the open issues." },
              { type: "function", name: "get_repo" },
              { type: "custom", name: "query", description: "A search query." }
            ]
          },
          { type: "namespace", name: "long", description: long, tools: [{ type: "function", name: "f", description: "F." }] },
          { type: "namespace", name: "bare", description: " ", tools: [{ type: "function", name: "g", description: "G." }] },
          { type: "namespace", name: "none", tools: [{ type: "function", name: "h" }] },
          { type: "function", name: "top", description: "Top." }
        ]
      })
      const lead = "Namespace gh: GitHub: issues and pull requests."
      expect(decoded.tools.map((tool) => [tool.name, tool.description])).toEqual([
        ["gh__list_issues", `${lead}\n\nLists the open issues.`],
        ["gh__get_repo", lead],
        ["gh__query", expect.stringMatching(new RegExp(`^${lead}\n\nA search query\.`))],
        ["long__f", `Namespace long: ${"x".repeat(200)}…\n\nF.`],
        ["bare__g", "G."],
        ["none__h", undefined],
        ["top", "Top."]
      ])
    }))

  it.effect("10,000 recorded tools, top-level or in one namespace: decoded as before, the clock read every 64 tools in both (a namespace's tools were one run, with no chance to yield); a bad tool's error unchanged", () =>
    Effect.gen(function*() {
      // the function tool a recorded answer echoes (as a request declares it), repeated
      const recorded = (JSON.parse(readFixture("responses-json/pai-gpt4o-two-parallel-function-calls.json")) as {
        tools: ReadonlyArray<{ name: string; parameters: unknown; strict: boolean }>
      }).tools[0]!
      const tools = Array.from({ length: 10_000 }, (_, i) => ({ ...recorded, name: `${recorded.name}_${i}` }))
      const namespace = { type: "namespace", name: "geo", description: "Places", tools }
      const clock = vi.spyOn(performance, "now")
      try {
        for (const [declared, names, description] of [
          [tools, tools.map((tool) => tool.name), undefined],
          [[namespace], tools.map((tool) => `geo__${tool.name}`), "Namespace geo: Places"]
        ] as const) {
          clock.mockClear()
          const decoded = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools: declared })
          const reads = clock.mock.calls.length
          expect(decoded.tools.map((tool) => tool.name)).toEqual(names)
          expect(decoded.tools.every((tool) => tool.strict === recorded.strict && tool.description === description)).toBe(true)
          expect([decoded.tools[0]!.parameters, decoded.tools[9_999]!.parameters]).toEqual([recorded.parameters, recorded.parameters])
          expect(reads).toBeGreaterThanOrEqual(Math.floor(10_000 / 64))
        }
      } finally {
        clock.mockRestore()
      }
      const bad = [...tools.slice(0, 9_999), { ...recorded, name: 7 }]
      for (const [declared, param] of [[bad, "tools[9999].name"], [[{ ...namespace, tools: bad }], "tools[0].tools[9999].name"]] as const) {
        const error = yield* rejected({ model: "m", input: "hi", tools: declared })
        expect([error.param, error.code, error.description]).toEqual([param, "invalid_type", `Invalid value for '${param}': Expected string, actual 7`])
      }
    }))

  it.effect("10,000 recorded tools in one namespace: their bare names resolved in slices too (the clock read every 64 names), calls by a bare name still mapped back", () =>
    Effect.gen(function*() {
      const recorded = (JSON.parse(readFixture("responses-json/pai-gpt4o-two-parallel-function-calls.json")) as {
        tools: ReadonlyArray<{ name: string; parameters: unknown; strict: boolean }>
      }).tools[0]!
      const tools = Array.from({ length: 10_000 }, (_, i) => ({ ...recorded, name: `${recorded.name}_${i}` }))
      const clock = vi.spyOn(performance, "now")
      try {
        const decoded = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools: [{ type: "namespace", name: "geo", description: "Places", tools }] })
        // the namespace's tools decoded, then their bare names resolved: each reads the clock every 64
        expect(clock.mock.calls.length).toBeGreaterThanOrEqual(2 * Math.floor(10_000 / 64))
        expect(decoded.tools.map((tool) => tool.name)).toEqual(tools.map((tool) => `geo__${tool.name}`))
        expect([decoded.namespacedTools.get(`${recorded.name}_0`), decoded.namespacedTools.get(`${recorded.name}_9999`)]).toEqual([
          { namespace: "geo", name: `${recorded.name}_0` },
          { namespace: "geo", name: `${recorded.name}_9999` }
        ])
      } finally {
        clock.mockRestore()
      }
    }))

  it.effect("decodeElements: an item whose parts are counted before it is read is refused unread, with the same error", () =>
    Effect.gen(function*() {
      const parts = Array.from({ length: 5 }, () => ({ type: "input_text", text: "p" }))
      const cases = [
        { input: [{ role: "user", content: "q" }, { role: "user", content: parts }], at: 1, field: "content" as const },
        {
          input: [
            { role: "user", content: "q" },
            { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
            { type: "function_call_output", call_id: "c", output: parts }
          ],
          at: 2,
          field: "output" as const
        }
      ]
      for (const { at, field, input } of cases) {
        const read: Array<number> = []
        const elements: ResponsesRequestDecoder.InputElements<string> = {
          length: input.length,
          element: (index) => {
            read.push(index)
            return Either.right(input[index])
          },
          partsOf: (index) => index === at ? Either.right({ field, length: parts.length }) : undefined
        }
        const expected = yield* Effect.flip(ResponsesRequestDecoder.decode({ model: "m", input }, { maxInputItems: 4 }))
        expect(expected).toMatchObject({ code: "array_above_max_length", param: `input[${at}].${field}` })
        const refused = yield* Effect.flip(ResponsesRequestDecoder.decodeElements({ model: "m", input: null }, elements, { maxInputItems: 4 }))
        expect(refused).toEqual(expected)
        expect(read).toEqual(input.slice(0, at).map((_, index) => index))
      }
    }))

  it.effect("a string input: one user message; defaults echoed as OpenAI shows them", () =>
    Effect.gen(function*() {
      const decoded = yield* ResponsesRequestDecoder.decode({ model: "m", input: "Hello" })
      expect(decoded.model).toBe("m")
      expect(decoded.stream).toBe(false)
      expect(decoded.prompt).toEqual(Prompt.user("Hello"))
      expect(decoded.echo).toMatchObject({
        instructions: null,
        tools: [],
        tool_choice: "auto",
        temperature: 1,
        top_p: 1,
        parallel_tool_calls: true,
        text: { format: { type: "text" } },
        store: false
      })
    }))

  it.effect("instructions, system/developer, short and typed messages, images, reasoning, calls and outputs", () =>
    Effect.gen(function*() {
      const { logs, result } = yield* decodeWithLogs({
        model: "m",
        instructions: "Be brief.",
        stream: true,
        input: [
          { role: "developer", content: "Use metric units." },
          {
            type: "message",
            role: "user",
            content: [
              { type: "input_text", text: "What is in " },
              { type: "input_image", image_url: "data:image/png;base64,iVBORw0K", detail: "low" },
              { type: "input_image", image_url: "https://example.com/cat.jpg" },
              { type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0x" }
            ]
          },
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Look." }] },
          { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAA" },
          {
            type: "message",
            role: "assistant",
            id: "msg_1",
            status: "completed",
            content: [{ type: "output_text", text: "Let me check.", annotations: [] }]
          },
          { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{\"q\":1}", id: "fc_1" },
          { type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "42" }] },
          { role: "assistant", content: "It is 42." },
          { role: "user", content: "Thanks" }
        ]
      })
      expect(result.stream).toBe(true)
      expect(result.prompt.messages).toEqual([
        new Message.SystemMessage({ content: "Be brief." }),
        new Message.SystemMessage({ content: "Use metric units." }),
        new Message.UserMessage({
          parts: [
            new Part.TextPart({ text: "What is in " }),
            new Part.MediaPart({ mediaType: "image/png", data: "iVBORw0K", detail: "low" }),
            new Part.MediaPart({ mediaType: "image/jpeg", url: "https://example.com/cat.jpg" }),
            new Part.MediaPart({ mediaType: "application/pdf", data: "JVBERi0x", filename: "a.pdf" })
          ]
        }),
        new Message.AssistantMessage({
          parts: [
            new Part.ReasoningPart({ summary: ["Look."], attributes: { itemId: "rs_1" } }),
            new Part.TextPart({ text: "Let me check.", attributes: { itemId: "msg_1", status: "completed" } }),
            new Part.ToolCallPart({ callId: "call_1", name: "lookup", arguments: "{\"q\":1}", attributes: { itemId: "fc_1" } })
          ]
        }),
        new Message.ToolMessage({ results: [new Part.ToolResultPart({ callId: "call_1", name: "lookup", output: "42" })] }),
        new Message.AssistantMessage({ parts: [new Part.TextPart({ text: "It is 42." })] }),
        Prompt.userMessage("Thanks")
      ])
      expect(logs.some((line) => line.startsWith("DEBUG") && line.includes("input[3]") && line.includes("encrypted"))).toBe(true)
    }))

  it.effect("reasoning: encrypted content is the part's payload unless encryptedReasoning is drop; a malformed item fails naming it", () =>
    Effect.gen(function*() {
      const body = {
        model: "m",
        input: [
          { role: "user", content: "Hi" },
          {
            type: "reasoning",
            id: "rs_1",
            status: "completed",
            summary: [{ type: "summary_text", text: "Look." }],
            content: [{ type: "reasoning_text", text: "a" }, { type: "reasoning_text", text: "b" }],
            encrypted_content: "gAAAA"
          },
          { role: "assistant", content: "Done." }
        ]
      }
      const reasoningOf = (decoded: ResponsesRequestDecoder.DecodedRequest) =>
        (decoded.prompt.messages[1] as Message.AssistantMessage).parts[0]
      const attributes = { itemId: "rs_1", status: "completed" }
      const payload = new Part.OpaquePayload({ provider: "openai.responses", kind: "encrypted_content", data: "gAAAA" })
      expect(reasoningOf(yield* ResponsesRequestDecoder.decode(body))).toEqual(
        new Part.ReasoningPart({ summary: ["Look."], text: "ab", payload, attributes })
      )
      expect(reasoningOf(yield* ResponsesRequestDecoder.decode(body, { encryptedReasoning: "keep" }))).toEqual(
        new Part.ReasoningPart({ summary: ["Look."], text: "ab", payload, attributes })
      )
      const dropped = reasoningOf(yield* ResponsesRequestDecoder.decode(body, { encryptedReasoning: "drop" }))
      expect(dropped).toEqual(new Part.ReasoningPart({ summary: ["Look."], text: "ab", attributes }))
      expect(dropped).not.toHaveProperty("payload")
      const error = yield* rejected({ ...body, input: [{ type: "reasoning", summary: [{ type: "summary_text", text: 1 }] }] })
      expect(error.param).toBe("input[0].summary[0].text")
    }))

  it.effect("the prompt's messages and parts are the instances the classes' constructors build (prototypes, own keys in order)", () =>
    Effect.gen(function*() {
      const decoded = yield* ResponsesRequestDecoder.decode({
        model: "m",
        instructions: "Be brief.",
        input: [
          { role: "developer", content: [{ type: "input_text", text: "Use tools." }] },
          { role: "user", content: "Hi" },
          { role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_text", text: "b" }] },
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Look." }] },
          { type: "function_call", id: "fc_1", call_id: "c1", name: "f", arguments: "{}", status: "completed" },
          { type: "function_call", call_id: "c2", name: "g", arguments: "" },
          { type: "function_call_output", call_id: "c1", output: "ok" },
          { type: "function_call_output", call_id: "c2", output: "ok too" },
          { role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Done." }] },
          { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
          { role: "assistant", content: [{ type: "output_text", text: "Ok." }, { type: "refusal", refusal: "But no." }] }
        ]
      })
      const expected = [
        new Message.SystemMessage({ content: "Be brief." }),
        new Message.SystemMessage({ content: "Use tools." }),
        new Message.UserMessage({ parts: [new Part.TextPart({ text: "Hi" })] }),
        new Message.UserMessage({ parts: [new Part.TextPart({ text: "a" }), new Part.TextPart({ text: "b" })] }),
        new Message.AssistantMessage({
          parts: [
            new Part.ReasoningPart({ summary: ["Look."], attributes: { itemId: "rs_1" } }),
            new Part.ToolCallPart({ callId: "c1", name: "f", arguments: "{}", attributes: { itemId: "fc_1", status: "completed" } }),
            new Part.ToolCallPart({ callId: "c2", name: "g", arguments: "{}" })
          ]
        }),
        new Message.ToolMessage({
          results: [
            new Part.ToolResultPart({ callId: "c1", name: "f", output: "ok" }),
            new Part.ToolResultPart({ callId: "c2", name: "g", output: "ok too" })
          ]
        }),
        new Message.AssistantMessage({ parts: [new Part.TextPart({ text: "Done.", attributes: { itemId: "msg_1", status: "completed" } })] }),
        new Message.AssistantMessage({ parts: [new Part.RefusalPart({ text: "No." })] }),
        // text and refusal parts in one message: both, the text first (Chat Completions' content and refusal)
        new Message.AssistantMessage({ parts: [new Part.TextPart({ text: "Ok." }), new Part.RefusalPart({ text: "But no." })] })
      ]
      const messages = decoded.prompt.messages
      expect(messages).toHaveLength(expected.length)
      const keys = (value: unknown): unknown =>
        Array.isArray(value)
          ? value.map(keys)
          : typeof value === "object" && value !== null
          ? [Object.getPrototypeOf(value), Object.entries(value).map(([key, field]) => [key, keys(field)])]
          : value
      messages.forEach((message, index) => {
        expect(message).toStrictEqual(expected[index])
        expect(keys(message)).toEqual(keys(expected[index]))
      })
    }))

  it.effect("itemAttributes drop: no part keeps an item's id, status or phase; keep (the default) keeps them", () =>
    Effect.gen(function*() {
      const body = {
        model: "m",
        input: [
          { role: "user", content: "Hi" },
          { type: "reasoning", id: "rs_1", status: "completed", summary: [{ type: "summary_text", text: "Look." }] },
          { type: "function_call", id: "fc_1", call_id: "c1", name: "f", arguments: "{}", status: "completed" },
          { type: "function_call_output", call_id: "c1", output: "ok" },
          { role: "assistant", id: "msg_1", status: "completed", phase: "final_answer", content: "Done." }
        ]
      }
      const attributesOf = (decoded: ResponsesRequestDecoder.DecodedRequest) =>
        decoded.prompt.messages.flatMap((message) => message.role === "assistant" ? message.parts.map((part) => part.attributes) : [])
      expect(attributesOf(yield* ResponsesRequestDecoder.decode(body))).toEqual([
        { itemId: "rs_1", status: "completed" },
        { itemId: "fc_1", status: "completed" },
        { itemId: "msg_1", status: "completed", phase: "final_answer" }
      ])
      expect(attributesOf(yield* ResponsesRequestDecoder.decode(body, { itemAttributes: "keep" }))).toEqual(
        attributesOf(yield* ResponsesRequestDecoder.decode(body))
      )
      expect(attributesOf(yield* ResponsesRequestDecoder.decode(body, { itemAttributes: "drop" }))).toStrictEqual([{}, {}, {}])
    }))

  it.effect("tools: a top-level function named as a namespaced tool is flattened (crm__lookup): both are sent, the namespaced one under a name of its own that maps back, the same in either order; no warning", () =>
    Effect.gen(function*() {
      const namespace = { type: "namespace", name: "crm", tools: [{ type: "function", name: "lookup" }] }
      const topLevel = { type: "function", name: "crm__lookup" }
      const history = [
        { type: "function_call", call_id: "c_top", name: "crm__lookup", arguments: "{}" },
        { type: "function_call_output", call_id: "c_top", output: "top" },
        { type: "function_call", call_id: "c_ns", namespace: "crm", name: "lookup", arguments: "{}" },
        { type: "function_call_output", call_id: "c_ns", output: "ns" }
      ]
      const callNames = (decoded: ResponsesRequestDecoder.DecodedRequest) =>
        decoded.prompt.messages.flatMap((message) =>
          message.role === "assistant" ? message.parts.flatMap((part) => part.type === "tool_call" ? [[part.callId, part.name]] : []) : []
        )

      // the top-level tool first: it keeps crm__lookup, the namespaced one gets crm__lookup_ and a hash
      const first = yield* decodeWithLogs({
        model: "m",
        input: [...history, { type: "additional_tools", tools: [namespace] }],
        tools: [topLevel, namespace],
        tool_choice: { type: "function", namespace: "crm", name: "lookup" }
      })
      const names = first.result.tools.map((tool) => tool.name)
      expect(names[0]).toBe("crm__lookup")
      expect(names[1]).toMatch(/^crm__lookup_[0-9a-f]{10}$/)
      expect(names).toHaveLength(2)
      expect(first.result.namespacedTools.get(names[1]!)).toEqual({ namespace: "crm", name: "lookup" })
      expect(first.result.namespacedTools.get("crm__lookup")).toBeUndefined()
      expect(first.result.renamedTools?.get("crm__lookup")).toBeUndefined()
      expect(first.result.toolChoice).toEqual({ tool: names[1] })
      expect(callNames(first.result)).toEqual([["c_top", "crm__lookup"], ["c_ns", names[1]]])
      expect(first.logs.filter((line) => line.startsWith("WARN"))).toEqual([])

      // the namespaced tool first: the same names (the top-level tool keeps crm__lookup whatever the order,
      // so a client that reorders its tools between turns has each sent under the same name)
      const second = yield* decodeWithLogs({ model: "m", input: history, tools: [namespace, topLevel] })
      const reversed = second.result.tools.map((tool) => tool.name)
      expect(reversed).toEqual([names[1], "crm__lookup"])
      expect(second.result.namespacedTools.get(names[1]!)).toEqual({ namespace: "crm", name: "lookup" })
      expect(second.result.namespacedTools.get("crm__lookup")).toBeUndefined()
      expect(second.result.renamedTools?.get("crm__lookup")).toBeUndefined()
      expect(callNames(second.result)).toEqual([["c_top", "crm__lookup"], ["c_ns", names[1]]])
      expect(second.logs.filter((line) => line.startsWith("WARN"))).toEqual([])
      // allowed_tools naming the top-level tool offers it, under its own name
      const allowed = yield* decodeWithLogs({
        model: "m",
        input: "hi",
        tools: [namespace, topLevel],
        tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "crm__lookup" }] }
      })
      expect(allowed.result.tools.map((tool) => tool.name)).toEqual(["crm__lookup"])

      // the same turn again: the same names (stable across turns)
      const again = yield* decodeWithLogs({ model: "m", input: history, tools: [topLevel, namespace] })
      expect(again.result.tools.map((tool) => tool.name)).toEqual(names)
    }))

  it.effect("tools: allowed_tools naming a namespace offers that namespace's tools alone, under their own names, whatever the order of tools that share a flattened name", () =>
    Effect.gen(function*() {
      type Entry = ToolEntry<{ readonly type: string; readonly name: string; readonly description: string }>
      const fn = (name: string, id: string) => ({ type: "function", name, description: id })
      const custom = (name: string, id: string) => ({ type: "custom", name, description: id })
      const n30 = "n".repeat(30)
      // the sets of tools of one flattened name: crm__lookup beside crm's lookup (both kinds), the three-way
      // a__b__c, names near 64 characters, and a top-level tool literally named as crm's lookup would be renamed
      const sets: Record<string, ReadonlyArray<Entry>> = {
        crm: [{ tool: fn("crm__lookup", "T1") }, { namespace: "crm", tool: custom("lookup", "T2") }],
        crm2: [{ tool: custom("crm__lookup", "T1") }, { namespace: "crm", tool: fn("lookup", "T2") }],
        three: [
          { tool: fn("a__b__c", "T1") },
          { namespace: "a", tool: fn("b__c", "T2") },
          { namespace: "a__b", tool: custom("c", "T3") }
        ],
        long: [
          { tool: fn(`${n30}__${"t".repeat(32)}`, "T1") },
          { namespace: n30, tool: fn("t".repeat(32), "T2") },
          { tool: fn(`${n30}__${"t".repeat(33)}`, "T3") },
          { namespace: n30, tool: fn("t".repeat(33), "T4") }
        ],
        hashed: [
          { tool: fn("crm__lookup", "T1") },
          { namespace: "crm", tool: fn("lookup", "T2") },
          { tool: custom("crm__lookup_8f66a0a4f1", "T3") },
          { namespace: "crm", tool: fn("lookup_8f66a0a4f1", "T4") }
        ]
      }
      let checked = 0
      for (const [label, set] of Object.entries(sets)) {
        for (const order of orders(set)) {
          const tools = toolsOf(order)
          const all = yield* decodeWithLogs({ model: "m", input: "hi", tools })
          const idOf = new Map(all.result.tools.map((tool) => [tool.name, tool.description]))
          expect(new Set(idOf.keys()).size, label).toBe(set.length)
          for (const namespace of new Set(set.flatMap((entry) => entry.namespace === undefined ? [] : [entry.namespace]))) {
            const { result } = yield* decodeWithLogs({
              model: "m",
              input: "hi",
              tools,
              tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "namespace", name: namespace }] }
            })
            const offered = result.tools.map((tool) => idOf.get(tool.name)).sort()
            const own = set.filter((entry) => entry.namespace === namespace).map((entry) => entry.tool.description).sort()
            expect(offered, `${label} ${order.map((entry) => entry.tool.description).join(",")} namespace ${namespace}`).toEqual(own)
            checked++
          }
        }
      }
      expect(checked).toBe(2 + 2 + 6 * 2 + 24 + 24)
    }))

  it.effect("tools: two namespaced tools of one flattened name (a__b's c and a's b__c) are both sent, a__b's under a name of its own (the namespace sorting first keeps the name), in either order", () =>
    Effect.gen(function*() {
      const aB = { type: "namespace", name: "a__b", tools: [{ type: "function", name: "c" }] }
      const a = { type: "namespace", name: "a", tools: [{ type: "function", name: "b__c" }] }
      const { result } = yield* decodeWithLogs({ model: "m", input: "hi", tools: [aB, a] })
      const names = result.tools.map((tool) => tool.name)
      expect(names[0]).toMatch(/^a__b__c_[0-9a-f]{10}$/)
      expect(names[1]).toBe("a__b__c")
      expect(result.namespacedTools.get(names[0]!)).toEqual({ namespace: "a__b", name: "c" })
      expect(result.namespacedTools.get(names[1]!)).toEqual({ namespace: "a", name: "b__c" })
      const reversed = yield* decodeWithLogs({ model: "m", input: "hi", tools: [a, aB] })
      expect(reversed.result.tools.map((tool) => tool.name)).toEqual([names[1], names[0]])
    }))

  it.effect("tools: the names sent upstream are the same in every order of the tools sharing a flattened name (crm__lookup beside crm's lookup, the three-way a__b__c, a top-level tool named as a hashed name)", () =>
    Effect.gen(function*() {
      const fn = (name: string) => ({ type: "function", name })
      const sets: ReadonlyArray<ReadonlyArray<{ readonly namespace?: string; readonly name: string }>> = [
        [{ name: "crm__lookup" }, { namespace: "crm", name: "lookup" }],
        [{ name: "a__b__c" }, { namespace: "a", name: "b__c" }, { namespace: "a__b", name: "c" }],
        [{ namespace: "a", name: "b__c" }, { namespace: "a__b", name: "c" }, { namespace: "a_", name: "_c" }],
        [{ name: "crm__lookup" }, { namespace: "crm", name: "lookup" }, { name: "crm__lookup_8f66a0a4f1" }, { namespace: "crm", name: "lookup_8f66a0a4f1" }]
      ]
      for (const set of sets) {
        const seen = new Set<string>()
        for (const order of orders(set)) {
          const tools = order.map((entry) => entry.namespace === undefined ? fn(entry.name) : { type: "namespace", name: entry.namespace, tools: [fn(entry.name)] })
          const { result } = yield* decodeWithLogs({ model: "m", input: "hi", tools })
          const sent = new Map<string, string>()
          result.tools.forEach((tool, index) => sent.set(`${order[index]!.namespace ?? ""}.${order[index]!.name}`, tool.name))
          expect(new Set(sent.values()).size).toBe(set.length)
          // the top-level tool keeps its name
          for (const entry of set) if (entry.namespace === undefined) expect(sent.get(`.${entry.name}`)).toBe(entry.name)
          seen.add(JSON.stringify([...sent].sort()))
        }
        expect([...seen], JSON.stringify(set)).toHaveLength(1)
      }
    }))

  it.effect("tools: functions, namespaces flattened, built-in tools dropped with a warning; options kept", () =>
    Effect.gen(function*() {
      const { logs, result } = yield* decodeWithLogs({
        model: "m",
        input: [
          { type: "function_call", call_id: "c1", namespace: "crm", name: "lookup", arguments: "{}" },
          { type: "function_call_output", call_id: "c1", output: "found" },
          { type: "web_search_call", id: "ws_1", status: "completed" }
        ],
        tools: [
          { type: "function", name: "add", description: "Adds", parameters: { type: "object" }, strict: true },
          { type: "namespace", name: "crm", description: "CRM", tools: [{ type: "function", name: "lookup" }] },
          { type: "web_search" }
        ],
        tool_choice: { type: "function", name: "add" },
        temperature: 0.2,
        top_p: 0.5,
        max_output_tokens: 100,
        parallel_tool_calls: false,
        reasoning: { effort: "high", summary: "auto" },
        text: { format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true } },
        metadata: { a: "b" },
        prompt_cache_key: "k",
        safety_identifier: "s",
        service_tier: "flex",
        some_client_field: { anything: true }
      })
      expect(result.tools.map((tool) => [tool.name, tool.strict])).toEqual([["add", true], ["crm__lookup", false]])
      expect(result.namespacedTools.get("crm__lookup")).toEqual({ namespace: "crm", name: "lookup" })
      expect(result.droppedTools).toEqual(["web_search"])
      expect(result.toolChoice).toEqual({ tool: "add" })
      expect(result.prompt.messages).toEqual([
        new Message.AssistantMessage({ parts: [new Part.ToolCallPart({ callId: "c1", name: "crm__lookup", arguments: "{}" })] }),
        new Message.ToolMessage({ results: [new Part.ToolResultPart({ callId: "c1", name: "crm__lookup", output: "found" })] })
      ])
      expect(result.options).toMatchObject({
        temperature: 0.2,
        topP: 0.5,
        maxOutputTokens: 100,
        parallelToolCalls: false,
        reasoningEffort: "high",
        textFormat: { type: "json", name: "answer", schema: { type: "object" }, strict: true },
        metadata: { a: "b" },
        promptCacheKey: "k",
        safetyIdentifier: "s",
        serviceTier: "flex"
      })
      expect(result.echo).toMatchObject({ temperature: 0.2, service_tier: "flex", reasoning: { effort: "high", summary: "auto" } })
      expect(logs.filter((line) => line.startsWith("WARN"))).toHaveLength(2)
    }))

  it("upstreamName: a valid name as it is; any other at most 64 characters of the pattern, the same every time, distinct for distinct names", () => {
    const pattern = /^[a-zA-Z0-9_-]{1,64}$/
    expect(ResponsesRequestDecoder.upstreamName("crm__lookup")).toBe("crm__lookup")
    expect(ResponsesRequestDecoder.upstreamName("x".repeat(64))).toBe("x".repeat(64))
    const long = `${"n".repeat(40)}__${"l".repeat(40)}`
    // two long names that differ only in the middle, which the cut leaves out
    const other = `${"n".repeat(39)}m__${"l".repeat(40)}`
    const names = [long, other, "x".repeat(65), "crm.lookup", "crm lookup", "", "caf\u00e9"]
    const renamed = names.map(ResponsesRequestDecoder.upstreamName)
    for (const name of renamed) expect(name).toMatch(pattern)
    expect(new Set(renamed).size).toBe(names.length)
    expect(names.map(ResponsesRequestDecoder.upstreamName)).toEqual(renamed)
    expect(renamed[0]).toMatch(/^n{20}_l{32}_[0-9a-f]{10}$/)
    expect(renamed[3]).toMatch(/^crm_lookup_[0-9a-f]{10}$/)
  })

  it.effect("tools: a renamed tool is offered, chosen and called in the input under its new name, and maps back", () =>
    Effect.gen(function*() {
      const namespace = "n".repeat(60)
      const sent = ResponsesRequestDecoder.upstreamName(`${namespace}__lookup`)
      const dotted = ResponsesRequestDecoder.upstreamName("crm.find")
      const result = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input: [
          { type: "function_call", call_id: "c1", namespace, name: "lookup", arguments: "{}" },
          { type: "function_call", call_id: "c2", name: "crm.find", arguments: "{}" },
          { type: "function_call_output", call_id: "c1", output: "a" },
          { type: "function_call_output", call_id: "c2", output: "b" }
        ],
        tools: [
          { type: "namespace", name: namespace, tools: [{ type: "function", name: "lookup" }] },
          { type: "function", name: "crm.find" }
        ],
        tool_choice: { type: "function", namespace, name: "lookup" }
      })
      expect(result.tools.map((tool) => tool.name)).toEqual([sent, dotted])
      expect(result.toolChoice).toEqual({ tool: sent })
      expect(result.namespacedTools.get(sent)).toEqual({ namespace, name: "lookup" })
      expect(result.renamedTools?.get(dotted)).toBe("crm.find")
      const parts = (result.prompt.messages[0] as Message.AssistantMessage).parts
      expect(parts.map((part) => part.type === "tool_call" ? part.name : part.type)).toEqual([sent, dotted])
      const allowed = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input: "hi",
        tools: [
          { type: "namespace", name: namespace, tools: [{ type: "function", name: "lookup" }] },
          { type: "function", name: "lookup" }
        ],
        tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "namespace", name: namespace }] }
      })
      expect(allowed.tools.map((tool) => tool.name)).toEqual([sent])
    }))

  it.effect("a function or custom tool call without its output is a 400 naming the call, as the API answers it", () =>
    Effect.gen(function*() {
      const tools = [{ type: "function", name: "f" }, { type: "custom", name: "g" }]
      const call = { type: "function_call", call_id: "call_f", name: "f", arguments: "{}" }
      const custom = { type: "custom_tool_call", call_id: "call_g", name: "g", input: "x" }
      const unanswered = yield* rejected({ model: "m", tools, input: [{ role: "user", content: "hi" }, call, { role: "user", content: "and?" }] })
      expect([unanswered.param, unanswered.code]).toEqual(["input", "invalid_value"])
      expect(unanswered.description).toMatch(/^No tool output found for function call call_f: input\[1\] has no function_call_output after it\.$/)
      const customLeft = yield* rejected({
        model: "m",
        tools,
        input: [call, custom, { type: "function_call_output", call_id: "call_f", output: "ok" }]
      })
      expect(customLeft.description).toMatch(/^No tool output found for custom tool call call_g: input\[1\]/)
      // answered, in the order the upstream needs: accepted
      const answered = yield* ResponsesRequestDecoder.decode({
        model: "m",
        tools,
        input: [call, custom, { type: "function_call_output", call_id: "call_f", output: "ok" }, { type: "custom_tool_call_output", call_id: "call_g", output: "done" }]
      })
      expect(answered.prompt.messages.map((message) => message.role)).toEqual(["assistant", "tool"])
    }))

  it.effect("a custom tool's format is text or a lark / regex grammar (API reference, CustomToolParam); any other a 400 naming it", () =>
    Effect.gen(function*() {
      const tool = (format: unknown) => ({ model: "m", input: "hi", tools: [{ type: "function", name: "f" }, { type: "custom", name: "g", format }] })
      const text = yield* ResponsesRequestDecoder.decode(tool({ type: "text" }))
      expect(text.tools[1]!.description).toBeUndefined()
      const regex = yield* ResponsesRequestDecoder.decode(tool({ type: "grammar", syntax: "regex", definition: "^[a-z]+$" }))
      expect(regex.tools[1]!.description).toContain("regex grammar (write the raw text it describes, not JSON):\n^[a-z]+$")
      const cases: ReadonlyArray<readonly [unknown, string, string]> = [
        [{ type: "grammar", syntax: "ebnf", definition: "x" }, "tools[1].format.syntax", "invalid_value"],
        [{ type: "grammar", syntax: "lark" }, "tools[1].format.definition", "missing_required_parameter"],
        [{ type: "json" }, "tools[1].format.type", "invalid_value"]
      ]
      for (const [format, param, code] of cases) {
        const error = yield* rejected(tool(format))
        expect([error.param, error.code], JSON.stringify(format)).toEqual([param, code])
      }
    }))

  it.effect("a value none of a field's literals: OpenAI's wording naming every supported value, param the field, code invalid_value", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string, string]> = [
        [{ truncation: "turbo" }, "truncation", "Invalid value: 'turbo'. Supported values are: 'auto' and 'disabled'."],
        [
          { reasoning: { effort: "turbo" } },
          "reasoning.effort",
          "Invalid value: 'turbo'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', and 'xhigh'."
        ],
        [{ tool_choice: "turbo" }, "tool_choice", "Invalid value: 'turbo'. Supported values are: 'none', 'auto', and 'required'."],
        [
          { input: [{ type: "message", role: "robot", content: "hi" }] },
          "input[0].role",
          "Invalid value: 'robot'. Supported values are: 'user', 'assistant', 'system', and 'developer'."
        ],
        [
          { tools: [{ type: "custom", name: "g", format: { type: "grammar", syntax: "ebnf", definition: "x" } }] },
          "tools[0].format.syntax",
          "Invalid value: 'ebnf'. Supported values are: 'lark' and 'regex'."
        ],
        // the discriminating literals of a union of objects
        [
          { tools: [{ type: "custom", name: "g", format: { type: "json" } }] },
          "tools[0].format.type",
          "Invalid value: 'json'. Supported values are: 'text' and 'grammar'."
        ]
      ]
      for (const [fields, param, message] of cases) {
        const error = yield* rejected({ model: "m", input: "hi", ...fields })
        expect(error.body.error, JSON.stringify(fields)).toEqual({ message, type: "invalid_request_error", param, code: "invalid_value" })
      }
      // a value of another kind still gets the schema's message
      const stream = yield* rejected({ model: "m", input: "hi", stream: "yes" })
      expect([stream.param, stream.code]).toEqual(["stream", "invalid_type"])
      // a long value is capped in the message
      const long = yield* rejected({ model: "m", input: "hi", truncation: "x".repeat(10_000) })
      expect(long.message.length).toBeLessThan(300)
    }))

  it.effect("a tool_choice object of a type the API has no tool choice of: 400 naming tool_choice.type and every type, in OpenAI's words", () =>
    Effect.gen(function*() {
      // the recorded tool search request's tools (three deferred functions, a hosted tool search)
      const recorded = JSON.parse(readFixture("responses-sse/vai-openai-tool-search.chunks.txt").split("\n")[0]!)
      const tools = recorded.response.tools as ReadonlyArray<unknown>
      const supported =
        "'function', 'custom', 'allowed_tools', 'apply_patch', 'shell', 'mcp', 'file_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'computer', 'computer_use', 'computer_use_preview', 'image_generation', 'code_interpreter', and 'programmatic_tool_calling'"
      for (const type of ["frobnicate", "tool_search"]) {
        const error = yield* rejected({ model: "m", input: "hi", tools, tool_choice: { type } })
        expect(error.body.error, type).toEqual({
          message: `Invalid value: '${type}'. Supported values are: ${supported}.`,
          type: "invalid_request_error",
          param: "tool_choice.type",
          code: "invalid_value"
        })
      }
      // a function's choice is kept (a built-in tool's: the next test)
      const named = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools, tool_choice: { type: "function", name: "get_weather" } })
      expect(named.toolChoice).toEqual({ tool: "get_weather" })
    }))

  it.effect("a tool_choice forcing a built-in tool the gateway drops: 400 invalid_value, as allowed_tools in required mode", () =>
    Effect.gen(function*() {
      // the tools of recorded requests (their responses echo them): a file search, a remote MCP server, and the
      // tool search request's deferred functions and hosted tool search
      const fixtureTools = (file: string) => JSON.parse(readFixture(file)).tools as ReadonlyArray<Record<string, unknown>>
      const searched = JSON.parse(readFixture("responses-sse/vai-openai-tool-search.chunks.txt").split("\n")[0]!)
      const tools = [
        ...fixtureTools("responses-json/pai-gpt4o-file-search-with-results.json"),
        ...fixtureTools("responses-json/pai-o4mini-mcp-call-failed.json"),
        { type: "web_search_preview" },
        ...(searched.response.tools as ReadonlyArray<Record<string, unknown>>)
      ]
      const choices: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ type: "file_search" }, "file_search"],
        [{ type: "mcp", server_label: "google_calendar" }, "mcp"],
        [{ type: "mcp", server_label: "google_calendar", name: "search_events" }, "mcp"],
        [{ type: "web_search_preview" }, "web_search_preview"]
      ]
      for (const [choice, type] of choices) {
        const error = yield* rejected({ model: "m", input: "hi", tools, tool_choice: choice })
        expect(error.body.error, JSON.stringify(choice)).toEqual({
          message: `Invalid value for 'tool_choice': the tool it forces is a built-in tool this gateway drops (${type}): the upstream cannot run it.`,
          type: "invalid_request_error",
          param: "tool_choice",
          code: "invalid_value"
        })
      }
      // the same through allowed_tools in required mode: a 400 too; in auto mode, and auto, the functions are offered
      const allowed = yield* rejected({
        model: "m",
        input: "hi",
        tools,
        tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "file_search" }] }
      })
      expect([allowed.param, allowed.code]).toEqual(["tool_choice", "invalid_value"])
      expect(allowed.message).toContain("built-in tools this gateway drops (file_search)")
      for (const tool_choice of ["auto", { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "get_weather" }] }]) {
        const decoded = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools, tool_choice })
        expect(decoded.toolChoice).toBe("auto")
        expect(decoded.tools.length).toBeGreaterThan(0)
      }
      // with builtinTools "reject" the tools themselves are refused first, as before
      const reject = yield* rejected({ model: "m", input: "hi", tools, tool_choice: { type: "file_search" } }, { builtinTools: "reject" })
      expect(reject.code).toBe("unsupported_value")
    }))

  it.effect("a tool_choice object with no type: 400 missing_required_parameter at tool_choice.type, in OpenAI's words", () =>
    Effect.gen(function*() {
      // the recorded tool search request's tools (three deferred functions, a hosted tool search)
      const recorded = JSON.parse(readFixture("responses-sse/vai-openai-tool-search.chunks.txt").split("\n")[0]!)
      const tools = recorded.response.tools as ReadonlyArray<unknown>
      for (const choice of [{}, { name: "get_weather" }, { type: null, name: "get_weather" }]) {
        const error = yield* rejected({ model: "m", input: "hi", tools, tool_choice: choice })
        expect(error.body.error, JSON.stringify(choice)).toEqual({
          message: "Missing required parameter: 'tool_choice.type'.",
          type: "invalid_request_error",
          param: "tool_choice.type",
          code: "missing_required_parameter"
        })
      }
      // a type that is not a string is a value of the wrong type
      const numeric = yield* rejected({ model: "m", input: "hi", tools, tool_choice: { type: 5 } })
      expect(numeric.body.error).toEqual({
        message: "Invalid type for 'tool_choice.type': expected a string, but got a number instead.",
        type: "invalid_request_error",
        param: "tool_choice.type",
        code: "invalid_type"
      })
    }))

  it.effect("a tool choice may name a tool that only an additional_tools or tool_search_output item brings", () =>
    Effect.gen(function*() {
      const input = [
        { role: "user", content: "Read a.txt" },
        {
          type: "additional_tools",
          role: "developer",
          tools: [{ type: "custom", name: "apply_patch" }, { type: "function", name: "read_file" }]
        },
        { type: "tool_search_call", call_id: "s1", execution: "client", arguments: { query: "crm" } },
        {
          type: "tool_search_output",
          call_id: "s1",
          execution: "client",
          tools: [{ type: "namespace", name: "crm", tools: [{ type: "function", name: "lookup" }] }]
        }
      ]
      const byFunction = yield* ResponsesRequestDecoder.decode({ model: "m", input, tool_choice: { type: "function", name: "read_file" } })
      expect(byFunction.toolChoice).toEqual({ tool: "read_file" })
      const byCustom = yield* ResponsesRequestDecoder.decode({ model: "m", input, tool_choice: { type: "custom", name: "apply_patch" } })
      expect(byCustom.toolChoice).toEqual({ tool: "apply_patch" })
      const inNamespace = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input,
        tool_choice: { type: "function", namespace: "crm", name: "lookup" }
      })
      expect(inNamespace.toolChoice).toEqual({ tool: "crm__lookup" })
      // allowed_tools restricts the tools the input brought too
      const allowed = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input,
        tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "read_file" }, { type: "namespace", name: "crm" }] }
      })
      expect(allowed.tools.map((tool) => tool.name)).toEqual(["read_file", "crm__lookup"])
      expect(allowed.toolChoice).toBe("required")
      // a name no tool list holds is still refused
      const missing = yield* rejected({ model: "m", input, tool_choice: { type: "function", name: "write_file" } })
      expect(missing).toMatchObject({ param: "tool_choice", code: "invalid_value" })
    }))

  it.effect("an allowed_tools entry naming a tool or namespace the request does not declare: 400 in OpenAI's words, in either mode", () =>
    Effect.gen(function*() {
      // OpenAI: "Tool choice 'web_search' not found in 'tools' parameter." for an allowed_tools entry
      // { type: "function", name: "web_search" } without such a function (vercel/ai#18997), param tool_choice
      const tools = [
        { type: "function", name: "read_file", parameters: { type: "object", properties: {} } },
        { type: "namespace", name: "crm", tools: [{ type: "function", name: "lookup" }] }
      ]
      for (const mode of ["auto", "required"]) {
        for (const [entry, name] of [
          [{ type: "function", name: "write_file" }, "write_file"],
          [{ type: "custom", name: "apply_patch" }, "apply_patch"],
          [{ type: "function", namespace: "crm", name: "delete" }, "delete"],
          [{ type: "namespace", name: "billing" }, "billing"]
        ] as const) {
          const error = yield* rejected({
            model: "m",
            input: "hi",
            tools,
            tool_choice: { type: "allowed_tools", mode, tools: [{ type: "function", name: "read_file" }, entry] }
          })
          expect(error, JSON.stringify(entry)).toMatchObject({
            message: `Tool choice '${name}' not found in 'tools' parameter.`,
            param: "tool_choice",
            code: "invalid_value"
          })
        }
      }
      const declared = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input: "hi",
        tools,
        tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "read_file" }] }
      })
      expect(declared.tools.map((tool) => tool.name)).toEqual(["read_file"])
    }))

  it.effect("a tool_search_output names every tool it loaded to the upstream, also one the request declared with defer_loading", () =>
    Effect.gen(function*() {
      const search = (callId: string, tools: ReadonlyArray<unknown>) => [
        { type: "tool_search_call", call_id: callId, execution: "client", arguments: { query: "crm" } },
        { type: "tool_search_output", call_id: callId, execution: "client", tools }
      ]
      const archive = { type: "namespace", name: "crm", tools: [{ type: "function", name: "archive", defer_loading: true }] }
      const decoded = yield* ResponsesRequestDecoder.decode({
        model: "m",
        tools: [archive, { type: "tool_search", execution: "client" }],
        input: [
          { role: "user", content: "Archive it" },
          ...search("s1", [archive, { type: "function", name: "refund" }]),
          // a second search loading a tool the first one loaded
          ...search("s2", [{ type: "function", name: "refund" }])
        ]
      })
      const results = decoded.prompt.messages.flatMap((message) =>
        message instanceof Message.ToolMessage
          ? message.results.flatMap((result) => result instanceof Part.ToolResultPart ? [[result.callId, result.output]] : [])
          : []
      )
      expect(results).toEqual([["s1", "Tools loaded: crm__archive, refund."], ["s2", "Tools loaded: refund."]])
      // loaded: offered to the upstream beside the client's search
      expect(decoded.tools.map((tool) => tool.name)).toEqual(["crm__archive", "refund", "tool_search"])
      expect(decoded.deferredTools?.size).toBe(0)
      const none = yield* ResponsesRequestDecoder.decode({ model: "m", input: [{ role: "user", content: "x" }, ...search("s3", [])] })
      expect(none.prompt.messages.at(-1)).toEqual(
        new Message.ToolMessage({ results: [new Part.ToolResultPart({ callId: "s3", name: "tool_search", output: "No tools loaded." })] })
      )
    }))

  it.effect("a client-run tool search: deferred tools wait for it, a tool choice naming one offers it, allowed_tools keeps the search; its description names each tool by its first line", () =>
    Effect.gen(function*() {
      const long = "x".repeat(250)
      const tools = [
        { type: "function", name: "now", parameters: { type: "object", properties: {} } },
        { type: "function", name: "get_weather", description: "The weather.\nSecond line.", defer_loading: true },
        { type: "function", name: "send_email", description: long, defer_loading: true },
        { type: "tool_search", execution: "client" }
      ]
      const decoded = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools })
      expect(decoded.tools.map((tool) => tool.name)).toEqual(["now", "tool_search"])
      expect(decoded.tools[1]!.description).toBe(
        `Loads tools that are not loaded yet, so that you can call them in your next step. Load a tool before calling it.\n\nTools to load:\n- get_weather: The weather.\n- send_email: ${
          "x".repeat(200)
        }…`
      )
      expect([...decoded.deferredTools!.keys()]).toEqual(["get_weather", "send_email"])
      expect(decoded.deferredTools!.get("get_weather")).toEqual({ path: "get_weather", tool: tools[1], summary: "get_weather: The weather." })
      const chosen = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools, tool_choice: { type: "function", name: "send_email" } })
      expect(chosen.tools.map((tool) => tool.name)).toEqual(["now", "send_email", "tool_search"])
      const allowed = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input: "hi",
        tools,
        tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "get_weather" }] }
      })
      expect(allowed.tools.map((tool) => tool.name)).toEqual(["tool_search"])
      // a hosted search (the default) cannot run here: every tool, no search function
      const hosted = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", tools: [...tools.slice(0, 3), { type: "tool_search" }] })
      expect(hosted.tools.map((tool) => tool.name)).toEqual(["now", "get_weather", "send_email"])
      expect(hosted.toolSearch).toBeUndefined()
      expect([...hosted.deferredTools!.keys()]).toEqual(["get_weather", "send_email"])
    }))

  it.effect("a description starting with blank lines: the tool search's summaries and a namespace's lead both take its first line that is not blank", () =>
    Effect.gen(function*() {
      const decoded = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input: "hi",
        tools: [
          { type: "function", name: "get_weather", description: "\n\nThe weather.\nSecond line.", defer_loading: true },
          {
            type: "namespace",
            name: "crm",
            description: "\n \r\nThe CRM.\nUse ids.",
            tools: [{ type: "function", name: "lookup" }, { type: "function", name: "find", defer_loading: true }]
          },
          { type: "tool_search", execution: "client" }
        ]
      })
      expect(decoded.tools.map((tool) => [tool.name, tool.description])).toEqual([
        ["crm__lookup", "Namespace crm: The CRM."],
        ["tool_search", expect.stringMatching(/\n\nTools to load:\n- get_weather: The weather\.\n- crm \(namespace\): The CRM\.$/)]
      ])
      expect(decoded.deferredTools!.get("get_weather")?.summary).toBe("get_weather: The weather.")
    }))

  it.effect("common items take a checked fast path: extra fields are ignored as by the schema, a wrong field still gets the schema's error", () =>
    Effect.gen(function*() {
      const decoded = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input: [
          { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }], extra: 1 },
          { type: "function_call", call_id: "c1", name: "f", arguments: "{}", id: "fc_1", status: "completed", phase: "x", extra: 1 },
          { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "4" }], extra: 1 },
          { type: "custom_tool_call", call_id: "c2", name: "g", input: "raw", id: "ctc_1", status: "completed" },
          { type: "custom_tool_call_output", call_id: "c2", output: "ok" },
          { type: "message", role: "assistant", content: "done", id: "msg_1", status: null, phase: "final_answer" }
        ]
      })
      expect(decoded.prompt.messages).toEqual([
        Prompt.userMessage("hi"),
        new Message.AssistantMessage({
          parts: [new Part.ToolCallPart({ callId: "c1", name: "f", arguments: "{}", attributes: { itemId: "fc_1", status: "completed" } })]
        }),
        new Message.ToolMessage({ results: [new Part.ToolResultPart({ callId: "c1", name: "f", output: "4" })] }),
        new Message.AssistantMessage({
          parts: [new Part.ToolCallPart({ callId: "c2", name: "g", arguments: "{\"input\":\"raw\"}", attributes: { itemId: "ctc_1" } })]
        }),
        new Message.ToolMessage({ results: [new Part.ToolResultPart({ callId: "c2", name: "g", output: "ok" })] }),
        new Message.AssistantMessage({
          parts: [new Part.TextPart({ text: "done", attributes: { itemId: "msg_1", phase: "final_answer" } })]
        })
      ])
      const cases: ReadonlyArray<readonly [unknown, string, string]> = [
        [{ type: "message", role: "robot", content: "hi" }, "input[0].role", "invalid_value"],
        [{ type: "message", role: "user", content: 5 }, "input[0].content", "invalid_type"],
        [{ type: "message", role: "user", content: "hi", id: 5 }, "input[0].id", "invalid_type"],
        [{ type: "function_call", call_id: "c", name: "f", arguments: {} }, "input[0].arguments", "invalid_type"],
        [{ type: "function_call", name: "f", arguments: "{}" }, "input[0].call_id", "missing_required_parameter"],
        [{ type: "custom_tool_call", call_id: "c", name: "g" }, "input[0].input", "missing_required_parameter"],
        [{ type: "local_shell_call", call_id: "c", action: { type: "exec", command: "ls" } }, "input[0].action.command", "invalid_type"],
        [{ type: "local_shell_call_output", output: "x" }, "input[0].id", "missing_required_parameter"],
        [{ type: "function_call_output", call_id: "c", output: 4 }, "input[0].output", "invalid_type"],
        [{ type: "message", role: "user", content: [{ type: "input_text", text: 4 }] }, "input[0].content[0].text", "invalid_type"],
        [{ type: "message", role: "assistant", content: [{ text: "x" }] }, "input[0].content[0]", "invalid_type"]
      ]
      for (const [item, param, code] of cases) {
        const error = yield* rejected({ model: "m", input: [item] })
        expect([error.param, error.code], JSON.stringify(item)).toEqual([param, code])
      }
    }))

  it.effect("a value none of a union's types takes: 'Invalid type for' naming each type the field takes, not only the first's", () =>
    Effect.gen(function*() {
      for (const [input, got] of [[42, "a number"], [{ role: "user" }, "an object"], [true, "a boolean"]] as const) {
        const error = yield* rejected({ model: "m", input })
        expect([error.param, error.code, error.description]).toEqual([
          "input",
          "invalid_type",
          `Invalid type for 'input': expected one of a string, an array or null, but got ${got} instead.`
        ])
      }
    }))

  it.effect("a content part's string field of another type: invalid_type in OpenAI's words, not a missing parameter", () =>
    Effect.gen(function*() {
      const call = { type: "function_call", call_id: "c", name: "f", arguments: "{}" }
      const cases: ReadonlyArray<readonly [ReadonlyArray<unknown>, string, string]> = [
        [[{ role: "user", content: [{ type: "input_text", text: 5 }] }], "input[0].content[0].text", "a number"],
        [[{ role: "system", content: [{ type: "input_text", text: true }] }], "input[0].content[0].text", "a boolean"],
        [[{ role: "assistant", content: [{ type: "output_text", text: ["a"] }] }], "input[0].content[0].text", "an array"],
        [[{ role: "assistant", content: [{ type: "refusal", refusal: { no: 1 } }] }], "input[0].content[0].refusal", "an object"],
        [[call, { type: "function_call_output", call_id: "c", output: [{ type: "input_text", text: 7 }] }], "input[1].output[0].text", "a number"],
        [[{ role: "user", content: [{ type: "input_image", image_url: 5 }] }], "input[0].content[0].image_url", "a number"],
        [[{ role: "user", content: [{ type: "input_file", file_data: 5, filename: "a.pdf" }] }], "input[0].content[0].file_data", "a number"],
        [[{ role: "user", content: [{ type: "input_file", file_data: "data:application/pdf;base64,AA==", filename: 5 }] }], "input[0].content[0].filename", "a number"]
      ]
      for (const [input, param, got] of cases) {
        const error = yield* rejected({ model: "m", input })
        expect([error.description, error.param, error.code], JSON.stringify(input)).toEqual([
          `Invalid type for '${param}': expected a string, but got ${got} instead.`,
          param,
          "invalid_type"
        ])
      }
      // absent or null: missing, as before
      for (const part of [{ type: "input_text" }, { type: "input_text", text: null }]) {
        const error = yield* rejected({ model: "m", input: [{ role: "user", content: [part] }] })
        expect([error.description, error.param, error.code]).toEqual([
          "Missing required parameter: 'text'.",
          "input[0].content[0].text",
          "missing_required_parameter"
        ])
      }
    }))

  it.effect("two tools of one name in one list: 400 naming the second, not the first one kept and the other dropped", () =>
    Effect.gen(function*() {
      const fn = (name: string, description: string) => ({
        type: "function",
        name,
        description,
        parameters: { type: "object", properties: { id: { type: "string" } } }
      })
      const cases: ReadonlyArray<readonly [ReadonlyArray<unknown>, string, string, string]> = [
        [[fn("a", "first"), fn("a", "second")], "a", "tools[0].name", "tools[1].name"],
        [[fn("a", "the function"), { type: "custom", name: "a", description: "the custom" }], "a", "tools[0].name", "tools[1].name"],
        [[fn("b", "other"), { type: "custom", name: "a" }, fn("a", "the function")], "a", "tools[1].name", "tools[2].name"],
        [
          [{ type: "namespace", name: "crm", description: "CRM", tools: [fn("lookup", "one"), fn("lookup", "two")] }],
          "crm.lookup",
          "tools[0].tools[0].name",
          "tools[0].tools[1].name"
        ],
        // where each is: a namespace's index and the index in it, for the first one too
        [
          [
            fn("x", "top"),
            { type: "namespace", name: "crm", tools: [fn("a", "a"), fn("lookup", "one")] },
            { type: "namespace", name: "crm", tools: [fn("lookup", "two")] }
          ],
          "crm.lookup",
          "tools[1].tools[1].name",
          "tools[2].tools[0].name"
        ],
        [[fn("crm.lookup", "top"), { type: "namespace", name: "crm", tools: [fn("lookup", "in")] }], "crm.lookup", "tools[0].name", "tools[1].tools[0].name"],
        [
          [{ type: "namespace", name: "crm", tools: [fn("b", "b"), fn("lookup", "in")] }, fn("crm.lookup", "top")],
          "crm.lookup",
          "tools[0].tools[1].name",
          "tools[1].name"
        ]
      ]
      for (const [tools, name, first, second] of cases) {
        const error = yield* rejected({ model: "m", input: "hi", tools })
        expect([error.description, error.param, error.code], JSON.stringify(tools)).toEqual([
          `Duplicate tool name '${name}': ${first} and ${second} both name it. Tool names must be unique: the model could be offered only one of them.`,
          second,
          "invalid_value"
        ])
      }
      // one name in two namespaces, or at the top level and in a namespace, is two names
      const decoded = yield* ResponsesRequestDecoder.decode({
        model: "m",
        input: "hi",
        tools: [fn("lookup", "top"), { type: "namespace", name: "crm", description: "CRM", tools: [fn("lookup", "crm's")] }]
      })
      expect(decoded.tools.map((tool) => tool.name)).toEqual(["lookup", "crm__lookup"])
    }))

  it.effect("a namespace with an empty name: 400 naming it, not its tools taken for the top-level tools of their names", () =>
    Effect.gen(function*() {
      const top = { type: "function", name: "x", description: "top-level x" }
      const empty = { type: "namespace", name: "", description: "empty", tools: [{ type: "function", name: "x", description: "namespaced x" }] }
      // either order: the upstream was offered one of the two `x` (the first declared), with no warning
      for (const [tools, param] of [[[top, empty], "tools[1].name"], [[empty, top], "tools[0].name"]] as const) {
        const error = yield* rejected({ model: "m", input: "hi", tools })
        expect([error.description, error.param, error.code], JSON.stringify(tools)).toEqual([
          `Invalid '${param}': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
          param,
          "empty_string"
        ])
      }
    }))

  it.effect("a compaction item (/v1/responses/compact's output) is refused saying why: only OpenAI reads it", () =>
    Effect.gen(function*() {
      // the API reference's example answer of /v1/responses/compact, whose output is the next request's input
      const spec = readFixture("spec/openai-openapi.yaml")
      const at = spec.indexOf('"object": "response.compaction"')
      const start = spec.lastIndexOf("{", at)
      const end = spec.indexOf("\n            }\n", at) + 14
      const compacted = JSON.parse(spec.slice(start, end)) as { output: ReadonlyArray<{ type: string }> }
      expect(compacted.output.map((item) => item.type)).toEqual(["message", "compaction"])
      const input = [...compacted.output, { role: "user", content: "And a contact form?" }]
      const error = yield* rejected({ model: "m", store: false, input })
      expect(error).toMatchObject({ param: "input[1].type", code: "unsupported_value" })
      expect(error.message).toBe(
        "Input item type 'compaction' cannot be sent through this gateway: its 'encrypted_content' is the earlier " +
          "conversation compacted by OpenAI (/v1/responses/compact), which only OpenAI can read and the upstream " +
          "model cannot. Send the conversation's items themselves instead of the compaction item (shorten them " +
          "yourself if they are too long)."
      )
      const trigger = yield* rejected({ model: "m", input: [{ role: "user", content: "hi" }, { type: "compaction_trigger" }] })
      expect(trigger).toMatchObject({ param: "input[1].type", code: "unsupported_value" })
      expect(trigger.message).toBe(
        "Input item type 'compaction_trigger' cannot be sent through this gateway: it does not compact " +
          "conversations. Leave the item out, and shorten the input yourself."
      )
    }))

  it.effect("what a stateless bridge cannot honour: a RequestError naming the parameter", () =>
    Effect.gen(function*() {
      const base = { model: "m", input: "hi" }
      const cases: ReadonlyArray<readonly [unknown, string | null, string]> = [
        [{ ...base, previous_response_id: "resp_1" }, "previous_response_id", "unsupported_parameter"],
        [{ ...base, conversation: "conv_1" }, "conversation", "unsupported_parameter"],
        [{ ...base, store: true }, "store", "unsupported_value"],
        [{ ...base, background: true }, "background", "unsupported_value"],
        [{ ...base, truncation: "auto" }, "truncation", "unsupported_value"],
        [{ ...base, context_management: [{ type: "compaction" }] }, "context_management", "unsupported_parameter"],
        [{ ...base, moderation: { model: "omni-moderation-latest" } }, "moderation", "unsupported_parameter"],
        [{ ...base, top_logprobs: 3 }, "top_logprobs", "unsupported_value"],
        [{ ...base, top_logprobs: -1 }, "top_logprobs", "integer_below_min_value"],
        [{ ...base, max_output_tokens: -5 }, "max_output_tokens", "integer_below_min_value"],
        [{ ...base, max_output_tokens: 0 }, "max_output_tokens", "integer_below_min_value"],
        [{ ...base, include: ["reasoning.encrypted_content", "message.output_text.logprobs"] }, "include[1]", "unsupported_value"],
        [{ model: "m", input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].id", "unsupported_value"],
        [
          { model: "m", input: [{ role: "user", content: [{ type: "input_file", file_url: "https://x/a.pdf" }] }] },
          "input[0].content[0].file_url",
          "unsupported_value"
        ],
        [{ input: "hi" }, "model", "missing_required_parameter"],
        [{ model: "", input: "hi" }, "model", "empty_string"],
        [{ model: "m" }, "input", "missing_required_parameter"],
        [{ model: "m", instructions: "Be brief.", input: null }, "input", "missing_required_parameter"],
        [{ model: "m", input: [] }, "input", "empty_array"],
        [{ ...base, temperature: "hot" }, "temperature", "invalid_type"],
        [{ model: "m", input: [{ type: "message", role: "user", content: [{ type: "input_text" }] }] }, "input[0].content[0].text", "missing_required_parameter"],
        [[1, 2], null, "invalid_type"]
      ]
      for (const [body, param, code] of cases) {
        const error = yield* rejected(body)
        assert.strictEqual(error.param, param, JSON.stringify(body))
        assert.strictEqual(error.code, code, JSON.stringify(body))
        expect(error.body).toEqual({ error: { message: error.description, type: "invalid_request_error", param, code } })
      }
      const builtin = yield* rejected({ ...base, tools: [{ type: "file_search" }] }, { builtinTools: "reject" })
      expect(builtin.param).toBe("tools[0]")
      const item = yield* rejected({ model: "m", input: [{ type: "web_search_call", id: "ws" }] }, { builtinTools: "reject" })
      expect(item.param).toBe("input[0]")
      const accepted = yield* ResponsesRequestDecoder.decode(
        { model: "m", input: [{ role: "user", content: [{ type: "input_file", file_url: "https://x/a.pdf" }] }] },
        { inputFiles: ["url"] }
      )
      expect(accepted.prompt.messages[0]).toMatchObject({ parts: [{ mediaType: "application/pdf", url: "https://x/a.pdf" }] })
    }))

  it.effect("metadata within the API's bounds (16 pairs, keys of 64, values of 512 characters): at the bounds kept, past them a 400 that does not echo the value", () =>
    Effect.gen(function*() {
      const atBounds = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, "k"), "v".repeat(512)]))
      const accepted = yield* ResponsesRequestDecoder.decode({ model: "m", input: "hi", metadata: atBounds })
      expect(accepted.echo.metadata).toEqual(atBounds)

      const tooMany = yield* rejected({ model: "m", input: "hi", metadata: { ...atBounds, extra: "v" } })
      expect([tooMany.param, tooMany.code]).toEqual(["metadata", "object_above_max_properties"])
      expect(tooMany.description).toContain("at most 16 properties, but got an object with 17")

      const longKey = yield* rejected({ model: "m", input: "hi", metadata: { ["k".repeat(65)]: "v" } })
      expect([longKey.param, longKey.code]).toEqual(["metadata", "string_above_max_length"])

      // a `__proto__` key (an own property of the parsed body) is a key like any other: bounded and echoed
      const proto = JSON.parse(`{"model":"m","input":"hi","metadata":{"__proto__":"p","trace":"t"}}`)
      const echoed = yield* ResponsesRequestDecoder.decode(proto)
      expect(JSON.stringify(echoed.echo.metadata)).toBe(`{"__proto__":"p","trace":"t"}`)
      const longProto = yield* rejected(JSON.parse(`{"model":"m","input":"hi","metadata":{"__proto__":"${"x".repeat(600)}"}}`))
      expect([longProto.param, longProto.code]).toEqual(["metadata.__proto__", "string_above_max_length"])

      const longValue = yield* rejected({ model: "m", input: "hi", metadata: { trace: "x".repeat(100_000) } })
      expect([longValue.param, longValue.code]).toEqual(["metadata.trace", "string_above_max_length"])
      expect(longValue.description).toBe(
        "Invalid 'metadata.trace': string too long. Expected a string with maximum length 512, but got a string with length 100000 instead."
      )
    }))

  it.effect("unknown top-level fields are ignored with a debug log; the parameters set are named", () =>
    Effect.gen(function*() {
      const { logs, result } = yield* decodeWithLogs({
        model: "m",
        input: "hi",
        frobnicate: 1,
        x_client_trace: "t",
        reasoning: { summary: "auto" },
        text: { verbosity: "low" },
        metadata: { a: "b" },
        max_tool_calls: 2,
        top_logprobs: 0,
        include: ["reasoning.encrypted_content"],
        stream_options: { include_obfuscation: false },
        temperature: null
      })
      expect(result.ignoredFields).toEqual(["frobnicate", "x_client_trace"])
      expect(logs).toContain("DEBUG: unknown top-level fields ignored: frobnicate, x_client_trace")
      expect(result.parameters).toEqual([
        "model",
        "input",
        "max_tool_calls",
        "reasoning.summary",
        "text.verbosity",
        "metadata",
        "top_logprobs",
        "include",
        "stream_options"
      ])
      expect(result.echo).toMatchObject({ max_tool_calls: 2, top_logprobs: 0, metadata: { a: "b" } })
    }))
})
