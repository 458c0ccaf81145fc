/**
 * The server `serve` listens with: once closing, a keep-alive connection whose response was in flight
 * when `close()` was called is closed as that response ends, instead of staying open for as long as the
 * client keeps it alive (which kept the process running seconds after SIGTERM); a connection that sends
 * nothing is closed at the headers bound; a request Node's parser refuses is answered in OpenAI's error shape.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, get, type IncomingMessage, request, type Server, type ServerResponse } from "node:http"
import { type AddressInfo, connect, type Socket } from "node:net"
import * as ClosingServer from "../src/internal/closingServer.js"

/** A bound short enough for a test: a connection's first request must reach the server within 300 ms. */
const SHORT: ClosingServer.Timeouts = { headersTimeoutMillis: 300, requestTimeoutMillis: 5_000 }

/** How long a test waits for the server to close a connection before it fails (generous: the bound is 300 ms). */
const CLOSED_WITHIN_MILLIS = 10_000

const listening = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return (server.address() as AddressInfo).port
}

const stop = (server: Server) => {
  server.closeAllConnections()
  server.close()
}

/**
 * Opens a raw connection, writes `bytes` (nothing when empty) and collects what the server sends until it
 * closes the connection; fails when it is still open after `CLOSED_WITHIN_MILLIS`.
 */
const exchange = (port: number, bytes: string | Buffer): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    const chunks: Array<Buffer> = []
    const open = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the server did not close the connection within ${CLOSED_WITHIN_MILLIS} ms`))
    }, CLOSED_WITHIN_MILLIS)
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    // the server may close while a large request is still being written: what it sent before counts
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(open)
      resolve(Buffer.concat(chunks).toString("utf8"))
    })
    if (bytes.length > 0) socket.write(bytes)
  })

/** A raw HTTP/1.1 answer: its status, headers (lower-cased names) and body. */
const parseAnswer = (text: string) => {
  const end = text.indexOf("\r\n\r\n")
  expect(end).toBeGreaterThan(0)
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n")
  const headers = Object.fromEntries(lines.map((line) => {
    const colon = line.indexOf(":")
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
  }))
  return { status: Number(statusLine!.split(" ")[1]), headers, body: text.slice(end + 4) }
}

/** Asserts `text` is a whole answer of `status` in OpenAI's error shape, closing the connection; returns its error. */
const openAIError = (text: string, status: number) => {
  const answer = parseAnswer(text)
  expect(answer.status).toBe(status)
  expect(answer.headers["content-type"]).toBe("application/json")
  expect(answer.headers["connection"]).toBe("close")
  expect(Number(answer.headers["content-length"])).toBe(Buffer.byteLength(answer.body))
  const parsed = JSON.parse(answer.body) as { error: { message: string; type: string; param: unknown; code: string } }
  expect(Object.keys(parsed.error)).toEqual(["message", "type", "param", "code"])
  expect(parsed.error.type).toBe("invalid_request_error")
  expect(parsed.error.param).toBeNull()
  return parsed.error
}

describe("ClosingServer", () => {
  it("close() completes once the response in flight ends, though the client keeps its connection alive", async () => {
    const server = ClosingServer.make()
    // no idle timeout on the server's side: only the closing rule can end the kept-alive connection
    server.keepAliveTimeout = 0
    let end: () => void = () => undefined
    server.on("request", (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write("data: 1\n\n")
      end = () => response.end("data: 2\n\n")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const agent = new Agent({ keepAlive: true })
    try {
      const { body, socketClosed } = await new Promise<{ body: Promise<string>; socketClosed: Promise<void> }>((resolve, reject) => {
        const outgoing = request({ port: (server.address() as AddressInfo).port, host: "127.0.0.1", agent }, (response) => {
          const socketClosed = new Promise<void>((done) => response.socket.once("close", () => done()))
          let text = ""
          const body = new Promise<string>((done) => {
            response.on("data", (chunk: Buffer) => {
              text += chunk.toString("utf8")
            })
            response.on("end", () => done(text))
          })
          resolve({ body, socketClosed })
        })
        outgoing.on("error", reject)
        outgoing.end()
      })
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      end()
      expect(await body).toBe("data: 1\n\ndata: 2\n\n")
      // the server closed the connection the agent would have kept
      await socketClosed
      await closed
    } finally {
      agent.destroy()
      server.closeAllConnections()
    }
  })

  describe("stalled clients and the shutdown's grace (Options)", () => {
    /** Writes a stream of 64 KiB events until the client leaves, waiting for `'drain'` as the gateway does. */
    const endless = (response: ServerResponse) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      const piece = `data: ${"Z".repeat(64 * 1024)}\n\n`
      const write = () => {
        while (!response.destroyed) {
          if (!response.write(piece)) return void response.once("drain", write)
        }
      }
      write()
    }
    /** A raw request on a connection whose client never reads; resolves with the socket once the answer began. */
    const neverReads = (port: number, path: string) =>
      new Promise<Socket>((resolve) => {
        const socket = connect(port, "127.0.0.1", () => {
          socket.pause()
          socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
          resolve(socket)
        })
        socket.on("error", () => undefined)
      })
    const closedWithin = (socket: Socket, millis: number) =>
      new Promise<void>((resolve, reject) => {
        if (socket.destroyed) return resolve()
        const open = setTimeout(() => reject(new Error(`the connection is still open after ${millis} ms`)), millis)
        socket.once("close", () => {
          clearTimeout(open)
          resolve()
        })
        // a paused socket sees the server's FIN or reset only once it reads
        socket.resume()
        socket.on("data", () => undefined)
      })

    it("a client that reads nothing of a stream has its connection destroyed after the stall timeout (its handler sees the response close unfinished); a client that reads and a response that waits are not cut", async () => {
      const stalled: Array<string> = []
      // resolved as the server cuts a stalled client: the client must not read before that (it would drain)
      let cut: () => void = () => undefined
      const cutDone = new Promise<void>((resolve) => (cut = resolve))
      const server = ClosingServer.make(undefined, {
        stallTimeoutMillis: 1000,
        onStall: (request) => {
          stalled.push(request.url!)
          cut()
        }
      })
      const unfinished: Array<string> = []
      server.on("request", (request: IncomingMessage, response: ServerResponse) => {
        response.on("close", () => {
          if (!response.writableEnded) unfinished.push(request.url!)
        })
        if (request.url === "/wait") setTimeout(() => response.end("late answer"), 3000)
        else if (request.url === "/read") {
          // 8 MiB, more than the socket buffers hold: the client's reading drains them
          response.writeHead(200)
          let left = 128
          const write = () => {
            while (left > 0) {
              left--
              if (!response.write(Buffer.alloc(64 * 1024, 65))) return void response.once("drain", write)
            }
            response.end()
          }
          write()
        } else endless(response)
      })
      const port = await listening(server)
      try {
        const stuck = await neverReads(port, "/stuck")
        const waiting = fetch(`http://127.0.0.1:${port}/wait`).then((answer) => answer.text())
        const read = fetch(`http://127.0.0.1:${port}/read`).then(async (answer) => (await answer.arrayBuffer()).byteLength)
        expect(await read).toBe(128 * 64 * 1024)
        expect(await waiting).toBe("late answer")
        await Promise.race([
          cutDone,
          new Promise((_, reject) => setTimeout(() => reject(new Error("the stalled client was not cut")), CLOSED_WITHIN_MILLIS))
        ])
        await closedWithin(stuck, CLOSED_WITHIN_MILLIS)
        expect(stalled).toStrictEqual(["/stuck"])
        expect(unfinished).toStrictEqual(["/stuck"])
      } finally {
        stop(server)
      }
    })

    it("close() completes after the shutdown's grace though a client reads nothing of its answer: its connection is destroyed", async () => {
      const server = ClosingServer.make(undefined, { shutdownGraceMillis: 500 })
      server.on("request", (_request: IncomingMessage, response: ServerResponse) => endless(response))
      const port = await listening(server)
      try {
        const stuck = await neverReads(port, "/stuck")
        // the answer began, and fills the buffers
        await new Promise((resolve) => setTimeout(resolve, 300))
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        await Promise.race([
          closed,
          new Promise((_, reject) => setTimeout(() => reject(new Error("close() did not complete")), CLOSED_WITHIN_MILLIS))
        ])
        await closedWithin(stuck, CLOSED_WITHIN_MILLIS)
      } finally {
        stop(server)
      }
    })
  })

  it("timeoutsOf: headers within 30 s or the body timeout when shorter; the whole request past the gateway's body timeout", () => {
    expect(ClosingServer.timeoutsOf(120)).toEqual({ headersTimeoutMillis: 30_000, requestTimeoutMillis: 151_000 })
    expect(ClosingServer.timeoutsOf(5)).toEqual({ headersTimeoutMillis: 5_000, requestTimeoutMillis: 11_000 })
    // Node's own 300 s bound on a request would have cut a longer body timeout short
    expect(ClosingServer.timeoutsOf(600).requestTimeoutMillis).toBeGreaterThan(600_000)
    const server = ClosingServer.make(ClosingServer.timeoutsOf(2_147_483))
    expect([server.headersTimeout, server.requestTimeout]).toEqual([30_000, 2_147_514_000])
  })

  describe("the headers bound", () => {
    it("a connection that sends nothing is answered a 408 in OpenAI's shape and closed at the bound", async () => {
      // Node's own clock (set as the connection's parser is set up); its 408 had no body
      const server = ClosingServer.make(SHORT)
      const port = await listening(server)
      try {
        expect(openAIError(await exchange(port, ""), 408)).toEqual({
          message: "No request arrived on the connection within 0.3 seconds.",
          type: "invalid_request_error",
          param: null,
          code: "request_timeout"
        })
      } finally {
        stop(server)
      }
    })

    it("a connection that sent part of its first request gets a 408 in OpenAI's shape", async () => {
      const server = ClosingServer.make(SHORT)
      const port = await listening(server)
      try {
        const error = openAIError(await exchange(port, "POST /v1/responses HTTP/1.1\r\nHost: x\r\n"), 408)
        expect(error).toEqual({
          message: "The request's headers did not arrive whole within 0.3 seconds.",
          type: "invalid_request_error",
          param: null,
          code: "request_timeout"
        })
      } finally {
        stop(server)
      }
    })

    it("a request waiting past the bound, a stream longer than it and keep-alive between requests are not cut", async () => {
      const server = ClosingServer.make(SHORT)
      let connections = 0
      server.on("connection", () => connections++)
      server.on("request", (incoming, response) => {
        if (incoming.url === "/slow") {
          // an upstream slower than the bound
          setTimeout(() => response.end("slow answer"), 3 * SHORT.headersTimeoutMillis)
        } else {
          response.writeHead(200, { "content-type": "text/event-stream" })
          let sent = 0
          const tick = setInterval(() => {
            response.write(`data: ${sent}\n\n`)
            if (++sent === 6) {
              clearInterval(tick)
              response.end()
            }
          }, SHORT.headersTimeoutMillis / 2)
        }
      })
      const port = await listening(server)
      const agent = new Agent({ keepAlive: true, maxSockets: 1 })
      const fetchText = (path: string) =>
        new Promise<string>((resolve, reject) => {
          get({ port, host: "127.0.0.1", path, agent }, (response) => {
            let text = ""
            response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
            response.on("end", () => resolve(text))
            response.on("error", reject)
          }).on("error", reject)
        })
      try {
        expect(await fetchText("/slow")).toBe("slow answer")
        // idle between two requests for longer than the bound: Node's keep-alive timeout (5 s) applies
        await new Promise((resolve) => setTimeout(resolve, 2 * SHORT.headersTimeoutMillis))
        expect(await fetchText("/stream")).toBe([0, 1, 2, 3, 4, 5].map((n) => `data: ${n}\n\n`).join(""))
        expect(connections).toBe(1)
      } finally {
        agent.destroy()
        stop(server)
      }
    })
  })

  describe("idle between requests (keep-alive timeout 300 ms)", () => {
    /** A server of the short bounds whose keep-alive timeout is 300 ms too, answering `ok` (or `url` to a request whose path is not `/`). */
    const idleServer = () => {
      const server = ClosingServer.make(SHORT)
      server.keepAliveTimeout = SHORT.headersTimeoutMillis
      server.on("request", (incoming, response) => {
        incoming.resume()
        incoming.on("end", () => response.end(incoming.url === "/" ? "ok" : incoming.url))
      })
      return server
    }

    it("a client writing \\r\\n every 100 ms after its answer is closed (Node's keep-alive timer was reset by each byte)", async () => {
      const server = idleServer()
      const port = await listening(server)
      const socket = connect(port, "127.0.0.1")
      const breaks = setInterval(() => {
        if (!socket.destroyed) socket.write("\r\n")
      }, SHORT.headersTimeoutMillis / 3)
      try {
        let text = ""
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
        socket.on("error", () => undefined)
        const closed = new Promise<void>((resolve, reject) => {
          const open = setTimeout(() => reject(new Error(`still open after ${CLOSED_WITHIN_MILLIS} ms`)), CLOSED_WITHIN_MILLIS)
          socket.once("close", () => {
            clearTimeout(open)
            resolve()
          })
        })
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await closed
        // one answer, and the connection closed without another (the line breaks began no request)
        expect(parseAnswer(text)).toMatchObject({ status: 200, body: "ok" })
        expect(text.split("HTTP/1.1 ").length).toBe(2)
      } finally {
        clearInterval(breaks)
        socket.destroy()
        stop(server)
      }
    })

    it("a request whose headers began before the idle bound and end after it is answered (the headers bound covers it)", async () => {
      // a headers bound well past the idle bound: only the idle bound could cut the second request
      const server = ClosingServer.make({ headersTimeoutMillis: 5_000, requestTimeoutMillis: 10_000 })
      server.keepAliveTimeout = SHORT.headersTimeoutMillis
      server.on("request", (incoming, response) => {
        incoming.resume()
        incoming.on("end", () => response.end(incoming.url))
      })
      const port = await listening(server)
      const socket = connect(port, "127.0.0.1")
      try {
        let text = ""
        let onData = () => undefined as void
        socket.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8")
          onData()
        })
        const answers = () => text.split("HTTP/1.1 ").slice(1).map((answer) => parseAnswer(`HTTP/1.1 ${answer}`).body)
        const answered = (path: string) =>
          new Promise<void>((resolve, reject) => {
            onData = () => {
              if (text.endsWith(path)) resolve()
            }
            socket.once("close", () => reject(new Error(`the connection closed before the answer to ${path}: ${JSON.stringify(text)}`)))
          })
        const first = answered("/a")
        socket.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        await first
        // the second request's first line at once, the rest after three idle bounds
        socket.write("GET /b HTTP/1.1\r\n")
        await new Promise((resolve) => setTimeout(resolve, 3 * SHORT.headersTimeoutMillis))
        const second = answered("/b")
        socket.write("Host: x\r\n\r\n")
        await second
        expect(answers()).toEqual(["/a", "/b"])
      } finally {
        socket.destroy()
        stop(server)
      }
    })
  })

  describe("a request Node's parser refuses is answered in OpenAI's shape (Node's answer had no body)", () => {
    const cases: ReadonlyArray<{ name: string; bytes: string; status: number; code: string; message: string }> = [
      {
        name: "a garbage request line",
        bytes: "GARBAGE\r\n\r\n",
        status: 400,
        code: "invalid_http_request",
        message: "The request could not be read as HTTP/1.1 (HPE_INVALID_METHOD: Invalid method encountered)."
      },
      {
        name: "a 100 KB header",
        bytes: `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"A".repeat(100_000)}\r\n\r\n`,
        status: 431,
        code: "request_headers_too_large",
        message: "The request's headers are larger than 16384 bytes."
      },
      {
        name: "Transfer-Encoding beside Content-Length",
        bytes: "POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
        status: 400,
        code: "invalid_http_request",
        message:
          "The request could not be read as HTTP/1.1 (HPE_INVALID_CONTENT_LENGTH: Content-Length can't be present with Transfer-Encoding)."
      },
      {
        name: "a Content-Length past 2^64",
        bytes: "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        status: 400,
        code: "invalid_http_request",
        message: "The request could not be read as HTTP/1.1 (HPE_INVALID_CONTENT_LENGTH: Content-Length overflow)."
      }
    ]
    for (const { name, bytes, status, code, message } of cases) {
      it(name, async () => {
        // without timeouts too: the answer does not depend on the bounds
        const server = ClosingServer.make()
        const port = await listening(server)
        try {
          expect(openAIError(await exchange(port, bytes), status)).toEqual({
            message,
            type: "invalid_request_error",
            param: null,
            code
          })
        } finally {
          stop(server)
        }
      })
    }

    it("headers slower than Node's headers bound (a first byte in time) get a 408 naming the bound", async () => {
      // on a kept-alive connection: the clock starts at the second request's first byte
      const server = ClosingServer.make(SHORT)
      const port = await listening(server)
      try {
        const socket = connect(port, "127.0.0.1")
        await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
        let text = ""
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
        const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
        // a first request in time, then a second one that stops part-way
        socket.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        server.once("request", (_incoming, response) => {
          response.end("a")
          socket.write("GET /b HTTP/1.1\r\nHost: x\r\n")
        })
        await closed
        const second = text.slice(text.indexOf("HTTP/1.1 ", 1))
        expect(openAIError(second, 408).message).toBe("The request's headers did not arrive whole within 0.3 seconds.")
      } finally {
        stop(server)
      }
    })

    it("clientErrorAnswer: a socket error is not answered; a client ending mid-request, a timeout on a whole request", () => {
      const bounds = {
        maxHeaderSize: 16384,
        headersTimeoutMillis: 30_000,
        requestTimeoutMillis: 151_000,
        headersWhole: false,
        sentNothing: false
      }
      const error = (code: string, reason?: string) => Object.assign(new Error("x"), { code, reason })
      expect(ClosingServer.clientErrorAnswer(error("ECONNRESET"), bounds)).toBeUndefined()
      expect(ClosingServer.clientErrorAnswer(error("HPE_INVALID_EOF_STATE", "Invalid EOF state"), bounds)).toEqual({
        status: 400,
        error: {
          message: "The connection was ended before the request was whole (HPE_INVALID_EOF_STATE).",
          type: "invalid_request_error",
          param: null,
          code: "invalid_http_request"
        }
      })
      expect(ClosingServer.clientErrorAnswer(error("ERR_HTTP_REQUEST_TIMEOUT"), { ...bounds, headersWhole: true })?.error.message)
        .toBe("The request did not arrive whole within 151 seconds.")
      expect(ClosingServer.clientErrorAnswer(error("HPE_CHUNK_EXTENSIONS_OVERFLOW", "Chunk extensions overflow"), bounds)?.status)
        .toBe(413)
    })
  })
})
