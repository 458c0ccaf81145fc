/**
 * What the tests running the OpenAI Agents SDK (`@openai/agents`) through the gateway share: the scripted
 * upstream's turns and the `crm` namespace of one function tool.
 */
import { tool, toolNamespace } from "@openai/agents"
import { z } from "zod"
import { completion, finishChunks, type Handler, sse, textChunk, toolChunk } from "@effect-responses/testing/ScriptedServer"

/** A tool call the scripted upstream answers with: its call id, function name and arguments (JSON text). */
export interface ScriptedCall {
  readonly id: string
  readonly name: string
  readonly args: string
}

/** An upstream turn answering with tool calls, streamed or whole as the gateway asked. */
export const callTurn = (...calls: ReadonlyArray<ScriptedCall>): Handler => (request, response, body) =>
  (body.stream === true
    ? sse(...calls.map((call, index) => toolChunk({ index, id: call.id, name: call.name, arguments: call.args })), finishChunks("tool_calls"))
    : completion({
      content: null,
      tool_calls: calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.args } }))
    }, "tool_calls"))(request, response, body)

/** An upstream turn answering with text. */
export const textTurn = (text: string): Handler => (request, response, body) =>
  (body.stream === true ? sse(textChunk(text), finishChunks()) : completion({ content: text }))(request, response, body)

/**
 * The `crm` namespace ("The customer database."): `lookup` a customer by id, which calls `onLookup` with the
 * id and answers `Customer <id>: Ada`; the gateway offers it upstream as `crm__lookup`. Its tool is deferred
 * (`deferLoading`, loaded by a tool search) when `deferLoading` is set.
 */
export const crmNamespace = (onLookup: (id: string) => void, options: { readonly deferLoading?: boolean } = {}) =>
  toolNamespace({
    name: "crm",
    description: "The customer database.",
    tools: [
      tool({
        name: "lookup",
        description: "Looks a customer up by id.",
        parameters: z.object({ id: z.string() }),
        ...(options.deferLoading === true ? { deferLoading: true } : {}),
        execute: async ({ id }) => {
          onLookup(id)
          return `Customer ${id}: Ada`
        }
      })
    ]
  })
