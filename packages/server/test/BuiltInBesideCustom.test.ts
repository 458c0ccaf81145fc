/**
 * A custom (freeform) `apply_patch` and the client-run built-in `apply_patch` declared together, as a
 * Codex-style agent offers them (the setup packages/tools/README.md recommends): the upstream is offered
 * both, whatever their order, the custom tool as `apply_patch` (one string parameter, `input`) and the
 * built-in as `apply_patch_operation` (the operation), so that a whole patch reaches the freeform tool and an
 * operation the built-in; the same when one of them comes in an `additional_tools` input item, before or
 * after the conversation (the built-in's calls read before the custom tool is declared go upstream under the
 * built-in's name). Driven with the official `openai` SDK through the gateway to a scripted loopback
 * upstream; tool and item shapes follow the API reference (`CustomToolParam`, `ApplyPatchToolParam`,
 * `ApplyPatchToolCall`); ids are invented.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import OpenAI from "openai"
import { completion } from "@effect-responses/testing/ScriptedServer"
import { withScriptedGateway } from "./scriptedUpstream.js"
import type { WireJson as Json } from "./utils.js"

const CUSTOM = { type: "custom", name: "apply_patch", description: "Edit files with a whole patch." }
const BUILT_IN = { type: "apply_patch" }
const PATCH = "*** Begin Patch\n*** Add File: g/free.txt\n+free\n*** End Patch\n"

const upstreamCalls = completion({
  content: null,
  tool_calls: [
    { id: "call_p", type: "function", function: { name: "apply_patch", arguments: JSON.stringify({ input: PATCH }) } },
    {
      id: "call_o",
      type: "function",
      function: { name: "apply_patch_operation", arguments: "{\"type\":\"create_file\",\"path\":\"g/builtin.txt\",\"diff\":\"+builtin\\n\"}" }
    },
    { id: "call_x", type: "function", function: { name: "apply_patch_operation", arguments: "{\"type\":\"update_file\",\"path\":\"x.txt\"}" } }
  ]
}, "tool_calls")

/**
 * Where the two tools are declared: `tools`, and an `additional_tools` item (API reference,
 * `AdditionalToolsItemParam`), which comes before the conversation (`start`) or after the first turn's calls
 * and outputs (`end`: the built-in's calls are read before the custom tool is declared).
 */
const PLACEMENTS: ReadonlyArray<{
  readonly what: string
  readonly tools: ReadonlyArray<unknown>
  readonly added: ReadonlyArray<unknown>
  readonly at: "start" | "end"
}> = [
  { what: "the built-in in tools, the custom in additional_tools before the conversation", tools: [BUILT_IN], added: [CUSTOM], at: "start" },
  { what: "the built-in in tools, the custom in additional_tools after the calls", tools: [BUILT_IN], added: [CUSTOM], at: "end" },
  { what: "the custom in tools, the built-in in additional_tools before the conversation", tools: [CUSTOM], added: [BUILT_IN], at: "start" },
  { what: "the custom in tools, the built-in in additional_tools after the calls", tools: [CUSTOM], added: [BUILT_IN], at: "end" }
]

describe("a custom apply_patch beside the built-in apply_patch", () => {
  for (const { added, at, tools, what } of PLACEMENTS) {
    it.effect(`${what}: both are offered and mapped back, as when both are in tools`, () =>
      withScriptedGateway([upstreamCalls, completion({ content: "done" })], {}, (url, received) =>
        Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const item = { type: "additional_tools", role: "developer", tools: added }
          const user = { role: "user", content: "Add two files." }
          const first = await client.responses.create({ model: "m", tools, input: at === "start" ? [item, user] : [user, item] } as never)
          const offered = (received[0]!.body.tools as ReadonlyArray<Json>).map((tool) => tool.function)
          expect(offered.map((tool) => tool.name).sort()).toEqual(["apply_patch", "apply_patch_operation"])
          expect(offered.find((tool) => tool.name === "apply_patch").parameters.required).toEqual(["input"])
          expect(offered.find((tool) => tool.name === "apply_patch_operation").parameters.required).toEqual(["type", "path"])
          const output = first.output as ReadonlyArray<Json>
          expect(output[0]).toMatchObject({ type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: PATCH })
          expect(output[1]).toMatchObject({ type: "apply_patch_call", call_id: "call_o", operation: { type: "create_file", path: "g/builtin.txt" } })
          expect(output[2]).toMatchObject({ type: "function_call", call_id: "call_x", name: "apply_patch" })
          // the next turn: with the item after the calls, the built-in's calls are read before the custom tool
          // is declared, and still go upstream under the built-in's name, their outputs too
          const turn = [
            user,
            ...output,
            { type: "custom_tool_call_output", call_id: "call_p", output: "Done!" },
            { type: "apply_patch_call_output", call_id: "call_o", status: "completed" },
            { type: "function_call_output", call_id: "call_x", output: "{\"error\":\"diff is missing\"}" }
          ]
          const next = await client.responses.create({
            model: "m",
            tools,
            tool_choice: { type: "apply_patch" },
            input: at === "start" ? [item, ...turn] : [...turn, item]
          } as never)
          expect(next.output_text).toBe("done")
          const body = received[1]!.body as Json
          expect((body.tools as ReadonlyArray<Json>).map((tool) => tool.function.name).sort()).toEqual(["apply_patch", "apply_patch_operation"])
          expect(body.tool_choice).toEqual({ type: "function", function: { name: "apply_patch_operation" } })
          const messages = body.messages as ReadonlyArray<Json>
          const calls = messages[1]!.tool_calls.map((call: Json) => [call.id, call.function.name])
          expect(calls).toEqual([["call_p", "apply_patch"], ["call_o", "apply_patch_operation"], ["call_x", "apply_patch_operation"]])
          expect(messages.filter((message) => message.role === "tool").map((message) => message.tool_call_id)).toEqual(["call_p", "call_o", "call_x"])
        })))
  }


  for (const tools of [[CUSTOM, BUILT_IN], [BUILT_IN, CUSTOM]]) {
    const order = tools[0] === CUSTOM ? "custom first" : "built-in first"
    it.effect(`both are offered (${order}); a patch comes back as the custom call, an operation as the apply_patch_call`, () =>
      withScriptedGateway([upstreamCalls, completion({ content: "done" })], {}, (url, received) =>
        Effect.promise(async () => {
          const client = new OpenAI({ baseURL: url, apiKey: "k", maxRetries: 0 })
          const first = await client.responses.create({ model: "m", tools, input: "Add two files." } as never)
          const offered = (received[0]!.body.tools as ReadonlyArray<Json>).map((tool) => tool.function)
          expect(offered.map((tool) => tool.name).sort()).toEqual(["apply_patch", "apply_patch_operation"])
          expect(offered.find((tool) => tool.name === "apply_patch").parameters.required).toEqual(["input"])
          expect(offered.find((tool) => tool.name === "apply_patch_operation").parameters.required).toEqual(["type", "path"])
          const output = first.output as ReadonlyArray<Json>
          expect(output[0]).toMatchObject({ type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: PATCH })
          expect(output[1]).toMatchObject({
            type: "apply_patch_call",
            call_id: "call_o",
            operation: { type: "create_file", path: "g/builtin.txt", diff: "+builtin\n" }
          })
          // no operation: the function call it was, under the built-in's name
          expect(output[2]).toMatchObject({ type: "function_call", call_id: "call_x", name: "apply_patch" })
          // the next turn: each call goes upstream under the name it was offered (the function call of the
          // built-in's name as the built-in's: the custom tool's calls are custom tool calls), a forced built-in too
          const next = await client.responses.create({
            model: "m",
            tools,
            tool_choice: { type: "apply_patch" },
            input: [
              { role: "user", content: "Add two files." },
              ...output,
              { type: "custom_tool_call_output", call_id: "call_p", output: "Done!" },
              { type: "apply_patch_call_output", call_id: "call_o", status: "completed" },
              { type: "function_call_output", call_id: "call_x", output: "{\"error\":\"diff is missing\"}" }
            ]
          } as never)
          expect(next.output_text).toBe("done")
          const body = received[1]!.body as Json
          expect(body.tool_choice).toEqual({ type: "function", function: { name: "apply_patch_operation" } })
          const calls = (body.messages as ReadonlyArray<Json>)[1]!.tool_calls.map((call: Json) => [call.id, call.function.name])
          expect(calls).toEqual([["call_p", "apply_patch"], ["call_o", "apply_patch_operation"], ["call_x", "apply_patch_operation"]])
        })))
  }
})
