/**
 * `ScriptedServer`: request N answered by handler N of the script (the last one repeating), read by the
 * Chat Completions client as a real backend's answers, and each request recorded.
 */
import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { LanguageModel, type ModelResponse, type Part, Prompt } from "@effect-responses/core"
import { ScriptedServer } from "@effect-responses/testing"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

const model = (baseUrl: string) =>
  ChatCompletionsLanguageModel.layer({ model: "scripted-model" }).pipe(
    Layer.provide(ChatCompletionsClient.layer({ baseUrl, retry: { times: 0 } })),
    Layer.provide(NodeHttpClient.layerUndici)
  )

/** The parts of a response, each as `type:text` (a call's arguments), joined by spaces. */
const describeParts = (parts: ReadonlyArray<Part.AssistantPart>): string =>
  parts.map((part) =>
    `${part.type}:${part.type === "text" || part.type === "reasoning" ? part.text : part.type === "tool_call" ? part.arguments : ""}`
  ).join(" ")

const textOf = (response: ModelResponse.ModelResponse) => describeParts(response.message.parts)

/** The deltas of a streamed call, described as `describeParts` does. */
const streamedText = (prompt: Prompt.Prompt) =>
  Stream.runCollect(LanguageModel.stream(prompt)).pipe(
    Effect.map((elements) =>
      describeParts([...elements].flatMap((element) => element.type === "part" && element.partial ? [element.part] : []))
    )
  )

describe("ScriptedServer", () => {
  it.scoped("answers request N with handler N, the last one repeating; records each request", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make([
        ScriptedServer.sse(
          ScriptedServer.reasoningChunk("Think."),
          ScriptedServer.textChunk("Hel"),
          ScriptedServer.textChunk("lo"),
          ScriptedServer.finishChunks()
        ),
        ScriptedServer.sse(
          ScriptedServer.toolChunk({ id: "call_1", name: "lookup", arguments: "{\"id\":" }),
          ScriptedServer.toolChunk({ arguments: "42}" }),
          ScriptedServer.finishChunks("tool_calls")
        ),
        ScriptedServer.completion({ content: "whole" })
      ])
      expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
      const answers = yield* Effect.gen(function*() {
        const streamed = yield* streamedText(Prompt.user("one"))
        const called = yield* streamedText(Prompt.user("two"))
        const whole = yield* LanguageModel.generate(Prompt.user("three"))
        const again = yield* LanguageModel.generate(Prompt.user("four"))
        return [streamed, called, textOf(whole), textOf(again)]
      }).pipe(Effect.provide(model(server.baseUrl)))
      expect(answers).toEqual(["reasoning:Think. text:Hel text:lo", "tool_call:{\"id\": tool_call:42}", "text:whole", "text:whole"])
      assert.strictEqual(server.received.length, 4)
      expect(server.received.map((request) => (request.body.messages as ReadonlyArray<{ content: unknown }>)[0]!.content))
        .toEqual(["one", "two", "three", "four"])
      expect(JSON.parse(server.received[0]!.text)).toEqual(server.received[0]!.body)
      yield* Effect.promise(() => Promise.all(server.received.map((request) => request.closed)))
    }))

  it.scoped("an empty script or a handler that throws: a 500 saying so, and the server keeps serving", () =>
    Effect.gen(function*() {
      // the breaker's case: make([]) crashed the process on its first request (handler is not a function)
      const post = (baseUrl: string) =>
        Effect.promise(() =>
          fetch(`${baseUrl}/chat/completions`, { method: "POST", body: "{}" }).then(async (answer) => ({
            status: answer.status,
            body: await answer.json() as { error: { message: string; type: string } }
          }))
        )
      const empty = yield* ScriptedServer.make([])
      assert.deepStrictEqual(yield* post(empty.baseUrl), {
        status: 500,
        body: {
          error: {
            message: "ScriptedServer: request 1 has no handler: the server was made with an empty script",
            type: "scripted_server_error"
          }
        }
      })
      assert.strictEqual((yield* post(empty.baseUrl)).body.error.message, "ScriptedServer: request 2 has no handler: the server was made with an empty script")
      assert.strictEqual(empty.received.length, 2)
      const throwing = yield* ScriptedServer.make([
        () => {
          throw new Error("boom")
        },
        ScriptedServer.completion({ content: "after" })
      ])
      const first = yield* post(throwing.baseUrl)
      assert.strictEqual(first.status, 500)
      assert.strictEqual(first.body.error.message, "ScriptedServer: handler 1 of the script threw answering request 1: boom")
      // the next request gets the next handler
      const second = yield* Effect.promise(() =>
        fetch(`${throwing.baseUrl}/chat/completions`, { method: "POST", body: "{}" }).then((answer) =>
          answer.json() as Promise<{ choices: Array<{ message: { content: string } }> }>
        )
      )
      assert.strictEqual(second.choices[0]!.message.content, "after")
    }))

  it.scoped("a body that is no JSON object is recorded as {} beside its text; a handler may drop the connection", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make([(request) => request.socket.destroy()], { keepAliveTimeout: 60_000 })
      const results = yield* Effect.promise(() =>
        Promise.all(["not json", "[1,2]", ""].map((body) =>
          fetch(`${server.baseUrl}/chat/completions`, { method: "POST", body }).then(() => "answered", () => "dropped")
        ))
      )
      expect(results).toEqual(["dropped", "dropped", "dropped"])
      expect(server.received.map((request) => [request.text, request.body]).sort()).toEqual([["", {}], ["[1,2]", {}], ["not json", {}]])
    }))
})
