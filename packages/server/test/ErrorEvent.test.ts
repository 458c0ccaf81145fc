/**
 * A failed streamed response ends as OpenAI ends one (`vai-openai-error-event-response-failed.chunks.txt`):
 * an `error` event, then `response.failed`. Clients stop on the `error` event: the `openai` SDK's stream
 * throws `APIError`, so the OpenAI Agents SDK fails its run after one request instead of asking again until
 * its max turns (10 upstream calls).
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, MaxTurnsExceededError, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents"
import * as Effect from "effect/Effect"
import OpenAI, { APIError } from "openai"
import { z } from "zod"
import { type Handler, textChunk, toolChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, parseSse, post, readFixture, type WireJson as Json } from "./utils.js"

setTracingDisabled(true)

/** Writes a call's first arguments, then breaks its connection. */
const brokenMidCall: Handler = (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.write(
    toolChunk({ index: 0, id: "call_1", name: "get_weather", arguments: "{\"city\":\"Pa" }),
    () => setTimeout(() => response.socket?.destroy(), 50)
  )
}

/** Writes some text, then an in-stream error (vLLM / llama.cpp style). */
const erroredMidText: Handler = (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.end(`${textChunk("Hel")}data: {"error":{"message":"CUDA out of memory","type":"server_error","code":500}}\n\n`)
}

/** Ten times the same handler: what a client that asks again would meet. */
const tenTimes = (handler: Handler): ReadonlyArray<Handler> => Array.from({ length: 10 }, () => handler)

const recorded = readFixture("responses-sse/vai-openai-error-event-response-failed.chunks.txt")
  .split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Json)

const keysDeep = (value: Json): Json =>
  Object.fromEntries(
    Object.entries(value).map(([key, member]) =>
      [key, member !== null && typeof member === "object" && !Array.isArray(member) ? keysDeep(member as Json) : typeof member]
    )
  )

describe("a failed stream: an error event, then response.failed", () => {
  it.effect("as OpenAI's recorded failure: the error event right before response.failed, with the recording's members", () =>
    withScriptedGateway([brokenMidCall, erroredMidText], {}, (url) =>
      Effect.gen(function*() {
        const recordedTypes = recorded.map((event) => event.type)
        expect(recordedTypes.slice(-2)).toEqual(["error", "response.failed"])
        const recordedError = recorded[recorded.length - 2]!
        for (const message of ["connection broke off", "CUDA out of memory"]) {
          const frames = parseSse((yield* post(`${url}/responses`, { model: "m", input: "hi", stream: true })).text)
          const failed = checkLifecycle(frames)
          const errorEvent = frames[frames.length - 2]!.data
          expect(frames.map((frame) => frame.data.type).slice(-2)).toEqual(["error", "response.failed"])
          // every member of the recording's error event, of the same types (its `code` and `param` as JSON gives them)
          expect(keysDeep(errorEvent)).toMatchObject(keysDeep(recordedError))
          // and the API reference's ResponseErrorEvent members
          expect(errorEvent).toMatchObject({ type: "error", code: expect.any(String), message: expect.any(String), param: null })
          expect(errorEvent.message).toContain(message)
          expect(errorEvent.message).toBe((failed.error as Json).message)
        }
      })))

  it.effect("the openai SDK's stream throws APIError with the failure's message", () =>
    withScriptedGateway([brokenMidCall], {}, (url) =>
      Effect.promise(async () => {
        const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
        const stream = client.responses.stream({ model: "m", input: "hi" })
        const error = await stream.finalResponse().then(() => undefined, (error: unknown) => error)
        expect(error).toBeInstanceOf(APIError)
        expect((error as APIError).message).toContain("connection broke off")
      })))

  for (const [what, handler] of [["broke off mid call", brokenMidCall], ["sent an error mid text", erroredMidText]] as const) {
    it.effect(`@openai/agents fails its streamed run after one request when the upstream ${what}`, () =>
      withScriptedGateway(tenTimes(handler), {}, (url, received) =>
        Effect.promise(async () => {
          const agent = new Agent({
            name: "weather",
            model: new OpenAIResponsesModel(new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }), "scripted-model"),
            tools: [tool({
              name: "get_weather",
              description: "The weather of a city.",
              parameters: z.object({ city: z.string() }),
              execute: async () => "sunny"
            })]
          })
          const error = await (async () => {
            const result = await run(agent, "Weather in Paris?", { stream: true })
            await result.completed
            if (result.error !== null && result.error !== undefined) throw result.error
          })().then(() => undefined, (error: unknown) => error)
          expect(error).toBeDefined()
          expect(error).not.toBeInstanceOf(MaxTurnsExceededError)
          expect(received).toHaveLength(1)
        })))
  }
})
