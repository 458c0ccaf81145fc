/**
 * The command line as the executable runs it (loaded by `bin.ts` for everything but a bare `--version`):
 * `Cli.main` on `process.argv`, with the exit statuses below.
 *
 * @internal
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Cli from "../Cli.js"

// The exit status, as the README's command-line section documents it:
// - a closed standard output (the reader went away: `| head -1`) ends the verb at once, quietly, with 0:
//   the reader chose to stop reading, as `cat` ends with SIGPIPE ignored;
// - SIGINT (Ctrl-C) 130 and SIGTERM 143 (128 + the signal number), so that a half answer never looks
//   complete; the main fiber is interrupted first, which aborts an HTTP request in flight and lets `chat`
//   end its partial line with a marker; a second signal exits at once;
// - a failure 1 (one line on stderr, see `Cli.main`), a bad command line 2.
const SIGNAL_STATUS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 }
let received: NodeJS.Signals | undefined
const onSignal = (signal: NodeJS.Signals) => {
  if (received !== undefined) process.exit(SIGNAL_STATUS[received] ?? 1)
  received = signal
}
process.on("SIGINT", onSignal)
process.on("SIGTERM", onSignal)

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") process.exit(0)
  process.stderr.write(`effect-responses: cannot write to standard output (${error.code ?? error.message})\n`)
  process.exit(1)
})

// What the command line and the verbs use of the platform: files, paths and the terminal (of
// `NodeContext.layer`, without the command executor and the worker manager, which nothing here uses and
// start-up would read).
const platform = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

// One line per error, and a non-zero exit: the user sees what failed, not a stack trace (see `Cli.main`).
Cli.main(process.argv).pipe(
  Effect.provide(platform),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => {
      if (received !== undefined) return onExit(SIGNAL_STATUS[received] ?? 1)
      if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) return onExit(1)
      const code = process.exitCode
      onExit(typeof code === "number" ? code : 0)
    }
  })
)
