/**
 * `effect-responses serve`, run as a user runs it (one spawned process: they cost about 2 s each): it
 * prints where it listens, answers `/health`, and demands the key named by `--api-key-env`; a stream in
 * flight when it is stopped ends with `response.failed` naming the shutdown; a client that half-closes its
 * connection after a `Connection: close` request still gets the whole answer.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createServer } from "node:http"
import { connect } from "node:net"
import * as Cli from "./run.js"
import { bin } from "./run.js"

describe("effect-responses serve (the executable)", () => {
  it("listens on a loopback port, answers /health, and answers 401 without the key", async () => {
    const child = spawn(
      process.execPath,
      [bin, "serve", "--upstream", "http://127.0.0.1:9/v1", "--port", "0", "--api-key-env", "GATEWAY_TEST_KEY"],
      { env: { ...process.env, GATEWAY_TEST_KEY: "sekret" }, stdio: ["ignore", "pipe", "pipe"] }
    )
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = ""
        let err = ""
        child.stdout.on("data", (data: Buffer) => {
          out += data.toString("utf8")
          if (out.includes("\n")) resolve(out.split("\n")[0]!)
        })
        child.stderr.on("data", (data: Buffer) => {
          err += data.toString("utf8")
        })
        child.on("exit", (code) => reject(new Error(`exited with ${code}: ${err}`)))
      })
      const match = /^effect-responses: serving (http:\/\/127\.0\.0\.1:\d+\/v1) -> http:\/\/127\.0\.0\.1:9\/v1$/.exec(line)
      expect(match, line).not.toBeNull()
      const base = match![1]!
      const health = await fetch(base.replace(/\/v1$/, "/health"))
      expect(await health.json()).toEqual({ status: "ok" })
      const denied = await fetch(`${base}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", input: "hi" })
      })
      expect(denied.status).toBe(401)
      expect((await denied.json()).error.code).toBe("invalid_api_key")
    } finally {
      child.kill("SIGTERM")
    }
  }, 60_000)

  it("an --api-key-env variable set to \"\": one error line, exit 1, and no \"serving\" line (checked before binding)", async () => {
    const result = await Cli.run(["serve", "--upstream", "http://127.0.0.1:9/v1", "--port", "0", "--api-key-env", "EMPTY_KEY"], {
      env: { EMPTY_KEY: "" }
    })
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(/^effect-responses: the gateway's API key is empty .*\n$/)
  })

  it("an --upstream without /v1 that answers 404: the URL tried and the hint are logged; SIGTERM ends it with 143; nothing reaches the upstream before the client's request", async () => {
    const tried: Array<string> = []
    const upstream = createServer((req, res) => {
      tried.push(`${req.method} ${req.url}`)
      req.resume()
      res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found")
    })
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
    const base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`
    const running = Cli.start(["serve", "--upstream", base, "--port", "0"])
    try {
      await running.waitFor(/serving (http:\/\/\S+)\/v1/)
      // the start-up warm-up (two requests to a loopback upstream of its own) reached nothing and logged nothing
      expect(tried).toStrictEqual([])
      expect(running.output().stderr).toBe("")
      const gateway = /serving (http:\/\/\S+\/v1)/.exec(running.output().stdout)![1]!
      const answer = await fetch(`${gateway}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", input: "hi", stream: false })
      })
      expect(answer.status).toBe(404)
      expect(tried).toStrictEqual(["POST /chat/completions"])
      running.child.kill("SIGTERM")
      const result = await running.done
      expect(result.status).toBe(143)
      expect(result.stderr).toContain(
        `effect-responses: warning: the upstream answered 404 to POST ${base}/chat/completions: --upstream has no /v1: try ${base}/v1\n`
      )
    } finally {
      running.child.kill("SIGKILL")
      upstream.closeAllConnections()
      upstream.close()
    }
  })

  it("an upstream 404 naming the model (OpenAI's model_not_found): the warning says the upstream does not know the model, not to check --upstream", async () => {
    const upstream = createServer((req, res) => {
      req.resume()
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({
        error: { message: "The model `nope` does not exist or you do not have access to it.", type: "invalid_request_error", param: null, code: "model_not_found" }
      }))
    })
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
    const base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`
    const running = Cli.start(["serve", "--upstream", base, "--port", "0"])
    try {
      await running.waitFor(/serving (http:\/\/\S+)\/v1/)
      const gateway = /serving (http:\/\/\S+\/v1)/.exec(running.output().stdout)![1]!
      const answer = await fetch(`${gateway}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "nope", input: "hi", stream: false })
      })
      expect(answer.status).toBe(404)
      running.child.kill("SIGTERM")
      const result = await running.done
      expect(result.stderr).toContain(
        `effect-responses: warning: the upstream answered 404 to POST ${base}/chat/completions: it does not know the request's model (The model \`nope\` does not exist or you do not have access to it.)\n`
      )
      expect(result.stderr).not.toContain("check --upstream")
    } finally {
      running.child.kill("SIGKILL")
      upstream.closeAllConnections()
      upstream.close()
    }
  })

  it("chat against the gateway with a base URL without /v1: the 404 carries one hint, the gateway's (the README's line)", async () => {
    const running = Cli.start(["serve", "--upstream", "http://127.0.0.1:9/v1", "--port", "0"])
    try {
      await running.waitFor(/serving (http:\/\/\S+)\/v1/)
      const root = /serving (http:\/\/\S+)\/v1/.exec(running.output().stdout)![1]!
      const chat = await Cli.run(["chat", "hi"], { env: { OPENAI_BASE_URL: root } })
      expect(chat.status).toBe(1)
      expect(chat.stdout).toBe("")
      expect(chat.stderr).toBe(
        "effect-responses: HTTP 404: Invalid URL (POST /responses): try /v1/responses (the gateway's base URL ends in /v1) (invalid_request_error)\n"
      )
    } finally {
      running.child.kill("SIGKILL")
    }
  })

  it("SIGTERM with requests in flight: a stream ends with response.failed server_shutting_down, a whole answer is a 503 server_shutting_down (not upstream errors), exit 143", async () => {
    // streamed: the first delta, then nothing more; whole: no answer at all
    const upstream = createServer((req, res) => {
      let body = ""
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
      req.on("end", () => {
        if (JSON.parse(body).stream !== true) return
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`data: ${JSON.stringify({ id: "chatcmpl-s", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "partial" } }] })}\n\n`)
      })
    })
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
    const running = Cli.start(["serve", "--upstream", `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`, "--port", "0"])
    try {
      await running.waitFor(/serving (http:\/\/\S+)\/v1/)
      const gateway = /serving (http:\/\/\S+\/v1)/.exec(running.output().stdout)![1]!
      const post = (stream: boolean) =>
        fetch(`${gateway}/responses`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", input: "hi", stream })
        })
      const whole = post(false)
      const reader = (await post(true)).body!.pipeThrough(new TextDecoderStream()).getReader()
      let text = ""
      while (!text.includes("response.output_text.delta")) text += (await reader.read()).value ?? ""
      running.child.kill("SIGTERM")
      for (let read = await reader.read(); !read.done; read = await reader.read()) text += read.value
      const frames = text.split("\n\n").filter((frame) => frame.trim() !== "")
      const last = JSON.parse(frames.at(-1)!.slice(frames.at(-1)!.indexOf("data: ") + 6))
      const shuttingDown = "the gateway is shutting down: the response was cut off; send the request again"
      expect(last.type).toBe("response.failed")
      expect(last.response.error).toEqual({ code: "server_shutting_down", message: shuttingDown })
      // the text that arrived went out as its delta; the unfinished message is not closed nor in `output`
      const deltas = frames.filter((frame) => frame.startsWith("event: response.output_text.delta\n"))
      expect(deltas.map((frame) => JSON.parse(frame.slice(frame.indexOf("data: ") + 6)).delta)).toEqual(["partial"])
      expect(text).not.toContain("response.output_text.done")
      expect(last.response.output).toEqual([])
      const answer = await whole
      expect(answer.status).toBe(503)
      expect((await answer.json()).error).toMatchObject({ code: "server_shutting_down", message: shuttingDown })
      const result = await running.done
      expect(result.status).toBe(143)
      expect(result.stderr).not.toContain("upstream error")
    } finally {
      running.child.kill("SIGKILL")
      upstream.closeAllConnections()
      upstream.close()
    }
  })

  it("SIGTERM with --upstream-retries 3: a request whose attempt is in flight and one waiting out a retry-after both get their 503 server_shutting_down at once, no retry is made, upstream_attempts=1 each, exit 143", async () => {
    // "stall": never answers; "busy": 503 asking for a 50 s wait, which the gateway's retry waits for
    const received: Array<string> = []
    const upstream = createServer((req, res) => {
      let body = ""
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
      req.on("end", () => {
        const model = JSON.parse(body).model
        received.push(model)
        if (model === "busy") {
          res.writeHead(503, { "content-type": "application/json", "retry-after": "50" })
          res.end(JSON.stringify({ error: { message: "overloaded", type: "server_error", code: null } }))
        }
      })
    })
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
    const running = Cli.start([
      "serve",
      "--upstream",
      `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`,
      "--port",
      "0",
      "--upstream-retries",
      "3",
      "--log-level",
      "debug"
    ])
    try {
      await running.waitFor(/serving (http:\/\/\S+)\/v1/)
      const gateway = /serving (http:\/\/\S+\/v1)/.exec(running.output().stdout)![1]!
      const post = (model: string, stream: boolean) =>
        fetch(`${gateway}/responses`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model, input: "hi", stream })
        })
      const stalled = post("stall", true)
      const busy = post("busy", false)
      // both calls went out, and the gateway waits out the 503's retry-after
      while (received.length < 2 || !running.output().stderr.includes("retry 1 in 50s")) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      running.child.kill("SIGTERM")
      for (const answer of [await stalled, await busy]) {
        expect(answer.status).toBe(503)
        expect((await answer.json()).error).toMatchObject({ code: "server_shutting_down" })
      }
      const result = await running.done
      expect(result.status).toBe(143)
      expect(received.sort()).toStrictEqual(["busy", "stall"])
      // the attempts sent, not the retries the shutdown would have made on a closed client
      const access = result.stderr.split("\n").filter((line) => line.includes("access: POST /v1/responses"))
      expect(access).toHaveLength(2)
      for (const line of access) expect(line).toContain("upstream_attempts=1 ")
      expect(result.stderr).not.toContain("retry 2 in")
    } finally {
      running.child.kill("SIGKILL")
      upstream.closeAllConnections()
      upstream.close()
    }
  })

  it("a client that reads nothing of its stream: its connection is closed after --client-stall-timeout and its upstream call aborted; on SIGTERM such a client holds the process only --shutdown-grace seconds, exit 143", async () => {
    // an endless stream of 50 KB deltas, written as fast as the gateway reads them
    const delta = `data: ${JSON.stringify({ id: "chatcmpl-e", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "Z".repeat(50_000) } }] })}\n\n`
    let aborted = 0
    const upstream = createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        const write = () => {
          while (!res.destroyed) {
            if (!res.write(delta)) return void res.once("drain", write)
          }
        }
        res.on("close", () => {
          if (!res.writableFinished) aborted++
        })
        write()
      })
    })
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
    const base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`
    // a raw client that sends its request and never reads; resolves once the gateway has closed its connection
    const neverReads = (port: number) => {
      const body = JSON.stringify({ model: "m", input: "hi", stream: true })
      const socket = connect(port, "127.0.0.1", () => {
        socket.pause()
        socket.write(`POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
      })
      socket.on("error", () => undefined)
      return socket
    }
    const portOf = (running: Cli.Running) => Number(/serving http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(running.output().stdout)![1])
    const stalling = Cli.start(["serve", "--upstream", base, "--port", "0", "--client-stall-timeout", "1", "--log-level", "info"])
    try {
      await stalling.waitFor(/serving (http:\/\/\S+)\/v1/)
      const socket = neverReads(portOf(stalling))
      while (aborted === 0) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(stalling.output().stderr).toContain(
        "effect-responses: warning: a client (127.0.0.1) accepted none of its response to POST /v1/responses for 1 s: its connection is closed and its upstream call aborted (--client-stall-timeout)\n"
      )
      expect(stalling.output().stderr).toMatch(/access: POST \/v1\/responses \d+ .* outcome=client_closed/)
      socket.destroy()
      stalling.child.kill("SIGTERM")
      expect((await stalling.done).status).toBe(143)
    } finally {
      stalling.child.kill("SIGKILL")
    }
    // on shutdown: three clients that read nothing, a stall timeout far away; the grace (1 s) ends their connections
    const running = Cli.start(["serve", "--upstream", base, "--port", "0", "--client-stall-timeout", "600", "--shutdown-grace", "1"])
    try {
      await running.waitFor(/serving (http:\/\/\S+)\/v1/)
      const sockets = [0, 1, 2].map(() => neverReads(portOf(running)))
      const closed = sockets.map((socket) => new Promise((resolve) => socket.once("close", resolve)))
      // the gateway's buffers towards the clients are full: it stopped reading the upstream
      await new Promise((resolve) => setTimeout(resolve, 1500))
      running.child.kill("SIGTERM")
      const result = await running.done
      expect(result.status).toBe(143)
      for (const socket of sockets) socket.resume()
      await Promise.all(closed)
    } finally {
      running.child.kill("SIGKILL")
      upstream.closeAllConnections()
      upstream.close()
    }
  })

  it("a client that half-closes after its Connection: close request (FIN, still reading) gets the whole answer, streamed and whole; a FIN on a kept-alive connection still cancels the upstream call", async () => {
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "chatcmpl-h", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    let cancelled = 0
    // answers once the gateway has seen the client's FIN: the request is in flight when the client half-closes
    const upstream = createServer((req, res) => {
      let body = ""
      req.on("data", (data: Buffer) => (body += data.toString("utf8")))
      res.on("close", () => {
        if (!res.writableFinished) cancelled++
      })
      req.on("end", () =>
        setTimeout(() => {
          if (res.destroyed) return
          if (JSON.parse(body).stream === true) {
            res.writeHead(200, { "content-type": "text/event-stream" })
            res.end(chunk({ role: "assistant", content: "half" }) + chunk({ content: "-open" }) + chunk({}, "stop") + "data: [DONE]\n\n")
          } else {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify({ id: "chatcmpl-h", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "half-open" }, finish_reason: "stop" }] }))
          }
        }, 300))
    })
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
    const running = Cli.start(["serve", "--upstream", `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`, "--port", "0"])
    try {
      await running.waitFor(/serving (http:\/\/\S+)\/v1/)
      const port = Number(/serving http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(running.output().stdout)![1])
      // the request and the FIN in one go, then read until the gateway closes the connection
      const halfClose = (stream: boolean, connection: "close" | "keep-alive") =>
        new Promise<string>((resolve, reject) => {
          const body = JSON.stringify({ model: "m", input: "hi", stream })
          const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true }, () =>
            socket.end(
              `POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: ${connection}\r\nContent-Length: ${body.length}\r\n\r\n${body}`
            ))
          let text = ""
          socket.on("data", (data: Buffer) => (text += data.toString("utf8")))
          socket.on("error", reject)
          socket.on("close", () => resolve(text))
        })
      const streamed = await halfClose(true, "close")
      expect(streamed.split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
      expect(streamed).toContain("\"delta\":\"-open\"")
      expect(streamed).toContain("event: response.completed")
      const whole = await halfClose(false, "close")
      expect(whole.split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
      expect(whole).toContain("\"text\":\"half-open\"")
      expect(cancelled).toBe(0)
      // a pooled connection's FIN before its answer: the client gave up, the upstream call is cancelled
      expect(await halfClose(false, "keep-alive")).toBe("")
      for (let i = 0; i < 100 && cancelled === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      expect(cancelled).toBe(1)
    } finally {
      running.child.kill("SIGKILL")
      upstream.closeAllConnections()
      upstream.close()
    }
  })
})
