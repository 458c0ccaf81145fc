/**
 * The gateway's upstream dispatcher writes a large request body a piece of at most `PIECE_BYTES` per turn of
 * the event loop. Given a `Uint8Array`, undici writes the whole body in one socket write, and the kernel
 * copies as much of it as the connection's buffers take in that one call (on loopback running the
 * receiver's side of TCP too): 13-14 ms of system time in one turn for the 10 MB Chat Completions body of a
 * request with a 10 MB `instructions`, while every other request of the gateway waited
 * (packages/bench/RESULTS.md, "stalls, round 19"). Given an async iterable, undici writes each piece once the
 * socket took the one before (`writeIterable`), and the pieces come one per turn (`setImmediate`).
 *
 * The upstream receives the same bytes: the body's `content-length`, which the `HttpClient` sets from the
 * `Uint8Array` (`HttpClientRequest.bodyUint8Array`), stays the request's, so undici writes it as before, not
 * a chunked body. The pieces are views of the body (nothing is copied), made afresh at each dispatch: a
 * request dispatched again sends the whole body again, from its first byte (`resendOnReused`, composed
 * outside this interceptor, dispatches the same options again; the transport's retries send the same
 * `Uint8Array` again). A body of at most `PIECE_BYTES`, or one of another kind, is dispatched as it is.
 *
 * @internal
 */
import type * as Undici from "@effect/platform-node/Undici"
import type { Readable } from "node:stream"
import { setImmediate } from "node:timers/promises"

/**
 * The most bytes of a body written in one turn (256 KiB): about 0.3 ms of the kernel's copy on loopback; as
 * the gateway reads its own requests' bodies (server `internal/requestBody.ts`, `TURN_BYTES`).
 */
export const PIECE_BYTES = 256 * 1024

/** `body` in views of `PIECE_BYTES`, the next one a turn of the event loop after the one before. */
export async function* pieces(body: Uint8Array): AsyncGenerator<Uint8Array, void> {
  for (let at = 0; at < body.length; at += PIECE_BYTES) {
    if (at > 0) await setImmediate()
    yield body.subarray(at, at + PIECE_BYTES)
  }
}

/**
 * An undici interceptor (`dispatcher.compose(pacedBody, …)`, innermost) dispatching a `Uint8Array` body of
 * more than `PIECE_BYTES` as `pieces` of it, a fresh iterator per dispatch.
 */
export const pacedBody: Undici.Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) =>
  options.body instanceof Uint8Array && options.body.length > PIECE_BYTES
    // undici takes an async iterable body (its docs/api/Dispatcher.md); its types do not list one
    ? dispatch({ ...options, body: pieces(options.body) as unknown as Readable }, handler)
    : dispatch(options, handler)
