/**
 * `CaptureFile`: frames of a whole capture, JSON parsing and file reading, with errors naming the file
 * and the line.
 */
import { CaptureFile } from "@effect-responses/wire"
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

const makeError = (fields: CaptureFile.ErrorFields) => fields

describe("CaptureFile", () => {
  it("raw SSE: one frame per event, with the line its data starts; [DONE] kept", () => {
    const text = "event: a\ndata: {\"type\":\"a\"}\n\n: keep-alive\n\ndata: [DONE]\n\n"
    assert.isTrue(CaptureFile.isSse(text))
    assert.deepStrictEqual(CaptureFile.frames(text), [
      { data: "{\"type\":\"a\"}", line: 2, event: "a" },
      { data: "[DONE]", line: 6 }
    ])
  })

  it("raw SSE: a line of a field named in `fields` is a frame of its own; other unknown fields are ignored", () => {
    const text = "error: {\"code\":400}\n\nwhatever: x\n\ndata: [DONE]\n\n"
    assert.isFalse(CaptureFile.isSse(text))
    assert.isTrue(CaptureFile.isSse(text, ["error"]))
    assert.deepStrictEqual(CaptureFile.frames(text, ["error"]), [
      { data: "{\"code\":400}", line: 1, field: "error" },
      { data: "[DONE]", line: 5 }
    ])
  })

  it("line-JSON: one frame per line that is not blank, trimmed", () => {
    const text = "{\"a\":1}\n\n  {\"b\":2}  \n"
    assert.isFalse(CaptureFile.isSse(text))
    assert.deepStrictEqual(CaptureFile.frames(text), [{ data: "{\"a\":1}", line: 1 }, { data: "{\"b\":2}", line: 3 }])
  })

  it("malformed JSON names the source, the line and an excerpt", () => {
    const parsed = CaptureFile.parseJson({ data: "{nope", line: 7 }, "x.sse", makeError)
    assert.isTrue(Either.isLeft(parsed))
    if (Either.isLeft(parsed)) {
      assert.strictEqual(parsed.left.source, "x.sse")
      assert.strictEqual(parsed.left.line, 7)
      assert.match(parsed.left.description, /^malformed JSON \(.+\) in "\{nope"$/)
    }
    assert.deepStrictEqual(CaptureFile.parseJson({ data: "{\"a\":1}", line: 1 }, "x", makeError), Either.right({ a: 1 }))
  })

  it.effect("a missing file fails with `no such file`, naming the path", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(CaptureFile.readText("/no/such/capture.sse", makeError))
      assert.deepStrictEqual(error, { source: "/no/such/capture.sse", description: "no such file" })
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
