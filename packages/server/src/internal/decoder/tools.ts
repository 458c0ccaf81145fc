/**
 * The tools of a request (`tools`, and the tools that `additional_tools` and `tool_search_output` input
 * items bring): function and custom tools, namespaces flattened, built-in tools dropped or refused, the
 * names a call may come back under.
 *
 * @internal
 */
import { ChatCompletionsRequest } from "@effect-responses/chat-completions"
import { AiError, LanguageModel } from "@effect-responses/core"
import { makeBudget, yieldToIo } from "@effect-responses/wire/Cooperative"
import { isObject, stringField } from "@effect-responses/wire/Json"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { BuiltinToolsPolicy, DeferredTool, NamespacedName } from "../../ResponsesRequestDecoder.js"
import { decodeAt, fail, formatParam, Nullable, type RequestError } from "./common.js"

/** The function name a client-run tool search is shown to the upstream under. */
export const TOOL_SEARCH = "tool_search" as const

/** What joins a namespace and a tool name in a flattened tool name (`crm__lookup`). */
export const NAMESPACE_SEPARATOR = "__" as const

/**
 * The function names OpenAI and most Chat Completions servers accept (the API reference's `FunctionObject.name`:
 * `a-z`, `A-Z`, `0-9`, underscores and dashes, at most 64 characters).
 */
const UPSTREAM_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** The characters of a sanitized name kept before and after the cut, when a name is too long. */
const HEAD_CHARS = 20
const TAIL_CHARS = 32
/** The hex digits of the hash that ends a renamed name. */
const HASH_DIGITS = 10

/**
 * FNV-1a (64 bits) of `text`'s UTF-16 code units, as `HASH_DIGITS` hex digits: stable across processes and
 * releases, so a name renamed in one turn is renamed the same in the next.
 */
const hashHex = (text: string): string => {
  let hash = 0xcbf29ce484222325n
  for (let index = 0; index < text.length; index++) {
    hash ^= BigInt(text.charCodeAt(index))
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return hash.toString(16).padStart(16, "0").slice(0, HASH_DIGITS)
}

/**
 * The name a tool named `name` (flattened, for a namespace tool) is sent upstream under. A name that matches
 * `^[a-zA-Z0-9_-]{1,64}$` is sent as it is; any other (too long, empty, or with characters such as dots) is
 * renamed: its characters outside that set replaced by `_`, cut to its first 20 and last 32 characters when
 * longer than 53, then `_` and 10 hex digits of a hash (FNV-1a, 64 bits) of the whole name (at most 64
 * characters in all). The rule depends on the name alone, so every turn of a conversation renames a tool the
 * same way, and a different name gets a different hash.
 */
export const upstreamName = (name: string): string => {
  if (UPSTREAM_NAME.test(name)) return name
  const clean = name.replace(/[^a-zA-Z0-9_-]/g, "_")
  const kept = clean.length > HEAD_CHARS + 1 + TAIL_CHARS
    ? `${clean.slice(0, HEAD_CHARS)}_${clean.slice(clean.length - TAIL_CHARS)}`
    : clean
  return `${kept}_${hashHex(name)}`
}

/** The flattened name of tool `name` of `namespace` (`crm__lookup`), before `upstreamName`. */
export const flatName = (namespace: string, name: string): string => `${namespace}${NAMESPACE_SEPARATOR}${name}`

/**
 * What tells one tool from another (`ToolSet.sentOf`): a top-level tool's name, or a namespace and a name. Two
 * tools may have one flattened name (the top-level `crm__lookup` and `lookup` of namespace `crm`; `c` of
 * `a__b` and `b__c` of `a`): they are still two tools.
 */
export const toolKey = (namespace: string | undefined, name: string): string =>
  namespace === undefined ? `\u0000${name}` : `${namespace}\u0000${name}`

/**
 * The name a tool whose name as `upstreamName` makes it is another tool's is sent under: that name (cut to its
 * first 20 and last 32 characters when longer than 53), `_` and 10 hex digits of a hash of the tool's key and
 * `round` (the first free of rounds 1, 2, …). It depends on the tools alone, so a request that declares the
 * same tools gets the same names in every turn (which tool keeps the plain name does not depend on their
 * order either: `claimsOf`).
 */
const distinctName = (name: string, key: string, round: number): string => {
  const base = upstreamName(name)
  const kept = base.length > HEAD_CHARS + 1 + TAIL_CHARS ? `${base.slice(0, HEAD_CHARS)}_${base.slice(base.length - TAIL_CHARS)}` : base
  return `${kept}_${hashHex(`${key}\u0000${round}`)}`
}

/**
 * The name each namespaced tool of a decoded request that was sent upstream under a name of its own (not
 * `upstreamName` of its flattened name: `addTool`) was sent under, by the `NamespacedName` that
 * `DecodedRequest.namespacedTools` maps its names to (kept beside it, so that the public value stays
 * `{ namespace, name }`). The others are not kept: `sentNameOfNamespaced` works their names out.
 */
const sentNames = new WeakMap<NamespacedName, string>()

/**
 * The name the upstream was offered the namespaced tool `original` under: `upstreamName` of its flattened
 * name, or the name of its own it got when that was another tool's.
 */
export const sentNameOfNamespaced = (original: NamespacedName): string =>
  sentNames.get(original) ?? upstreamName(flatName(original.namespace, original.name))

/**
 * The name the upstream is offered tool `name` (of `namespace`) under, when `set` declares it: `upstreamName`
 * of its (flattened) name, or the name of its own it got when that was another tool's.
 */
export const sentNameOf = (set: ToolSet, namespace: string | undefined, name: string): string =>
  set.sentOf.get(toolKey(namespace, name)) ?? upstreamName(namespace === undefined ? name : flatName(namespace, name))

const FunctionToolParam = Schema.Struct({
  type: Schema.Literal("function"),
  name: Schema.String,
  description: Nullable(Schema.String),
  parameters: Nullable(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  strict: Nullable(Schema.Boolean)
})

const CustomToolParam = Schema.Struct({
  type: Schema.Literal("custom"),
  name: Schema.String,
  description: Nullable(Schema.String),
  format: Nullable(LanguageModel.CustomToolFormat)
})

const NamespaceToolParam = Schema.Struct({
  type: Schema.Literal("namespace"),
  name: Schema.String,
  description: Nullable(Schema.String),
  tools: Schema.Array(Schema.Unknown)
})

/**
 * The tools of a request as they are collected: the definitions for the upstream, the name map back to
 * namespaces (flattened, dotted and unambiguous bare names), the custom tools, the dropped built-in tool
 * types, and the bare names declared in more than one namespace.
 *
 * A tool goes into as few maps as its lookups need (a top-level tool into `sentOf` and `declared`, a
 * namespaced one into `names` too, and `decodeTools`' own `listed`): a `Map` or `Set` doubles its table when
 * full, copying every entry in one step (about 2 ms of CPU for one of 8,192 entries at load 12), and maps
 * filled once per tool all grow with the same tool, so their copies add up in one turn of the event loop
 * that no budget can cut. With eight of them (the owners of the sent names apart from `declared`, the bare
 * names grouped as each tool was added, a dead `topLevel`, a second map in `decodeTools`, `sentNames` for
 * every namespaced tool), 10,000 tools in one namespace made a turn of 13-16 ms of CPU at load 12-15.
 */
export interface ToolSet {
  readonly tools: Array<LanguageModel.ToolDefinition>
  /**
   * the tools the request's lists declared so far, counted as the upstream would be sent them: each entry
   * of `tools`, of an `additional_tools` item and of a `tool_search_output` item, a namespace by its members
   */
  counted: number
  /**
   * the names of `tools` (a request may declare thousands: no search through the list per tool) -> the key
   * (`toolKey`) of the function or custom tool sent under it, `undefined` for the alias of a client-run
   * built-in (`aliasOf`)
   */
  readonly declared: Map<string, string | undefined>
  /** each function and custom tool's key (`toolKey`) -> the name it is sent upstream under */
  readonly sentOf: Map<string, string>
  readonly names: Map<string, NamespacedName>
  /** a top-level tool's name as sent upstream (`upstreamName`) -> its name, for the tools it renames */
  readonly renamed: Map<string, string>
  readonly custom: Set<string>
  /** the function presenting the client-run `apply_patch` tool, when the request declares it */
  applyPatch: string | undefined
  /** the function presenting the client-run `shell` tool, when the request declares it */
  shell: string | undefined
  /** the function presenting the client-run `local_shell` tool, when the request declares it */
  localShell: string | undefined
  /**
   * the function name client-run tool search calls are shown upstream under, when the request declares a
   * client-run `tool_search` tool (an upstream call of it is the client's tool search)
   */
  toolSearch: string | undefined
  /** the declared `description` and `parameters` of the client-run `tool_search` tool */
  toolSearchSpec: { readonly description: string | undefined; readonly parameters: unknown } | undefined
  /**
   * the tools declared with `defer_loading` that nothing loaded yet (no `tool_search_output` of the input, no
   * declaration without it): the name sent upstream -> the path a search loads it by and its definition
   */
  readonly deferred: Map<string, DeferredTool>
  /**
   * the top-level tools a tool search's output loaded that no declaration without `defer_loading` had, by the
   * client's name: the API keeps each in a namespace of its own name (`DecodedRequest.searchedTools`)
   */
  readonly searched: Set<string>
  readonly dropped: Array<string>
  /**
   * the namespaced function and custom tools, in the order they were added: `logAmbiguousNames` groups them
   * by bare name (an array, not a map filled per tool: see above)
   */
  readonly namespaced: Array<NamespacedName>
  /**
   * the tools sent under a name of their own because `upstreamName` of their (flattened) name was another
   * tool's (a top-level `crm__lookup` and `lookup` of namespace `crm`): the tool (`crm.lookup`), its name
   * upstream, and the other tool
   */
  readonly collisions: Array<{ readonly tool: string; readonly sent: string; readonly other: string }>
}

export const makeToolSet = (): ToolSet => ({
  tools: [],
  counted: 0,
  declared: new Map(),
  sentOf: new Map(),
  names: new Map(),
  renamed: new Map(),
  custom: new Set(),
  applyPatch: undefined,
  shell: undefined,
  localShell: undefined,
  toolSearch: undefined,
  toolSearchSpec: undefined,
  deferred: new Map(),
  searched: new Set(),
  dropped: [],
  namespaced: [],
  collisions: []
})

/**
 * Who gets each flattened name of a list of tools (`tools`, or an `additional_tools` / `tool_search_output`
 * item's): the name -> the key (`toolKey`) of the tool it goes to. When several of the list's function and
 * custom tools flatten to one name, the key sorting first gets it: the top-level tool's when there is one
 * (its key starts with `\u0000`), else the tool of the namespace sorting first (`a`'s `b__c` before
 * `a__b`'s `c`). It depends on the tools alone, not on their order, so a client that reorders its tools
 * between turns has each sent under the same name.
 */
const claimsOf = (rawTools: ReadonlyArray<unknown>): ReadonlyMap<string, string> => {
  const claims = new Map<string, string>()
  const claim = (flat: string, key: string) => {
    const held = claims.get(flat)
    if (held === undefined || key < held) claims.set(flat, key)
  }
  for (const tool of rawTools) {
    if (!isObject(tool)) continue
    if (tool.type === "function" || tool.type === "custom") {
      if (typeof tool.name === "string") claim(tool.name, toolKey(undefined, tool.name))
    } else if (tool.type === "namespace" && typeof tool.name === "string" && Array.isArray(tool.tools)) {
      for (const inner of tool.tools) {
        if (isObject(inner) && (inner.type === "function" || inner.type === "custom") && typeof inner.name === "string") {
          claim(flatName(tool.name, inner.name), toolKey(tool.name, inner.name))
        }
      }
    }
  }
  return claims
}

const NO_CLAIMS: ReadonlyMap<string, string> = new Map()

/**
 * Whether two of the list's function and custom tools may flatten to one name, so that `claimsOf` must say
 * who gets it: only when a name holds the separator (`crm__lookup`), a namespace's name ends with `_` or a
 * member's starts with one (`a_`'s `b` and `a`'s `_b` are both `a___b`). Otherwise a flattened name splits
 * at its one separator into the namespace and the member, and no top-level name holds one, so no two
 * tools share a name (two of one name in one list are refused as duplicates). A pass that makes no string:
 * the claims of 10,000 tools in one namespace took about 2 ms in one stretch of the event loop, and their
 * 20,000 strings were garbage for the next scavenge.
 */
const mayCollide = (rawTools: ReadonlyArray<unknown>): boolean => {
  const named = (tool: unknown): tool is { readonly name: string } =>
    isObject(tool) && (tool.type === "function" || tool.type === "custom") && typeof tool.name === "string"
  for (const tool of rawTools) {
    if (named(tool)) {
      if (tool.name.includes(NAMESPACE_SEPARATOR)) return true
    } else if (isObject(tool) && tool.type === "namespace" && typeof tool.name === "string" && Array.isArray(tool.tools)) {
      if (tool.name.includes(NAMESPACE_SEPARATOR) || tool.name.endsWith("_")) return true
      for (const inner of tool.tools) {
        if (named(inner) && (inner.name.includes(NAMESPACE_SEPARATOR) || inner.name.startsWith("_"))) return true
      }
    }
  }
  return false
}

/** A tool key as a client names the tool: `crm.lookup`, or the top-level name. */
const keyName = (key: string): string => key.startsWith("\u0000") ? key.slice(1) : key.replace("\u0000", ".")

/**
 * Adds one function or custom tool named `name` (flattened, for a tool of `namespace`) to `set`, built by
 * `build` with the name it is sent upstream under, unless that tool is there (declared again: in
 * `additional_tools`, a tool search's output); returns that name. It is `upstreamName(name)`, unless
 * another tool of its list gets that name (`claims`, see `claimsOf`: a top-level `crm__lookup` beside
 * `lookup` of namespace `crm`, in either order) or a tool of an earlier list is sent under it: then a name
 * of its own (`distinctName`), which maps back to it as every sent name does (`renamed`, `names`), so that
 * no tool a client declares is lost.
 */
const addTool = (
  set: ToolSet,
  name: string,
  build: (sent: string) => LanguageModel.ToolDefinition,
  custom: boolean,
  namespace?: string,
  claims: ReadonlyMap<string, string> = NO_CLAIMS
): string => {
  const bare = namespace === undefined ? name : name.slice(namespace.length + NAMESPACE_SEPARATOR.length)
  const key = toolKey(namespace, bare)
  const known = set.sentOf.get(key)
  if (known !== undefined) return known
  const usual = upstreamName(name)
  const claimed = claims.get(name)
  // another tool's: held by a tool added before, or going to another tool of this list
  const taken = (candidate: string) => {
    if (set.declared.has(candidate)) return true
    const holder = candidate === usual ? claimed : claims.get(candidate)
    return holder !== undefined && holder !== key
  }
  let sent = usual
  for (let round = 1; taken(sent); round++) sent = distinctName(name, key, round)
  if (sent !== usual) {
    const other = set.declared.get(usual) ?? (claimed === key ? undefined : claimed)
    set.collisions.push({
      tool: namespace === undefined ? name : `${namespace}.${bare}`,
      sent,
      other: other === undefined ? usual : keyName(other)
    })
  }
  set.sentOf.set(key, sent)
  set.tools.push(build(sent))
  set.declared.set(sent, key)
  if (custom) set.custom.add(sent)
  if (namespace === undefined) {
    if (sent !== name) set.renamed.set(sent, name)
    return sent
  }
  const original = { namespace, name: bare }
  set.names.set(sent, original)
  if (sent === usual) {
    // the flattened name is an alias of this tool unless it is another tool's name upstream
    set.names.set(name, original)
  } else {
    sentNames.set(original, sent)
  }
  set.names.set(`${namespace}.${bare}`, original)
  set.namespaced.push(original)
  return sent
}

/**
 * Resolves the bare-name aliases once every tool is known: a bare name declared in exactly one namespace,
 * and not also a top-level tool, maps back to it; one declared in several is left unmapped (a warning
 * names them), so that a call by that bare name goes to the client as it came, without a namespace. A tool
 * sent under a name of its own, since its usual one was another tool's (`addTool`), gets a debug line
 * naming both.
 */
export const logAmbiguousNames = (set: ToolSet): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (const { other, sent, tool } of set.collisions) {
      yield* Effect.logDebug(`tool ${tool} is sent upstream as ${sent}: its usual name there is the tool ${other}'s`)
    }
    // a bare name per namespaced tool: thousands are resolved in slices, other requests served between them
    // (10,000 in one namespace were one stretch of 3-13 ms)
    const budget = makeBudget()
    // the namespaces declaring each bare name, grouped here rather than as `addTool` adds each tool (see
    // `ToolSet.namespaced`)
    const bare = new Map<string, Array<string>>()
    for (const { name, namespace } of set.namespaced) {
      if (budget.tick()) yield* yieldToIo
      const namespaces = bare.get(name)
      if (namespaces === undefined) bare.set(name, [namespace])
      else namespaces.push(namespace)
    }
    for (const [name, namespaces] of bare) {
      if (budget.tick()) yield* yieldToIo
      if (set.sentOf.has(toolKey(undefined, name)) || set.names.has(name)) continue
      if (namespaces.length === 1) {
        // the tool's own object (from `addTool`), so that `sentNameOfNamespaced` gives the name it was sent
        // under: a new one would give its flattened name, which is another tool's when it was renamed
        const own = set.sentOf.get(toolKey(namespaces[0]!, name))
        set.names.set(name, (own === undefined ? undefined : set.names.get(own)) ?? { namespace: namespaces[0]!, name })
      } else {
        yield* Effect.logWarning(
          `tool name ${name} is declared in namespaces ${namespaces.join(", ")}: a call by the bare name ${name} cannot be mapped back to one of them (the upstream sees ${
            namespaces.map((namespace) => sentNameOf(set, namespace, name)).join(", ")
          })`
        )
      }
    }
  })

/**
 * The definition a custom (freeform) tool is presented with: the function Chat Completions offers it as
 * (`ChatCompletionsRequest.customToolFunction`: one string parameter, `input`, the grammar of its format
 * in the description), under `name` (`upstreamName` of its flattened name); its calls are read back by `CustomInput`.
 */
const customTool = (tool: typeof CustomToolParam.Type, name: string, lead?: string): LanguageModel.ToolDefinition =>
  ChatCompletionsRequest.customToolFunction(
    // unvalidated: the fields were decoded by `CustomToolParam`
    new LanguageModel.CustomToolDefinition({
      name,
      ...descriptionField(tool.description, lead),
      ...(tool.format == null ? {} : { format: tool.format })
    }, true)
  )

/**
 * Decodes a list of tools (`tools`, or the `tools` of an `additional_tools` / `tool_search_output` item)
 * at `at` into `set`: function and custom tools (also inside `namespace` groups, flattened), `defer_loading`
 * ones recorded in `set.deferred` until loaded (`loads`: the list is a tool search's output, which loads
 * every tool it names), a client-run `tool_search` recorded (`set.toolSearch`, offered by `offeredTools`), a
 * hosted one left out, the client-run `apply_patch`, `shell` and `local_shell` presented as functions
 * (`APPLY_PATCH`, `SHELL`, `LOCAL_SHELL`), built-in tools dropped or refused by `policy`. Returns the names
 * the upstream sees for the list's function, custom and client-run tools, in order, also those `set` held
 * already (a tool search may load a tool the request declared with `defer_loading`).
 *
 * Before any of the list is decoded, its tools are counted into `set.counted` (a namespace by its members);
 * past `maxTools` in all (the request's lists together) the request is refused (`tooManyToolsInAll`), so
 * that a namespace or `additional_tools` items cannot carry more tools than the top-level bound allows.
 */
export const decodeTools = (
  rawTools: ReadonlyArray<unknown>,
  at: ReadonlyArray<PropertyKey>,
  policy: BuiltinToolsPolicy,
  set: ToolSet,
  loads = false,
  maxTools = MAX_TOOLS
): Effect.Effect<ReadonlyArray<string>, RequestError> =>
  Effect.gen(function*() {
    for (const tool of rawTools) {
      const members = isObject(tool) && tool.type === "namespace" && Array.isArray(tool.tools) ? tool.tools.length : 1
      set.counted += members
    }
    if (set.counted > maxTools) return yield* tooManyToolsInAll(set.counted, maxTools, formatParam(at)!)
    const claims = mayCollide(rawTools) ? claimsOf(rawTools) : NO_CLAIMS
    const where = (index: number, ...rest: ReadonlyArray<PropertyKey>) => formatParam([...at, index, ...rest])
    const names: Array<string> = []
    // the function and custom tools of this list by the client's name (`ns.name` in a namespace) -> where the
    // first of that name is in `places`, which holds each tool's index and its index in its namespace (-1 for
    // a top-level tool) one after the other: two of one name in one list are refused, since the upstream
    // could be offered only one of them. Where each is is written out only for that error (a string per tool
    // was garbage for a list of thousands), and kept in an array rather than a second map (`ToolSet.namespaced`)
    const listed = new Map<string, number>()
    const places: Array<number> = []
    const nameParam = (index: number, inner: number | undefined) =>
      inner === undefined || inner === -1 ? where(index, "name")! : where(index, "tools", inner, "name")!
    const unique = (name: string, index: number, inner?: number): Effect.Effect<void, RequestError> => {
      const first = listed.get(name)
      if (first === undefined) {
        listed.set(name, places.length)
        places.push(index, inner ?? -1)
        return Effect.void
      }
      const param = nameParam(index, inner)
      return fail(
        `Duplicate tool name '${name}': ${nameParam(places[first]!, places[first + 1])} and ${param} both name it. Tool names must be unique: the model could be offered only one of them.`,
        param,
        "invalid_value"
      )
    }
    /**
     * Records whether the tool `raw`, sent upstream as `sent`, waits for a search: a tool search's output
     * loads it; a declaration with `defer_loading` defers it unless it was declared (or loaded) before; one
     * without loads it.
     */
    const defer = (sent: string, raw: unknown, fresh: boolean, path: string, summary: () => string, wrap = (tool: unknown) => tool) => {
      if (!loads && fresh && isObject(raw) && raw.defer_loading === true) {
        set.deferred.set(sent, { path, tool: wrap(raw), summary: summary() })
      } else if (loads || !(isObject(raw) && raw.defer_loading === true)) {
        set.deferred.delete(sent)
      }
    }
    // thousands of tools are decoded in slices, other requests served between them
    const budget = makeBudget()
    for (let index = 0; index < rawTools.length; index++) {
      if (budget.tick()) yield* yieldToIo
      const tool = rawTools[index]
      const type = isObject(tool) ? stringField(tool, "type") : undefined
      if (type === "function" || type === "custom") {
        const declared = type === "function"
          ? yield* decodeAt(FunctionToolParam, tool, [...at, index])
          : yield* decodeAt(CustomToolParam, tool, [...at, index])
        yield* unique(declared.name, index)
        // the name of a client-run built-in an earlier list declared: the built-in gives it up
        if (isClientToolName(declared.name) && set[CLIENT_TOOLS[declared.name].field] === declared.name) {
          yield* rehomeBuiltIn(set, declared.name, rawTools, where(index)!)
        }
        const fresh = !set.sentOf.has(toolKey(undefined, declared.name))
        const sent = declared.type === "function"
          ? addTool(set, declared.name, (sent) => functionTool(declared, sent), false, undefined, claims)
          : addTool(set, declared.name, (sent) => customTool(declared, sent), true, undefined, claims)
        // loaded by a search: new, or declared with `defer_loading` and waiting for it
        if (loads && (fresh || set.deferred.has(sent))) set.searched.add(declared.name)
        defer(sent, tool, fresh, declared.name, () => searchSummary(declared.name, declared.description))
        names.push(sent)
      } else if (type === "namespace") {
        const group = yield* decodeAt(NamespaceToolParam, tool, [...at, index])
        if (group.name === "") {
          // a namespace's tools are told from others by its name (`toolKey`) and flattened with it: those of
          // a namespace without one would be the top-level tools of the same names (`x` of namespace "" is
          // `x`), and the upstream be offered only one of each; the API's wording for an empty string
          const param = where(index, "name")!
          return yield* fail(
            `Invalid '${param}': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
            param,
            "empty_string"
          )
        }
        const lead = namespaceLead(group.name, group.description)
        for (let inner = 0; inner < group.tools.length; inner++) {
          // a namespace's tools count as top-level ones: one of thousands is decoded in slices too (10,000
          // in one namespace were one stretch of about 150 ms)
          if (inner > 0 && budget.tick()) yield* yieldToIo
          const innerTool = group.tools[inner]
          const innerType = isObject(innerTool) ? stringField(innerTool, "type") : undefined
          const path = [...at, index, "tools", inner]
          const flat = (name: string) => flatName(group.name, name)
          if (innerType === "function" || innerType === "custom") {
            const declared = innerType === "function"
              ? yield* decodeAt(FunctionToolParam, innerTool, path)
              : yield* decodeAt(CustomToolParam, innerTool, path)
            yield* unique(`${group.name}.${declared.name}`, index, inner)
            const fresh = !set.sentOf.has(toolKey(group.name, declared.name))
            const sent = declared.type === "function"
              ? addTool(set, flat(declared.name), (sent) => functionTool(declared, sent, lead), false, group.name, claims)
              : addTool(set, flat(declared.name), (sent) => customTool(declared, sent, lead), true, group.name, claims)
            defer(
              sent,
              innerTool,
              fresh,
              `${group.name}.${declared.name}`,
              () => searchSummary(group.name, group.description, " (namespace)"),
              (inner) => ({
                type: "namespace",
                name: group.name,
                ...(group.description == null ? {} : { description: group.description }),
                tools: [inner]
              })
            )
            names.push(sent)
          } else {
            return yield* fail(
              `Unsupported tool type in namespace ${group.name}: ${String(innerType)}. This gateway supports function and custom tools there.`,
              where(index, "tools", inner, "type"),
              "unsupported_value"
            )
          }
        }
      } else if (type === "apply_patch" || type === "shell" || type === "local_shell") {
        // client-run: the upstream calls a function, the client gets an `apply_patch_call` / `shell_call` /
        // `local_shell_call`
        const { definition, field } = CLIENT_TOOLS[type]
        if (set[field] === undefined) {
          if (set.declared.get(definition.name) !== undefined || namesTopLevel(rawTools, definition.name)) {
            // a function or custom tool of the built-in's name (Codex's freeform `apply_patch` beside the
            // built-in, as packages/tools/README.md sets it up), in this list in either order or in an earlier
            // one (a later one: `rehomeBuiltIn`): it keeps the name, and the built-in is offered beside it under
            // a name of its own, whose calls come back as the built-in's items (a call that is no operation or
            // action: as a function call of the built-in's name)
            const sent = aliasOf(set, type, rawTools)
            set.tools.push(new LanguageModel.ToolDefinition({ ...definition, name: sent }, true))
            set.declared.set(sent, undefined)
            set.renamed.set(sent, definition.name)
            set[field] = sent
            yield* Effect.logDebug(
              `${where(index)}: the built-in ${type} tool is sent upstream as ${sent}: a function or custom tool is named ${definition.name}`
            )
          } else if (!set.declared.has(definition.name)) {
            addTool(set, definition.name, () => definition, false)
            set[field] = definition.name
          }
        }
        names.push(set[field] ?? definition.name)
      } else if (type === "tool_search") {
        // a client-run search is offered to the upstream as a function (`toolSearchTool`), a call of it
        // written back as a `tool_search_call` for the client to run; a hosted one (the default) cannot run
        // here: the upstream is shown every deferred tool instead
        const search = tool as Record<string, unknown>
        if (stringField(search, "execution") === "client" && !set.declared.has(TOOL_SEARCH)) {
          set.toolSearch = TOOL_SEARCH
          set.toolSearchSpec = {
            description: stringField(search, "description"),
            parameters: isObject(search.parameters) ? search.parameters : undefined
          }
        } else {
          yield* Effect.logDebug(
            `${where(index)}: hosted tool_search not sent upstream: every deferred tool is presented to the upstream`
          )
        }
      } else if (type !== undefined) {
        if (policy === "reject") {
          return yield* fail(`The built-in tool ${type} is not available through this gateway.`, where(index), "unsupported_value")
        }
        set.dropped.push(type)
        yield* Effect.logWarning(`built-in tool ${type} (${where(index)}) dropped: the upstream cannot run it`)
      } else {
        return yield* fail("Each tool must be an object with a string 'type'.", where(index, "type"), "invalid_type")
      }
    }
    return names
  })

/** The name of the function the client-run `apply_patch` tool is presented as. */
export const APPLY_PATCH = "apply_patch" as const

/**
 * The client-run `apply_patch` tool as a function: its arguments are the operation of an `apply_patch_call`
 * (API reference, `ApplyPatchToolCall`: `create_file` / `update_file` with a V4A `diff`, `delete_file`).
 */
const applyPatchTool = new LanguageModel.ToolDefinition({
  name: APPLY_PATCH,
  description:
    "Creates, updates or deletes one file. `type`: create_file, update_file or delete_file; `path`: the file, relative to the workspace; `diff` (create_file and update_file): a V4A diff. For create_file every line of the new file prefixed with `+`; for update_file one or more hunks, each starting with `@@` (optionally followed by a line to find), then lines prefixed with ` ` (context, three lines around each change), `-` (removed) and `+` (added).",
  parameters: {
    type: "object",
    properties: {
      type: { type: "string", enum: ["create_file", "update_file", "delete_file"] },
      path: { type: "string" },
      diff: { type: "string" }
    },
    required: ["type", "path"],
    additionalProperties: false
  },
  strict: false
})

/** The name of the function the client-run `shell` tool is presented as. */
export const SHELL = "shell" as const

/**
 * The client-run `shell` tool as a function: its arguments are the action of a `shell_call` (API reference,
 * `FunctionShellAction`: `commands` run in order, `timeout_ms` in milliseconds, `max_output_length` in
 * characters of output per command).
 */
const shellTool = new LanguageModel.ToolDefinition({
  name: SHELL,
  description:
    "Runs shell commands on the user's machine, in order, in the workspace. `commands`: the commands, each one shell command line; `timeout_ms` (optional): a time limit in milliseconds; `max_output_length` (optional): the most characters of output to return per command.",
  parameters: {
    type: "object",
    properties: {
      commands: { type: "array", items: { type: "string" } },
      timeout_ms: { type: "integer" },
      max_output_length: { type: "integer" }
    },
    required: ["commands"],
    additionalProperties: false
  },
  strict: false
})

/** The name of the function the client-run `local_shell` tool is presented as. */
export const LOCAL_SHELL = "local_shell" as const

/**
 * The client-run `local_shell` tool as a function: its arguments are the exec action of a
 * `local_shell_call` (API reference, `LocalShellExecAction`: `command` the argument vector, `timeout_ms` in
 * milliseconds, `working_directory`, `env` extra environment variables, `user` to run it as), without its
 * constant `type: "exec"`.
 */
const localShellTool = new LanguageModel.ToolDefinition({
  name: LOCAL_SHELL,
  description:
    "Runs one command on the user's machine. `command`: the program and its arguments, one array element each (e.g. [\"ls\", \"-la\"]; a shell command line as [\"bash\", \"-lc\", \"<line>\"]); `timeout_ms` (optional): a time limit in milliseconds; `working_directory` (optional): the directory to run it in; `env` (optional): environment variables to set; `user` (optional): the user to run it as.",
  parameters: {
    type: "object",
    properties: {
      command: { type: "array", items: { type: "string" } },
      timeout_ms: { type: "integer" },
      working_directory: { type: "string" },
      env: { type: "object", additionalProperties: { type: "string" } },
      user: { type: "string" }
    },
    required: ["command"],
    additionalProperties: false
  },
  strict: false
})

/**
 * The client-run built-in tools by `type`: the function each is presented as, its `ToolSet` field, and the
 * name it is presented under when a function or custom tool of the request has its name (`alias`; with a
 * hash when that is taken too).
 */
export const CLIENT_TOOLS = {
  apply_patch: { definition: applyPatchTool, field: "applyPatch", alias: "apply_patch_operation" },
  shell: { definition: shellTool, field: "shell", alias: "shell_commands" },
  local_shell: { definition: localShellTool, field: "localShell", alias: "local_shell_exec" }
} as const

/** Whether `name` is the name of a client-run built-in's function (`apply_patch`, `shell`, `local_shell`). */
export const isClientToolName = (name: string): name is keyof typeof CLIENT_TOOLS => Object.hasOwn(CLIENT_TOOLS, name)

/**
 * The name the client-run built-in `type` is offered under beside a function or custom tool of its name:
 * its `alias` (`apply_patch_operation`), with a hash when a tool of `set` or of `rawTools` (the list being
 * decoded) holds that too.
 */
const aliasOf = (set: ToolSet, type: keyof typeof CLIENT_TOOLS, rawTools: ReadonlyArray<unknown>): string => {
  const { alias } = CLIENT_TOOLS[type]
  let sent: string = alias
  for (let round = 1; set.declared.has(sent) || namesTopLevel(rawTools, sent); round++) {
    sent = distinctName(alias, `\u0000built-in:${type}`, round)
  }
  return sent
}

/**
 * A function or custom tool named as the client-run built-in `type` comes in a list after the one that
 * declared the built-in (the built-in in `tools`, a custom `apply_patch` in an `additional_tools` item): the
 * built-in gives up its name and is offered under its alias (`aliasOf`) instead, as when both are in one
 * list, so that the tool of that name gets it and both are offered (before, the later tool was taken for the
 * built-in declared again and dropped). The built-in's calls read from the input before are renamed by
 * `decodeInput`.
 */
const rehomeBuiltIn = (
  set: ToolSet,
  type: keyof typeof CLIENT_TOOLS,
  rawTools: ReadonlyArray<unknown>,
  where: string
): Effect.Effect<void> => {
  const { definition, field } = CLIENT_TOOLS[type]
  const sent = aliasOf(set, type, rawTools)
  const at = set.tools.findIndex((tool) => tool.name === definition.name)
  if (at >= 0) set.tools[at] = new LanguageModel.ToolDefinition({ ...definition, name: sent }, true)
  set.sentOf.delete(toolKey(undefined, definition.name))
  set.declared.delete(definition.name)
  set.declared.set(sent, undefined)
  set.renamed.set(sent, definition.name)
  set[field] = sent
  return Effect.logDebug(
    `${where}: the built-in ${type} tool is sent upstream as ${sent} from here on: a function or custom tool is named ${definition.name}`
  )
}

/** Whether a top-level function or custom tool of `rawTools` is named `name`. */
const namesTopLevel = (rawTools: ReadonlyArray<unknown>, name: string): boolean =>
  rawTools.some((tool) => isObject(tool) && (tool.type === "function" || tool.type === "custom") && tool.name === name)

/** A function tool as the upstream is offered it, under `name` (`upstreamName` of its flattened name). */
const functionTool = (tool: typeof FunctionToolParam.Type, name: string, lead?: string): LanguageModel.ToolDefinition =>
  // unvalidated: the fields were decoded by `FunctionToolParam` (validated again, 10,000 of them took 21 ms
  // of CPU, not 7, in a script, and made that much more garbage)
  new LanguageModel.ToolDefinition({
    name,
    ...descriptionField(tool.description, lead),
    parameters: tool.parameters ?? { type: "object", properties: {} },
    strict: tool.strict ?? false
  }, true)

/**
 * The `description` field of a tool sent upstream: its own description, after `lead` (its namespace's, see
 * `namespaceLead`) when it is in a namespace with one.
 */
const descriptionField = (description: string | null | undefined, lead: string | undefined): { description?: string } =>
  lead === undefined
    ? description == null ? {} : { description }
    : { description: description == null || description === "" ? lead : `${lead}\n\n${description}` }

/**
 * What a namespace's `description` adds to each of its tools' descriptions upstream (which knows no
 * namespaces: their tools go as functions `ns__tool`): `Namespace <name>: <the description's first line (`firstLine`),
 * at most SUMMARY_CHARS characters, `…` after a cut>`, then a blank line and the tool's own description. Made once per
 * namespace, so that the string work stays one concatenation per tool, and bounded, so that a namespace of
 * thousands of tools does not repeat a long description thousands of times in the upstream request.
 * `undefined` for a namespace with no (or a blank) description.
 */
const namespaceLead = (name: string, description: string | null | undefined): string | undefined =>
  firstLine(description) === "" ? undefined : `Namespace ${searchSummary(name, description)}`

/**
 * What the tool search's summaries and a namespace's lead keep of a description: its first line once leading
 * blank lines (and spaces) are skipped, trimmed; `""` for a missing or blank one. Only that line is read, so
 * a long description costs no more than its first line.
 */
const firstLine = (description: string | null | undefined): string => {
  const text = (description ?? "").trimStart()
  const end = text.indexOf("\n")
  return (end === -1 ? text : text.slice(0, end)).trim()
}

/** The characters of a tool's description the tool search's description keeps (its first line, cut here). */
const SUMMARY_CHARS = 200

/** `name` and the first line of `description` (`firstLine`, at most `SUMMARY_CHARS`), for the tool search's description. */
const searchSummary = (name: string, description: string | null | undefined, kind = ""): string => {
  const cut = AiError.excerpt(firstLine(description), SUMMARY_CHARS)
  return cut === "" ? `${name}${kind}` : `${name}${kind}: ${cut}`
}

/**
 * The parameters of a client-run tool search that declares none: `{paths: string[]}`, the API's built-in
 * client search as the Agents SDK runs it (`toolSearchTool({ execution: "client" })`) and as the API writes
 * a hosted search's arguments (`vai-openai-tool-search.chunks.txt`: `{"paths":["get_weather"]}`).
 */
const TOOL_SEARCH_PARAMETERS = {
  type: "object",
  properties: {
    paths: {
      type: "array",
      items: { type: "string" },
      description: "The tools to load: a tool's name, a namespace's name (all its tools), or namespace.tool."
    }
  },
  required: ["paths"],
  additionalProperties: false
} as const

/**
 * The function a client-run tool search is offered as (`TOOL_SEARCH`): the declared description (or one
 * saying what it does) followed by the names and descriptions of the tools it can load, as the API shows a
 * model what is searchable (deferred functions by name and description, namespaces by theirs); the declared
 * parameters, or `TOOL_SEARCH_PARAMETERS`.
 */
const toolSearchTool = (set: ToolSet): LanguageModel.ToolDefinition => {
  const summaries = new Set<string>()
  for (const deferred of set.deferred.values()) summaries.add(deferred.summary)
  const lead = set.toolSearchSpec?.description ??
    "Loads tools that are not loaded yet, so that you can call them in your next step. Load a tool before calling it."
  const description = summaries.size === 0
    ? lead
    : `${lead}\n\nTools to load:\n${[...summaries].map((summary) => `- ${summary}`).join("\n")}`
  const parameters = set.toolSearchSpec?.parameters
  return new LanguageModel.ToolDefinition({
    name: TOOL_SEARCH,
    description,
    parameters: isObject(parameters) ? parameters : TOOL_SEARCH_PARAMETERS,
    strict: false
  })
}

/**
 * The tools the upstream is offered, once the input's items added theirs: with a client-run tool search,
 * the tools no search needs to load (not deferred, or loaded by a `tool_search_output` of the input) and the
 * search itself (`toolSearchTool`), so that the upstream loads a deferred tool before calling it and the
 * client sees the search it runs; otherwise every tool, deferred or not (a hosted search cannot run here, so
 * the upstream is shown what it could load). `keep` names tools offered even when deferred (a `tool_choice`
 * naming one).
 */
export const offeredTools = (set: ToolSet, keep?: string): ReadonlyArray<LanguageModel.ToolDefinition> => {
  if (set.toolSearch === undefined || set.declared.has(set.toolSearch)) return set.tools
  const offered = set.deferred.size === 0
    ? set.tools.slice()
    : set.tools.filter((tool) => tool.name === keep || !set.deferred.has(tool.name))
  offered.push(toolSearchTool(set))
  return offered
}

/** The bound on the tools of one request in all (`ResponsesRequestDecoder.MAX_TOOLS`, documented there). */
export const MAX_TOOLS = 10_000

/**
 * The error for more than `maxTools` tools in all (`count` of them) once the list at `param` is counted:
 * 400 `array_above_max_length`, naming the bound and what it counts.
 */
export const tooManyToolsInAll = (count: number, maxTools: number, param: string): Effect.Effect<never, RequestError> =>
  fail(
    `Invalid '${param}': too many tools. Expected at most ${maxTools} tools in all (the tools of 'tools', of its namespaces, of 'additional_tools' and 'tool_search_output' items, which the upstream is sent together), but the request declares ${count} so far.`,
    param,
    "array_above_max_length"
  )
