/**
 * The two stores every store test runs against: a real SQLite file in a temporary folder, and a real
 * PostgreSQL server: the one `EFFECT_RESPONSES_TEST_PG_URL` names, else the throwaway one the test run starts
 * itself (`vitest.postgres.ts`, with `scripts/postgres.sh`). Without a server the Postgres tests fail, saying
 * why: they are not skipped.
 */
import { ResponseStore } from "@effect-responses/server"
import * as ResponseStorePg from "@effect-responses/server/ResponseStorePg"
import * as ResponseStoreSqlite from "@effect-responses/server/ResponseStoreSqlite"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"

declare module "vitest" {
  export interface ProvidedContext {
    /** The test PostgreSQL server's URL, or why there is none (`vitest.postgres.ts`). */
    effectResponsesPostgres: { readonly url: string } | { readonly error: string }
  }
}

/** The URL of the test PostgreSQL server; throws (so that the tests fail) when there is none, saying why. */
export const pgUrl = (): string => {
  const fromEnv = process.env.EFFECT_RESPONSES_TEST_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  const provided = inject("effectResponsesPostgres")
  if (provided === undefined) {
    throw new Error(
      "no PostgreSQL server for the store tests: run them with the repository's vitest.config.ts (`npm test`), " +
        "which starts one, or set EFFECT_RESPONSES_TEST_PG_URL"
    )
  }
  if ("error" in provided) throw new Error(provided.error)
  return provided.url
}

/**
 * One fresh, empty database: `layer` opens a store on it (call it again for a restart: the same
 * database), `drop` removes it.
 */
export interface Database {
  readonly layer: (
    retention?: ResponseStore.Retention
  ) => Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError>
  readonly drop: Effect.Effect<void>
}

/** A store backend: its name and how to make a fresh database of it. */
export interface Backend {
  readonly name: string
  readonly fresh: Effect.Effect<Database>
}

const sqlite: Backend = {
  name: "SQLite file",
  fresh: Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "effect-responses-store-"))
    const filename = join(dir, "responses.db")
    return {
      layer: (retention = {}) => ResponseStoreSqlite.layer({ filename, ...retention }),
      drop: Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    }
  })
}

let databases = 0

/** Runs one statement on the test server's own database (`CREATE DATABASE`, `DROP DATABASE`). */
const admin = (statement: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(statement)
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(pgUrl()), maxConnections: 1 })), Effect.orDie)

/** A fresh PostgreSQL database per test (created on the test server, dropped at the end). */
const postgres: Backend = {
  name: "PostgreSQL server",
  fresh: Effect.gen(function*() {
    const name = `er_test_${process.pid}_${Date.now()}_${databases++}`
    yield* admin(`CREATE DATABASE ${name}`)
    const url = new URL(pgUrl())
    url.pathname = `/${name}`
    return {
      layer: (retention = {}) => ResponseStorePg.layer({ url: Redacted.make(url.toString()), ...retention }),
      drop: admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  })
}

/** Both backends, SQLite first. */
export const backends: ReadonlyArray<Backend> = [sqlite, postgres]

/** A fresh database of `backend` for the scope of a test, dropped when it closes. */
export const freshDatabase = (backend: Backend) => Effect.acquireRelease(backend.fresh, (database) => database.drop)
