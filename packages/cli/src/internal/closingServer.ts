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

/**
 * A new `node:http` server that closes keep-alive connections as their responses end once it is closing,
 * and reads request bodies one socket read per turn of the event loop (see the module doc).
 */
export const make = (): Server => {
  const server = createServer({ IncomingMessage: PacedIncomingMessage })
  server.on("request", (_request, response) => {
    response.on("finish", () => {
      // `listening` turns false as soon as `close()` is called; the connection is idle on the next turn
      if (!server.listening) setImmediate(() => server.closeIdleConnections())
    })
  })
  return server
}
