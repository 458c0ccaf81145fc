/**
 * A custom (freeform) tool over Chat Completions, end to end over real HTTP: `ToolLoop` ->
 * `ChatCompletionsLanguageModel` -> `ChatCompletionsClient` -> undici -> a loopback `ChatReplayServer`.
 * Chat Completions has no custom tools: the model offers the tool as a function with one string parameter
 * `input`, and maps the call of that function back to a `CustomToolCallPart` whose `input` is the string.
 * The capture (`captures/custom-tool-as-function.sse`) is hand-made in the shape of the recorded gpt-4o-mini
 * tool call stream (`pai-chat-gpt4omini-tool-call-deltas-usage.sse`), with invented ids: the call of
 * `execute_sql` with its arguments in eleven deltas, then the answer.
 */
import { ChatCapture, ChatCompletionsClient, ChatCompletionsLanguageModel, ChatCompletionsRequest } from "@effect-responses/chat-completions"
import { LanguageModel, Part, Prompt } from "@effect-responses/core"
import { ChatReplayServer } from "@effect-responses/testing"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { loopbackSession } from "./loopback.js"

const SQL = "SELECT * FROM users LIMIT 5;"
const ANSWER = "The first five users are Ada, Alan, Grace, Edsger and Barbara."

const ExecuteSql = Tool.custom("execute_sql", {
  description: "Runs one SQL query against the users database.",
  format: { type: "grammar", syntax: "lark", definition: "start: \"SELECT\" /[^;]+/ \";\"" }
})
const Database = Toolkit.make(ExecuteSql)
const received: Array<string> = []
const DatabaseLive = Database.toLayer({
  execute_sql: (input) =>
    Effect.sync(() => {
      received.push(input)
      return "id,name\n1,Ada\n2,Alan\n3,Grace\n4,Edsger\n5,Barbara"
    })
})

const capture = Effect.runSync(
  ChatCapture.parse(
    readFileSync(new URL("./captures/custom-tool-as-function.sse", import.meta.url), "utf8"),
    "custom-tool-as-function.sse"
  )
)

const session = loopbackSession(capture)

const prompt = Prompt.user("Show me the first five users.")

describe("a custom tool over Chat Completions and the loopback chat replay server", () => {
  for (const mode of ["stream", "generate"] as const) {
    it.effect(`ToolLoop.${mode}: offered as a function with one string parameter, its call mapped back and answered`, () =>
      Effect.gen(function*() {
        received.length = 0
        let finalText: string
        let calls: ReadonlyArray<Part.AssistantPart>
        if (mode === "stream") {
          const events = Array.from(yield* Stream.runCollect(ToolLoop.stream(prompt, { toolkit: Database })))
          const last = events.at(-1)!
          finalText = last.type === "loop_finished" ? last.finalText : ""
          // the call's JSON argument deltas are held: one complete custom tool call part is emitted
          const updates = events.flatMap((event) => event.type === "part" ? [event] : [])
          const toolParts = updates.filter((update) => update.part.type !== "text")
          expect(toolParts.map((update) => [update.partial, update.part.type])).toStrictEqual([[false, "custom_tool_call"]])
          calls = toolParts.map((update) => update.part)
          const results = events.flatMap((event) => event.type === "tool_result" ? [event.result] : [])
          expect(results).toMatchObject([{ type: "tool_result", callId: "call_custom_sql_1", kind: "custom" }])
        } else {
          const result = yield* ToolLoop.generate(prompt, { toolkit: Database })
          finalText = result.text
          calls = result.steps[0]!.message.parts
        }
        assert.strictEqual(finalText, ANSWER)
        expect(calls).toStrictEqual([
          new Part.CustomToolCallPart({ callId: "call_custom_sql_1", name: "execute_sql", input: SQL, attributes: calls[0]!.attributes })
        ])
        // the handler got the raw text, not the JSON of the function arguments
        expect(received).toStrictEqual([SQL])

        const server = yield* ChatReplayServer.ChatReplayServer
        const [first, second] = yield* server.requests
        // the tool is offered as the function that stands for it
        const definition = Toolkit.make(ExecuteSql).definitions[0] as LanguageModel.CustomToolDefinition
        expect(first!.body.tools).toStrictEqual([ChatCompletionsRequest.customToolAsFunction(definition)])
        expect(first!.body.tools).toMatchObject([{
          type: "function",
          function: {
            name: "execute_sql",
            parameters: {
              type: "object",
              properties: { input: { type: "string" } },
              required: ["input"],
              additionalProperties: false
            }
          }
        }])
        // not strict: no `strict` field, which some servers refuse (vLLM 0.8-0.9)
        expect((first!.body.tools as ReadonlyArray<{ readonly function: object }>)[0]!.function).not.toHaveProperty("strict")
        assert.include(
          (first!.body.tools as ReadonlyArray<{ readonly function: { readonly description: string } }>)[0]!.function.description,
          "start: \"SELECT\""
        )
        // the call goes back as the function call it was, the answer as the tool message
        expect(second!.body.messages).toStrictEqual([
          { role: "user", content: "Show me the first five users." },
          {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_custom_sql_1",
              type: "function",
              function: { name: "execute_sql", arguments: JSON.stringify({ input: SQL }) }
            }]
          },
          { role: "tool", tool_call_id: "call_custom_sql_1", content: "id,name\n1,Ada\n2,Alan\n3,Grace\n4,Edsger\n5,Barbara" }
        ])
      }).pipe(Effect.provide(DatabaseLive), Effect.provide(session)))
  }
})

describe("the input of a custom tool call, read from the arguments of the function standing for it", () => {
  it("the input parameter; else the only string property, a JSON string, or the arguments as written", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      [JSON.stringify({ input: SQL }), SQL],
      [JSON.stringify({ input: SQL, note: "x" }), SQL],
      [JSON.stringify({ query: SQL }), SQL],
      [JSON.stringify(SQL), SQL],
      [SQL, SQL],
      ["{\"a\":\"1\",\"b\":\"2\"}", "{\"a\":\"1\",\"b\":\"2\"}"],
      ["{\"input\":5}", "{\"input\":5}"],
      ["[\"x\"]", "[\"x\"]"]
    ]
    for (const [args, input] of cases) expect(ChatCompletionsLanguageModel.customToolInput(args), args).toBe(input)
  })
})

/**
 * The capture's call cut by the output token limit: its first chunks, up to the `" *"` argument delta
 * (`{"input":"SELECT *`), then a `finish_reason: "length"` chunk and `[DONE]` (the capture's finish chunk with
 * `length` in place of `tool_calls`).
 */
const cutByLength = (() => {
  const blocks = readFileSync(new URL("./captures/custom-tool-as-function.sse", import.meta.url), "utf8")
    .split("\n\n").filter((block) => block.startsWith("data: {"))
  const finish = blocks.find((block) => block.includes("\"finish_reason\":\"tool_calls\""))!
  return [...blocks.slice(0, 6), finish.replace("\"finish_reason\":\"tool_calls\"", "\"finish_reason\":\"length\""), "data: [DONE]"]
    .join("\n\n") + "\n\n"
})()

const cutLayer = (body: string, contentType: string) =>
  ChatCompletionsLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
    Layer.provide(ChatCompletionsClient.layer({ retry: { times: 0 } })),
    Layer.provide(Layer.succeed(
      HttpClient.HttpClient,
      HttpClient.make((request) =>
        Effect.succeed(HttpClientResponse.fromWeb(request, new Response(body, { headers: { "content-type": contentType } })))
      )
    ))
  )

describe("a custom tool call cut by the output token limit (finish_reason length)", () => {
  it.effect("ToolLoop.stream runs no handler; the cut call's part carries the input that arrived (SELECT *), not the JSON envelope", () =>
    Effect.gen(function*() {
      expect(cutByLength).toContain("\"arguments\":\" *\"")
      received.length = 0
      const settled = Chunk.toReadonlyArray(
        yield* ToolLoop.stream(prompt, { toolkit: Database, maxSteps: 2 }).pipe(
          Stream.either,
          Stream.runCollect,
          Effect.provide(cutLayer(cutByLength, "text/event-stream"))
        )
      )
      expect(received).toEqual([])
      const events = settled.flatMap((element) => Either.isRight(element) ? [element.right] : [])
      expect(events.some((event) => event.type === "tool_result")).toBe(false)
      const calls = events.flatMap((event) => event.type === "part" && event.part.type === "custom_tool_call" ? [event.part] : [])
      expect(calls.map((call) => [call.name, call.input, call.attributes.status])).toEqual([["execute_sql", "SELECT *", "incomplete"]])
      const error = settled.find(Either.isLeft)?.left
      expect(error?._tag).toBe("ToolError")
      expect(error?.message).toContain("execute_sql (call_custom_sql_1)")
    }).pipe(Effect.provide(DatabaseLive)))

  it("a cut envelope: the input that arrived, escapes decoded, a cut escape left out; whole arguments as before", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["{\"input\":\"rm -rf /tm", "rm -rf /tm"],
      ["{ \"input\" : \"a\\nb\\\"c\\u00e9", "a\nb\"cé"],
      ["{\"input\":\"ab\\u00", "ab"],
      ["{\"input\":\"ab\\", "ab"],
      ["{\"input\":\"", ""],
      ["{\"inp", ""],
      ["{", ""]
    ]
    for (const [args, input] of cases) expect(ChatCompletionsLanguageModel.customToolInput(args, { cut: true }), args).toBe(input)
    // a cut call whose arguments are no envelope (the input written bare) keeps them as written
    expect(ChatCompletionsLanguageModel.customToolInput("rm -rf /tm", { cut: true })).toBe("rm -rf /tm")
    expect(ChatCompletionsLanguageModel.customToolInput(JSON.stringify({ input: SQL }), { cut: true })).toBe(SQL)
  })
})
