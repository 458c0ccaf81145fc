/**
 * The arguments of the function a client-run built-in tool (`shell`, `apply_patch`, `local_shell`) is
 * offered as where it cannot be offered itself (a Chat Completions upstream behind the gateway of
 * `@effect-responses/server`): the JSON object the model writes as the function call's `arguments` is the
 * built-in call's action or operation. The gateway writes a function call whose arguments decode with the
 * tool's schema here as the built-in's item (`shell_call`, `apply_patch_call`, `local_shell_call`), and one
 * whose arguments do not as the function call it was; the tool loop of `@effect-responses/tools`
 * (`ToolExecutor`) answers such a function call naming its first wrong field (`problem`). One definition for
 * both, so that they agree on every argument.
 *
 * Limits are whole numbers, 0 or more (milliseconds, characters); an optional field may be `null` (strict
 * function calling sends `null` for a property left out), and decodes as the API writes a field not given
 * (`null`, `{}` for `env`). Fields the shapes do not name are ignored.
 *
 * @since 0.2.0
 */
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Part from "./Part.js"

/** A limit of an action: a whole number, 0 or more (any size: JSON's whole numbers past 2^53 too). */
const Limit = Schema.Number.pipe(
  Schema.filter((n) => Number.isInteger(n), { description: "an integer" }),
  Schema.nonNegative()
)

/** An optional limit or text: absent and `null` decode as `null`, as the API writes a limit not given. */
const optionalOrNull = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(Schema.NullOr(schema), { default: () => null })

/**
 * The arguments of the `shell` function: a `shell_call`'s action. `commands` run in order; `timeout_ms`
 * (milliseconds) and `max_output_length` (characters of output per command), `null` when not given. Source:
 * API reference, `FunctionShellAction`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ShellAction = Schema.Struct({
  commands: Schema.Array(Schema.String),
  timeout_ms: optionalOrNull(Limit),
  max_output_length: optionalOrNull(Limit)
})

/**
 * @since 0.2.0
 * @category schemas
 */
export type ShellAction = typeof ShellAction.Type

const OPERATION_TYPES = ["create_file", "update_file", "delete_file"] as const

/** An operation's `type`: a string (named so when it is none), one of the three. */
const OperationType = Schema.String.pipe(
  Schema.filter((type): type is typeof OPERATION_TYPES[number] => (OPERATION_TYPES as ReadonlyArray<string>).includes(type), {
    message: (issue) => `Expected ${OPERATION_TYPES.map((type) => JSON.stringify(type)).join(" | ")}, actual ${JSON.stringify(issue.actual)}`
  })
)

/** The `diff` of a `create_file` or `update_file` operation. */
const Diff = Schema.Struct({ diff: Schema.String })

/**
 * The arguments of the `apply_patch` function: an `apply_patch_call`'s operation, decoding as
 * `Part.ApplyPatchOperation` (`type` `create_file` or `update_file` with `path` and a V4A `diff`,
 * `delete_file` with `path`; a `diff` beside `delete_file` is dropped). Checked in that order: `type` and
 * `path`, then `diff` unless the type is `delete_file`. Source: API reference,
 * `ApplyPatchCreateFileOperation` / `ApplyPatchUpdateFileOperation` / `ApplyPatchDeleteFileOperation`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ApplyPatchOperation = Schema.transformOrFail(
  Schema.Struct({ type: OperationType, path: Schema.String, diff: Schema.optional(Schema.Unknown) }),
  Schema.typeSchema(Part.ApplyPatchOperation),
  {
    strict: true,
    decode: ({ path, type, ...rest }) =>
      type === "delete_file"
        ? ParseResult.succeed({ type, path })
        : ParseResult.map(ParseResult.decodeUnknown(Diff)(rest), ({ diff }) => ({ type, path, diff })),
    encode: (operation) => ParseResult.succeed(operation)
  }
)

/**
 * @since 0.2.0
 * @category schemas
 */
export type ApplyPatchOperation = Part.ApplyPatchOperation

/**
 * The arguments of the `local_shell` function: a `local_shell_call`'s exec action without its constant
 * `type: "exec"`. `command` is the argument vector; `timeout_ms` (milliseconds), `working_directory` and
 * `user` are `null` when not given, `env` (extra environment variables) `{}`. Source: API reference,
 * `LocalShellExecAction`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const LocalShellExecAction = Schema.Struct({
  command: Schema.Array(Schema.String),
  timeout_ms: optionalOrNull(Limit),
  working_directory: optionalOrNull(Schema.String),
  env: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), {
    nullable: true,
    default: () => ({})
  }),
  user: optionalOrNull(Schema.String)
})

/**
 * @since 0.2.0
 * @category schemas
 */
export type LocalShellExecAction = typeof LocalShellExecAction.Type

/**
 * The client-run built-in tools whose calls may come as function calls, by the function's name.
 *
 * @since 0.2.0
 * @category models
 */
export type Name = "shell" | "apply_patch" | "local_shell"

/**
 * The schema of each built-in's function arguments, by the function's name.
 *
 * @since 0.2.0
 * @category schemas
 */
export const schemas: {
  readonly shell: typeof ShellAction
  readonly apply_patch: typeof ApplyPatchOperation
  readonly local_shell: typeof LocalShellExecAction
} = { shell: ShellAction, apply_patch: ApplyPatchOperation, local_shell: LocalShellExecAction }

/**
 * Whether `name` is the name of a client-run built-in's function (`shell`, `apply_patch`, `local_shell`).
 *
 * @since 0.2.0
 * @category guards
 */
export const isName = (name: string): name is Name => Object.hasOwn(schemas, name)

const decoders = {
  shell: Schema.decodeUnknownEither(ShellAction),
  apply_patch: Schema.decodeUnknownEither(ApplyPatchOperation),
  local_shell: Schema.decodeUnknownEither(LocalShellExecAction)
}

/**
 * The action of a `shell_call` from the function's arguments (a parsed JSON value); `None` when they are
 * no such action.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeShellAction = (args: unknown): Option.Option<ShellAction> => Option.getRight(decoders.shell(args))

/**
 * The operation of an `apply_patch_call` from the function's arguments (a parsed JSON value); `None` when
 * they are no such operation.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeApplyPatchOperation = (args: unknown): Option.Option<ApplyPatchOperation> =>
  Option.getRight(decoders.apply_patch(args))

/**
 * The exec action of a `local_shell_call` (without `type`) from the function's arguments (a parsed JSON
 * value); `None` when they are no such action.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeLocalShellExecAction = (args: unknown): Option.Option<LocalShellExecAction> =>
  Option.getRight(decoders.local_shell(args))

/**
 * What is wrong with the arguments (a parsed JSON value) of the function of the built-in `name`: its first
 * field that does not match, in the fields' order, named as the Responses decoder names a malformed built-in
 * item's field: `commands: Expected ReadonlyArray<string>, actual "notalist"`, `diff is missing`,
 * `type: Expected "create_file" | "update_file" | "delete_file", actual "rename_file"`, `timeout_ms: Expected
 * a non-negative number, actual -1`; `the arguments: …` when the value itself is no object. `undefined` when
 * they match.
 *
 * @since 0.2.0
 * @category decoding
 */
export const problem = (name: Name, args: unknown): string | undefined => {
  const decoded = decoders[name](args)
  if (decoded._tag === "Right") return undefined
  const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
  const where = issue === undefined || issue.path.length === 0 ? "the arguments" : issue.path.join(".")
  const what = issue?.message ?? "do not match the tool's parameters"
  return what === "is missing" ? `${where} is missing` : `${where}: ${what}`
}
