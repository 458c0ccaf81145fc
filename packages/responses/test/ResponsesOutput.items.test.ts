/**
 * `decodeOutputItem` reads the common output items (`reasoning`, `message`, `function_call`,
 * `custom_tool_call`) without their schemas when their fields plainly match; every recorded output item,
 * and each with one field of the wrong type, decodes to the same part or the same error as through the
 * schemas (reached with the item's fields on an object of another prototype, which the fast path leaves to
 * them).
 */
import { ResponsesOutput } from "@effect-responses/responses"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Equal from "effect/Equal"
import * as Utils from "effect/Utils"
import { readdirSync } from "node:fs"
import { readFixture, fixturePath } from "./fixtures.js"

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** Every output item of the recorded bodies and streams: done and added items, and terminal snapshots. */
const recordedItems = (): ReadonlyArray<Json> => {
  const items: Array<Json> = []
  const fromResponse = (response: unknown) => {
    if (isObject(response) && Array.isArray(response.output)) items.push(...response.output.filter(isObject))
  }
  for (const file of readdirSync(fixturePath("responses-json")).filter((file) => file.endsWith(".json"))) {
    fromResponse(JSON.parse(readFixture(`responses-json/${file}`)))
  }
  for (const file of readdirSync(fixturePath("responses-sse"))) {
    for (const line of readFixture(`responses-sse/${file}`).split("\n")) {
      const text = line.startsWith("data:") ? line.slice(5).trim() : line.trim()
      if (!text.startsWith("{")) continue
      const event: unknown = JSON.parse(text)
      if (!isObject(event)) continue
      if (isObject(event.item)) items.push(event.item)
      fromResponse(event.response)
    }
  }
  return items
}

/** The item's fields on an object whose prototype is not `Object.prototype`: decoded by the schemas. */
const throughSchema = (item: Json): Json => Object.assign(Object.create({ from: "elsewhere" }) as Json, item)

/** The item, and the item with each field (and each field of its array elements) of another type or absent. */
const variants = (item: Json): ReadonlyArray<Json> => {
  const out: Array<Json> = [item, { ...item, phase: "commentary" }]
  for (const key of Object.keys(item)) {
    if (key === "type") continue
    const { [key]: _, ...without } = item
    out.push(without, { ...item, [key]: 42 }, { ...item, [key]: null }, { ...item, [key]: {} })
    const value = item[key]
    if (Array.isArray(value)) {
      value.forEach((element, index) => {
        const at = (replacement: unknown) => ({ ...item, [key]: value.map((e, i) => i === index ? replacement : e) })
        out.push(at(42), at(Object.assign(Object.create({ inherited: true }), element)))
        if (isObject(element)) {
          for (const field of Object.keys(element)) out.push(at({ ...element, [field]: 42 }), at({ ...element, [field]: null }))
        }
      })
    }
  }
  return out
}

const COMMON = new Set(["reasoning", "message", "function_call", "custom_tool_call"])

describe("ResponsesOutput.decodeOutputItem without schemas", () => {
  it("gives the schemas' part or error for every recorded common item and its variants", () => {
    const items = recordedItems().filter((item) => COMMON.has(String(item.type)))
    for (const type of COMMON) assert.isTrue(items.some((item) => item.type === type), `a recorded ${type} item`)
    let checked = 0
    for (const recorded of items) {
      for (const item of variants(recorded)) {
        const fast = ResponsesOutput.decodeOutputItem(item)
        const slow = ResponsesOutput.decodeOutputItem(throughSchema(item))
        const label = JSON.stringify(item).slice(0, 300)
        if (Either.isLeft(slow)) {
          assert.isTrue(Either.isLeft(fast), label)
          if (Either.isLeft(fast)) assert.strictEqual(fast.left.description, slow.left.description, label)
          continue
        }
        assert.isTrue(Either.isRight(fast), label)
        if (Either.isLeft(fast)) continue
        assert.strictEqual(fast.right.constructor, slow.right.constructor, label)
        assert.isTrue(Utils.structuralRegion(() => Equal.equals(fast.right, slow.right)), label)
        assert.strictEqual(JSON.stringify(fast.right), JSON.stringify(slow.right), label)
        assert.deepStrictEqual(fast.right, slow.right, label)
        checked++
      }
    }
    assert.isAbove(checked, 100)
  })

  it("a function call or reasoning item keeps no phase, as its schema drops it", () => {
    const call = ResponsesOutput.decodeOutputItem({
      type: "function_call",
      id: "fc_1",
      status: "completed",
      call_id: "call_1",
      name: "f",
      arguments: "{}",
      phase: "commentary"
    })
    assert.isTrue(Either.isRight(call))
    if (Either.isRight(call)) assert.deepStrictEqual(call.right.attributes, { itemId: "fc_1", status: "completed" })
  })
})
