/**
 * The `ResponseStore` on an embedded SQLite file (`@effect/sql-sqlite-node`, on `better-sqlite3`): the
 * store a single gateway instance gets from a path. The file is created when missing, in WAL mode; the
 * schema is migrated at start (`ResponseStore.migrations`). A restart keeps the stored responses.
 *
 * @since 0.2.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Cause from "effect/Cause"
import * as Layer from "effect/Layer"
import * as ResponseStore from "./ResponseStore.js"

/**
 * Options: `filename` (the database file; `:memory:` for a store that ends with the process) and the
 * `ResponseStore.Retention` fields.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options extends ResponseStore.Retention {
  readonly filename: string
}

/**
 * The `ResponseStore` on the SQLite file `options.filename`. Fails with `ResponseStoreError` when the file
 * cannot be opened (a missing directory, a directory or a file that is no database, no permission: the
 * description names the file and gives the driver's words) or migrated.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError> =>
  ResponseStore.layer(options).pipe(
    Layer.provide(client(options.filename)),
    Layer.catchAll((error) =>
      Layer.fail(
        error._tag === "ResponseStoreError" ? error : new ResponseStore.ResponseStoreError({
          description: `the SQLite store ${options.filename} could not be opened: ${error.message}`,
          cause: error
        })
      )
    )
  )

/**
 * The SQLite client of `filename`. `better-sqlite3`'s constructor throws for a file it cannot open, which
 * the client's layer lets through as a defect: here it is a `ResponseStoreError` naming the file.
 */
const client = (filename: string) =>
  Layer.catchAllCause(SqliteClient.layer({ filename }), (cause): Layer.Layer<SqliteClient.SqliteClient | SqlClient.SqlClient, ResponseStore.ResponseStoreError> => {
    if (Cause.isInterruptedOnly(cause)) return Layer.failCause(cause as Cause.Cause<never>)
    const error = Cause.squash(cause)
    return Layer.fail(
      new ResponseStore.ResponseStoreError({
        description: `the SQLite store ${filename} could not be opened: ${error instanceof Error ? error.message : String(error)}`,
        cause: error
      })
    )
  })
