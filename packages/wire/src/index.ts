/**
 * @since 0.1.0
 */
export * as CaptureFile from "./CaptureFile.js"

/**
 * @since 0.2.0
 */
export * as Cooperative from "./Cooperative.js"

/**
 * @since 0.1.0
 */
export * as Framing from "./Framing.js"

/**
 * @since 0.1.0
 */
export * as HttpTransport from "./HttpTransport.js"

/**
 * @since 0.1.0
 */
export * as Json from "./Json.js"

/**
 * @since 0.1.0
 */
export * as Media from "./Media.js"
