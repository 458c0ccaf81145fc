/**
 * `effect-responses serve --store`, run as a user runs it: a streamed response stored in a SQLite file by
 * one gateway process is continued by `previous_response_id` through a second process on the same file (a
 * restart), in front of a loopback Chat Completions server replaying a recording; and the store flags'
 * parsing and errors.
 */
import { Serve } from "@effect-responses/cli"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { fixturePath } from "./fixtures.js"

const bin = fileURLToPath(new URL("../bin/effect-responses.mjs", import.meta.url))
const recording = readFileSync(fixturePath("chat-sse/pai-chat-gpt4omini-text-usage.sse"), "utf8")

/** The recorded answer's text (the content deltas joined). */
const recordedText = recording.split("\n").filter((line) => line.startsWith("data: {")).map((line) =>
  (JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string | null } }> }).choices[0]?.delta.content ?? ""
).join("")

/** A Chat Completions server answering every request with the recording, keeping each request body. */
const upstream = async () => {
  const bodies: Array<{ readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }> }> = []
  const server: Server = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
    request.on("end", () => {
      bodies.push(JSON.parse(body))
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.end(recording)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { bodies, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` }
}

/** Starts `serve` with `args`; the base URL it prints, and a way to stop it. */
const serve = async (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] })
  const line = await new Promise<string>((resolve, reject) => {
    let out = ""
    let err = ""
    child.stdout.on("data", (data: Buffer) => {
      out += data.toString("utf8")
      if (out.includes("\n")) resolve(out.split("\n")[0]!)
    })
    child.stderr.on("data", (data: Buffer) => (err += data.toString("utf8")))
    child.on("exit", (code) => reject(new Error(`exited with ${code}: ${err}`)))
  })
  const match = /serving (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(line)
  if (match === null) throw new Error(line)
  const stop = () =>
    new Promise<void>((resolve) => {
      child.once("exit", () => resolve())
      child.kill("SIGTERM")
    })
  return { base: match[1]!, stop }
}

/** Posts a streamed request; the terminal event's response. */
const stream = async (base: string, body: unknown) => {
  const response = await fetch(`${base}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", stream: true, ...(body as object) })
  })
  const text = await response.text()
  expect(response.status, text).toBe(200)
  const frames = text.split("\n\n").filter((frame) => frame.trim() !== "")
  const last = frames[frames.length - 1]!
  const data = JSON.parse(last.slice(last.indexOf("data: ") + 6)) as { type: string; response: { id: string; output_text?: string; output: Array<{ content: Array<{ text: string }> }> } }
  expect(data.type).toBe("response.completed")
  return data.response
}

describe("effect-responses serve --store", () => {
  it("sqlite: a response stored by one process is continued through the next one on the same file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "effect-responses-serve-store-"))
    const backend = await upstream()
    try {
      const args = ["--upstream", backend.url, "--store", `sqlite:${join(dir, "responses.db")}`, "--store-ttl", "1h"]
      const first = await serve(args)
      const stored = await stream(first.base, { input: "Say hello" }).finally(first.stop)
      expect(stored.output[0]!.content[0]!.text).toBe(recordedText)

      const second = await serve(args)
      try {
        const retrieved = await fetch(`${second.base}/responses/${stored.id}`).then((r) => r.json())
        expect(retrieved.id).toBe(stored.id)
        await stream(second.base, { input: "And again", previous_response_id: stored.id })
        expect(backend.bodies[1]!.messages).toEqual([
          { role: "user", content: "Say hello" },
          { role: "assistant", content: recordedText },
          { role: "user", content: "And again" }
        ])
        const unknown = await fetch(`${second.base}/responses`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", input: "x", previous_response_id: "resp_unknown" })
        })
        expect(unknown.status).toBe(400)
        expect((await unknown.json()).error).toEqual({
          message: "Previous response with id 'resp_unknown' not found.",
          type: "invalid_request_error",
          param: "previous_response_id",
          code: "previous_response_not_found"
        })
      } finally {
        await second.stop()
      }
    } finally {
      backend.server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)

  it("parses --store-ttl", () => {
    expect(Serve.parseTtl("30d")).toEqual(Duration.days(30))
    expect(Serve.parseTtl("12h")).toEqual(Duration.hours(12))
    expect(Serve.parseTtl("90m")).toEqual(Duration.minutes(90))
    expect(Serve.parseTtl("3600")).toEqual(Duration.seconds(3600))
    expect(Serve.parseTtl("0")).toBeUndefined()
    expect(Serve.parseTtl("soon")).toBeUndefined()
  })

  it.effect("refuses an unknown --store, a bad --store-ttl and a bad --store-max-responses", () =>
    Effect.gen(function*() {
      const message = (exit: Exit.Exit<unknown, { readonly message: string }>) =>
        Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.message : "no failure"
      expect(message(yield* Effect.exit(Serve.storeLayer({ store: "mysql:x" })))).toBe(
        "option --store: 'mysql:x' is not none, sqlite:PATH or postgres:URL"
      )
      expect(message(yield* Effect.exit(Serve.storeLayer({ store: "sqlite:/tmp/x.db", storeTtl: "later" })))).toContain(
        "option --store-ttl: 'later' is not a duration"
      )
      expect(message(yield* Effect.exit(Serve.storeLayer({ store: "sqlite:/tmp/x.db", storeMaxResponses: 0 })))).toBe(
        "option --store-max-responses: '0' is not a positive integer"
      )
      assert.isUndefined(yield* Serve.storeLayer({ store: "none" }))
      // a file the driver cannot open: the message names it
      const missing = yield* Serve.storeLayer({ store: "sqlite:/nonexistent-dir/x.db" })
      const opened = message(yield* Effect.exit(Effect.scoped(Layer.build(missing!))))
      expect(opened).toMatch(/^--store sqlite:\/nonexistent-dir\/x\.db: /)
      // checked without a store too: every option is checked before the port is bound
      expect(message(yield* Effect.exit(Serve.storeLayer({ storeTtl: "5x" })))).toContain("option --store-ttl: '5x' is not a duration")
      expect(message(yield* Effect.exit(Serve.storeLayer({ store: "none", storeMaxResponses: 0 })))).toBe(
        "option --store-max-responses: '0' is not a positive integer"
      )
    }))

  it.effect("--store postgres: a server that cannot be reached is named with the driver's cause, the URL without its password", () =>
    Effect.gen(function*() {
      // nothing listens on this loopback port (the test's own range): the connection is refused at once
      const store = yield* Serve.storeLayer({ store: "postgres:postgres://gateway:s3cret@127.0.0.1:42851/responses" })
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(store!)))
      const message = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.message : "no failure"
      expect(message).toBe(
        "--store postgres:postgres://gateway@127.0.0.1:42851/responses: the PostgreSQL store could not be reached: " +
          "PgClient: Failed to connect: connect ECONNREFUSED 127.0.0.1:42851"
      )
      // a value that is no URL is refused before any driver is loaded
      const garbage = yield* Effect.exit(Serve.storeLayer({ store: "postgres:garbage" }))
      expect(Exit.isFailure(garbage) && garbage.cause._tag === "Fail" ? garbage.cause.error.message : "no failure").toBe(
        "option --store: 'postgres:…' is not a PostgreSQL URL (postgres:postgres://USER@HOST:PORT/DATABASE, or postgres://…)"
      )
    }))
})
