/**
 * The bytes of a request's body, chunk by chunk, for the gateway's `readBody`.
 *
 * On `@effect/platform-node`'s server the request's `source` is Node's `IncomingMessage`, read here with its
 * `data`, `end` and `error` events in one `Effect.async`. Read through the platform's `request.stream`
 * instead (`Stream.runForEach`), each body cost a fiber of its own (Effect runs every stream in a forked
 * fiber under a scope of its own) and about 430 of the 2,160 fiber steps of a one-delta streamed request.
 * Any other request (a web `Request`, a wrapper of one's own) is read through its `stream`.
 *
 * @internal
 */
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { isNodeRequest, type NodeRequest } from "./nodeRequest.js"

/** The longest wait a JS timer takes (`setTimeout` fires after 1 ms for a longer one). */
const MAX_TIMER_MILLIS = 2 ** 31 - 1

/**
 * How long a connection the gateway closes under a client still sending its body stays half-closed (the
 * answer and a FIN sent, nothing more read) before it is destroyed, unless the client closes first: 2 s.
 */
export const LINGER_MILLIS = 2000

/** The parts of Node's socket (`net.Socket`) a lingering close uses. */
interface NodeSocket {
  readonly destroyed: boolean
  /** the response in flight on the connection (Node's `ServerResponse`), `null` between responses */
  readonly _httpMessage?: { readonly writableFinished: boolean; readonly once: (event: "finish", listener: () => void) => unknown } | null
  destroySoon?: () => void
  readonly end: () => unknown
  readonly destroy: () => unknown
  readonly once: (event: "close", listener: () => void) => unknown
}

const socketOf = (body: NodeRequest): NodeSocket | undefined => {
  const socket = body.socket as Partial<NodeSocket>
  return typeof socket.end === "function" && typeof socket.destroy === "function" && typeof socket.once === "function"
    ? socket as NodeSocket
    : undefined
}

/**
 * The server's side of `socket` ended (a FIN after what was written), nothing more read, and the socket
 * destroyed when the client closes its side or `LINGER_MILLIS` later: a lingering close. Destroyed at once
 * with bytes of the client's unread (a body still arriving), the kernel answers with a reset, which a client
 * still writing its body gets before it read the answer (fetch: `EPIPE`; the `openai` SDK: "Connection
 * error." instead of the 413, 2 of 3 times for a body 70 MiB past the bound).
 */
const linger = (body: NodeRequest, socket: NodeSocket): void => {
  body.pause()
  socket.end()
  const timer = setTimeout(() => socket.destroy(), LINGER_MILLIS)
  timer.unref?.()
  socket.once("close", () => clearTimeout(timer))
}

/**
 * Closes `body`'s connection without a reset (see `linger`): reading stops at once, and the connection is
 * half-closed once the answer in flight on it is written (at once when there is none), then destroyed.
 * A request that is not Node's, or whose socket is not Node's, is destroyed.
 */
export const closeLingering = (body: NodeRequest): void => {
  const socket = socketOf(body)
  if (socket === undefined) {
    body.destroy()
    return
  }
  if (socket.destroyed) return
  body.pause()
  const inFlight = socket._httpMessage
  if (inFlight != null && !inFlight.writableFinished) inFlight.once("finish", () => linger(body, socket))
  else linger(body, socket)
}

/**
 * The connection of `request` (a Node request whose body the gateway does not read, answered with
 * `connection: close`) closed without a reset once the answer is written: Node's server ends and destroys it
 * at once then (`socket.destroySoon`), which resets a connection whose client is still sending; its close is
 * made a lingering one (`linger`). Any other request is left as it is.
 */
export const lingerAfterAnswer = (request: HttpServerRequest.HttpServerRequest): void => {
  const body: unknown = request.source
  if (!isNodeRequest(body)) return
  const socket = socketOf(body)
  if (socket === undefined || typeof socket.destroySoon !== "function") return
  socket.destroySoon = () => linger(body, socket)
}

/**
 * A Node request's body is paused after each this many bytes read (the chunk that reaches it included) and
 * resumed on the next turn of the event loop (`setImmediate`: the poll phase serves the other sockets in
 * between), so a turn reads at most about this much of it. libuv reads up to 32 chunks of 64 KiB from a
 * socket per poll and Node hands each to `data` in that same turn, so a large body arriving fast (10 MB on
 * loopback) was read up to 2 MiB at a time, with every other request waiting. Paused, Node stops reading
 * the socket once the request's buffer is full: the rest waits in the kernel.
 */
export const TURN_BYTES = 256 * 1024

/** The body did not arrive whole within the time `forEachChunk` was given. */
export class BodyTimeout extends Data.TaggedError("BodyTimeout") {}

/**
 * Gives each chunk of `request`'s body to `take` until the body ends or `take` returns `false`; then the
 * rest of the body is not read and the request is destroyed (which tears its connection down), as leaving
 * the platform's `request.stream` does. With `drainBytes`, a Node request is not destroyed at once: the
 * effect ends, and the rest of the body is read and discarded in the background, so that an answer sent
 * now (a 413) is written while the client still sends, and the connection stays usable once the body
 * ends; the request is destroyed when more than `drainBytes` bytes arrive after the stop, or when the body
 * has not ended by the deadline `timeoutMillis` set from the start (a client that never stops). A body that cannot be read fails with the platform's
 * `RequestError` (reason `Decode`), as its `request.stream` would. A body that has not ended within
 * `timeoutMillis` fails with `BodyTimeout` (one longer than 2^31-1 ms, about 24.8 days, never does); a Node request is then left paused, not destroyed, so that an
 * answer (sent with `connection: close`) still reaches the client. A Node request is paused after each
 * `turnBytes` bytes (default `TURN_BYTES`) until the next turn of the event loop: the same chunks in the
 * same order, in more turns.
 */
export const forEachChunk = (
  request: HttpServerRequest.HttpServerRequest,
  take: (chunk: Uint8Array) => boolean,
  timeoutMillis: number,
  drainBytes?: number,
  turnBytes: number = TURN_BYTES
): Effect.Effect<void, HttpServerError.RequestError | BodyTimeout> => {
  const body: unknown = request.source
  if (!isNodeRequest(body) || body.readableEnded) {
    return Stream.runForEachWhile(request.stream, (chunk) => Effect.succeed(take(chunk))).pipe(
      Effect.timeoutFail({ duration: Duration.millis(timeoutMillis), onTimeout: () => new BodyTimeout() })
    )
  }
  const started = Date.now()
  return Effect.async<void, HttpServerError.RequestError | BodyTimeout>((resume) => {
    // a JS timer longer than 2^31-1 ms fires after 1 ms (Node clamps it): a longer bound is no bound, as the
    // live clock's sleep (the branch above) and the upstream's timers take it
    const timer = timeoutMillis <= MAX_TIMER_MILLIS
      ? setTimeout(() => {
        detach()
        body.pause()
        resume(Effect.fail(new BodyTimeout()))
      }, timeoutMillis)
      : undefined
    // the bytes read since the last pause, and the next turn's resume while paused
    let turnRead = 0
    let resumeAt: ReturnType<typeof setImmediate> | undefined
    const detach = () => {
      if (timer !== undefined) clearTimeout(timer)
      if (resumeAt !== undefined) clearImmediate(resumeAt)
      resumeAt = undefined
      body.off("data", onData)
      body.off("end", onEnd)
      body.off("error", onError)
    }
    const onData = (chunk: unknown) => {
      if (take(chunk as Uint8Array)) {
        turnRead += (chunk as Uint8Array).length
        if (turnRead >= turnBytes && resumeAt === undefined) {
          body.pause()
          resumeAt = setImmediate(() => {
            resumeAt = undefined
            turnRead = 0
            body.resume()
          })
        }
        return
      }
      detach()
      if (drainBytes === undefined) body.destroy()
      else drain(body, drainBytes, timeoutMillis - (Date.now() - started))
      resume(Effect.void)
    }
    const onEnd = () => {
      detach()
      resume(Effect.void)
    }
    const onError = (cause: unknown) => {
      detach()
      resume(Effect.fail(new HttpServerError.RequestError({ request, reason: "Decode", cause })))
    }
    body.on("data", onData)
    body.on("end", onEnd)
    body.on("error", onError)
    // interrupted (the client went away, the gateway shuts down): the body is left, as the stream leaves it
    return Effect.sync(() => {
      detach()
      if (!body.destroyed) body.destroy()
    })
  })
}

/**
 * Reads and discards `request`'s whole body in the background, unread so far (a body refused by its
 * `content-length`): a Node request is destroyed (its connection closed) once more than `maxBytes` arrive or
 * when it has not ended within `timeoutMillis`; so an answer sent now reaches a client that is still
 * sending, and the connection serves the next request once the body ends. Any other request is left as it is.
 */
export const discard = (request: HttpServerRequest.HttpServerRequest, maxBytes: number, timeoutMillis: number): void => {
  const body: unknown = request.source
  if (isNodeRequest(body) && !body.readableEnded) drain(body, maxBytes, timeoutMillis)
}

/**
 * Reads and discards the rest of `body` in the background: its connection closed (`closeLingering`: once the
 * answer is written, without a reset) once more than `maxBytes` arrive, or when it has not ended within
 * `remainingMillis` (no bound past a JS timer's longest wait).
 */
const drain = (body: NodeRequest, maxBytes: number, remainingMillis: number) => {
  let size = 0
  const stop = () => {
    if (timer !== undefined) clearTimeout(timer)
    body.off("data", onData)
    body.off("end", stop)
    body.off("error", stop)
  }
  const onData = (chunk: unknown) => {
    size += (chunk as Uint8Array).length
    if (size <= maxBytes) return
    stop()
    closeLingering(body)
  }
  const timer = remainingMillis <= MAX_TIMER_MILLIS
    ? setTimeout(() => {
      stop()
      if (!body.destroyed) closeLingering(body)
    }, Math.max(remainingMillis, 0))
    : undefined
  body.on("data", onData)
  body.on("end", stop)
  body.on("error", stop)
}
