/**
 * The fast path of the Responses decoder: a delta event (`response.output_text.delta`,
 * `response.reasoning_summary_text.delta`, the other four of `Decoder.feed`'s deltas) read without
 * `JSON.parse`.
 *
 * A server writes the delta events of one output item from one template: OpenAI's differ only in
 * `sequence_number`, `delta` and the trailing `obfuscation` string (`{"type":"response.output_text.delta",
 * "sequence_number":401,"item_id":"msg_…","output_index":1,"content_index":0,"delta":"I'm","logprobs":[],
 * "obfuscation":"uGUWqgltWG6mc"}`, fixtures/responses-sse). `JSON.parse` of such an event (about 230
 * characters, three strings and a number the decoder does not read) was most of the decoder's cost: 654 of
 * the 676 events of the recorded o3-mini stream are deltas. A `DeltaTemplate` is learned from a delta event
 * the decoder parsed: its text cut at the values of `sequence_number` (a number), `delta` (the string read)
 * and `obfuscation` (a string not read), the members present. A later event matches when it is that text
 * with a non-negative integer, a string literal, and a string literal without escapes in those places: it
 * is then, as JSON, the learned event with those three values in place, so the decoder reads it as the
 * learned event with that `delta` (it reads neither the sequence number nor the obfuscation string).
 *
 * Whether a template reads that way is not assumed from where the values were found: it is checked by
 * parsing the template with sentinel values in place (`learn`) and comparing the result, member by member,
 * with the learned event with those values in place. An event that does not match (a string with a
 * control character, a number with a sign or a fraction, any other event) goes through `JSON.parse`, so its
 * elements and errors are the decoder's own. A template is learned at each call (each response's first delta
 * event of each output item, summary or content part); one of a shape already checked in this process (the
 * same text but for the holes and the item's id) is not checked again (`shapeOf`).
 *
 * @internal
 */
import { type JsonObject, scanString } from "@effect-responses/wire/Json"

/** Which field of its output item's slot a delta event's text goes to (`Decoder.feed`'s deltas). */
export type DeltaField = "text" | "args" | "input" | "summary" | "reasoningText" | "refusal"

/** What a hole of the template holds: the delta's string (read), a string not read, a number not read. */
type HoleKind = "text" | "string" | "number"

/** The members whose values are the template's holes. */
const HOLES: ReadonlyArray<readonly [key: string, kind: HoleKind]> = [
  ["sequence_number", "number"],
  ["delta", "text"],
  ["obfuscation", "string"]
]

const ZERO = 48
const NINE = 57

/** The end of the non-negative integer (JSON: `0` or no leading zero) starting at `from`, or -1. */
const scanInteger = (text: string, from: number): number => {
  let i = from
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c < ZERO || c > NINE) break
    i++
  }
  if (i === from || (i - from > 1 && text.charCodeAt(from) === ZERO) || i - from > 15) return -1
  return i
}

/** The two sets of sentinels the template is checked with (`checks`): values no escape is needed for. */
const SENTINELS: ReadonlyArray<{ readonly [kind in HoleKind]: string }> = [
  { text: "effect-responses template text", string: "effect-responses template tail", number: "987654321" },
  { text: "", string: "", number: "0" }
]

/**
 * A learned delta event template (see the module's doc): `match` gives the delta's text of an event written
 * from it, or `undefined`.
 */
export class DeltaTemplate {
  constructor(
    /** The event the template was learned from, as `JSON.parse` gave it: what a matching event reads as, but its `delta`. */
    readonly event: JsonObject,
    /** The event's `type`. */
    readonly type: string,
    /** The output item type the decoder reads the event's deltas for. */
    readonly itemType: string,
    readonly field: DeltaField,
    /** The text around the holes: one more than `kinds`. */
    readonly fixed: ReadonlyArray<string>,
    /** What each hole holds, in the order of the text. */
    readonly kinds: ReadonlyArray<HoleKind>
  ) {}

  /** How many events matched. */
  hits = 0

  /** The delta's text when `data` is written from this template, else `undefined`. */
  match(data: string): string | undefined {
    const fixed = this.fixed
    const kinds = this.kinds
    // `slice` and `===`, not `startsWith` (as the Chat Completions decoder's template: `startsWith` against a
    // slice of the body's text costs about ten times as much on Node 20)
    let at = fixed[0]!.length
    if (data.slice(0, at) !== fixed[0]) return undefined
    let text: string | undefined
    for (let hole = 0; hole < kinds.length; hole++) {
      const kind = kinds[hole]
      let end: number
      if (kind === "number") {
        end = scanInteger(data, at)
        if (end === -1) return undefined
      } else {
        const scanned = scanString(data, at)
        if (scanned === -1) return undefined
        end = scanned >> 1
        if (kind === "text") {
          if ((scanned & 1) === 1) {
            try {
              // an escape `JSON.parse` refuses (`\x`, a short `\u`) fails the whole event: left to the decoder
              text = JSON.parse(data.slice(at - 1, end + 1)) as string
            } catch {
              return undefined
            }
          } else {
            text = data.slice(at, end)
          }
        } else if ((scanned & 1) === 1) {
          // a value not read: one without escapes (`obfuscation`'s letters) or the event goes to `JSON.parse`
          return undefined
        }
      }
      const next = fixed[hole + 1]!
      if (data.slice(end, end + next.length) !== next) return undefined
      at = end + next.length
    }
    if (at !== data.length || text === undefined) return undefined
    this.hits++
    return text
  }
}

/** The text of the template with `values` in its holes (strings quoted by the fixed text around them). */
const fill = (fixed: ReadonlyArray<string>, values: ReadonlyArray<string>): string => {
  let text = fixed[0]!
  for (let i = 0; i < values.length; i++) text += values[i]! + fixed[i + 1]!
  return text
}

/**
 * Whether the template parses, with each set of sentinels in place, to the learned event with the
 * sentinels as the values of the holes' members and every other member as it was (compared as JSON text,
 * member order included). Two sets, not one: with a member repeated (`"delta":"a","delta":"…"}`)
 * `JSON.parse` keeps the last value, which is fixed text; one set of sentinels passes when that text
 * happens to equal its sentinel, two different ones cannot both.
 */
const checks = (event: JsonObject, fixed: ReadonlyArray<string>, holes: ReadonlyArray<readonly [string, HoleKind]>) => {
  for (const sentinels of SENTINELS) {
    let parsed: unknown
    try {
      parsed = JSON.parse(fill(fixed, holes.map(([, kind]) => sentinels[kind])))
    } catch {
      return false
    }
    const expected: Record<string, unknown> = { ...event }
    for (const [key, kind] of holes) {
      expected[key] = kind === "number" ? Number(sentinels[kind]) : sentinels[kind]
    }
    if (JSON.stringify(parsed) !== JSON.stringify(expected)) return false
  }
  return true
}

/** Where a hole is in the text learned from: its value's first character and the one after it. */
type Found = readonly [start: number, end: number, key: string, kind: HoleKind]

const ITEM_ID = "\"item_id\":\""

/**
 * What `checks` answers for, as one string: the text learned from with its holes' values replaced by their
 * kinds, and the value of its first `"item_id":"…"` (when written without escapes) by `id`. The delta
 * events of one output item differ from those of another item in the same place of another response only
 * there: the item's id (`msg_…`, `rs_…`). A string literal without escapes in place of another leaves what
 * `JSON.parse` reads of the text unchanged but that value, as the holes' values do (the module's doc), so
 * the check of a template of a shape checked before would give the same answer. (`\0` cannot be in a JSON
 * text outside an escape: the parts cannot run into each other.)
 */
const shapeOf = (data: string, found: ReadonlyArray<Found>): string => {
  let id: readonly [start: number, end: number] | undefined
  const at = data.indexOf(ITEM_ID)
  if (at !== -1) {
    const scanned = scanString(data, at + ITEM_ID.length)
    if (scanned !== -1 && (scanned & 1) === 0) id = [at + ITEM_ID.length, scanned >> 1]
  }
  let shape = ""
  let from = 0
  for (const [start, end, , kind] of found) {
    if (id !== undefined && id[0] >= from && id[1] <= start) {
      shape += `${data.slice(from, id[0])}\0id\0`
      from = id[1]
      id = undefined
    }
    shape += `${data.slice(from, start)}\0${kind}\0`
    from = end
  }
  if (id !== undefined && id[0] >= from) {
    shape += `${data.slice(from, id[0])}\0id\0`
    from = id[1]
  }
  return shape + data.slice(from)
}

/**
 * The shapes (`shapeOf`) of the templates that passed `checks` in this process: a template of one of them
 * is not checked again. The delta events of a response are written from a few templates that recur from one
 * response to the next but for their item ids (the recorded o3-mini stream: five, learned at each call).
 * At most `MAX_SHAPES`, then forgotten and checked again.
 */
const checkedShapes = new Set<string>()
const MAX_SHAPES = 256

/** How many times `checks` ran in this process (for the tests). */
export const checkRuns = { count: 0 }

/**
 * The template of `data`, a delta event the decoder parsed as `event`, or `undefined` when none is found
 * that checks (see the module's doc). The holes are the values of the first `"sequence_number":`,
 * `"delta":"` and `"obfuscation":"` of the text (written without spaces, as OpenAI writes them); the
 * `delta` must be one of them. A template of a shape checked before is not checked again (`shapeOf`).
 */
export const learn = (
  data: string,
  event: JsonObject,
  type: string,
  itemType: string,
  field: DeltaField
): DeltaTemplate | undefined => {
  const found: Array<Found> = []
  for (const [key, kind] of HOLES) {
    const name = kind === "number" ? `"${key}":` : `"${key}":"`
    const at = data.indexOf(name)
    if (at === -1) continue
    const start = at + name.length
    let end: number
    if (kind === "number") {
      end = scanInteger(data, start)
    } else {
      const scanned = scanString(data, start)
      end = scanned === -1 ? -1 : scanned >> 1
    }
    if (end === -1) continue
    found.push([start, end, key, kind])
  }
  if (!found.some(([, , , kind]) => kind === "text")) return undefined
  found.sort((a, b) => a[0] - b[0])
  const fixed: Array<string> = []
  let from = 0
  for (const [start, end] of found) {
    if (start < from) return undefined
    fixed.push(data.slice(from, start))
    from = end
  }
  fixed.push(data.slice(from))
  const holes = found.map(([, , key, kind]) => [key, kind] as const)
  const shape = shapeOf(data, found)
  if (!checkedShapes.has(shape)) {
    checkRuns.count++
    if (!checks(event, fixed, holes)) return undefined
    if (checkedShapes.size >= MAX_SHAPES) checkedShapes.clear()
    checkedShapes.add(shape)
  }
  return new DeltaTemplate(event, type, itemType, field, fixed, holes.map(([, kind]) => kind))
}
