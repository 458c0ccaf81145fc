/**
 * The provider name this package stamps on what only OpenAI's Responses API can read back: reasoning
 * payloads (`encrypted_content`) and output items kept verbatim (`UnknownPart`).
 *
 * @since 0.1.0
 */

/**
 * `"openai.responses"`: the `provider` of the `OpaquePayload`s and `UnknownPart`s this package makes. The
 * request mapping replays a reasoning payload or a verbatim item only when it carries this name, since the
 * API rejects reasoning it did not sign and items it does not know.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROVIDER = "openai.responses" as const

/**
 * @since 0.1.0
 * @category constants
 */
export type PROVIDER = typeof PROVIDER

/**
 * `"encrypted_content"`: the `kind` of a reasoning item's `OpaquePayload`.
 *
 * @since 0.1.0
 * @category constants
 */
export const ENCRYPTED_CONTENT = "encrypted_content" as const
