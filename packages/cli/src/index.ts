/**
 * @since 0.1.0
 */
export * as Aggregate from "./Aggregate.js"

/**
 * @since 0.1.0
 */
export * as Chat from "./Chat.js"

/**
 * @since 0.1.0
 */
export * as Cli from "./Cli.js"

/**
 * @since 0.1.0
 */
export * as Decode from "./Decode.js"

/**
 * @since 0.1.0
 */
export * as Demo from "./Demo.js"

/**
 * The protocol switch: a `LanguageModel` layer over Responses or Chat Completions, by value or by
 * configuration (`OPENAI_PROTOCOL`).
 *
 * @since 0.1.0
 */
export * as Protocol from "./Protocol.js"

/**
 * @since 0.1.0
 */
export * as Render from "./Render.js"

/**
 * @since 0.1.0
 */
export * as Request from "./Request.js"

/**
 * @since 0.1.0
 */
export * as Serve from "./Serve.js"
