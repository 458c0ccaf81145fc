/**
 * @since 0.1.0
 */
export * as AiError from "./AiError.js"

/**
 * @since 0.1.0
 */
export * as LanguageModel from "./LanguageModel.js"

/**
 * @since 0.1.0
 */
export * as Message from "./Message.js"

/**
 * @since 0.1.0
 */
export * as ModelResponse from "./ModelResponse.js"

/**
 * @since 0.1.0
 */
export * as Part from "./Part.js"

/**
 * @since 0.1.0
 */
export * as Prompt from "./Prompt.js"

/**
 * @since 0.2.0
 */
export * as ResponseFormat from "./ResponseFormat.js"

/**
 * @since 0.1.0
 */
export * as StreamPart from "./StreamPart.js"

/**
 * @since 0.1.0
 */
export * as Usage from "./Usage.js"

/**
 * @since 0.1.0
 */
export * as UnsafePart from "./UnsafePart.js"

/**
 * @since 0.2.0
 */
export * as UnsafeMessage from "./UnsafeMessage.js"

/**
 * @since 0.1.0
 */
export * as StructuredOutput from "./StructuredOutput.js"

/**
 * @since 0.2.0
 */
export * as StrictSchema from "./StrictSchema.js"

/**
 * @since 0.2.0
 */
export * as BuiltInArguments from "./BuiltInArguments.js"
