/**
 * Upstream error bodies of other servers than OpenAI's, before the first byte: the gateway answers them in
 * OpenAI's shape with the inner message (not the body's JSON text) and, when the body names no type,
 * OpenAI's type for the status (a 429 is a rate limit, `requests` / `rate_limit_exceeded`, never the
 * client's `invalid_request_error`). The bodies are the ones newuser's REPORT.md (finding 5) met: a plain
 * text 429 with an HTTP-date `retry-after`, Ollama's `{"error":"…"}`, FastAPI's (vLLM's) 422 `{"detail":[…]}`
 * and `{"detail":"…"}`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import type { Handler } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import { post } from "./utils.js"

const answer = (status: number, type: string, body: string, headers: Record<string, string> = {}): Handler => (_request, response) => {
  response.writeHead(status, { "content-type": type, ...headers })
  response.end(body)
}

const CASES: ReadonlyArray<readonly [string, Handler, number, object]> = [
  [
    "a 429 with a plain-text body",
    answer(429, "text/plain", "Too Many Requests", { "retry-after": "3" }),
    429,
    { message: "Too Many Requests", type: "requests", param: null, code: "rate_limit_exceeded" }
  ],
  [
    "Ollama's {\"error\":\"…\"}",
    answer(400, "application/json", JSON.stringify({ error: "model requires more system memory (8.0 GiB) than is available (4.0 GiB)" })),
    400,
    { message: "model requires more system memory (8.0 GiB) than is available (4.0 GiB)", type: "invalid_request_error", param: null, code: null }
  ],
  [
    "FastAPI's (vLLM's) 422 {\"detail\":[…]}",
    answer(
      422,
      "application/json",
      JSON.stringify({
        detail: [
          { loc: ["body", "temperature"], msg: "Input should be less than or equal to 2", type: "less_than_equal" },
          { loc: ["body", "messages", 0], msg: "Field required", type: "missing" }
        ]
      })
    ),
    422,
    {
      message: "body.temperature: Input should be less than or equal to 2; body.messages.0: Field required",
      type: "invalid_request_error",
      param: null,
      code: null
    }
  ],
  [
    "FastAPI's {\"detail\":\"…\"}",
    answer(404, "application/json", JSON.stringify({ detail: "Not Found" })),
    404,
    { message: "Not Found", type: "invalid_request_error", param: null, code: null }
  ],
  [
    "Ollama's {\"error\":\"…\"} in a 500",
    answer(500, "application/json", JSON.stringify({ error: "llama runner process has terminated" })),
    502,
    { message: "the upstream failed: llama runner process has terminated", type: "server_error", param: null, code: "upstream_error" }
  ],
  [
    "an empty {\"error\":\"\"}: the body, not an empty message",
    answer(400, "application/json", JSON.stringify({ error: "" })),
    400,
    { message: "{\"error\":\"\"}", type: "invalid_request_error", param: null, code: null }
  ],
  [
    "a 429 of code insufficient_quota without a type: typed insufficient_quota, as OpenAI's own quota body",
    answer(429, "application/json", JSON.stringify({ error: { message: "You exceeded your current quota", code: "insufficient_quota" } })),
    429,
    { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" }
  ]
]

describe("upstream error bodies of other shapes", () => {
  for (const [name, handler, status, error] of CASES) {
    for (const stream of [false, true]) {
      it.effect(`${name}${stream ? ", streamed" : ""}: the inner message, OpenAI's type for the status`, () =>
        withScriptedGateway([handler], {}, (url) =>
          Effect.gen(function*() {
            const reply = yield* post(`${url}/responses`, { model: "m", input: "hi", stream })
            expect(reply.status).toBe(status)
            expect(JSON.parse(reply.text)).toEqual({ error })
          })))
    }
  }

  it.effect("the openai SDK: a RateLimitError of type requests for the plain-text 429, its wait kept", () =>
    withScriptedGateway([answer(429, "text/plain", "Too Many Requests", { "retry-after": "3" })], {}, (url) =>
      Effect.gen(function*() {
        const error = yield* Effect.promise(() =>
          new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 }).responses.create({ model: "m", input: "hi" }).catch((e) => e)
        )
        expect(error).toBeInstanceOf(OpenAI.RateLimitError)
        const rateLimit = error as InstanceType<typeof OpenAI.RateLimitError>
        expect([rateLimit.type, rateLimit.code, rateLimit.headers.get("retry-after")]).toEqual(["requests", "rate_limit_exceeded", "3"])
      })))
})
