/**
 * `ResponseStoreSqlite.layer` on a file the driver cannot open: a typed `ResponseStoreError` naming the
 * file (the driver's constructor throws, which its layer lets through as a defect); a failed write names
 * the driver's reason.
 */
import { ResponseStore } from "@effect-responses/server"
import * as ResponseStoreSqlite from "@effect-responses/server/ResponseStoreSqlite"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** The typed failure of building the store on `filename` (`undefined` when it built, or died). */
const openFailure = (filename: string) =>
  Effect.map(Effect.exit(Effect.scoped(Layer.build(ResponseStoreSqlite.layer({ filename })))), (exit) =>
    Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined)

describe("ResponseStoreSqlite.layer", () => {
  it.scoped("a file it cannot open fails with ResponseStoreError naming the file, not a defect", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "effect-responses-sqlite-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      // a missing directory, and a directory where the file should be
      for (const filename of [join(dir, "missing", "responses.db"), dir]) {
        const error = yield* openFailure(filename)
        assert.isDefined(error, filename)
        assert.strictEqual(error!._tag, "ResponseStoreError")
        assert.match(error!.message, new RegExp(`^the SQLite store ${filename.replace(/[/\\.]/g, "\\$&")} could not be opened: \\S`))
      }
      // a file it can open builds
      assert.isUndefined(yield* openFailure(join(dir, "responses.db")))
    }))

  it.scoped("a failed write says why in the driver's words, not only the wrapper's", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "effect-responses-sqlite-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const filename = join(dir, "responses.db")
      const context = yield* Layer.build(ResponseStoreSqlite.layer({ filename, purgeInterval: "1 day" }))
      const store = Context.get(context, ResponseStore.ResponseStore)
      // the items' table gone behind the store's back (a second connection to the file)
      yield* Effect.scoped(Effect.flatMap(
        Layer.build(SqliteClient.layer({ filename })),
        (client) => Context.get(client, SqlClient.SqlClient)`DROP TABLE effect_responses_items`
      ))
      const failed = yield* Effect.flip(store.save({
        tenant: "t",
        previousResponseId: null,
        inputItems: [{ id: "msg_1", type: "message", role: "user", content: "hi" }],
        response: { id: "resp_1", object: "response", output: [] }
      }))
      assert.strictEqual(
        failed.message,
        "the response store failed to save a response: Failed to execute statement: no such table: effect_responses_items"
      )
    }))
})
