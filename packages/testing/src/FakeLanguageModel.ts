/**
 * A scripted `LanguageModel` for unit tests: each call takes the next answer of the script (a
 * `ModelResponse`, or a `ModelError` to fail with) and every call is recorded (prompt and call options), so
 * a test can check what the code under test asked for without HTTP or captures.
 *
 * ```ts
 * const fake = yield* FakeLanguageModel.make([response1, new AiError.HttpError({ … }), response2])
 * yield* program.pipe(Effect.provideService(LanguageModel.LanguageModel, fake.service))
 * assert.strictEqual(fake.calls.length, 3)
 * ```
 *
 * `stream` answers a scripted response as the parts of a finished stream: `response_started`, one whole
 * (non-partial) `part` per output item, `response_finished` with the response's status, finish reason and
 * usage. A call past the end of the script fails with `InvalidPrompt` naming the call.
 *
 * @since 0.2.0
 */
import { AiError, LanguageModel, type ModelResponse, type Prompt, StreamPart } from "@effect-responses/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/**
 * One scripted answer: the response to return, or the error to fail with.
 *
 * @since 0.2.0
 * @category models
 */
export type Answer = ModelResponse.ModelResponse | LanguageModel.ModelError

/**
 * One recorded call: which method, the prompt and the call options.
 *
 * @since 0.2.0
 * @category models
 */
export interface Call {
  readonly method: "generate" | "stream"
  readonly prompt: Prompt.Prompt
  readonly options: LanguageModel.CallOptions | undefined
}

/**
 * A fake: the `LanguageModel` service and the calls it has received so far, in order.
 *
 * @since 0.2.0
 * @category models
 */
export interface FakeLanguageModel {
  readonly service: LanguageModel.Service
  readonly calls: ReadonlyArray<Call>
}

const isError = (answer: Answer): answer is LanguageModel.ModelError => AiError.isAiError(answer)

/**
 * The stream parts of a finished response (see the module doc).
 *
 * @since 0.2.0
 * @category conversions
 */
export const toStreamParts = (response: ModelResponse.ModelResponse): ReadonlyArray<StreamPart.StreamPart> => [
  new StreamPart.ResponseStarted({ responseId: response.id, model: response.model }),
  ...response.message.parts.map((part, outputIndex) =>
    new StreamPart.PartUpdate({ responseId: response.id, outputIndex, partial: false, part })
  ),
  new StreamPart.ResponseFinished({
    responseId: response.id,
    status: response.status,
    finishReason: response.finishReason,
    ...(response.incompleteReason === undefined ? {} : { incompleteReason: response.incompleteReason }),
    usage: response.usage
  })
]

/**
 * A fake over `script`, answered in order across `generate` and `stream` calls.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (script: ReadonlyArray<Answer>): Effect.Effect<FakeLanguageModel> =>
  Effect.sync(() => {
    const calls: Array<Call> = []
    const next = (call: Call): Effect.Effect<ModelResponse.ModelResponse, LanguageModel.ModelError> =>
      Effect.suspend(() => {
        calls.push(call)
        const answer = script[calls.length - 1]
        if (answer === undefined) {
          return Effect.fail(
            new AiError.InvalidPrompt({
              description: `the fake language model has no answer for call ${calls.length} (its script has ${script.length})`
            })
          )
        }
        return isError(answer) ? Effect.fail(answer) : Effect.succeed(answer)
      })
    const service = LanguageModel.LanguageModel.of({
      generate: (prompt, options) => next({ method: "generate", prompt, options }),
      stream: (prompt, options) =>
        Stream.unwrap(
          Effect.map(next({ method: "stream", prompt, options }), (response) => Stream.fromIterable(toStreamParts(response)))
        )
    })
    return { service, calls }
  })

/**
 * The `LanguageModel` layer of a fake over `script`. Use `make` to read the recorded calls.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (script: ReadonlyArray<Answer>): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(LanguageModel.LanguageModel, Effect.map(make(script), (fake) => fake.service))
