/**
 * `effect-responses request`, run as a user runs it: the body on stdout, one error line naming the input.
 */
import { Request } from "@effect-responses/cli"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Cli from "./run.js"

const prompt = {
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", parts: [{ type: "text", text: "What is (12 + 7) * 3 * 10?" }] }
  ]
}

describe("effect-responses request (the executable)", () => {
  it("request - --stream --model M prints the body the library builds, pretty-printed, and exits 0", async () => {
    const text = JSON.stringify(prompt)
    const expected = await Effect.runPromise(Request.requestBody(text, "<stdin>", { model: "m-1", stream: true }))
    const result = await Cli.run(["request", "-", "--stream", "--model", "m-1"], { input: text })
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout).toBe(`${JSON.stringify(expected, null, 2)}\n`)
    expect(expected).toMatchObject({ model: "m-1", stream: true })
  })

  it("request FILE with a bad field: one line naming the file and the field's path, exit 1", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "effect-responses-request-")), "prompt.json")
    writeFileSync(file, JSON.stringify({ messages: [{ role: "user", parts: [{ type: "text" }] }] }))
    const result = await Cli.run(["request", file])
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe(`effect-responses: ${file}: not a prompt: messages[0].parts[0].text: is missing\n`)
  })

  it("request of a prompt without messages: nothing to ask, one line, exit 1", async () => {
    const result = await Cli.run(["request", "-"], { input: "{\"messages\":[]}" })
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe("effect-responses: <stdin>: invalid prompt: no messages, nothing to ask\n")
  })

  it("request shows the pairing check: a call without its result dropped with a warning on stderr, exit 0", async () => {
    const text = JSON.stringify({
      messages: [
        { role: "user", parts: [{ type: "text", text: "What is 12 + 7?" }] },
        {
          role: "assistant",
          parts: [{ type: "tool_call", callId: "call_unanswered_1", name: "calculator", arguments: "{\"a\":12,\"b\":7,\"op\":\"add\"}" }]
        },
        { role: "user", parts: [{ type: "text", text: "Never mind." }] }
      ]
    })
    const result = await Cli.run(["request", "-"], { input: text })
    expect(result.status).toBe(0)
    expect(result.stderr).toMatch(
      /^effect-responses: warning: input\[1\]: function_call calculator \(call call_unanswered_1\) dropped: it has no output .*\n$/
    )
    const body = JSON.parse(result.stdout) as { readonly input: ReadonlyArray<{ readonly type: string }> }
    expect(body.input.map((item) => item.type)).toStrictEqual(["message", "message"])
  })

  it("request shows the pairing check: a result answering no call is refused in one line naming it, exit 1", async () => {
    const text = JSON.stringify({
      messages: [
        { role: "user", parts: [{ type: "text", text: "What is 12 + 7?" }] },
        { role: "tool", results: [{ type: "tool_result", callId: "call_orphan_1", name: "calculator", output: "19" }] }
      ]
    })
    const result = await Cli.run(["request", "-"], { input: text })
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(
      /^effect-responses: <stdin>: invalid prompt: input\[1\]: the function_call_output for call call_orphan_1 answers no earlier tool call .*\n$/
    )
  })
})
