/**
 * A tool the model can call and the application runs. Three kinds, each with its handler provided as a
 * `Layer` (see `Toolkit.toLayer`) and run by `ToolExecutor` / `ToolLoop`:
 *
 * - function tools (`make`): a name, a description, an Effect `Schema` for the parameters (decoded from the
 *   model's JSON arguments), one for what the handler returns and, optionally, one for how it fails; sent
 *   as a Responses `function` tool;
 * - custom (freeform) tools (`custom`): the handler takes the raw text the model wrote, optionally
 *   constrained by a grammar (Lark or a regular expression); sent as a Responses `custom` tool, answered
 *   with a `custom_tool_call_output`;
 * - client-run built-in tools (`shell`, `applyPatch`, `localShell`): the model asks for commands or file
 *   changes with their own item types (`shell_call`, `apply_patch_call`, `local_shell_call`), the handler
 *   takes the typed call part and its answer goes back as the matching output item. `Shell` and
 *   `ApplyPatch` hold reference handlers. Running what a model wrote is the application's decision.
 *
 * @since 0.1.0
 */
import { LanguageModel, Part, StrictSchema } from "@effect-responses/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as InternalSchema from "./internal/schema.js"

// ---------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@effect-responses/tools/Tool")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * What kind of tool a `Tool` is: a JSON `function` tool, a freeform `custom` tool, or a built-in tool the
 * client runs (`client`: `shell`, `apply_patch`, `local_shell`, told apart by name).
 *
 * @since 0.2.0
 * @category models
 */
export type Kind = "function" | "custom" | "client"

/**
 * A tool. Its schemas need no services (their context is `never`). `parameters` decodes the model's
 * arguments (a JSON object; for a custom tool the raw input string, for a client-run built-in tool the
 * typed call part), `success` encodes what the handler returns to the text the model reads, `failure`
 * encodes the handler's typed errors (the JSON text `{"error": <encoded failure>}`). `strict` is what
 * `definition` sends for a function tool: `undefined` means "strict when the parameters' JSON Schema allows
 * it". `kind` says which kind of tool it is; `format` is a custom tool's input format (absent: free text).
 * `namespace` puts the tool in a tool group (a Responses `namespace` tool; its calls come back with that
 * `namespace`); `deferLoading: true` keeps it out of the model's context until a tool search loads it (see
 * `make`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<
  Name extends string,
  Parameters extends Schema.Schema.All,
  Success extends Schema.Schema.All,
  Failure extends Schema.Schema.All
> {
  readonly [TypeId]: TypeId
  readonly name: Name
  readonly description: string
  readonly parameters: Parameters
  readonly success: Success
  readonly failure: Failure
  readonly strict: boolean | undefined
  readonly namespace?: LanguageModel.ToolNamespace | undefined
  readonly deferLoading?: boolean | undefined
  readonly kind: Kind
  readonly format?: LanguageModel.CustomToolFormat | undefined
}

/**
 * What a tool in namespace `Namespace` adds to its type: the namespace, with its name as a literal type (so
 * that its handler is keyed `<namespace>.<name>`, see `Key`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Namespaced<Namespace extends string> {
  readonly namespace: { readonly name: Namespace; readonly description: string }
}

/**
 * The key of a tool in a toolkit, in the handler record of `Toolkit.toLayer` and in its handler's service
 * tag: its `name`, or `<namespace>.<name>` for a tool in a namespace (OpenAI tool and namespace names are
 * letters, digits, `_` and `-`, so the `.` cannot be part of either). Two tools of one name in two
 * namespaces have two keys.
 *
 * @since 0.2.0
 * @category type-level
 */
export type Key<T extends { readonly name: string }> = T extends
  { readonly namespace: { readonly name: infer Namespace extends string } } ? `${Namespace}.${T["name"]}` : T["name"]

/**
 * The key of a tool at run time (see `Key`).
 *
 * @since 0.2.0
 * @category models
 */
export const key = (tool: { readonly name: string; readonly namespace?: { readonly name: string } | undefined }): string =>
  tool.namespace === undefined ? tool.name : `${tool.namespace.name}.${tool.name}`

/**
 * What a client-run built-in tool (`shell`, `applyPatch`, `localShell`) adds to its type: its `kind`, as the
 * literal type `"client"`, which is how `HandlerKey` tells it from a function or custom tool of the same name.
 *
 * @since 0.2.0
 * @category models
 */
export interface BuiltIn {
  readonly kind: "client"
}

/**
 * The key of tool `T`'s handler among the tools `Tools` of a toolkit (in `Toolkit.toLayer`'s handler record,
 * in its handler's service tag): its `Key`, except for a client-run built-in when `Tools` also hold a
 * function or custom tool of its name outside any namespace, e.g. Codex's freeform `apply_patch` beside the
 * built-in `apply_patch`: the built-in's handler is then keyed `built-in:<name>` (`built-in:apply_patch`), the
 * other keeps the name. The model calls both by that name; the call's item type (`custom_tool_call`,
 * `apply_patch_call`) says which is meant. A toolkit without such a pair keys every tool by its `Key` (so
 * does the type of one holding a tool whose name is typed `string` alone).
 *
 * @since 0.2.0
 * @category type-level
 */
export type HandlerKey<T extends Any, Tools extends Any = T> = T extends BuiltIn
  // a tool whose name is only known as `string` could be named anything: the built-in keeps its name
  ? string extends Key<Exclude<Tools, BuiltIn>> ? T["name"]
  : T["name"] extends Key<Exclude<Tools, BuiltIn>> ? `built-in:${T["name"]}`
  : T["name"]
  : Key<T>

/**
 * The key of `tool`'s handler among `tools` at run time (see `HandlerKey`): `key(tool)`, or
 * `built-in:<name>` for a client-run built-in whose name is the key of a function or custom tool of `tools`.
 *
 * @since 0.2.0
 * @category models
 */
export const handlerKey = (tool: Any, tools: ReadonlyArray<Any>): string =>
  tool.kind === "client" && tools.some((other) => other.kind !== "client" && key(other) === tool.name)
    ? `built-in:${tool.name}`
    : key(tool)

/**
 * Any tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any extends Tool<string, Schema.Schema.All, Schema.Schema.All, Schema.Schema.All> {}

/**
 * The decoded parameters a tool's handler receives.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Parameters<T extends Any> = Schema.Schema.Type<T["parameters"]>

/**
 * What a tool's handler succeeds with.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Success<T extends Any> = Schema.Schema.Type<T["success"]>

/**
 * What a tool's handler may fail with (`never` when the tool has no failure schema).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Failure<T extends Any> = Schema.Schema.Type<T["failure"]>

/**
 * The schema `make` builds from what it is given as `parameters`: the schema itself, or a `Schema.Struct`
 * of the fields.
 *
 * @since 0.1.0
 * @category type-level
 */
export type ParametersSchema<P> = P extends Schema.Schema.All ? P
  : P extends Schema.Struct.Fields ? Schema.Struct<P>
  : never

/**
 * What a handler learns about the call besides its parameters: the model's `callId` (the Responses
 * `call_id`), the tool `name` and, for a call that came with one, its `namespace`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallContext {
  readonly callId: string
  readonly name: string
  readonly namespace?: string | undefined
}

/**
 * The handler of the tool keyed `Name` (its `Key`: the tool name, or `<namespace>.<name>`), as an Effect
 * service: what `Toolkit.toLayer` provides and `ToolExecutor` uses. `handle` takes already decoded
 * parameters and has its requirements provided.
 *
 * @since 0.1.0
 * @category handlers
 */
export interface Handler<Name extends string> {
  readonly name: Name
  readonly handle: (params: unknown, context: CallContext) => Effect.Effect<unknown, unknown>
}

/**
 * The handler services a set of tools needs: `Handler<"a"> | Handler<"b">` for tools named `a` and `b`
 * (`Handler<"crm.a">` for a tool `a` in namespace `crm`; `Handler<"built-in:apply_patch">` for the built-in
 * `apply_patch` beside a custom tool `apply_patch`, see `HandlerKey`). `All` is the whole set the keys are
 * taken in (default `Tools`).
 *
 * @since 0.1.0
 * @category handlers
 */
export type HandlersFor<Tools extends Any, All extends Any = Tools> = Tools extends Any ? Handler<HandlerKey<Tools, All>>
  : never

/**
 * The service tag of the handler of the tool keyed `key` (`Key`: its name, or `<namespace>.<name>`); the
 * tag's key is `@effect-responses/tools/Tool/<key>`.
 *
 * @since 0.1.0
 * @category handlers
 */
export const handlerTag = <Name extends string>(key: Name): Context.Tag<Handler<Name>, Handler<Name>> =>
  Context.GenericTag<Handler<Name>>(`@effect-responses/tools/Tool/${key}`)

// ---------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------

/**
 * Declares a tool.
 *
 * - `name`: the function name the model calls (OpenAI allows `^[a-zA-Z0-9_-]{1,64}$`);
 * - `description`: what the tool does, for the model;
 * - `parameters`: a `Schema` of an object, or the fields of one (`{ a: Schema.Number }`); defaults to no
 *   parameters. Its encoded side is what the model writes, as JSON;
 * - `success`: the schema of the handler's result, encoded to JSON for the model; `failure`: of its typed
 *   errors (default `Schema.Never`: the handler cannot fail);
 * - `strict`: forces OpenAI strict mode on or off; by default it is on when the parameters' JSON Schema
 *   allows it (see `definition`);
 * - `namespace`: `{name, description}` of the tool group it belongs to. On the Responses wire the tools of
 *   one namespace are sent inside one `{"type":"namespace",…}` tool and the model calls them with that
 *   `namespace`; in a toolkit the tool's handler is keyed `<namespace>.<name>` (`Key`), so two namespaces
 *   may each have a tool of the same name. Providers without namespaces (Chat Completions) send the tool
 *   by its name alone. Source: API reference, `NamespaceToolParam`;
 * - `deferLoading`: `true` to leave the tool out of the model's context until a tool search
 *   (`BuiltInTool.toolSearch` of the Responses package) loads it (Responses `defer_loading`).
 *
 * @example
 * ```ts
 * const Calculator = Tool.make("calculator", {
 *   description: "A minimal calculator for basic arithmetic.",
 *   parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
 *   success: Schema.Number
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: MakeFunction = ((
  name: string,
  options: MakeOptions<Schema.Schema.All, Schema.Struct.Fields | Schema.Schema.All, Schema.Schema.All> & {
    readonly namespace?: LanguageModel.ToolNamespace | undefined
  }
): Any => ({
  // (cast below: the overloads' types, with the conditional `ParametersSchema<P>`, cannot be checked
  // against this one runtime body)
  [TypeId]: TypeId,
  name,
  description: options.description,
  parameters: InternalSchema.parametersSchema(options.parameters),
  success: options.success,
  failure: options.failure ?? Schema.Never,
  strict: options.strict,
  kind: "function",
  ...(options.namespace === undefined
    ? {}
    : { namespace: { name: options.namespace.name, description: options.namespace.description } }),
  ...(options.deferLoading === undefined ? {} : { deferLoading: options.deferLoading })
})) as unknown as MakeFunction

/**
 * The signatures of `make`: with a `namespace`, the tool's type records the namespace name (`Namespaced`).
 *
 * @since 0.2.0
 * @category constructors
 */
export interface MakeFunction {
  <
    const Name extends string,
    Success extends Schema.Schema.All,
    const Namespace extends string,
    P extends Schema.Struct.Fields | Schema.Schema.All = {},
    Failure extends Schema.Schema.All = typeof Schema.Never
  >(name: Name, options: MakeOptions<Success, P, Failure> & {
    readonly namespace: { readonly name: Namespace; readonly description: string }
  }): Tool<Name, ParametersSchema<P>, Success, Failure> & Namespaced<Namespace>
  <
    const Name extends string,
    Success extends Schema.Schema.All,
    P extends Schema.Struct.Fields | Schema.Schema.All = {},
    Failure extends Schema.Schema.All = typeof Schema.Never
  >(name: Name, options: MakeOptions<Success, P, Failure>): Tool<Name, ParametersSchema<P>, Success, Failure>
}

/**
 * A namespace for `make`'s `namespace` option: `name` (the namespace name in calls, e.g. `crm`) and the
 * `description` the model reads. Its name keeps its literal type, so the tools made with it are keyed
 * `<name>.<tool>` at the type level too (an object literal kept in a variable would widen it to `string`).
 *
 * ```ts
 * const Crm = Tool.namespace("crm", "The customer database.")
 * const FindCustomer = Tool.make("find_customer", { description: "…", success: Schema.String, namespace: Crm })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const namespace = <const Name extends string>(
  name: Name,
  description: string
): { readonly name: Name; readonly description: string } => ({ name, description })

/**
 * The options of `make` besides `namespace`.
 *
 * @since 0.2.0
 * @category constructors
 */
export interface MakeOptions<
  Success extends Schema.Schema.All,
  P extends Schema.Struct.Fields | Schema.Schema.All,
  Failure extends Schema.Schema.All
> {
  readonly description: string
  readonly parameters?: P | undefined
  readonly success: Success
  readonly failure?: Failure | undefined
  readonly strict?: boolean | undefined
  readonly deferLoading?: boolean | undefined
}

/**
 * Declares a custom (freeform) tool: the model calls it with raw text (a `custom_tool_call` item), not
 * JSON, and the handler gets that text as it is.
 *
 * - `name`, `description`: as for `make`;
 * - `format`: the input format, `{ type: "text" }` (the default when absent) or a grammar the model's input
 *   follows, `{ type: "grammar", syntax: "lark" | "regex", definition }` (API reference `CustomToolParam`:
 *   Lark grammars as the `llguidance` dialect, regular expressions in Rust `regex` syntax);
 * - `success`: the schema of the handler's result (default `Schema.String`); a result that encodes to a
 *   string is sent back as that text, anything else as its JSON text; `failure`: of its typed errors
 *   (default `Schema.Never`), sent as `{"error": <encoded failure>}`;
 * - `namespace`, `deferLoading`: as for `make` (a namespace holds function and custom tools alike).
 *
 * The answer goes back as a `custom_tool_call_output` (a `ToolResultPart` with `kind: "custom"`). A
 * provider without custom tools (Chat Completions) offers it as a function with one string parameter
 * `input` and maps its calls back to custom tool calls.
 *
 * @example
 * ```ts
 * const Evaluate = Tool.custom("evaluate", {
 *   description: "Evaluates an arithmetic expression, e.g. (12 + 7) * 3.",
 *   format: { type: "grammar", syntax: "regex", definition: "[0-9 +*()-]+" }
 * })
 * const Tools = Toolkit.make(Evaluate)
 * const ToolsLive = Tools.toLayer({ evaluate: (input) => Effect.succeed(String(evaluate(input))) })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const custom = <
  const Name extends string,
  Success extends Schema.Schema.All = typeof Schema.String,
  Failure extends Schema.Schema.All = typeof Schema.Never,
  const Namespace extends string = never
>(name: Name, options: {
  readonly description: string
  readonly format?: LanguageModel.CustomToolFormat | undefined
  readonly success?: Success | undefined
  readonly failure?: Failure | undefined
  readonly namespace?: { readonly name: Namespace; readonly description: string } | undefined
  readonly deferLoading?: boolean | undefined
}): Tool<Name, typeof Schema.String, Success, Failure> & ([Namespace] extends [never] ? unknown : Namespaced<Namespace>) =>
  ({
    [TypeId]: TypeId,
    name,
    description: options.description,
    parameters: Schema.String,
    success: (options.success ?? Schema.String) as Success,
    failure: (options.failure ?? Schema.Never) as Failure,
    strict: undefined,
    kind: "custom",
    format: options.format,
    ...(options.namespace === undefined
      ? {}
      : { namespace: { name: options.namespace.name, description: options.namespace.description } }),
    ...(options.deferLoading === undefined ? {} : { deferLoading: options.deferLoading })
    // the conditional `Namespaced` part of the type follows `options.namespace`, which TypeScript cannot check
  }) as Tool<Name, typeof Schema.String, Success, Failure> & ([Namespace] extends [never] ? unknown : Namespaced<Namespace>)

/**
 * What an `apply_patch` handler answers: `completed` with an optional log for the model, or `failed` with
 * why (a hunk that does not apply, a missing file). Becomes an `apply_patch_call_output`.
 *
 * @since 0.2.0
 * @category client tools
 */
export const ApplyPatchResult = Schema.Struct({
  status: Schema.Literal("completed", "failed"),
  output: Schema.optionalWith(Schema.String, { exact: true })
})

/**
 * @since 0.2.0
 * @category client tools
 */
export type ApplyPatchResult = typeof ApplyPatchResult.Type

/**
 * The schema of a `shell` handler's answer: one output per command of the call, in order (standard output,
 * standard error, and how it ended). Becomes a `shell_call_output`.
 *
 * @since 0.2.0
 * @category client tools
 */
export const ShellResult = Schema.Array(Part.ShellCommandOutput)

const clientTool = <const Name extends "shell" | "apply_patch" | "local_shell", P extends Schema.Schema.All, S extends Schema.Schema.All>(
  name: Name,
  description: string,
  parameters: P,
  success: S
): Tool<Name, P, S, typeof Schema.Never> & BuiltIn => ({
  [TypeId]: TypeId,
  name,
  description,
  parameters,
  success,
  failure: Schema.Never,
  strict: undefined,
  kind: "client"
})

/**
 * The `shell` tool (API reference `FunctionShellToolParam`), run by the client: the model sends
 * `shell_call` items (`Part.ShellCallPart`: commands, `timeoutMs`, `maxOutputLength`), the handler takes the
 * call part and answers one `Part.ShellCommandOutput` per command, sent back as a `shell_call_output`.
 * `Shell.handler` runs the commands for real; what runs, where, and with which safeguards (a sandbox, a
 * container, an approval) is the application's decision.
 *
 * ```ts
 * const Tools = Toolkit.make(Tool.shell)
 * const ToolsLive = Tools.toLayer({ shell: Shell.handler({ cwd: "/tmp/workspace" }) })
 * ```
 *
 * @since 0.2.0
 * @category client tools
 */
export const shell: Tool<"shell", typeof Part.ShellCallPart, typeof ShellResult, typeof Schema.Never> & BuiltIn = clientTool(
  "shell",
  "Runs shell commands on the client.",
  Part.ShellCallPart,
  ShellResult
)

/**
 * The `apply_patch` tool (API reference `ApplyPatchToolParam`), run by the client: the model sends
 * `apply_patch_call` items (`Part.ApplyPatchCallPart`: create, update with a V4A diff, or delete a file),
 * the handler answers an `ApplyPatchResult`, sent back as an `apply_patch_call_output`. `ApplyPatch.handler`
 * applies the diff under a root directory. In a toolkit beside a custom tool `apply_patch` (Codex's freeform
 * one), its handler is keyed `built-in:apply_patch` (`HandlerKey`).
 *
 * @since 0.2.0
 * @category client tools
 */
export const applyPatch:
  & Tool<"apply_patch", typeof Part.ApplyPatchCallPart, typeof ApplyPatchResult, typeof Schema.Never>
  & BuiltIn = clientTool("apply_patch", "Creates, updates and deletes files on the client.", Part.ApplyPatchCallPart, ApplyPatchResult)

/**
 * The `local_shell` tool (API reference `LocalShellToolParam`, the tool of `codex-mini-latest`), run by the
 * client: the model sends `local_shell_call` items (`Part.LocalShellCallPart`: an argument vector, working
 * directory, timeout, environment), the handler answers the output text (the API reference asks for a JSON
 * string; `Shell.localHandler` gives `{"stdout","stderr","exit_code"}`), sent back as a
 * `local_shell_call_output`. An answer of `Shell.localHandler` over the toolkit's bound stays JSON: its string
 * values are cut, not its keys or exit code (see `ToolExecutor`); any other answer is cut as text.
 *
 * @since 0.2.0
 * @category client tools
 */
export const localShell:
  & Tool<"local_shell", typeof Part.LocalShellCallPart, typeof Schema.String, typeof Schema.Never>
  & BuiltIn = clientTool("local_shell", "Runs a command on the client.", Part.LocalShellCallPart, Schema.String)

// ---------------------------------------------------------------------------------------------------------
// JSON Schema
// ---------------------------------------------------------------------------------------------------------

/**
 * The JSON Schema of a tool's parameters, as OpenAI takes it (`StrictSchema.fromSchema` of core: without
 * `$schema`, a root `$ref` inlined, a struct without fields as an empty closed object).
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const parametersJsonSchema = (tool: Any): Record<string, unknown> => {
  const cached = jsonSchemas.get(tool)
  if (cached !== undefined) return cached
  const schema = { ...StrictSchema.fromSchema(InternalSchema.erase(tool.parameters)) }
  jsonSchemas.set(tool, schema)
  return schema
}

// A tool's JSON Schema is asked for on every model call and every tool call: make it once.
const jsonSchemas = new WeakMap<Any, Record<string, unknown>>()

/**
 * Whether OpenAI strict mode can enforce a JSON Schema as it is (`StrictSchema.isStrict` of core: an object
 * root, every property required, `additionalProperties: false`, only the keywords of the strict subset).
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const isStrictCompatible = (schema: unknown): boolean => StrictSchema.isStrict(schema)

/**
 * The strict-mode form of a parameters JSON Schema, or `undefined` when strict mode cannot express it
 * (`StrictSchema.toStrict` of core, shared with structured output): each optional property becomes
 * required and nullable, so the model sends `null` for what it leaves out, and the executor reads that
 * `null` as absent before decoding (see `ToolExecutor`). An object schema with open additional properties
 * (a `Schema.Record`) has no strict form.
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const toStrict = (schema: Record<string, unknown>): Record<string, unknown> | undefined => {
  const strict = StrictSchema.toStrict(schema)
  return strict === undefined ? undefined : { ...strict }
}

/**
 * The tool as the model sees it. A function tool: name, description, the JSON Schema of its parameters and
 * `strict` (a `LanguageModel.ToolDefinition`). Strict mode is used whenever the parameters have a strict
 * form (`toStrict`: optional properties become nullable), unless the tool says `strict: false`; without a
 * strict form the schema goes as it is (`parametersJsonSchema`), strict only if the tool forces it. A custom
 * tool: a `LanguageModel.CustomToolDefinition` (name, description, format); a client-run built-in tool: a
 * `LanguageModel.ClientToolDefinition` (its name). The tool's `namespace` and `deferLoading` go along.
 *
 * @since 0.1.0
 * @category JSON Schema
 */
export const definition = (tool: Any): LanguageModel.AnyToolDefinition => {
  if (tool.kind === "custom") {
    return new LanguageModel.CustomToolDefinition({
      name: tool.name,
      description: tool.description,
      ...(tool.format === undefined ? {} : { format: tool.format }),
      ...(tool.namespace === undefined ? {} : { namespace: tool.namespace }),
      ...(tool.deferLoading === undefined ? {} : { deferLoading: tool.deferLoading })
    })
  }
  if (tool.kind === "client") {
    return new LanguageModel.ClientToolDefinition({ name: tool.name as LanguageModel.ClientToolDefinition["name"] })
  }
  return functionDefinition(tool)
}

/**
 * The definition of a function tool (see `definition`).
 *
 * @since 0.2.0
 * @category JSON Schema
 */
export const functionDefinition = (tool: Any): LanguageModel.ToolDefinition => {
  const parameters = parametersJsonSchema(tool)
  const strict = tool.strict === false ? undefined : toStrict(parameters)
  return new LanguageModel.ToolDefinition({
    name: tool.name,
    description: tool.description,
    parameters: strict ?? parameters,
    strict: strict !== undefined || tool.strict === true,
    ...(tool.namespace === undefined ? {} : { namespace: tool.namespace }),
    ...(tool.deferLoading === undefined ? {} : { deferLoading: tool.deferLoading })
  })
}
