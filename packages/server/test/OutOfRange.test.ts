/**
 * `temperature` outside 0 to 2 and `top_p` outside 0 to 1 (the API reference's ranges) get the same 400,
 * worded as OpenAI words a decimal out of its range (before, `temperature: 5` and `top_p: -1` were forwarded).
 * `max_output_tokens` below 1 and `top_logprobs` below 0 get the gateway's 400 naming the parameter, worded
 * as OpenAI words an integer below its minimum, and never reach the upstream (before, `max_output_tokens:
 * -5` went upstream as `max_completion_tokens: -5`, and the upstream's 400 came back). 1 to 15, below the
 * API's own minimum of 16 but within what a Chat Completions backend may take, go upstream as they are.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { completion } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { post, type WireJson as Json } from "./utils.js"

/** A parameter, a value out of its range, and what OpenAI's 400 says of it (after `Invalid '<name>': `) and its code. */
const CASES: ReadonlyArray<readonly [string, number, string, string]> = [
  ["max_output_tokens", -5, "integer below minimum value. Expected a value >= 1", "integer_below_min_value"],
  ["max_output_tokens", 0, "integer below minimum value. Expected a value >= 1", "integer_below_min_value"],
  ["top_logprobs", -1, "integer below minimum value. Expected a value >= 0", "integer_below_min_value"],
  ["temperature", 5, "decimal above maximum value. Expected a value <= 2", "decimal_above_max_value"],
  ["temperature", -0.5, "decimal below minimum value. Expected a value >= 0", "decimal_below_min_value"],
  ["top_p", -1, "decimal below minimum value. Expected a value >= 0", "decimal_below_min_value"],
  ["top_p", 1.5, "decimal above maximum value. Expected a value <= 1", "decimal_above_max_value"]
]

describe("parameters out of their range", () => {
  for (const [name, value, range, code] of CASES) {
    for (const stream of [false, true]) {
      it.effect(`${name}: ${value}${stream ? ", streamed" : ""}: a 400 naming it, nothing sent upstream`, () =>
        withScriptedGateway([completion({ content: "hi" })], {}, (url, received) =>
          Effect.gen(function*() {
            const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", stream, [name]: value })
            expect(answer.status).toBe(400)
            expect(JSON.parse(answer.text)).toEqual({
              error: {
                message: `Invalid '${name}': ${range}, but got ${value} instead.`,
                type: "invalid_request_error",
                param: name,
                code
              }
            })
            expect(received).toHaveLength(0)
          })))
    }
  }

  it.effect("temperature 0 and 2, top_p 0 and 1 (the bounds) go upstream as they are", () =>
    withScriptedGateway([completion({ content: "hi" })], {}, (url, received) =>
      Effect.gen(function*() {
        for (const [temperature, top_p] of [[0, 0], [2, 1]]) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", temperature, top_p })
          expect(answer.status, answer.text).toBe(200)
        }
        expect(received.map((request) => [(request.body as Json).temperature, (request.body as Json).top_p])).toEqual([[0, 0], [2, 1]])
      })))

  it.effect("max_output_tokens: 1 and 15 go upstream as max_completion_tokens", () =>
    withScriptedGateway([completion({ content: "hi" }), completion({ content: "hi" })], {}, (url, received) =>
      Effect.gen(function*() {
        for (const value of [1, 15]) {
          const answer = yield* post(`${url}/responses`, { model: "m", input: "hi", max_output_tokens: value })
          expect(answer.status, answer.text).toBe(200)
          expect((JSON.parse(answer.text) as Json).max_output_tokens).toBe(value)
        }
        expect(received.map((request) => (request.body as Json).max_completion_tokens)).toEqual([1, 15])
      })))
})
