/**
 * A response body in a `content-encoding` (`gzip`, `deflate`, `br`), decoded as it is read: what a server or
 * a proxy that ignores `accept-encoding: identity` sends, and what `fetch` decodes by itself. The decoded
 * body is read like any other, under the same bounds (the idle timeout, `maxJsonBytes`, the error body's
 * 64 KiB, a decoder's largest event), which count decoded bytes: a small compressed body that decodes to
 * gigabytes is cut where a plain one would be.
 */
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as ResponseBody from "./responseBody.js"

/** What `decoded` found: the response to read (decoded, or as it was), or a coding it cannot decode. */
export type Decoded =
  | { readonly _tag: "Readable"; readonly response: HttpClientResponse.HttpClientResponse }
  | { readonly _tag: "Unknown"; readonly encoding: string }

/** The codings decoded, with the transform that decodes each. */
const transform = (encoding: string): TransformStream<Uint8Array, Uint8Array> | undefined => {
  switch (encoding) {
    case "gzip":
    case "x-gzip":
      return new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>
    case "deflate":
      return new DecompressionStream("deflate") as unknown as TransformStream<Uint8Array, Uint8Array>
    case "br":
      return brotli()
    default:
      return undefined
  }
}

interface NodeBuiltins {
  readonly getBuiltinModule?: (name: string) => unknown
}

/** Brotli (no web `DecompressionStream` takes it on Node 20): Node's zlib, where there is one. */
const brotli = (): TransformStream<Uint8Array, Uint8Array> | undefined => {
  const process = (globalThis as { readonly process?: NodeBuiltins }).process
  const zlib = process?.getBuiltinModule?.("node:zlib") as { createBrotliDecompress: () => unknown } | undefined
  const stream = process?.getBuiltinModule?.("node:stream") as
    | { Duplex: { toWeb: (duplex: unknown) => TransformStream<Uint8Array, Uint8Array> } }
    | undefined
  if (zlib === undefined || stream === undefined) return undefined
  const { readable, writable } = stream.Duplex.toWeb(zlib.createBrotliDecompress())
  return { readable, writable } as TransformStream<Uint8Array, Uint8Array>
}

/**
 * `response` with its body decoded when its `content-encoding` is `gzip` (`x-gzip`), `deflate` or `br`;
 * `response` itself without one (or `identity`), or when `fetch` has already decoded it (a web `Response`
 * from the network, whose `type` is not `default`, keeps the header); `Unknown` for any other coding (or a
 * list of them). The decoded response has no `content-encoding` nor `content-length`.
 */
export const decoded = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<Decoded> => {
  const encoding = response.headers["content-encoding"]?.trim().toLowerCase()
  if (encoding === undefined || encoding === "" || encoding === "identity") return Effect.succeed({ _tag: "Readable", response })
  // a status without a body (204, 205, 304) has nothing to decode
  if (response.status === 204 || response.status === 205 || response.status === 304) return Effect.succeed({ _tag: "Readable", response })
  const source = ResponseBody.webSource(response)
  if (source !== undefined && source.type !== "default") return Effect.succeed({ _tag: "Readable", response })
  const decoder = transform(encoding)
  if (decoder === undefined) return Effect.succeed({ _tag: "Unknown", encoding })
  return Effect.map(
    Stream.toReadableStreamEffect(ResponseBody.stream(response, (error) => error)),
    (body) => {
      const headers = new globalThis.Headers()
      for (const [name, value] of Object.entries(response.headers)) {
        if (name !== "content-encoding" && name !== "content-length") headers.set(name, value)
      }
      const web = new Response(body.pipeThrough(decoder), { status: response.status, headers })
      return { _tag: "Readable", response: HttpClientResponse.fromWeb(response.request, web) }
    }
  )
}
