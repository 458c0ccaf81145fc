/**
 * Bounds on what one request may cost the gateway: message caps, and a cooperative yield that lets other
 * requests' I/O run during long CPU work. The JSON nesting bound is checked in `jsonSlices`; bodies are read
 * up to a bound by `HttpTransport.readBounded` of `@effect-responses/wire`.
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
    },
    reset: (): void => {
      since = performance.now()
    }
  }
}

/** The longest message the gateway puts into an answer or a log line, in characters. */
export const MAX_MESSAGE_CHARS = 2000

/** At most `max` characters of `text` (default `MAX_MESSAGE_CHARS`), with how much was cut when cut. */
export const capMessage = (text: string, max = MAX_MESSAGE_CHARS): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`
