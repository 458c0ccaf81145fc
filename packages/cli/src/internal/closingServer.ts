/**
 * The `node:http` server `serve` listens with.
 *
 * - **Closing**: `server.close()` (which the `NodeHttpServer` layer calls as it is released, on SIGTERM or
 *   Ctrl-C) stops accepting connections and closes the idle ones, but a connection whose response is still
 *   being written when it is called stays open after that response ends, for as long as the client keeps it
 *   alive (undici, under the `openai` SDK: 4 s; the server's `keepAliveTimeout`: 5 s), and the process waits
 *   for it. This server closes such a connection as soon as its response ends once the server is closing.
 *   With `Options.shutdownGraceMillis`, a connection still open that long after `close()` (a response that
 *   cannot be written because its client reads nothing, a request body still arriving) is destroyed, so that
 *   `close()` completes and the process exits: without it a client that stopped reading held the process
 *   for as long as it liked.
 * - **Stalled clients** (`Options.stallTimeoutMillis`): a response whose bytes wait in its socket's buffer
 *   (the client accepts none: its TCP window is full) with no drain for that long has its connection
 *   destroyed (checked every second); the platform then interrupts its handler, which aborts its upstream
 *   call. The gateway stops reading the upstream while its client does not read (back-pressure), so the
 *   upstream's idle timeout never fires for such a client: without this bound it held its upstream call (a
 *   model server's generation slot) for as long as it kept its connection open. A client that reads, however
 *   slowly, drains its socket and is never cut; a response waiting for the upstream has nothing buffered.
 * - **Half-close** (`httpAllowHalfOpen`): a client may end its side of the connection (TCP FIN) once its
 *   request is sent and still read the answer (HTTP/1.1 allows it; `nc -q`, some proxies and minimal
 *   clients do it). Node's default treats that end as the client leaving: it destroys the request and
 *   ends the connection, the response closes before it ended, and the platform interrupts the handler
 *   (access log 499, the upstream call cancelled, the client gets 0 bytes). This server keeps answering a
 *   request that asked for its connection to close after it (`Connection: close`, or HTTP/1.0 without
 *   keep-alive), then closes it. A FIN on a connection the client asked to keep alive (an SDK's pooled
 *   connection, which it ends only as it gives up: a timeout, an abort) still ends the request at once, as
 *   before: TCP cannot tell such a client from a half-close, and a client that leaves before its answer
 *   begins must still cancel the upstream call. A client that ends its side before its request is whole is
 *   a parse error, the connection closed at once; one that is reset, or whose socket fails a write, closes.
 * - **Timeouts** (`Timeouts`): Node's own bounds on receiving a request are set from `serve`'s: request
 *   headers must arrive whole within `headersTimeoutMillis` (Node's default, 60 s checked every 30 s, held a
 *   half-sent request 60-90 s, whatever `--request-body-timeout` said), and Node's bound on the whole request
 *   (300 s by default, which answered a body still arriving within a longer `--request-body-timeout` with a
 *   408 of its own) is set past the gateway's body timeout, which bounds the body itself. The bounds are
 *   checked every second. The headers bound covers a connection that sends nothing too: Node (20) starts a
 *   connection's clock as its parser is set up for it (against connections opened and left silent) and
 *   restarts it at a request's first byte, so a connection that never sends a request is answered a 408 and
 *   closed at the bound (measured: 200 such sockets all answered and closed 10.4 s after opening under
 *   `--request-body-timeout 10`; a client that never reads its socket does not see it, its side stays in
 *   CLOSE-WAIT while the server's fd is gone); between two requests of a kept-alive connection Node's
 *   keep-alive timeout (5 s) closes it instead.
 * - **Idle between requests** (`armIdle`): Node's keep-alive timeout is the socket's inactivity timeout, reset
 *   by every byte, and the line breaks llhttp skips before a request line (`\r\n`) neither begin a request
 *   (no headers clock) nor end the connection: a client writing `\r\n` every few seconds held a kept-alive
 *   connection open forever (measured on Node 20.20: keep-alive timeout 2 s, headers bound 2 s, `\r\n`
 *   every 500 ms, still open after 12 s). This server also closes a kept-alive connection `keepAliveTimeout`
 *   after its last response ended when no request came since, whatever bytes arrived, unless a request has
 *   begun (its headers arriving, which the headers bound covers). `keepAliveTimeout` 0 keeps Node's
 *   meaning: no bound.
 * - **Requests Node refuses** (`clientErrorAnswer`): a request Node's parser cannot read (a malformed request
 *   line, a header of a bad name, `Content-Length` beside `Transfer-Encoding`, headers past Node's 16 KiB,
 *   a bad chunk) or whose headers came too slowly never reaches the gateway; Node answered it with a bare
 *   status line and no body (SDKs report "400 status code (no body)"). This server answers it in OpenAI's
 *   error shape, naming what was wrong and Node's error code, with `Content-Type`, `Content-Length` and
 *   `Connection: close`, and closes the connection, as Node's docs for `clientError` ask: only when the
 *   socket is writable and no response on it has begun (else it is closed without one, as Node does).
 *
 * @internal
 */
// `maxHeaderSize`: Node's bound on a request's headers when the server sets none (16 KiB, or `--max-http-header-size`)
import { createServer, type IncomingMessage, maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from "node:http"
import type { Socket } from "node:net"

/** Whether `request` asked to keep its connection for more requests (HTTP/1.1 unless `close`; 1.0 if `keep-alive`). */
const keepsAlive = (request: IncomingMessage): boolean => {
  const connection = (request.headers.connection ?? "").toLowerCase()
  return request.httpVersion === "1.0" ? connection.includes("keep-alive") : !connection.includes("close")
}

/** Node's bounds on receiving a request (see the module doc), in milliseconds. */
export interface Timeouts {
  /** the longest a request's headers may take to arrive whole: a 408 and the connection closed after it */
  readonly headersTimeoutMillis: number
  /** the longest a whole request may take to arrive (at least `headersTimeoutMillis`; 0: no bound) */
  readonly requestTimeoutMillis: number
}

/** How often Node checks its request timeouts: a bound is enforced within this much after it passes. */
const CHECK_INTERVAL_MILLIS = 1000

/**
 * The longest `serve` waits for a request's headers: 30 s, or `--request-body-timeout` when shorter. Headers
 * are a few KiB; a client allowed less for its body than this gets no more for its headers.
 */
export const HEADERS_TIMEOUT_SECONDS = 30

/**
 * The timeouts of `serve` with a request body timeout of `bodyTimeoutSeconds`: headers within
 * `HEADERS_TIMEOUT_SECONDS` (or the body timeout when shorter), the whole request within the headers' bound
 * plus the body timeout plus a second, so that the gateway's own body timeout (a 408 `request_timeout` in
 * OpenAI's shape) comes first.
 */
export const timeoutsOf = (bodyTimeoutSeconds: number): Timeouts => {
  const headers = Math.min(bodyTimeoutSeconds, HEADERS_TIMEOUT_SECONDS)
  return { headersTimeoutMillis: headers * 1000, requestTimeoutMillis: (headers + bodyTimeoutSeconds + 1) * 1000 }
}

/** An error Node's server hands to `clientError`: a parse error of its HTTP parser (`HPE_…`, with llhttp's `reason`), its request timeout, or a socket error. */
export interface ClientError extends Error {
  readonly code?: string | undefined
  readonly reason?: string | undefined
}

/** What `clientErrorAnswer` answers: an HTTP status and OpenAI's error object. */
export interface ClientErrorAnswer {
  readonly status: number
  readonly error: {
    readonly message: string
    readonly type: "invalid_request_error"
    readonly param: null
    readonly code: string
  }
}

/**
 * The answer in OpenAI's error shape to a request Node refused before the gateway saw it (see the module
 * doc), or `undefined` for an error that is not the request's (a socket error such as `ECONNRESET`: there
 * is no one to answer). `HPE_HEADER_OVERFLOW` is a 431 `request_headers_too_large` naming
 * `maxHeaderSize`; `HPE_CHUNK_EXTENSIONS_OVERFLOW` a 413 `request_too_large`; `ERR_HTTP_REQUEST_TIMEOUT` a
 * 408 `request_timeout` naming the bound passed (`headersWhole`: the headers had arrived, so the bound was
 * on the whole request; `sentNothing`: the connection sent no byte, a request never began); `HPE_INVALID_EOF_STATE` (the client ended its side mid-request) and every other
 * parse error a 400 `invalid_http_request` naming Node's code and llhttp's reason.
 */
export const clientErrorAnswer = (
  error: ClientError,
  bounds: {
    readonly maxHeaderSize: number
    readonly headersTimeoutMillis: number
    readonly requestTimeoutMillis: number
    readonly headersWhole: boolean
    readonly sentNothing: boolean
  }
): ClientErrorAnswer | undefined => {
  const code = error.code ?? ""
  const answer = (status: number, errorCode: string, message: string): ClientErrorAnswer => ({
    status,
    error: { message, type: "invalid_request_error", param: null, code: errorCode }
  })
  const seconds = (millis: number) => `${millis / 1000} second${millis === 1000 ? "" : "s"}`
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return bounds.headersWhole
      ? answer(408, "request_timeout", `The request did not arrive whole within ${seconds(bounds.requestTimeoutMillis)}.`)
      : bounds.sentNothing
      ? answer(408, "request_timeout", `No request arrived on the connection within ${seconds(bounds.headersTimeoutMillis)}.`)
      : answer(408, "request_timeout", `The request's headers did not arrive whole within ${seconds(bounds.headersTimeoutMillis)}.`)
  }
  if (!code.startsWith("HPE_")) return undefined
  // llhttp's reasons are short fixed phrases; cut anyway, the message is sent as it is
  const reason = (error.reason ?? error.message).slice(0, 200)
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return answer(431, "request_headers_too_large", `The request's headers are larger than ${bounds.maxHeaderSize} bytes.`)
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return answer(413, "request_too_large", `The request body's chunk extensions are too large (${code}: ${reason}).`)
    case "HPE_INVALID_EOF_STATE":
      return answer(400, "invalid_http_request", `The connection was ended before the request was whole (${code}).`)
    default:
      return answer(400, "invalid_http_request", `The request could not be read as HTTP/1.1 (${code}: ${reason}).`)
  }
}

/** The bytes of a whole HTTP/1.1 response carrying `answer`, closing the connection. */
const responseOf = (answer: ClientErrorAnswer): Buffer => {
  const body = JSON.stringify({ error: answer.error })
  return Buffer.from(
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
      "Content-Type: application/json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Connection: close\r\n\r\n" + body
  )
}

/**
 * Answers `error` on `socket` (see `clientErrorAnswer`) when the socket is writable and no response on it
 * has begun, then closes the connection at once, as Node's own answer to it does (write, then destroy).
 */
const answerClientError = (server: Server, socket: Socket, error: ClientError): void => {
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  const parser = (socket as Socket & { parser?: { incoming?: IncomingMessage | null } | null }).parser
  const answer = socket.writable && (inFlight == null || !inFlight.headersSent)
    ? clientErrorAnswer(error, {
      // the `createServer` option, kept on the server (not in its type)
      maxHeaderSize: (server as Server & { maxHeaderSize?: number }).maxHeaderSize ?? maxHeaderSize,
      headersTimeoutMillis: server.headersTimeout,
      requestTimeoutMillis: server.requestTimeout,
      headersWhole: parser?.incoming != null,
      sentNothing: socket.bytesRead === 0
    })
    : undefined
  if (answer !== undefined) socket.write(responseOf(answer))
  socket.destroy()
}

/** The bounds `serve` puts on the responses it writes and on its shutdown (see the module doc). */
export interface Options {
  /** how long after `close()` the connections still open are destroyed (none when absent) */
  readonly shutdownGraceMillis?: number | undefined
  /** how long a response's socket may hold unwritten bytes without a drain before it is destroyed (none when absent) */
  readonly stallTimeoutMillis?: number | undefined
  /** told as a stalled client's connection is destroyed, before it is */
  readonly onStall?: ((request: IncomingMessage) => void) | undefined
}

/** A response in flight whose socket is watched for stalls: since when its bytes wait without a drain. */
interface Watched {
  readonly request: IncomingMessage
  readonly socket: Socket
  since: number | undefined
}

/**
 * Destroys, every `CHECK_INTERVAL_MILLIS`, the socket of each response of `watched` whose bytes have waited
 * `stallTimeoutMillis` without a drain (the socket's buffer never empty at a check, and no `'drain'`).
 */
const watchStalls = (server: Server, watched: Set<Watched>, options: Options & { readonly stallTimeoutMillis: number }) => {
  const check = setInterval(() => {
    const now = performance.now()
    for (const entry of watched) {
      if (entry.socket.destroyed || entry.socket.writableLength === 0) {
        entry.since = undefined
      } else if (entry.since === undefined) {
        entry.since = now
      } else if (now - entry.since >= options.stallTimeoutMillis) {
        watched.delete(entry)
        options.onStall?.(entry.request)
        entry.socket.destroy()
      }
    }
  }, CHECK_INTERVAL_MILLIS)
  // the check keeps no process alive, and ends with the server
  check.unref()
  server.once("close", () => clearInterval(check))
}

/** A kept-alive connection's requests not yet answered, and its idle bound's timer while it has none. */
interface Idle {
  inFlight: number
  timer: ReturnType<typeof setTimeout> | undefined
}

/** The parser Node's server reads a connection with, as far as the idle bound asks it (Node 18 on). */
interface ConnectionParser {
  /** whether the headers of the message begun last are whole (true until the next message's first byte) */
  readonly headersCompleted?: () => boolean
}

/**
 * After the last response in flight on a kept-alive `socket` ended: closes the connection `millis` later
 * unless a request came since (the `request` listener of `make` clears the timer), or one has begun (the
 * connection's parser has a message whose headers are not whole: Node's headers bound covers it). Bytes
 * that begin no request (`\r\n`, which llhttp skips before a request line) do not count (see the module doc).
 */
const armIdle = (socket: Socket, idle: Idle, millis: number): void => {
  if (millis <= 0 || socket.destroyed) return
  idle.timer = setTimeout(() => {
    idle.timer = undefined
    if (idle.inFlight > 0 || socket.destroyed) return
    const parser = (socket as Socket & { parser?: ConnectionParser | null }).parser
    if (parser?.headersCompleted?.() === false) return
    socket.destroy()
  }, millis)
  idle.timer.unref()
}

/**
 * A new `node:http` server that closes keep-alive connections as their responses end once it is closing,
 * A new `node:http` server that closes keep-alive connections as their responses end once it is closing,
 * answers a client that half-closed its connection after its request, answers a request Node refuses in
 * OpenAI's error shape, and closes a kept-alive connection idle `keepAliveTimeout` after its last response
 * whatever bytes without a request it sent (see the module doc); with `timeouts`, Node's bounds on
 * receiving a request are those (else Node's defaults); with `options`, stalled clients are cut and the
 * shutdown's wait is bounded.
 */
export const make = (timeouts?: Timeouts, options: Options = {}): Server => {
  const server = createServer({
    ...(timeouts === undefined ? {} : {
      headersTimeout: timeouts.headersTimeoutMillis,
      requestTimeout: timeouts.requestTimeoutMillis,
      connectionsCheckingInterval: CHECK_INTERVAL_MILLIS
    })
  })
  server.on("clientError", (error: ClientError, socket: Socket) => answerClientError(server, socket, error))
  // not an option of `createServer`: the property Node's `socketOnEnd` reads (false by default)
  ;(server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  server.on("request", (request: IncomingMessage, response) => {
    if (!keepsAlive(request)) return
    // the client asked to keep the connection: its end before the answer did is the client leaving
    const socket = request.socket
    const left = () => {
      if (!response.writableEnded) socket.destroy()
    }
    socket.once("end", left)
    response.once("close", () => socket.off("end", left))
  })
  const idles = new WeakMap<Socket, Idle>()
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    let idle = idles.get(socket)
    if (idle === undefined) {
      idle = { inFlight: 0, timer: undefined }
      idles.set(socket, idle)
      const state = idle
      socket.once("close", () => clearTimeout(state.timer))
    }
    clearTimeout(idle.timer)
    idle.timer = undefined
    idle.inFlight++
    const state = idle
    const keep = keepsAlive(request)
    response.once("close", () => {
      // `close` follows `finish` (or an abort): the request is over either way
      if (--state.inFlight === 0 && keep && response.writableFinished) armIdle(socket, state, server.keepAliveTimeout)
    })
  })
  server.on("request", (_request, response) => {
    response.on("finish", () => {
      // `listening` turns false as soon as `close()` is called; the connection is idle on the next turn
      if (!server.listening) setImmediate(() => server.closeIdleConnections())
    })
  })
  const stallTimeoutMillis = options.stallTimeoutMillis
  if (stallTimeoutMillis !== undefined) {
    const watched = new Set<Watched>()
    watchStalls(server, watched, { ...options, stallTimeoutMillis })
    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      const entry: Watched = { request, socket: request.socket, since: undefined }
      const drained = () => (entry.since = undefined)
      watched.add(entry)
      entry.socket.on("drain", drained)
      // watched until its bytes are all written (or its connection gone), not only until its last `write`
      response.once("close", () => {
        watched.delete(entry)
        entry.socket.off("drain", drained)
      })
    })
  }
  const grace = options.shutdownGraceMillis
  if (grace !== undefined) {
    // the `close()` the `NodeHttpServer` layer calls as it is released: connections left after `grace` are destroyed
    const close = server.close
    server.close = function(this: Server, callback?: (error?: Error) => void) {
      const timer = setTimeout(() => server.closeAllConnections(), grace)
      timer.unref()
      server.once("close", () => clearTimeout(timer))
      return close.call(this, callback)
    }
  }
  return server
}
