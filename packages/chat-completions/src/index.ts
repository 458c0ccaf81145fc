/**
 * Chat captures: recorded Chat Completions streams read from raw SSE or line-JSON files.
 *
 * @since 0.1.0
 */
export * as ChatCapture from "./ChatCapture.js"

/**
 * The Chat Completions HTTP client service (`create`, `createStream`), with retries.
 *
 * @since 0.1.0
 */
export * as ChatCompletionsClient from "./ChatCompletionsClient.js"

/**
 * The core `LanguageModel` service over the Chat Completions API.
 *
 * @since 0.1.0
 */
export * as ChatCompletionsLanguageModel from "./ChatCompletionsLanguageModel.js"

/**
 * `chat.completion` bodies -> `ModelResponse`; usage and finish reason mapping.
 *
 * @since 0.1.0
 */
export * as ChatCompletionsOutput from "./ChatCompletionsOutput.js"

/**
 * `Prompt` -> Chat Completions request body.
 *
 * @since 0.1.0
 */
export * as ChatCompletionsRequest from "./ChatCompletionsRequest.js"

/**
 * The streaming decoder: SSE bytes / data payloads of `chat.completion.chunk`s -> `StreamPart`s.
 *
 * @since 0.1.0
 */
export * as ChatCompletionsStream from "./ChatCompletionsStream.js"
