/**
 * The stateless `POST /v1/responses` gateway: routes, authentication, body bound, error mapping.
 *
 * @since 0.1.0
 */
export * as Gateway from "./Gateway.js"

/**
 * The decoding side of the Responses protocol: a `CreateResponse` request body -> `Prompt` plus options.
 *
 * @since 0.1.0
 */
export * as ResponsesRequestDecoder from "./ResponsesRequestDecoder.js"

/**
 * `StreamPart`s -> the Responses streaming lifecycle and the Response object.
 *
 * @since 0.1.0
 */
export * as ResponsesLifecycle from "./ResponsesLifecycle.js"

/**
 * What the gateway forwards to: any `LanguageModel`, or a Chat Completions backend.
 *
 * @since 0.1.0
 */
export * as Upstream from "./Upstream.js"

/**
 * The gateway's opt-in state: stored responses and items behind the `ResponseStore` service, on any
 * `@effect/sql` client; schema and migrations. The drivers are the modules
 * `@effect-responses/server/ResponseStoreSqlite` and `@effect-responses/server/ResponseStorePg` (not in this
 * barrel, so that their optional peer dependencies load only when used).
 *
 * @since 0.2.0
 */
export * as ResponseStore from "./ResponseStore.js"

