/**
 * `Media`: data URLs and default file names.
 */
import { Media } from "@effect-responses/wire"
import { assert, describe, it } from "@effect/vitest"

describe("Media", () => {
  it("dataUrl and defaultFilename", () => {
    assert.strictEqual(Media.dataUrl("image/png", "AAAA"), "data:image/png;base64,AAAA")
    assert.strictEqual(Media.defaultFilename("application/pdf"), "file.pdf")
    assert.strictEqual(Media.defaultFilename("application/ld+json; charset=utf-8"), "file.ld")
    assert.strictEqual(Media.defaultFilename("application"), "file")
  })
})
