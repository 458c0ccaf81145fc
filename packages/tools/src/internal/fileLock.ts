/**
 * One lock per file, keyed by the file's real path: the file operations of `ApplyPatch` that read or write
 * one file run one at a time, whoever calls them (the built-in `apply_patch` handler, a freeform custom tool
 * of any name, a caller of its own) and whatever root they were given, so two concurrent patches of one file
 * cannot both read it before either writes (the later write would drop the earlier edit): through two roots
 * nested in one another (`root` and `root/sub`), a link to the root, or two spellings of the path, a file is
 * one key. An operation takes the locks of all the files it touches (a whole patch: of all its changes)
 * before it starts, in the order of their keys (so two operations never wait for each other), and holds them
 * until it ends. A lock is dropped once no operation holds or waits for it.
 */
import * as Effect from "effect/Effect"

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
 * `effect` run while holding the locks of `keys` (the real paths of the files it reads or writes), taken one
 * after another in the order of the keys (waiting for each). Not reentrant.
 */
export const withFileLocks = <A, E, R>(keys: Iterable<string>, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Array.from(new Set(keys)).sort().reduceRight((inner, key) => withLock(key, inner), effect)
