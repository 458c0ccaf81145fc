/**
 * The defaults the verbs' declarations (`commands.ts`) show in `--help`, kept in a module of their own that
 * imports neither `@effect/cli` nor the HTTP stack: the public modules that own them (`Demo`, `Request`,
 * `Protocol`) re-export them, and the declarations read them without loading those modules.
 *
 * @internal
 */
import * as Config from "effect/Config"

/** The prompt of the demo when none is given (`Demo.defaultPrompt`). @internal */
export const DEFAULT_PROMPT = "What is (12 + 7) * 3 * 10? Use the calculator for each step."

/** The model a `request` body names when `--model` is not given (`Request.DEFAULT_MODEL`). @internal */
export const DEFAULT_MODEL = "gpt-5.1"

/**
 * The most responses `serve --store` keeps by default: the server package's
 * `ResponseStore.DEFAULT_MAX_RESPONSES` (`Cli.test.ts` checks they agree), written out here so that the
 * declarations do not load the store.
 *
 * @internal
 */
export const DEFAULT_MAX_RESPONSES = 100_000

/** The protocol from `OPENAI_PROTOCOL` (default `responses`); `Protocol.protocolConfig`. @internal */
export const protocolConfig: Config.Config<"responses" | "chat-completions"> = Config.literal(
  "responses",
  "chat-completions"
)("OPENAI_PROTOCOL").pipe(Config.withDefault("responses" as const))
