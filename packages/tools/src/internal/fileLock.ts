/**
 * One lock per file, keyed by the file itself: every file an operation touches takes the key of its real path
 * (its directory's real path and its name) and, when a file is there, the key of its device and inode
 * (`fileKey`), so the names of one hard-linked file share a key, and an operation that found no file yet and
 * one that found the file another created meanwhile share the path's. The keys are worked out before the
 * locks are taken, and again once they are held, by the operation's plan (`withResolvedFileLocks`: what it
 * reads or writes with the files as they are then, and as its own earlier steps leave them): when a key is
 * missing (a file created, a link replaced meanwhile; a path that goes where the disk alone did not say), the
 * operation lets the locks go and takes the new keys too, so it never runs without the lock of a file it
 * touches. The file operations of `ApplyPatch` that read or write
 * one file run one at a time, whoever calls them (the built-in `apply_patch` handler, a freeform custom tool
 * of any name, a caller of its own) and whatever root they were given, so two concurrent patches of one file
 * cannot both read it before either writes (the later write would drop the earlier edit): through two roots
 * nested in one another (`root` and `root/sub`), a link to the root, two spellings of the path, or two hard
 * links, a file is one key. An operation takes the locks of all the files it touches (a whole patch: of all its changes)
 * before it starts, in the order of their keys (so two operations never wait for each other), and holds them
 * until it ends. A lock is dropped once no operation holds or waits for it.
 */
import * as Effect from "effect/Effect"
import * as Fs from "node:fs/promises"

interface Lock {
  readonly semaphore: Effect.Semaphore
  users: number
}

const locks = new Map<string, Lock>()

const withLock = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      let lock = locks.get(key)
      if (lock === undefined) {
        lock = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(key, lock)
      }
      lock.users++
      return lock
    }),
    (lock) => lock.semaphore.withPermits(1)(effect),
    (lock) =>
      Effect.sync(() => {
        if (--lock.users === 0 && locks.get(key) === lock) locks.delete(key)
      })
  )

/**
 * The key of the file at `real` (a real path: its links followed, or for `entry` its directory's only):
 * `dev:ino` of what is there (`lstat` for an entry, a delete's, which removes a link itself); the real path
 * itself when nothing is there or it cannot be read.
 */
export const fileKey = (real: string, entry: boolean): Effect.Effect<string> =>
  Effect.promise(() =>
    (entry ? Fs.lstat(real, { bigint: true }) : Fs.stat(real, { bigint: true })).then(
      (stats) => `${stats.dev}:${stats.ino}`,
      () => real
    )
  )

/**
 * The keys of the lock of the file at `real` (as `fileKey`): its real path, and its `dev:ino` when a file is
 * there. Both, so that an operation that keyed the file before it existed (by path) and one that keyed it
 * after (by inode) share one, and two hard links of a file (two paths) share the other.
 */
export const fileKeys = (real: string, entry: boolean): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(fileKey(real, entry), (key) => key === real ? [real] : [real, key])

/**
 * `effect` run while holding the locks of `keys` (`fileKey`s of the files it reads or writes), taken one
 * after another in the order of the keys (waiting for each). Not reentrant.
 */
export const withFileLocks = <A, E, R>(keys: Iterable<string>, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Array.from(new Set(keys)).sort().reduceRight((inner, key) => withLock(key, inner), effect)

/**
 * `plan` run while holding the locks of the keys it needs, and its `run` then, under them: the locks of
 * `guess` (the keys worked out beforehand: `fileKeys` of the files the operation reads or writes) are taken
 * (`withFileLocks`) and `plan` is run; when the keys it returns (those of the files it found it touches, as
 * they are now) are all held, its `run` is run before the locks are let go. Otherwise (a file created or
 * replaced by the operation that held one of the locks, a file the guess did not know of) the locks are let
 * go and taken again with the missing keys too, and `plan` run again, until the locks held cover its keys.
 */
export const withResolvedFileLocks = <A, E, R>(
  guess: Effect.Effect<ReadonlyArray<string>>,
  plan: Effect.Effect<{ readonly keys: ReadonlyArray<string>; readonly run: Effect.Effect<A, E, R> }, never, R>
): Effect.Effect<A, E, R> => {
  const attempt = (held: ReadonlyArray<string>): Effect.Effect<A, E, R> =>
    Effect.flatMap(
      withFileLocks(
        held,
        Effect.flatMap(plan, ({ keys, run }): Effect.Effect<{ readonly done: true; readonly value: A } | { readonly done: false; readonly keys: ReadonlyArray<string> }, E, R> => {
          const missing = keys.filter((key) => !held.includes(key))
          return missing.length === 0
            ? Effect.map(run, (value) => ({ done: true as const, value }))
            : Effect.succeed({ done: false as const, keys: [...held, ...missing] })
        })
      ),
      (result) => result.done ? Effect.succeed(result.value) : attempt(result.keys)
    )
  return Effect.flatMap(guess, attempt)
}
