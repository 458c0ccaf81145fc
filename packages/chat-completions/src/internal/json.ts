/**
 * Small readers for JSON values received from the wire: they look at one field and never throw.
 *
 * @internal
 */

/** @internal */
export interface JsonObject {
  readonly [key: string]: unknown
}

/** @internal */
export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
export const stringField = (o: JsonObject, key: string): string | undefined => {
  const value = o[key]
  return typeof value === "string" ? value : undefined
}

/** @internal */
export const numberField = (o: JsonObject, key: string): number | undefined => {
  const value = o[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

/** @internal */
export const objectField = (o: JsonObject, key: string): JsonObject | undefined => {
  const value = o[key]
  return isObject(value) ? value : undefined
}

/** @internal */
export const arrayField = (o: JsonObject, key: string): ReadonlyArray<unknown> | undefined => {
  const value = o[key]
  return Array.isArray(value) ? value : undefined
}
