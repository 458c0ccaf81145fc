/**
 * The gateway's upstream dispatcher resends a request once when a REUSED keep-alive connection closes or is
 * reset before any byte of the response arrived, as browsers do (Chromium's
 * `HttpNetworkTransaction::ShouldResendRequest`) and many proxies: the server closed the idle connection as
 * the request was written into it (Node's `http` server and uvicorn close idle connections after 5 s;
 * undici reuses them up to about 4 s, later under load), so it never read the request. A request on a fresh
 * connection is never resent (the server may have read it: a 502 `upstream_closed` as before), nor one
 * whose response had begun, nor one whose body is a stream; at most once per request.
 *
 * Which connection a request went out on is learnt from undici's `undici:client:sendHeaders` diagnostics
 * channel, published synchronously right after the request's `onRequestStart` in the same call
 * (`writeH1`): the socket, whether a request was written into it before, and its `bytesRead` then (unchanged
 * at the error: no byte of this response arrived).
 *
 * @internal
 */
import type * as Undici from "@effect/platform-node/Undici"
import * as DiagnosticsChannel from "node:diagnostics_channel"

interface Attempt {
  socket: { readonly bytesRead: number } | undefined
  reused: boolean
  bytesRead: number
}

/** The attempt whose `onRequestStart` just ran: the next `sendHeaders` message is its socket's. */
let starting: Attempt | undefined
/** Sockets a request was written into (any dispatcher's: the channel is the process's). */
const used = new WeakSet<object>()
let subscribed = false

const onSendHeaders = (message: unknown): void => {
  const socket = (message as { socket: { readonly bytesRead: number } }).socket
  const reused = used.has(socket)
  used.add(socket)
  const attempt = starting
  if (attempt === undefined) return
  starting = undefined
  attempt.socket = socket
  attempt.reused = reused
  attempt.bytesRead = socket.bytesRead
}

/** Codes of a connection the server closed or reset (undici's `SocketError`, Node's). */
const CLOSED_CODES: ReadonlySet<unknown> = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"])

const replayable = (body: unknown): boolean =>
  body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array

/**
 * An undici interceptor (`dispatcher.compose(resendOnReused(onResend))`) resending a request once on a
 * reused connection closed before any response byte; `onResend` is told each resend (the gateway logs it at
 * Debug level).
 *
 * @internal
 */
export const resendOnReused = (
  onResend: (error: Error) => void
): Undici.Dispatcher.DispatcherComposeInterceptor => {
  if (!subscribed) {
    subscribed = true
    DiagnosticsChannel.subscribe("undici:client:sendHeaders", onSendHeaders)
  }
  return (dispatch) => (options, handler) => {
    if (!replayable(options.body)) return dispatch(options, handler)
    const inner = handler as Undici.Dispatcher.DispatchHandler
    let resent = false
    let responded = false
    let attempt: Attempt = { socket: undefined, reused: false, bytesRead: 0 }
    const wrapper: Undici.Dispatcher.DispatchHandler = {
      onRequestStart(controller, context) {
        attempt = { socket: undefined, reused: false, bytesRead: 0 }
        starting = attempt
        inner.onRequestStart?.(controller, context)
      },
      onRequestUpgrade(controller, statusCode, headers, socket) {
        inner.onRequestUpgrade?.(controller, statusCode, headers, socket)
      },
      onResponseStart(controller, statusCode, headers, statusMessage) {
        responded = true
        inner.onResponseStart?.(controller, statusCode, headers, statusMessage)
      },
      onResponseData(controller, chunk) {
        inner.onResponseData?.(controller, chunk)
      },
      onResponseEnd(controller, trailers) {
        inner.onResponseEnd?.(controller, trailers)
      },
      onResponseError(controller, error) {
        if (starting === attempt) starting = undefined
        if (
          !resent && !responded && attempt.reused && attempt.socket !== undefined &&
          attempt.socket.bytesRead === attempt.bytesRead &&
          CLOSED_CODES.has((error as { code?: unknown }).code)
        ) {
          resent = true
          onResend(error)
          // after undici's close handler is done with the old connection
          queueMicrotask(() => dispatch(options, wrapper))
          return
        }
        inner.onResponseError?.(controller, error)
      }
    }
    return dispatch(options, wrapper)
  }
}
