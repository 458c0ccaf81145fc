/**
 * The contenders: each takes an SSE body (a `ReadableStream` of byte chunks, as `fetch` gives it) through
 * its library's real streaming path to a final message, and returns the message's text so that the harness
 * can check it. Clients are built once per contender; only the body changes between runs.
 *
 * @since 0.1.0
 */
import { MessageAggregator } from "@effect-responses/aggregate"
import { ResponsesStream } from "@effect-responses/responses"
import { createOpenAI } from "@ai-sdk/openai"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as OpenAiLanguageModel from "@effect/ai-openai/OpenAiLanguageModel"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import OpenAI from "openai"

/**
 * A contender: `run` consumes the body to its end and resolves with the text of the final assistant
 * message (the `output_text`), or rejects.
 *
 * @since 0.1.0
 * @category models
 */
export interface Contender {
  readonly name: string
  readonly run: (body: ReadableStream<Uint8Array>) => Promise<string>
}

/**
 * The body of one run: the chunks, one per read. `onPull` runs before each chunk is handed over (the memory
 * probe samples the heap there).
 *
 * @since 0.1.0
 * @category constructors
 */
export const body = (chunks: ReadonlyArray<Uint8Array>, onPull?: () => void): ReadableStream<Uint8Array> => {
  let next = 0
  return new ReadableStream<Uint8Array>({
    pull: (controller) => {
      onPull?.()
      const chunk = chunks[next++]
      if (chunk === undefined) controller.close()
      else controller.enqueue(chunk)
    }
  }, { highWaterMark: 0 })
}

const SSE_HEADERS = { "content-type": "text/event-stream" }
const PROMPT = "How do I cross the street?"
const MODEL = "o3-mini"

/**
 * A `fetch` that answers every request with the body set by `next`, once.
 */
const fakeFetch = () => {
  let pending: ReadableStream<Uint8Array> | undefined
  return {
    next: (body: ReadableStream<Uint8Array>) => {
      pending = body
    },
    fetch: (): Promise<Response> => {
      const body = pending
      pending = undefined
      if (body === undefined) return Promise.reject(new Error("fake fetch: no body set for this request"))
      return Promise.resolve(new Response(body, { status: 200, headers: SSE_HEADERS }))
    }
  }
}

const textOf = (responses: ReadonlyArray<{ readonly text: string }>): string => responses.at(-1)?.text ?? ""

/**
 * Ours, end to end through the public API: `Stream` of bytes -> `ResponsesStream.decodeSse` ->
 * `MessageAggregator.aggregate`.
 *
 * @since 0.1.0
 * @category contenders
 */
export const ours: Contender = {
  name: "effect-responses",
  run: (body) =>
    Effect.runPromise(
      MessageAggregator.aggregate(
        ResponsesStream.decodeSse(Stream.fromReadableStream({ evaluate: () => body, onError: (error) => error }))
      )
    ).then(textOf)
}

/**
 * Ours, decoding only: `Stream` of bytes -> `ResponsesStream.decodeSse` -> `StreamPart`s, consumed a chunk
 * at a time; the text deltas are collected to check the result.
 *
 * @since 0.1.0
 * @category contenders
 */
export const oursDecodeOnly: Contender = {
  name: "effect-responses (decode only)",
  run: (body) => {
    const texts: Array<string> = []
    return Effect.runPromise(
      Stream.runForEachChunk(
        ResponsesStream.decodeSse(Stream.fromReadableStream({ evaluate: () => body, onError: (error) => error })),
        (chunk) =>
          Effect.sync(() => {
            for (const element of chunk) {
              if (element.type === "part" && element.partial && element.part.type === "text") {
                texts.push(element.part.text)
              }
            }
          })
      )
    ).then(() => texts.join(""))
  }
}

/**
 * The official `openai` SDK: `client.responses.stream(...)` -> `finalResponse()`, with a `fetch` that
 * answers with the body.
 *
 * @since 0.1.0
 * @category contenders
 */
export const openai = (): Contender => {
  const fake = fakeFetch()
  const client = new OpenAI({ apiKey: "sk-bench", baseURL: "http://bench.invalid/v1", maxRetries: 0, fetch: fake.fetch })
  return {
    name: "openai 6.49 (responses.stream)",
    run: async (body) => {
      fake.next(body)
      const response = await client.responses.stream({ model: MODEL, input: PROMPT }).finalResponse()
      return response.output_text
    }
  }
}

/**
 * `@ai-sdk/openai` 3.x: the responses model's `doStream`, its part stream read to the end, the `text-delta`s
 * accumulated. An `error` part rejects.
 *
 * @since 0.1.0
 * @category contenders
 */
export const aiSdk = (): Contender => {
  const fake = fakeFetch()
  const model = createOpenAI({ apiKey: "sk-bench", baseURL: "http://bench.invalid/v1", fetch: fake.fetch }).responses(MODEL)
  return {
    name: "@ai-sdk/openai 3.0 (doStream)",
    run: async (body) => {
      fake.next(body)
      const { stream } = await model.doStream({ prompt: [{ role: "user", content: [{ type: "text", text: PROMPT }] }] })
      const reader = stream.getReader()
      const texts: Array<string> = []
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        if (value.type === "text-delta") texts.push(value.delta)
        else if (value.type === "error") throw new Error(`@ai-sdk/openai: error part: ${String(value.error)}`)
      }
      return texts.join("")
    }
  }
}

/**
 * `@effect/ai-openai` 0.41: `LanguageModel.streamText` with the OpenAI layer over an `HttpClient` that answers
 * with the body; the `text-delta` parts accumulated.
 *
 * @since 0.1.0
 * @category contenders
 */
export const effectAi = (): Contender => {
  let pending: ReadableStream<Uint8Array> | undefined
  const httpClient = HttpClient.make((request) =>
    Effect.sync(() => {
      const body = pending
      pending = undefined
      return HttpClientResponse.fromWeb(request, new Response(body ?? null, { status: 200, headers: SSE_HEADERS }))
    })
  )
  const runtime = ManagedRuntime.make(
    OpenAiLanguageModel.layer({ model: MODEL }).pipe(
      Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-bench") })),
      Layer.provide(Layer.succeed(HttpClient.HttpClient, httpClient))
    )
  )
  return {
    name: "@effect/ai-openai 0.41 (streamText)",
    run: (body) => {
      pending = body
      const texts: Array<string> = []
      return runtime.runPromise(
        Stream.runForEach(LanguageModel.streamText({ prompt: PROMPT }), (part) =>
          Effect.sync(() => {
            if (part.type === "text-delta") texts.push(part.delta)
          }))
      ).then(() => texts.join(""))
    }
  }
}

/**
 * The floor: a bare loop over the body that splits SSE frames at blank lines, `JSON.parse`s each `data:`
 * line and appends the text deltas. No validation, no parts, no events other than text deltas kept.
 *
 * @since 0.1.0
 * @category contenders
 */
export const floor: Contender = {
  name: "floor (split + JSON.parse)",
  run: async (body) => {
    const reader = body.getReader()
    const decoder = new TextDecoder()
    const texts: Array<string> = []
    let buffer = ""
    const frame = (text: string) => {
      const at = text.indexOf("data: ")
      if (at === -1) return
      const end = text.indexOf("\n", at)
      const event: unknown = JSON.parse(text.slice(at + 6, end === -1 ? undefined : end))
      if (
        typeof event === "object" && event !== null && "type" in event && event.type === "response.output_text.delta" &&
        "delta" in event && typeof event.delta === "string"
      ) texts.push(event.delta)
    }
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let start = 0
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n", start)) {
        frame(buffer.slice(start, end))
        start = end + 2
      }
      buffer = buffer.slice(start)
    }
    if (buffer.trim() !== "") frame(buffer)
    return texts.join("")
  }
}

/**
 * Every contender, ours first (the ratios are to the first).
 *
 * @since 0.1.0
 * @category contenders
 */
export const all = (): ReadonlyArray<Contender> => [ours, oursDecodeOnly, openai(), aiSdk(), effectAi(), floor]
