/**
 * A response body read under an idle timeout, with one timer for the whole body instead of a race per read:
 * a deadline moved on at every chunk that is activity (see `watchBody`), and one watchdog that sleeps until it and, when it wakes to find it passed, ends the wait for the next
 * chunk (a timer of internal/timer: a `setTimeout` on the live clock, a fiber on another). Racing each read
 * against its own timer (`Stream.timeoutFail`) forks two fibers and arms a timer per read.
 *
 * - The body of a web `Response` (what `FetchHttpClient` and `HttpClientResponse.fromWeb` make) is read with
 *   its reader; the watchdog cancels the reader, which ends the pending read (and aborts the request), and
 *   the read then fails with the idle error. One timer per body, outside any scope (it only sleeps and
 *   cancels): cancelled without waiting for it when the body ends. A scoped fiber, awaited at the end,
 *   cost about a third of the client path's CPU on an empty stream (packages/bench/RESULTS.md).
 * - The body of a response of `@effect/platform-node`'s clients (undici's body, `node:http`'s
 *   `IncomingMessage`: a Node `Readable` in its `source`) is read from that `Readable` in one channel; the
 *   watchdog destroys it, which ends the pending read (and aborts the request). One timer per body. Read
 *   through the platform's `response.stream` into a mailbox instead, each chunk crossed from a reader fiber
 *   to the consumer's: 27 of the gateway's 75 fiber steps per upstream chunk (packages/bench/RESULTS.md,
 *   2026-12-02, round 4).
 * - Any other body (a wrapper of one's own) is read by a reader fiber into a small mailbox, which the
 *   watchdog fails. Ending such a body by finalizing it is not enough: a Node body waiting for data is not
 *   woken by its finalizer and would wait forever. One fiber per body (the reader) and the watchdog's timer.
 *
 * While the consumer holds a chunk (it is slower than the server) the clock is stopped: only the server's
 * silence counts. What counts as activity is the decoder's to say (its steps' `activity`): for a protocol
 * decoder, the elements it decoded, so that keep-alives of every kind (SSE comments, `event: ping`, events
 * without data, `data: {}`) are silence and a server that only keeps the connection alive cannot hold the
 * call past the idle timeout; for the bytes of an event stream (`asEventBytes`), the chunks with something
 * of an event in them; for raw bytes (`asBytes`), every chunk.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { constVoid } from "effect/Function"
import * as Mailbox from "effect/Mailbox"
import * as Stream from "effect/Stream"
import { BytesDecoderTypeId } from "../Framing.js"
import type * as Framing from "../Framing.js"
import { reading, type Steps, stepsOf } from "./bytesSteps.js"
import * as ResponseBody from "./responseBody.js"
import * as Timer from "./timer.js"

/** Chunks (body reads) the reader fiber may hold ahead of the consumer. */
const CAPACITY = 16

const bytesSteps: Steps<Uint8Array, Uint8Array, never> = {
  input: (input, next) => Channel.zipRight(Channel.write(input), next),
  end: Channel.void
}

const marked = <A>(steps: Steps<Uint8Array, A, never>): Framing.BytesDecoder<A, never> =>
  Object.assign(steps, { [BytesDecoderTypeId]: { _A: (_: never) => _, _D: (_: never) => _ } })

/** The bytes as they are read: each chunk written whole, each chunk activity (`watchBody`'s raw body). */
export const asBytes: Framing.BytesDecoder<Uint8Array, never> = marked(bytesSteps)

/**
 * The bytes of an event stream as they are read: each chunk written whole, activity only the chunks with
 * something of an event in them (`eventActivity`).
 */
export const asEventBytes = (): Framing.BytesDecoder<Uint8Array, never> => {
  const isEvent = eventActivity()
  let events = 0
  return marked({
    input: (input, next) => {
      for (const bytes of input) if (isEvent(bytes)) events++
      return Channel.zipRight(Channel.write(input), next)
    },
    end: Channel.void,
    activity: () => events
  })
}

/** `stream` through `decoder`, as a stage piped after it (for the readers that do not take its steps). */
const through = <A, D, E>(stream: Stream.Stream<Uint8Array, E>, decoder: Framing.BytesDecoder<A, D>): Stream.Stream<A, E | D> => {
  // the bytes themselves: no stage (here `A` is `Uint8Array`)
  if (decoder === (asBytes as unknown)) return stream as unknown as Stream.Stream<A, E>
  return Stream.pipeThroughChannel(stream, reading<Uint8Array, A, D, E>(stepsOf(decoder)))
}

const LF = 10
const CR = 13
const COLON = 58

/** How far back from a chunk's end `eventActivity` looks for its last line break, in bytes. */
const COMMENT_TAIL = 1024

/** Where an event stream's previous chunk ended: at a line's start, in a comment line, in a field line. */
const enum Line {
  Start,
  Comment,
  Field
}

/**
 * Whether each chunk of an event stream, in order, holds anything of an event: a field line (`data:`,
 * `event:`, `id:`, `retry:`, or its continuation from the chunk before), as opposed to only comment lines
 * (`:` first) and blank lines (the SSE specification's line kinds). A line split across chunks is followed.
 * Reads the chunk up to its first field line and back from its end to its last line break, at most
 * `COMMENT_TAIL` bytes back (a line longer than that at the end of a chunk is taken for a field line: a
 * comment is a short keep-alive), not every byte: a scan of a whole 16 KiB chunk costs 30-100 µs here,
 * `lastIndexOf` of a byte the chunk lacks (`\r`, mostly) included.
 */
export const eventActivity = (): (bytes: Uint8Array) => boolean => {
  let line = Line.Start
  return (bytes) => {
    const length = bytes.length
    let active = length > 0 && line === Line.Field
    let i = 0
    while (!active && i < length) {
      const byte = bytes[i++]!
      if (line === Line.Comment) {
        if (byte === LF || byte === CR) line = Line.Start
      } else if (byte === COLON) {
        line = Line.Comment
      } else if (byte !== LF && byte !== CR) {
        active = true
      }
    }
    if (!active) return false // `line` is where the chunk ended
    const stop = Math.max(length - COMMENT_TAIL, 0) - 1
    let last = length - 1
    while (last > stop && bytes[last] !== LF && bytes[last] !== CR) last--
    if (last === length - 1) line = Line.Start
    else if (last > stop) line = bytes[last + 1] === COLON ? Line.Comment : Line.Field
    else line = Line.Field // no line break near the end: a field line goes on
    return active
  }
}

/**
 * The body of `response` through `makeDecoder()`'s decoder (`asBytes` for the bytes), its failures mapped by
 * `onError` (given the bytes read so far), failing with `onIdle(bytesRead)` when no activity arrives for
 * `idle` (never when `idle` is undefined): what counts as activity is the decoder's to say (see the module's
 * comment). The readers of a web body and of a Node `Readable` take the decoder's steps in their own
 * channel; the other bodies' reader fiber pipes them after its reads.
 */
export const watchBody = <E, A, D>(
  response: HttpClientResponse.HttpClientResponse,
  idle: Duration.Duration | undefined,
  onError: (error: HttpClientError.ResponseError, bytesRead: number) => E,
  onIdle: (bytesRead: number) => E,
  makeDecoder: () => Framing.BytesDecoder<A, D>
): Stream.Stream<A, E | D> => {
  if (idle === undefined) {
    return Stream.suspend(() => {
      let bytesRead = 0
      return through(
        Stream.mapChunks(
          ResponseBody.stream(response, (error) => onError(error, bytesRead)),
          (chunk) => {
            for (const bytes of chunk) bytesRead += bytes.length
            return chunk
          }
        ),
        makeDecoder()
      )
    })
  }
  const idleMillis = Duration.toMillis(idle)
  const source = ResponseBody.webSource(response)
  if (source !== undefined && source.body !== null) {
    return webBody(response, source.body, idleMillis, onError, onIdle, makeDecoder)
  }
  const readable = nodeReadable(response)
  return readable !== undefined
    ? nodeBody(response, readable, idleMillis, onError, onIdle, makeDecoder)
    : mailboxBody(response, idleMillis, onError, onIdle, makeDecoder)
}

/**
 * The idle deadline of one body: `held` while the consumer holds what a chunk decoded to (no deadline),
 * `rearm` after it, which moves the deadline on only if the decoder's `activity` grew since the last
 * `rearm` (without one: always).
 */
const makeDeadline = (clock: Clock.Clock, idleMillis: number, activity: (() => number) | undefined) => {
  let armed = clock.unsafeCurrentTimeMillis() + idleMillis
  let deadline = armed
  let seen = 0
  return {
    deadline: () => deadline,
    /** The consumer holds what a chunk decoded to: its time is not the server's silence. */
    held: () => {
      deadline = Infinity
    },
    /** The consumer took it: the deadline moves on if the chunk(s) since the last `rearm` were activity. */
    rearm: () => {
      const now = activity === undefined ? seen + 1 : activity()
      if (now !== seen) armed = clock.unsafeCurrentTimeMillis() + idleMillis
      seen = now
      deadline = armed
    }
  }
}

/** The part of a Node `Readable` (paused mode) that `nodeBody` uses. */
interface NodeReadable {
  readonly readable: boolean
  readonly read: () => unknown
  readonly resume: () => unknown
  readonly on: (event: "readable" | "end" | "error", listener: (cause?: unknown) => void) => unknown
  readonly off: (event: "readable" | "end" | "error", listener: (cause?: unknown) => void) => unknown
  readonly destroy: (error?: Error) => unknown
}

const isNodeReadable = (value: unknown): value is NodeReadable =>
  typeof value === "object" && value !== null && typeof (value as NodeReadable).readable === "boolean" &&
  typeof (value as NodeReadable).read === "function" && typeof (value as NodeReadable).resume === "function" &&
  typeof (value as NodeReadable).on === "function" && typeof (value as NodeReadable).destroy === "function"

/**
 * The Node `Readable` whose bytes `response.stream` reads, when `response` is one of `@effect/platform-node`'s
 * (its `source` is undici's answer with the `Readable` as `body`, or `node:http`'s `IncomingMessage` itself;
 * the `HttpClient`'s interruptible wrapper looked through, as `ResponseBody.webSource` does) and has no own
 * `stream` in place of its class's; else `undefined`.
 */
const nodeReadable = (response: HttpClientResponse.HttpClientResponse): NodeReadable | undefined => {
  response = ResponseBody.unwrapped(response)
  if (Object.hasOwn(response, "stream")) return undefined
  const source: unknown = (response as { readonly source?: unknown }).source
  if (isNodeReadable(source)) return source
  const body: unknown = typeof source === "object" && source !== null ? (source as { readonly body?: unknown }).body : undefined
  return isNodeReadable(body) ? body : undefined
}

/**
 * Starts the watchdog of one body outside any scope (a timer, re-armed each time it wakes before
 * `deadline()`; see internal/timer) and returns the function that stops it: `expire` must be synchronous
 * work on the body.
 */
const startWatchdog = (
  clock: Clock.Clock,
  idleMillis: number,
  deadline: () => number,
  expire: () => void
): () => void => {
  let cancel = constVoid
  const watch = (): void => {
    const left = deadline() - clock.unsafeCurrentTimeMillis()
    if (left <= 0) return expire()
    cancel = Timer.after(clock, Number.isFinite(left) ? left : idleMillis, watch)
  }
  watch()
  return () => cancel()
}

const webBody = <E, A, D>(
  response: HttpClientResponse.HttpClientResponse,
  body: ReadableStream<Uint8Array>,
  idleMillis: number,
  onError: (error: HttpClientError.ResponseError, bytesRead: number) => E,
  onIdle: (bytesRead: number) => E,
  makeDecoder: () => Framing.BytesDecoder<A, D>
): Stream.Stream<A, E | D> =>
  Stream.fromChannel(Channel.unwrap(Effect.map(Effect.clock, (clock) => {
    const decoder = stepsOf(makeDecoder())
    const reader = body.getReader()
    let bytesRead = 0
    let settled = false
    let expired = false
    const deadline = makeDeadline(clock, idleMillis, decoder.activity)
    const stopWatchdog = startWatchdog(clock, idleMillis, deadline.deadline, () => {
      if (settled) return
      expired = true
      reader.cancel().catch(() => undefined)
    })
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
      deadline.rearm()
      return loop
    })
    const loop: Channel.Channel<Chunk.Chunk<A>, unknown, E | D, unknown, void, unknown> = Channel.flatMap(
      Channel.fromEffect(read),
      (result) => {
        if (result.done) {
          settled = true
          return expired ? Channel.fail(onIdle(bytesRead)) : decoder.end
        }
        bytesRead += result.value.length
        deadline.held()
        return decoder.input(Chunk.of(result.value), rearm)
      }
    )
    return Channel.ensuring(
      loop,
      Effect.suspend(() => {
        stopWatchdog()
        return settled ? Effect.void : Effect.promise(() => reader.cancel().catch(() => undefined))
      })
    )
  })))

/**
 * How long a body left before its end is read on for its end to come (see `nodeBody`'s finalizer): enough
 * for an end written right after the last event, short enough that a request left mid-answer (a client gone)
 * is aborted at once in effect.
 */
const END_GRACE_MS = 50

const nodeBody = <E, A, D>(
  response: HttpClientResponse.HttpClientResponse,
  readable: NodeReadable,
  idleMillis: number,
  onError: (error: HttpClientError.ResponseError, bytesRead: number) => E,
  onIdle: (bytesRead: number) => E,
  makeDecoder: () => Framing.BytesDecoder<A, D>
): Stream.Stream<A, E | D> =>
  Stream.fromChannel(Channel.unwrap(Effect.map(Effect.clock, (clock) => {
    const decoder = stepsOf(makeDecoder())
    let bytesRead = 0
    let ended = false
    let expired = false
    let failure: unknown = undefined
    const deadline = makeDeadline(clock, idleMillis, decoder.activity)
    // woken by the `Readable`'s events while a read waits
    let wake: (() => void) | undefined
    const onReadable = () => wake?.()
    const onEnd = () => {
      ended = true
      wake?.()
    }
    const onFailure = (cause: unknown) => {
      failure ??= cause
      wake?.()
    }
    readable.on("readable", onReadable)
    readable.on("end", onEnd)
    readable.on("error", onFailure)
    const stopWatchdog = startWatchdog(clock, idleMillis, deadline.deadline, () => {
      if (ended || failure !== undefined) return
      expired = true
      readable.destroy(new Error("idle timeout"))
    })
    // No canceler: an `Effect.async` that returns one is wrapped in `onInterrupt` (about 8 fiber steps per
    // wait); a wake after an interruption is ignored by the fiber (its callback was already called).
    const waitForData = Effect.async<void>((resume) => {
      wake = () => {
        wake = undefined
        resume(Effect.void)
      }
    })
    const loop: Channel.Channel<Chunk.Chunk<A>, unknown, E | D, unknown, void, unknown> = Channel.suspend(() => {
      if (expired) return Channel.fail(onIdle(bytesRead))
      if (failure !== undefined) {
        return Channel.fail(onError(
          new HttpClientError.ResponseError({ request: response.request, response, reason: "Decode", cause: failure }),
          bytesRead
        ))
      }
      const chunks: Array<Uint8Array> = []
      for (let piece = readable.read(); piece !== null; piece = readable.read()) {
        chunks.push(piece as Uint8Array)
        bytesRead += (piece as Uint8Array).length
      }
      if (chunks.length > 0) {
        deadline.held()
        return decoder.input(Chunk.unsafeFromArray(chunks), rearm)
      }
      if (ended || !readable.readable) {
        ended = true
        return decoder.end
      }
      return Channel.zipRight(Channel.fromEffect(waitForData), loop)
    })
    const rearm = Channel.suspend(() => {
      deadline.rearm()
      return loop
    })
    return Channel.ensuring(
      loop,
      Effect.sync(() => {
        stopWatchdog()
        readable.off("readable", onReadable)
        const detach = () => {
          readable.off("end", onEnd)
          readable.off("error", onFailure)
        }
        if (ended) return detach()
        // A body left before its end is destroyed, which aborts the request and closes its connection. But a
        // body left at a stream's last event (a consumer that stops at `[DONE]`) has usually only its end
        // still to come: in the same read, or in a later one when the server writes the end of its chunked
        // body on its own (Python's servers do). It is read on, its bytes dropped, for up to `END_GRACE_MS`,
        // and destroyed only if it has not ended by then: destroyed, its connection could not be reused, and
        // undici would build a `RequestAbortedError` with its stack trace (about 2 % of the gateway's CPU
        // per streamed request). When the grace passes, the loop's next poll for I/O still comes first (the
        // destroy waits for `setImmediate`): an end that arrived while the process waited for a core (a loaded
        // machine, a long task on the loop) is read, not thrown away with its connection.
        const grace = setTimeout(() =>
          setImmediate(() => {
            detach()
            if (!ended) readable.destroy()
          }), END_GRACE_MS)
        grace.unref()
        readable.on("end", () => {
          clearTimeout(grace)
          detach()
        })
        readable.resume()
      })
    )
  })))

const mailboxBody = <E, A, D>(
  response: HttpClientResponse.HttpClientResponse,
  idleMillis: number,
  onError: (error: HttpClientError.ResponseError, bytesRead: number) => E,
  onIdle: (bytesRead: number) => E,
  makeDecoder: () => Framing.BytesDecoder<A, D>
): Stream.Stream<A, E | D> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const clock = yield* Effect.clock
    const mailbox = yield* Mailbox.make<A, E | D>(CAPACITY)
    let bytesRead = 0
    const decoder = makeDecoder()
    const deadline = makeDeadline(clock, idleMillis, stepsOf(decoder).activity)
    // decoded in the reader fiber, so that the decoder's activity is known when the deadline is moved on
    const decoded = through(
      Stream.mapChunks(ResponseBody.stream(response, (error) => onError(error, bytesRead)), (chunk) => {
        for (const bytes of chunk) bytesRead += bytes.length
        return chunk
      }),
      decoder
    )
    const read = Stream.runForEachChunk(decoded, (chunk) => {
      // held while the mailbox is full: the consumer's time is not the server's silence
      deadline.held()
      const rest = mailbox.unsafeOfferAll(chunk)
      if (Chunk.isEmpty(rest)) {
        deadline.rearm()
        return Effect.void
      }
      return Effect.map(mailbox.offerAll(rest), deadline.rearm)
    }).pipe(Mailbox.into(mailbox))
    yield* Effect.forkScoped(read)
    const stopWatchdog = startWatchdog(clock, idleMillis, deadline.deadline, () => {
      mailbox.unsafeDone(Exit.fail(onIdle(bytesRead)))
    })
    yield* Effect.addFinalizer(() => Effect.sync(stopWatchdog))
    return Mailbox.toStream(mailbox)
  }))
