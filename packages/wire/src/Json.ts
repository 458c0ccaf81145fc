/**
 * Small readers for JSON values received from the wire (request bodies, response bodies, SSE payloads):
 * each looks at one field of a parsed JSON object and never throws. A field of another type reads as
 * `undefined`, so a server that adds or changes fields cannot make a reader fail.
 *
 * @since 0.1.0
 */

/**
 * A parsed JSON object (not an array, not `null`), with unknown field values.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonObject {
  readonly [key: string]: unknown
}

/**
 * Whether `u` is a JSON object: an object that is neither `null` nor an array.
 *
 * @since 0.1.0
 * @category guards
 */
export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The string at `o[key]`, or `undefined` when the field is absent or not a string.
 *
 * @since 0.1.0
 * @category accessors
 */
export const stringField = (o: JsonObject, key: string): string | undefined => {
  const value = o[key]
  return typeof value === "string" ? value : undefined
}

/**
 * The finite number at `o[key]`, or `undefined` when the field is absent, not a number, `NaN` or infinite.
 *
 * @since 0.1.0
 * @category accessors
 */
export const numberField = (o: JsonObject, key: string): number | undefined => {
  const value = o[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

/**
 * The JSON object at `o[key]`, or `undefined` when the field is absent or not an object (see `isObject`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const objectField = (o: JsonObject, key: string): JsonObject | undefined => {
  const value = o[key]
  return isObject(value) ? value : undefined
}

/**
 * The array at `o[key]` (its elements unchecked), or `undefined` when the field is absent or not an array.
 *
 * @since 0.1.0
 * @category accessors
 */
export const arrayField = (o: JsonObject, key: string): ReadonlyArray<unknown> | undefined => {
  const value = o[key]
  return Array.isArray(value) ? value : undefined
}

/**
 * Scans the characters of a JSON string literal in `text` that start at `from` (just after its opening
 * quote), without decoding them: the index of its closing quote times two, plus one when the literal holds
 * a backslash escape (so `result >> 1` is the closing quote's index and `result & 1` says whether
 * `JSON.parse` is needed to read it); `-1` when it reaches a raw control character (U+0000-U+001F, which
 * `JSON.parse` refuses in a string) or the end of `text`. Escapes are skipped, not checked: a literal with
 * an escape must still go through `JSON.parse`, which refuses a bad one. The Chat Completions and
 * Responses decoders use it to read a delta chunk or event from a template without `JSON.parse`
 * (RFC 8259, section 7).
 *
 * @since 0.2.0
 * @category scanning
 */
export const scanString = (text: string, from: number): number => {
  let escapes = 0
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) return i * 2 + escapes
    if (c === 92) {
      escapes = 1
      i++
    } else if (c < 32) {
      return -1
    }
  }
  return -1
}
