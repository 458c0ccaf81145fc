/**
 * A custom tool call a `LanguageModel` upstream streams as `CustomToolCallPart` deltas (not the function
 * standing for the tool): the gateway writes it as one `custom_tool_call` item whose input is every delta
 * appended, as `MessageAggregator` folds them (a completing part after deltas brings only the rest, usually
 * `""`; a complete part without deltas brings it all), with `response.custom_tool_call_input.delta` events.
 * Before, each part replaced the item written at the end, so the client got the last part's input: `""`.
 * First on the recorded `pai-gpt5-custom-tool-call-input-deltas.sse` (gpt-5 calling `execute_sql`), decoded
 * by the built-in `ResponsesLanguageModel` as the upstream; then on hand-made parts.
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { LanguageModel, Part, Prompt, StreamPart, Usage } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { Upstream } from "@effect-responses/server"
import { describe, expect, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import OpenAI from "openai"
import { checkLifecycle, type Frame, parseSse, post, readFixture, scriptedModel, withGateway, type WireJson as Json } from "./utils.js"

const RECORDING = readFixture("responses-sse/pai-gpt5-custom-tool-call-input-deltas.sse")
/** The recording's call. */
const SQL = "SELECT * FROM users LIMIT 5;"
const executeSql = { type: "custom", name: "execute_sql", description: "Execute SQL query on the database." }

/** The built-in Responses model answering every call with the recording. */
const recordedModel = () =>
  ResponsesLanguageModel.layer({ model: "gpt-5" }).pipe(
    Layer.provide(ResponsesClient.layer({ retry: { times: 0 } })),
    Layer.provide(Layer.succeed(
      HttpClient.HttpClient,
      HttpClient.make((request) =>
        Effect.succeed(HttpClientResponse.fromWeb(request, new Response(RECORDING, { headers: { "content-type": "text/event-stream" } })))
      )
    ))
  )

const recordedUpstream = () => Upstream.fromLanguageModel({ models: ["m"] }).pipe(Layer.provide(recordedModel()))

const inputDeltas = (frames: ReadonlyArray<Frame>) =>
  frames.filter((frame) => frame.data.type === "response.custom_tool_call_input.delta").map((frame) => frame.data.delta as string)

describe("a custom tool call streamed in CustomToolCallPart deltas by a LanguageModel upstream", () => {
  it.effect("recorded (gpt-5, execute_sql): the upstream's parts are deltas and an empty completing part, as the aggregator reads them", () =>
    Effect.gen(function*() {
      const model = yield* LanguageModel.LanguageModel
      const parts = yield* Stream.runCollect(model.stream(Prompt.user("hi"))).pipe(
        Effect.map((all) => [...all].filter((element) => element.type === "part" && element.part.type === "custom_tool_call"))
      )
      expect(parts.map((element) => [(element as StreamPart.PartUpdate).partial, ((element as StreamPart.PartUpdate).part as Part.CustomToolCallPart).input]))
        .toEqual([...["SELECT", " *", " FROM", " users", " LIMIT", " ", "5", ";"].map((delta) => [true, delta]), [false, ""]])
      const responses = yield* MessageAggregator.aggregate(model.stream(Prompt.user("hi")))
      const call = responses[0]!.message.parts.find((part) => part.type === "custom_tool_call")
      expect(call).toMatchObject({ name: "execute_sql", input: SQL })
    }).pipe(Effect.provide(recordedModel())))

  it.effect("recorded (gpt-5, execute_sql) through the gateway: one custom_tool_call whose input deltas add up to the recorded input", () =>
    withGateway(recordedUpstream(), {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools: [executeSql] })
        const frames = parseSse(answer.text)
        const response = checkLifecycle(frames)
        expect(response.status).toBe("completed")
        const calls = (response.output as ReadonlyArray<Json>).filter((item) => item.type === "custom_tool_call")
        expect(calls).toMatchObject([{ type: "custom_tool_call", status: "completed", call_id: "call_2GHkSm2Jm0n7vgXsQEryfGmL", name: "execute_sql", input: SQL }])
        expect(calls[0]!.id).toMatch(/^ctc_/)
        // as the recording streams it: a delta per upstream delta
        expect(inputDeltas(frames)).toEqual(["SELECT", " *", " FROM", " users", " LIMIT", " ", "5", ";"])
        const done = frames.filter((frame) => frame.data.type === "response.custom_tool_call_input.done")
        expect(done.map((frame) => frame.data.input)).toEqual([SQL])
      })))

  it.effect("recorded, openai SDK responses.stream(): the output_item.done item and finalResponse() hold the recorded input", () =>
    withGateway(recordedUpstream(), {}, (url) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const stream = client.responses.stream({ model: "m", input: "hi", tools: [executeSql] as Array<OpenAI.Responses.Tool> })
        const deltas: Array<string> = []
        const done: Array<unknown> = []
        stream.on("response.custom_tool_call_input.delta", (event) => deltas.push(event.delta))
        stream.on("response.custom_tool_call_input.done", (event) => done.push(event.input))
        stream.on("response.output_item.done", (event) => done.push(event.item.type === "custom_tool_call" ? event.item.input : event.item.type))
        const final = await stream.finalResponse()
        expect(deltas.join("")).toBe(SQL)
        expect(done).toEqual(["reasoning", SQL, SQL])
        expect(final.output.filter((item) => item.type === "custom_tool_call")).toMatchObject([{ name: "execute_sql", input: SQL }])
      })))

  const id = "resp_up"
  const update = (partial: boolean, input: string, namespace?: string) =>
    new StreamPart.PartUpdate({
      responseId: id,
      outputIndex: 0,
      partial,
      part: new Part.CustomToolCallPart({ callId: "call_p", name: "lookup", input, ...(namespace === undefined ? {} : { namespace }) })
    })
  const finished = new StreamPart.ResponseFinished({ responseId: id, status: "completed", finishReason: "tool_calls", usage: Usage.empty })
  const handMade = [
    {
      what: "deltas, then a completing part bringing the rest",
      parts: [update(true, "id = "), update(true, "42"), update(false, " and active")],
      deltas: ["id = ", "42", " and active"],
      input: "id = 42 and active"
    },
    {
      what: "one complete part, no deltas",
      parts: [update(false, "id = 42")],
      deltas: ["id = 42"],
      input: "id = 42"
    },
    {
      what: "deltas naming the namespace crm, an empty completing part",
      parts: [update(true, "id = ", "crm"), update(true, "42", "crm"), update(false, "", "crm")],
      deltas: ["id = ", "42"],
      input: "id = 42",
      namespace: "crm"
    }
  ]

  for (const c of handMade) {
    it.effect(`hand-made, ${c.what}: the input the aggregator gives, in custom_tool_call_input deltas`, () =>
      Effect.gen(function*() {
        const [aggregated] = yield* MessageAggregator.aggregate(Stream.make(...c.parts, finished))
        expect(aggregated!.message.parts).toMatchObject([{ type: "custom_tool_call", input: c.input }])
        const upstream = Upstream.fromLanguageModel({ models: ["m"] }).pipe(
          Layer.provide(scriptedModel({ stream: [new StreamPart.ResponseStarted({ responseId: id, model: "m" }), ...c.parts, finished] }).layer)
        )
        const tools = c.namespace === undefined
          ? [{ type: "custom", name: "lookup" }]
          : [{ type: "namespace", name: "crm", description: "The CRM.", tools: [{ type: "custom", name: "lookup" }] }]
        yield* withGateway(upstream, {}, (url) =>
          Effect.gen(function*() {
            const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true, tools })
            const frames = parseSse(answer.text)
            const response = checkLifecycle(frames)
            const expected = { type: "custom_tool_call", status: "completed", call_id: "call_p", name: "lookup", input: c.input }
            const namespace = c.namespace === undefined ? {} : { namespace: c.namespace }
            expect(response.output).toEqual([{ ...expected, ...namespace, id: expect.stringMatching(/^ctc_/) }])
            expect(inputDeltas(frames)).toEqual(c.deltas)
          }))
      }))
  }
})
