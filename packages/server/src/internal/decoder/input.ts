/**
 * The input items of a request, one by one, into the prompt's messages (see the table in
 * `ResponsesRequestDecoder`): messages, reasoning, function and custom tool calls and their outputs, tool
 * search calls and outputs, `additional_tools`, `item_reference` to reasoning, built-in tool items.
 *
 * Most items of a long conversation are plain messages, calls and outputs: those are checked by hand
 * (`is…` guards, which accept only what their schema accepts) and only an item that fails a guard goes
 * through its schema, which then names what is wrong. The loop yields to other requests every few
 * milliseconds.
 *
 * @internal
 */
import { Message, Part, UnsafeMessage, UnsafePart } from "@effect-responses/core"
import { Provider } from "@effect-responses/responses"
import { isObject, stringField } from "@effect-responses/wire/Json"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { BuiltinToolsPolicy, FileInput } from "../../ResponsesRequestDecoder.js"
import { makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"
import { capMessage } from "../limits.js"
import { decodeAt, fail, Nullable, type RequestError } from "./common.js"
import { assistantPart, attributes, MessageInput, outputText, systemText, userParts } from "./content.js"
import { APPLY_PATCH, decodeTools, NAMESPACE_SEPARATOR, SHELL, type ToolSet } from "./tools.js"

const CustomToolCallInput = Schema.Struct({
  call_id: Schema.String,
  name: Schema.String,
  namespace: Nullable(Schema.String),
  input: Schema.String,
  id: Nullable(Schema.String)
})

const ToolsItem = Schema.Struct({
  tools: Schema.Array(Schema.Unknown)
})

const ToolSearchCallInput = Schema.Struct({
  call_id: Nullable(Schema.String),
  id: Nullable(Schema.String),
  arguments: Schema.optional(Schema.Unknown)
})

const ToolSearchOutputInput = Schema.Struct({
  call_id: Nullable(Schema.String),
  id: Nullable(Schema.String),
  tools: Schema.Array(Schema.Unknown)
})

const ApplyPatchCallInput = Schema.Struct({
  call_id: Schema.String,
  operation: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  id: Nullable(Schema.String),
  status: Nullable(Schema.String)
})

const ApplyPatchCallOutputInput = Schema.Struct({
  call_id: Schema.String,
  status: Nullable(Schema.String),
  output: Nullable(Schema.String)
})

const ShellCallInput = Schema.Struct({
  call_id: Schema.String,
  action: Schema.Struct({
    commands: Schema.Array(Schema.String),
    timeout_ms: Nullable(Schema.Number),
    max_output_length: Nullable(Schema.Number)
  }),
  id: Nullable(Schema.String)
})

const ShellCallOutputInput = Schema.Struct({
  call_id: Schema.String,
  output: Schema.Array(Schema.Struct({
    stdout: Schema.String,
    stderr: Schema.String,
    outcome: Schema.Struct({ type: Schema.String, exit_code: Nullable(Schema.Number) })
  }))
})

/**
 * What the upstream reads of a `shell_call_output`: per command, its standard output, its standard error
 * (after `stderr:`) and how it ended (`exit code N`, or `timed out`); commands apart by a blank line.
 */
const shellOutputText = (output: typeof ShellCallOutputInput.Type["output"]): string =>
  output.length === 0 ? "No output." : output.map((entry) =>
    [
      entry.stdout,
      entry.stderr === "" ? "" : `stderr:\n${entry.stderr}`,
      entry.outcome.type === "timeout" ? "(timed out)" : `(exit code ${entry.outcome.exit_code ?? "unknown"})`
    ].filter((line) => line !== "").join("\n")
  ).join("\n\n")

const FunctionCallInput = Schema.Struct({
  call_id: Schema.String,
  name: Schema.String,
  namespace: Nullable(Schema.String),
  arguments: Nullable(Schema.String),
  id: Nullable(Schema.String),
  status: Nullable(Schema.String)
})

const FunctionCallOutputInput = Schema.Struct({
  call_id: Schema.String,
  output: Schema.Union(Schema.String, Schema.Array(Schema.Unknown))
})

const ReasoningInput = Schema.Struct({
  id: Nullable(Schema.String),
  status: Nullable(Schema.String),
  encrypted_content: Nullable(Schema.String),
  summary: Nullable(Schema.Array(Schema.Struct({ text: Schema.String }))),
  content: Nullable(Schema.Array(Schema.Struct({ type: Schema.String, text: Nullable(Schema.String) })))
})

// Guards for the common items: `true` only for what the schema above accepts too (fields of other types,
// or missing, fall back to the schema and its error).

const optionalString = (value: unknown): boolean => value === undefined || value === null || typeof value === "string"

const ROLES = new Set<unknown>(["user", "assistant", "system", "developer"])

const isMessageInput = (item: { readonly [key: string]: unknown }): item is typeof MessageInput.Type =>
  ROLES.has(item.role) && (typeof item.content === "string" || Array.isArray(item.content)) && optionalString(item.id) &&
  optionalString(item.status) && optionalString(item.phase)

const isFunctionCallInput = (item: { readonly [key: string]: unknown }): item is typeof FunctionCallInput.Type =>
  typeof item.call_id === "string" && typeof item.name === "string" && optionalString(item.namespace) &&
  optionalString(item.arguments) && optionalString(item.id) && optionalString(item.status)

const isCustomToolCallInput = (item: { readonly [key: string]: unknown }): item is typeof CustomToolCallInput.Type =>
  typeof item.call_id === "string" && typeof item.name === "string" && optionalString(item.namespace) &&
  typeof item.input === "string" && optionalString(item.id)

const isFunctionCallOutputInput = (item: { readonly [key: string]: unknown }): item is typeof FunctionCallOutputInput.Type =>
  typeof item.call_id === "string" && (typeof item.output === "string" || Array.isArray(item.output))

/** Item types built-in tools produce (`web_search_call`, `computer_call_output`, `mcp_call`, …). */
const isBuiltinItem = (type: string): boolean =>
  type.endsWith("_call") || type.endsWith("_call_output") || type.startsWith("mcp_")

/** The function name a client-run tool search is shown to the upstream under. */
export const TOOL_SEARCH = "tool_search" as const

export const decodeInput = (
  input: ReadonlyArray<unknown>,
  toolSet: ToolSet,
  policy: BuiltinToolsPolicy,
  inputFiles: ReadonlyArray<FileInput>,
  messages: Array<Message.Message>
): Effect.Effect<void, RequestError> =>
  Effect.gen(function*() {
    let assistant: Array<Part.AssistantPart> | undefined
    let results: Array<Part.ToolResultPart> | undefined
    const callNames = new Map<string, string>()
    const budget = makeBudget()
    const flush = () => {
      // unvalidated: the parts are instances made here; a Schema class constructor costs microseconds per item
      if (assistant !== undefined) messages.push(UnsafeMessage.assistantMessage(assistant))
      if (results !== undefined) messages.push(UnsafeMessage.toolMessage(results))
      assistant = undefined
      results = undefined
    }
    const assistantParts = () => {
      if (results !== undefined) flush()
      return assistant ??= []
    }
    const flatName = (name: string, namespace: string | null | undefined): string => {
      if (namespace == null || namespace === "") return name
      const flat = `${namespace}${NAMESPACE_SEPARATOR}${name}`
      return toolSet.names.has(flat) || !toolSet.names.has(name) ? flat : name
    }
    const toolResult = (callId: string, output: string) => {
      if (assistant !== undefined) flush()
      results ??= []
      results.push(UnsafePart.toolResultPart(callId, callNames.get(callId) ?? "", output))
    }
    const toolCall = (callId: string, name: string, args: string, attrs: Part.Attributes) => {
      callNames.set(callId, name)
      assistantParts().push(UnsafePart.toolCallPart(callId, name, args, attrs))
    }

    for (let index = 0; index < input.length; index++) {
      if (budget.tick()) yield* yieldToIo
      const item = input[index]
      if (!isObject(item)) {
        return yield* fail("Each input item must be a JSON object.", `input[${index}]`, "invalid_type")
      }
      const type = stringField(item, "type") ?? (item.role !== undefined ? "message" : undefined)
      switch (type) {
        case "message": {
          const message = isMessageInput(item) ? item : yield* decodeAt(MessageInput, item, ["input", index])
          if (message.role === "system" || message.role === "developer") {
            flush()
            messages.push(new Message.SystemMessage({ content: yield* systemText(message.content, index) }))
          } else if (message.role === "user") {
            flush()
            messages.push(
              new Message.UserMessage({ role: "user", parts: yield* userParts(message.content, index, inputFiles) }, true)
            )
          } else {
            const part = yield* assistantPart(message, index)
            // two assistant messages in a row stay two messages (Chat Completions would join their texts)
            if (assistant?.some((p) => p.type === "text" || p.type === "refusal")) flush()
            assistantParts().push(part)
          }
          break
        }
        case "reasoning": {
          const reasoning = yield* decodeAt(ReasoningInput, item, ["input", index])
          const summary = (reasoning.summary ?? []).map((entry) => entry.text)
          let text: string | undefined
          for (const content of reasoning.content ?? []) {
            if (content.type === "reasoning_text" && typeof content.text === "string") {
              text = text === undefined ? content.text : text + content.text
            }
          }
          if (summary.length === 0 && text === undefined) {
            yield* Effect.logDebug(
              `input[${index}]: reasoning item dropped: it holds only encrypted content, which no upstream here can read`
            )
            break
          }
          assistantParts().push(
            new Part.ReasoningPart({
              summary,
              ...(text === undefined ? {} : { text }),
              ...(reasoning.encrypted_content == null ? {} : {
                payload: new Part.OpaquePayload({
                  provider: Provider.PROVIDER,
                  kind: Provider.ENCRYPTED_CONTENT,
                  data: reasoning.encrypted_content
                })
              }),
              attributes: attributes(reasoning)
            })
          )
          break
        }
        case "function_call": {
          const call = isFunctionCallInput(item) ? item : yield* decodeAt(FunctionCallInput, item, ["input", index])
          toolCall(call.call_id, flatName(call.name, call.namespace), call.arguments || "{}", attributes({ id: call.id, status: call.status }))
          break
        }
        case "custom_tool_call": {
          // presented upstream as a function with one string parameter, `input` (see `decodeTools`)
          const call = isCustomToolCallInput(item) ? item : yield* decodeAt(CustomToolCallInput, item, ["input", index])
          toolCall(call.call_id, flatName(call.name, call.namespace), JSON.stringify({ input: call.input }), attributes({ id: call.id }))
          break
        }
        case "function_call_output":
        case "custom_tool_call_output": {
          const output = isFunctionCallOutputInput(item) ? item : yield* decodeAt(FunctionCallOutputInput, item, ["input", index])
          toolResult(output.call_id, typeof output.output === "string" ? output.output : yield* outputText(output.output, index))
          break
        }
        case "additional_tools": {
          const added = yield* decodeAt(ToolsItem, item, ["input", index])
          yield* decodeTools(added.tools, ["input", index, "tools"], policy, toolSet)
          break
        }
        case "tool_search_call": {
          // the client ran a tool search: the upstream reads it as a call of a `tool_search` function
          const call = yield* decodeAt(ToolSearchCallInput, item, ["input", index])
          const callId = call.call_id ?? call.id ?? `tool_search_${index}`
          const args = call.arguments === undefined ? "{}" : typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)
          toolCall(callId, TOOL_SEARCH, args, attributes({ id: call.id }))
          break
        }
        case "tool_search_output": {
          // its tools join the tool list; the upstream reads the names it loaded as the search's result
          const output = yield* decodeAt(ToolSearchOutputInput, item, ["input", index])
          const before = toolSet.tools.length
          yield* decodeTools(output.tools, ["input", index, "tools"], policy, toolSet)
          const loaded = toolSet.tools.slice(before).map((tool) => tool.name)
          const callId = output.call_id ?? output.id ?? `tool_search_${index}`
          if (!callNames.has(callId)) toolCall(callId, TOOL_SEARCH, "{}", {})
          toolResult(callId, loaded.length === 0 ? "No tools loaded." : `Tools loaded: ${loaded.join(", ")}.`)
          break
        }
        case "apply_patch_call": {
          // the client-run apply_patch tool, presented upstream as a function taking the operation
          const call = yield* decodeAt(ApplyPatchCallInput, item, ["input", index])
          toolCall(call.call_id, toolSet.applyPatch ?? APPLY_PATCH, JSON.stringify(call.operation), attributes({ id: call.id }))
          break
        }
        case "apply_patch_call_output": {
          const output = yield* decodeAt(ApplyPatchCallOutputInput, item, ["input", index])
          const log = output.output ?? ""
          toolResult(
            output.call_id,
            output.status === "failed" ? `The patch was not applied.${log === "" ? "" : ` ${log}`}` : log === "" ? "The patch was applied." : log
          )
          break
        }
        case "shell_call": {
          // the client-run shell tool, presented upstream as a function taking the action
          const call = yield* decodeAt(ShellCallInput, item, ["input", index])
          const { commands, max_output_length, timeout_ms } = call.action
          const args = {
            commands,
            ...(timeout_ms === undefined || timeout_ms === null ? {} : { timeout_ms }),
            ...(max_output_length === undefined || max_output_length === null ? {} : { max_output_length })
          }
          toolCall(call.call_id, toolSet.shell ?? SHELL, JSON.stringify(args), attributes({ id: call.id }))
          break
        }
        case "shell_call_output": {
          const output = yield* decodeAt(ShellCallOutputInput, item, ["input", index])
          toolResult(output.call_id, shellOutputText(output.output))
          break
        }
        case "item_reference": {
          const id = stringField(item, "id")
          if (id !== undefined && id.startsWith("rs_")) {
            // reasoning is never sent upstream as encrypted content, so a reference to it carries nothing
            yield* Effect.logDebug(`input[${index}]: item_reference to reasoning item ${id} dropped: no upstream here reads stored reasoning`)
            break
          }
          return yield* fail(
            `This gateway does not store responses and cannot resolve the item_reference to ${
              id === undefined ? "an item without an id" : `'${capMessage(id, 100)}'`
            }: send the item itself.`,
            `input[${index}].id`,
            "unsupported_value"
          )
        }
        default: {
          if (type !== undefined && isBuiltinItem(type)) {
            if (policy === "reject") {
              return yield* fail(
                `The built-in tool item ${type} cannot be sent through this gateway.`,
                `input[${index}]`,
                "unsupported_value"
              )
            }
            yield* Effect.logWarning(`input[${index}]: ${type} item dropped: the upstream cannot read built-in tool items`)
            break
          }
          return yield* fail(
            `Unsupported input item type: ${String(type)}.`,
            `input[${index}].type`,
            "unsupported_value"
          )
        }
      }
    }
    flush()
  })
