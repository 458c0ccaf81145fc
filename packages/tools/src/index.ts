/**
 * @since 0.1.0
 */
export * as Tool from "./Tool.js"

/**
 * @since 0.1.0
 */
export * as Toolkit from "./Toolkit.js"

/**
 * @since 0.1.0
 */
export * as ToolExecutor from "./ToolExecutor.js"

/**
 * @since 0.1.0
 */
export * as ToolLoop from "./ToolLoop.js"

/**
 * @since 0.2.0
 */
export * as ApplyPatch from "./ApplyPatch.js"

/**
 * @since 0.2.0
 */
export * as Shell from "./Shell.js"

/**
 * @since 0.2.0
 */
export * as McpApprovals from "./McpApprovals.js"
