/**
 * The body of an `HttpClientResponse` as a stream of byte chunks, read with one channel straight from the web
 * `ReadableStream` when the response is the platform's wrapper of a web `Response` (what `FetchHttpClient`
 * and `HttpClientResponse.fromWeb` make).
 *
 * That wrapper's `stream` is `Stream.fromReadableStream` of the same body: a scope, an `acquireRelease`,
 * `repeatEffectOption` over `tryPromise` and an awaited `reader.cancel()` even after the last chunk. On the
 * client path that stage alone cost about 0.35 ms of CPU per call against 0.15 ms for the loop below, and
 * 240 of the call's 1,710 fiber steps (packages/bench/RESULTS.md, "client path" of 2026-12-02). Any other
 * response (Node's undici client, a wrapper of one's own) is read through its `stream`.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

let webResponseClass: object | undefined

/**
 * The response the `HttpClient`'s interruptible wrapper holds (its `original`), else `response` itself: the
 * object whose class and `source` say how its body can be read.
 */
export const unwrapped = (response: HttpClientResponse.HttpClientResponse): HttpClientResponse.HttpClientResponse => {
  const original: unknown = (response as { readonly original?: unknown }).original
  return original === undefined ? response : original as HttpClientResponse.HttpClientResponse
}

/**
 * The web `Response` behind `response` when it is the platform's own wrapper of one, unchanged: its class
 * (no own `stream` in its place) and a web `Response` in its `source` field. Else `undefined`.
 */
export const webSource = (response: HttpClientResponse.HttpClientResponse): Response | undefined => {
  webResponseClass ??= Object.getPrototypeOf(
    HttpClientResponse.fromWeb(HttpClientRequest.get("http://localhost/"), new Response(null))
  ) as object
  response = unwrapped(response)
  if (Object.getPrototypeOf(response) !== webResponseClass || Object.hasOwn(response, "stream")) return undefined
  const source: unknown = (response as { readonly source?: unknown }).source
  return source instanceof Response ? source : undefined
}

/**
 * The chunks of `response`'s body. A read that fails is the platform's `ResponseError` (reason `Decode`,
 * the reader's error as its cause), given to `onError`, as `response.stream` would fail; a missing body is
 * its `EmptyBody` error. Ending early (the consumer stops, or the fiber is interrupted) cancels the body,
 * which aborts the request; reading it to its end does not wait for a cancel.
 */
export const stream = <E>(
  response: HttpClientResponse.HttpClientResponse,
  onError: (error: HttpClientError.ResponseError) => E
): Stream.Stream<Uint8Array, E> => {
  const source = webSource(response)
  if (source === undefined || source.body === null) return Stream.mapError(response.stream, onError)
  const body = source.body
  return Stream.fromChannel(Channel.suspend(() => {
    const reader = body.getReader()
    let settled = false
    const read = Effect.async<ReadableStreamReadResult<Uint8Array>, E>((resume) => {
      reader.read().then(
        (result) => resume(Effect.succeed(result)),
        (cause: unknown) => {
          settled = true
          resume(Effect.fail(onError(new HttpClientError.ResponseError({ request: response.request, response, reason: "Decode", cause }))))
        }
      )
    })
    const loop: Channel.Channel<Chunk.Chunk<Uint8Array>, unknown, E, unknown, void, unknown> = Channel.flatMap(
      Channel.fromEffect(read),
      (result) => {
        if (result.done) {
          settled = true
          return Channel.void
        }
        return Channel.zipRight(Channel.write(Chunk.of(result.value)), loop)
      }
    )
    return Channel.ensuring(
      loop,
      Effect.suspend(() => settled ? Effect.void : Effect.promise(() => reader.cancel().catch(() => undefined)))
    )
  }))
}
