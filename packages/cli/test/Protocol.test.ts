/**
 * The protocol switch and `chat --protocol chat-completions` over a loopback chat replay of the recorded
 * gpt-4o-mini `get_capital` call and its answer (pydantic-ai, MIT: see `fixtures/SOURCES.md`).
 */
import { Chat, Demo, Protocol, Render } from "@effect-responses/cli"
import { LanguageModel, Prompt } from "@effect-responses/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { readFileSync } from "node:fs"
import { fixturePath } from "./fixtures.js"

const toolCall = fixturePath("chat-sse/pai-chat-gpt4omini-tool-call-deltas-usage.sse")
const answer = fixturePath("chat-sse/pai-chat-gpt4omini-text-usage.sse")

/** A fake HttpClient that records the URLs it is asked for and answers with a chat.completion body. */
const fakeHttp = (urls: Array<string>) =>
  Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request) =>
      Effect.sync(() => {
        urls.push(request.url)
        const body = request.url.endsWith("/chat/completions")
          ? readFileSync(fixturePath("chat-json/vai-chat-openai-text.json"), "utf8")
          : "{}"
        return HttpClientResponse.fromWeb(request, new Response(body, { status: 200 }))
      })
    )
  )

describe("Protocol", () => {
  it.effect("layerConfig reads OPENAI_PROTOCOL and yields the Chat Completions model", () =>
    Effect.gen(function*() {
      const urls: Array<string> = []
      const response = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(Prompt.user("Hi"))).pipe(
        Effect.provide(Protocol.layerConfig().pipe(Layer.provide(fakeHttp(urls)))),
        Effect.withConfigProvider(
          ConfigProvider.fromMap(
            new Map([["OPENAI_PROTOCOL", "chat-completions"], ["OPENAI_MODEL", "gpt-4.1-nano"], [
              "OPENAI_BASE_URL",
              "http://127.0.0.1:9/v1"
            ]])
          )
        )
      )
      expect(urls).toStrictEqual(["http://127.0.0.1:9/v1/chat/completions"])
      assert.isTrue(response.text.startsWith("**Holiday Name:** Galaxy Day"))
    }))

  it.effect("an unknown OPENAI_PROTOCOL is a ConfigError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(Prompt.user("Hi"))).pipe(
          Effect.provide(Protocol.layerConfig({ model: "m" }).pipe(Layer.provide(fakeHttp([])))),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["OPENAI_PROTOCOL", "soap"]])))
        )
      )
      assert.strictEqual(error._tag, "ConfigError")
    }))
})

describe("effect-responses chat --protocol chat-completions", () => {
  it.scoped("replays a chat capture on a loopback chat server and streams the conversation", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const capture = `${dir}/session.sse`
      yield* fs.writeFileString(capture, `${readFileSync(toolCall, "utf8")}${readFileSync(answer, "utf8")}`)
      const target = yield* Chat.resolveTarget(Option.some(capture), Demo.recordingPath, "chat-completions")
      assert.strictEqual(target._tag, "ChatReplay")
      let out = ""
      const finalText = yield* Chat.run({
        prompt: "What is the capital of the UK?",
        target,
        model: Option.none(),
        requestsOut: Option.some(`${dir}/requests.jsonl`),
        write: (text) => Effect.sync(() => void (out += text)),
        style: Render.plain,
        protocol: "chat-completions"
      })
      assert.strictEqual(finalText, "The capital of the UK is London.")
      assert.include(out, "tool call: get_capital {\"country\":\"UK\"}")
      assert.include(out, "The capital of the UK is London.")
      const requests = (yield* fs.readFileString(`${dir}/requests.jsonl`)).trim().split("\n").map((line) =>
        JSON.parse(line) as { messages: ReadonlyArray<{ role: string }>; stream_options: unknown }
      )
      assert.strictEqual(requests.length, 2)
      expect(requests[0]!.stream_options).toStrictEqual({ include_usage: true })
      expect(requests[1]!.messages.map((m) => m.role)).toStrictEqual(["user", "assistant", "tool"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("without a capture or a key there is nothing to talk to", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Chat.resolveTarget(Option.none(), Demo.recordingPath, "chat-completions"))
      assert.strictEqual(error._tag, "ChatSetupError")
    }).pipe(Effect.provide(NodeContext.layer), Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))))
})
