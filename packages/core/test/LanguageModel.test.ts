/**
 * `LanguageModel.mergeTools`: a call's tools merged over a layer's by name, namespace and kind.
 */
import { LanguageModel } from "@effect-responses/core"
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"

// the function tool a recorded answer echoes, as a call declares it
const recorded = (JSON.parse(
  readFileSync(new URL("../../../fixtures/responses-json/pai-gpt4o-two-parallel-function-calls.json", import.meta.url), "utf8")
) as { tools: ReadonlyArray<{ name: string; parameters: Record<string, unknown>; strict: boolean }> }).tools[0]!

const tool = (name: string, description?: string) =>
  new LanguageModel.ToolDefinition({ name, parameters: recorded.parameters, strict: recorded.strict, ...(description === undefined ? {} : { description }) })

describe("LanguageModel.mergeTools", () => {
  it("a call's 10,000 recorded tools over a layer's none are the call's list itself (no copy, no set of 10,000 names); over a layer's tools, merged by name as before", () => {
    const call = Array.from({ length: 10_000 }, (_, i) => tool(`${recorded.name}_${i}`))
    expect(LanguageModel.mergeTools(undefined, call)).toBe(call)
    expect(LanguageModel.mergeTools([], call)).toBe(call)
    const layer = [tool(`${recorded.name}_5`, "the layer's"), tool("layer_only")]
    const merged = LanguageModel.mergeTools(layer, call)!
    expect(merged.map((tool) => tool.name)).toEqual(["layer_only", ...call.map((tool) => tool.name)])
    expect(merged[6]).toBe(call[5])
    expect(LanguageModel.mergeTools(layer, undefined)).toBe(layer)
    expect(LanguageModel.mergeTools(undefined, undefined)).toBeUndefined()
  })

  it("a call's custom apply_patch (Codex's freeform tool) is sent beside a layer's built-in apply_patch; a tool of the same kind and name replaces it", () => {
    const builtIn = new LanguageModel.ClientToolDefinition({ type: "client", name: "apply_patch" })
    const shell = new LanguageModel.ClientToolDefinition({ type: "client", name: "shell" })
    const custom = new LanguageModel.CustomToolDefinition({ type: "custom", name: "apply_patch", description: "a V4A patch as raw text" })
    const merged = LanguageModel.mergeTools([builtIn, shell, tool("lookup")], [custom])!
    expect(merged).toEqual([builtIn, shell, tool("lookup"), custom])
    // the other way round too: a call's built-in beside a layer's custom tool of its name
    expect(LanguageModel.mergeTools([custom], [builtIn])).toEqual([custom, builtIn])
    // one name of the model's: a function replaces a custom tool of its name, a built-in the same built-in
    const builtInAgain = new LanguageModel.ClientToolDefinition({ type: "client", name: "apply_patch" })
    expect(LanguageModel.mergeTools([builtIn, custom, shell], [tool("apply_patch"), builtInAgain])).toEqual([
      shell,
      tool("apply_patch"),
      builtInAgain
    ])
  })
})

describe("LanguageModel.mergeTools, namespaces", () => {
  const crm = { name: "crm", description: "The CRM." }
  const billing = { name: "billing", description: "Billing." }
  const inNamespace = (namespace: typeof crm, name: string, description?: string) =>
    new LanguageModel.ToolDefinition({ ...tool(name, description), namespace })

  it("a call's lookup of namespace crm replaces the layer's lookup of crm only: the top-level lookup and billing's lookup are other tools", () => {
    const layer = [tool("lookup", "top level"), inNamespace(crm, "lookup", "the layer's"), inNamespace(billing, "lookup")]
    const call = [inNamespace(crm, "lookup", "the call's")]
    expect(LanguageModel.mergeTools(layer, call)).toEqual([tool("lookup", "top level"), inNamespace(billing, "lookup"), call[0]])
    // a call's top-level lookup replaces the top-level one only
    expect(LanguageModel.mergeTools(layer, [tool("lookup", "the call's")])).toEqual([
      inNamespace(crm, "lookup", "the layer's"),
      inNamespace(billing, "lookup"),
      tool("lookup", "the call's")
    ])
    // a custom tool of crm replaces crm's function of its name (one name the model calls in crm)
    const custom = new LanguageModel.CustomToolDefinition({ type: "custom", name: "lookup", namespace: crm })
    expect(LanguageModel.mergeTools(layer, [custom])).toEqual([tool("lookup", "top level"), inNamespace(billing, "lookup"), custom])
  })
})
