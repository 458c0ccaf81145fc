/**
 * A loopback HTTP server for tests of what a client does when a backend crashes on a request: it answers
 * the first request with a given body, then reads every later request whole and destroys its connection
 * without an answer. A client that keeps connections alive sends its second request on the first one's
 * connection, so the close comes after a request was written on a reused connection.
 *
 * ```ts
 * const server = yield* DroppingServer.make(okBody)
 * // point a client at server.baseUrl, call it twice, then check server.received:
 * // ["/v1/responses", "/v1/responses (reused)"] when the second request was sent once, on the kept-alive connection
 * ```
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A running dropping server: `baseUrl` (`http://127.0.0.1:PORT/v1`), and `received`, each request's path as
 * it was read whole, followed by ` (reused)` when it came on a connection that had carried one before.
 *
 * @since 0.2.0
 * @category models
 */
export interface DroppingServer {
  readonly baseUrl: string
  readonly received: ReadonlyArray<string>
}

/**
 * How a dropping server answers: `answered`, how many requests it answers (counted over all connections)
 * before it drops every later one (default 1; 0 drops the first); `drop`, how it ends a dropped request's
 * connection: `"close"` (the default, a FIN) or `"reset"` (a TCP RST, as a crashed process's kernel may
 * send).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly answered?: number | undefined
  readonly drop?: "close" | "reset" | undefined
}

/**
 * Starts a dropping server on a free loopback port (see the module doc), answering the first request (the
 * first `options.answered`) with `firstAnswer` as `application/json` with status 200; its connections are
 * closed when the scope closes.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (firstAnswer: string, options: Options = {}): Effect.Effect<DroppingServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: ReturnType<typeof createServer>; readonly dropping: DroppingServer }>((resume) => {
      const received: Array<string> = []
      const answered = options.answered ?? 1
      const sockets = new WeakSet<object>()
      const server = createServer((request, response) => {
        const reused = sockets.has(request.socket)
        sockets.add(request.socket)
        request.resume()
        request.on("end", () => {
          received.push(`${request.url}${reused ? " (reused)" : ""}`)
          if (received.length > answered) {
            return options.drop === "reset" ? request.socket.resetAndDestroy() : request.socket.destroy()
          }
          response.writeHead(200, { "content-type": "application/json" })
          response.end(firstAnswer)
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          server,
          dropping: { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, received }
        })))
    }),
    ({ server }) => Effect.sync(() => server.closeAllConnections())
  ).pipe(Effect.map(({ dropping }) => dropping))
