/**
 * `@effect/ai`'s `LanguageModel` over ours, end to end: `@effect/ai` calls (`generateText` with a toolkit,
 * `streamText`, `generateObject`) through our Responses or Chat Completions layer and client, to an
 * `HttpClient` that answers with recorded fixtures (the four-step `gpt-5.1-codex-max` calculator session,
 * a web search with citations, a JSON-schema answer, Chat Completions tool call deltas, an HTTP 400).
 */
import { ChatCompletionsClient, ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { MessageAggregator } from "@effect-responses/aggregate"
import { LanguageModel as CoreLanguageModel, Prompt as CorePrompt } from "@effect-responses/core"
import { EffectAiLanguageModel, EffectAiPrompt, EffectAiResponse } from "@effect-responses/effect-ai"
import { Capture, ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { ReplayHttpClient } from "@effect-responses/testing"
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as AiResponse from "@effect/ai/Response"
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const fixturePath = (relative: string) => fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url))
const readFixture = (relative: string) => readFileSync(fixturePath(relative), "utf8")

const MULTISTEP = "responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt"
const WEB_SEARCH = "responses-sse/pai-gpt52-web-search-url-citations.sse"

const capture = (relative: string) => Capture.parse(readFixture(relative), relative)

/** An `HttpClient` answering request N with answer N (a body and its content type), keeping the JSON bodies. */
const scripted = (answers: ReadonlyArray<{ readonly body: string; readonly type: string; readonly status?: number }>) => {
  const requests: Array<unknown> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      requests.push(request.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(request.body.body)) : undefined)
      const answer = answers[requests.length - 1]!
      return HttpClientResponse.fromWeb(
        request,
        new Response(answer.body, { status: answer.status ?? 200, headers: { "content-type": answer.type } })
      )
    })
  )
  return { client, requests }
}

/** Both `LanguageModel`s (`@effect/ai`'s over ours) over the Responses layer and `client`. */
const overResponses = (client: HttpClient.HttpClient, model = "gpt-5.1-codex-max") =>
  Layer.provideMerge(
    EffectAiLanguageModel.layer,
    ResponsesLanguageModel.layer({ model }).pipe(
      Layer.provide(ResponsesClient.layer({ retry: { times: 0 } })),
      Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
    )
  )

const Calculator = Tool.make("calculator", {
  description: "Applies op to a and b",
  parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
  success: Schema.Number
})
const Calculators = Toolkit.make(Calculator)
const CalculatorHandlers = Calculators.toLayer({
  calculator: ({ a, b, op }) =>
    Effect.succeed(op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b)
})

const Capitals = Toolkit.make(
  Tool.make("get_capital", { parameters: { country: Schema.String }, success: Schema.String })
)

/** The input items of a recorded request body. */
const inputOf = (body: unknown): ReadonlyArray<{ readonly [key: string]: unknown }> =>
  (body as { readonly input: ReadonlyArray<{ readonly [key: string]: unknown }> }).input

describe("EffectAiLanguageModel over the Responses layer", () => {
  it.effect("runs the recorded calculator session with an @effect/ai toolkit, handing reasoning back with its encrypted content", () =>
    Effect.gen(function*() {
      const recorded = yield* capture(MULTISTEP)
      const replay = yield* ReplayHttpClient.make(recorded)
      let history = Prompt.make("What is (12 + 7) * 3 * 10?")
      let last: LanguageModel.GenerateTextResponse<Toolkit.Tools<typeof Calculators>> | undefined
      for (let step = 0; step < 4; step++) {
        last = yield* LanguageModel.generateText({ prompt: history, toolkit: Calculators }).pipe(
          Effect.provide(overResponses(replay.client))
        )
        history = Prompt.merge(history, EffectAiPrompt.fromResponseParts(last.content))
        if (last.finishReason !== "tool-calls") break
      }
      assert.strictEqual(last?.text, "The final result is **570**.")
      assert.strictEqual(last?.finishReason, "stop")
      assert.strictEqual(replay.requests.length, 4)
      const second = inputOf(replay.requests[1]!.body)
      const reasoning = second.find((item) => item.type === "reasoning")
      expect(reasoning).toMatchObject({ id: expect.stringMatching(/^rs_/), encrypted_content: expect.stringMatching(/^gAAAA/) })
      expect(second.find((item) => item.type === "function_call")).toMatchObject({
        id: expect.stringMatching(/^fc_/),
        call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        name: "calculator",
        arguments: "{\"a\":12,\"b\":7,\"op\":\"add\"}"
      })
      expect(second.find((item) => item.type === "function_call_output")).toMatchObject({
        call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        output: "19"
      })
      const outputs = inputOf(replay.requests[3]!.body).filter((item) => item.type === "function_call_output")
      assert.deepStrictEqual(outputs.map((item) => item.output), ["19", "57", "570"])
      assert.deepStrictEqual(replay.requests[0]!.body && (replay.requests[0]!.body as { tools: unknown }).tools, [{
        type: "function",
        name: "calculator",
        description: "Applies op to a and b",
        parameters: {
          type: "object",
          required: ["a", "b", "op"],
          properties: {
            a: { type: "number" },
            b: { type: "number" },
            op: { type: "string", enum: ["add", "subtract", "multiply", "divide"] }
          },
          additionalProperties: false
        },
        strict: true
      }])
    }).pipe(Effect.provide(CalculatorHandlers)))

  it.effect("@effect/ai's own Prompt.fromResponseParts drops the reasoning: the next request has none", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayHttpClient.make(yield* capture(MULTISTEP))
      const first = yield* LanguageModel.generateText({ prompt: "What is (12 + 7) * 3 * 10?", toolkit: Calculators }).pipe(
        Effect.provide(overResponses(replay.client))
      )
      const history = Prompt.merge(Prompt.make("What is (12 + 7) * 3 * 10?"), Prompt.fromResponseParts(first.content))
      yield* LanguageModel.generateText({ prompt: history, toolkit: Calculators }).pipe(
        Effect.provide(overResponses(replay.client))
      )
      const second = inputOf(replay.requests[1]!.body)
      assert.isUndefined(second.find((item) => item.type === "reasoning"))
      assert.isDefined(second.find((item) => item.type === "function_call"))
    }).pipe(Effect.provide(CalculatorHandlers)))

  it.effect("streamText gives the deltas and the tool call, and its parts map back to the message our stream aggregates to", () =>
    Effect.gen(function*() {
      const recorded = yield* capture(MULTISTEP)
      const streamed = yield* ReplayHttpClient.make(recorded)
      const parts = Array.from(
        yield* Stream.runCollect(LanguageModel.streamText({ prompt: "What is (12 + 7) * 3 * 10?", toolkit: Calculators })).pipe(
          Effect.provide(overResponses(streamed.client))
        )
      )
      const types = parts.map((part) => part.type)
      expect(types[0]).toBe("response-metadata")
      expect(types).toContain("tool-params-delta")
      expect(types.at(-1)).toBe("finish")
      const call = parts.find((part) => part.type === "tool-call")
      expect(call).toMatchObject({ id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", name: "calculator", params: { a: 12, b: 7, op: "add" } })
      const finish = parts.at(-1) as AiResponse.FinishPart
      assert.strictEqual(finish.reason, "tool-calls")

      const core = yield* MessageAggregator.aggregate(CoreLanguageModel.stream(CorePrompt.make("hi"))).pipe(
        Effect.provide(overResponses((yield* ReplayHttpClient.make(recorded)).client))
      )
      const fromStream = yield* EffectAiPrompt.toPrompt(EffectAiPrompt.fromResponseParts(parts as Array<AiResponse.AnyPart>))
      assert.deepStrictEqual(fromStream.messages[0], core[0]!.message)
      expect(fromStream.messages[1]).toMatchObject({
        role: "tool",
        results: [{ callId: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", name: "calculator", output: "19", isError: false }]
      })
    }).pipe(Effect.provide(CalculatorHandlers)))

  for (const fixture of [MULTISTEP, WEB_SEARCH]) {
    it.effect(`the parts of ${fixture.split("/")[1]} map back to the assistant message our model gave (lossless)`, () =>
      Effect.gen(function*() {
        const recorded = yield* capture(fixture)
        const core = yield* CoreLanguageModel.generate(CorePrompt.make("hi")).pipe(
          Effect.provide(overResponses((yield* ReplayHttpClient.make(recorded)).client))
        )
        const response = yield* LanguageModel.generateText({ prompt: "hi", toolkit: Calculators, disableToolCallResolution: true }).pipe(
          Effect.provide(overResponses((yield* ReplayHttpClient.make(recorded)).client))
        )
        const back = yield* EffectAiPrompt.toPrompt(EffectAiPrompt.fromResponseParts(response.content))
        assert.deepStrictEqual(back.messages, [core.message])
      }).pipe(Effect.provide(CalculatorHandlers)))
  }

  for (const fixture of [
    "responses-sse/vai-azure-gpt54-multi-summary-encrypted.chunks.txt",
    "responses-sse/vai-openai-message-phase.chunks.txt",
    WEB_SEARCH
  ]) {
    it.effect(`streamed, ${fixture.split("/")[1]} maps back to the message our stream aggregates to (lossless)`, () =>
      Effect.gen(function*() {
        const recorded = yield* capture(fixture)
        const core = yield* MessageAggregator.aggregate(CoreLanguageModel.stream(CorePrompt.make("hi"))).pipe(
          Effect.provide(overResponses((yield* ReplayHttpClient.make(recorded)).client))
        )
        const parts = Array.from(
          yield* Stream.runCollect(LanguageModel.streamText({ prompt: "hi" })).pipe(
            Effect.provide(overResponses((yield* ReplayHttpClient.make(recorded)).client))
          )
        )
        const back = yield* EffectAiPrompt.toPrompt(EffectAiPrompt.fromResponseParts(parts as Array<AiResponse.AnyPart>))
        assert.deepStrictEqual(back.messages, [core[0]!.message])
        // the reasoning deltas show the reasoning text of the whole part
        for (const part of core[0]!.message.parts) {
          if (part.type !== "reasoning") continue
          const shown = parts.filter((p) => p.type === "reasoning-delta").map((p) => p.delta).join("")
          assert.strictEqual(shown, EffectAiResponse.reasoningText(part))
        }
      }))
  }

  it.effect("a web search's citations become url sources and its web_search_call items ride along in the metadata", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayHttpClient.make(yield* capture(WEB_SEARCH))
      const response = yield* LanguageModel.generateText({ prompt: "news?" }).pipe(Effect.provide(overResponses(replay.client)))
      const sources = response.content.filter((part) => part.type === "source")
      assert.isAbove(sources.length, 0)
      for (const source of sources) {
        assert.strictEqual(source.sourceType, "url")
        assert.match(source.sourceType === "url" ? source.url.href : "", /^https?:/)
      }
      const text = response.content.find((part) => part.type === "text")!
      const carried = text.metadata[EffectAiResponse.METADATA_KEY] as EffectAiResponse.Carried
      expect(carried.preceding?.length).toBeGreaterThan(0)
      expect(carried.preceding?.[0]).toMatchObject({ type: "unknown", kind: "web_search_call" })
    }))

  it.effect("generateObject sends the schema as text.format and decodes the answer", () =>
    Effect.gen(function*() {
      const http = scripted([{ body: readFixture("responses-json/pai-gpt4o-json-schema-output.json"), type: "application/json" }])
      const City = Schema.Struct({ city: Schema.String, country: Schema.String })
      const response = yield* LanguageModel.generateObject({ prompt: "Where?", schema: City, objectName: "CityLocation" }).pipe(
        Effect.provide(overResponses(http.client, "gpt-4o"))
      )
      assert.deepStrictEqual(response.value, { city: "Mexico City", country: "Mexico" })
      expect(http.requests[0]).toMatchObject({
        text: {
          format: {
            type: "json_schema",
            name: "CityLocation",
            strict: true,
            schema: { type: "object", required: ["city", "country"], additionalProperties: false }
          }
        }
      })
      assert.notProperty(http.requests[0], "tools")
      assert.notProperty(http.requests[0], "tool_choice")
    }))

  it.effect("an HTTP error status becomes an HttpResponseError with the status and our message", () =>
    Effect.gen(function*() {
      const http = scripted([{
        body: readFixture("responses-json/pai-error-400-model-not-found.json"),
        type: "application/json",
        status: 400
      }])
      const error = yield* Effect.flip(
        LanguageModel.generateText({ prompt: "hi" }).pipe(Effect.provide(overResponses(http.client, "gpt-5.2-proo")))
      )
      assert.instanceOf(error, AiError.HttpResponseError)
      const failure = error as AiError.HttpResponseError
      assert.strictEqual(failure.response.status, 400)
      assert.include(failure.description, "gpt-5.2-proo")
      assert.strictEqual(failure.module, "EffectAiLanguageModel")
    }))

  it.effect("a provider-defined tool fails with MalformedInput before any request", () =>
    Effect.gen(function*() {
      const http = scripted([])
      const Search = Tool.providerDefined({
        id: "openai.web_search",
        toolkitName: "WebSearch",
        providerName: "web_search",
        args: {},
        success: Schema.Unknown
      })
      const error = yield* Effect.flip(
        LanguageModel.generateText({ prompt: "hi", toolkit: Toolkit.make(Search({})) }).pipe(
          Effect.provide(overResponses(http.client))
        )
      )
      assert.instanceOf(error, AiError.MalformedInput)
      assert.include(error.message, "openai.web_search")
      assert.strictEqual(http.requests.length, 0)
    }))
})

describe("EffectAiLanguageModel over the Chat Completions layer", () => {
  it.effect("streamText over recorded tool call deltas gives the deltas, the parsed call and the usage", () =>
    Effect.gen(function*() {
      const http = scripted([{ body: readFixture("chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse"), type: "text/event-stream" }])
      const layer = EffectAiLanguageModel.layer.pipe(
        Layer.provide(ChatCompletionsLanguageModel.layer({ model: "gpt-4o-mini" })),
        Layer.provide(ChatCompletionsClient.layer({ retry: { times: 0 } })),
        Layer.provide(Layer.succeed(HttpClient.HttpClient, http.client))
      )
      const parts = Array.from(
        yield* Stream.runCollect(
          LanguageModel.streamText({
            prompt: "The capital of France?",
            toolkit: Capitals,
            disableToolCallResolution: true
          })
        ).pipe(Effect.provide(layer), Effect.provide(Capitals.toLayer({ get_capital: () => Effect.succeed("Paris") })))
      )
      const deltas = parts.filter((part) => part.type === "tool-params-delta").map((part) => part.delta).join("")
      const call = parts.find((part) => part.type === "tool-call")
      expect(call).toMatchObject({ id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", name: "get_capital" })
      assert.deepStrictEqual(JSON.parse(deltas), call?.params)
      const finish = parts.at(-1) as AiResponse.FinishPart
      assert.strictEqual(finish.reason, "tool-calls")
      assert.isAbove(finish.usage.totalTokens ?? 0, 0)
      expect(http.requests[0]).toMatchObject({ model: "gpt-4o-mini", stream: true })
    }))
})

describe("EffectAiLanguageModel: a tool call's payload (Gemini's extra_content) both ways", () => {
  const EXTRA = { google: { thought_signature: "CiQB0e2Kb8cfVQ8n1sQ8qGvZ7uYtBmW1tqk6Gx3m2Ew3kX0=" } }
  const chunk = (id: string, delta: Record<string, unknown>) =>
    `data: ${
      JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created: 1,
        model: "gemini-3-pro-preview",
        choices: [{ index: 0, delta, finish_reason: "stop" }]
      })
    }\n\ndata: [DONE]\n\n`
  const toolTurn = chunk("g1", {
    role: "assistant",
    tool_calls: [{ extra_content: EXTRA, function: { arguments: "{\"country\":\"UK\"}", name: "get_capital" }, id: "fc-1", type: "function" }]
  })
  const completion = (id: string, message: Record<string, unknown>, finish: string) =>
    JSON.stringify({
      id,
      object: "chat.completion",
      created: 1,
      model: "gemini-3-pro-preview",
      choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }]
    })
  const toolCompletion = completion("g1", {
    content: null,
    tool_calls: [{ extra_content: EXTRA, function: { arguments: "{\"country\":\"UK\"}", name: "get_capital" }, id: "fc-1", type: "function" }]
  }, "tool_calls")
  const textCompletion = completion("g2", { content: "London." }, "stop")
  const overChat = (client: HttpClient.HttpClient) =>
    EffectAiLanguageModel.layer.pipe(
      Layer.provide(ChatCompletionsLanguageModel.layer({ model: "gemini-3-pro-preview" })),
      Layer.provide(ChatCompletionsClient.layer({ retry: { times: 0 } })),
      Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
    )
  const capitals = Capitals.toLayer({ get_capital: () => Effect.succeed("London") })

  for (const streamed of [false, true]) {
    it.effect(`${streamed ? "streamText" : "generateText"}: the call's extra_content rides in the part's metadata and goes back on the next turn`, () =>
      Effect.gen(function*() {
        const http = scripted([
          streamed ? { body: toolTurn, type: "text/event-stream" } : { body: toolCompletion, type: "application/json" },
          { body: textCompletion, type: "application/json" }
        ])
        const prompt = Prompt.make("The capital of the UK?")
        const content = streamed
          ? Array.from(yield* Stream.runCollect(LanguageModel.streamText({ prompt, toolkit: Capitals })).pipe(Effect.provide(overChat(http.client))))
          : (yield* LanguageModel.generateText({ prompt, toolkit: Capitals }).pipe(Effect.provide(overChat(http.client)))).content
        const call = (content as ReadonlyArray<AiResponse.AnyPart>).find((part) => part.type === "tool-call")
        // the payload, where @effect/ai keeps a provider's data: the part's metadata under METADATA_KEY
        expect(call?.metadata[EffectAiResponse.METADATA_KEY]).toMatchObject({
          part: { type: "tool_call", callId: "fc-1", payload: { provider: "chat-completions", kind: "extra_content", data: JSON.stringify(EXTRA) } }
        })
        const history = Prompt.merge(prompt, EffectAiPrompt.fromResponseParts(content as Array<AiResponse.AnyPart>))
        const next = yield* LanguageModel.generateText({ prompt: history, toolkit: Capitals }).pipe(Effect.provide(overChat(http.client)))
        assert.strictEqual(next.text, "London.")
        const messages = (http.requests[1] as { readonly messages: ReadonlyArray<{ readonly [key: string]: unknown }> }).messages
        expect(messages.find((message) => message.role === "assistant")).toMatchObject({
          tool_calls: [{ id: "fc-1", function: { name: "get_capital" }, extra_content: EXTRA }]
        })
        // @effect/ai's own Prompt.fromResponseParts keeps no metadata: the signature is lost, as reasoning is
        const http2 = scripted([{ body: textCompletion, type: "application/json" }])
        const bare = Prompt.merge(prompt, Prompt.fromResponseParts(content as Array<AiResponse.AnyPart>))
        yield* LanguageModel.generateText({ prompt: bare, toolkit: Capitals }).pipe(Effect.provide(overChat(http2.client)))
        const bareMessages = (http2.requests[0] as { readonly messages: ReadonlyArray<{ readonly [key: string]: unknown }> }).messages
        const bareCall = (bareMessages.find((message) => message.role === "assistant")?.tool_calls as ReadonlyArray<object>)[0]
        expect(bareCall).toMatchObject({ id: "fc-1" })
        expect(bareCall).not.toHaveProperty("extra_content")
      }).pipe(Effect.provide(capitals)))
  }
})
