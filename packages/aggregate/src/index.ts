/**
 * @since 0.1.0
 */
export * as MessageAggregator from "./MessageAggregator.js"
