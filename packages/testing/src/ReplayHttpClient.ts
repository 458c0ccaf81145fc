/**
 * An `HttpClient` that answers from a capture of consecutive Responses streams, for running an app's tests
 * offline against what the live API once said: request N gets the N-th recorded response, as the SSE body
 * of its events when the request body says `stream: true`, else as the JSON Response object of its terminal
 * event (`response.completed`, `response.incomplete`, `response.failed`). Every request body is kept, so the
 * test can check what the app sent back (the reasoning items with their encrypted content, the function
 * call outputs).
 *
 * The capture format is the one `Capture.parse` (`@effect-responses/responses`) reads and
 * `RecordingHttpClient` writes: the response bodies one after the other, raw SSE (`event:` / `data:`
 * frames) or one JSON event per line; each response starts at its `response.created` event.
 *
 * ```ts
 * const replay = yield* ReplayHttpClient.make(yield* Capture.load("test/captures/weather.sse"))
 * yield* program.pipe(
 *   Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1" })),
 *   Effect.provide(ResponsesClient.layer()),
 *   Effect.provideService(HttpClient.HttpClient, replay.client)
 * )
 * assert.strictEqual(replay.requests.length, 2)
 * ```
 *
 * A request past the end of the capture is answered HTTP 400 with an OpenAI-shaped error body naming the
 * request (so the app fails with an `HttpError` that is not retried); so is a request whose body is not JSON.
 *
 * @since 0.2.0
 */
import { Capture } from "@effect-responses/responses"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * One request the replaying client received: its URL, headers and JSON body (`undefined` when the body
 * was not JSON).
 *
 * @since 0.2.0
 * @category models
 */
export interface ReplayedRequest {
  readonly url: string
  readonly headers: { readonly [name: string]: string }
  readonly body: unknown
}

/**
 * A replaying client: the `HttpClient` and the requests it has received so far, in order.
 *
 * @since 0.2.0
 * @category models
 */
export interface ReplayHttpClient {
  readonly client: HttpClient.HttpClient
  readonly requests: ReadonlyArray<ReplayedRequest>
}

const bodyJson = (request: HttpClientRequest.HttpClientRequest): unknown => {
  if (request.body._tag !== "Uint8Array") return undefined
  try {
    return JSON.parse(new TextDecoder().decode(request.body.body))
  } catch {
    return undefined
  }
}

const answer = (request: HttpClientRequest.HttpClientRequest, status: number, body: string, contentType: string) =>
  HttpClientResponse.fromWeb(request, new Response(body, { status, headers: { "content-type": contentType } }))

const refusal = (request: HttpClientRequest.HttpClientRequest, message: string) =>
  answer(
    request,
    400,
    JSON.stringify({ error: { message, type: "invalid_request_error", code: "replay_mismatch", param: null } }),
    "application/json"
  )

/**
 * A replaying client over the responses of `capture` (see the module doc).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (capture: Capture.Capture): Effect.Effect<ReplayHttpClient> =>
  Effect.sync(() => {
    const requests: Array<ReplayedRequest> = []
    const client = HttpClient.make((request) =>
      Effect.sync(() => {
        const body = bodyJson(request)
        requests.push({ url: request.url, headers: request.headers, body })
        const n = requests.length
        if (body === undefined) return refusal(request, `replay: request ${n} has no JSON body`)
        const recorded = capture.responses[n - 1]
        if (recorded === undefined) {
          return refusal(
            request,
            `replay: request ${n} has no recorded response (${capture.source} holds ${capture.responses.length})`
          )
        }
        if ((body as { stream?: unknown }).stream === true) {
          return answer(request, 200, Capture.toSse(recorded), "text/event-stream")
        }
        const terminal = Capture.terminalEvent(recorded)
        if (terminal === undefined) {
          return refusal(request, `replay: recorded response ${n} (${recorded.id}) has no terminal event to answer whole`)
        }
        return answer(request, 200, JSON.stringify(terminal.json.response), "application/json")
      })
    )
    return { client, requests }
  })

/**
 * The `HttpClient` layer of a replaying client over `capture`. Use `make` to read the received requests.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (capture: Capture.Capture): Layer.Layer<HttpClient.HttpClient> =>
  Layer.effect(HttpClient.HttpClient, Effect.map(make(capture), (replay) => replay.client))
