/**
 * The `node:http` server `serve` listens with. `server.close()` (which the `NodeHttpServer` layer calls as
 * it is released, on SIGTERM or Ctrl-C) stops accepting connections and closes the idle ones, but a
 * connection whose response is still being written when it is called stays open after that response ends,
 * for as long as the client keeps it alive (undici, under the `openai` SDK: 4 s; the server's
 * `keepAliveTimeout`: 5 s), and the process waits for it. This server closes such a connection as soon as
 * its response ends once the server is closing.
 *
 * @internal
 */
import { createServer, type Server } from "node:http"

/** A new `node:http` server that closes keep-alive connections as their responses end once it is closing. */
export const make = (): Server => {
  const server = createServer()
  server.on("request", (_request, response) => {
    response.on("finish", () => {
      // `listening` turns false as soon as `close()` is called; the connection is idle on the next turn
      if (!server.listening) setImmediate(() => server.closeIdleConnections())
    })
  })
  return server
}
