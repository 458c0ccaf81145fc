/**
 * `@ai-sdk/openai` (3.x), the provider of the Vercel AI SDK.
 *
 * @since 0.1.0
 */
import { createOpenAI } from "@ai-sdk/openai"
import type { Contender } from "../Contenders.js"
import { fakeFetch, MODEL, PROMPT } from "./shared.js"

/**
 * The responses model's `doStream`, its part stream read to the end, the `text-delta`s accumulated; an
 * `error` part rejects.
 *
 * @since 0.1.0
 * @category contenders
 */
export const make = (): Contender => {
  const fake = fakeFetch()
  const model = createOpenAI({ apiKey: "sk-bench", baseURL: "http://bench.invalid/v1", fetch: fake.fetch }).responses(MODEL)
  return {
    id: "ai-sdk",
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
