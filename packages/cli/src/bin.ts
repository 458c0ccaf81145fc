import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Cli from "./Cli.js"

// One line per error, and a non-zero exit: the user sees what failed, not a stack trace.
Cli.run(process.argv).pipe(
  Effect.catchAllCause((cause) =>
    Effect.sync(() => {
      process.exitCode = 1
      const failure = Cause.failureOption(cause)
      if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) return
      const error = Cause.squash(cause)
      const message = error instanceof Error ? error.message : String(error)
      process.stderr.write(`effect-responses: ${message}\n`)
    })
  ),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
