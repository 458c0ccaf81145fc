/**
 * The V8 options `serve` sets for itself, at the executable's start (`bin.ts`, before the command line and
 * the gateway's code are imported and compiled): a long-running server whose request path is everyone's code
 * (Effect's runtime and streams, Node's HTTP, undici, the gateway's own) run a few times per request.
 *
 * - `--interrupt-budget=16384` (V8's default is 67584, 66 KiB of bytecode run between two looks at whether a
 *   function is hot): V8 optimizes a hot function after about a quarter of the bytecode it otherwise runs
 *   interpreted first. The gateway's CPU per one-delta streamed request, fresh gateways 20 requests at a time,
 *   7 pairs alternated with the default (packages/bench/RESULTS.md, "the gateway's CPU per request, round
 *   10"): 0.67x over the 1,000 after the first 1,000; over the first 1,000 the main thread's share drops and
 *   V8's compiler threads take it back (0.85-1.14x); idle RSS unchanged; the longest main-thread stretch of
 *   a 10 MB request not longer.
 *
 * A budget the user gave `node` themselves (`node --interrupt-budget=N "$(command -v effect-responses)" serve`)
 * is left as given. The other verbs run once and end: they get none (not measured with it).
 *
 * @internal
 */

/** The options `serve` gets, in V8's spelling. */
export const SERVE_FLAGS: ReadonlyArray<string> = ["--interrupt-budget=16384"]

/**
 * The V8 options to set for a run of the executable with arguments `args` (`process.argv.slice(2)`) under
 * `node` options `execArgv` (`process.execArgv`): `SERVE_FLAGS` when the verb is `serve` (the first argument
 * that is no option and no `--log-level`'s value), less those whose name the user gave `node`; else none.
 */
export const flagsFor = (args: ReadonlyArray<string>, execArgv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const verb = args.find((arg, i) => !arg.startsWith("-") && args[i - 1] !== "--log-level")
  if (verb !== "serve") return []
  const given = new Set(execArgv.map(nameOf))
  return SERVE_FLAGS.filter((flag) => !given.has(nameOf(flag)))
}

/** `--interrupt-budget=16384` -> `interrupt-budget` (V8 takes `_` and `-` alike). */
const nameOf = (flag: string): string => flag.replace(/^--/, "").split("=")[0]!.replaceAll("_", "-")
