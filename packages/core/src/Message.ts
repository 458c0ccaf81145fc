/**
 * The four kinds of message a conversation holds, told apart by `role`:
 * `{"role":"system","content":"…"}`, `{"role":"user","parts":[…]}`, `{"role":"assistant","parts":[…]}` and
 * `{"role":"tool","results":[…]}` (an example of each: the README's "Formats", "Prompt JSON").
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Part from "./Part.js"

/**
 * Instructions for the model. The first system message of a prompt becomes the Responses `instructions`;
 * later ones become `developer` messages.
 *
 * @since 0.1.0
 * @category messages
 */
export class SystemMessage extends Schema.Class<SystemMessage>("@effect-responses/core/SystemMessage")({
  role: Schema.tag("system"),
  content: Schema.String
}) {}

/**
 * What the user says: text, images and files, in order.
 *
 * @since 0.1.0
 * @category messages
 */
export class UserMessage extends Schema.Class<UserMessage>("@effect-responses/core/UserMessage")({
  role: Schema.tag("user"),
  parts: Schema.Array(Part.UserPart)
}) {}

/**
 * What the model answered: one part per output item, in output order (reasoning, text, tool calls, items of
 * built-in tools). Replayed as it is, it gives back the items the server sent.
 *
 * @since 0.1.0
 * @category messages
 */
export class AssistantMessage extends Schema.Class<AssistantMessage>("@effect-responses/core/AssistantMessage")({
  role: Schema.tag("assistant"),
  parts: Schema.Array(Part.AssistantPart)
}) {
  /**
   * The concatenated text of the message's text parts.
   *
   * @since 0.1.0
   */
  get text(): string {
    let out = ""
    for (const part of this.parts) {
      if (part.type === "text") out += part.text
    }
    return out
  }

  /**
   * The local function calls of the message, in output order.
   *
   * @since 0.1.0
   */
  get toolCalls(): ReadonlyArray<Part.ToolCallPart> {
    return this.parts.filter((part): part is Part.ToolCallPart => part.type === "tool_call")
  }

  /**
   * The calls the client has to answer, in output order: function and custom tool calls, shell,
   * apply_patch and local_shell calls, MCP approval requests, and tool searches the client executes;
   * without those the message answers itself (a hosted shell call followed by its output, see
   * `Part.pendingCalls`).
   *
   * @since 0.2.0
   */
  get clientCalls(): ReadonlyArray<Part.ClientCallPart> {
    return Part.pendingCalls(this.parts)
  }
}

/**
 * What the client sends back for the calls of the previous assistant message: function and custom tool
 * results (`function_call_output` / `custom_tool_call_output` on the Responses wire), outputs of client-run
 * built-in tools (`shell_call_output`, `apply_patch_call_output`, `local_shell_call_output`), a client-run
 * tool search's `tool_search_output`, and MCP approval decisions (`mcp_approval_response`), in order.
 *
 * @since 0.1.0
 * @category messages
 */
export class ToolMessage extends Schema.Class<ToolMessage>("@effect-responses/core/ToolMessage")({
  role: Schema.tag("tool"),
  results: Schema.Array(Part.ToolMessagePart)
}) {
  /**
   * The function and custom tool results of the message (`ToolResultPart`s), in order.
   *
   * @since 0.2.0
   */
  get toolResults(): ReadonlyArray<Part.ToolResultPart> {
    return this.results.filter((part): part is Part.ToolResultPart => part.type === "tool_result")
  }
}

/**
 * Any message.
 *
 * @since 0.1.0
 * @category messages
 */
export const Message = Schema.Union(SystemMessage, UserMessage, AssistantMessage, ToolMessage)

/**
 * @since 0.1.0
 * @category messages
 */
export type Message = typeof Message.Type
