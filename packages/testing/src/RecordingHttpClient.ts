/**
 * An `HttpClient` that wraps the real one and appends the body of every streamed answer (`content-type:
 * text/event-stream`, 2xx) to a capture file as it passes through, byte for byte: record once against the
 * live API, then run the same tests offline with `ReplayHttpClient` over the file.
 *
 * ```ts
 * // once, with OPENAI_API_KEY set
 * program.pipe(
 *   Effect.provide(ResponsesLanguageModel.layer({ model: "gpt-5.1" })),
 *   Effect.provide(ResponsesClient.layerConfig()),
 *   Effect.provide(RecordingHttpClient.layer("test/captures/weather.sse")),
 *   Effect.provide(NodeHttpClient.layerUndici),
 *   Effect.provide(NodeContext.layer)
 * )
 * ```
 *
 * Only response bodies are written: never a request, a header, the API key or an `Authorization` value.
 * The bodies of consecutive responses follow one another in the file (each starts at its
 * `response.created` event), which is the capture format `Capture.parse` reads. Answers that are not event
 * streams (non-streaming calls, errors) pass through unrecorded, with a warning in the log. The file is
 * created when missing and appended to otherwise; the body is streamed through, never held whole.
 *
 * @since 0.2.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/**
 * `client` with the bodies of its streamed answers appended to the file at `path` (see the module doc).
 * A failure to write the file fails the response body's stream with a `ResponseError` naming the path.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (
  client: HttpClient.HttpClient,
  path: string
): Effect.Effect<HttpClient.HttpClient, never, FileSystem.FileSystem> =>
  Effect.map(FileSystem.FileSystem, (fs) =>
    HttpClient.transformResponse(client, (effect) =>
      Effect.flatMap(effect, (response) => {
        const streamed = response.status >= 200 && response.status < 300 &&
          (response.headers["content-type"] ?? "").includes("text/event-stream")
        if (!streamed) {
          return Effect.as(
            Effect.logWarning(
              `recording: ${response.request.url} answered HTTP ${response.status} without an event stream; not recorded`
            ),
            response
          )
        }
        const writeError = (cause: unknown) =>
          new HttpClientError.ResponseError({
            request: response.request,
            response,
            reason: "Decode",
            description: `recording: cannot write ${path}`,
            cause
          })
        const tee = response.stream.pipe(
          Stream.tap((chunk) => Effect.mapError(fs.writeFile(path, chunk, { flag: "a" }), writeError))
        )
        return Effect.map(
          Stream.toReadableStreamEffect(tee),
          (body) =>
            HttpClientResponse.fromWeb(
              response.request,
              new Response(body, { status: response.status, headers: response.headers })
            )
        )
      })
    ))

/**
 * The `HttpClient` layer recording to `path`, over the `HttpClient` of the context (the real one).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  path: string
): Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient | FileSystem.FileSystem> =>
  Layer.effect(HttpClient.HttpClient, Effect.flatMap(HttpClient.HttpClient, (client) => make(client, path)))
