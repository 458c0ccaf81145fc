/**
 * The `node:http` server `serve` listens with.
 *
 * - **Closing**: `server.close()` (which the `NodeHttpServer` layer calls as it is released, on SIGTERM or
 *   Ctrl-C) stops accepting connections and closes the idle ones, but a connection whose response is still
 *   being written when it is called stays open after that response ends, for as long as the client keeps it
 *   alive (undici, under the `openai` SDK: 4 s; the server's `keepAliveTimeout`: 5 s), and the process waits
 *   for it. This server closes such a connection as soon as its response ends once the server is closing.
 * - **Paced request bodies** (`PacedIncomingMessage`): a request body is read from its socket one read (up to
 *   64 KiB) per turn of the event loop. Node resumes a request's socket as soon as a reader takes the chunk
 *   it buffered, in the same callback, and libuv then goes on reading the same socket, up to 32 reads
 *   (2 MiB) in one turn: a body of megabytes sent at once (loopback, a fast network) held the event loop for
 *   10-35 ms at a time (copying into fresh memory page-faults on some machines, a VM), every other request
 *   waiting. Resumed on the next turn instead, the other connections are served between two reads.
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
 *   checked every second.
 *
 * @internal
 */
import { createServer, IncomingMessage, type Server } from "node:http"

/**
 * A request whose socket is resumed on the next turn of the event loop (`setImmediate`) when its reader
 * wants more, not at once (see the module doc). Node reads the body into the request in `parserOnBody`; the
 * request's `_read` only resumes the socket, so deferring it changes when the next bytes are read, not what
 * they are.
 */
export class PacedIncomingMessage extends IncomingMessage {
  override _read(size: number): void {
    setImmediate(() => {
      if (!this.destroyed) super._read(size)
    })
  }
}

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

/**
 * A new `node:http` server that closes keep-alive connections as their responses end once it is closing,
 * reads request bodies one socket read per turn of the event loop, and answers a client that half-closed
 * its connection after its request (see the module doc); with `timeouts`, Node's bounds on receiving a request
 * are those (else Node's defaults).
 */
export const make = (timeouts?: Timeouts): Server => {
  const server = createServer({
    IncomingMessage: PacedIncomingMessage,
    ...(timeouts === undefined ? {} : {
      headersTimeout: timeouts.headersTimeoutMillis,
      requestTimeout: timeouts.requestTimeoutMillis,
      connectionsCheckingInterval: CHECK_INTERVAL_MILLIS
    })
  })
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
  server.on("request", (_request, response) => {
    response.on("finish", () => {
      // `listening` turns false as soon as `close()` is called; the connection is idle on the next turn
      if (!server.listening) setImmediate(() => server.closeIdleConnections())
    })
  })
  return server
}
