/**
 * The client path of the tool-loop tests on the recorded `pai-gpt4o-function-call-args-deltas.sse` (gpt-4o
 * calling `get_capital` for France): the recording's path, its `get_capital` tool, and `setup`, which gives a
 * `ResponsesLanguageModel` over an `HttpClient` answering every request with one body, and the handler's calls.
 */
import { Prompt } from "@effect-responses/core"
import { ResponsesClient, ResponsesLanguageModel } from "@effect-responses/responses"
import { Tool, Toolkit } from "@effect-responses/tools"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/** The recorded stream. */
export const RECORDING = new URL("../../../fixtures/responses-sse/pai-gpt4o-function-call-args-deltas.sse", import.meta.url)

/** The recording's tool. */
export const GetCapital = Tool.make("get_capital", {
  description: "The capital of a country.",
  parameters: { country: Schema.String },
  success: Schema.String
})

/** A toolkit of `get_capital` alone. */
export const Capitals = Toolkit.make(GetCapital)

/** The recording's question. */
export const prompt = Prompt.user("What is the capital of France?")

/**
 * The model answering every request with `body` (as `contentType`), the `get_capital` handler (answering
 * `Paris`), and `ran`: the countries the handler was called with, in order.
 */
export const setup = (body: string, contentType = "text/event-stream") => {
  const ran: Array<string> = []
  const client = HttpClient.make((request) =>
    Effect.succeed(HttpClientResponse.fromWeb(request, new Response(body, { headers: { "content-type": contentType } })))
  )
  const layer = Layer.mergeAll(
    ResponsesLanguageModel.layer({ model: "gpt-4o" }).pipe(
      Layer.provide(ResponsesClient.layer({ retry: { times: 0 } })),
      Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
    ),
    Capitals.toLayer({
      get_capital: ({ country }) =>
        Effect.sync(() => {
          ran.push(country)
          return "Paris"
        })
    })
  )
  return { ran, layer }
}
