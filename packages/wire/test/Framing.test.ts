/**
 * `Framing`: the framers give the same payloads however the text is cut, and the decoding channel feeds
 * them to a payload decoder.
 */
import { AiError } from "@effect-responses/core"
import { Framing } from "@effect-responses/wire"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Stream from "effect/Stream"
import { createParser } from "eventsource-parser"

const frame = (framer: Framing.Framer, pieces: ReadonlyArray<string>) => {
  const payloads: Array<string> = []
  const lines: Array<number> = []
  const names: Array<string | undefined> = []
  for (const piece of pieces) {
    const error = framer.push(piece, payloads, lines, names)
    if (error !== undefined) return { payloads, lines, names, error }
  }
  return { payloads, lines, names, error: framer.end(payloads, lines, names) }
}

const SSE = "\uFEFFevent: a\r\ndata: {\"n\":1}\r\n\r\n: comment\rdata: {\"n\":2}\r\rdata: one\ndata: two\n\n"

describe("Framing", () => {
  it("an SSE framer reads CRLF, lone CR, a BOM and multi-line data, with the line each event's data starts", () => {
    const { error, lines, payloads } = frame(Framing.makeSseFramer(1024), [SSE])
    assert.isUndefined(error)
    assert.deepStrictEqual(payloads, ["{\"n\":1}", "{\"n\":2}", "one\ntwo"])
    assert.deepStrictEqual(lines, [2, 5, 7])
  })

  it.prop("any split of SSE text (a CRLF cut in two included) gives the same payloads and lines", [
    FastCheck.array(FastCheck.integer({ min: 0, max: SSE.length }), { maxLength: 8 })
  ], ([cuts]) => {
    const points = [...new Set(cuts)].sort((a, b) => a - b)
    const pieces = [0, ...points].map((start, i) => SSE.slice(start, [...points, SSE.length][i]))
    const { lines, payloads } = frame(Framing.makeSseFramer(1024), pieces)
    assert.deepStrictEqual(payloads, ["{\"n\":1}", "{\"n\":2}", "one\ntwo"])
    assert.deepStrictEqual(lines, [2, 5, 7])
  })

  it.prop("the line of an event's data is the one its `data` field starts on, however the text is cut", [
    FastCheck.array(FastCheck.integer({ min: 0, max: 64 }), { maxLength: 6 })
  ], ([cuts]) => {
    // `database:` and `dat` are other fields; an event without data is not dispatched; `data` alone is data
    const text = "id: 1\ndatabase: x\ndata: a\n\nevent: e\n\n: c\r\ndat\r\ndata\n\ndata:b\rdata: c\r\r"
    const points = [...new Set(cuts.filter((cut) => cut < text.length))].sort((a, b) => a - b)
    const pieces = [0, ...points].map((start, i) => text.slice(start, [...points, text.length][i]))
    const { lines, payloads } = frame(Framing.makeSseFramer(1024), pieces)
    assert.deepStrictEqual(payloads, ["a", "", "b\nc"])
    assert.deepStrictEqual(lines, [3, 9, 11])
  })

  it.prop("SSE text of any lines, endings and cuts frames as a line-by-line reading of the SSE rules does", [
    FastCheck.array(
      FastCheck.tuple(
        FastCheck.oneof(
          FastCheck.constantFrom("", "data: x", "data:y", "data", "data: ", "event: e", "id: 1", ": c", "dat", "datax: 1"),
          FastCheck.string({ maxLength: 6 }).filter((line) => !/[\r\n]/.test(line))
        ),
        FastCheck.constantFrom("\n", "\r\n", "\r")
      ),
      { maxLength: 14 }
    ),
    FastCheck.string({ maxLength: 8 }).filter((line) => !/[\r\n]/.test(line)),
    FastCheck.array(FastCheck.nat(120), { maxLength: 6 })
  ], ([lines, cutOff, cuts]) => {
    const text = lines.map(([line, ending]) => line + ending).join("") + cutOff
    // the reference: whole lines, `data` fields joined with LF, an event dispatched by a blank line or by the
    // end of the input once its lines all ended; a cut-off last line is dropped with its event
    const expected: Array<string> = []
    const starts: Array<number> = []
    let data: Array<string> = []
    let start = 0
    const dispatch = () => {
      if (data.length > 0) {
        expected.push(data.join("\n"))
        starts.push(start)
      }
      data = []
    }
    const read = text.split(/\r\n|\r|\n/) // the last entry: what follows the last line ending
    read.slice(0, -1).forEach((line, index) => {
      if (line === "") return dispatch()
      const field = /^data(?::|$)/.exec(line)
      if (field !== null) {
        if (data.length === 0) start = index + 1
        data.push(line.slice(5).replace(/^ /, ""))
      }
    })
    if (read.at(-1) === "") dispatch()
    // no event at all and a whole line of HTML or JSON: not an event stream
    const notSse = expected.length === 0 && read.slice(0, -1).some((line) => /^[<{[]/.test(line))
    // no event, and a cut-off last line that starts with neither a letter (a field) nor `:` (a comment)
    const notSseCut = expected.length === 0 && read.at(-1) !== "" && !/^[A-Za-z:]/.test(read.at(-1)!)
    const points = [...new Set(cuts.filter((cut) => cut < text.length))].sort((a, b) => a - b)
    const pieces = [0, ...points].map((from, i) => text.slice(from, [...points, text.length][i]))
    const framed = frame(Framing.makeSseFramer(1024), pieces)
    assert.strictEqual(
      framed.error?.description,
      notSse
        ? "the body is not an event stream: no event in it, and a line of HTML or JSON"
        : notSseCut
        ? `the body is not an event stream: no event in its ${text.length} characters, and its last ${
          read.length === 1 ? "and only " : ""
        }line (${read.at(-1)!.length} characters) has no line ending`
        : undefined
    )
    assert.deepStrictEqual(framed.payloads, expected)
    assert.deepStrictEqual(framed.lines, starts)
  })

  it("SSE input with no event and a line the SSE rules do not know (an HTML page) fails at its end: not an event stream", () => {
    const page = "<!doctype html>\n<html><body>Sign in</body></html>\n"
    for (const pieces of [[page], [page.slice(0, 5), page.slice(5)]]) {
      const { error, payloads } = frame(Framing.makeSseFramer(1024), pieces)
      assert.deepStrictEqual(payloads, [])
      assert.instanceOf(error, AiError.MalformedOutput)
      assert.strictEqual(error!.description, "the body is not an event stream: no event in it, and a line of HTML or JSON")
      assert.strictEqual(error!.excerpt, "<!doctype html>")
    }
    // an empty body, comments or keep-alive fields alone, or an unknown field after an event: no such error
    for (const text of ["", ": ping\n\n", "retry: 10\nid: 1\n\n", "dat\n", "data: x\n\n<p>\n"]) {
      assert.isUndefined(frame(Framing.makeSseFramer(1024), [text]).error, text)
    }
  })

  it("SSE input with no event that ends in a line without its line ending, not a field: not an event stream, naming the characters read", () => {
    // an upstream's binary answer to a streamed request: bytes that are no SSE, read as text and never a line
    const binary = new TextDecoder().decode(Uint8Array.from({ length: 3000 }, (_, i) => 0x80 + (i % 64)))
    for (const pieces of [[binary], [binary.slice(0, 1000), binary.slice(1000)]]) {
      const { error, payloads } = frame(Framing.makeSseFramer(1 << 20), pieces)
      assert.deepStrictEqual(payloads, [])
      assert.instanceOf(error, AiError.MalformedOutput)
      assert.strictEqual(
        error!.description,
        "the body is not an event stream: no event in its 3000 characters, and its last and only line (3000 characters) has no line ending"
      )
      assert.strictEqual(error!.excerpt, `${binary.slice(0, 40)}…`)
    }
    // after lines that are no events
    const { error } = frame(Framing.makeSseFramer(1024), [": ping\n\n\u0000\u0001\u0002"])
    assert.strictEqual(error?.description, "the body is not an event stream: no event in its 11 characters, and its last line (3 characters) has no line ending")
    // a stream cut in its first event, or in a comment, or after an event: no such error (a truncated stream)
    for (const text of ["data: {\"id\":\"c", ": pi", "da", "data: x\n\n\u0000\u0001"]) {
      assert.isUndefined(frame(Framing.makeSseFramer(1024), [text]).error, text)
    }
  })

  it("an SSE event whose lines all ended is dispatched at the end without its blank line; a cut-off line is not", () => {
    assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), ["data: x\n"]).payloads, ["x"])
    assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), ["data: x\n\ndata: y"]).payloads, ["x"])
    // the input ends with a CR: the line has ended (the event is dispatched), whether or not it was blank
    assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), ["data: x\r"]), { payloads: ["x"], lines: [1], names: [undefined], error: undefined })
    assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), ["data: x\r", "\r"]), {
      payloads: ["x"],
      lines: [1],
      names: [undefined],
      error: undefined
    })
    assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), ["data: x\r\r"]).payloads, ["x"])
    // a blank line ended by a CR at the end of a piece, then a line cut off: the event before is delivered
    assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), ["data: x\n\r", "data: cut"]).payloads, ["x"])
    // an empty piece between a CR and a LF: still one line ending (CRLF)
    assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), ["data: a\r", "", "\ndata: b\n\n"]), {
      payloads: ["a\nb"],
      lines: [1],
      names: [undefined],
      error: undefined
    })
    // `ï»¿` (a BOM read as Latin-1) is no BOM: `ï»¿data` is an unknown field, wherever the input is cut
    for (const pieces of [["ï»¿data: a\n\ndata: b\n\n"], ["ï", "»¿data: a\n\ndata: b\n\n"]]) {
      assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), pieces), { payloads: ["b"], lines: [3], names: [undefined], error: undefined })
    }
  })

  it("fieldData maps a line of an unknown field to a payload at once; without it, or when it says undefined, the line is ignored", () => {
    const text = "data: a\n\nerror: {\"code\":1}\n\nfoo: bar\ndata: b\n\n"
    const fieldData = (field: string, value: string) => (field === "error" ? `E${value}` : undefined)
    for (const pieces of [[text], text.split("")]) {
      assert.deepStrictEqual(frame(Framing.makeSseFramer(1024, undefined, fieldData), pieces).payloads, [
        "a",
        "E{\"code\":1}",
        "b"
      ])
      assert.deepStrictEqual(frame(Framing.makeSseFramer(1024), pieces).payloads, ["a", "b"])
    }
  })

  it("a payload of fieldData names the line of its own field, however the text is cut", () => {
    const text = "data: a\n\nerror: {\"code\":1}\n\nfoo: bar\ndata: b\n\n"
    const fieldData = (field: string, value: string) => (field === "error" ? `E${value}` : undefined)
    for (const pieces of [[text], text.split(""), [text.slice(0, 12), text.slice(12)]]) {
      assert.deepStrictEqual(frame(Framing.makeSseFramer(1024, undefined, fieldData), pieces).lines, [1, 3, 6])
    }
  })

  it.prop("named events, unknown fields and any cut frame as eventsource-parser reads the same lines", [
    FastCheck.array(
      FastCheck.tuple(
        FastCheck.oneof(
          FastCheck.constantFrom(
            "",
            "data: x",
            "data:y",
            "data",
            "event: ping",
            "event:error",
            "event",
            "event: ",
            "id: 1",
            "retry: 5",
            "retry: x",
            ": c",
            "error: {\"code\":1}",
            "error",
            "error:  two",
            "<p>",
            "{\"a\":1}",
            "[1]"
          ),
          FastCheck.string({ maxLength: 6 }).filter((line) => !/[\r\n]/.test(line))
        ),
        FastCheck.constantFrom("\n", "\r\n", "\r")
      ),
      { maxLength: 16 }
    ),
    FastCheck.array(FastCheck.nat(160), { maxLength: 6 })
  ], ([lines, cuts]) => {
    const text = lines.map(([line, ending]) => line + ending).join("")
    const eventData = (event: string, data: string) => (event === "ping" ? undefined : `${event}:${data}`)
    const fieldData = (field: string, value: string) => (field === "error" ? `E${value}` : undefined)
    // the reference: eventsource-parser fed whole lines ended by LF (then the end of the input dispatches)
    const expected: Array<string> = []
    const expectedNames: Array<string | undefined> = []
    const parser = createParser({
      onEvent: (event) => {
        const data = event.event === undefined ? event.data : eventData(event.event, event.data)
        if (data !== undefined) {
          expected.push(data)
          expectedNames.push(event.event)
        }
      },
      onError: (error) => {
        if (error.type !== "unknown-field" || error.field === undefined) return
        const data = fieldData(error.field, error.value ?? "")
        if (data !== undefined) {
          expected.push(data)
          expectedNames.push(undefined)
        }
      }
    })
    parser.feed("\n")
    for (const line of text.split(/\r\n|\r|\n/).slice(0, -1)) parser.feed(`${line}\n`)
    parser.feed("\n")
    const points = [...new Set(cuts.filter((cut) => cut < text.length))].sort((a, b) => a - b)
    const pieces = [0, ...points].map((from, i) => text.slice(from, [...points, text.length][i]))
    const framed = frame(Framing.makeSseFramer(1024, eventData, fieldData), pieces)
    assert.deepStrictEqual(framed.payloads, expected)
    assert.deepStrictEqual(framed.names, expectedNames)
  })

  it("the event names asked for: each payload's, none from the line framer", () => {
    const text = "event: a.delta\ndata: 1\n\nevent: a.delta\ndata: 2\n\ndata: 3\n\nevent:b\ndata: 4\n\nevent: a.delta\ndata: 5\n\n"
    for (const pieces of [[text], text.split(""), [text.slice(0, 20), text.slice(20)]]) {
      const { names, payloads } = frame(Framing.makeSseFramer(1024), pieces)
      assert.deepStrictEqual(payloads, ["1", "2", "3", "4", "5"])
      assert.deepStrictEqual(names, ["a.delta", "a.delta", undefined, "b", "a.delta"])
      const captured = frame(Framing.makeCaptureFramer(1024), pieces)
      assert.deepStrictEqual(captured.names, names)
    }
    assert.deepStrictEqual(frame(Framing.makeLineFramer(1024), ["{}\n{}\n"]).names, [])
  })

  it("an event over maxEventSize fails with MalformedOutput naming the bound and the line", () => {
    const { error, payloads } = frame(Framing.makeSseFramer(8), ["data: 1\n\n", "data: 0123456789\n\n"])
    assert.instanceOf(error, AiError.MalformedOutput)
    assert.strictEqual(error?.line, 3)
    assert.include(error?.description, "exceeds 8 characters")
    assert.deepStrictEqual(payloads, ["1"])
    // in one piece: the events before the long line still come first
    const whole = frame(Framing.makeSseFramer(8), ["data: 1\n\ndata: 0123456789\n\n"])
    assert.deepStrictEqual([whole.payloads, whole.error?.line], [["1"], 3])
    // multi-line data over the bound ("123456\n123456" is 13), each line within it, in one piece or many
    const lines = ["data: 1\n\n", "event: e\n", "data: 123456\n", "data:123456\n\n"]
    for (const pieces of [[lines.join("")], lines]) {
      const multi = frame(Framing.makeSseFramer(12), pieces)
      assert.deepStrictEqual([multi.payloads, multi.error?.line], [["1"], 4])
    }
    assert.deepStrictEqual(frame(Framing.makeSseFramer(13), lines).payloads, ["1", "123456\n123456"])
  })

  it("a capture framer tells SSE from line-JSON by the first line that is not blank", () => {
    assert.deepStrictEqual(frame(Framing.makeCaptureFramer(1024), ["\n{\"a\":1}\n", " {\"b\":2}"]).payloads, [
      "{\"a\":1}",
      "{\"b\":2}"
    ])
    assert.deepStrictEqual(frame(Framing.makeCaptureFramer(1024), ["da", "ta: {\"a\":1}\n\n"]).payloads, ["{\"a\":1}"])
  })

  it.effect("decodeChannel: elements before the error, MalformedOutput with the payload's line, logs run", () =>
    Effect.gen(function*() {
      const makeDecoder = (): Framing.PayloadDecoder<number, AiError.MalformedOutput> => ({
        feed: (data, out) => {
          const n = Number(data)
          if (Number.isNaN(n)) return new AiError.MalformedOutput({ description: "not a number" })
          out.push(n)
          return undefined
        },
        end: () => undefined,
        takeLogs: () => []
      })
      const decode = (text: string) =>
        Stream.make(text).pipe(
          Stream.pipeThroughChannel(Framing.decodeChannel(() => Framing.makeSseFramer(1024), makeDecoder)),
          Stream.runCollect,
          Effect.either
        )
      const ok = yield* decode("data: 1\n\ndata: 2\n\n")
      assert.deepStrictEqual(Either.map(ok, Chunk.toReadonlyArray), Either.right([1, 2]))
      const bad = yield* decode("data: 1\n\n\ndata: x\n\n")
      assert.isTrue(Either.isLeft(bad))
      if (Either.isLeft(bad)) {
        assert.instanceOf(bad.left, AiError.MalformedOutput)
        assert.strictEqual(bad.left.line, 4)
      }
    }))

  // The framer sees the text of the bytes: one that hands every piece of text on as a payload shows it whole.
  const textOf = (pieces: ReadonlyArray<Uint8Array>) => {
    const makeFramer = (): Framing.Framer => ({
      push: (text, payloads) => {
        if (text !== "") payloads.push(text)
        return undefined
      },
      end: () => undefined
    })
    const makeDecoder = (): Framing.PayloadDecoder<string, AiError.MalformedOutput> => ({
      feed: (data, out) => {
        out.push(data)
        return undefined
      },
      end: () => undefined,
      takeLogs: () => []
    })
    return Stream.fromIterable(pieces).pipe(
      Stream.pipeThroughChannel(Framing.decodeBytesChannel(makeFramer, makeDecoder)),
      Stream.runCollect,
      Effect.map((texts) => Chunk.join(texts, ""))
    )
  }

  // multi-byte characters, a BOM, and malformed UTF-8: cut sequences, stray continuation bytes, overlongs,
  // surrogates, bytes no UTF-8 holds
  const UTF8_BYTES = [0x61, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xef, 0xbb, 0xbf, 0x80, 0xbf, 0xc0, 0xc1, 0xe0, 0xed, 0xa0, 0xf4, 0x90, 0xf5, 0xff, 0x0a]

  it.effect.prop("decodeBytesChannel: bytes cut anywhere decode to the text TextDecoder gives the whole", [
    FastCheck.array(FastCheck.oneof(FastCheck.constantFrom(...UTF8_BYTES), FastCheck.integer({ min: 0, max: 255 })), { maxLength: 40 }),
    FastCheck.array(FastCheck.integer({ min: 0, max: 40 }), { maxLength: 8 }),
    FastCheck.boolean()
  ], ([bytes, cuts, bom]) =>
    Effect.gen(function*() {
      const all = Uint8Array.from(bom ? [0xef, 0xbb, 0xbf, ...bytes] : bytes)
      const points = [...new Set(cuts.filter((cut) => cut < all.length))].sort((a, b) => a - b)
      const pieces = [0, ...points].map((start, i) => all.subarray(start, [...points, all.length][i]))
      assert.strictEqual(yield* textOf(pieces), new TextDecoder().decode(all))
    }))

  it.effect("decodeBytesChannel: a character cut at the end of the input is U+FFFD, a BOM dropped at the start only", () =>
    Effect.gen(function*() {
      const euro = [0xe2, 0x82, 0xac]
      const bom = [0xef, 0xbb, 0xbf]
      assert.strictEqual(yield* textOf([Uint8Array.of(0x61, 0xe2), Uint8Array.of(0x82)]), "a\uFFFD")
      assert.strictEqual(yield* textOf([Uint8Array.of(0xef), Uint8Array.of(0xbb, 0xbf, 0x61, ...bom), Uint8Array.of(...euro)]), "a\uFEFF\u20AC")
      assert.strictEqual(yield* textOf([Uint8Array.of(...bom, 0x61), Uint8Array.of(...bom, 0x62)]), "a\uFEFFb")
      assert.strictEqual(yield* textOf([Uint8Array.of(...euro.slice(0, 1)), Uint8Array.of(...euro.slice(1))]), "\u20AC")
    }))
})
