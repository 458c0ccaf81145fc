/**
 * `ResponseStoreSqlite.layer` on a file the driver cannot open: a typed `ResponseStoreError` naming the
 * file (the driver's constructor throws, which its layer lets through as a defect).
 */
import * as ResponseStoreSqlite from "@effect-responses/server/ResponseStoreSqlite"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
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
})
