/**
 * Decisions on MCP approval requests, as an Effect service. A remote MCP server's tool (`BuiltInTool.mcp`
 * of the Responses package, with `requireApproval: "always"` or per-tool rules) does not run until the
 * client approves it: the model's response holds an `mcp_approval_request` item (`Part.McpApprovalRequestPart`)
 * and the next request must carry an `mcp_approval_response` (`Part.McpApprovalResponsePart`) approving or
 * denying it, with an optional reason. Source: API reference, `MCPApprovalRequest` / `MCPApprovalResponse`;
 * recorded in `vai-openai-mcp-approval-request.chunks.txt` and, after an approval,
 * `vai-openai-mcp-approved-call.chunks.txt`.
 *
 * `ToolLoop` asks this service, when the context has one, for each request of a step and sends the
 * decisions on the next step (together with the answers of the step's other calls). Without the service
 * the loop does not guess: it ends at the response holding the request and returns it to the caller
 * (`result.response.message.clientCalls`), who appends a `ToolMessage` with the decisions (`respond`) and
 * runs the loop again.
 *
 * ```ts
 * // approve only the read-only tools of the server, deny everything else
 * const Approvals = McpApprovals.byName({ approve: ["search_docs", "read_wiki_structure"] })
 * yield* ToolLoop.generate(prompt, { toolkit }).pipe(Effect.provide(Approvals))
 * ```
 *
 * Approving runs the server's tool with the arguments the model wrote: which tools to approve is the
 * application's decision.
 *
 * @since 0.2.0
 */
import { Part } from "@effect-responses/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * A decision on one request: `approve` it or not, with a `reason` the model reads (optional).
 *
 * @since 0.2.0
 * @category models
 */
export interface Decision {
  readonly approve: boolean
  readonly reason?: string | undefined
}

/**
 * The service: `decide` gives the decision on one request (its `serverLabel`, tool `name` and the JSON
 * text of its `arguments` tell what would run). It cannot fail: a decision it cannot make is a denial
 * with a reason.
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  readonly decide: (request: Part.McpApprovalRequestPart) => Effect.Effect<Decision>
}

/**
 * The service tag.
 *
 * @since 0.2.0
 * @category tags
 */
export class McpApprovals extends Context.Tag("@effect-responses/tools/McpApprovals")<McpApprovals, Service>() {}

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

/**
 * The layer of a service deciding with `decide`, which may use services (`R`, required by the layer and
 * captured when it is built) and may ask anyone (a person at a terminal, a policy service).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = <R = never>(
  decide: (request: Part.McpApprovalRequestPart) => Effect.Effect<Decision, never, R>
): Layer.Layer<McpApprovals, never, R> =>
  Layer.effect(
    McpApprovals,
    Effect.map(Effect.context<R>(), (context) => ({
      decide: (request: Part.McpApprovalRequestPart) => Effect.provide(decide(request), context)
    }))
  )

/**
 * A service that decides by tool name: the tools in `approve` are approved; every other one is denied
 * (also those in `deny`, which states it explicitly), with the reason `tool <name> of MCP server <label> is
 * not approved`. `serverLabel`, when given, limits `approve` to that server's requests. The default is
 * deny: a tool nobody listed never runs.
 *
 * @since 0.2.0
 * @category layers
 */
export const byName = (rules: {
  readonly approve?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
  readonly serverLabel?: string | undefined
}): Layer.Layer<McpApprovals> =>
  layer((request) =>
    Effect.succeed(
      (rules.serverLabel === undefined || rules.serverLabel === request.serverLabel) &&
        (rules.approve ?? []).includes(request.name) && !(rules.deny ?? []).includes(request.name)
        ? { approve: true }
        : { approve: false, reason: `tool ${request.name} of MCP server ${request.serverLabel} is not approved` }
    )
  )

/**
 * A service that approves every request.
 *
 * @since 0.2.0
 * @category layers
 */
export const approveAll: Layer.Layer<McpApprovals> = layer(() => Effect.succeed({ approve: true }))

/**
 * A service that denies every request, with `reason` (default `MCP tool calls are not approved`).
 *
 * @since 0.2.0
 * @category layers
 */
export const denyAll = (reason = "MCP tool calls are not approved"): Layer.Layer<McpApprovals> =>
  layer(() => Effect.succeed({ approve: false, reason }))

// ---------------------------------------------------------------------------------------------------------
// answers
// ---------------------------------------------------------------------------------------------------------

/**
 * The answer to `request` for `decision`: an `McpApprovalResponsePart` naming the request's
 * `approvalRequestId` (an `mcp_approval_response` item on the wire).
 *
 * @since 0.2.0
 * @category answers
 */
export const respond = (request: Part.McpApprovalRequestPart, decision: Decision): Part.McpApprovalResponsePart =>
  new Part.McpApprovalResponsePart({
    approvalRequestId: request.approvalRequestId,
    approve: decision.approve,
    ...(decision.reason === undefined ? {} : { reason: decision.reason })
  })

/**
 * The answers of the service in context to `requests`, in order, asked one after the other (a person
 * answers one question at a time). Each decision is in a span `mcp_approval <name>`.
 *
 * @since 0.2.0
 * @category answers
 */
export const answer = (
  requests: ReadonlyArray<Part.McpApprovalRequestPart>
): Effect.Effect<ReadonlyArray<Part.McpApprovalResponsePart>, never, McpApprovals> =>
  Effect.flatMap(McpApprovals, (service) => answerWith(service, requests))

/**
 * `answer` with a given service.
 *
 * @since 0.2.0
 * @category answers
 */
export const answerWith = (
  service: Service,
  requests: ReadonlyArray<Part.McpApprovalRequestPart>
): Effect.Effect<ReadonlyArray<Part.McpApprovalResponsePart>> =>
  Effect.forEach(requests, (request) =>
    service.decide(request).pipe(
      Effect.map((decision) => respond(request, decision)),
      Effect.withSpan(`mcp_approval ${request.name}`, {
        attributes: {
          "gen_ai.tool.name": request.name,
          "mcp.server.label": request.serverLabel,
          "mcp.approval_request.id": request.approvalRequestId
        }
      })
    ))
