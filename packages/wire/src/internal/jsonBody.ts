/**
 * The JSON text of a request body, as UTF-8 bytes, built in slices: a top-level array (a long `messages` or
 * `input`) is written one element at a time, yielding to other fibers' I/O every few milliseconds, so that
 * one large request does not hold the event loop for one whole `JSON.stringify` (nor for one encoding or
 * copy of the whole text). The bytes are those `JSON.stringify(body)` gives (elements `JSON.stringify`
 * cannot write become `null`, such keys are left out, as it does).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { BUDGET_MS, yieldToIo } from "../Cooperative.js"

/** Arrays shorter than this are written with the rest of their object. */
const SLICED_ARRAY_LENGTH = 256

/**
 * At most this many characters are written, and bytes copied, between two clock reads: encoding and copying
 * touch fresh memory, whose page faults make a megabyte cost milliseconds on some machines (a VM).
 */
const SLICE_CHARS = 256 * 1024

const encoder = new TextEncoder()

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  if (Array.isArray(value)) return proto === Array.prototype && typeof (value as { toJSON?: unknown }).toJSON !== "function"
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function"
}

/** Whether a top-level value of `body` is an array that `jsonBytes` writes in slices. */
const hasLongArray = (body: object): boolean => {
  for (const key of Object.keys(body)) {
    const value = (body as Record<string, unknown>)[key]
    if (Array.isArray(value) && value.length >= SLICED_ARRAY_LENGTH && isPlain(value)) return true
  }
  return false
}

/**
 * The UTF-8 bytes of `JSON.stringify(body)`; fails with what `JSON.stringify` throws (a cycle, a bigint).
 */
export const jsonBytes = (body: object): Effect.Effect<Uint8Array, unknown> =>
  Effect.suspend(() => {
    // Without a long top-level array there is nothing to write in slices: every value would be written in one
    // piece anyway. One `JSON.stringify` and one encoding, without the copy: the usual request (a prompt of
    // a few messages) was encoded a key at a time, an effect and an encoding per key.
    if (!isPlain(body) || !hasLongArray(body)) {
      return Effect.try({ try: () => encoder.encode(JSON.stringify(body)), catch: (e) => e })
    }
    return Effect.gen(function*() {
      const chunks: Array<Uint8Array> = []
      let size = 0
      const push = (text: string) => {
        const bytes = encoder.encode(text)
        chunks.push(bytes)
        size += bytes.length
      }
      /** Writes `value[from..]` until the budget is spent; the index to go on from. */
      const writeSlice = (value: ReadonlyArray<unknown>, from: number): number => {
        const since = performance.now()
        let slice = ""
        let index = from
        for (; index < value.length; index++) {
          slice += `${index === 0 ? "" : ","}${JSON.stringify(value[index]) ?? "null"}`
          if (slice.length >= SLICE_CHARS || ((index & 63) === 63 && performance.now() - since >= BUDGET_MS)) {
            index++
            break
          }
        }
        push(slice)
        return index
      }
      let first = true
      push("{")
      for (const key of Object.keys(body)) {
        const value = (body as Record<string, unknown>)[key]
        if (!Array.isArray(value) || value.length < SLICED_ARRAY_LENGTH || !isPlain(value)) {
          const text = yield* Effect.try({ try: () => JSON.stringify(value), catch: (e) => e })
          if (text === undefined) continue
          push(`${first ? "" : ","}${JSON.stringify(key)}:${text}`)
          first = false
          continue
        }
        push(`${first ? "" : ","}${JSON.stringify(key)}:[`)
        first = false
        let index = 0
        while (index < value.length) {
          const from = index
          index = yield* Effect.try({ try: () => writeSlice(value, from), catch: (e) => e })
          if (index < value.length) yield* yieldToIo
        }
        push("]")
      }
      push("}")
      // one copy of the whole body would be one long stretch too: copied a slice at a time, yielding
      const out = new Uint8Array(size)
      let offset = 0
      let since = performance.now()
      for (const chunk of chunks) {
        for (let at = 0; at < chunk.length; at += SLICE_CHARS) {
          const piece = chunk.subarray(at, at + SLICE_CHARS)
          out.set(piece, offset)
          offset += piece.length
          if (performance.now() - since >= BUDGET_MS) {
            yield* yieldToIo
            since = performance.now()
          }
        }
      }
      return out
    })
  })
