/**
 * The `ResponseStore` on a PostgreSQL server (`@effect/sql-pg`): the store that several gateway instances
 * behind a load balancer share. The schema is migrated at start (`ResponseStore.migrations`; instances
 * starting together wait for each other's migration lock).
 *
 * @since 0.2.0
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as ResponseStore from "./ResponseStore.js"

/**
 * Options: `url` (`postgres://user:password@host:port/database`, kept `Redacted`: it may hold a password),
 * `maxConnections` (the pool's bound, default 10), and the `ResponseStore.Retention` fields.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options extends ResponseStore.Retention {
  readonly url: Redacted.Redacted
  readonly maxConnections?: number | undefined
}

/**
 * The `ResponseStore` on the PostgreSQL database at `options.url`. Fails with `ResponseStoreError` when
 * the server cannot be reached or the schema cannot be migrated: the message says why, in the driver's words
 * (`connect ECONNREFUSED 127.0.0.1:5432`, `database "x" does not exist`), and never shows the URL.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError> =>
  ResponseStore.layer(options).pipe(
    Layer.provide(
      PgClient.layer({
        url: options.url,
        maxConnections: options.maxConnections ?? 10,
        connectTimeout: "10 seconds",
        applicationName: "effect-responses"
      })
    ),
    Layer.catchAll((error) =>
      Layer.fail(
        error._tag === "ResponseStoreError" ? error : new ResponseStore.ResponseStoreError({
          description: `the PostgreSQL store could not be reached: ${error.message}${causeText(error.cause)}`,
          cause: error
        })
      )
    )
  )

/**
 * What the driver's error says went wrong (`connect ECONNREFUSED 127.0.0.1:5432`, `database "x" does not
 * exist`, `password authentication failed for user "u"`), after `: `; empty when it says nothing. A
 * connection refused on every address of a host name is an `AggregateError` with no message of its own:
 * its errors' messages are joined.
 */
const causeText = (cause: unknown): string => {
  const messages = (error: unknown): ReadonlyArray<string> =>
    error instanceof AggregateError && error.message === ""
      ? error.errors.flatMap(messages)
      : error instanceof Error && error.message.trim() !== ""
      ? [error.message.trim()]
      : []
  const text = [...new Set(messages(cause))].join("; ")
  return text === "" ? "" : `: ${text}`
}
