/**
 * The `ResponseStore` on an embedded SQLite file (`@effect/sql-sqlite-node`, on `better-sqlite3`): the
 * store a single gateway instance gets from a path. The file is created when missing, in WAL mode; the
 * schema is migrated at start (`ResponseStore.migrations`). A restart keeps the stored responses.
 *
 * @since 0.2.0
 */
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
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
 * cannot be opened or migrated.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError> =>
  ResponseStore.layer(options).pipe(
    Layer.provide(SqliteClient.layer({ filename: options.filename })),
    Layer.catchAll((error) =>
      Layer.fail(
        error._tag === "ResponseStoreError" ? error : new ResponseStore.ResponseStoreError({
          description: `the SQLite store ${options.filename} could not be opened: ${error.message}`,
          cause: error
        })
      )
    )
  )
