/**
 * `Prompt` -> Chat Completions request body.
 */
import { ChatCompletionsRequest } from "@effect-responses/chat-completions"
import { AiError, LanguageModel, Message, Part, Prompt, ResponseFormat, StrictSchema } from "@effect-responses/core"
import { ResponsesRequest } from "@effect-responses/responses"
import { Tool } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const weather = new LanguageModel.ToolDefinition({
  name: "get_weather",
  description: "Weather of a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: true
})

describe("ChatCompletionsRequest.fromPrompt", () => {
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

  it.effect("replays reasoning as reasoning_content only when asked; a lone user text is a string", () =>
    Effect.gen(function*() {
      const prompt = Prompt.make([
        Prompt.userMessage("Hi"),
        new Message.AssistantMessage({
          parts: [
            new Part.ReasoningPart({ text: "think" }),
            new Part.ToolCallPart({ callId: "c", name: "f", arguments: "{}" })
          ]
        })
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
