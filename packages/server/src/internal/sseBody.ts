/**
 * The SSE body of a streamed response of the gateway (`POST /v1/responses` with `stream: true`): the
 * upstream's first chunk already pulled (so that errors before it kept their HTTP status), then the rest,
 * each upstream chunk's parts through the lifecycle encoder and the events' bytes written as one batch.
 *
 * One state machine (`batches`) makes the bytes; two ways write them:
 *
 * - On `@effect/platform-node`'s server (the request's `source` is Node's `IncomingMessage`, its `response`
 *   Node's `ServerResponse`), written into the `ServerResponse` in the request's own fiber, by a pre-response
 *   handler (`writeNode`). Written as an Effect `Stream` instead (`HttpServerResponse.stream`), the platform
 *   runs the stream with `Stream.runForEachChunk`, whose run alone (a scope, a channel executor and their
 *   finalizers) took about 490 fiber steps per response, 424 of them after the last event: a third of a
 *   one-delta request's 1,310; as a Node `Readable` (`HttpServerResponse.raw`), a fiber of its own fed it
 *   (a `Runtime.runFork`, which copies the `FiberRefs`) and the platform piped it with `stream.pipeline`,
 *   which builds an `AbortController` and, as it finishes, a `DOMException` with its stack per response
 *   (packages/bench/RESULTS.md, "the gateway's CPU per request", rounds 3 and 4).
 * - On any other server, that `Stream`.
 *
 * @internal
 */
import type { AiError, StreamPart } from "@effect-responses/core"
import * as Cookies from "@effect/platform/Cookies"
import * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Headers from "@effect/platform/Headers"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type Budget, type JsonText, makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"
import * as ResponsesLifecycle from "../ResponsesLifecycle.js"
import { TextDelta } from "./lifecycle/textDelta.js"
import { isNodeRequest } from "./nodeRequest.js"

const encoder = new TextEncoder()

/**
 * The events that may be large: those that repeat a whole item's content, and those that carry the Response
 * object (which echoes the request's `instructions`, `tools` and `text` format, as large as the client sent
 * them). A text delta, most of the events of a long answer, is told at once.
 */
const isWhole = (event: ResponsesLifecycle.Event): boolean =>
  !(event instanceof TextDelta) && (event.type.endsWith(".done") || RESPONSE_EVENTS.has(event.type))

/** The events whose payload is the Response object. */
const RESPONSE_EVENTS = new Set<string>([
  "response.created",
  "response.in_progress",
  "response.completed",
  "response.incomplete",
  "response.failed"
])

/** The UTF-8 bytes of each piece of text of `parts`, in order, encoded as they are pulled. */
export function* encoded(...parts: ReadonlyArray<Iterable<string>>): Generator<Uint8Array> {
  for (const part of parts) for (const piece of part) yield encoder.encode(piece)
}

/**
 * `pieces` as a stream, pulled one at a time, with a yield to other requests' I/O once a few milliseconds of
 * work passed (`makeBudget`): a socket that takes every piece at once (loopback, a fast client) never makes
 * the writer wait, so a 10 MB answer would otherwise be made and written in one stretch of the event loop.
 * `onLeft` is called (synchronously) when the stream is interrupted before its end: the client left and the
 * server dropped the body before its last piece was written.
 */
export const pieceStream = (
  pieces: IterableIterator<Uint8Array>,
  onLeft?: (() => void) | undefined
): Stream.Stream<Uint8Array> => {
  const budget = makeBudget(undefined, 1)
  const stream = Stream.fromIteratorSucceed(pieces, 1).pipe(
    Stream.tap(() => budget.tick() ? yieldToIo : Effect.void)
  )
  if (onLeft === undefined) return stream
  // the platform interrupts the writer when the client leaves before the last piece was written
  return Stream.fromChannel(Channel.ensuringWith(
    Stream.toChannel(stream),
    (exit) => Exit.isInterrupted(exit) ? Effect.sync(onLeft) : Effect.void
  ))
}

/**
 * The SSE bytes of `events`: none for no events (an upstream chunk that made none), one piece when they are
 * deltas only (the hot path), else serialized as they are pulled in pieces of about 64 Ki characters
 * (`ResponsesLifecycle.toSsePieces`: small frames grouped, a large answer's text in slices), so that the
 * events repeating a large answer never stand in memory whole, as text or as bytes.
 */
const bytesOf = (events: ReadonlyArray<ResponsesLifecycle.Event>, texts: ReadonlyArray<JsonText>): Iterator<Uint8Array> =>
  events.length === 0
    ? [].values()
    : events.some(isWhole)
    ? encoded(ResponsesLifecycle.toSsePieces(events, undefined, texts))
    : [encoder.encode(ResponsesLifecycle.toSse(events))].values()

const TERMINAL_EVENTS: ReadonlySet<string> = new Set(["response.completed", "response.incomplete", "response.failed"])

/** `events` with `response` in place of the terminal event's Response object. */
const withTerminalResponse = (
  events: ReadonlyArray<ResponsesLifecycle.Event>,
  response: ResponsesLifecycle.ResponseObject
): ReadonlyArray<ResponsesLifecycle.Event> =>
  events.map((event) => TERMINAL_EVENTS.has(event.type) ? { ...event, response } : event)

/** What a streamed response's body is made of. */
export interface Source {
  readonly lifecycle: ResponsesLifecycle.Encoder
  /** The upstream's first chunk of parts, already pulled. */
  readonly first: Chunk.Chunk<StreamPart.StreamPart>
  /** The upstream's next chunk (`Right`), its end (`Left`), or its error. */
  readonly pull: Effect.Effect<Either.Either<Chunk.Chunk<StreamPart.StreamPart>, unknown>, AiError.AiError>
  /** Holds the upstream call: closed when the body ends or is left (a client that disconnects). */
  readonly scope: Scope.CloseableScope
  /** The `response.failed` error of an upstream error mid-stream (logging it). */
  readonly midStreamError: (error: AiError.AiError) => Effect.Effect<ResponsesLifecycle.ResponseError>
  /**
   * Run with the final Response object before the terminal event is written (a store saves it); a Response
   * object it gives replaces the terminal event's (one that says it was not stored).
   */
  readonly onTerminal?:
    | ((response: ResponsesLifecycle.ResponseObject) => Effect.Effect<ResponsesLifecycle.ResponseObject | undefined>)
    | undefined
  /** Logs a defect of the gateway, which then ends the response with `response.failed` `server_error`. */
  readonly onDefect: (cause: Cause.Cause<unknown>) => Effect.Effect<void>
  /**
   * Called (synchronously) when the body is left before its end was read: the client went away mid-answer
   * and the server dropped the body (after the terminal event was made, too, when its bytes were not all taken).
   */
  readonly onLeft?: (() => void) | undefined
  /** The JSON text of the request's long strings (`Cooperative.JsonText`), copied when they are echoed. */
  readonly jsonTexts?: ReadonlyArray<JsonText> | undefined
}

/** The body's batches, two ways to take them (see `batches`). */
interface Batches {
  /**
   * The next batch (each call an effect to run before the next call): first the head (the events of
   * `response.created` and of the first chunk), then the events of each upstream chunk, the upstream's end
   * or its error, `undefined` once the terminal event was given (the upstream is not pulled after it).
   */
  readonly next: () => Effect.Effect<Iterator<Uint8Array> | undefined>
  /**
   * The same batches, each given to `write` as soon as it is made, until the terminal event's; `write`
   * returns an effect when it must wait (for a `'drain'`, a yield) before the next batch, else `undefined`.
   */
  readonly run: (write: (pieces: Iterator<Uint8Array>) => Effect.Effect<void> | undefined) => Effect.Effect<void>
}

/**
 * The body's bytes in batches (see `Batches`). Never fails: an upstream error becomes `response.failed` with
 * `midStreamError`'s error, a defect a logged `response.failed` with `server_error`.
 *
 * `next` is a function rather than one effect, and the upstream's chunk is matched at once rather than through
 * `Effect.either`: about 6 fiber steps less per upstream chunk, with the writers' (packages/bench/RESULTS.md,
 * "the gateway's CPU per request and per event, round 7"). `run` takes an upstream chunk in one step: the
 * chunk's events made, encoded and written in the match of the pull that read it (its defects caught there,
 * not by a handler around each batch), then the next pull: about 3 fiber steps less per upstream chunk
 * than `next` and a writer's loop (packages/bench/RESULTS.md, "the gateway's CPU per paced event, round 4").
 */
const batches = (source: Source): Batches => {
  const { lifecycle, midStreamError, onTerminal, pull } = source
  const texts = source.jsonTexts ?? []
  let head: Array<ResponsesLifecycle.Event> | undefined = []
  let model: string | undefined
  for (const part of source.first) if (part.type === "response_started") model = part.model
  lifecycle.start(head, model)
  for (const part of source.first) lifecycle.push(part, head)
  // with a store, the response is saved before its terminal event is written: a client that continues it
  // (`previous_response_id`) as soon as it reads `response.completed` finds it stored
  let saved = false
  /** The bytes of `events`, or, when the response is to be saved first, the effect that saves it and gives them. */
  const bytesOrSaved = (
    events: ReadonlyArray<ResponsesLifecycle.Event>
  ): Iterator<Uint8Array> | Effect.Effect<Iterator<Uint8Array>> => {
    if (onTerminal === undefined || saved || !lifecycle.terminated()) return bytesOf(events, texts)
    saved = true
    return Effect.map(
      onTerminal(lifecycle.response()),
      (replaced) => bytesOf(replaced === undefined ? events : withTerminalResponse(events, replaced), texts)
    )
  }
  const written = (events: ReadonlyArray<ResponsesLifecycle.Event>): Effect.Effect<Iterator<Uint8Array>> => {
    const bytes = bytesOrSaved(events)
    return Effect.isEffect(bytes) ? bytes : Effect.succeed(bytes)
  }
  /** The events of an upstream chunk (`Right`) or of its end (`Left`). */
  const eventsOf = (chunk: Either.Either<Chunk.Chunk<StreamPart.StreamPart>, unknown>): Array<ResponsesLifecycle.Event> => {
    const out: Array<ResponsesLifecycle.Event> = []
    if (Either.isLeft(chunk)) lifecycle.end(out)
    else for (const part of chunk.right) lifecycle.push(part, out)
    return out
  }
  const after = (write: (out: Array<ResponsesLifecycle.Event>) => void) =>
    Effect.suspend(() => {
      const out: Array<ResponsesLifecycle.Event> = []
      write(out)
      return written(out)
    })
  type Batch = Effect.Effect<Iterator<Uint8Array> | undefined>
  /** A defect of the gateway: logged, then the `response.failed` with `server_error`. */
  const defected = (cause: Cause.Cause<unknown>): Effect.Effect<Iterator<Uint8Array>> =>
    Effect.zipRight(
      source.onDefect(cause),
      after((out) => lifecycle.fail({ code: "server_error", message: "the gateway failed while streaming the response" }, out))
    )
  const guarded = (effect: Batch): Batch =>
    Effect.catchAllCause(effect, (cause) => Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : defected(cause))
  const upstreamFailed = (error: AiError.AiError): Batch =>
    Effect.flatMap(midStreamError(error), (failure) => after((out) => lifecycle.fail(failure, out)))
  // the upstream's chunk (`Right(chunk)`), its end (`Left(_)`) or its error
  const pulled = guarded(Effect.matchEffect(pull, {
    onFailure: upstreamFailed,
    onSuccess: (chunk) => written(eventsOf(chunk))
  }))
  /** The pull's failure as `pulled` takes it (`Effect.catchAll` matches as `Effect.matchEffect` does). */
  const pullFailed = (cause: Cause.Cause<AiError.AiError>): Batch =>
    guarded(Effect.catchAll(Effect.failCause(cause), upstreamFailed))
  const next = () => {
    if (head === undefined) return lifecycle.terminated() ? Effect.succeed(undefined) : pulled
    const events = head
    head = undefined
    return guarded(Effect.suspend(() => written(events)))
  }
  const run = (write: (pieces: Iterator<Uint8Array>) => Effect.Effect<void> | undefined): Effect.Effect<void> => {
    /** Writes a batch, then takes the next chunk (none after the terminal event). */
    const writeThenPull = (pieces: Iterator<Uint8Array>): Effect.Effect<void> => {
      const waiting = write(pieces)
      const rest = lifecycle.terminated() ? Effect.void : pullAndWrite
      return waiting === undefined ? rest : Effect.zipRight(waiting, rest)
    }
    const writeBatch = (batch: Batch): Effect.Effect<void> =>
      Effect.flatMap(batch, (pieces) => pieces === undefined ? Effect.void : writeThenPull(pieces))
    const pullAndWrite: Effect.Effect<void> = Effect.matchCauseEffect(pull, {
      onFailure: (cause) => writeBatch(pullFailed(cause)),
      onSuccess: (chunk) => {
        let bytes: Iterator<Uint8Array> | Effect.Effect<Iterator<Uint8Array>>
        try {
          bytes = bytesOrSaved(eventsOf(chunk))
        } catch (defect) {
          return writeBatch(defected(Cause.die(defect)))
        }
        return Effect.isEffect(bytes) ? writeBatch(guarded(bytes)) : writeThenPull(bytes)
      }
    })
    return writeBatch(next())
  }
  return { next, run }
}

/** The body as an Effect `Stream` (any server), one channel: each piece of each batch written as it comes. */
const toStream = (
  next: () => Effect.Effect<Iterator<Uint8Array> | undefined>,
  scope: Scope.CloseableScope,
  onLeft: (() => void) | undefined
) => {
  type Body = Channel.Channel<Chunk.Chunk<Uint8Array>, unknown, never, unknown, unknown, unknown>
  // as `writeNode`: a yield to other requests' I/O every few milliseconds of a large batch
  const writeAll = (pieces: Iterator<Uint8Array>, budget: Budget): Body =>
    Channel.suspend(() => {
      const piece = pieces.next()
      if (piece.done === true) return Channel.void
      const written = Channel.zipRight(Channel.write(Chunk.of(piece.value)), writeAll(pieces, budget))
      return budget.tick() ? Channel.zipRight(Channel.fromEffect(yieldToIo), written) : written
    })
  const loop: Body = Channel.flatMap(
    Channel.fromEffect(Effect.suspend(next)),
    (pieces) => pieces === undefined ? Channel.void : Channel.zipRight(writeAll(pieces, makeBudget(undefined, 1)), loop)
  )
  return Stream.fromChannel(Channel.ensuringWith(loop, (exit) =>
    Effect.zipRight(
      Exit.isInterrupted(exit) && onLeft !== undefined ? Effect.sync(onLeft) : Effect.void,
      Scope.close(scope, Exit.void)
    )))
}

/** The part of Node's `ServerResponse` the direct writer uses. */
interface NodeResponse {
  readonly headersSent: boolean
  readonly writableEnded: boolean
  readonly writableFinished: boolean
  readonly writeHead: (status: number, headers: Record<string, string | ReadonlyArray<string>>) => unknown
  readonly write: (chunk: Uint8Array) => boolean
  readonly end: () => unknown
  readonly cork: () => void
  readonly uncork: () => void
  readonly on: (event: "drain" | "finish" | "close", listener: () => void) => unknown
  readonly off: (event: "drain" | "finish" | "close", listener: () => void) => unknown
}

/**
 * Node's `ServerResponse` of a platform request made by `@effect/platform-node`'s server (its `response`
 * field; an upgrade request's is a function, not taken), else `undefined`.
 */
const nodeResponseOf = (request: HttpServerRequest.HttpServerRequest): NodeResponse | undefined => {
  if (!isNodeRequest(request.source)) return undefined
  const response = (request as { readonly response?: unknown }).response
  if (typeof response !== "object" || response === null) return undefined
  const candidate = response as NodeResponse
  return typeof candidate.writeHead === "function" && typeof candidate.write === "function" &&
      typeof candidate.end === "function" && typeof candidate.cork === "function" &&
      typeof candidate.uncork === "function" && typeof candidate.on === "function" &&
      typeof candidate.off === "function" && typeof candidate.writableEnded === "boolean"
    ? candidate
    : undefined
}

/** The headers of `response` as the platform's Node server writes them (its cookies as `set-cookie`). */
const nodeHeaders = (response: HttpServerResponse.HttpServerResponse): Record<string, string | ReadonlyArray<string>> => {
  if (Cookies.isEmpty(response.cookies)) return response.headers
  const cookies: Array<string> = Cookies.toSetCookieHeaders(response.cookies)
  const headers: Record<string, string | ReadonlyArray<string>> = { ...response.headers }
  const set = headers["set-cookie"]
  if (set !== undefined) cookies.push(...(typeof set === "string" ? [set] : set))
  headers["set-cookie"] = cookies
  return headers
}

/**
 * Writes the body into Node's response `res`, in the request's own fiber: each batch's pieces with
 * `write`, each piece whole, the writes of what is ready before the fiber waits corked into one (uncorked on
 * the next tick, as soon as the fiber waits for the upstream); when `write` returns `false` (the client
 * reads slower than the events come) it waits for `'drain'` before the next piece, so at most a piece
 * (about 64 Ki characters) beyond the response's buffer is held. Its end closes `scope`, then ends the
 * response and waits for it to finish (or close). Interruptible while it writes: the platform interrupts
 * the request when the client leaves, which calls `onLeft`, closes `scope` (the upstream call) and ends the
 * response; the
 * failure then carries `response` as a defect, as the platform's own writer does for an answer whose
 * headers were sent, so that the request is answered (and logged) with that status, not 499.
 */
const writeNode = (
  res: NodeResponse,
  made: Batches,
  scope: Scope.CloseableScope,
  onLeft: (() => void) | undefined,
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<void, never> =>
  Effect.suspend(() => {
    res.writeHead(response.status, nodeHeaders(response))
    let corked = false
    const uncork = () => {
      if (!corked) return
      corked = false
      res.uncork()
    }
    const drain = Effect.async<void>((resume) => {
      const drained = () => {
        res.off("drain", drained)
        resume(Effect.void)
      }
      res.on("drain", drained)
      return Effect.sync(() => res.off("drain", drained))
    })
    // A socket that takes every piece at once never makes `write` return `false`: a large batch (a 10 MB
    // answer repeated by its terminal events) yields to other requests' I/O every few milliseconds of its
    // own work. The budget is the batch's: one for the whole body counted the waits for the upstream as
    // work, so a paced stream (a delta every 10 ms) yielded after every batch, a `setImmediate` and a
    // fiber suspended and resumed per event (packages/bench/RESULTS.md, "the gateway's CPU per event,
    // round 2"); between batches the writer waits for the upstream's next read, where other I/O runs.
    // Writes what is left of a batch there and then; an effect only when it has to wait first (for a
    // drain, or a yield) before the rest, else `undefined`: a batch written whole costs no fiber step
    const writeAll = (pieces: Iterator<Uint8Array>, budget: Budget): Effect.Effect<void> | undefined => {
      for (let piece = pieces.next(); piece.done !== true; piece = pieces.next()) {
        if (!corked) {
          corked = true
          res.cork()
          process.nextTick(uncork)
        }
        if (!res.write(piece.value)) {
          uncork()
          return Effect.zipRight(drain, writeRest(pieces, budget))
        }
        if (budget.tick()) {
          uncork()
          return Effect.zipRight(yieldToIo, writeRest(pieces, budget))
        }
      }
      return undefined
    }
    const writeRest = (pieces: Iterator<Uint8Array>, budget: Budget): Effect.Effect<void> =>
      Effect.suspend(() => writeAll(pieces, budget) ?? Effect.void)
    const body = Effect.suspend(() => made.run((pieces) => writeAll(pieces, makeBudget(undefined, 1))))
    const finished = Effect.async<void>((resume) => {
      if (res.writableFinished) return resume(Effect.void)
      const done = () => {
        res.off("finish", done)
        res.off("close", done)
        resume(Effect.void)
      }
      res.on("finish", done)
      res.on("close", done)
    })
    return Effect.interruptible(body).pipe(
      Effect.onInterrupt(() => onLeft === undefined ? Effect.void : Effect.sync(onLeft)),
      Effect.ensuring(Scope.close(scope, Exit.void)),
      Effect.zipRight(Effect.suspend(() => {
        uncork()
        res.end()
        return finished
      })),
      Effect.catchAllCause((cause) =>
        Effect.suspend(() => {
          uncork()
          if (!res.writableEnded) res.end()
          return Effect.failCause(Cause.sequential(cause, Cause.die(response)))
        })
      )
    )
  })

const sseHeaders = { contentType: "text/event-stream", headers: Headers.fromInput({ "cache-control": "no-cache" }) }

/**
 * The streamed response of `source` for `request` (see the module doc). On Node's server, its body is
 * written by a pre-response handler appended to the request's (`HttpApp.appendPreResponseHandler`), which
 * runs after any other: it writes the status and headers of the response as the app and the handlers
 * before it left them. A response whose body another handler replaced is left to the platform, and the
 * upstream call (`source.scope`) closed.
 */
export const response = (
  request: HttpServerRequest.HttpServerRequest,
  source: Source
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const made = batches(source)
  const res = nodeResponseOf(request)
  if (res === undefined) {
    return Effect.succeed(HttpServerResponse.stream(toStream(made.next, source.scope, source.onLeft), sseHeaders))
  }
  const body = new NodeBody()
  let written = false
  return Effect.as(
    HttpApp.appendPreResponseHandler((_, response) => {
      if (written) return Effect.succeed(response)
      written = true
      if (response.body._tag !== "Raw" || response.body.body !== body) {
        return Effect.as(Scope.close(source.scope, Exit.void), response)
      }
      return Effect.as(writeNode(res, made, source.scope, source.onLeft, response), response)
    }),
    HttpServerResponse.raw(body, sseHeaders)
  )
}

/**
 * The body of a streamed response on Node's server, which `response`'s pre-response handler writes (the
 * platform, finding the response ended, writes nothing).
 */
class NodeBody {
  toString(): string {
    return "SseBody.NodeBody"
  }
}
