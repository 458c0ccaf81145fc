/**
 * A scripted fake `LanguageModel` for unit tests.
 *
 * @since 0.1.0
 */
export * as FakeLanguageModel from "./FakeLanguageModel.js"

/**
 * An `HttpClient` that writes every streamed answer of the real one to a capture file.
 *
 * @since 0.1.0
 */
export * as RecordingHttpClient from "./RecordingHttpClient.js"

/**
 * An `HttpClient` that answers from a capture file of consecutive responses and keeps what the app sent.
 *
 * @since 0.1.0
 */
export * as ReplayHttpClient from "./ReplayHttpClient.js"
