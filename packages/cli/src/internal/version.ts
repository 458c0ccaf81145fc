/**
 * The version of the command line, the package's `version` (written by `scripts/packages.mjs`, which keeps
 * it in step with `package.json`). A module of its own, importing nothing, so that the executable answers
 * `--version` before it loads anything else.
 *
 * @internal
 */
export const VERSION = "0.1.0"
