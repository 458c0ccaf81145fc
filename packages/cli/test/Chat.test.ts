import { Chat, Demo, Render } from "@effect-responses/cli"
import { assert, describe, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { mkdirSync, rmSync } from "node:fs"
import { capturePath, fixturePath } from "./fixtures.js"

// No OPENAI_API_KEY, whatever the machine's environment holds: the embedded default.
const noKey = Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))

const chat = (target: Chat.Target, requestsOut: Option.Option<string> = Option.none()) =>
  Effect.gen(function*() {
    let out = ""
    const finalText = yield* Chat.run({
      prompt: Demo.defaultPrompt,
      target,
      model: Option.none(),
      requestsOut,
      write: (text) => Effect.sync(() => void (out += text)),
      style: Render.plain
    })
    return { finalText, out }
  })

/** A chat that fails: what it wrote, and the error. */
const chatFailing = (target: Chat.Target) =>
  Effect.gen(function*() {
    let out = ""
    const error = yield* Chat.run({
      prompt: Demo.defaultPrompt,
      target,
      model: Option.none(),
      requestsOut: Option.none(),
      write: (text) => Effect.sync(() => void (out += text)),
      style: Render.plain
    }).pipe(Effect.flip)
    return { error, out }
  })

describe("effect-responses chat", () => {
  it.scoped("the embedded default streams the recorded session to the terminal and writes the requests", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const target = yield* Chat.resolveTarget(Option.none()).pipe(noKey)
      assert.strictEqual(target._tag, "Replay")
      const { finalText, out } = yield* chat(target, Option.some(`${dir}/requests.jsonl`))
      assert.strictEqual(finalText, "The final result is **570**.")
      assert.strictEqual(
        out,
        [
          "reasoning: **Calculating step-by-step using calculator** I'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
          "tool call: calculator {\"a\":12,\"b\":7,\"op\":\"add\"}",
          "tool result: calculator -> 19",
          "tool call: calculator {\"a\":19,\"b\":3,\"op\":\"multiply\"}",
          "tool result: calculator -> 57",
          "tool call: calculator {\"a\":57,\"b\":10,\"op\":\"multiply\"}",
          "tool result: calculator -> 570",
          "answer: The final result is **570**.",
          "usage: input 914 (cached 0), output 92 (reasoning 0) tokens; 4 steps",
          ""
        ].join("\n")
      )
      const lines = (yield* fs.readFileString(`${dir}/requests.jsonl`)).trim().split("\n")
      assert.strictEqual(lines.length, 4)
      const second = JSON.parse(lines[1]!)
      assert.strictEqual(second.model, "gpt-5.1-codex-max")
      assert.deepStrictEqual(
        second.input.map((item: { type: string }) => item.type),
        ["message", "reasoning", "function_call", "function_call_output"]
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--replay FILE --requests-out OUT: the requests file shows each result the model was sent", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const target = yield* Chat.resolveTarget(
        Option.some(fixturePath("responses-sse/vai-openai-reasoning-encrypted-multistep.chunks.txt"))
      )
      assert.isTrue(target._tag === "Replay" && !target.embedded)
      const { finalText } = yield* chat(target, Option.some(`${dir}/out.jsonl`))
      assert.strictEqual(finalText, "The final result is **570**.")
      const requests = (yield* fs.readFileString(`${dir}/out.jsonl`)).trim().split("\n").map((l) => JSON.parse(l))
      const outputs = requests.map((r: { input: ReadonlyArray<{ type: string; output?: string }> }) =>
        r.input.filter((i) => i.type === "function_call_output").map((i) => i.output)
      )
      assert.deepStrictEqual(outputs, [[], ["19"], ["19", "57"], ["19", "57", "570"]])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--requests-out that fails mid-chat (the file replaced after it was opened): one warning naming it and the cause, the chat goes on", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const path = `${dir}/requests.jsonl`
      const target = yield* Chat.resolveTarget(Option.none()).pipe(noKey)
      const warnings: Array<string> = []
      let out = ""
      const finalText = yield* Chat.run({
        prompt: Demo.defaultPrompt,
        target,
        model: Option.none(),
        requestsOut: Option.some(path),
        write: (text) =>
          Effect.sync(() => {
            // after the first request was recorded: the file becomes a directory, which no append can open
            if (out === "" && text.startsWith("reasoning:")) {
              rmSync(path)
              mkdirSync(path)
            }
            out += text
          }),
        style: Render.plain
      }).pipe(
        Effect.provide(Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ logLevel, message }) => {
            if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message[0] : message))
          })
        ))
      )
      assert.strictEqual(finalText, "The final result is **570**.")
      assert.include(out, "tool result: calculator -> 570\nanswer: The final result is **570**.\n")
      assert.strictEqual(warnings.length, 1)
      assert.strictEqual(
        warnings[0],
        Chat.requestsOutFailed(path, 2, `EISDIR: illegal operation on a directory, open '${path}'`)
      )
      assert.strictEqual(
        warnings[0],
        `--requests-out ${path}: cannot write the body of request 2 (EISDIR: illegal operation on a directory, open ` +
          `'${path}'); the chat goes on, and this request and the later ones are not recorded (the file's last line may be cut)`
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("--replay plays any capture; a capture with no tool call ends after one step", () =>
    Effect.gen(function*() {
      const target = yield* Chat.resolveTarget(Option.some(fixturePath("responses-sse/vai-azure-text.chunks.txt")))
      const { finalText, out } = yield* chat(target)
      assert.isAbove(finalText.length, 0)
      assert.include(out, `answer: ${finalText}`)
      assert.match(out, /; 1 step\n$/)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("says what it needs when there is no recording and no API key", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Chat.resolveTarget(Option.none(), "/nonexistent/shared/x.chunks.txt").pipe(noKey))
      assert.strictEqual(error._tag, "ChatSetupError")
      assert.include(error.message, "/nonexistent/shared/x.chunks.txt is missing")
      assert.include(error.message, "--replay FILE")
      assert.include(error.message, "OPENAI_API_KEY")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("with OPENAI_API_KEY set, talks to the live API at OPENAI_BASE_URL", () =>
    Effect.gen(function*() {
      const target = yield* Chat.resolveTarget(Option.none()).pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["OPENAI_API_KEY", "sk-test"], ["OPENAI_BASE_URL", "http://127.0.0.1:1/v1"]]))
        )
      )
      assert.strictEqual(target._tag, "Live")
      assert.strictEqual(target._tag === "Live" && target.baseUrl, "http://127.0.0.1:1/v1")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a replayed snapshot that contradicts the deltas: the answer is written again, marked corrected", () =>
    Effect.gen(function*() {
      const target = yield* Chat.resolveTarget(
        Option.some(fixturePath("responses-sse/vai-azure-gpt54-multi-summary-encrypted.chunks.txt"))
      )
      const { out } = yield* chat(target)
      assert.include(out, "\nanswer: X\nanswer (corrected): Anonymized assistant response text.\n")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("chat-completions: parallel calls get one line each; a recording that runs out says so plainly", () =>
    Effect.gen(function*() {
      const target = yield* Chat.resolveTarget(
        Option.some(fixturePath("chat-sse/opy-chat-gpt4o-parallel-tool-calls.sse")),
        Demo.recordingPath,
        "chat-completions"
      )
      const { error, out } = yield* chatFailing(target)
      assert.deepStrictEqual(out.split("\n").filter((line) => line.startsWith("tool call:")), [
        "tool call: GetWeatherArgs {\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}",
        "tool call: get_stock_price {\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}"
      ])
      assert.strictEqual(error._tag, "ReplayEnded")
      assert.strictEqual(
        error.message,
        `the recording ${
          fixturePath("chat-sse/opy-chat-gpt4o-parallel-tool-calls.sse")
        } has no more responses: it holds 1 response, and the conversation went on after the model asked for the ` +
          "tools GetWeatherArgs, get_stock_price (this chat has only the calculator tool)"
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("--replay of a custom tool call: evaluate answers from its raw input, to the final answer", () =>
    Effect.gen(function*() {
      const target = yield* Chat.resolveTarget(Option.some(capturePath("custom-tool-evaluate.chunks.txt")))
      const { finalText, out } = yield* chat(target)
      assert.strictEqual(finalText, "(12 + 7) * 3 * 10 = **570**.")
      assert.strictEqual(
        out,
        [
          "tool call: evaluate (12 + 7) * 3 * 10",
          "tool result: evaluate -> 570",
          "answer: (12 + 7) * 3 * 10 = **570**.",
          "usage: input 288 (cached 0), output 45 (reasoning 0) tokens; 2 steps",
          ""
        ].join("\n")
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--replay of apply_patch calls: applied in a temporary directory, each outcome sent back", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const target = yield* Chat.resolveTarget(Option.some(capturePath("apply-patch-todo.chunks.txt")))
      const { finalText, out } = yield* chat(target, Option.some(`${dir}/requests.jsonl`))
      assert.strictEqual(finalText, "I created `notes/todo.md`, checked off milk and added eggs.")
      assert.deepStrictEqual(out.split("\n").filter((line) => line.startsWith("tool ")), [
        "tool result: apply_patch -> created notes/todo.md",
        "tool result: apply_patch -> updated notes/todo.md"
      ])
      assert.include(out, "apply_patch call: create_file notes/todo.md")
      const requests = (yield* fs.readFileString(`${dir}/requests.jsonl`)).trim().split("\n").map((line) => JSON.parse(line))
      assert.deepStrictEqual(requests.at(-1).input.at(-1), {
        type: "apply_patch_call_output",
        call_id: "call_apply_patch_2",
        status: "completed",
        output: "updated notes/todo.md"
      })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--replay of Codex's freeform apply_patch: each whole patch applied in a temporary directory, its log sent back", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const target = yield* Chat.resolveTarget(Option.some(capturePath("codex-apply-patch-freeform.chunks.txt")))
      const { finalText, out } = yield* chat(target, Option.some(`${dir}/requests.jsonl`))
      assert.strictEqual(finalText, "I created `notes/todo.md`, checked off milk and added eggs.")
      assert.deepStrictEqual(out.split("\n").filter((line) => line.startsWith("tool ") && !line.startsWith("tool call")), [
        "tool result: apply_patch -> created notes/todo.md",
        "tool result: apply_patch -> updated notes/todo.md"
      ])
      const requests = (yield* fs.readFileString(`${dir}/requests.jsonl`)).trim().split("\n").map((line) => JSON.parse(line))
      assert.deepStrictEqual(
        requests[0].tools.filter((tool: { name?: string }) => tool.name === "apply_patch").map((tool: { type: string }) => tool.type),
        ["custom"]
      )
      assert.deepStrictEqual(requests.at(-1).input.at(-1), {
        type: "custom_tool_call_output",
        call_id: "call_codex_patch_2",
        output: "updated notes/todo.md"
      })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--replay of Codex's freeform apply_patch: a patch that does not apply is the model's error to read", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      // the second response only: its update finds no notes/todo.md in the fresh directory
      const path = `${dir}/update-only.chunks.txt`
      const lines = (yield* fs.readFileString(capturePath("codex-apply-patch-freeform.chunks.txt"))).trim().split("\n")
      yield* fs.writeFileString(path, lines.filter((line) => !line.includes("codex_patch_1")).join("\n"))
      const target = yield* Chat.resolveTarget(Option.some(path))
      const { out } = yield* chat(target, Option.some(`${dir}/requests.jsonl`))
      assert.include(out, "tool error: apply_patch -> {\"error\":\"notes/todo.md: ")
      const requests = (yield* fs.readFileString(`${dir}/requests.jsonl`)).trim().split("\n").map((line) => JSON.parse(line))
      assert.strictEqual(requests.at(-1).input.at(-1).type, "custom_tool_call_output")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--replay of a capture calling apply_patch as the custom tool, then as the built-in: both run, in one directory", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      // Codex's first response (a custom apply_patch adding notes/todo.md), then the recorded built-in
      // apply_patch_call updating it and the answer
      const freeform = (yield* fs.readFileString(capturePath("codex-apply-patch-freeform.chunks.txt"))).trim().split("\n")
      const builtin = (yield* fs.readFileString(capturePath("apply-patch-todo.chunks.txt"))).trim().split("\n")
      const lines = [
        ...freeform.filter((line) => line.includes("codex_patch_1")),
        ...builtin.filter((line) => !line.includes("apply_patch_1"))
      ]
      const path = `${dir}/mixed.chunks.txt`
      yield* fs.writeFileString(path, lines.join("\n"))
      const target = yield* Chat.resolveTarget(Option.some(path))
      assert.strictEqual(
        Chat.replayNotice(target, false),
        `effect-responses: replaying ${path} (3 recorded responses of ${Chat.recordedModel(target)}); nothing is sent to a model; ` +
          "its model calls apply_patch both as a custom tool and as the built-in apply_patch: this chat runs both, " +
          "in one temporary directory\n"
      )
      const { out } = yield* chat(target, Option.some(`${dir}/requests.jsonl`))
      // the two captures write the file apart ("# To do" by Codex's patch, "# Todo" in the built-in's
      // context): the built-in's update reads the file the custom patch made and finds its lines missing (in
      // a directory of its own it would find no file)
      assert.deepStrictEqual(out.split("\n").filter((line) => line.startsWith("tool result") || line.startsWith("tool error")), [
        "tool result: apply_patch -> created notes/todo.md",
        "tool error: apply_patch -> notes/todo.md: hunk 1 does not apply: its lines (from \"# Todo\") are not in the file"
      ])
      const requests = (yield* fs.readFileString(`${dir}/requests.jsonl`)).trim().split("\n").map((line) => JSON.parse(line))
      // both forms offered, each answered in its own item type
      assert.deepStrictEqual(
        requests[0].tools.filter((tool: { name?: string; type: string }) => tool.name === "apply_patch" || tool.type === "apply_patch")
          .map((tool: { type: string }) => tool.type),
        ["custom", "apply_patch"]
      )
      assert.deepStrictEqual(requests.at(-1).input.slice(-3).map((item: { type: string }) => item.type), [
        "custom_tool_call_output",
        "apply_patch_call",
        "apply_patch_call_output"
      ])
      assert.strictEqual(requests.at(-1).input.at(-1).status, "failed")

      // the same capture with the built-in's diff written against the lines Codex's patch added: updated
      const matched = `${dir}/matched.chunks.txt`
      yield* fs.writeFileString(
        matched,
        lines.join("\n").replaceAll(
          JSON.stringify("@@\n # Todo\n \n-- [ ] milk\n+- [x] milk\n - [ ] bread\n+- [ ] eggs\n"),
          JSON.stringify("@@\n # To do\n-- [ ] milk\n+- [x] milk\n - [ ] bread\n+- [ ] eggs\n")
        )
      )
      const second = yield* chat(yield* Chat.resolveTarget(Option.some(matched)))
      assert.deepStrictEqual(second.out.split("\n").filter((line) => line.startsWith("tool result") || line.startsWith("tool error")), [
        "tool result: apply_patch -> created notes/todo.md",
        "tool result: apply_patch -> updated notes/todo.md"
      ])
      // a capture with one form says nothing of it
      for (const name of ["codex-apply-patch-freeform.chunks.txt", "apply-patch-todo.chunks.txt"]) {
        const one = yield* Chat.resolveTarget(Option.some(capturePath(name)))
        assert.notInclude(Chat.replayNotice(one, false), "both", name)
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--replay that stops after a call this chat ran: ReplayEnded says the recording stops, not that the tool is missing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const path = `${dir}/first-turn.chunks.txt`
      const lines = (yield* fs.readFileString(capturePath("codex-apply-patch-freeform.chunks.txt"))).trim().split("\n")
      yield* fs.writeFileString(path, lines.filter((line) => line.includes("codex_patch_1")).join("\n"))
      const { error, out } = yield* chatFailing(yield* Chat.resolveTarget(Option.some(path)))
      assert.include(out, "tool result: apply_patch -> created notes/todo.md\n")
      assert.strictEqual(error._tag, "ReplayEnded")
      assert.strictEqual(
        error.message,
        `the recording ${path} has no more responses: it holds 1 response, and the conversation went on after the model ` +
          "asked for the tool apply_patch (this chat ran it; the recording stops before the answer to the results)"
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--replay of a hosted tool search then a namespaced call: math.power answers, the search items go back", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const target = yield* Chat.resolveTarget(Option.some(capturePath("tool-search-power.chunks.txt")))
      const { finalText, out } = yield* chat(target, Option.some(`${dir}/requests.jsonl`))
      assert.strictEqual(finalText, "2 to the power of 10 is **1024**.")
      assert.include(out, "tool result: power -> 1024\n")
      const requests = (yield* fs.readFileString(`${dir}/requests.jsonl`)).trim().split("\n").map((line) => JSON.parse(line))
      assert.deepStrictEqual(
        requests[1].input.slice(1).map((item: { type: string }) => item.type),
        ["tool_search_call", "tool_search_output", "function_call", "function_call_output"]
      )
      assert.deepStrictEqual(requests[1].input.at(-1), { type: "function_call_output", call_id: "call_power_1", output: "1024" })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("--replay of an MCP approval round trip: the request is approved (said on stderr), to the final answer", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const target = yield* Chat.resolveTarget(Option.some(capturePath("mcp-approval-weather.chunks.txt")))
      assert.include(Chat.replayNotice(target, false), "its MCP approval requests are approved (no MCP tool runs in a replay)")
      const { finalText, out } = yield* chat(target, Option.some(`${dir}/requests.jsonl`))
      assert.strictEqual(finalText, "Tomorrow in Paris: sunny, 21 °C.")
      assert.include(out, "MCP approval request: weather.get_forecast {\"city\":\"Paris\"}\n")
      assert.include(out, "tool result: mcp approval -> approved\n")
      const requests = (yield* fs.readFileString(`${dir}/requests.jsonl`)).trim().split("\n").map((line) => JSON.parse(line))
      assert.deepStrictEqual(requests[1].input.at(-1), {
        type: "mcp_approval_response",
        approval_request_id: "mcpr_mcp_weather_1",
        approve: true
      })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("--replay of the recorded shell call: answered by the stand-in (nothing runs), to the final answer", () =>
    Effect.gen(function*() {
      const target = yield* Chat.resolveTarget(Option.some(fixturePath("responses-sse/vai-openai-shell-call.chunks.txt")))
      const { finalText, out } = yield* chat(target)
      assert.match(finalText, /^Here are the files and folders in your `~\/Desktop` directory:/)
      assert.include(out, "shell call: ls -a ~/Desktop\n")
      assert.include(out, `tool error: shell -> [exit 126] ${Demo.NOT_RUN}\n`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("--replay of a capture whose tool this chat lacks: the error names the tools it has", () =>
    Effect.gen(function*() {
      const target = yield* Chat.resolveTarget(
        Option.some(fixturePath("responses-sse/pai-gpt5-custom-tool-call-input-deltas.sse"))
      )
      const { error } = yield* chatFailing(target)
      assert.strictEqual(error._tag, "ReplayEnded")
      assert.match(
        error.message,
        /after the model asked for the tool execute_sql \(this chat has only the tools calculator, evaluate, math.power, shell, apply_patch, local_shell\)$/
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("--replay of a capture of the other protocol names the --protocol to pass", () =>
    Effect.gen(function*() {
      const path = fixturePath("chat-sse/vai-chat-openai-text-usage.chunks.txt")
      const error = yield* Effect.flip(Chat.resolveTarget(Option.some(path)))
      assert.strictEqual(error.message, `${path}: this looks like a Chat Completions capture: pass --protocol chat-completions`)
    }).pipe(Effect.provide(NodeContext.layer)))
})
