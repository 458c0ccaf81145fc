/**
 * The gateway with a `ResponseStore`, over real HTTP on a loopback port, driven by the official `openai`
 * SDK, on a real SQLite file and a real PostgreSQL server: an AI SDK-style tool loop whose second request
 * replays reasoning and the function call by `item_reference`, a conversation chained by
 * `previous_response_id`, the stored responses' routes, tenants per bearer key, and a gateway restart.
 */
import { LanguageModel, Message, ModelResponse, Part, type Prompt, StreamPart, Usage } from "@effect-responses/core"
import { Gateway, ResponseStore, Upstream } from "@effect-responses/server"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import OpenAI from "openai"
import { backends, freshDatabase } from "./storeBackends.js"
import { captureLogs, loopback, post, serverUrl, waitForAccessLines } from "./utils.js"

const usage = new Usage.Usage({ inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, reasoningTokens: 2, totalTokens: 15 })

/** One upstream turn: its assistant parts (streamed as one complete part each, or answered whole). */
type Turn = ReadonlyArray<Part.AssistantPart>

/** A `LanguageModel` answering the i-th call with the i-th turn, recording every prompt it was given. */
const turnsModel = (turns: ReadonlyArray<Turn>) => {
  const prompts: Array<Prompt.Prompt> = []
  const next = (prompt: Prompt.Prompt) => {
    prompts.push(prompt)
    const turn = turns[prompts.length - 1]
    if (turn === undefined) throw new Error(`no upstream turn ${prompts.length}`)
    return turn
  }
  const finishReason = (turn: Turn): ModelResponse.FinishReason =>
    turn.some((part) => part.type === "tool_call") ? "tool_calls" : "stop"
  const service = LanguageModel.LanguageModel.of({
    generate: (prompt) =>
      Effect.sync(() => {
        const turn = next(prompt)
        return new ModelResponse.ModelResponse({
          id: `up_${prompts.length}`,
          model: "upstream-model",
          status: "completed",
          finishReason: finishReason(turn),
          usage,
          message: new Message.AssistantMessage({ parts: turn })
        })
      }),
    stream: (prompt) =>
      Stream.suspend(() => {
        const turn = next(prompt)
        const responseId = `up_${prompts.length}`
        return Stream.make(
          new StreamPart.ResponseStarted({ responseId, model: "upstream-model" }),
          ...turn.map((part, outputIndex) => new StreamPart.PartUpdate({ responseId, outputIndex, partial: false, part })),
          new StreamPart.ResponseFinished({ responseId, status: "completed", finishReason: finishReason(turn), usage })
        )
      })
  })
  return { prompts, layer: Layer.succeed(LanguageModel.LanguageModel, service) }
}

/** A prompt as short lines, to compare what the upstream was given. */
const lines = (prompt: Prompt.Prompt): ReadonlyArray<string> =>
  prompt.messages.map((message) => {
    switch (message.role) {
      case "system":
        return `system: ${message.content}`
      case "user":
        return `user: ${message.parts.map((part) => (part.type === "text" ? part.text : part.type)).join(" ")}`
      case "assistant":
        return `assistant: ${
          message.parts.map((part) =>
            part.type === "text"
              ? part.text
              : part.type === "reasoning"
              ? `(${part.summary.join(" ")})`
              : part.type === "tool_call"
              ? `${part.name}(${part.arguments})`
              : part.type
          ).join(" ")
        }`
      case "tool":
        return `tool: ${message.toolResults.map((result) => `${result.callId}=${result.output}`).join(" ")}`
    }
  })

const KEY_A = "key-tenant-a"
const KEY_B = "key-tenant-b"

/** The gateway with `store`, on a loopback port: the base URL for `body`. */
const withStoredGateway = <A, E>(
  store: Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError>,
  model: Layer.Layer<LanguageModel.LanguageModel>,
  body: (baseUrl: string) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    return yield* body(`${yield* serverUrl}/v1`)
  }).pipe(
    Effect.provide(
      Gateway.layer({ apiKey: Redacted.make(KEY_A), apiKeys: [Redacted.make(KEY_B)] }).pipe(
        Layer.provide(Upstream.fromLanguageModel({ models: ["m"] }).pipe(Layer.provide(model))),
        Layer.provide(store),
        Layer.provideMerge(loopback)
      )
    ),
    Effect.scoped
  )

const client = (baseURL: string, apiKey = KEY_A) => new OpenAI({ baseURL, apiKey, maxRetries: 0 })

const weatherTool = {
  type: "function" as const,
  name: "weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false
}

/** `promise`'s rejection (an SDK error), failing the test when it resolves. */
const rejection = (promise: Promise<unknown>) =>
  Effect.promise(() => promise.then(() => undefined, (error: unknown) => error as InstanceType<typeof OpenAI.APIError>))

describe("Gateway with a store: what it refuses", () => {
  it.scoped("conversation: 400 saying the store keeps responses, not conversations, and naming previous_response_id", () =>
    Effect.gen(function*() {
      const database = yield* freshDatabase(backends[0]!)
      const upstream = turnsModel([])
      const answer = yield* withStoredGateway(database.layer(), upstream.layer, (baseUrl) =>
        Effect.promise(() =>
          fetch(`${baseUrl}/responses`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${KEY_A}` },
            body: JSON.stringify({ model: "m", input: "hi", conversation: { id: "conv_1" } })
          }).then(async (r) => ({ status: r.status, body: await r.json() }))
        ))
      expect(answer).toEqual({
        status: 400,
        body: {
          error: {
            message:
              "This gateway does not support the Conversations API: 'conversation' cannot be used. Its store keeps responses, not conversations: continue a stored response with `previous_response_id`, or replay the earlier items in `input`.",
            type: "invalid_request_error",
            param: "conversation",
            code: "unsupported_parameter"
          }
        }
      })
      expect(upstream.prompts).toHaveLength(0)
    }))

  it.scoped("prompt, moderation: 400 unsupported_parameter that does not call the gateway stateless", () =>
    Effect.gen(function*() {
      const database = yield* freshDatabase(backends[0]!)
      const upstream = turnsModel([])
      const answers = yield* withStoredGateway(database.layer(), upstream.layer, (baseUrl) =>
        Effect.forEach([{ prompt: { id: "pmpt_1" } }, { moderation: { model: "omni-moderation-latest" } }], (extra) =>
          Effect.promise(() =>
            fetch(`${baseUrl}/responses`, {
              method: "POST",
              headers: { "content-type": "application/json", authorization: `Bearer ${KEY_A}` },
              body: JSON.stringify({ model: "m", input: "hi", ...extra })
            }).then(async (r) => ({ status: r.status, body: await r.json() }))
          )))
      expect(answers).toEqual([
        {
          status: 400,
          body: {
            error: {
              message: "This gateway does not support 'prompt': send the prompt's text as `instructions` and `input`.",
              type: "invalid_request_error",
              param: "prompt",
              code: "unsupported_parameter"
            }
          }
        },
        {
          status: 400,
          body: {
            error: {
              message: "This gateway does not support 'moderation': run moderation on the input and output yourself.",
              type: "invalid_request_error",
              param: "moderation",
              code: "unsupported_parameter"
            }
          }
        }
      ])
      expect(upstream.prompts).toHaveLength(0)
    }))
})

describe("Gateway with a store that fails to write", () => {
  it.scoped("the answer is kept, with store: false, streamed (response.completed) and not (200); an error log line; a chained request finds nothing", () =>
    Effect.gen(function*() {
      const database = yield* freshDatabase(backends[0]!)
      // a SQLite store whose writes fail (as a full disk or a read-only file would): reads work
      const failing = Layer.effect(
        ResponseStore.ResponseStore,
        Effect.map(ResponseStore.ResponseStore, (store) =>
          ResponseStore.ResponseStore.of({
            ...store,
            save: () => Effect.fail(new ResponseStore.ResponseStoreError({ description: "attempt to write a readonly database" }))
          }))
      ).pipe(Layer.provide(database.layer()))
      const upstream = turnsModel([
        [new Part.TextPart({ text: "Whole." })],
        [new Part.TextPart({ text: "Streamed." })]
      ])
      const captured = captureLogs()
      const answers = yield* withStoredGateway(failing, upstream.layer, (baseUrl) =>
        Effect.promise(async () => {
          const openai = client(baseUrl)
          const whole = await openai.responses.create({ model: "m", input: "hi" })
          const events: Array<{ type: string; response?: unknown }> = []
          for await (const event of await openai.responses.create({ model: "m", input: "hi", stream: true })) events.push(event)
          const chained = await openai.responses.create({ model: "m", input: "again", previous_response_id: whole.id }).then(
            () => undefined,
            (error: InstanceType<typeof OpenAI.APIError>) => error
          )
          await waitForAccessLines(captured, 3)
          return { whole, events, chained }
        })).pipe(Effect.provide(captured.layer))
      const { chained, events, whole } = answers
      expect([(whole as unknown as { store: boolean }).store, whole.status, whole.output_text]).toEqual([false, "completed", "Whole."])
      const completed = events.find((event) => event.type === "response.completed")?.response as { store: boolean; id: string; output: unknown }
      expect(completed.store).toBe(false)
      expect(completed.output).toMatchObject([{ type: "message", content: [{ text: "Streamed." }] }])
      // the events before it said what the request asked for
      expect((events.find((event) => event.type === "response.created")?.response as { store: boolean }).store).toBe(true)
      const errors = captured.logs.filter((line) => line.startsWith("ERROR"))
      expect(errors).toEqual([
        `ERROR: the response ${whole.id} was not stored (answered with store: false): The response store failed: attempt to write a readonly database`,
        `ERROR: the response ${completed.id} was not stored (answered with store: false): The response store failed: attempt to write a readonly database`
      ])
      // the access log says what the client got: 200, completed
      const access = captured.logs.filter((line) => line.includes("access: ")).find((line) => line.includes(`response=${whole.id}`))
      expect(access).toMatch(/ 200 .*outcome=completed$/)
      // consistent with store: false: not there to continue
      expect([chained?.status, chained?.code]).toEqual([400, "previous_response_not_found"])
    }))
})

for (const backend of backends) {
  describe(`Gateway with a store on a ${backend.name}`, () => {
    it.scoped("openai SDK: a tool loop by item_reference, a chain by previous_response_id, the stored routes, tenants, a restart", () =>
      Effect.gen(function*() {
        const database = yield* freshDatabase(backend)
        const upstream = turnsModel([
          // 1: reasoning and a function call
          [
            new Part.ReasoningPart({ summary: ["The user wants the weather."] }),
            new Part.ToolCallPart({ callId: "call_1", name: "weather", arguments: "{\"city\":\"Oslo\"}" })
          ],
          // 2: the answer, once the function call output came
          [new Part.TextPart({ text: "It is -3 °C in Oslo." })],
          // 3, 4: a chat continued by previous_response_id
          [new Part.TextPart({ text: "Tomorrow: -5 °C." })],
          [new Part.TextPart({ text: "You asked about Oslo." })],
          // 5: not stored
          [new Part.TextPart({ text: "Not kept." })]
        ])
        const ids = yield* withStoredGateway(database.layer(), upstream.layer, (baseUrl) =>
          Effect.promise(async () => {
            const openai = client(baseUrl)
            // turn 1 (not streamed): stored by default
            const first = await openai.responses.create({ model: "m", input: "Weather in Oslo?", tools: [weatherTool] })
            expect((first as unknown as { store: boolean }).store).toBe(true)
            const [reasoning, call] = first.output
            assert.strictEqual(reasoning?.type, "reasoning")
            assert.strictEqual(call?.type, "function_call")
            if (call?.type !== "function_call" || reasoning?.type !== "reasoning") throw new Error("unreachable")

            // turn 2 (streamed), as the AI SDK sends it: earlier output items by reference
            const stream = openai.responses.stream({
              model: "m",
              tools: [weatherTool],
              input: [
                { role: "user", content: "Weather in Oslo?" },
                { type: "item_reference", id: reasoning.id },
                { type: "item_reference", id: call.id! },
                { type: "function_call_output", call_id: call.call_id, output: "-3 °C" }
              ]
            })
            const second = await stream.finalResponse()
            expect(second.output_text).toBe("It is -3 °C in Oslo.")

            // turns 3 and 4: chained
            const third = await openai.responses.create({ model: "m", previous_response_id: second.id, input: "And tomorrow?" })
            expect(third.previous_response_id).toBe(second.id)
            const fourth = await openai.responses.create({
              model: "m",
              previous_response_id: third.id,
              input: [{ role: "user", content: "Which city was it?" }],
              stream: true
            })
            let fourthId = ""
            for await (const event of fourth) if (event.type === "response.completed") fourthId = event.response.id

            // the stored routes
            const retrieved = await openai.responses.retrieve(third.id)
            expect(retrieved).toEqual(JSON.parse(JSON.stringify(third)))
            const page = await openai.responses.inputItems.list(second.id, { limit: 3 })
            expect(page.data.map((item) => item.type)).toEqual(["function_call_output", "function_call", "reasoning"])
            expect(page.has_more).toBe(true)
            const all: Array<string> = []
            for await (const item of openai.responses.inputItems.list(second.id, { limit: 3, order: "asc" })) all.push(item.id!)
            expect(all).toHaveLength(4)
            expect(all[1]).toBe(reasoning.id)
            expect(all[2]).toBe(call.id)

            // store: false stores nothing
            const unstored = await openai.responses.create({ model: "m", input: "x", store: false })
            expect((unstored as unknown as { store: boolean }).store).toBe(false)
            expect(unstored.output_text).toBe("Not kept.")
            const missing = await openai.responses.retrieve(unstored.id).then(() => undefined, (error: InstanceType<typeof OpenAI.APIError>) => error)
            expect(missing?.status).toBe(404)
            return { first: first.id, second: second.id, third: third.id, fourth: fourthId, call: call.id! }
          })
        )

        // what the upstream was given
        expect(lines(upstream.prompts[1]!)).toEqual([
          "user: Weather in Oslo?",
          "assistant: (The user wants the weather.) weather({\"city\":\"Oslo\"})",
          "tool: call_1=-3 °C"
        ])
        expect(lines(upstream.prompts[2]!)).toEqual([
          ...lines(upstream.prompts[1]!),
          "assistant: It is -3 °C in Oslo.",
          "user: And tomorrow?"
        ])
        expect(lines(upstream.prompts[3]!)).toEqual([
          ...lines(upstream.prompts[2]!),
          "assistant: Tomorrow: -5 °C.",
          "user: Which city was it?"
        ])

        // a restart: a new gateway on the same database
        const after = turnsModel([[new Part.TextPart({ text: "Still Oslo." })]])
        yield* withStoredGateway(database.layer(), after.layer, (baseUrl) =>
          Effect.gen(function*() {
            const a = client(baseUrl)
            const b = client(baseUrl, KEY_B)
            const fourth = yield* Effect.promise(() => a.responses.retrieve(ids.fourth))
            expect(fourth.output_text).toBe("You asked about Oslo.")

            // another tenant sees nothing
            const hidden = yield* rejection(b.responses.retrieve(ids.fourth))
            expect(hidden?.status).toBe(404)
            expect(hidden?.message).toContain(ids.fourth)
            const foreignChain = yield* rejection(b.responses.create({ model: "m", previous_response_id: ids.fourth, input: "hi" }))
            expect(foreignChain?.status).toBe(400)
            expect(foreignChain?.code).toBe("previous_response_not_found")
            expect(foreignChain?.param).toBe("previous_response_id")
            expect(foreignChain?.message).toBe(`400 Previous response with id '${ids.fourth}' not found.`)
            const foreignItem = yield* rejection(
              b.responses.create({ model: "m", input: [{ type: "item_reference", id: ids.call }] })
            )
            expect(foreignItem?.status).toBe(404)
            expect(foreignItem?.message).toContain(`Item with id '${ids.call}' not found.`)
            expect(foreignItem?.param).toBe("input[0]")
            expect((yield* rejection(b.responses.delete(ids.fourth)))?.status).toBe(404)

            // a chain through a deleted response names the id the client sent, then the missing one
            const deleted = yield* Effect.promise(() => a.responses.delete(ids.third))
            expect(deleted).toEqual({ id: ids.third, object: "response", deleted: true })
            expect((yield* rejection(a.responses.retrieve(ids.third)))?.status).toBe(404)
            const broken = yield* rejection(a.responses.create({ model: "m", previous_response_id: ids.fourth, input: "?" }))
            expect(broken?.message).toBe(
              `400 Previous response with id '${ids.fourth}' cannot be continued: an earlier response of its conversation, '${ids.third}', is no longer stored (deleted, or past its retention), so the conversation cannot be rebuilt.`
            )
            expect(broken?.param).toBe("previous_response_id")
            expect(broken?.code).toBe("previous_response_not_found")

            // a decoder error in the client's own items names them as the client numbered them, not after the
            // stored items the gateway put before them
            const orphan = yield* rejection(a.responses.create({
              model: "m",
              previous_response_id: ids.second,
              input: [{ role: "user", content: "q" }, { type: "function_call_output", call_id: "orphan", output: "x" }]
            }))
            expect(orphan?.status).toBe(400)
            expect(orphan?.param).toBe("input[1]")
            expect(orphan?.message).toContain("No tool call found for function call output with call_id orphan")

            // the earlier turns are still there for the key that stored them
            const continued = yield* Effect.promise(() =>
              a.responses.create({ model: "m", previous_response_id: ids.second, input: "Again?" })
            )
            expect(continued.output_text).toBe("Still Oslo.")
            expect(lines(after.prompts[0]!)).toEqual([...lines(upstream.prompts[2]!).slice(0, -1), "user: Again?"])

            // background stays refused; a bad page size is named
            const background = yield* rejection(a.responses.create({ model: "m", input: "x", background: true }))
            expect(background?.status).toBe(400)
            expect(background?.param).toBe("background")
            const badLimit = yield* Effect.promise(() =>
              fetch(`${baseUrl}/responses/${ids.second}/input_items?limit=0`, { headers: { authorization: `Bearer ${KEY_A}` } })
                .then(async (response) => ({ status: response.status, body: await response.json() }))
            )
            expect(badLimit).toEqual({
              status: 400,
              body: { error: { message: expect.stringContaining("'limit'"), type: "invalid_request_error", param: "limit", code: "invalid_value" } }
            })
            const badAfter = yield* Effect.promise(() =>
              fetch(`${baseUrl}/responses/${ids.second}/input_items?after=msg_nope`, { headers: { authorization: `Bearer ${KEY_A}` } })
                .then(async (response) => ({ status: response.status, body: await response.json() }))
            )
            expect(badAfter).toEqual({
              status: 400,
              body: {
                error: {
                  message: `Invalid 'after': 'msg_nope' is no input item of response '${ids.second}'.`,
                  type: "invalid_request_error",
                  param: "after",
                  code: "invalid_value"
                }
              }
            })
          })
        )
      }))
  })
}

describe("Gateway without a store", () => {
  it.scoped("the stored responses' routes answer 404 saying nothing is kept; store: true is refused as before", () =>
    Effect.gen(function*() {
      const upstream = turnsModel([])
      yield* Effect.gen(function*() {
        const url = yield* serverUrl
        const get = yield* Effect.promise(() => fetch(`${url}/v1/responses/resp_1`).then((r) => r.json().then((body) => ({ status: r.status, body }))))
        expect(get).toEqual({
          status: 404,
          body: {
            error: {
              message: "Response with id 'resp_1' not found: this gateway keeps no responses (it runs without a response store).",
              type: "invalid_request_error",
              param: null,
              code: null
            }
          }
        })
        const stored = yield* post(`${url}/v1/responses`, { model: "m", input: "hi", store: true })
        expect(stored.status).toBe(400)
        expect(JSON.parse(stored.text).error.param).toBe("store")
        const conversation = yield* post(`${url}/v1/responses`, { model: "m", input: "hi", conversation: "conv_1" })
        expect([conversation.status, JSON.parse(conversation.text).error]).toEqual([400, {
          message: "This gateway does not support the Conversations API: 'conversation' cannot be used. Replay the earlier items in `input` instead.",
          type: "invalid_request_error",
          param: "conversation",
          code: "unsupported_parameter"
        }])
      }).pipe(
        Effect.provide(
          Gateway.layer({}).pipe(
            Layer.provide(Upstream.fromLanguageModel({ models: ["m"] }).pipe(Layer.provide(upstream.layer))),
            Layer.provideMerge(loopback)
          )
        )
      )
    }))
})
