/**
 * The gateway's upstream dispatcher hands undici a large body in pieces (internal `pacedBody`): views of at
 * most `PIECE_BYTES`, together the body, made afresh at every dispatch; a small body, or one of another
 * kind, as it is. Over real HTTP in ServeUpstreamReuse.test.ts.
 */
import type * as Undici from "@effect/platform-node/Undici"
import { describe, expect, it } from "@effect/vitest"
import { pacedBody, PIECE_BYTES } from "../src/internal/pacedBody.js"

/** The bodies `pacedBody` dispatches, one per call of the returned `dispatch`. */
const dispatched = () => {
  const bodies: Array<unknown> = []
  const dispatch = pacedBody((options) => {
    bodies.push(options.body)
    return true
  })
  const send = (body: unknown) =>
    dispatch({ origin: "http://127.0.0.1", path: "/", method: "POST", body } as Undici.Dispatcher.DispatchOptions, {})
  return { bodies, send }
}

const collect = async (body: unknown): Promise<Array<Uint8Array>> => {
  const pieces: Array<Uint8Array> = []
  for await (const piece of body as AsyncIterable<Uint8Array>) pieces.push(piece)
  return pieces
}

describe("pacedBody", () => {
  it("a body of more than PIECE_BYTES: pieces of at most PIECE_BYTES, the body's bytes in order, afresh at each dispatch", async () => {
    const body = new Uint8Array(2 * PIECE_BYTES + 1000).map((_, i) => i % 251)
    const { bodies, send } = dispatched()
    // a resend dispatches the same options again
    send(body)
    send(body)
    expect(bodies).toHaveLength(2)
    expect(bodies[0]).not.toBe(bodies[1])
    for (const sent of bodies) {
      const pieces = await collect(sent)
      expect(pieces.map((piece) => piece.length)).toEqual([PIECE_BYTES, PIECE_BYTES, 1000])
      expect(Buffer.concat(pieces).equals(body)).toBe(true)
    }
  })

  it("a body of PIECE_BYTES or less, a string, or none: dispatched as it is", () => {
    const small = new Uint8Array(PIECE_BYTES)
    const { bodies, send } = dispatched()
    send(small)
    send("text")
    send(undefined)
    expect(bodies).toEqual([small, "text", undefined])
    expect(bodies[0]).toBe(small)
  })
})
