/**
 * A set of tools offered to the model together, and the `Layer` of their handlers.
 *
 * ```ts
 * const MathToolkit = Toolkit.make(Calculator)
 * const MathToolkitLive = MathToolkit.toLayer({
 *   calculator: ({ a, b, op }) => Effect.succeed(op === "add" ? a + b : a * b)
 * })
 * ```
 *
 * `toLayer` takes exactly one handler per tool, by tool key (`Tool.Key`: the tool name, or
 * `<namespace>.<name>` for a tool in a namespace): a missing, misnamed or extra handler is a compile error. A handler may use any service; the layer then requires it. `toLayer` also takes an
 * `Effect` that builds the handlers (opening a connection, reading a configuration), run once in the
 * layer's scope; `of` gives the record it returns the handlers' types (a record returned from the
 * generator is not typed by `toLayer`: under `strict`, `({ query })` would be an implicit `any`, TS7031):
 *
 * ```ts
 * const SearchToolkitLive = SearchToolkit.toLayer(Effect.gen(function*() {
 *   const index = yield* SearchIndex
 *   return SearchToolkit.of({ search: ({ query }) => index.search(query) })
 * }))
 * ```
 *
 * Custom tools (`Tool.custom`) and the client-run built-ins (`Tool.shell`, `Tool.applyPatch`,
 * `Tool.localShell`) go in the same toolkit; their handlers take the raw input text and the typed call part:
 *
 * ```ts
 * const Agent = Toolkit.make(Evaluate, Tool.shell, Tool.applyPatch)
 * const AgentLive = Agent.toLayer({
 *   evaluate: (input) => Effect.succeed(String(evaluateExpression(input))),
 *   shell: Shell.handler({ cwd: workspace }),
 *   apply_patch: ApplyPatch.handler({ root: workspace })
 * })
 * ```
 *
 * A toolkit may hold a client-run built-in and a function or custom tool of the same name, as Codex's
 * freeform `apply_patch` (a custom tool whose input is a whole V4A patch) beside the built-in `apply_patch`:
 * a call reaches the tool of its name and kind (a `custom_tool_call` the custom tool, an `apply_patch_call`
 * the built-in), and the built-in's handler is keyed `built-in:<name>` (`Tool.HandlerKey`):
 *
 * ```ts
 * const FreeformApplyPatch = Tool.custom("apply_patch", { description: "…", failure: Schema.String })
 * const Patches = Toolkit.make(FreeformApplyPatch, Tool.applyPatch)
 * const PatchesLive = Patches.toLayer({
 *   apply_patch: (input) => ApplyPatch.applyPatchText(workspace, input).pipe(Effect.mapError((e) => e.message)),
 *   "built-in:apply_patch": ApplyPatch.handler({ root: workspace })
 * })
 * ```
 *
 * Tools made with a `namespace` are grouped on the Responses wire (one `{"type":"namespace",…}` tool per
 * namespace) and keyed `<namespace>.<name>`; a tool with `deferLoading` waits for a tool search
 * (`BuiltInTool.toolSearch` in the Responses layer's `builtInTools`) to load it:
 *
 * ```ts
 * const Crm = Tool.namespace("crm", "The customer database.")
 * const FindCustomer = Tool.make("find_customer", {
 *   description: "Finds a customer by email.",
 *   parameters: { email: Schema.String },
 *   success: Schema.String,
 *   namespace: Crm,
 *   deferLoading: true
 * })
 * const CrmToolkitLive = Toolkit.make(FindCustomer).toLayer({
 *   "crm.find_customer": ({ email }) => Effect.succeed(`customer ${email}`)
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { LanguageModel } from "@effect-responses/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import * as Tool from "./Tool.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@effect-responses/tools/Toolkit")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * A handler of tool `T`: takes the decoded parameters and the call context, succeeds with the tool's
 * success type, fails only with its failure type, and may require services `R`.
 *
 * @since 0.1.0
 * @category handlers
 */
export type HandlerFunction<T extends Tool.Any, R> = (
  params: Tool.Parameters<T>,
  context: Tool.CallContext
) => Effect.Effect<Tool.Success<T>, Tool.Failure<T>, R>

/**
 * The record of handlers `toLayer` takes: one entry per tool, keyed by the tool's `Tool.HandlerKey` (its
 * name, or `<namespace>.<name>`; `built-in:<name>` for a client-run built-in beside a function or custom
 * tool of its name), each a `HandlerFunction` of that tool. Every key is required.
 *
 * @since 0.1.0
 * @category handlers
 */
export type Handlers<Tools extends Tool.Any> = {
  readonly [T in Tools as Tool.HandlerKey<T, Tools>]: HandlerFunction<T, unknown>
}

/**
 * `H` when it names no tool outside `Tools`; otherwise a type no handler record satisfies. `toLayer` takes
 * `ExactHandlers<Tools, H>`, which is what makes an extra (e.g. misspelt) handler a compile error.
 *
 * @since 0.1.0
 * @category handlers
 */
export type ExactHandlers<Tools extends Tool.Any, H> = H & {
  readonly [K in Exclude<keyof H, Tool.HandlerKey<Tools, Tools>>]: never
}

/**
 * The services the handlers of a record require together.
 *
 * @since 0.1.0
 * @category handlers
 */
export type HandlersRequirements<H> = {
  [K in keyof H]: H[K] extends (...args: Array<never>) => Effect.Effect<infer _A, infer _E, infer R> ? R : never
}[keyof H]

/**
 * A toolkit.
 *
 * - `tools`: the tools by key (`Tool.HandlerKey`: the name, or `<namespace>.<name>`; `built-in:<name>` for
 *   a client-run built-in beside a function or custom tool of its name);
 * - `names`: the tool keys, in the order given to `make`;
 * - `definitions`: the tools as the model sees them (`Tool.definition`), in that order;
 * - `find(name, namespace?, kind?)`: the tool a call of `name` (in `namespace`, when the call has one; of
 *   `kind`, when given) means, if any (see `resolve`; name and namespace come from the model and may be
 *   anything);
 * - `keyOf(tool)`: the key of a tool of the toolkit (`Tool.handlerKey`), which its handler's service has;
 * - `toLayer(handlers)`: the layer providing one `Tool.Handler` service per tool; `toLayer(effect)`: the
 *   same from an `Effect` that builds the handlers;
 * - `of(handlers)`: the handler record itself, typed (for an `Effect` that builds the handlers to return).
 *
 * @since 0.1.0
 * @category models
 */
export interface Toolkit<Tools extends Tool.Any> {
  readonly [TypeId]: TypeId
  readonly tools: { readonly [T in Tools as Tool.HandlerKey<T, Tools>]: T }
  readonly names: ReadonlyArray<Tool.HandlerKey<Tools, Tools>>
  readonly definitions: ReadonlyArray<LanguageModel.AnyToolDefinition>
  readonly find: (name: string, namespace?: string | undefined, kind?: Tool.Kind | undefined) => Tools | undefined
  /**
   * The key of `tool`'s handler in this toolkit (`Tool.handlerKey`), the one its `Tool.Handler` service is
   * tagged with.
   *
   * @since 0.2.0
   */
  readonly keyOf: (tool: Tool.Any) => string
  /**
   * The layer of the toolkit's handlers. `handlers` must have exactly one entry per tool key. The
   * services the handlers use are taken from the context the layer is built in, so the layer requires
   * them; a handler call still runs in its caller's span.
   */
  /**
   * `handlers`, unchanged: a handler record typed as `toLayer` types one (each handler's parameters from its
   * tool, exactly one handler per tool key), for an `Effect` given to `toLayer` to return. TypeScript does
   * not type a record returned from `Effect.gen` by the `toLayer` it is passed to, so without `of` a
   * handler's parameters there are an implicit `any` (TS7031 under `strict`), as with `@effect/ai`'s
   * `Toolkit.of`. The services the handlers use stay in the record's type, so `toLayer` requires them.
   *
   * ```ts
   * SearchToolkit.toLayer(Effect.gen(function*() {
   *   const index = yield* SearchIndex
   *   return SearchToolkit.of({ search: ({ query }) => index.search(query) })
   * }))
   * ```
   *
   * @since 0.2.0
   */
  readonly of: <H extends Handlers<Tools>>(handlers: ExactHandlers<Tools, H>) => H
  readonly toLayer: {
    <H extends Handlers<Tools>>(
      handlers: ExactHandlers<Tools, H>
    ): Layer.Layer<Tool.HandlersFor<Tools>, never, HandlersRequirements<H>>
    /**
     * The layer of the handlers `build` makes, run once when the layer is built, in the layer's scope (a
     * resource it acquires is released with the layer). The layer fails with what `build` fails with and
     * requires what `build` and the handlers require (`Scope` excepted). Every tool needs a handler (a
     * missing one is a compile error); entries keyed after no tool are ignored.
     */
    <H extends Handlers<Tools>, E, R>(
      build: Effect.Effect<H, E, R>
    ): Layer.Layer<Tool.HandlersFor<Tools>, E, Exclude<R, Scope.Scope> | HandlersRequirements<H>>
  }
}

/**
 * Any toolkit, seen through what code that handles any toolkit needs (its tools by name and kind, their
 * handler keys, its definitions). Every `Toolkit` is one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any {
  readonly [TypeId]: TypeId
  readonly names: ReadonlyArray<string>
  readonly definitions: ReadonlyArray<LanguageModel.AnyToolDefinition>
  readonly find: (name: string, namespace?: string | undefined, kind?: Tool.Kind | undefined) => Tool.Any | undefined
  /**
   * The key of `tool`'s handler in this toolkit (`Tool.handlerKey`), the one its `Tool.Handler` service is
   * tagged with.
   *
   * @since 0.2.0
   */
  readonly keyOf: (tool: Tool.Any) => string
}

/**
 * The tools of a toolkit type.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Tools<T> = T extends Toolkit<infer Tools> ? Tools : never

/**
 * The handler record a toolkit's `toLayer` takes.
 *
 * @since 0.1.0
 * @category type-level
 */
export type HandlersOf<T> = Handlers<Tools<T>>

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

type ErasedHandler = (params: unknown, context: Tool.CallContext) => Effect.Effect<unknown, unknown>

/**
 * The tool of `tools` a call of `name` means, given the call's `namespace` (Responses `function_call`
 * items carry one for a tool in a namespace) and, when given, the `kind` of tool the call is for (a
 * `function_call` a function tool, a `custom_tool_call` a custom tool, a `shell_call`, `apply_patch_call` or
 * `local_shell_call` a client-run built-in): only the tools of that kind are looked at, so a call of
 * `apply_patch` reaches the custom tool or the built-in of that name as its item type says. Without `kind`,
 * of two tools that match, the first in `tools` is the one:
 *
 * - with a namespace: the tool `name` of that namespace; failing that, when `namespace` equals `name` and no
 *   tool is in a namespace of that name, the tool `name` outside any namespace (OpenAI's tool search loads a
 *   deferred tool that is in no namespace as a namespace of its own name: its call comes back with
 *   `namespace` equal to `name`, recorded in `vai-openai-tool-search.chunks.txt`);
 * - without one: the tool `name` outside any namespace; failing that, the one tool called `name` in some
 *   namespace (a provider without namespaces, Chat Completions, calls it by its name alone), unless
 *   several namespaces have one.
 *
 * @since 0.2.0
 * @category lookup
 */
export const resolve = <T extends Tool.Any>(
  tools: ReadonlyArray<T>,
  name: string,
  namespace?: string | undefined,
  kind?: Tool.Kind | undefined
): T | undefined => {
  const named = (tool: T) => tool.name === name && (kind === undefined || tool.kind === kind)
  if (namespace !== undefined) {
    const inNamespace = tools.find((tool) => named(tool) && tool.namespace?.name === namespace)
    if (inNamespace !== undefined) return inNamespace
    if (namespace !== name || tools.some((tool) => tool.namespace?.name === namespace)) return undefined
  }
  const plain = tools.find((tool) => named(tool) && tool.namespace === undefined)
  if (plain !== undefined || namespace !== undefined) return plain
  const namespaced = tools.filter(named)
  return namespaced.length === 1 ? namespaced[0] : undefined
}

/**
 * A toolkit of `tools`. Tool keys (`Tool.HandlerKey`: the name, or `<namespace>.<name>`; a client-run
 * built-in beside a function or custom tool of its name is keyed `built-in:<name>`) must be distinct: a
 * repeated key is a programming error and throws, as does one namespace name given two descriptions.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Tools extends ReadonlyArray<Tool.Any>>(...tools: Tools): Toolkit<Tools[number]> => {
  const byKey = new Map<string, Tools[number]>()
  const keys = new Map<Tool.Any, string>()
  const namespaces = new Map<string, string>()
  for (const tool of tools) {
    const key = Tool.handlerKey(tool, tools)
    if (byKey.has(key)) {
      throw new Error(
        tool.namespace === undefined
          ? `Toolkit.make: two tools are named "${tool.name}"`
          : `Toolkit.make: two tools are named "${tool.name}" in namespace "${tool.namespace.name}"`
      )
    }
    byKey.set(key, tool)
    keys.set(tool, key)
    if (tool.namespace !== undefined) {
      const description = namespaces.get(tool.namespace.name)
      if (description !== undefined && description !== tool.namespace.description) {
        throw new Error(`Toolkit.make: namespace "${tool.namespace.name}" is given two descriptions`)
      }
      namespaces.set(tool.namespace.name, tool.namespace.description)
    }
  }
  const handlersContext = (handlers: Readonly<Record<string, ErasedHandler>>) =>
    Effect.map(Effect.context<never>(), (captured) => {
      // The handler runs in its caller's span, not in the span the layer happened to be built in.
      const services = Context.omit(Tracer.ParentSpan)(captured)
      let context = Context.empty()
      for (const key of keys.values()) {
        const handler = handlers[key]!
        const service: Tool.Handler<string> = {
          name: key,
          handle: (params, callContext) =>
            Effect.mapInputContext(
              handler(params, callContext),
              (input: Context.Context<never>) => Context.merge(input, services)
            )
        }
        context = Context.add(context, Tool.handlerTag(key), service)
      }
      return context
    })
  const toLayer = (
    handlers: Readonly<Record<string, ErasedHandler>> | Effect.Effect<Readonly<Record<string, ErasedHandler>>>
  ) =>
    Effect.isEffect(handlers)
      ? Layer.scopedContext(Effect.flatMap(handlers, handlersContext))
      : Layer.effectContext(handlersContext(handlers))
  return {
    [TypeId]: TypeId,
    tools: Object.fromEntries(byKey) as Toolkit<Tools[number]>["tools"],
    names: Array.from(keys.values()) as Array<Tool.HandlerKey<Tools[number], Tools[number]>>,
    definitions: tools.map(Tool.definition),
    find: (name, namespace, kind) => resolve(tools, name, namespace, kind),
    keyOf: (tool) => keys.get(tool) ?? Tool.handlerKey(tool, tools),
    of: (handlers) => handlers,
    // The typed signature guarantees one handler per tool; at run time the record is read by key.
    toLayer: toLayer as unknown as Toolkit<Tools[number]>["toLayer"]
  }
}
