/**
 * Gemini 3 through its OpenAI compatibility, behind the stateless gateway: its tool calls carry
 * `extra_content.google.thought_signature`, and it refuses a turn whose tool call lacks it (400, its error
 * body a JSON list). The gateway carries the `extra_content` to the client inside the call id and takes it
 * out again when the client sends the call back: the `openai` SDK and the Agents SDK run a two-turn tool
 * loop through it, streamed and not, and a call id the gateway did not make goes upstream unchanged.
 */
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { z } from "zod"
import { completion, finishChunks, type Handler, sse, textChunk } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { checkLifecycle, parseSse, post, type WireJson as Json } from "./utils.js"

setTracingDisabled(true)

const SIGNATURE = "CiQB0e2Kb8cfVQ8n1sQ8qGvZ7uYtBmW1tqk6Gx3m2Ew3kX0="
const EXTRA = { google: { thought_signature: SIGNATURE } }
const CALL_ID = "function-call-8723457193"
const MISSING = "Function call is missing a thought_signature in functionCall parts. This is required for tools to work " +
  "correctly, and missing thought_signature may lead to degraded model performance."

const TOOLS = [{ type: "function" as const, name: "get_time", description: "time", strict: false, parameters: { type: "object", properties: { tz: { type: "string" } } } }]

/**
 * Gemini as the tester captured it: turn 1 calls `get_time` (the call whole in one chunk, no `index`,
 * `finish_reason: "stop"`); a turn after the call is refused unless the assistant's tool call carries the
 * signature back.
 */
const gemini: Handler = (request, response, body) => {
  const messages = body.messages as ReadonlyArray<Json>
  if (messages.some((m) => m.role === "tool")) {
    const call = messages.find((m) => m.role === "assistant" && m.tool_calls)?.tool_calls?.[0]
    if (call?.extra_content?.google?.thought_signature !== SIGNATURE) {
      response.writeHead(400, { "content-type": "application/json" })
      response.end(JSON.stringify([{ error: { code: 400, message: MISSING, status: "INVALID_ARGUMENT" } }]))
      return
    }
    return (body.stream === true ? sse(textChunk("It is noon."), finishChunks()) : completion({ content: "It is noon." }))(
      request,
      response,
      body
    )
  }
  const call = { extra_content: EXTRA, function: { arguments: "{\"tz\":\"UTC\"}", name: "get_time" }, id: CALL_ID, type: "function" }
  if (body.stream !== true) return completion({ content: null, tool_calls: [call] })(request, response, body)
  const chunk = {
    id: "g1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gemini-3-pro-preview",
    choices: [{ index: 0, delta: { role: "assistant", tool_calls: [call] }, finish_reason: "stop" }]
  }
  sse(`data: ${JSON.stringify(chunk)}\n\n`, "data: [DONE]\n\n")(request, response, body)
}

const openai = (url: string) => new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })

/** The assistant message and the tool message of the last upstream request. */
const lastTurn = (received: ReadonlyArray<{ readonly body: Record<string, unknown> }>) => {
  const messages = received.at(-1)!.body.messages as ReadonlyArray<Json>
  return { assistant: messages.find((m) => m.role === "assistant"), tool: messages.find((m) => m.role === "tool") }
}

describe("Gemini thought signatures through the gateway", () => {
  for (const stream of [true, false]) {
    it.effect(`openai SDK, turn 1 ${stream ? "streamed" : "whole"}: turn 2 sends the signature back and is answered`, () =>
      withScriptedGateway([gemini], {}, (url, received) =>
        Effect.promise(async () => {
          const client = openai(url)
          const input: Array<OpenAI.Responses.ResponseInputItem> = [{ role: "user", content: "time?" }]
          const first = stream
            ? await client.responses.stream({ model: "gemini-3-pro-preview", input, tools: TOOLS }).finalResponse()
            : await client.responses.create({ model: "gemini-3-pro-preview", input, tools: TOOLS })
          const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall
          expect(call.call_id.startsWith(`${CALL_ID}__extra_content__`), call.call_id).toBe(true)
          const next = {
            model: "gemini-3-pro-preview",
            input: [
              ...input,
              ...first.output as Array<OpenAI.Responses.ResponseInputItem>,
              { type: "function_call_output" as const, call_id: call.call_id, output: "12:00" }
            ],
            tools: TOOLS
          }
          // turn 2 the other way: whole after a streamed turn 1, streamed after a whole one
          const text = stream
            ? (await client.responses.create(next)).output_text
            : (await client.responses.stream(next).finalResponse()).output_text
          expect(text).toBe("It is noon.")
          const { assistant, tool: result } = lastTurn(received)
          expect(assistant?.tool_calls).toEqual([{
            id: CALL_ID,
            type: "function",
            function: { name: "get_time", arguments: "{\"tz\":\"UTC\"}" },
            extra_content: EXTRA
          }])
          expect(result).toEqual({ role: "tool", tool_call_id: CALL_ID, content: "12:00" })
        })))
  }

  it.effect("the streamed call has one call id from output_item.added to response.completed", () =>
    withScriptedGateway([gemini], {}, (url) =>
      Effect.gen(function*() {
        const answer = yield* post(`${url}/responses`, { model: "gemini-3-pro-preview", input: "time?", tools: TOOLS, stream: true })
        const frames = parseSse(answer.text)
        const response = checkLifecycle(frames)
        const ids = frames.flatMap((frame) =>
          frame.data.type === "response.output_item.added" || frame.data.type === "response.output_item.done"
            ? [(frame.data as Json).item.call_id]
            : []
        )
        expect(ids).toHaveLength(2)
        expect(new Set([...ids, (response as Json).output[0].call_id]).size).toBe(1)
      })))

  it.effect("a client that sends the upstream's bare id back gets Gemini's message, read out of its list", () =>
    withScriptedGateway([gemini], {}, (url) =>
      Effect.promise(async () => {
        const client = openai(url)
        const first = await client.responses.create({ model: "gemini-3-pro-preview", input: "time?", tools: TOOLS })
        const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall
        const error = await client.responses.create({
          model: "gemini-3-pro-preview",
          input: [
            { role: "user", content: "time?" },
            { ...call, call_id: CALL_ID },
            { type: "function_call_output", call_id: CALL_ID, output: "12:00" }
          ],
          tools: TOOLS
        }).then(() => undefined, (e: unknown) => e)
        expect(error).toBeInstanceOf(OpenAI.APIError)
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400)
        expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain(MISSING)
      })))

  it.effect("call ids the gateway did not make go upstream unchanged, with no extra_content", () =>
    withScriptedGateway([(request, response, body) => completion({ content: "ok" })(request, response, body)], {}, (url, received) =>
      Effect.gen(function*() {
        const ids = ["call_abc", "toolu_01__thought__CiQB0e2K+/=", "x__extra_content__not base64", "y__extra_content__W10"]
        const answer = yield* post(`${url}/responses`, {
          model: "m",
          tools: TOOLS,
          input: [
            { role: "user", content: "time?" },
            ...ids.flatMap((id) => [
              { type: "function_call", call_id: id, name: "get_time", arguments: "{}" },
              { type: "function_call_output", call_id: id, output: "12:00" }
            ])
          ]
        })
        expect(answer.status, answer.text).toBe(200)
        const messages = received[0]!.body.messages as ReadonlyArray<Json>
        const calls = messages.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls)
        expect(calls.map((call: Json) => call.id)).toEqual(ids)
        expect(calls.some((call: Json) => "extra_content" in call)).toBe(false)
        expect(messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(ids)
      })))

  for (const stream of [false, true]) {
    it.effect(`Agents SDK (${stream ? "streamed" : "not streamed"}): the tool runs and the second turn is answered`, () =>
      withScriptedGateway([gemini], {}, (url, received) =>
        Effect.promise(async () => {
          const seen: Array<string> = []
          const agent = new Agent({
            name: "clock",
            instructions: "Tell the time.",
            model: new OpenAIResponsesModel(openai(url), "gemini-3-pro-preview"),
            tools: [tool({
              name: "get_time",
              description: "time",
              parameters: z.object({ tz: z.string() }),
              execute: async ({ tz }) => {
                seen.push(tz)
                return "12:00"
              }
            })]
          })
          let finalOutput: unknown
          if (stream) {
            const result = await run(agent, "time?", { stream: true })
            await result.completed
            finalOutput = result.finalOutput
          } else {
            finalOutput = (await run(agent, "time?")).finalOutput
          }
          expect(finalOutput).toBe("It is noon.")
          expect(seen).toEqual(["UTC"])
          expect(lastTurn(received).assistant?.tool_calls?.[0]?.extra_content).toEqual(EXTRA)
          expect(lastTurn(received).tool?.tool_call_id).toBe(CALL_ID)
        })))
  }
})
