/**
 * Our model errors as `@effect/ai`'s `AiError`s, for the `@effect/ai` `LanguageModel` this package provides.
 *
 * | ours | `@effect/ai` |
 * | --- | --- |
 * | `HttpError` | `HttpResponseError` (`reason: "StatusCode"`, the status, `x-request-id` as a response header when known) |
 * | `TransportError` | `HttpRequestError` (`reason: "Transport"`, the URL when known) |
 * | `InvalidPrompt` | `MalformedInput` |
 * | `MalformedOutput`, `TruncatedStream` | `MalformedOutput` |
 * | `StreamErrorEvent`, `ResponseFailed` | `UnknownError` |
 *
 * The description is our error's message, and `cause` (where `@effect/ai` has one) our error itself, so
 * `retryable` and `retryAfter` stay readable. Retries and timeouts happen below, in our client, before an
 * error gets here.
 *
 * @since 0.2.0
 */
import type { LanguageModel } from "@effect-responses/core"
import * as AiError from "@effect/ai/AiError"
import * as Option from "effect/Option"

/**
 * The name `@effect/ai` errors made here give as their `module`.
 *
 * @since 0.2.0
 * @category constants
 */
export const MODULE = "EffectAiLanguageModel"

const request = (url: string | undefined): typeof AiError.HttpRequestDetails.Type => ({
  method: "POST",
  url: url ?? "",
  urlParams: [],
  hash: Option.none(),
  headers: {}
})

/**
 * The `@effect/ai` error of one of our model errors (see the module's table); `method` names the
 * `@effect/ai` method that failed (`generateText`, `streamText`).
 *
 * @since 0.2.0
 * @category conversions
 */
export const fromModelError = (error: LanguageModel.ModelError, method: string): AiError.AiError => {
  const common = { module: MODULE, method, description: error.message }
  switch (error._tag) {
    case "HttpError":
      return new AiError.HttpResponseError({
        ...common,
        reason: "StatusCode",
        request: request(undefined),
        response: {
          status: error.status,
          headers: error.requestId === undefined ? {} : { "x-request-id": error.requestId }
        }
      })
    case "TransportError":
      return new AiError.HttpRequestError({ ...common, reason: "Transport", request: request(error.url), cause: error })
    case "InvalidPrompt":
      return new AiError.MalformedInput({ ...common, cause: error })
    case "MalformedOutput":
    case "TruncatedStream":
      return new AiError.MalformedOutput({ ...common, cause: error })
    case "StreamErrorEvent":
    case "ResponseFailed":
      return new AiError.UnknownError({ ...common, cause: error })
  }
}
