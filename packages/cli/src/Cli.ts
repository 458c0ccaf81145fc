/**
 * The `effect-responses` command line.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Aggregate from "./Aggregate.js"
import * as Chat from "./Chat.js"
import * as Decode from "./Decode.js"
import * as Request from "./Request.js"
import * as Serve from "./Serve.js"

/**
 * The root command and its verbs.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("effect-responses").pipe(
  Command.withDescription("a typed, streaming, Effect-native toolkit for OpenAI's Responses API"),
  Command.withSubcommands([Chat.command, Decode.command, Aggregate.command, Serve.command, Request.command])
)

/**
 * Runs the command line on `argv` (as `process.argv`: node and the script first).
 *
 * @since 0.1.0
 * @category running
 */
export const run = Command.run(command, { name: "effect-responses", version: "0.1.0" })
