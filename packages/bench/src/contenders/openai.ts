/**
 * The official `openai` SDK (6.x).
 *
 * @since 0.1.0
 */
import OpenAI from "openai"
import type { Contender } from "../Contenders.js"
import { fakeFetch, MODEL, PROMPT } from "./shared.js"

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
