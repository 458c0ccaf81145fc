/**
 * Token usage of one model call, or summed over the steps of a tool loop. All counts are tokens.
 * `cachedInputTokens` is part of `inputTokens`, `reasoningTokens` part of `outputTokens` (as in the
 * Responses `usage` object: `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category models
 */
export class Usage extends Schema.Class<Usage>("@effect-responses/core/Usage")({
  inputTokens: Schema.Number,
  cachedInputTokens: Schema.Number,
  outputTokens: Schema.Number,
  reasoningTokens: Schema.Number,
  totalTokens: Schema.Number
}) {}

/**
 * Zero tokens everywhere.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Usage = new Usage({
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  totalTokens: 0
})

/**
 * The field-wise sum of two usages.
 *
 * @since 0.1.0
 * @category combinators
 */
export const add = (self: Usage, that: Usage): Usage =>
  new Usage({
    inputTokens: self.inputTokens + that.inputTokens,
    cachedInputTokens: self.cachedInputTokens + that.cachedInputTokens,
    outputTokens: self.outputTokens + that.outputTokens,
    reasoningTokens: self.reasoningTokens + that.reasoningTokens,
    totalTokens: self.totalTokens + that.totalTokens
  })
