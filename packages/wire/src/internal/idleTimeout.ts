/**
 * A response body read under an idle timeout, with one timer for the whole body instead of a race per read:
 * a reader fiber pulls the body into a small mailbox and moves a deadline on at every chunk; one watchdog
 * fiber sleeps until the deadline, and when it wakes to find the deadline passed, fails the mailbox (the
 * chunks already read are delivered first) and ends the body's scope, which stops the read and aborts the
 * request. Racing each read against its own timer (`Stream.timeoutFail`) forks two fibers and arms a timer
 * per read; this forks two fibers per body, hands chunks over in batches and arms one timer per idle
 * period. Ending the read by finalizing the body instead (one fiber fewer) is not enough: a Node body
 * (`NodeHttpClient`) waiting for data is not woken by its finalizer and would wait forever.
 *
 * While the reader waits for room in the mailbox (the consumer is slower than the server) the clock is
 * stopped: only the server's silence counts.
 */
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Stream from "effect/Stream"

/** Chunks (body reads) the reader may hold ahead of the consumer. */
const CAPACITY = 16

/**
 * `body` with its failures mapped by `onError` (given the bytes read so far), and failing with
 * `onIdle(bytesRead)` when no chunk arrives for `idle` (never when `idle` is undefined).
 */
export const watchBody = <E, E2>(
  body: Stream.Stream<Uint8Array, E>,
  idle: Duration.Duration | undefined,
  onError: (error: E, bytesRead: number) => E2,
  onIdle: (bytesRead: number) => E2
): Stream.Stream<Uint8Array, E2> => {
  if (idle === undefined) {
    return Stream.suspend(() => {
      let bytesRead = 0
      return Stream.mapError(
        Stream.mapChunks(body, (chunk) => {
          for (const bytes of chunk) bytesRead += bytes.length
          return chunk
        }),
        (error) => onError(error, bytesRead)
      )
    })
  }
  const idleMillis = Duration.toMillis(idle)
  return Stream.unwrapScoped(Effect.gen(function*() {
    const clock = yield* Effect.clock
    const mailbox = yield* Mailbox.make<Uint8Array, E2>(CAPACITY)
    let bytesRead = 0
    let deadline = clock.unsafeCurrentTimeMillis() + idleMillis
    const rearm = () => {
      deadline = clock.unsafeCurrentTimeMillis() + idleMillis
    }
    const read = Stream.runForEachChunk(body, (chunk) => {
      for (const bytes of chunk) bytesRead += bytes.length
      const rest = mailbox.unsafeOfferAll(chunk)
      if (Chunk.isEmpty(rest)) {
        rearm()
        return Effect.void
      }
      deadline = Infinity
      return Effect.map(mailbox.offerAll(rest), rearm)
    }).pipe(
      Effect.mapError((error) => onError(error, bytesRead)),
      Mailbox.into(mailbox)
    )
    const watch: Effect.Effect<void> = Effect.suspend(() => {
      const left = deadline - clock.unsafeCurrentTimeMillis()
      if (left <= 0) return mailbox.fail(onIdle(bytesRead))
      return Effect.zipRight(clock.sleep(Duration.millis(Number.isFinite(left) ? left : idleMillis)), watch)
    })
    yield* Effect.forkScoped(read)
    yield* Effect.forkScoped(watch)
    return Mailbox.toStream(mailbox)
  }))
}
