import { describe, expect, it } from "@effect/vitest"
import * as Cooperative from "@effect-responses/wire/Cooperative"
import * as Effect from "effect/Effect"

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
