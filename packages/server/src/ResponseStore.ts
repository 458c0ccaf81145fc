/**
 * The gateway's state, opt-in: stored responses with their input and output items, behind the
 * `ResponseStore` service, on any `@effect/sql` client (`ResponseStoreSqlite` for an embedded SQLite file,
 * `ResponsesStorePg` for a PostgreSQL server that several gateway instances share).
 *
 * What is stored, per response: the Response object (JSON, as the gateway answered it), the request's
 * input items (item references resolved, every item with an `id`), the output items, the id of the previous
 * response, the tenant (a SHA-256 digest of the client's bearer key, never the key) and the time it expires.
 * Every read is scoped to one tenant: a response or item stored under one key is invisible to every other.
 *
 * Retention: a response expires `ttl` after it was stored (expired responses are never read, and are
 * deleted by `purge`, which `layer` runs every `purgeInterval`); and at most `maxResponses` responses are
 * kept, over all tenants (one bound for the whole store, not one per tenant): storing one more deletes the
 * oldest (by the order they were stored), keeping the newest `maxResponses` less a hundredth of it (rounded
 * down: 99,000 of a bound of 100,000, all of a bound under 100), so that a full store does not look for the
 * oldest at every save; deleted responses are not counted.
 *
 * Schema (`migrations`, run by `layer` through `@effect/sql`'s `Migrator`, recorded in the table
 * `effect_responses_migrations`):
 *
 * | table | columns |
 * |---|---|
 * | `effect_responses_responses` | `seq` (store order), `id` (unique), `tenant`, `previous_response_id`, `created_at` / `expires_at` (Unix ms), `body` (the Response object, JSON) |
 * | `effect_responses_items` | `response_seq`, `tenant`, `kind` (0 input, 1 output), `position`, `item_id`, `body` (the item, JSON) |
 *
 * Source of the shapes: the OpenAI API reference, "Responses" (`GET /responses/{response_id}`,
 * `GET /responses/{response_id}/input_items`, `DELETE /responses/{response_id}`).
 *
 * @since 0.2.0
 */
import { AiError } from "@effect-responses/core"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * An input or output item as JSON (`message`, `reasoning`, `function_call`, `function_call_output`, …),
 * with its item `id`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Item {
  readonly id: string
  readonly type: string
  readonly [key: string]: unknown
}

/**
 * The Response object as JSON (`id`, `object: "response"`, `output`, …).
 *
 * @since 0.2.0
 * @category models
 */
export interface ResponseJson {
  readonly id: string
  readonly [key: string]: unknown
}

/**
 * What `save` stores: the `tenant`, the Response object, the id of the response it continues (or `null`),
 * and the request's input items (resolved, with ids). The output items are the Response object's `output`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Entry {
  readonly tenant: string
  readonly response: ResponseJson
  readonly previousResponseId: string | null
  readonly inputItems: ReadonlyArray<Item>
}

/**
 * A page of input items (`GET /responses/{id}/input_items`): `after` (an item id; items after it in the
 * given order; an id that is no input item of the response fails with `InputItemNotFound`), `limit` (1 to
 * 100, default 20), `order` (`asc`, or `desc`: the API's default, newest first).
 *
 * @since 0.2.0
 * @category models
 */
export interface PageOptions {
  readonly after?: string | undefined
  readonly limit?: number | undefined
  readonly order?: "asc" | "desc" | undefined
}

/**
 * A page of input items, as the API lists them: `{object: "list", data, first_id, last_id, has_more}`.
 *
 * @since 0.2.0
 * @category models
 */
export interface ItemPage {
  readonly object: "list"
  readonly data: ReadonlyArray<Item>
  readonly first_id: string | null
  readonly last_id: string | null
  readonly has_more: boolean
}

/**
 * How long responses are kept: `ttl` after they were stored (default `DEFAULT_TTL`, 30 days, OpenAI's own
 * retention of stored responses), at most `maxResponses` of them (default `DEFAULT_MAX_RESPONSES`), expired
 * ones deleted every `purgeInterval` (default 1 minute).
 *
 * @since 0.2.0
 * @category models
 */
export interface Retention {
  readonly ttl?: Duration.DurationInput | undefined
  readonly maxResponses?: number | undefined
  readonly purgeInterval?: Duration.DurationInput | undefined
}

/**
 * The default time to live of a stored response: 30 days.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_TTL: Duration.Duration = Duration.days(30)

/**
 * The default bound on stored responses: 100 000.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_MAX_RESPONSES = 100_000

/**
 * The storage failed (the database could not be reached, a query failed, a stored row is not JSON).
 * `description` says what was being done and why, in the driver's words (`the response store failed to
 * save a response: Failed to execute statement: database is locked`, the driver's message capped at 500
 * characters); `cause` is the `@effect/sql` error.
 *
 * @since 0.2.0
 * @category errors
 */
export class ResponseStoreError
  extends Schema.TaggedError<ResponseStoreError>("@effect-responses/ResponseStoreError")("ResponseStoreError", {
    description: Schema.String,
    cause: Schema.optional(Schema.Defect)
  })
{
  override get message(): string {
    return this.description
  }
}

/**
 * A response id that is not stored for this tenant (never stored, deleted, expired, or another tenant's).
 * In a chain, `id` is the first missing link.
 *
 * @since 0.2.0
 * @category errors
 */
export class ResponseNotFound
  extends Schema.TaggedError<ResponseNotFound>("@effect-responses/ResponseNotFound")("ResponseNotFound", {
    id: Schema.String
  })
{
  override get message(): string {
    return `Response with id '${this.id}' not found.`
  }
}

/**
 * A page's `after` cursor (`PageOptions.after`) that is no input item of the response: the response
 * `responseId` is stored, but none of its input items has the id `itemId`. The API reference does not
 * say what `after` with such an id answers; a failure naming it tells a pager its cursor is wrong, where an
 * empty page would read as the end of the list.
 *
 * @since 0.2.0
 * @category errors
 */
export class InputItemNotFound
  extends Schema.TaggedError<InputItemNotFound>("@effect-responses/InputItemNotFound")("InputItemNotFound", {
    responseId: Schema.String,
    itemId: Schema.String
  })
{
  override get message(): string {
    return `No input item with id '${this.itemId}' in response '${this.responseId}'.`
  }
}

/**
 * The store's operations; every one is scoped to a tenant and never returns expired responses.
 *
 * - `save`: stores a response (replacing the tenant's own one with the same id), then enforces
 *   `maxResponses`. Ids are unique over all tenants: saving an id another tenant has stored fails with
 *   `ResponseStoreError` and leaves theirs as it is.
 * - `get`: the Response object, or `None`.
 * - `chain`: the conversation that ends with response `id`: for each response from the first of the chain
 *   (following `previous_response_id`) to `id`, its input items then its output items. Fails with
 *   `ResponseNotFound` naming the first missing response.
 * - `items`: the stored items with the given ids (the most recently stored one for an id met twice); ids
 *   not found are absent from the map.
 * - `inputItems`: a page of a response's input items, or `None` when the response is not stored. Fails
 *   with `InputItemNotFound` when `after` is no input item of the response.
 * - `delete`: deletes a response and its items; `false` when it was not stored.
 * - `purge`: deletes expired responses; the number deleted.
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  readonly save: (entry: Entry) => Effect.Effect<void, ResponseStoreError>
  readonly get: (tenant: string, id: string) => Effect.Effect<Option.Option<ResponseJson>, ResponseStoreError>
  readonly chain: (tenant: string, id: string) => Effect.Effect<ReadonlyArray<Item>, ResponseStoreError | ResponseNotFound>
  readonly items: (
    tenant: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, Item>, ResponseStoreError>
  readonly inputItems: (
    tenant: string,
    id: string,
    options?: PageOptions
  ) => Effect.Effect<Option.Option<ItemPage>, ResponseStoreError | InputItemNotFound>
  readonly delete: (tenant: string, id: string) => Effect.Effect<boolean, ResponseStoreError>
  readonly purge: Effect.Effect<number, ResponseStoreError>
}

/**
 * The `ResponseStore` service.
 *
 * @since 0.2.0
 * @category tags
 */
export class ResponseStore extends Context.Tag("@effect-responses/server/ResponseStore")<ResponseStore, Service>() {}

// ---------------------------------------------------------------------------------------------------------
// schema
// ---------------------------------------------------------------------------------------------------------

/**
 * The table `Migrator` records applied migrations in.
 *
 * @since 0.2.0
 * @category schema
 */
export const MIGRATIONS_TABLE = "effect_responses_migrations"

/**
 * The migrations of the store's schema, by `<id>_<name>` (the `Migrator.fromRecord` form), for SQLite and
 * PostgreSQL (`sql.onDialectOrElse`).
 *
 * @since 0.2.0
 * @category schema
 */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_create_tables": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.onDialectOrElse({
      pg: () =>
        sql`CREATE TABLE effect_responses_responses (
          seq BIGSERIAL PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          tenant TEXT NOT NULL,
          previous_response_id TEXT,
          created_at BIGINT NOT NULL,
          expires_at BIGINT NOT NULL,
          body TEXT NOT NULL
        )`,
      orElse: () =>
        sql`CREATE TABLE effect_responses_responses (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          id TEXT NOT NULL UNIQUE,
          tenant TEXT NOT NULL,
          previous_response_id TEXT,
          created_at INTEGER NOT NULL,
          expires_at INTEGER NOT NULL,
          body TEXT NOT NULL
        )`
    })
    yield* sql`CREATE INDEX effect_responses_responses_expires ON effect_responses_responses (expires_at)`
    yield* sql`CREATE TABLE effect_responses_items (
      response_seq BIGINT NOT NULL,
      tenant TEXT NOT NULL,
      kind SMALLINT NOT NULL,
      position INTEGER NOT NULL,
      item_id TEXT NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (response_seq, kind, position)
    )`
    yield* sql`CREATE INDEX effect_responses_items_by_id ON effect_responses_items (tenant, item_id)`
  })
}

/**
 * Runs `migrations` on the `SqlClient` in the context. Concurrent starts against one database (several
 * gateway instances) are retried while another holds the migration lock.
 *
 * @since 0.2.0
 * @category schema
 */
export const migrate: Effect.Effect<void, ResponseStoreError, SqlClient.SqlClient> = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: MIGRATIONS_TABLE
}).pipe(
  Effect.retry({
    while: (error) => error._tag === "MigrationError" && error.reason === "locked",
    schedule: Schedule.spaced("200 millis"),
    times: 50
  }),
  Effect.asVoid,
  Effect.mapError((cause) => new ResponseStoreError({ description: `the store's migrations failed: ${sqlErrorText(cause)}`, cause }))
)

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

interface ItemRow {
  readonly body: string
}

const INPUT = 0
const OUTPUT = 1

const parse = <A>(text: string, what: string): Effect.Effect<A, ResponseStoreError> =>
  Effect.try({
    try: () => JSON.parse(text) as A,
    catch: (cause) => new ResponseStoreError({ description: `a stored ${what} is not JSON`, cause })
  })

/**
 * An `@effect/sql` error's words with its driver's after them (capped at 500 characters): `SqlError`'s
 * message is only what it was doing ("Failed to execute statement"), the why ("database is locked",
 * "no such table: …") is its `cause`'s.
 */
const sqlErrorText = (error: { readonly message: string; readonly cause?: unknown }): string => {
  const why = error.cause instanceof Error ? error.cause.message : undefined
  return why === undefined || why === "" || why === error.message
    ? error.message
    : `${error.message}: ${AiError.capMessage(why, 500)}`
}

const storeError = (doing: string) => (cause: SqlError) =>
  new ResponseStoreError({ description: `the response store failed ${doing}: ${sqlErrorText(cause)}`, cause })

/**
 * The store on the `SqlClient` in the context (SQLite or PostgreSQL), with `retention`. Expects the schema
 * of `migrations` (see `layer`, which runs them).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (retention: Retention = {}): Effect.Effect<Service, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ttl = Duration.toMillis(Duration.decode(retention.ttl ?? DEFAULT_TTL))
    const maxResponses = retention.maxResponses ?? DEFAULT_MAX_RESPONSES
    // how many more than one a save past the bound deletes (see `save`): a hundredth of the bound
    const evictionSlack = Math.floor(maxResponses / 100)

    const deleteResponses = (where: ReturnType<typeof sql.and>) =>
      Effect.gen(function*() {
        yield* sql`DELETE FROM effect_responses_items WHERE response_seq IN (SELECT seq FROM effect_responses_responses WHERE ${where})`
        const deleted = yield* sql<{ readonly id: string }>`DELETE FROM effect_responses_responses WHERE ${where} RETURNING id`
        return deleted.length
      })

    const save = (entry: Entry) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        // the tenant's own response of that id only: another tenant's stays, and the insert fails on the id
        yield* deleteResponses(sql.and([sql`tenant = ${entry.tenant}`, sql`id = ${entry.response.id}`]))
        const inserted = yield* sql<{ readonly seq: number | string }>`INSERT INTO effect_responses_responses ${
          sql.insert({
            id: entry.response.id,
            tenant: entry.tenant,
            previous_response_id: entry.previousResponseId,
            created_at: now,
            expires_at: now + ttl,
            body: JSON.stringify(entry.response)
          })
        } RETURNING seq`
        const seq = Number(inserted[0]!.seq)
        const output = Array.isArray(entry.response.output) ? (entry.response.output as ReadonlyArray<Item>) : []
        const rows = [
          ...entry.inputItems.map((item, position) => ({ kind: INPUT, position, item })),
          ...output.map((item, position) => ({ kind: OUTPUT, position, item }))
        ].map(({ item, kind, position }) => ({
          response_seq: seq,
          tenant: entry.tenant,
          kind,
          position,
          item_id: typeof item.id === "string" ? item.id : "",
          body: JSON.stringify(item)
        }))
        // bounded batches: SQLite takes at most 32766 bound parameters per statement
        for (let at = 0; at < rows.length; at += 500) {
          yield* sql`INSERT INTO effect_responses_items ${sql.insert(rows.slice(at, at + 500))}`
        }
        // the bound counts what is kept (deleted and replaced responses leave gaps in seq). The oldest seq
        // bounds the count from above, so a store with room pays one lookup. Past the bound the newest
        // maxResponses - evictionSlack stay: finding where to cut walks the newest rows (about 5-8 ms for
        // 100,000 in SQLite, whose driver blocks the event loop), and a full store would walk them on every
        // save were it cut back to the bound alone; cut a hundredth further, it walks once per that many saves.
        const [oldest] = yield* sql<{ readonly seq: number | string | null }>`SELECT MIN(seq) AS seq FROM effect_responses_responses`
        if (oldest?.seq != null && seq - Number(oldest.seq) + 1 > maxResponses) {
          const newest = (rank: number) =>
            sql<{ readonly seq: number | string }>`SELECT seq FROM effect_responses_responses
              ORDER BY seq DESC LIMIT 1 OFFSET ${rank}`
          const [over] = yield* newest(maxResponses)
          if (over !== undefined) {
            const [cutoff] = evictionSlack === 0 ? [over] : yield* newest(maxResponses - evictionSlack)
            yield* deleteResponses(sql.and([sql`seq <= ${cutoff!.seq}`]))
          }
        }
      }).pipe(sql.withTransaction, Effect.mapError(storeError("to save a response")), Effect.withSpan("ResponseStore.save"))

    const get = (tenant: string, id: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        sql<{ readonly body: string }>`SELECT body FROM effect_responses_responses WHERE tenant = ${tenant} AND id = ${id} AND expires_at > ${now}`
      ).pipe(
          Effect.mapError(storeError("to read a response")),
          Effect.flatMap((rows) =>
            rows.length === 0 ? Effect.succeedNone : Effect.asSome(parse<ResponseJson>(rows[0]!.body, "response"))
          )
        )

    const chain = (tenant: string, id: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql<{
          readonly depth: number | string
          readonly id: string
          readonly prev: string | null
          readonly body: string | null
        }>`WITH RECURSIVE chain(seq, id, prev, depth) AS (
            SELECT seq, id, previous_response_id, 0 FROM effect_responses_responses
            WHERE tenant = ${tenant} AND id = ${id} AND expires_at > ${now}
            UNION ALL
            SELECT r.seq, r.id, r.previous_response_id, chain.depth + 1
            FROM effect_responses_responses r JOIN chain ON r.id = chain.prev
            WHERE r.tenant = ${tenant} AND r.expires_at > ${now} AND chain.depth < 100000
          )
          SELECT chain.depth AS depth, chain.id AS id, chain.prev AS prev, i.body AS body
          FROM chain LEFT JOIN effect_responses_items i ON i.response_seq = chain.seq
          ORDER BY chain.depth DESC, i.kind, i.position`.pipe(Effect.mapError(storeError("to read a conversation")))
        if (rows.length === 0) return yield* new ResponseNotFound({ id })
        const first = rows[0]!
        if (first.prev !== null) return yield* new ResponseNotFound({ id: first.prev })
        const items: Array<Item> = []
        for (const row of rows) if (row.body !== null) items.push(yield* parse<Item>(row.body, "item"))
        return items
      }).pipe(Effect.withSpan("ResponseStore.chain"))

    const items = (tenant: string, ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const found = new Map<string, Item>()
        if (ids.length === 0) return found
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql<ItemRow & { readonly item_id: string }>`SELECT i.item_id AS item_id, i.body AS body
          FROM effect_responses_items i JOIN effect_responses_responses r ON r.seq = i.response_seq
          WHERE i.tenant = ${tenant} AND ${sql.in("i.item_id", [...new Set(ids)])} AND r.expires_at > ${now}
          ORDER BY i.response_seq, i.kind, i.position`.pipe(Effect.mapError(storeError("to read items")))
        for (const row of rows) found.set(row.item_id, yield* parse<Item>(row.body, "item"))
        return found
      })

    const inputItems = (tenant: string, id: string, options: PageOptions = {}) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const response = yield* sql<{ readonly seq: number | string }>`SELECT seq FROM effect_responses_responses
          WHERE tenant = ${tenant} AND id = ${id} AND expires_at > ${now}`.pipe(
          Effect.mapError(storeError("to read a response"))
        )
        if (response.length === 0) return Option.none<ItemPage>()
        const rows = yield* sql<ItemRow>`SELECT body FROM effect_responses_items
          WHERE response_seq = ${response[0]!.seq} AND kind = ${INPUT} ORDER BY position`.pipe(
          Effect.mapError(storeError("to read input items"))
        )
        const all: Array<Item> = []
        for (const row of rows) all.push(yield* parse<Item>(row.body, "item"))
        if (options.order !== "asc") all.reverse()
        let start = 0
        if (options.after !== undefined) {
          const at = all.findIndex((item) => item.id === options.after)
          if (at === -1) return yield* new InputItemNotFound({ responseId: id, itemId: options.after })
          start = at + 1
        }
        const limit = options.limit ?? 20
        const data = all.slice(start, start + limit)
        return Option.some<ItemPage>({
          object: "list",
          data,
          first_id: data[0]?.id ?? null,
          last_id: data[data.length - 1]?.id ?? null,
          has_more: data.length > 0 && start + data.length < all.length
        })
      })

    const remove = (tenant: string, id: string) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => deleteResponses(sql.and([sql`tenant = ${tenant}`, sql`id = ${id}`, sql`expires_at > ${now}`]))
      ).pipe(
        sql.withTransaction,
        Effect.map((deleted) => deleted > 0),
        Effect.mapError(storeError("to delete a response"))
      )

    const purge = Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => deleteResponses(sql.and([sql`expires_at <= ${now}`]))
    ).pipe(
      sql.withTransaction,
      Effect.mapError(storeError("to delete expired responses"))
    )

    return { save, get, chain, items, inputItems, delete: remove, purge } satisfies Service
  })

/**
 * The `ResponseStore` on the `SqlClient` in the context: runs `migrations`, then builds the store
 * (`make`), purges expired responses once before the store is handed out and then, for the layer's lifetime,
 * every `purgeInterval` (a purge that fails is logged and retried at the next interval). Fails with
 * `ResponseStoreError` when the migrations fail.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (retention: Retention = {}): Layer.Layer<ResponseStore, ResponseStoreError, SqlClient.SqlClient> =>
  Layer.scoped(
    ResponseStore,
    Effect.gen(function*() {
      yield* migrate
      const store = yield* make(retention)
      const purge = store.purge.pipe(
        Effect.tap((deleted) => deleted > 0 ? Effect.logDebug(`response store: ${deleted} expired responses deleted`) : Effect.void),
        Effect.catchAll((error) => Effect.logWarning(`response store: purge failed: ${error.message}`))
      )
      // the first purge before the store is handed out: a forked one could read the clock whenever it got its
      // connection, later than the store's first calls
      yield* purge
      yield* Effect.sleep(retention.purgeInterval ?? Duration.minutes(1)).pipe(
        Effect.zipRight(purge),
        Effect.forever,
        Effect.forkScoped
      )
      return store
    })
  )
