/**
 * `Prompt` -> Responses request body.
 */
import { AiError, LanguageModel, Message, Part, Prompt } from "@effect-responses/core"
import { ResponsesOutput, ResponsesRequest } from "@effect-responses/responses"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import { MULTISTEP } from "./fixtures.js"
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
            annotations: [{ type: "url_citation", url: "https://example.com", start_index: 0, end_index: 4 }]
          }]
        },
        { role: "assistant", content: "No id." },
        { type: "message", role: "assistant", id: "msg_2", status: "completed", content: [{ type: "refusal", refusal: "No." }] },
        { type: "web_search_call", id: "ws_1" }
      ])
    }))

  it.effect("replaying a decoded response gives back the server's reasoning and function_call items", () =>
    Effect.gen(function*() {
      const completed = payloadsOf(MULTISTEP)
        .map((line) => JSON.parse(line) as { readonly type: string; readonly response: { readonly output: ReadonlyArray<unknown> } })
        .find((event) => event.type === "response.completed")!.response
      const response = yield* ResponsesOutput.fromResponse(completed)
      const body = yield* ResponsesRequest.fromPrompt(Prompt.make([response.message]), { model: "m" })
      expect(body.input).toStrictEqual(completed.output)
    }))

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
          format: { type: "json_schema", name: "answer", schema: Schema.Struct({ value: Schema.Number }), strict: true }
        },
        extraBody: { store: true, user: "u1" }
      })
      assert.isUndefined(body.include)
      expect(body.tool_choice).toStrictEqual({ type: "function", name: "calculator" })
      assert.strictEqual(body.temperature, 0.2)
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
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            required: ["value"],
            properties: { value: { type: "number" } },
            additionalProperties: false
          }
        }
      })
      assert.strictEqual(body.store, true)
      assert.strictEqual(body.user, "u1")
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
})
