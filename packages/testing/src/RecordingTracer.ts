/**
 * A tracer for tests that records every span started under it, so that a test can check which spans the
 * code under test made (names, attributes, parents, trace ids) without an OpenTelemetry exporter.
 *
 * ```ts
 * const recording = yield* RecordingTracer.make
 * yield* program.pipe(Effect.withTracer(recording.tracer))
 * assert.include(recording.spans.map((span) => span.name), "ResponsesClient.createStream")
 * ```
 *
 * The spans are those of the tracer in use when `make` runs (Effect's own tracer unless one is installed):
 * they propagate as usual (`traceparent` headers of the platform's HTTP client carry their trace and span
 * ids), and are kept in the order they were started.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

/**
 * A recording tracer: `tracer` to install (`Effect.withTracer`, `Layer.setTracer`), `spans` every span it
 * started, in order (ended or not: `span.status` tells).
 *
 * @since 0.2.0
 * @category models
 */
export interface RecordingTracer {
  readonly tracer: Tracer.Tracer
  readonly spans: ReadonlyArray<Tracer.Span>
}

/**
 * A recording tracer over the tracer in use (see the module doc).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: Effect.Effect<RecordingTracer> = Effect.map(Effect.tracer, (inner) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = inner.span(...args)
      spans.push(span)
      return span
    },
    context: (f, fiber) => inner.context(f, fiber)
  })
  return { tracer, spans }
})
