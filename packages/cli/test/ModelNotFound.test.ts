/**
 * `serve`'s warning for an upstream that does not know the request's model (internal `modelNotFound`): the
 * answers that say so, as the servers word them, read through `AiError.httpErrorFromResponse` as the
 * upstream client reads them; and answers that only mention a model, which get the path hint instead.
 */
import { AiError } from "@effect-responses/core"
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { modelNotFound } from "../src/internal/modelNotFound.js"
import { fixturePath } from "./fixtures.js"

const answer = (status: number, body: unknown) =>
  AiError.httpErrorFromResponse({ status, headers: {}, body: typeof body === "string" ? body : JSON.stringify(body) })

describe("modelNotFound", () => {
  it("the answers saying the model is unknown: OpenAI (recorded, and its Chat Completions wording), vLLM, Ollama, llama.cpp", () => {
    const cases: ReadonlyArray<readonly [string, AiError.HttpError]> = [
      // OpenAI's Responses API, recorded: a 400 with the code
      ["OpenAI Responses (recorded)", answer(400, readFileSync(fixturePath("responses-json/pai-error-400-model-not-found.json"), "utf8"))],
      [
        "OpenAI Chat Completions",
        answer(404, {
          error: { message: "The model `nope` does not exist or you do not have access to it.", type: "invalid_request_error", param: null, code: "model_not_found" }
        })
      ],
      // the wording alone, without the code: a server that copies OpenAI's message only
      ["OpenAI's wording without the code", answer(404, { error: { message: "The model `nope` does not exist or you do not have access to it." } })],
      ["vLLM", answer(404, { object: "error", message: "The model `nope` does not exist.", type: "NotFoundError", param: null, code: 404 })],
      [
        "vLLM, newer",
        answer(404, { error: { message: "The model `nope` does not exist.", type: "NotFoundError", param: "model", code: 404 } })
      ],
      [
        "Ollama's OpenAI compatibility",
        answer(404, { error: { message: "model \"nope\" not found, try pulling it first", type: "api_error", param: null, code: null } })
      ],
      // newer Ollama words its own error so, and its OpenAI compatibility passes the words on
      ["Ollama, newer", answer(404, { error: { message: "model 'nope' not found", type: "api_error", param: null, code: null } })],
      ["llama.cpp in router mode (a 400)", answer(400, { error: { code: 400, message: "model not found", type: "invalid_request_error" } })]
    ]
    for (const [name, error] of cases) expect([name, modelNotFound(error)]).toEqual([name, true])
  })

  it("answers that only mention a model, or a model answer that is no 400 or 404: not the model hint", () => {
    const cases: ReadonlyArray<readonly [string, AiError.HttpError]> = [
      // an --upstream ending in /v1/model: OpenAI's unknown-URL answer names the path
      ["a path under /v1/model", answer(404, { error: { message: "Invalid URL (POST /v1/model/chat/completions)", type: "invalid_request_error", param: null, code: null } })],
      ["a route list naming a model route", answer(404, "Cannot POST /chat/completions (routes: /api/model/load, /v1/models)")],
      ["a proxy's 404 naming the model it routes to", answer(404, { error: { message: "No deployment for model group 'gpt-x' at this path" } })],
      ["a 404 with param model and no such wording", answer(404, { error: { message: "Not Found", param: "model" } })],
      ["a plain 404", answer(404, "404 page not found")],
      ["a 400 about the model's abilities", answer(400, { error: { message: "model 'nope' does not support tools", type: "invalid_request_error" } })],
      ["a 500 naming a missing model", answer(500, { error: { message: "model not found" } })]
    ]
    for (const [name, error] of cases) expect([name, modelNotFound(error)]).toEqual([name, false])
  })
})
