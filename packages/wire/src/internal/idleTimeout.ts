/**
 * A response body read under an idle timeout, with one timer for the whole body instead of a race per read:
 * a deadline moved on at every chunk, and one watchdog fiber that sleeps until it and, when it wakes to find
 * it passed, ends the wait for the next chunk. Racing each read against its own timer (`Stream.timeoutFail`)
 * forks two fibers and arms a timer per read.
 *
 * - The body of a web `Response` (what `FetchHttpClient` and `HttpClientResponse.fromWeb` make) is read with
 *   its reader; the watchdog cancels the reader, which ends the pending read (and aborts the request), and
 *   the read then fails with the idle error. One fiber per body, outside any scope (it only sleeps and
 *   cancels): interrupted without waiting for it when the body ends. A scoped fiber, awaited at the end,
 *   cost about a third of the client path's CPU on an empty stream (packages/bench/RESULTS.md).
 * - Any other body (Node's undici client, a wrapper of one's own) is read by a reader fiber into a small
 *   mailbox, which the watchdog fails. Ending such a body by finalizing it is not enough: a Node body
 *   waiting for data is not woken by its finalizer and would wait forever. Two fibers per body.
 *
 * While the consumer holds a chunk (it is slower than the server) the clock is stopped: only the server's
 * silence counts.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Mailbox from "effect/Mailbox"
import * as Stream from "effect/Stream"
import * as ResponseBody from "./responseBody.js"

/** Chunks (body reads) the reader fiber may hold ahead of the consumer. */
const CAPACITY = 16

/**
 * The body of `response`, its failures mapped by `onError` (given the bytes read so far), failing with
 * `onIdle(bytesRead)` when no chunk arrives for `idle` (never when `idle` is undefined).
 */
export const watchBody = <E>(
  response: HttpClientResponse.HttpClientResponse,
  idle: Duration.Duration | undefined,
  onError: (error: HttpClientError.ResponseError, bytesRead: number) => E,
  onIdle: (bytesRead: number) => E
): Stream.Stream<Uint8Array, E> => {
  if (idle === undefined) {
    return Stream.suspend(() => {
      let bytesRead = 0
      return Stream.mapChunks(
        ResponseBody.stream(response, (error) => onError(error, bytesRead)),
        (chunk) => {
          for (const bytes of chunk) bytesRead += bytes.length
          return chunk
        }
      )
    })
  }
  const source = ResponseBody.webSource(response)
  return source !== undefined && source.body !== null
    ? webBody(response, source.body, Duration.toMillis(idle), onError, onIdle)
    : mailboxBody(response, Duration.toMillis(idle), onError, onIdle)
}

/** The watchdog: sleeps until `deadline()` has passed (re-armed each time it wakes too early), then `expire`. */
const watchdog = (
  clock: Clock.Clock,
  idleMillis: number,
  deadline: () => number,
  expire: Effect.Effect<unknown>
): Effect.Effect<void> => {
  const watch: Effect.Effect<void> = Effect.suspend(() => {
    const left = deadline() - clock.unsafeCurrentTimeMillis()
    if (left <= 0) return Effect.asVoid(expire)
    return Effect.zipRight(clock.sleep(Duration.millis(Number.isFinite(left) ? left : idleMillis)), watch)
  })
  return watch
}

const webBody = <E>(
  response: HttpClientResponse.HttpClientResponse,
  body: ReadableStream<Uint8Array>,
  idleMillis: number,
  onError: (error: HttpClientError.ResponseError, bytesRead: number) => E,
  onIdle: (bytesRead: number) => E
): Stream.Stream<Uint8Array, E> =>
  Stream.fromChannel(Channel.unwrap(Effect.map(Effect.clock, (clock) => {
    const reader = body.getReader()
    let bytesRead = 0
    let settled = false
    let expired = false
    let deadline = clock.unsafeCurrentTimeMillis() + idleMillis
    const watch = Effect.runFork(watchdog(
      clock,
      idleMillis,
      () => deadline,
      Effect.sync(() => {
        if (settled) return
        expired = true
        reader.cancel().catch(() => undefined)
      })
    ))
    const read = Effect.async<ReadableStreamReadResult<Uint8Array>, E>((resume) => {
      reader.read().then(
        (result) => resume(Effect.succeed(result)),
        (cause: unknown) => {
          settled = true
          resume(Effect.fail(onError(
            new HttpClientError.ResponseError({ request: response.request, response, reason: "Decode", cause }),
            bytesRead
          )))
        }
      )
    })
    const rearm = Channel.suspend(() => {
      deadline = clock.unsafeCurrentTimeMillis() + idleMillis
      return loop
    })
    const loop: Channel.Channel<Chunk.Chunk<Uint8Array>, unknown, E, unknown, void, unknown> = Channel.flatMap(
      Channel.fromEffect(read),
      (result) => {
        if (result.done) {
          settled = true
          return expired ? Channel.fail(onIdle(bytesRead)) : Channel.void
        }
        bytesRead += result.value.length
        deadline = Infinity // the consumer holds the chunk: its time is not the server's silence
        return Channel.zipRight(Channel.write(Chunk.of(result.value)), rearm)
      }
    )
    return Channel.ensuring(
      loop,
      Effect.suspend(() => {
        watch.unsafeInterruptAsFork(FiberId.none)
        return settled ? Effect.void : Effect.promise(() => reader.cancel().catch(() => undefined))
      })
    )
  })))

const mailboxBody = <E>(
  response: HttpClientResponse.HttpClientResponse,
  idleMillis: number,
  onError: (error: HttpClientError.ResponseError, bytesRead: number) => E,
  onIdle: (bytesRead: number) => E
): Stream.Stream<Uint8Array, E> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const clock = yield* Effect.clock
    const mailbox = yield* Mailbox.make<Uint8Array, E>(CAPACITY)
    let bytesRead = 0
    let deadline = clock.unsafeCurrentTimeMillis() + idleMillis
    const rearm = () => {
      deadline = clock.unsafeCurrentTimeMillis() + idleMillis
    }
    const read = Stream.runForEachChunk(
      ResponseBody.stream(response, (error) => onError(error, bytesRead)),
      (chunk) => {
        for (const bytes of chunk) bytesRead += bytes.length
        const rest = mailbox.unsafeOfferAll(chunk)
        if (Chunk.isEmpty(rest)) {
          rearm()
          return Effect.void
        }
        deadline = Infinity // the mailbox is full: the consumer's time is not the server's silence
        return Effect.map(mailbox.offerAll(rest), rearm)
      }
    ).pipe(Mailbox.into(mailbox))
    yield* Effect.forkScoped(read)
    yield* Effect.forkScoped(watchdog(clock, idleMillis, () => deadline, Effect.suspend(() => mailbox.fail(onIdle(bytesRead)))))
    return Mailbox.toStream(mailbox)
  }))
