/**
 * `Prompt` -> Responses request body.
 */
import { AiError, LanguageModel, Message, Part, Prompt, ResponseFormat } from "@effect-responses/core"
import { BuiltInTool, ResponsesOutput, ResponsesRequest } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { MULTISTEP, readFixture } from "./fixtures.js"
import { errorsAgainst } from "./spec.js"
import { payloadsOf } from "./utils.js"

const payload = (data: string, provider = "openai.responses") =>
  new Part.OpaquePayload({ provider, kind: "encrypted_content", data })

const calculator = new LanguageModel.ToolDefinition({
  name: "calculator",
  description: "Adds or multiplies two numbers.",
  parameters: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" }, op: { type: "string", enum: ["add", "multiply"] } },
    required: ["a", "b", "op"],
    additionalProperties: false
  },
  strict: true
})

/** Runs `effect` and records the messages it logs at Debug and above. */
const withLogs = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    const logger = Logger.make(({ message }) => {
      logs.push(String(message))
    })
    const result = yield* effect.pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    )
    return { result, logs }
  })

describe("ResponsesRequest", () => {
  it.effect("maps [system, user, assistant(reasoning, tool call), tool] to the exact input items", () =>
    Effect.gen(function*() {
      const prompt = Prompt.make([
        new Message.SystemMessage({ content: "You are a calculator." }),
        Prompt.userMessage("What is 12 + 7?"),
        new Message.AssistantMessage({
          parts: [
            new Part.ReasoningPart({
              summary: ["**Adding**", "Then answer."],
              payload: payload("gAAAA-enc"),
              attributes: { itemId: "rs_1" }
            }),
            new Part.ReasoningPart({ summary: ["foreign"], payload: payload("xyz", "anthropic.messages"), attributes: { itemId: "rs_2" } }),
            new Part.ReasoningPart({ summary: ["no id"], payload: payload("abc") }),
            new Part.ToolCallPart({
              callId: "call_1",
              name: "calculator",
              arguments: "",
              attributes: { itemId: "fc_1", status: "completed" }
            })
          ]
        }),
        new Message.ToolMessage({
          results: [new Part.ToolResultPart({ callId: "call_1", name: "calculator", output: "19" })]
        })
      ])
      const { result: body, logs } = yield* withLogs(
        ResponsesRequest.fromPrompt(prompt, { model: "gpt-5.1", tools: [calculator], toolChoice: "auto" })
      )
      expect(body).toStrictEqual({
        model: "gpt-5.1",
        instructions: "You are a calculator.",
        input: [
          { type: "message", role: "user", content: [{ type: "input_text", text: "What is 12 + 7?" }] },
          {
            type: "reasoning",
            id: "rs_1",
            encrypted_content: "gAAAA-enc",
            summary: [{ type: "summary_text", text: "**Adding**" }, { type: "summary_text", text: "Then answer." }]
          },
          { type: "function_call", call_id: "call_1", name: "calculator", arguments: "{}", id: "fc_1", status: "completed" },
          { type: "function_call_output", call_id: "call_1", output: "19" }
        ],
        store: false,
        include: ["reasoning.encrypted_content"],
        tools: [{
          type: "function",
          name: "calculator",
          description: "Adds or multiplies two numbers.",
          parameters: calculator.parameters,
          strict: true
        }],
        tool_choice: "auto"
      })
      assert.strictEqual(logs.length, 2)
      assert.include(logs[0]!, "provider anthropic.messages")
      assert.include(logs[1]!, "no item id")
    }))

  it.effect("later system messages become developer messages", () =>
    Effect.gen(function*() {
      const body = yield* ResponsesRequest.fromPrompt(
        Prompt.make([
          new Message.SystemMessage({ content: "first" }),
          Prompt.userMessage("hi"),
          new Message.SystemMessage({ content: "second" })
        ]),
        { model: "m" }
      )
      assert.strictEqual(body.instructions, "first")
      expect(body.input[1]).toStrictEqual({ type: "message", role: "developer", content: "second" })
    }))

  it.effect("user images and files become input_image / input_file", () =>
    Effect.gen(function*() {
      const body = yield* ResponsesRequest.fromPrompt(
        Prompt.make([
          new Message.UserMessage({
            parts: [
              new Part.TextPart({ text: "Look:" }),
              new Part.MediaPart({ mediaType: "image/png", data: "iVBORw0KGgo=", detail: "low" }),
              new Part.MediaPart({ mediaType: "image/jpeg", url: "https://example.com/a.jpg" }),
              new Part.MediaPart({ mediaType: "image/png", fileId: "file_img" }),
              new Part.MediaPart({ mediaType: "application/pdf", data: "JVBERi0=", filename: "report.pdf" }),
              new Part.MediaPart({ mediaType: "application/pdf", data: "JVBERi0=" }),
              new Part.MediaPart({ mediaType: "application/pdf", url: "https://example.com/a.pdf" }),
              new Part.MediaPart({ mediaType: "application/pdf", fileId: "file_pdf" })
            ]
          })
        ]),
        { model: "m" }
      )
      expect(body.input).toStrictEqual([{
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "Look:" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" },
          { type: "input_image", image_url: "https://example.com/a.jpg", detail: "auto" },
          { type: "input_image", file_id: "file_img", detail: "auto" },
          { type: "input_file", filename: "report.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
          { type: "input_file", filename: "file.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
          { type: "input_file", file_url: "https://example.com/a.pdf" },
          { type: "input_file", file_id: "file_pdf" }
        ]
      }])
    }))

  it.effect("assistant text: an output message with its item id, else a plain assistant message", () =>
    Effect.gen(function*() {
      const body = yield* ResponsesRequest.fromPrompt(
        Prompt.make([
          new Message.AssistantMessage({
            parts: [
              new Part.TextPart({
                text: "Working on it.",
                annotations: [{ type: "url_citation", url: "https://example.com", startIndex: 0, endIndex: 4 }],
                attributes: { itemId: "msg_1", status: "completed", phase: "commentary" }
              }),
              new Part.TextPart({ text: "No id." }),
              new Part.RefusalPart({ text: "No.", attributes: { itemId: "msg_2" } }),
              new Part.MediaPart({ mediaType: "image/png", data: "AAAA" }),
              new Part.UnknownPart({ provider: "openai.responses", kind: "web_search_call", item: { type: "web_search_call", id: "ws_1" } }),
              new Part.UnknownPart({ provider: "xai.responses", kind: "web_search_call", item: { type: "web_search_call", id: "ws_2" } })
            ]
          })
        ]),
        { model: "m" }
      )
      expect(body.input).toStrictEqual([
        {
          type: "message",
          role: "assistant",
          id: "msg_1",
          status: "completed",
          phase: "commentary",
          content: [{
            type: "output_text",
            text: "Working on it.",
            annotations: [{ type: "url_citation", url: "https://example.com", start_index: 0, end_index: 4 }],
            logprobs: []
          }]
        },
        { role: "assistant", content: "No id." },
        { type: "message", role: "assistant", id: "msg_2", status: "completed", content: [{ type: "refusal", refusal: "No." }] },
        { type: "web_search_call", id: "ws_1" }
      ])
    }))

  it.effect("a text and a refusal part of one output message (one item id): one message item holding both contents, not two items of one id", () =>
    Effect.gen(function*() {
      const body = yield* ResponsesRequest.fromPrompt(
        Prompt.make([
          new Message.AssistantMessage({
            parts: [
              new Part.TextPart({ text: "Ok.", attributes: { itemId: "msg_1" } }),
              new Part.RefusalPart({ text: "But no.", attributes: { itemId: "msg_1" } }),
              new Part.RefusalPart({ text: "No.", attributes: { itemId: "msg_2" } })
            ]
          })
        ]),
        { model: "m" }
      )
      expect(body.input).toStrictEqual([
        {
          type: "message",
          role: "assistant",
          id: "msg_1",
          status: "completed",
          content: [{ type: "output_text", text: "Ok.", annotations: [], logprobs: [] }, { type: "refusal", refusal: "But no." }]
        },
        { type: "message", role: "assistant", id: "msg_2", status: "completed", content: [{ type: "refusal", refusal: "No." }] }
      ])
    }))

  it.effect("replaying a decoded response gives back the server's reasoning and function_call items", () =>
    Effect.gen(function*() {
      const completed = payloadsOf(MULTISTEP)
        .map((line) => JSON.parse(line) as { readonly type: string; readonly response: { readonly output: ReadonlyArray<unknown> } })
        .find((event) => event.type === "response.completed")!.response
      const response = yield* ResponsesOutput.fromResponse(completed)
      const [call] = response.message.toolCalls
      const result = new Message.ToolMessage({
        results: [new Part.ToolResultPart({ callId: call!.callId, name: call!.name, output: "19" })]
      })
      const body = yield* ResponsesRequest.fromPrompt(Prompt.make([response.message, result]), { model: "m" })
      expect(body.input).toStrictEqual([
        ...completed.output,
        { type: "function_call_output", call_id: call!.callId, output: "19" }
      ])
    }))

  describe("pairing rules of a stateless input", () => {
    const completedOutput = () =>
      payloadsOf(MULTISTEP)
        .map((line) => JSON.parse(line) as { readonly type: string; readonly response: { readonly output: ReadonlyArray<unknown> } })
        .find((event) => event.type === "response.completed")!.response

    it.effect("a tool result that answers no call is refused with InvalidPrompt naming the item and call id", () =>
      Effect.gen(function*() {
        const prompt = Prompt.make([
          Prompt.userMessage("What is 7 + 12?"),
          new Message.ToolMessage({
            results: [new Part.ToolResultPart({ callId: "call_orphan_1", name: "calculator", output: "19" })]
          })
        ])
        const error = yield* Effect.flip(ResponsesRequest.fromPrompt(prompt, { model: "m" }))
        assert.instanceOf(error, AiError.InvalidPrompt)
        assert.include(error.description, "input[1]")
        assert.include(error.description, "call_orphan_1")
      }))

    it.effect("a call without its result is dropped with a warning, and the reasoning that produced it too", () =>
      Effect.gen(function*() {
        // the recorded answer: reasoning, then a function_call; replayed without running the tool
        const response = yield* ResponsesOutput.fromResponse(completedOutput())
        const warnings: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (LogLevel.greaterThanEqual(logLevel, LogLevel.Warning)) warnings.push(String(message))
        })
        const body = yield* ResponsesRequest.fromPrompt(
          Prompt.make([Prompt.userMessage("What is 7 + 12?"), response.message, Prompt.userMessage("Never mind.")]),
          { model: "m" }
        ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
        expect(body.input.map((item) => [item.type, item.role])).toStrictEqual([
          ["message", "user"],
          ["message", "user"]
        ])
        assert.strictEqual(warnings.length, 2)
        assert.include(warnings[0], "calculator")
        assert.include(warnings[1], "reasoning item")
      }))

    it.effect("reasoning followed by its output item, and calls with their results, are kept as they are", () =>
      Effect.gen(function*() {
        const completed = completedOutput()
        const response = yield* ResponsesOutput.fromResponse(completed)
        const [call] = response.message.toolCalls
        const body = yield* ResponsesRequest.fromPrompt(
          Prompt.make([
            response.message,
            new Message.ToolMessage({
              results: [new Part.ToolResultPart({ callId: call!.callId, name: call!.name, output: "19" })]
            })
          ]),
          { model: "m" }
        )
        expect(body.input.slice(0, completed.output.length)).toStrictEqual(completed.output)
      }))
  })

  it.effect("options: include can be turned off, named tool choice, sampling, reasoning, extra body last", () =>
    Effect.gen(function*() {
      const body = yield* ResponsesRequest.fromPrompt(Prompt.user("hi"), {
        model: "gpt-5.1",
        includeEncryptedReasoning: false,
        tools: [calculator],
        toolChoice: { tool: "calculator" },
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 256,
        reasoning: { effort: "low", summary: "auto" },
        parallelToolCalls: false,
        text: {
          verbosity: "low",
          format: { type: "json", name: "answer", schema: Schema.Struct({ value: Schema.Number }), strict: true }
        },
        extraBody: { user: "u1", temperature: 0.3 }
      })
      assert.isUndefined(body.include)
      expect(body.tool_choice).toStrictEqual({ type: "function", name: "calculator" })
      assert.strictEqual(body.temperature, 0.3) // extraBody last
      assert.strictEqual(body.top_p, 0.9)
      assert.strictEqual(body.max_output_tokens, 256)
      expect(body.reasoning).toStrictEqual({ effort: "low", summary: "auto" })
      assert.strictEqual(body.parallel_tool_calls, false)
      expect(body.text).toStrictEqual({
        verbosity: "low",
        format: {
          type: "json_schema",
          name: "answer",
          strict: true,
          schema: {
            type: "object",
            required: ["value"],
            properties: { value: { type: "number" } },
            additionalProperties: false
          }
        }
      })
      assert.strictEqual(body.store, false)
      assert.strictEqual(body.user, "u1")
    }))

  it.effect("extraBody cannot make the call stateful or replace the prompt", () =>
    Effect.gen(function*() {
      for (const key of ["store", "previous_response_id", "conversation", "input", "stream", "background"]) {
        const error = yield* Effect.flip(
          ResponsesRequest.fromPrompt(Prompt.user("hi"), { model: "m", extraBody: { [key]: true, user: "u1" } })
        )
        assert.strictEqual(error._tag, "InvalidPrompt")
        assert.include(error.message, `extraBody may not set ${key}`)
      }
    }))

  it.effect("invalid prompts fail with InvalidPrompt before any request", () =>
    Effect.gen(function*() {
      const unknownTool = yield* Effect.flip(
        ResponsesRequest.fromPrompt(Prompt.user("hi"), { model: "m", tools: [calculator], toolChoice: { tool: "search" } })
      )
      assert.instanceOf(unknownTool, AiError.InvalidPrompt)
      assert.include(unknownTool.description, "search")
      const noModel = yield* Effect.flip(ResponsesRequest.fromPrompt(Prompt.user("hi"), { model: "" }))
      assert.instanceOf(noModel, AiError.InvalidPrompt)
      const emptyMedia = yield* Effect.flip(
        ResponsesRequest.fromPrompt(
          Prompt.make([new Message.UserMessage({ parts: [new Part.MediaPart({ mediaType: "image/png" })] })]),
          { model: "m" }
        )
      )
      assert.include(emptyMedia.description, "neither data, url nor fileId")
    }))

  it.effect("allowed tools: function names and built-in tools; unknown names are InvalidPrompt", () =>
    Effect.gen(function*() {
      const web = BuiltInTool.webSearch()
      const deepwiki = BuiltInTool.mcp({ serverLabel: "deepwiki", serverUrl: "https://mcp.deepwiki.com/mcp" })
      const body = yield* ResponsesRequest.fromPrompt(Prompt.user("hi"), {
        model: "m",
        tools: [calculator],
        builtInTools: [web, deepwiki],
        toolChoice: { allowedTools: ["calculator", web, deepwiki], mode: "required" }
      })
      expect(body.tool_choice).toStrictEqual({
        type: "allowed_tools",
        mode: "required",
        tools: [{ type: "function", name: "calculator" }, { type: "web_search" }, { type: "mcp", server_label: "deepwiki" }]
      })
      expect(body.tools?.map((tool) => tool.type)).toStrictEqual(["function", "web_search", "mcp"])
      const unknown = yield* Effect.flip(
        ResponsesRequest.fromPrompt(Prompt.user("hi"), { model: "m", toolChoice: { allowedTools: ["search"] } })
      )
      assert.include(unknown.description, "search")
    }))

  it.effect("truncation: disabled is sent; auto is an InvalidPrompt (the client is stateless)", () =>
    Effect.gen(function*() {
      const body = yield* ResponsesRequest.fromPrompt(Prompt.user("hi"), { model: "m", truncation: "disabled" })
      assert.strictEqual(body.truncation, "disabled")
      const auto = yield* Effect.flip(ResponsesRequest.fromPrompt(Prompt.user("hi"), { model: "m", truncation: "auto" }))
      assert.instanceOf(auto, AiError.InvalidPrompt)
      assert.include(auto.message, "truncation \"auto\"")
    }))

  it.effect("built-in tools: each constructor gives its wire JSON, after the function tools", () =>
    Effect.gen(function*() {
      const body = yield* ResponsesRequest.fromPrompt(Prompt.user("hi"), {
        model: "m",
        tools: [calculator],
        builtInTools: [
          BuiltInTool.webSearch({
            searchContextSize: "low",
            allowedDomains: ["effect.website"],
            userLocation: { country: "FR", city: "Paris", timezone: "Europe/Paris" }
          }),
          BuiltInTool.fileSearch({
            vectorStoreIds: ["vs_1"],
            maxNumResults: 5,
            filters: { type: "and", filters: [{ type: "eq", key: "lang", value: "en" }, { type: "gte", key: "year", value: 2024 }] },
            scoreThreshold: 0.5
          }),
          BuiltInTool.codeInterpreter(),
          BuiltInTool.codeInterpreter({ container: { fileIds: ["file_1"], memoryLimit: "4g" } }),
          BuiltInTool.codeInterpreter({ container: "cntr_1" }),
          BuiltInTool.imageGeneration({ model: "gpt-image-1", size: "1024x1024", quality: "low", outputFormat: "jpeg", partialImages: 2 }),
          BuiltInTool.mcp({
            serverLabel: "deepwiki",
            serverUrl: "https://mcp.deepwiki.com/mcp",
            allowedTools: ["ask_question"],
            headers: { "X-Key": Redacted.make("mcp-secret") }
          }),
          BuiltInTool.mcp({ serverLabel: "drive", connectorId: "connector_googledrive", authorization: Redacted.make("oauth") }),
          BuiltInTool.raw({ type: "local_shell" })
        ]
      })
      expect(body.tools!.slice(1)).toStrictEqual([
        {
          type: "web_search",
          search_context_size: "low",
          filters: { allowed_domains: ["effect.website"] },
          user_location: { type: "approximate", country: "FR", city: "Paris", timezone: "Europe/Paris" }
        },
        {
          type: "file_search",
          vector_store_ids: ["vs_1"],
          max_num_results: 5,
          filters: { type: "and", filters: [{ type: "eq", key: "lang", value: "en" }, { type: "gte", key: "year", value: 2024 }] },
          ranking_options: { score_threshold: 0.5 }
        },
        { type: "code_interpreter", container: { type: "auto" } },
        { type: "code_interpreter", container: { type: "auto", file_ids: ["file_1"], memory_limit: "4g" } },
        { type: "code_interpreter", container: "cntr_1" },
        { type: "image_generation", model: "gpt-image-1", size: "1024x1024", quality: "low", output_format: "jpeg", partial_images: 2 },
        {
          type: "mcp",
          server_label: "deepwiki",
          server_url: "https://mcp.deepwiki.com/mcp",
          allowed_tools: ["ask_question"],
          headers: { "X-Key": "mcp-secret" },
          require_approval: "never"
        },
        { type: "mcp", server_label: "drive", connector_id: "connector_googledrive", authorization: "oauth", require_approval: "never" },
        { type: "local_shell" }
      ])
    }))

  it.effect("an MCP tool that needs approvals is sent with its require_approval (the calls come back as approval requests)", () =>
    Effect.gen(function*() {
      const always = yield* ResponsesRequest.fromPrompt(Prompt.user("hi"), {
        model: "m",
        builtInTools: [
          BuiltInTool.mcp({ serverLabel: "files", serverUrl: "https://example.com/mcp", requireApproval: "always" }),
          BuiltInTool.mcp({ serverLabel: "x", serverUrl: "https://example.com/mcp", requireApproval: { always: ["delete_file"] } })
        ]
      })
      expect(always.tools![0]).toMatchObject({ require_approval: "always" })
      expect(always.tools![1]).toMatchObject({ require_approval: { always: { tool_names: ["delete_file"] } } })
      const never = yield* ResponsesRequest.fromPrompt(Prompt.user("hi"), {
        model: "m",
        builtInTools: [
          BuiltInTool.mcp({ serverLabel: "files", serverUrl: "https://example.com/mcp", requireApproval: { never: ["read"] } }),
          BuiltInTool.toolSearch()
        ]
      })
      expect(never.tools![0]).toMatchObject({ require_approval: { never: { tool_names: ["read"] } } })
      expect(never.tools![1]).toStrictEqual({ type: "tool_search" })
    }))

  describe("structured output formats", () => {
    const format = (schema: Schema.Schema.All, strict?: boolean) =>
      Effect.map(
        ResponsesRequest.fromPrompt(Prompt.user("hi"), {
          model: "m",
          text: { format: { type: "json", name: "answer", schema, ...(strict === undefined ? {} : { strict }) } }
        }),
        (body) => (body.text as { readonly format: Record<string, unknown> }).format
      )

    it.effect("strict when every property is required and objects are closed, including classes ($ref inlined)", () =>
      Effect.gen(function*() {
        class City extends Schema.Class<City>("City")({ name: Schema.String, population: Schema.Number }) {}
        const Answer = Schema.Struct({ cities: Schema.Array(City), note: Schema.NullOr(Schema.String) })
        const answer = yield* format(Answer)
        assert.strictEqual(answer.strict, true)
        assert.isUndefined((answer.schema as Record<string, unknown>).$schema)
        const city = yield* format(City)
        assert.strictEqual(city.strict, true)
        expect(city.schema).toMatchObject({ type: "object", required: ["name", "population"], additionalProperties: false })
      }))

    it.effect("optional properties go out required and nullable; not strict for an open object or a keyword outside the subset; strict: true then fails", () =>
      Effect.gen(function*() {
        const optional = Schema.Struct({ a: Schema.String, b: Schema.optional(Schema.Number) })
        const strict = yield* format(optional)
        assert.strictEqual(strict.strict, true)
        expect(strict.schema).toMatchObject({
          required: ["a", "b"],
          properties: { b: { anyOf: [{ type: "number" }, { type: "null" }] } }
        })
        assert.strictEqual((yield* format(Schema.Struct({ a: Schema.NonEmptyString }))).strict, false)
        const record = Schema.Struct({ a: Schema.Record({ key: Schema.String, value: Schema.Number }) })
        assert.strictEqual((yield* format(record)).strict, false)
        assert.strictEqual((yield* format(optional, false)).strict, false)
        const error = yield* Effect.flip(format(record, true))
        assert.include(error.description, "$.a does not set additionalProperties: false")
        assert.strictEqual(
          ResponseFormat.strictIncompatibility({ type: "object", properties: {}, additionalProperties: false }),
          undefined
        )
        assert.include(ResponseFormat.strictIncompatibility({ type: "array", items: {} })!, "root")
      }))

    it.effect("a bad format name is an InvalidPrompt", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(ResponsesRequest.fromPrompt(Prompt.user("hi"), {
          model: "m",
          text: { format: { type: "json", name: "my answer", schema: Schema.Struct({}) } }
        }))
        assert.include(error.description, "\"my answer\"")
      }))
  })

  it.effect("the body of a prompt using every feature validates against CreateResponse (OpenAPI description)", () =>
    Effect.gen(function*() {
      const webSearchCall = (JSON.parse(readFixture("responses-json/pai-gpt5-web-search-url-citations.json")) as {
        readonly output: ReadonlyArray<{ readonly type: string }>
      }).output.find((item) => item.type === "web_search_call")!
      const prompt = Prompt.make([
        new Message.SystemMessage({ content: "You are terse." }),
        new Message.UserMessage({
          parts: [
            new Part.TextPart({ text: "Look at these." }),
            new Part.MediaPart({ mediaType: "image/png", data: "iVBORw0KGgo=", detail: "high" }),
            new Part.MediaPart({ mediaType: "image/jpeg", url: "https://example.com/a.jpg" }),
            new Part.MediaPart({ mediaType: "image/png", fileId: "file_img" }),
            new Part.MediaPart({ mediaType: "application/pdf", data: "JVBERi0=", filename: "report.pdf" }),
            new Part.MediaPart({ mediaType: "application/pdf", url: "https://example.com/a.pdf" }),
            new Part.MediaPart({ mediaType: "application/pdf", fileId: "file_pdf" })
          ]
        }),
        new Message.SystemMessage({ content: "Answer in French." }),
        new Message.AssistantMessage({
          parts: [
            new Part.ReasoningPart({ summary: ["**Looking**"], payload: payload("gAAAA-enc"), attributes: { itemId: "rs_1" } }),
            new Part.UnknownPart({ provider: "openai.responses", kind: "web_search_call", item: webSearchCall }),
            new Part.TextPart({
              text: "Voici.",
              annotations: [
                { type: "url_citation", url: "https://example.com", title: "Ex", startIndex: 0, endIndex: 5 },
                { type: "file_citation", fileId: "file_1", filename: "a.pdf", index: 2 },
                { type: "container_file_citation", containerId: "cntr_1", fileId: "cfile_1", filename: "x.csv", startIndex: 1, endIndex: 3 },
                { type: "file_path", fileId: "file_2", index: 0 }
              ],
              attributes: { itemId: "msg_1", status: "completed", phase: "commentary" }
            }),
            new Part.TextPart({ text: "Plain." }),
            new Part.RefusalPart({ text: "Non.", attributes: { itemId: "msg_2", status: "completed" } }),
            new Part.MediaPart({ mediaType: "image/png", data: "AAAA" }),
            new Part.ToolCallPart({ callId: "call_1", name: "calculator", arguments: "", attributes: { itemId: "fc_1", status: "completed" } })
          ]
        }),
        new Message.ToolMessage({ results: [new Part.ToolResultPart({ callId: "call_1", name: "calculator", output: "19" })] })
      ])
      const web = BuiltInTool.webSearch({ searchContextSize: "high", allowedDomains: ["example.com"], userLocation: { country: "FR" } })
      const body = yield* ResponsesRequest.fromPrompt(prompt, {
        model: "gpt-5.1",
        tools: [calculator],
        builtInTools: [
          web,
          BuiltInTool.fileSearch({ vectorStoreIds: ["vs_1"], maxNumResults: 3, filters: { type: "eq", key: "k", value: "v" } }),
          BuiltInTool.codeInterpreter({ container: { fileIds: ["file_1"] } }),
          BuiltInTool.imageGeneration({ model: "gpt-image-1", size: "1024x1024", quality: "high", outputFormat: "webp", partialImages: 1 }),
          BuiltInTool.mcp({ serverLabel: "deepwiki", serverUrl: "https://mcp.deepwiki.com/mcp", allowedTools: { readOnly: true }, headers: { "X-Key": "k" } }),
          BuiltInTool.raw({ type: "web_search_preview" })
        ],
        toolChoice: { allowedTools: ["calculator", web], mode: "auto" },
        temperature: 0.5,
        topP: 0.9,
        maxOutputTokens: 1024,
        reasoning: { effort: "low", summary: "auto" },
        text: { verbosity: "low", format: { type: "json", name: "answer", schema: Schema.Struct({ value: Schema.Number }) } },
        parallelToolCalls: true,
        maxToolCalls: 5,
        truncation: "disabled",
        serviceTier: "flex",
        promptCacheKey: "cache-1",
        safetyIdentifier: "user-hash-1",
        metadata: { purpose: "test" },
        extraBody: { top_logprobs: 2 }
      })
      expect(body.input.map((item) => `${String(item.type ?? "")}/${String(item.role ?? "")}`)).toStrictEqual([
        "message/user",
        "message/developer",
        "reasoning/",
        "web_search_call/",
        "message/assistant",
        "/assistant",
        "message/assistant",
        "function_call/",
        "function_call_output/"
      ])
      expect(errorsAgainst("CreateResponse", { ...body, stream: true })).toStrictEqual([])
      // The validator does reject what the API would.
      expect(errorsAgainst("CreateResponse", { ...body, max_output_tokens: 3 })).not.toStrictEqual([])
      expect(errorsAgainst("CreateResponse", { ...body, input: [{ type: "message", role: "user", content: [{ type: "input_txt" }] }] }))
        .not.toStrictEqual([])
    }))
})
