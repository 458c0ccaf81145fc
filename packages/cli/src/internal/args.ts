/**
 * The command line's front end, in front of `@effect/cli`: it reads each verb's options and arguments from
 * the verb's `@effect/cli` command (so an option added there is known here, and shown in `--help`), then
 *
 * - parses `argv` itself: an argument starting with `-` that is not an option of the verb is an unknown
 *   option (named, with the verb's usage), never a positional argument; options may come anywhere, before
 *   or after the positional arguments; `--log-level LEVEL` and `--help` are accepted anywhere; everything
 *   after `--` is positional;
 * - checks the values of integer and choice options, and how many positional arguments the verb takes (a
 *   variadic argument, as `chat`'s PROMPT, takes all of them);
 * - prints the help of a verb or of the whole command in plain text (colour only on a terminal without
 *   `NO_COLOR`), with defaults, environment variables and examples;
 * - hands `@effect/cli` a canonical command line (verb, options, then the positional arguments).
 *
 * @internal
 */
import type * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

/** One option of a verb, as declared with `@effect/cli`. @internal */
export interface OptionSpec {
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  readonly flag: boolean
  readonly placeholder: string
  readonly description: string
  readonly choices: ReadonlyArray<string> | undefined
  readonly integer: boolean
  readonly required: boolean
  readonly defaultValue: string | undefined
  /**
   * What is wrong with a value by the option's own checks (`commands.checked`, any `Options.mapEffect`),
   * `undefined` when nothing is.
   */
  readonly problem?: ((value: string) => string | undefined) | undefined
}

/** One positional argument of a verb. @internal */
export interface ArgSpec {
  readonly name: string
  readonly description: string
  readonly optional: boolean
  readonly variadic: boolean
}

/** A verb: its name, description, options and positional arguments, plus the help's extra sections. @internal */
export interface VerbSpec {
  readonly name: string
  readonly description: string
  readonly options: ReadonlyArray<OptionSpec>
  readonly args: ReadonlyArray<ArgSpec>
  readonly environment: ReadonlyArray<readonly [string, string]>
  readonly examples: ReadonlyArray<string>
  readonly notes: ReadonlyArray<string>
}

/** What the help of a verb adds to what its `@effect/cli` command declares. @internal */
export interface HelpExtra {
  readonly environment?: ReadonlyArray<readonly [string, string]>
  readonly examples?: ReadonlyArray<string>
  readonly notes?: ReadonlyArray<string>
}

// The descriptor of `@effect/cli` commands and options is walked structurally: its node shapes (`Standard`,
// `Map`, `Both`, `WithDefault`, `Single`, `Variadic`, …) are those of @effect/cli 0.77, pinned in
// package-lock.json; `Cli.test.ts` checks every verb is read with its options.
interface Node {
  readonly _tag?: string
  readonly [key: string]: unknown
}

const isNode = (u: unknown): u is Node => typeof u === "object" && u !== null && "_tag" in u

const paragraphs = (doc: unknown): string => {
  const out: Array<string> = []
  const span = (s: unknown): string => {
    if (!isNode(s)) return ""
    if (typeof s.value === "string") return s.value
    if (s._tag === "Sequence") return span(s.left) + span(s.right)
    if (isNode(s.value)) return span(s.value)
    return ""
  }
  const walk = (d: unknown): void => {
    if (!isNode(d)) return
    if (d._tag === "Paragraph") out.push(span(d.value))
    else if (d._tag === "Sequence") {
      walk(d.left)
      walk(d.right)
    }
  }
  walk(doc)
  return out.join(" ").trim()
}

/** The value's name in the usage when the option has no pseudo name: `--host HOST`, `--key-env VAR`. */
const placeholderOf = (name: string): string =>
  name.endsWith("-env")
    ? "VAR"
    : name === "upstream" || name.endsWith("url")
    ? "URL"
    : name.endsWith("-out") || name.endsWith("file")
    ? "FILE"
    : name.split("-").pop()!.toUpperCase()

const fallbackText = (fallback: unknown): string | undefined => {
  if (Option.isOption(fallback)) return Option.isSome(fallback) ? String(fallback.value) : undefined
  if (fallback === false || fallback === undefined) return undefined
  return String(fallback)
}

const readOptions = (node: unknown, defaultValue: string | undefined, required: boolean, out: Array<OptionSpec>) => {
  if (!isNode(node)) return
  switch (node._tag) {
    case "Single": {
      const primitive = node.primitiveType as Node
      const pseudo = node.pseudoName as Option.Option<string>
      const choices = primitive._tag === "Choice"
        ? (primitive.alternatives as ReadonlyArray<readonly [string, unknown]>).map(([name]) => name)
        : undefined
      const flag = primitive._tag === "Bool"
      out.push({
        name: `--${String(node.name)}`,
        aliases: (node.aliases as ReadonlyArray<string>).map((alias) => alias.length === 1 ? `-${alias}` : `--${alias}`),
        flag,
        placeholder: Option.isSome(pseudo)
          ? pseudo.value
          : choices !== undefined
          ? choices.join("|")
          : primitive._tag === "Integer"
          ? "N"
          : placeholderOf(String(node.name)),
        description: paragraphs(node.description),
        choices,
        integer: primitive._tag === "Integer",
        required: required && !flag,
        defaultValue: flag ? undefined : defaultValue
      })
      return
    }
    case "WithDefault":
      return readOptions(node.options, fallbackText(node.fallback), false, out)
    case "Map": {
      // `Options.mapEffect` (and `map`): its function checks a value, run on the value as @effect/cli would
      // (an integer option's value as a number), after any check inside it
      const inner: Array<OptionSpec> = []
      readOptions(node.options, defaultValue, required, inner)
      const f = node.f as (value: unknown) => Effect.Effect<unknown, unknown>
      if (inner.length !== 1 || typeof f !== "function") {
        out.push(...inner)
        return
      }
      const spec = inner[0]!
      out.push({ ...spec, problem: (value) => spec.problem?.(value) ?? problemOf(f, spec.integer ? Number(value) : value) })
      return
    }
    case "WithFallback":
      return readOptions(node.options, defaultValue, false, out)
    case "Both":
      readOptions(node.left, defaultValue, required, out)
      return readOptions(node.right, defaultValue, required, out)
    case "OrElse":
      readOptions(node.left, defaultValue, false, out)
      return readOptions(node.right, defaultValue, false, out)
    default:
      for (const key of ["options", "value"]) if (isNode(node[key])) readOptions(node[key], defaultValue, required, out)
  }
}

/** What `f` (an `Options.mapEffect` function) finds wrong with `value`, `undefined` when it takes it. */
const problemOf = (f: (value: unknown) => Effect.Effect<unknown, unknown>, value: unknown): string | undefined => {
  const result = Effect.runSync(Effect.either(Effect.suspend(() => f(value))))
  if (Either.isRight(result)) return undefined
  const error = result.left
  const text = isNode(error) ? paragraphs(error.error) : ""
  return text === "" ? `'${String(value)}' is not a valid value` : text
}

const readArgs = (node: unknown, optional: boolean, variadic: boolean, out: Array<ArgSpec>) => {
  if (!isNode(node)) return
  switch (node._tag) {
    case "Single": {
      const pseudo = node.pseudoName as Option.Option<string>
      out.push({
        name: Option.getOrElse(pseudo, () => String(node.name).replace(/^<|>$/g, "")),
        description: paragraphs(node.description),
        optional,
        variadic
      })
      return
    }
    case "WithDefault":
      return readArgs(node.args, true, variadic, out)
    case "Variadic": {
      const min = node.min
      const atLeast = Option.isOption(min) ? Option.getOrElse(min, () => 0) : typeof min === "number" ? min : 0
      return readArgs(node.args, optional || atLeast === 0, true, out)
    }
    case "Both":
      readArgs(node.left, optional, variadic, out)
      return readArgs(node.right, optional, variadic, out)
    default:
      for (const key of ["args", "value"]) if (isNode(node[key])) readArgs(node[key], optional, variadic, out)
  }
}

/** The descriptor `Standard` node of a command (under any `Map`s). */
const standard = (node: unknown): Node | undefined => {
  if (!isNode(node)) return undefined
  if (node._tag === "Standard") return node
  return standard(node.command) ?? standard(node.descriptor)
}

/** Reads a verb's spec from its `@effect/cli` command. @internal */
export const verbSpec = (command: Command.Command<string, never, unknown, unknown>, extra: HelpExtra = {}): VerbSpec => {
  const node = standard((command as unknown as { readonly descriptor: unknown }).descriptor)
  const options: Array<OptionSpec> = []
  const args: Array<ArgSpec> = []
  if (node !== undefined) {
    readOptions(node.options, undefined, true, options)
    readArgs(node.args, false, false, args)
  }
  return {
    name: node === undefined ? "?" : String(node.name),
    description: node === undefined ? "" : paragraphs(node.description),
    options,
    args,
    environment: extra.environment ?? [],
    examples: extra.examples ?? [],
    notes: extra.notes ?? []
  }
}

/** The log levels `--log-level` takes. @internal */
export const LOG_LEVELS = ["all", "trace", "debug", "info", "warning", "error", "fatal", "none"] as const

/** @internal */
export type LogLevelName = typeof LOG_LEVELS[number]

/** The options every verb takes, shown in every help. @internal */
export const globalOptions: ReadonlyArray<readonly [string, string]> = [
  ["--log-level LEVEL", `what goes to stderr: ${LOG_LEVELS.join("|")} (default: warning); anywhere on the line`],
  ["-h, --help", "this help"]
]

/** The result of reading a command line. @internal */
export type Parsed =
  | { readonly _tag: "Run"; readonly argv: ReadonlyArray<string>; readonly logLevel: LogLevelName | undefined }
  | { readonly _tag: "Help"; readonly verb: VerbSpec | undefined; readonly logLevel: LogLevelName | undefined }
  | { readonly _tag: "Version" }
  | { readonly _tag: "UsageError"; readonly message: string; readonly verb: VerbSpec | undefined }

/** `--log-level LEVEL` / `--log-level=LEVEL`, anywhere before `--`, taken out of `args`. */
const takeLogLevel = (
  args: ReadonlyArray<string>
): { readonly rest: ReadonlyArray<string>; readonly level: LogLevelName | undefined; readonly error?: string } => {
  const rest: Array<string> = []
  let level: LogLevelName | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    let value: string | undefined
    if (arg === "--log-level") {
      value = args[i + 1]
      i++
      if (value === undefined) return { rest, level, error: "option --log-level needs a value" }
    } else if (arg.startsWith("--log-level=")) {
      value = arg.slice("--log-level=".length)
    } else {
      rest.push(arg)
      continue
    }
    const known = LOG_LEVELS.find((name) => name === value.toLowerCase())
    if (known === undefined) {
      return { rest, level, error: `option --log-level: '${value}' is not one of ${LOG_LEVELS.join(", ")}` }
    }
    level = known
  }
  return { rest, level }
}

const isHelp = (arg: string) => arg === "--help" || arg === "-h"

// The shells `--completions` writes a script for. `@effect/cli` also takes `sh`, for which it writes the
// bash script (arrays, `complete`), which POSIX sh rejects: POSIX sh has no programmable completion.
const COMPLETION_SHELLS: ReadonlyArray<string> = ["bash", "fish", "zsh"]

/**
 * Reads `argv` (as `process.argv`: node and the script first) against the verbs. `--version` alone is
 * read here (as the executable reads it before loading the command line); the other built-in options of
 * `@effect/cli` at the top (`--completions SHELL`, `--wizard`) pass through unchanged, but for a
 * `--completions` shell other than bash, fish or zsh (`sh`, `pwsh`, none), refused here as a bad command line.
 *
 * @internal
 */
export const parse = (argv: ReadonlyArray<string>, verbs: ReadonlyArray<VerbSpec>): Parsed => {
  const head = argv.slice(0, 2)
  const taken = takeLogLevel(argv.slice(2))
  const logLevel = taken.level
  if (taken.error !== undefined) return { _tag: "UsageError", message: taken.error, verb: undefined }
  const args = taken.rest
  const first = args[0]
  if (first === undefined || isHelp(first)) return { _tag: "Help", verb: undefined, logLevel }
  if (first === "--version" && args.length === 1) return { _tag: "Version" }
  if (first === "--completions" || first.startsWith("--completions=")) {
    const shell = first === "--completions" ? args[1] : first.slice("--completions=".length)
    if (shell === undefined || !COMPLETION_SHELLS.includes(shell)) {
      const supported = `the supported shells are ${COMPLETION_SHELLS.join(", ")}`
      return {
        _tag: "UsageError",
        message: shell === undefined
          ? `option --completions: give a shell; ${supported}`
          : shell === "sh"
          ? `option --completions: 'sh' is not supported (POSIX sh has no programmable completion); ${supported}`
          : `option --completions: the shell '${shell}' is not supported; ${supported}`,
        verb: undefined
      }
    }
  }
  if (first.startsWith("-")) {
    // @effect/cli's own options at the top: --version, --completions, --wizard
    return { _tag: "Run", argv: [...head, ...args], logLevel }
  }
  const verb = verbs.find((v) => v.name === first)
  if (verb === undefined) {
    return {
      _tag: "UsageError",
      message: `unknown command '${first}' (the commands are ${verbs.map((v) => v.name).join(", ")})`,
      verb: undefined
    }
  }
  const rest = args.slice(1)
  const end = rest.indexOf("--")
  if ((end === -1 ? rest : rest.slice(0, end)).some(isHelp)) return { _tag: "Help", verb, logLevel }
  if ((end === -1 ? rest : rest.slice(0, end)).includes("--wizard")) {
    return { _tag: "Run", argv: [...head, verb.name, "--wizard"], logLevel }
  }

  const fail = (message: string): Parsed => ({ _tag: "UsageError", message, verb })
  const find = (name: string) => verb.options.find((o) => o.name === name || o.aliases.includes(name))
  const options: Array<string> = []
  const seen = new Set<string>()
  const positionals: Array<string> = []
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    if (arg === "--") {
      positionals.push(...rest.slice(i + 1))
      break
    }
    if (arg === "-" || !arg.startsWith("-") || /^-\d/.test(arg)) {
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf("=")
    const name = arg.startsWith("--") && eq !== -1 ? arg.slice(0, eq) : arg
    const option = find(name)
    if (option === undefined) {
      const words = positionals.length + rest.slice(i + 1).filter((a) => !a.startsWith("-")).length
      const hint = verb.args.some((a) => a.variadic) && words > 0
        ? ` (to send it as text, put it after --: effect-responses ${verb.name} -- ${JSON.stringify(arg)})`
        : ""
      return fail(`unknown option ${name}${hint}`)
    }
    if (seen.has(option.name)) return fail(`option ${option.name} is given twice`)
    seen.add(option.name)
    if (option.flag) {
      if (eq !== -1) return fail(`option ${option.name} takes no value`)
      options.push(option.name)
      continue
    }
    let value: string
    if (eq !== -1 && arg.startsWith("--")) {
      value = arg.slice(eq + 1)
    } else {
      const next = rest[i + 1]
      if (next === undefined || next === "--" || isHelp(next) || (next.startsWith("--") && find(next.split("=")[0]!))) {
        return fail(`option ${option.name} needs a value (${option.placeholder})`)
      }
      value = next
      i++
    }
    if (option.choices !== undefined && !option.choices.includes(value)) {
      return fail(`option ${option.name}: '${value}' is not one of ${option.choices.join(", ")}`)
    }
    if (option.integer && !/^-?\d+$/.test(value)) return fail(`option ${option.name}: '${value}' is not an integer`)
    const problem = option.problem?.(value)
    if (problem !== undefined) return fail(`option ${option.name}: ${problem}`)
    options.push(option.name, value)
  }
  const missing = verb.options.find((o) => o.required && !seen.has(o.name))
  if (missing !== undefined) return fail(`option ${missing.name} ${missing.placeholder} is required`)

  const variadic = verb.args.some((a) => a.variadic)
  const required = verb.args.filter((a) => !a.optional).length
  if (positionals.length < required) {
    const absent = verb.args.filter((a) => !a.optional)[positionals.length]!
    return fail(`missing ${absent.name}`)
  }
  if (!variadic && positionals.length > verb.args.length) {
    const extra = positionals[verb.args.length]!
    return fail(
      verb.args.length === 0
        ? `unexpected argument '${extra}' (${verb.name} takes no positional argument)`
        : `unexpected argument '${extra}' (${verb.name} takes one ${verb.args.map((a) => a.name).join(" ")})`
    )
  }
  // @effect/cli reads options before positional arguments, and a positional argument starting with `-` as
  // an option: `--` keeps them apart when one does.
  const separator = positionals.some((p) => p.startsWith("-") && p !== "-") ? ["--"] : []
  return { _tag: "Run", argv: [...head, verb.name, ...options, ...separator, ...positionals], logLevel }
}

/** Whether standard output gets colour: a terminal, `NO_COLOR` unset or empty, `TERM` not `dumb`. @internal */
export const useColour = (stream: { readonly isTTY?: boolean | undefined }): boolean =>
  stream.isTTY === true && (process.env.NO_COLOR ?? "") === "" && process.env.TERM !== "dumb"

const bold = (colour: boolean) => (s: string) => colour ? `\x1b[1m${s}\x1b[22m` : s

/** The one-line usage of a verb: `effect-responses chat [options] [PROMPT...]`. @internal */
export const usageLine = (verb: VerbSpec): string => {
  const options = verb.options.map((o) => {
    const text = o.flag ? o.name : `${o.name} ${o.placeholder}`
    return o.required ? text : `[${text}]`
  })
  const args = verb.args.map((a) => {
    const text = a.variadic ? `${a.name}...` : a.name
    return a.optional ? `[${text}]` : text
  })
  return `effect-responses ${verb.name} ${[...args, ...options].join(" ")}`.trimEnd()
}

const table = (rows: ReadonlyArray<readonly [string, string]>, width = 78): string => {
  const column = Math.min(28, Math.max(...rows.map(([left]) => left.length)) + 2)
  const wrap = (text: string, indent: number): Array<string> => {
    const lines: Array<string> = []
    let line = ""
    for (const word of text.split(/\s+/).filter((w) => w !== "")) {
      if (line !== "" && indent + line.length + 1 + word.length > width) {
        lines.push(line)
        line = word
      } else line = line === "" ? word : `${line} ${word}`
    }
    if (line !== "") lines.push(line)
    return lines
  }
  return rows.map(([left, right]) => {
    const body = wrap(right, column + 2)
    const pad = " ".repeat(column + 2)
    const first = left.length <= column - 2 ? `  ${left.padEnd(column)}${body[0] ?? ""}` : `  ${left}\n${pad}${body[0] ?? ""}`
    return [first, ...body.slice(1).map((l) => `${pad}${l}`)].join("\n")
  }).join("\n")
}

const optionRow = (o: OptionSpec): readonly [string, string] => {
  const names = [...o.aliases, o.name].join(", ")
  const left = o.flag ? names : `${names} ${o.placeholder}`
  const parts = [o.description]
  if (o.required) parts.push("(required)")
  else if (o.defaultValue !== undefined && !/\(default/.test(o.description)) parts.push(`(default: ${o.defaultValue})`)
  return [left, parts.join(" ").trim()]
}

/** The help of one verb, plain text unless `colour`. @internal */
export const verbHelp = (verb: VerbSpec, colour: boolean): string => {
  const h = bold(colour)
  const sections: Array<string> = [
    `effect-responses ${verb.name}: ${verb.description}`,
    `${h("Usage:")}\n  ${usageLine(verb)}`
  ]
  if (verb.notes.length > 0) sections.push(verb.notes.join("\n"))
  if (verb.args.length > 0) {
    sections.push(`${h("Arguments:")}\n${table(verb.args.map((a) => [a.variadic ? `${a.name}...` : a.name, a.description]))}`)
  }
  sections.push(`${h("Options:")}\n${table([...verb.options.map(optionRow), ...globalOptions])}`)
  if (verb.environment.length > 0) sections.push(`${h("Environment:")}\n${table(verb.environment)}`)
  if (verb.examples.length > 0) sections.push(`${h("Examples:")}\n${verb.examples.map((e) => `  ${e}`).join("\n")}`)
  return `${sections.join("\n\n")}\n`
}

/** The help of the whole command, plain text unless `colour`. @internal */
export const rootHelp = (
  verbs: ReadonlyArray<VerbSpec>,
  description: string,
  version: string,
  extra: HelpExtra,
  colour: boolean
): string => {
  const h = bold(colour)
  const sections = [
    `effect-responses ${version}: ${description}`,
    `${h("Usage:")}\n  effect-responses COMMAND [options]\n  effect-responses COMMAND --help`,
    `${h("Commands:")}\n${table(verbs.map((v) => [v.name, v.description]))}`,
    `${h("Options:")}\n${
      table([
        ...globalOptions,
        ["--version", "print the version"],
        ["--completions SHELL", "print a completion script for bash, fish or zsh"],
        ["--wizard", "build a command line by answering questions (on standard error; answers from a terminal)"]
      ])
    }`
  ]
  if ((extra.environment ?? []).length > 0) sections.push(`${h("Environment:")}\n${table(extra.environment ?? [])}`)
  if ((extra.examples ?? []).length > 0) {
    sections.push(`${h("Examples:")}\n${(extra.examples ?? []).map((e) => `  ${e}`).join("\n")}`)
  }
  if ((extra.notes ?? []).length > 0) sections.push((extra.notes ?? []).join("\n"))
  return `${sections.join("\n\n")}\n`
}
