/**
 * The official `openai` SDK (6.x).
 *
 * @since 0.1.0
 */
import OpenAI from "openai"
import type { Contender } from "../Contenders.js"
import { CHAT_MODEL, fakeFetch, MODEL, PROMPT } from "./shared.js"

/**
 * `client.responses.stream(...)` -> `finalResponse()`, with a `fetch` that answers with the body; the
 * response's `output_text`.
 *
 * @since 0.1.0
 * @category contenders
 */
export const make = (): Contender => {
  const fake = fakeFetch()
  const client = new OpenAI({ apiKey: "sk-bench", baseURL: "http://bench.invalid/v1", maxRetries: 0, fetch: fake.fetch })
  return {
    id: "openai",
    name: "openai 6.49 (responses.stream)",
    run: async (body) => {
      fake.next(body)
      const response = await client.responses.stream({ model: MODEL, input: PROMPT }).finalResponse()
      return response.output_text
    }
  }
}

/**
 * `client.chat.completions.stream(...)` -> `finalChatCompletion()`, with a `fetch` that answers with the
 * body; the first choice's message content.
 *
 * @since 0.2.0
 * @category contenders
 */
export const makeChat = (): Contender => {
  const fake = fakeFetch()
  const client = new OpenAI({ apiKey: "sk-bench", baseURL: "http://bench.invalid/v1", maxRetries: 0, fetch: fake.fetch })
  return {
    id: "openai-chat",
    name: "openai 6.49 (chat.completions.stream)",
    run: async (body) => {
      fake.next(body)
      const completion = await client.chat.completions.stream({
        model: CHAT_MODEL,
        messages: [{ role: "user", content: PROMPT }],
        stream_options: { include_usage: true }
      }).finalChatCompletion()
      return completion.choices[0]?.message.content ?? ""
    }
  }
}
