/**
 * A timer on a `Clock` that needs no fiber on the live clock: there it is a `setTimeout`, as the live clock's
 * own `sleep` is; on any other clock (a `TestClock`, a clock of one's own) it is a fiber sleeping on it. The
 * transport arms two timers per streamed call (the headers timeout, the idle watchdog): as fibers they
 * cost two fiber starts and interruptions and about 35 fiber steps per call (packages/bench/RESULTS.md,
 * "the client path's fixed cost, round 5").
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import { constVoid } from "effect/Function"

const liveClockPrototype: object | null = Object.getPrototypeOf(Clock.make())

/** The longest wait a JS timer takes; the live clock's `sleep` never ends for a longer one. */
const MAX_TIMER_MILLIS = 2 ** 31 - 1

/** Calls `f` once `millis` of `clock` have passed, unless the function returned is called first. */
export const after = (clock: Clock.Clock, millis: number, f: () => void): () => void => {
  if (Object.getPrototypeOf(clock) === liveClockPrototype) {
    if (!(millis <= MAX_TIMER_MILLIS)) return constVoid
    const handle = setTimeout(f, Math.max(0, millis))
    return () => clearTimeout(handle)
  }
  const fiber = Effect.runFork(clock.sleep(Duration.millis(millis)))
  fiber.addObserver((exit) => {
    if (exit._tag === "Success") f()
  })
  return () => fiber.unsafeInterruptAsFork(FiberId.none)
}
