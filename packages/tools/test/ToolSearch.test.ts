/**
 * A tool search through the tool loop, over the Responses model: the recorded gpt-5.4 session of
 * `vai-openai-tool-search.chunks.txt` (vercel/ai, Apache-2.0: see `fixtures/SOURCES.md`), where OpenAI's
 * hosted tool search loads the deferred `get_weather` tool and the model calls it, followed by a hand-made
 * answer (`captures/tool-search-weather-answer.chunks.txt`, invented ids). The toolkit's deferred tools go
 * out as the recorded request sent them; the call, which comes back with `namespace: "get_weather"`, runs
 * the `get_weather` handler; the second request hands back the tool search items verbatim, the call with
 * its namespace, and its output.
 */
import { Message, Part, Prompt } from "@effect-responses/core"
import { BuiltInTool, Capture, ResponsesClient, ResponsesLanguageModel, ResponsesRequest } from "@effect-responses/responses"
import { ReplayHttpClient } from "@effect-responses/testing"
import { Tool, Toolkit, ToolLoop } from "@effect-responses/tools"
import * as HttpClient from "@effect/platform/HttpClient"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"

const RECORDING = new URL("../../../fixtures/responses-sse/vai-openai-tool-search.chunks.txt", import.meta.url)
const ANSWER = new URL("./captures/tool-search-weather-answer.chunks.txt", import.meta.url)

type Json = { readonly [key: string]: unknown }

const recordedEvents: ReadonlyArray<Json> = readFileSync(RECORDING, "utf8").trim().split("\n").map((line) => JSON.parse(line))
const recorded = recordedEvents.find((event) => event.type === "response.completed")!.response as {
  readonly output: ReadonlyArray<Json>
  readonly tools: ReadonlyArray<Json>
}

const capture = Effect.runSync(
  Capture.parse(`${readFileSync(RECORDING, "utf8").trimEnd()}\n${readFileSync(ANSWER, "utf8")}`, "tool search + answer")
)

const GetWeather = Tool.make("get_weather", {
  description: "Get the current weather at a specific location",
  parameters: {
    location: Schema.String.annotations({ description: "The city and state, e.g. San Francisco, CA" }),
    unit: Schema.Literal("celsius", "fahrenheit").annotations({ description: "Temperature unit" })
  },
  success: Schema.String,
  deferLoading: true
})
const SearchFiles = Tool.make("search_files", {
  description: "Search through files in the workspace",
  parameters: {
    query: Schema.String.annotations({ description: "The search query" }),
    file_types: Schema.Array(Schema.String).annotations({ description: "Filter by file types" })
  },
  success: Schema.Array(Schema.String),
  deferLoading: true
})
const SendEmail = Tool.make("send_email", {
  description: "Send an email to a recipient",
  parameters: {
    to: Schema.String.annotations({ description: "Recipient email address" }),
    subject: Schema.String.annotations({ description: "Email subject" }),
    body: Schema.String.annotations({ description: "Email body content" })
  },
  success: Schema.Boolean,
  deferLoading: true
})

const Assistant = Toolkit.make(GetWeather, SearchFiles, SendEmail)

const asked: Array<unknown> = []
const AssistantLive = Assistant.toLayer({
  get_weather: (params, context) =>
    Effect.sync(() => {
      asked.push({ params, context })
      return `64 ${params.unit === "fahrenheit" ? "°F" : "°C"}, fog`
    }),
  search_files: () => Effect.succeed([]),
  send_email: () => Effect.succeed(false)
})

const prompt = Prompt.user("What is the weather in San Francisco?")

/** The toolkit's handlers and the Responses model over a replaying client. */
const session = (client: HttpClient.HttpClient) =>
  Layer.merge(
    AssistantLive,
    ResponsesLanguageModel.layer({ model: "gpt-5.4", builtInTools: [BuiltInTool.toolSearch()] }).pipe(
      Layer.provide(ResponsesClient.layer()),
      Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
    )
  )

describe("tool search through the tool loop (recorded hosted tool search)", () => {
  for (const mode of ["generate", "stream"] as const) {
    it.effect(`ToolLoop.${mode}: the deferred tool runs, the search items and the call's namespace are handed back`, () =>
      Effect.gen(function*() {
        asked.length = 0
        const replay = yield* ReplayHttpClient.make(capture)
        const result = yield* (mode === "generate"
          ? Effect.orDie(Effect.map(ToolLoop.generate(prompt, { toolkit: Assistant }), (result) => result.text))
          : Effect.orDie(Effect.map(
            Stream.runLast(ToolLoop.stream(prompt, { toolkit: Assistant })),
            (last) => Option.isSome(last) && last.value.type === "loop_finished" ? last.value.finalText : ""
          ))).pipe(Effect.provide(session(replay.client)))
        const requests = replay.requests.map((request) => request.body as Json)
        assert.strictEqual(result, "It is 64°F and foggy in San Francisco.")
        assert.strictEqual(requests.length, 2)
        const [first, second] = requests

        // the deferred tools go out as the recorded request sent them (the API echoes its request's tools)
        const functions = (first!.tools as ReadonlyArray<Json>).filter((tool) => tool.type === "function")
        const recordedFunctions = recorded.tools.filter((tool) => tool.type === "function")
        expect(functions).toStrictEqual(recordedFunctions)
        expect((first!.tools as ReadonlyArray<Json>).filter((tool) => tool.type === "tool_search")).toHaveLength(1)

        // the handler of the tool in no namespace ran for the call with `namespace: "get_weather"`
        expect(asked).toStrictEqual([{
          params: { location: "San Francisco, CA", unit: "fahrenheit" },
          context: { callId: "call_pddfxhfOx4gY56zn4vIIEbFp", name: "get_weather", namespace: "get_weather" }
        }])

        // the second request: the question, the three output items as the server sent them, the output
        const input = second!.input as ReadonlyArray<Json>
        expect(input.slice(1, 4)).toStrictEqual(recorded.output)
        expect(input[4]).toStrictEqual({
          type: "function_call_output",
          call_id: "call_pddfxhfOx4gY56zn4vIIEbFp",
          output: JSON.stringify("64 °F, fog")
        })
        assert.strictEqual(input.length, 5)
      }))
  }
})

/**
 * A tool search the client executes (`BuiltInTool.toolSearch({ execution: "client" })`), on a hand-made
 * capture built from the API reference's item shapes (`captures/client-tool-search.chunks.txt`, invented
 * ids): the model asks the client to search (`tool_search_call` with a call id), the loop returns the call,
 * the caller answers with the `tool_search_output` of the tools it loads, and the model calls the loaded
 * namespaced tool.
 */
const Crm = Tool.namespace("crm", "The customer database.")
const FindCustomer = Tool.make("find_customer", {
  description: "Finds a customer by email.",
  parameters: { email: Schema.String },
  success: Schema.String,
  namespace: Crm,
  deferLoading: true
})
const CrmToolkit = Toolkit.make(FindCustomer, GetWeather)
const CrmLive = CrmToolkit.toLayer({
  "crm.find_customer": ({ email }) => Effect.succeed(`${email}: Ada Lovelace, customer since 1843`),
  get_weather: () => Effect.succeed("")
})
const clientCapture = Effect.runSync(
  Capture.parse(readFileSync(new URL("./captures/client-tool-search.chunks.txt", import.meta.url), "utf8"), "client tool search")
)

describe("a tool search the client executes, through the tool loop", () => {
  it.effect("the loop returns the search call; the caller's tool_search_output and the loaded tool's call are handed back", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayHttpClient.make(clientCapture)
      const layer = Layer.merge(
        CrmLive,
        ResponsesLanguageModel.layer({ model: "gpt-5.4", builtInTools: [BuiltInTool.toolSearch({ execution: "client" })] }).pipe(
          Layer.provide(ResponsesClient.layer()),
          Layer.provide(Layer.succeed(HttpClient.HttpClient, replay.client))
        )
      )
      const first = yield* ToolLoop.generate(Prompt.user("Who is ada@example.com?"), { toolkit: CrmToolkit }).pipe(
        Effect.provide(layer)
      )
      const [search] = first.response.message.clientCalls
      expect(search).toMatchObject({ type: "tool_search_call", callId: "call_client_search_1", execution: "client" })
      assert.strictEqual(replay.requests.length, 1)

      // the caller searches: the namespace the model asked for, as the request's tools spell it
      const loaded = ResponsesRequest.toolsToWire(CrmToolkit.definitions).filter((tool) => tool.name === "crm")
      const answered = Prompt.append(
        first.transcript,
        new Message.ToolMessage({
          results: [new Part.ToolSearchOutputPart({ callId: "call_client_search_1", execution: "client", tools: loaded })]
        })
      )
      const result = yield* ToolLoop.generate(answered, { toolkit: CrmToolkit }).pipe(Effect.provide(layer))
      assert.strictEqual(result.text, "Ada Lovelace is a customer since 1843.")

      const [, second, third] = replay.requests.map((request) => request.body as Json)
      const searchItem = {
        id: "tsc_client_search_1",
        type: "tool_search_call",
        status: "completed",
        arguments: { paths: ["crm"] },
        call_id: "call_client_search_1",
        execution: "client"
      }
      const searchOutput = { type: "tool_search_output", call_id: "call_client_search_1", execution: "client", tools: loaded }
      expect((second!.input as ReadonlyArray<Json>).slice(1)).toStrictEqual([searchItem, searchOutput])
      expect(loaded).toMatchObject([{
        type: "namespace",
        name: "crm",
        tools: [{ type: "function", name: "find_customer", defer_loading: true }]
      }])
      expect((third!.input as ReadonlyArray<Json>).slice(1)).toStrictEqual([
        searchItem,
        searchOutput,
        {
          id: "fc_client_search_1",
          type: "function_call",
          status: "completed",
          arguments: "{\"email\":\"ada@example.com\"}",
          call_id: "call_find_customer_1",
          name: "find_customer",
          namespace: "crm"
        },
        {
          type: "function_call_output",
          call_id: "call_find_customer_1",
          output: JSON.stringify("ada@example.com: Ada Lovelace, customer since 1843")
        }
      ])
    }))
})
