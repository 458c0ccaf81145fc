/**
 * The `ResponseStore`, one suite run against a real SQLite file and a real PostgreSQL server: save and
 * read back across a restart, conversation chains, item lookup, input item pages, delete, tenant
 * isolation, and retention (TTL, size bound, purge).
 */
import { ResponseStore } from "@effect-responses/server"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { backends, freshDatabase } from "./storeBackends.js"

const user = (id: string, text: string): ResponseStore.Item => ({
  id,
  type: "message",
  role: "user",
  content: [{ type: "input_text", text }]
})
const assistant = (id: string, text: string): ResponseStore.Item => ({
  id,
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [], logprobs: [] }]
})

const entry = (
  tenant: string,
  id: string,
  previousResponseId: string | null,
  input: ReadonlyArray<ResponseStore.Item>,
  output: ReadonlyArray<ResponseStore.Item>
): ResponseStore.Entry => ({
  tenant,
  previousResponseId,
  inputItems: input,
  response: { id, object: "response", status: "completed", model: "m", output, previous_response_id: previousResponseId }
})

const withStore = <A, E>(
  database: { readonly layer: (retention?: ResponseStore.Retention) => Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError> },
  use: (store: ResponseStore.Service) => Effect.Effect<A, E>,
  retention: ResponseStore.Retention = {}
) => Effect.scoped(Effect.flatMap(Layer.build(database.layer(retention)), (context) => use(context.unsafeMap.get(ResponseStore.ResponseStore.key) as ResponseStore.Service)))

for (const backend of backends) {
  describe(`ResponseStore on a ${backend.name}`, () => {
    it.scoped("saves a chain, reads it back after a restart, pages input items, deletes", () =>
      Effect.gen(function*() {
        const database = yield* freshDatabase(backend)
        yield* withStore(database, (store) =>
          Effect.gen(function*() {
            yield* store.save(entry("t1", "resp_1", null, [user("msg_u1", "Hi")], [assistant("msg_a1", "Hello")]))
            yield* store.save(
              entry("t1", "resp_2", "resp_1", [user("msg_u2", "Again"), user("msg_u3", "and again")], [assistant("msg_a2", "Sure")])
            )
          }))
        // a new store on the same database: a gateway restart
        yield* withStore(database, (store) =>
          Effect.gen(function*() {
            const response = yield* store.get("t1", "resp_2")
            assert.isTrue(Option.isSome(response))
            expect(Option.getOrThrow(response)).toMatchObject({ id: "resp_2", previous_response_id: "resp_1" })
            const chain = yield* store.chain("t1", "resp_2")
            expect(chain.map((item) => item.id)).toEqual(["msg_u1", "msg_a1", "msg_u2", "msg_u3", "msg_a2"])
            expect(chain[1]).toEqual(assistant("msg_a1", "Hello"))

            const found = yield* store.items("t1", ["msg_a1", "msg_u3", "msg_nope"])
            expect([...found.keys()].sort()).toEqual(["msg_a1", "msg_u3"])
            expect(found.get("msg_u3")).toEqual(user("msg_u3", "and again"))

            const desc = Option.getOrThrow(yield* store.inputItems("t1", "resp_2", { limit: 1 }))
            expect(desc).toEqual({ object: "list", data: [user("msg_u3", "and again")], first_id: "msg_u3", last_id: "msg_u3", has_more: true })
            const next = Option.getOrThrow(yield* store.inputItems("t1", "resp_2", { limit: 1, after: "msg_u3" }))
            expect(next.data.map((item) => item.id)).toEqual(["msg_u2"])
            assert.isFalse(next.has_more)
            // the last item as the cursor: an empty page, and no more
            const end = Option.getOrThrow(yield* store.inputItems("t1", "resp_2", { limit: 1, after: "msg_u2" }))
            expect(end).toEqual({ object: "list", data: [], first_id: null, last_id: null, has_more: false })
            // an unknown cursor, or an item of the response that is no input item of it: a failure naming it,
            // not an empty page a pager would read as the end of the list
            for (const after of ["msg_nope", "msg_a2", "msg_u1"]) {
              expect(yield* Effect.exit(store.inputItems("t1", "resp_2", { limit: 1, after }))).toEqual(
                Exit.fail(new ResponseStore.InputItemNotFound({ responseId: "resp_2", itemId: after }))
              )
            }
            const asc = Option.getOrThrow(yield* store.inputItems("t1", "resp_2", { order: "asc" }))
            expect(asc.data.map((item) => item.id)).toEqual(["msg_u2", "msg_u3"])
            assert.isTrue(Option.isNone(yield* store.inputItems("t1", "resp_404")))

            assert.isTrue(yield* store.delete("t1", "resp_1"))
            assert.isFalse(yield* store.delete("t1", "resp_1"))
            assert.isTrue(Option.isNone(yield* store.get("t1", "resp_1")))
            // the chain through a deleted response names the missing link
            const broken = yield* Effect.exit(store.chain("t1", "resp_2"))
            expect(broken).toEqual(Exit.fail(new ResponseStore.ResponseNotFound({ id: "resp_1" })))
            expect((yield* store.items("t1", ["msg_a1"])).size).toBe(0)
          }))
      }))

    it.scoped("keeps tenants apart", () =>
      Effect.gen(function*() {
        const database = yield* freshDatabase(backend)
        yield* withStore(database, (store) =>
          Effect.gen(function*() {
            yield* store.save(entry("alice", "resp_a", null, [user("msg_secret", "my secret")], [assistant("msg_ra", "ok")]))
            assert.isTrue(Option.isNone(yield* store.get("bob", "resp_a")))
            expect(yield* Effect.exit(store.chain("bob", "resp_a"))).toEqual(
              Exit.fail(new ResponseStore.ResponseNotFound({ id: "resp_a" }))
            )
            expect((yield* store.items("bob", ["msg_secret"])).size).toBe(0)
            assert.isTrue(Option.isNone(yield* store.inputItems("bob", "resp_a")))
            assert.isFalse(yield* store.delete("bob", "resp_a"))
            // a chain of bob's cannot continue alice's response
            yield* store.save(entry("bob", "resp_b", "resp_a", [user("msg_b", "hi")], []))
            expect(yield* Effect.exit(store.chain("bob", "resp_b"))).toEqual(
              Exit.fail(new ResponseStore.ResponseNotFound({ id: "resp_a" }))
            )
            assert.isTrue(Option.isSome(yield* store.get("alice", "resp_a")))
            // saving an id alice has fails for bob, and leaves alice's response and items as they are
            const taken = yield* Effect.exit(store.save(entry("bob", "resp_a", null, [user("msg_x", "x")], [])))
            assert.isTrue(Exit.isFailure(taken))
            expect(Option.getOrThrow(yield* store.get("alice", "resp_a"))).toMatchObject({ id: "resp_a" })
            expect((yield* store.chain("alice", "resp_a")).map((item) => item.id)).toEqual(["msg_secret", "msg_ra"])
            assert.isTrue(Option.isNone(yield* store.get("bob", "resp_a")))
          }))
      }))

    it.scoped("retention: expired responses are unreadable and purged; the size bound deletes the oldest", () =>
      Effect.gen(function*() {
        const database = yield* freshDatabase(backend)
        yield* withStore(
          database,
          (store) =>
            Effect.gen(function*() {
              yield* store.save(entry("t", "resp_old", null, [user("msg_1", "1")], []))
              yield* TestClock.adjust("30 minutes")
              yield* store.save(entry("t", "resp_mid", null, [user("msg_2", "2")], []))
              yield* store.save(entry("t", "resp_new", null, [user("msg_3", "3")], []))
              // the bound (2) deleted the oldest
              assert.isTrue(Option.isNone(yield* store.get("t", "resp_old")))
              assert.isTrue(Option.isSome(yield* store.get("t", "resp_mid")))
              yield* TestClock.adjust("61 minutes")
              // one hour after they were stored: expired, unreadable before any purge
              assert.isTrue(Option.isNone(yield* store.get("t", "resp_mid")))
              assert.isTrue(Option.isNone(yield* store.get("t", "resp_new")))
              expect((yield* store.items("t", ["msg_2", "msg_3"])).size).toBe(0)
              expect(yield* store.inputItems("t", "resp_new")).toEqual(Option.none())
              expect(yield* store.purge).toBe(2)
              yield* store.save(entry("t", "resp_last", null, [user("msg_4", "4")], []))
              expect(yield* store.purge).toBe(0)
              assert.isTrue(Option.isSome(yield* store.get("t", "resp_last")))
            }),
          // the purge fiber waits a day: this test's purges are its own
          { ttl: "1 hour", maxResponses: 2, purgeInterval: "1 day" }
        )
      }))

    it.scoped("the size bound counts the responses kept, over all tenants", () =>
      Effect.gen(function*() {
        const database = yield* freshDatabase(backend)
        yield* withStore(
          database,
          (store) =>
            Effect.gen(function*() {
              // the tester's maxresp.sh: store r1, r2, delete r2, store r3: both r1 and r3 are kept (2 of 2)
              yield* store.save(entry("t", "resp_1", null, [user("msg_1", "1")], []))
              yield* store.save(entry("t", "resp_2", null, [user("msg_2", "2")], []))
              assert.isTrue(yield* store.delete("t", "resp_2"))
              yield* store.save(entry("t", "resp_3", null, [user("msg_3", "3")], []))
              assert.isTrue(Option.isSome(yield* store.get("t", "resp_1")))
              assert.isTrue(Option.isSome(yield* store.get("t", "resp_3")))
              // one more, of another tenant: the bound is the store's, the oldest (resp_1, with its items) goes
              yield* store.save(entry("u", "resp_4", null, [user("msg_4", "4")], []))
              assert.isTrue(Option.isNone(yield* store.get("t", "resp_1")))
              expect((yield* store.items("t", ["msg_1"])).size).toBe(0)
              assert.isTrue(Option.isSome(yield* store.get("t", "resp_3")))
              assert.isTrue(Option.isSome(yield* store.get("u", "resp_4")))
            }),
          { maxResponses: 2, purgeInterval: "1 day" }
        )
      }))

    it.scoped("past a bound of 100 or more, the oldest are deleted down to 99 % of it", () =>
      Effect.gen(function*() {
        const database = yield* freshDatabase(backend)
        yield* withStore(
          database,
          (store) =>
            Effect.gen(function*() {
              const ids = Array.from({ length: 202 }, (_, i) => `resp_${i}`)
              for (const id of ids.slice(0, 200)) yield* store.save(entry("t", id, null, [], []))
              const kept = () =>
                Effect.map(Effect.forEach(ids, (id) => store.get("t", id)), (found) => found.filter(Option.isSome).length)
              expect(yield* kept()).toBe(200)
              // one past the bound (200): the newest 198 stay, the oldest three (resp_0 to resp_2) go
              yield* store.save(entry("t", ids[200]!, null, [], []))
              expect(yield* kept()).toBe(198)
              assert.isTrue(Option.isNone(yield* store.get("t", "resp_2")))
              assert.isTrue(Option.isSome(yield* store.get("t", "resp_3")))
              // room again: the next save deletes nothing
              yield* store.save(entry("t", ids[201]!, null, [], []))
              expect(yield* kept()).toBe(199)
            }),
          { maxResponses: 200, purgeInterval: "1 day" }
        )
      }))

    it.scoped("purge deletes expired responses and their items", () =>
      Effect.gen(function*() {
        const database = yield* freshDatabase(backend)
        yield* withStore(
          database,
          (store) =>
            Effect.gen(function*() {
              yield* store.save(entry("t", "resp_1", null, [user("msg_1", "1")], [assistant("msg_2", "2")]))
              yield* store.save(entry("t", "resp_2", null, [user("msg_3", "3")], []))
              yield* TestClock.adjust("2 minutes")
              expect(yield* store.purge).toBe(2)
              expect(yield* store.purge).toBe(0)
            }),
          // the purge fiber waits a day: this test's purges are its own
          { ttl: "1 minute", purgeInterval: "1 day" }
        )
      }))
  })
}
