/**
 * One lock per file, keyed by the file itself: an existing file by its device and inode (`fileKey`), so the
 * names of one hard-linked file are one key; a file that does not exist yet by its real path (its
 * directory's real path and its name). The file operations of `ApplyPatch` that read or write
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
 * The key of the lock of the file at `real` (a real path: its links followed, or for `entry` its directory's
 * only): `dev:ino` of what is there (`lstat` for an entry, a delete's, which removes a link itself), so two
 * hard links to one file take one lock (their real paths differ); the real path itself when nothing is
 * there (a file to create: whoever creates it by that path takes the same key) or it cannot be read.
 */
export const fileKey = (real: string, entry: boolean): Effect.Effect<string> =>
  Effect.promise(() =>
    (entry ? Fs.lstat(real, { bigint: true }) : Fs.stat(real, { bigint: true })).then(
      (stats) => `${stats.dev}:${stats.ino}`,
      () => real
    )
  )

/**
 * `effect` run while holding the locks of `keys` (`fileKey`s of the files it reads or writes), taken one
 * after another in the order of the keys (waiting for each). Not reentrant.
 */
export const withFileLocks = <A, E, R>(keys: Iterable<string>, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Array.from(new Set(keys)).sort().reduceRight((inner, key) => withLock(key, inner), effect)
