/**
 * Whether a request came through `@effect/platform-node`'s HTTP server: there the platform request's `source`
 * is Node's `IncomingMessage`, which the gateway reads directly (`requestBody.ts`); its `response`
 * is Node's `ServerResponse`, into which it writes a streamed answer (`sseBody.ts`).
 *
 * @internal
 */

/** The part of Node's `IncomingMessage` (a `Readable` on a socket) the gateway uses. */
export interface NodeRequest {
  readonly readableEnded: boolean
  readonly destroyed: boolean
  readonly socket: object
  readonly on: (event: "data" | "end" | "error", listener: (value?: unknown) => void) => unknown
  readonly off: (event: "data" | "end" | "error", listener: (value?: unknown) => void) => unknown
  readonly destroy: () => unknown
  readonly pause: () => unknown
  readonly resume: () => unknown
}

/** Whether `source` (a platform request's `source` field) is Node's `IncomingMessage`. */
export const isNodeRequest = (source: unknown): source is NodeRequest =>
  typeof source === "object" && source !== null &&
  typeof (source as NodeRequest).readableEnded === "boolean" &&
  typeof (source as NodeRequest).socket === "object" && (source as NodeRequest).socket !== null &&
  typeof (source as NodeRequest).on === "function" && typeof (source as NodeRequest).off === "function" &&
  typeof (source as NodeRequest).destroy === "function" && typeof (source as NodeRequest).pause === "function" &&
  typeof (source as NodeRequest).resume === "function"
