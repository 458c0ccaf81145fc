/**
 * @since 0.2.0
 */
export * as EffectAiError from "./EffectAiError.js"

/**
 * @since 0.2.0
 */
export * as EffectAiLanguageModel from "./EffectAiLanguageModel.js"

/**
 * @since 0.2.0
 */
export * as EffectAiPrompt from "./EffectAiPrompt.js"

/**
 * @since 0.2.0
 */
export * as EffectAiResponse from "./EffectAiResponse.js"
