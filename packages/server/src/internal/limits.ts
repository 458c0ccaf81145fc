/**
 * Bounds on what one request may cost the gateway: JSON nesting depth (checked on the text, before
 * `JSON.parse`, so that no recursion ever meets a deep value), message caps, and a cooperative yield that
 * lets other requests' I/O run during long CPU work. (Bodies read up to a bound: `HttpTransport.readBounded`
 * of `@effect-responses/wire`.)
 *
 * @internal
 */
import * as Effect from "effect/Effect"

/**
 * The deepest nesting of objects and arrays in a JSON text (strings skipped), stopping as soon as `limit`
 * is passed: the 0-based offset where it was passed, or -1 when the text stays within `limit`. Linear in
 * the text; runs in slices of `slice` characters with a macrotask yield between them.
 */
export const depthExceededAt = (text: string, limit: number, slice = 1 << 20): Effect.Effect<number> =>
  Effect.gen(function*() {
    let depth = 0
    let inString = false
    for (let start = 0; start < text.length; start += slice) {
      if (start > 0) yield* yieldToIo
      const end = Math.min(text.length, start + slice)
      for (let i = start; i < end; i++) {
        const c = text.charCodeAt(i)
        if (inString) {
          if (c === 92 /* \ */) i++
          else if (c === 34 /* " */) inString = false
        } else if (c === 34) {
          inString = true
        } else if (c === 123 /* { */ || c === 91 /* [ */) {
          if (++depth > limit) return i
        } else if (c === 125 /* } */ || c === 93 /* ] */) {
          depth--
        }
      }
    }
    return -1
  })

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
