/**
 * `Json.scanString` against `JSON.parse`: where a string literal ends and whether it needs decoding.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Json from "@effect-responses/wire/Json"

describe("Json.scanString", () => {
  it("finds a literal's closing quote and says whether it holds an escape, as JSON.parse reads it", () => {
    for (const value of ["", "plain", "a\"quote", "back\\slash", "tab\there", "line\nbreak", "é ü 日本", "\u2028", "😀"]) {
      const text = `{"delta":${JSON.stringify(value)},"x":1}`
      const from = text.indexOf(":") + 2
      const scanned = Json.scanString(text, from)
      const end = scanned >> 1
      expect(text[end], value).toBe("\"")
      expect(JSON.parse(text.slice(from - 1, end + 1)), value).toBe(value)
      expect(scanned & 1, value).toBe(text.slice(from, end).includes("\\") ? 1 : 0)
    }
  })

  it("a raw control character or no closing quote: -1", () => {
    expect(Json.scanString("{\"a\":\"x\ty\"}", 6)).toBe(-1)
    expect(Json.scanString("{\"a\":\"xy", 6)).toBe(-1)
    expect(Json.scanString("{\"a\":\"x\\\"", 6)).toBe(-1)
  })
})
