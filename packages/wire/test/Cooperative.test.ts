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
})
