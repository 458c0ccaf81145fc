import { describe, expect, it, vi } from "@effect/vitest"
import * as Cooperative from "@effect-responses/wire/Cooperative"
import * as Effect from "effect/Effect"
import { jsonBytes } from "../src/internal/jsonBody.js"

describe("Cooperative", () => {
  it.effect("yieldToIo lets an I/O callback queued before it run first", () =>
    Effect.gen(function*() {
      let ran = false
      setImmediate(() => {
        ran = true
      })
      expect(ran).toBe(false)
      yield* Cooperative.yieldToIo
      expect(ran).toBe(true)
    }))

  it("makeBudget reads the clock only every 64 ticks: with no budget left, the 64th tick says yield", () => {
    const budget = Cooperative.makeBudget(0)
    const ticks = Array.from({ length: 64 }, () => budget.tick())
    expect(ticks.slice(0, 63).every((t) => !t)).toBe(true)
    expect(ticks[63]).toBe(true)
  })

  it("makeBudget(ms, every) reads the clock every `every` ticks", () => {
    const each = Cooperative.makeBudget(0, 1)
    expect([each.tick(), each.tick()]).toEqual([true, true])
    const third = Cooperative.makeBudget(0, 3)
    expect(Array.from({ length: 6 }, () => third.tick())).toEqual([false, false, true, false, false, true])
  })
})

describe("Cooperative budgets in one turn of the event loop", () => {
  // the clock stubbed: what is asserted is where each budget counts from, not how long anything takes
  const withClock = <A>(body: (clock: { now: number }) => Effect.Effect<A>) =>
    Effect.suspend(() => {
      const clock = { now: 1_000 }
      const spy = vi.spyOn(performance, "now").mockImplementation(() => clock.now)
      return Effect.ensuring(body(clock), Effect.sync(() => spy.mockRestore()))
    })

  it.effect("a budget made after another loop's yield counts from that yield, not from when it was made", () =>
    withClock((clock) =>
      Effect.gen(function*() {
        yield* Cooperative.yieldToIo
        // the first loop of the turn spends 1.5 ms, then the next loop makes its budget
        clock.now += 1.5
        const next = Cooperative.makeBudget(2, 1)
        clock.now += 0.6
        // 2.1 ms of this turn's work: the second loop yields (it counted 0.6 ms of its own before)
        expect(next.tick()).toBe(true)
      })
    ))

  it.effect("a budget made long after the last yield counts from when it was made", () =>
    withClock((clock) =>
      Effect.gen(function*() {
        yield* Cooperative.yieldToIo
        clock.now += 50
        const budget = Cooperative.makeBudget(2, 1)
        clock.now += 1.9
        expect(budget.tick()).toBe(false)
        clock.now += 0.2
        expect(budget.tick()).toBe(true)
      })
    ))

  it.effect("another loop's yield does not restart a budget's count: fibers resumed in one turn run one after the other", () =>
    withClock((clock) =>
      Effect.gen(function*() {
        clock.now += 50
        const budget = Cooperative.makeBudget(2, 1)
        clock.now += 1.5
        // another fiber's yield resumes (in the same turn as this loop's work, as far as the clock can tell)
        yield* Cooperative.yieldToIo
        clock.now += 0.6
        expect(budget.tick()).toBe(true)
      })
    ))
})

describe("the JSON body writer's budget", () => {
  // the clock stubbed, advancing 0.01 ms per read: what is asserted is where the writer's count starts
  it.effect("counts from the turn's start when it begins right after other work of that turn (the Chat request builder's)", () =>
    Effect.suspend(() => {
      const clock = { now: 1_000 }
      const now = vi.spyOn(performance, "now").mockImplementation(() => (clock.now += 0.01))
      const yields: Array<number> = []
      const immediate = globalThis.setImmediate
      const spy = vi.spyOn(globalThis, "setImmediate").mockImplementation(((callback: () => void) => {
        yields.push(clock.now)
        return immediate(callback)
      }) as unknown as typeof setImmediate)
      // 20,000 small members: written member by member, the clock read every 64 of them
      const body = { model: "m", messages: Array.from({ length: 20_000 }, (_, i) => ({ role: "user", content: `m${i}` })) }
      return Effect.gen(function*() {
        yield* Cooperative.yieldToIo
        const resumed = clock.now
        yields.length = 0
        // the builder's last slice spent 1.8 ms of this turn, then the writer begins
        clock.now += 1.8
        const bytes = yield* jsonBytes(body)
        expect(new TextDecoder().decode(bytes)).toBe(JSON.stringify(body))
        // its first pause comes once the turn's budget (2 ms) is spent, not 2 ms after the writer began
        expect(yields[0]! - resumed).toBeLessThan(Cooperative.BUDGET_MS + 0.5)
      }).pipe(Effect.ensuring(Effect.sync(() => {
        spy.mockRestore()
        now.mockRestore()
      })))
    }))
})
