/**
 * Built-in tools (web search, file search, code interpreter, image generation, MCP, raw JSON).
 *
 * @since 0.1.0
 */
export * as BuiltInTool from "./BuiltInTool.js"

/**
 * @since 0.1.0
 */
export * as Capture from "./Capture.js"

/**
 * The provider name (`"openai.responses"`) stamped on what only the Responses API can read back.
 *
 * @since 0.1.0
 */
export * as Provider from "./Provider.js"

/**
 * The Responses HTTP client service (`create`, `createStream`).
 *
 * @since 0.1.0
 */
export * as ResponsesClient from "./ResponsesClient.js"

/**
 * The core `LanguageModel` service over the Responses API.
 *
 * @since 0.1.0
 */
export * as ResponsesLanguageModel from "./ResponsesLanguageModel.js"

/**
 * Responses output items and response objects -> core parts and `ModelResponse`.
 *
 * @since 0.1.0
 */
export * as ResponsesOutput from "./ResponsesOutput.js"

/**
 * `Prompt` -> Responses request body.
 *
 * @since 0.1.0
 */
export * as ResponsesRequest from "./ResponsesRequest.js"

/**
 * The streaming decoder: SSE bytes / data payloads -> `StreamPart`s.
 *
 * @since 0.1.0
 */
export * as ResponsesStream from "./ResponsesStream.js"
