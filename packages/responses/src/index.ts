/**
 * @since 0.1.0
 */
export * as Capture from "./Capture.js"

/**
 * @since 0.1.0
 */
export * as ReplayServer from "./ReplayServer.js"
