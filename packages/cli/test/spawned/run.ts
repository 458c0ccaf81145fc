/**
 * Runs the built executable (`bin/effect-responses.mjs`, written by `npm run build`) as a user runs it, in a
 * child process, asynchronously: a test that also serves HTTP in this process must not block its event loop
 * (as `spawnSync` would).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/** The executable. */
export const bin = fileURLToPath(new URL("../../bin/effect-responses.mjs", import.meta.url))

/** What a run ends with. */
export interface Result {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** A running process: the child, its output so far, and how it ends. */
export interface Running {
  readonly child: ChildProcessWithoutNullStreams
  readonly output: () => { readonly stdout: string; readonly stderr: string }
  /** Resolves once standard output holds text matching `pattern`; rejects when the process ends first. */
  readonly waitFor: (pattern: RegExp) => Promise<void>
  readonly done: Promise<Result>
}

/**
 * The environment of a run: this process's, without the variables that would send `chat` to a live model,
 * and without colours; `env` entries are added (an `undefined` one removed).
 */
export const environment = (env: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv => {
  const out: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_PROTOCOL", "NO_COLOR", "FORCE_COLOR"]) delete out[name]
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete out[name]
    else out[name] = value
  }
  return out
}

/** Starts the executable with `args`; `input` is written to its standard input (which then closes). */
export const start = (
  args: ReadonlyArray<string>,
  options: {
    readonly env?: Readonly<Record<string, string | undefined>>
    readonly input?: string
    readonly nodeOptions?: ReadonlyArray<string>
  } = {}
): Running => {
  const child = spawn(process.execPath, [...(options.nodeOptions ?? []), bin, ...args], {
    env: environment(options.env),
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  const waiters: Array<{ pattern: RegExp; resolve: () => void; reject: (error: Error) => void }> = []
  child.stdout.setEncoding("utf8")
  child.stderr.setEncoding("utf8")
  child.stdout.on("data", (data: string) => {
    stdout += data
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(stdout)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
    }
  })
  child.stderr.on("data", (data: string) => {
    stderr += data
  })
  child.stdin.on("error", () => {})
  if (options.input !== undefined) child.stdin.end(options.input)
  const done = new Promise<Result>((resolve) => {
    child.on("close", (status, signal) => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`exited (${status ?? signal}) before ${waiter.pattern}: ${stdout}${stderr}`))
      }
      resolve({ status, signal, stdout, stderr })
    })
  })
  return {
    child,
    output: () => ({ stdout, stderr }),
    waitFor: (pattern) =>
      pattern.test(stdout) ? Promise.resolve() : new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve, reject })
      }),
    done
  }
}

/** Runs the executable with `args` to its end (standard input closed, or holding `input`). */
export const run = (
  args: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string | undefined>>; readonly input?: string } = {}
): Promise<Result> => start(args, { ...options, input: options.input ?? "" }).done

/** A process on a terminal: the child (`script`), what the terminal showed so far, and how it ends. */
export interface OnTerminal {
  readonly child: ChildProcessWithoutNullStreams
  /** What the terminal showed, without its ANSI control sequences unless `raw`. */
  readonly screen: (raw?: boolean) => string
  /**
   * Waits until `text` shows on the terminal after what the previous call waited for, then types `keys`;
   * rejects when the process ends first.
   */
  readonly answer: (text: string, keys: string) => Promise<void>
  /** The exit status of the process (that of `script`, which passes on the executable's). */
  readonly done: Promise<number | null>
}

const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`

/**
 * Starts the executable with `args` on a terminal: `script` (util-linux) gives it a pseudo-terminal as
 * standard input, output and error, unless `stdoutTo` names a file standard output is redirected to. The
 * environment is that of `environment(env)`.
 */
export const onTerminal = (
  args: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string | undefined>>; readonly stdoutTo?: string } = {}
): OnTerminal => {
  const line = [process.execPath, bin, ...args].map(quote).join(" ") +
    (options.stdoutTo === undefined ? "" : ` > ${quote(options.stdoutTo)}`)
  const child = spawn("script", ["-qfec", `exec ${line}`, "/dev/null"], {
    env: environment(options.env),
    stdio: ["pipe", "pipe", "pipe"]
  })
  let raw = ""
  let read = 0
  const waiters: Array<() => void> = []
  const plain = () => raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (data: string) => {
    raw += data
    for (const waiter of waiters.splice(0)) waiter()
  })
  const done = new Promise<number | null>((resolve) =>
    child.on("close", (status) => {
      for (const waiter of waiters.splice(0)) waiter()
      resolve(status)
    })
  )
  return {
    child,
    screen: (asShown = false) => asShown ? raw : plain(),
    answer: async (text, keys) => {
      while (plain().indexOf(text, read) === -1) {
        if (child.exitCode !== null) throw new Error(`ended before "${text}" showed: ${plain()}`)
        await new Promise<void>((resolve) => waiters.push(resolve))
      }
      read = plain().indexOf(text, read) + text.length
      child.stdin.write(keys)
    },
    done
  }
}
