/**
 * The `effect-responses` command line.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Chat from "./Chat.js"

/**
 * The root command and its verbs.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("effect-responses").pipe(
  Command.withDescription("a typed, streaming, Effect-native toolkit for OpenAI's Responses API"),
  Command.withSubcommands([Chat.command])
)

/**
 * Runs the command line on `argv` (as `process.argv`: node and the script first).
 *
 * @since 0.1.0
 * @category running
 */
export const run = Command.run(command, { name: "effect-responses", version: "0.1.0" })
