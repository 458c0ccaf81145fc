/**
 * A cooperative yield for loops over a large prompt (tens of thousands of messages): building a request
 * must not hold the event loop for long while other requests wait for their I/O.
 *
 * @internal
 */
import * as Effect from "effect/Effect"

/** Lets the event loop run pending I/O (a macrotask), so that other requests are served meanwhile. */
export const yieldToIo: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * A yield point for loops over many elements: `tick()` returns `true` once about `budgetMs` of work passed
 * since the last yield (checked every 64 calls), after which the caller yields with `yieldToIo`.
 */
export const makeBudget = (budgetMs = 4) => {
  let calls = 0
  let since = performance.now()
  return {
    tick: (): boolean => {
      if ((++calls & 63) !== 0) return false
      const now = performance.now()
      if (now - since < budgetMs) return false
      since = now
      return true
    }
  }
}
