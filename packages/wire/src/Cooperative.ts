/**
 * Cooperative yields for long CPU work over large values (a request of tens of thousands of input items, a
 * prompt of as many messages, a body of many megabytes): the work pauses every few milliseconds so that other
 * requests' I/O is served meanwhile, instead of holding the event loop for the whole value. Used by the
 * gateway's request decoding, the Chat Completions request builder and the JSON body writer.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"

/**
 * Lets the event loop run pending I/O (a macrotask, `setImmediate`) before resuming, so that other
 * requests are served meanwhile. Interruptible: an interrupted wait clears its timer.
 *
 * @since 0.2.0
 * @category yielding
 */
export const yieldToIo: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => {
    resumedAt = performance.now()
    resume(Effect.void)
  })
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * When the last `yieldToIo` resumed (`performance.now()`): the start of the work running now when its turn
 * of the event loop began with that yield. A `Budget` made soon after counts from it, so that loops that
 * follow one another in one turn (the body's parse, then the decoder, then the Chat request builder) share
 * one budget instead of each spending its own.
 */
let resumedAt = -Infinity

/**
 * The milliseconds of work between two yields that `makeBudget` allows by default (and the JSON body
 * writer uses): a request that arrives meanwhile waits for the rest of the slice, then for its own
 * handling. 2 ms, at the cost of a turn of the event loop (tens of microseconds) every 2 ms (it was 4).
 *
 * @since 0.2.0
 * @category yielding
 */
export const BUDGET_MS = 2

/**
 * A yield point for loops over many elements.
 *
 * @since 0.2.0
 * @category yielding
 */
export interface Budget {
  /**
   * `true` once about the budget's milliseconds of work passed since the last `true` (the clock is read
   * every `every` elements, 64 by default); the caller then yields with `yieldToIo`. `elements` (default 1)
   * is how many elements the work since the last tick held: an element that holds many (a message of
   * thousands of content parts) counts as them.
   */
  readonly tick: (elements?: number) => boolean
}

/**
 * A `Budget` of `budgetMs` milliseconds (default `BUDGET_MS`) of work between yields, reading the clock every `every`
 * ticks (default 64: a tick per element of a long array; 1 for a loop that ticks once per slice of its
 * own, e.g. every few KiB of bytes). Usage:
 * `const budget = makeBudget(); for (...) { if (budget.tick()) yield* yieldToIo; ... }`.
 *
 * A budget made less than `budgetMs` after a `yieldToIo` resumed counts from that resume (the loop follows
 * another in the same turn of the event loop: the decoder after the body's parse), else from when it was
 * made; then from its own last `true`. A yield by another loop since does not restart its count: the
 * fibers resumed in one turn run one after the other, and each starting afresh from its own resume made
 * their stretches add up.
 *
 * @since 0.2.0
 * @category yielding
 */
export const makeBudget = (budgetMs = BUDGET_MS, every = 64): Budget => {
  let calls = 0
  // made less than a budget after a yield resumed: the work of this turn began then (an earlier loop's)
  const made = performance.now()
  let since = made - resumedAt < budgetMs ? resumedAt : made
  return {
    tick: (elements = 1) => {
      calls += elements
      if (calls < every) return false
      calls = 0
      const now = performance.now()
      if (now - since < budgetMs) return false
      since = now
      return true
    }
  }
}

/**
 * A long string and the JSON text it was read from: `bytes`, joined, are the UTF-8 bytes of exactly
 * `JSON.stringify(value)` (its quotes included). A reader that parsed the string in slices (the gateway's
 * request body: a 10 MB `instructions` or tool description) knows that text without making the string
 * whole; a writer that meets the string again (the JSON request body to the upstream, the echo of the
 * request in the answer) copies `bytes` instead of escaping the string. Escaping a string reads it whole,
 * and V8 first makes a string built of slices one string (a copy of 10 MB into fresh memory, 6-7 ms in one
 * stretch of the event loop); copying the bytes can be done a piece at a time.
 *
 * @since 0.2.0
 * @category long strings
 */
export interface JsonText {
  readonly value: string
  /** The UTF-8 bytes of `JSON.stringify(value)`, in pieces (views of the body they were read from). */
  readonly bytes: ReadonlyArray<Uint8Array>
}

/**
 * The `JsonText`s known to the fiber (the request it serves), empty by default: writers of JSON bytes
 * (`HttpTransport`'s request body) and text (the gateway's answer) look long strings up here
 * (`findJsonText`). Set it only to texts that are exactly `JSON.stringify(value)` as UTF-8: a writer copies
 * them unchecked.
 *
 * @since 0.2.0
 * @category long strings
 */
export const currentJsonTexts: FiberRef.FiberRef<ReadonlyArray<JsonText>> = FiberRef.unsafeMake<ReadonlyArray<JsonText>>([])

/**
 * The entry of `texts` whose value equals `value`, or `undefined`. The same string (by identity, as the
 * reader left it in the parsed value) compares without reading its characters; an equal string elsewhere
 * compares character by character, and its JSON text is the same.
 *
 * @since 0.2.0
 * @category long strings
 */
export const findJsonText = (texts: ReadonlyArray<JsonText>, value: string): JsonText | undefined => {
  for (const text of texts) {
    if (text.value.length === value.length && text.value === value) return text
  }
  return undefined
}
