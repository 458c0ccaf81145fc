/**
 * The scaffolding of a loopback replay server, a stand-in for one OpenAI endpoint that answers each request
 * with the next recorded response: the routes (the endpoint with and without `/v1`, and `GET /health`),
 * the record of the request bodies, the 400 answers in OpenAI's error shape
 * `{"error":{"message","type","param","code"}}`, and the base URL. What a recorded response is, how a
 * request is checked against the ones before it and how an answer is encoded is each protocol's
 * (`ReplayServer` for Responses, `ChatReplayServer` for Chat Completions).
 *
 * It runs on any `HttpServer` (the application picks the platform, e.g.
 * `NodeHttpServer.layer(createServer, { port: 0 })`).
 *
 * @since 0.2.0
 */
import { isObject, type JsonObject } from "@effect-responses/wire/Json"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"

/**
 * What the replay server was asked: the 0-based index of the recorded response it was checked against
 * (a rejected request does not use one up) and its JSON body.
 *
 * @since 0.2.0
 * @category models
 */
export interface ReplayRequest {
  readonly index: number
  readonly body: JsonObject
}

/**
 * A running replay server: its base URL (`http://127.0.0.1:PORT/v1`, to use as `OPENAI_BASE_URL`) and the
 * request bodies received so far, in order.
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  readonly baseUrl: string
  readonly requests: Effect.Effect<ReadonlyArray<ReplayRequest>>
}

/**
 * Why a request is rejected, as OpenAI's error body says it: `message`, the `param` at fault and a `code`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Problem {
  readonly message: string
  readonly param: string
  readonly code: string
}

/**
 * What `make` needs from a protocol:
 *
 * - `path`: the endpoint below `/v1` (e.g. `/responses`); it is served at `/v1{path}` and at `{path}`;
 * - `source` and `responses`: the recording's name and its number of recorded responses, for the 400
 *   (`replay_exhausted`, naming `param`) of a request beyond the recording;
 * - `param`: the request field that holds the conversation (`input`, `messages`);
 * - `check`: the description of what is wrong with a request, or `undefined` to accept it;
 * - `answer`: the answer to an accepted request for recorded response `index` (SSE when `body.stream` is
 *   `true`, else JSON, as the protocol encodes them).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly path: `/${string}`
  readonly source: string
  readonly responses: number
  readonly param: string
  readonly check: (request: ReplayRequest) => Problem | undefined
  readonly answer: (request: ReplayRequest) => HttpServerResponse.HttpServerResponse
}

/**
 * A 400-style answer (`status`) in OpenAI's error shape, `type` `invalid_request_error`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const errorResponse = (status: number, problem: Problem): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    { error: { message: problem.message, type: "invalid_request_error", param: problem.param, code: problem.code } },
    { status }
  )

/**
 * Whether two tool call `arguments` values are the same: equal strings, strings holding the same JSON
 * (compared after parsing, so key spacing does not matter), or non-string values with the same JSON text.
 * An empty (or blank) string stands for `{}`: a model may send `""` for a call without arguments, and a
 * correct client sends it back as `"{}"` (the API rejects `""`), so either matches a recorded `""`.
 *
 * @since 0.2.0
 * @category utils
 */
export const argumentsEqual = (a: unknown, b: unknown): boolean => {
  if (typeof a === "string" && typeof b === "string") {
    if (a === b) return true
    const parse = (text: string): unknown => text.trim() === "" ? {} : JSON.parse(text)
    try {
      return JSON.stringify(parse(a)) === JSON.stringify(parse(b))
    } catch {
      return false
    }
  }
  return JSON.stringify(a) === JSON.stringify(b)
}

/**
 * Starts the replay server on the `HttpServer` in context, for the life of the scope. `POST /v1{path}` and
 * `POST {path}`: a body that is not a JSON object gets a 400 (`invalid_json`); otherwise the request is
 * recorded, and a request beyond the recording (`replay_exhausted`) or one `check` rejects gets a 400; an
 * accepted one uses up its recorded response and gets `answer`. `GET /health` answers `ok`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Service, never, HttpServer.HttpServer | Scope.Scope> =>
  Effect.gen(function*() {
    const received = yield* Ref.make<ReadonlyArray<ReplayRequest>>([])
    // the index of the recorded response the next request is answered with: a rejected request uses none
    const next = yield* Ref.make(0)
    const respond = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = yield* Effect.orElseSucceed(request.json, () => undefined)
      if (!isObject(body)) {
        return errorResponse(400, { message: "the body must be a JSON object", param: "body", code: "invalid_json" })
      }
      const index = yield* Ref.get(next)
      const replayRequest: ReplayRequest = { index, body }
      yield* Ref.update(received, (all) => [...all, replayRequest])
      if (index >= options.responses) {
        return errorResponse(400, {
          message: `the recording ${options.source} holds ${options.responses} ${
            options.responses === 1 ? "response" : "responses"
          }; request ${index + 1} has none`,
          param: options.param,
          code: "replay_exhausted"
        })
      }
      const problem = options.check(replayRequest)
      if (problem !== undefined) return errorResponse(400, problem)
      yield* Ref.set(next, index + 1)
      return options.answer(replayRequest)
    })
    const router = HttpRouter.empty.pipe(
      HttpRouter.post(`/v1${options.path}`, respond),
      HttpRouter.post(options.path, respond),
      HttpRouter.get("/health", HttpServerResponse.text("ok"))
    )
    yield* HttpServer.serveEffect(router)
    const server = yield* HttpServer.HttpServer
    const address = server.address
    const host = address._tag === "TcpAddress" ? `${address.hostname}:${address.port}` : "localhost"
    return { baseUrl: `http://${host}/v1`, requests: Ref.get(received) }
  })
