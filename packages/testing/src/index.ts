/**
 * A loopback `POST /v1/chat/completions` replaying a chat capture, for tests and the CLI.
 *
 * @since 0.1.0
 */
export * as ChatReplayServer from "./ChatReplayServer.js"

/**
 * A loopback server that answers one request, then drops the connection of every later one after reading it.
 *
 * @since 0.2.0
 */
export * as DroppingServer from "./DroppingServer.js"

/**
 * A scripted fake `LanguageModel` for unit tests.
 *
 * @since 0.2.0
 */
export * as FakeLanguageModel from "./FakeLanguageModel.js"

/**
 * An `HttpClient` that writes every streamed answer of the real one to a capture file.
 *
 * @since 0.2.0
 */
export * as RecordingHttpClient from "./RecordingHttpClient.js"

/**
 * A tracer for tests that records every span started under it.
 *
 * @since 0.2.0
 */
export * as RecordingTracer from "./RecordingTracer.js"

/**
 * The scaffolding both replay servers share: routes, the record of request bodies, OpenAI-shaped 400s.
 *
 * @since 0.2.0
 */
export * as ReplayEndpoint from "./ReplayEndpoint.js"

/**
 * A loopback HTTP server answering each request with the next handler of a script, with Chat Completions
 * answer helpers: for tests of a client or gateway whose backend stalls, breaks off or drops a connection.
 *
 * @since 0.2.0
 */
export * as ScriptedServer from "./ScriptedServer.js"

/**
 * An `HttpClient` that answers from a capture file of consecutive responses and keeps what the app sent.
 *
 * @since 0.2.0
 */
export * as ReplayHttpClient from "./ReplayHttpClient.js"

/**
 * A loopback `POST /v1/responses` replaying a capture of consecutive responses, for tests and the CLI.
 *
 * @since 0.1.0
 */
export * as ReplayServer from "./ReplayServer.js"
