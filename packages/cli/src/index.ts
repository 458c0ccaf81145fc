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
export * as Demo from "./Demo.js"

/**
 * @since 0.1.0
 */
export * as Render from "./Render.js"
