/**
 * `Prompt` -> Chat Completions request body.
 */
import { ChatCompletionsOutput, ChatCompletionsRequest } from "@effect-responses/chat-completions"
import { AiError, LanguageModel, Message, Part, Prompt, ResponseFormat, StrictSchema } from "@effect-responses/core"
import { ResponsesRequest } from "@effect-responses/responses"
import { Tool } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import { readFixture } from "./fixtures.js"

const weather = new LanguageModel.ToolDefinition({
  name: "get_weather",
  description: "Weather of a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: true
})

describe("ChatCompletionsRequest.functionTool", () => {
  it("sends strict only when true: false is the API's default, and some servers (vLLM 0.8-0.9) refuse the field", () => {
    expect(ChatCompletionsRequest.functionTool(weather).function).toHaveProperty("strict", true)
    const loose = ChatCompletionsRequest.functionTool(new LanguageModel.ToolDefinition({ ...weather, strict: false }))
    expect(loose.function).not.toHaveProperty("strict")
    expect(loose.function).toStrictEqual({ name: "get_weather", description: "Weather of a city.", parameters: weather.parameters })
  })
})

describe("ChatCompletionsRequest.fromPrompt", () => {
  it.effect("tool call arguments of JSON whitespace alone go upstream as {}, as empty ones do; JSON with whitespace around it as it is", () =>
    Effect.gen(function*() {
      const args = ["", "  ", "\n", " \t\r\n", " {\"city\":\"Oslo\"}\n"]
      const prompt = Prompt.make([
        new Message.UserMessage({ parts: [new Part.TextPart({ text: "Weather?" })] }),
        new Message.AssistantMessage({
          parts: args.map((text, index) => new Part.ToolCallPart({ callId: `call_${index}`, name: "get_weather", arguments: text }))
        }),
        new Message.ToolMessage({
          results: args.map((_, index) => new Part.ToolResultPart({ callId: `call_${index}`, name: "get_weather", output: "5 C" }))
        })
      ])
      const body = yield* ChatCompletionsRequest.fromPrompt(prompt, { model: "gpt-4o-mini" })
      const calls = (body.messages[1] as unknown as { tool_calls: ReadonlyArray<{ function: { arguments: string } }> }).tool_calls
      expect(calls.map((call) => call.function.arguments)).toEqual(["{}", "{}", "{}", "{}", " {\"city\":\"Oslo\"}\n"])
    }))

  it.effect("maps system, user media, assistant text and tool calls, and tool results by tool_call_id", () =>
    Effect.gen(function*() {
      const prompt = Prompt.make([
        new Message.SystemMessage({ content: "Be brief." }),
        new Message.UserMessage({
          parts: [
            new Part.TextPart({ text: "What is this?" }),
            new Part.MediaPart({ mediaType: "image/png", data: "iVBO", detail: "low" }),
            new Part.MediaPart({ mediaType: "image/jpeg", url: "https://e.x/a.jpg" }),
            new Part.MediaPart({ mediaType: "application/pdf", data: "JVBE", filename: "a.pdf" })
          ]
        }),
        new Message.AssistantMessage({
          parts: [
            new Part.ReasoningPart({ text: "Let me look." }),
            new Part.TextPart({ text: "Checking." }),
            new Part.ToolCallPart({ callId: "call_1", name: "get_weather", arguments: "{\"city\":\"Oslo\"}" }),
            new Part.ToolCallPart({ callId: "call_2", name: "get_weather", arguments: "" })
          ]
        }),
        new Message.ToolMessage({
          results: [
            new Part.ToolResultPart({ callId: "call_1", name: "get_weather", output: "5 C" }),
            new Part.ToolResultPart({ callId: "call_2", name: "get_weather", output: "{\"error\":\"no city\"}", isError: true })
          ]
        })
      ])
      const body = yield* ChatCompletionsRequest.fromPrompt(prompt, { model: "gpt-4o-mini" })
      expect(body.messages).toStrictEqual([
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBO", detail: "low" } },
            { type: "image_url", image_url: { url: "https://e.x/a.jpg" } },
            { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBE" } }
          ]
        },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } },
            { id: "call_2", type: "function", function: { name: "get_weather", arguments: "{}" } }
          ]
        },
        { role: "tool", tool_call_id: "call_1", content: "5 C" },
        { role: "tool", tool_call_id: "call_2", content: "{\"error\":\"no city\"}" }
      ])
    }))

  it.effect("a user message of thousands of parts (built with yields between them) maps each part as a short one does", () =>
    Effect.gen(function*() {
      const parts = Array.from({ length: 3000 }, (_, i) =>
        i % 1000 === 7
          ? new Part.MediaPart({ mediaType: "image/png", data: `d${i}` })
          : new Part.TextPart({ text: `p${i}` }))
      const body = yield* ChatCompletionsRequest.fromPrompt(Prompt.make([new Message.UserMessage({ parts })]), { model: "m" })
      const each = yield* Effect.forEach(parts, (part) =>
        Effect.map(ChatCompletionsRequest.fromPrompt(Prompt.make([new Message.UserMessage({ parts: [part, part] })]), { model: "m" }), (one) =>
          (one.messages[0] as unknown as { content: ReadonlyArray<unknown> }).content[0]))
      expect(body.messages).toStrictEqual([{ role: "user", content: each }])
      // a part that cannot be sent fails as in a short message, naming the message
      const bad = [...parts, new Part.MediaPart({ mediaType: "image/png" })]
      const error = yield* Effect.flip(ChatCompletionsRequest.fromPrompt(Prompt.make([new Message.UserMessage({ parts: bad })]), { model: "m" }))
      const short = yield* Effect.flip(ChatCompletionsRequest.fromPrompt(Prompt.make([new Message.UserMessage({ parts: bad.slice(-2) })]), { model: "m" }))
      assert.instanceOf(error, AiError.InvalidPrompt)
      expect(error.message).toBe(short.message)
    }))

  it.effect("replays reasoning as reasoning_content only when asked; a lone user text is a string", () =>
    Effect.gen(function*() {
      const prompt = Prompt.make([
        Prompt.userMessage("Hi"),
        new Message.AssistantMessage({
          parts: [
            new Part.ReasoningPart({ text: "think" }),
            new Part.ToolCallPart({ callId: "c", name: "f", arguments: "{}" })
          ]
        }),
        new Message.ToolMessage({ results: [new Part.ToolResultPart({ callId: "c", name: "f", output: "1" })] })
      ])
      const body = yield* ChatCompletionsRequest.fromPrompt(prompt, {
        model: "deepseek-reasoner",
        replayReasoningContent: true,
        systemMessageRole: "developer"
      })
      expect(body.messages[0]).toStrictEqual({ role: "user", content: "Hi" })
      expect(body.messages[1]).toMatchObject({ role: "assistant", content: null, reasoning_content: "think" })
    }))

  it.effect("maps the options: sampling, limits, stop, seed, tools, tool choice, response_format", () =>
    Effect.gen(function*() {
      const body = yield* ChatCompletionsRequest.fromPrompt(Prompt.make([
        new Message.SystemMessage({ content: "s" }),
        Prompt.userMessage("u")
      ]), {
        model: "gpt-4o",
        systemMessageRole: "developer",
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 100,
        stop: ["END"],
        seed: 7,
        tools: [weather],
        toolChoice: { tool: "get_weather" },
        parallelToolCalls: false,
        responseFormat: {
          type: "json",
          name: "city",
          strict: true,
          schema: Schema.Struct({ city: Schema.String })
        },
        extraBody: { user: "u1" }
      })
      expect(body).toMatchObject({
        model: "gpt-4o",
        temperature: 0.2,
        top_p: 0.9,
        max_completion_tokens: 100,
        stop: ["END"],
        seed: 7,
        parallel_tool_calls: false,
        tool_choice: { type: "function", function: { name: "get_weather" } },
        tools: [{
          type: "function",
          function: { name: "get_weather", description: "Weather of a city.", parameters: weather.parameters, strict: true }
        }],
        user: "u1"
      })
      assert.strictEqual(body.messages[0]!.role, "developer")
      const format = body.response_format as { type: string; json_schema: { name: string; strict: boolean; schema: { properties: object } } }
      assert.strictEqual(format.type, "json_schema")
      assert.strictEqual(format.json_schema.name, "city")
      assert.isTrue(format.json_schema.strict)
      expect(format.json_schema.schema.properties).toStrictEqual({ city: { type: "string" } })
      const legacy = yield* ChatCompletionsRequest.fromPrompt(Prompt.user("u"), {
        model: "llama",
        maxOutputTokens: 5,
        maxTokensParameter: "max_tokens"
      })
      assert.strictEqual(legacy.max_tokens, 5)
      assert.isUndefined(legacy.max_completion_tokens)
    }))

  it.effect("maps user, prompt_cache_key, service_tier and verbosity; sends none of them unless set", () =>
    Effect.gen(function*() {
      const body = yield* ChatCompletionsRequest.fromPrompt(Prompt.user("u"), {
        model: "gpt-4o",
        user: "end-user-1",
        promptCacheKey: "cache-1",
        serviceTier: "flex",
        verbosity: "low"
      })
      expect(body).toMatchObject({ user: "end-user-1", prompt_cache_key: "cache-1", service_tier: "flex", verbosity: "low" })
      const plain = yield* ChatCompletionsRequest.fromPrompt(Prompt.user("u"), { model: "gpt-4o" })
      expect(Object.keys(plain).sort()).toStrictEqual(["messages", "model"])
    }))

  it.effect("fails with InvalidPrompt for what Chat Completions cannot take", () =>
    Effect.gen(function*() {
      const imageById = Prompt.make([
        new Message.UserMessage({ parts: [new Part.MediaPart({ mediaType: "image/png", fileId: "file_1" })] })
      ])
      assert.instanceOf(yield* Effect.flip(ChatCompletionsRequest.fromPrompt(imageById, { model: "m" })), AiError.InvalidPrompt)
      assert.instanceOf(
        yield* Effect.flip(ChatCompletionsRequest.fromPrompt(Prompt.user("x"), { model: "m", toolChoice: { tool: "nope" } })),
        AiError.InvalidPrompt
      )
      assert.instanceOf(yield* Effect.flip(ChatCompletionsRequest.fromPrompt(Prompt.user("x"), { model: "" })), AiError.InvalidPrompt)
    }))

  describe("pairing rules of tool calls and tool messages", () => {
    // the recorded answer: an assistant message with two parallel tool calls (delete_file, create_file)
    const PARALLEL = "chat-json/pai-chat-gpt4o-two-parallel-tool-calls.json"
    const recorded = () => ChatCompletionsOutput.fromCompletion(JSON.parse(readFixture(PARALLEL)))
    const result = (call: Part.ToolCallPart, output: string) =>
      new Part.ToolResultPart({ callId: call.callId, name: call.name, output })
    const warningsOf = <A, E>(effect: Effect.Effect<A, E>) => {
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) warnings.push(String(message))
      })
      return Effect.map(
        Effect.provide(effect, Logger.replace(Logger.defaultLogger, logger)),
        (value) => ({ value, warnings })
      )
    }

    it.effect("calls answered right after their assistant message are sent as they are, without a warning", () =>
      Effect.gen(function*() {
        const response = yield* recorded()
        const [remove, create] = response.message.toolCalls
        const { value: body, warnings } = yield* warningsOf(ChatCompletionsRequest.fromPrompt(
          Prompt.make([
            Prompt.userMessage("Delete .env and create test.txt"),
            response.message,
            new Message.ToolMessage({ results: [result(remove!, "deleted"), result(create!, "created")] })
          ]),
          { model: "gpt-4o" }
        ))
        const wire = JSON.parse(readFixture(PARALLEL)).choices[0].message
        expect(body.messages[1]).toStrictEqual({ role: "assistant", content: null, tool_calls: wire.tool_calls })
        expect(body.messages.slice(2).map((m) => m.tool_call_id)).toStrictEqual([remove!.callId, create!.callId])
        expect(warnings).toStrictEqual([])
      }))

    it.effect("an assistant message's JSON text: role, content, refusal, reasoning_content, tool_calls, in that order", () =>
      Effect.gen(function*() {
        const response = yield* recorded()
        const [remove, create] = response.message.toolCalls
        // the recorded calls, as the request writes them: id, type, function (name, arguments)
        const wire = (JSON.parse(readFixture(PARALLEL)).choices[0].message.tool_calls as ReadonlyArray<{
          readonly id: string
          readonly function: { readonly name: string; readonly arguments: string }
        }>).map((call) =>
          `{"id":${JSON.stringify(call.id)},"type":"function","function":{"name":${JSON.stringify(call.function.name)},"arguments":${
            JSON.stringify(call.function.arguments)
          }}}`
        )
        const calls = `[${wire.join(",")}]`
        const one = `[${wire[0]}]`
        const results = (...calls: ReadonlyArray<Part.ToolCallPart>) =>
          new Message.ToolMessage({ results: calls.map((call) => result(call, "done")) })
        const text = new Part.TextPart({ text: "Working." })
        const refusal = new Part.RefusalPart({ text: "Not that." })
        const reasoning = new Part.ReasoningPart({ text: "think" })
        // each assistant message (with the tool message its calls need) -> its JSON text as sent
        const cases: ReadonlyArray<readonly [ReadonlyArray<Message.Message>, string]> = [
          [[new Message.AssistantMessage({ parts: [text] })], `{"role":"assistant","content":"Working."}`],
          [[response.message, results(remove!, create!)], `{"role":"assistant","content":null,"tool_calls":${calls}}`],
          [[new Message.AssistantMessage({ parts: [remove!] }), results(remove!)], `{"role":"assistant","content":null,"tool_calls":${one}}`],
          [
            [new Message.AssistantMessage({ parts: [text, remove!, create!] }), results(remove!, create!)],
            `{"role":"assistant","content":"Working.","tool_calls":${calls}}`
          ],
          [[new Message.AssistantMessage({ parts: [refusal] })], `{"role":"assistant","content":"","refusal":"Not that."}`],
          [
            [new Message.AssistantMessage({ parts: [reasoning, refusal, text, remove!] }), results(remove!)],
            `{"role":"assistant","content":"Working.","refusal":"Not that.","reasoning_content":"think","tool_calls":${one}}`
          ],
          [
            [new Message.AssistantMessage({ parts: [reasoning, remove!] }), results(remove!)],
            `{"role":"assistant","content":null,"reasoning_content":"think","tool_calls":${one}}`
          ]
        ]
        for (const [messages, expected] of cases) {
          const body = yield* ChatCompletionsRequest.fromPrompt(Prompt.make([Prompt.userMessage("Go"), ...messages]), {
            model: "gpt-4o",
            replayReasoningContent: true
          })
          assert.strictEqual(JSON.stringify(body.messages[1]), expected)
        }
      }))

    it.effect("a call without its tool message is dropped with a warning naming it; the answered one stays", () =>
      Effect.gen(function*() {
        const response = yield* recorded()
        const [remove, create] = response.message.toolCalls
        const { value: body, warnings } = yield* warningsOf(ChatCompletionsRequest.fromPrompt(
          Prompt.make([
            Prompt.userMessage("Delete .env and create test.txt"),
            response.message,
            new Message.ToolMessage({ results: [result(create!, "created")] }),
            Prompt.userMessage("Thanks")
          ]),
          { model: "gpt-4o" }
        ))
        const sent = body.messages[1]!.tool_calls as ReadonlyArray<{ readonly id: string }>
        expect(sent.map((call) => call.id)).toStrictEqual([create!.callId])
        assert.strictEqual(warnings.length, 1)
        assert.include(warnings[0], "messages[1]")
        assert.include(warnings[0], "delete_file")
        assert.include(warnings[0], remove!.callId)
      }))

    it.effect("an assistant message left with nothing once its unanswered calls are dropped is not sent", () =>
      Effect.gen(function*() {
        const response = yield* recorded()
        const { value: body, warnings } = yield* warningsOf(ChatCompletionsRequest.fromPrompt(
          Prompt.make([Prompt.userMessage("Delete .env and create test.txt"), response.message, Prompt.userMessage("Never mind.")]),
          { model: "gpt-4o" }
        ))
        expect(body.messages.map((m) => m.role)).toStrictEqual(["user", "user"])
        assert.strictEqual(warnings.length, 2)
      }))

    it.effect("a tool message answering no call is refused with InvalidPrompt naming the message and call id", () =>
      Effect.gen(function*() {
        const prompt = Prompt.make([
          Prompt.userMessage("What is 7 + 12?"),
          new Message.ToolMessage({
            results: [new Part.ToolResultPart({ callId: "call_orphan_1", name: "calculator", output: "19" })]
          })
        ])
        const error = yield* Effect.flip(ChatCompletionsRequest.fromPrompt(prompt, { model: "m" }))
        assert.instanceOf(error, AiError.InvalidPrompt)
        assert.include(error.description, "messages[1]")
        assert.include(error.description, "call_orphan_1")
      }))

    it.effect("a tool message separated from its call by another message is refused, saying where the call is", () =>
      Effect.gen(function*() {
        const response = yield* recorded()
        const [remove, create] = response.message.toolCalls
        const prompt = Prompt.make([
          Prompt.userMessage("Delete .env and create test.txt"),
          response.message,
          new Message.ToolMessage({ results: [result(remove!, "deleted")] }),
          Prompt.userMessage("And the other one?"),
          new Message.ToolMessage({ results: [result(create!, "created")] })
        ])
        const error = yield* Effect.flip(ChatCompletionsRequest.fromPrompt(prompt, { model: "gpt-4o" }))
        assert.instanceOf(error, AiError.InvalidPrompt)
        assert.include(error.description, "messages[4]")
        assert.include(error.description, create!.callId)
        assert.include(error.description, "its call is in messages[1]")
      }))
  })
})

describe("one strict schema for both wires", () => {
  it.effect("a tool's parameters and a structured output format go out in the same strict form on Chat Completions and Responses", () =>
    Effect.gen(function*() {
      const Search = Tool.make("search", {
        description: "Search.",
        parameters: { query: Schema.String, limit: Schema.optional(Schema.Number) },
        success: Schema.Array(Schema.String)
      })
      const Answer = Schema.Struct({ city: Schema.String, country: Schema.optional(Schema.String) })
      const options = { model: "m", tools: [Tool.definition(Search)] }
      const chat = yield* ChatCompletionsRequest.fromPrompt(Prompt.user("x"), {
        ...options,
        responseFormat: ResponseFormat.json(Answer)
      })
      const responses = yield* ResponsesRequest.fromPrompt(Prompt.user("x"), {
        ...options,
        text: { format: ResponseFormat.json(Answer) }
      })
      const chatTool = (chat.tools as ReadonlyArray<{ readonly function: { readonly parameters: unknown; readonly strict: boolean } }>)[0]!
      const responsesTool = responses.tools![0] as { readonly parameters: unknown; readonly strict: boolean }
      expect(chatTool.function.parameters).toStrictEqual(responsesTool.parameters)
      expect(chatTool.function.parameters).toStrictEqual(StrictSchema.toStrict(Tool.parametersJsonSchema(Search)))
      assert.isTrue(chatTool.function.strict && responsesTool.strict)
      const chatFormat = (chat.response_format as { readonly json_schema: { readonly schema: unknown; readonly strict: boolean } })
        .json_schema
      const responsesFormat = (responses.text as { readonly format: { readonly schema: unknown; readonly strict: boolean } }).format
      expect(chatFormat.schema).toStrictEqual(responsesFormat.schema)
      expect(chatFormat.schema).toStrictEqual(StrictSchema.toStrict(StrictSchema.fromSchema(Answer)))
      assert.isTrue(chatFormat.strict && responsesFormat.strict)
    }))
})

describe("tools in namespaces", () => {
  it.effect("go out by name alone; two namespaces' tools of one name are an InvalidPrompt", () =>
    Effect.gen(function*() {
      const search = (namespace: string) =>
        new LanguageModel.ToolDefinition({
          name: "search",
          parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
          strict: true,
          namespace: { name: namespace, description: namespace }
        })
      const one = yield* ChatCompletionsRequest.fromPrompt(Prompt.user("x"), { model: "m", tools: [search("github"), weather] })
      expect((one.tools as ReadonlyArray<{ readonly function: { readonly name: string } }>).map((tool) => tool.function.name))
        .toStrictEqual(["search", "get_weather"])
      const error = yield* Effect.flip(
        ChatCompletionsRequest.fromPrompt(Prompt.user("x"), { model: "m", tools: [search("github"), search("gitlab")] })
      )
      assert.instanceOf(error, AiError.InvalidPrompt)
      assert.include(error.description, "two tools are named search")
    }))
})
