/**
 * What the peers' contenders share: the request they make and a `fetch` that answers with the body of
 * the run.
 *
 * @since 0.1.0
 */

/**
 * Response headers of the fake server.
 *
 * @since 0.1.0
 * @category constants
 */
export const SSE_HEADERS = { "content-type": "text/event-stream" }

/**
 * The prompt of the recorded stream.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROMPT = "How do I cross the street?"

/**
 * The model of the recorded stream.
 *
 * @since 0.1.0
 * @category constants
 */
export const MODEL = "o3-mini"

/**
 * The model of the recorded Chat Completions stream.
 *
 * @since 0.2.0
 * @category constants
 */
export const CHAT_MODEL = "gpt-4.1-nano"

/**
 * A `fetch` that answers the next request with the body given to `next`, once (a second request without a
 * new body rejects).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fakeFetch = (): {
  readonly next: (body: ReadableStream<Uint8Array>) => void
  readonly fetch: () => Promise<Response>
} => {
  let pending: ReadableStream<Uint8Array> | undefined
  return {
    next: (body) => {
      pending = body
    },
    fetch: () => {
      const body = pending
      pending = undefined
      if (body === undefined) return Promise.reject(new Error("fake fetch: no body set for this request"))
      return Promise.resolve(new Response(body, { status: 200, headers: SSE_HEADERS }))
    }
  }
}
