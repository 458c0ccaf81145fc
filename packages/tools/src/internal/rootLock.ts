/**
 * One lock per workspace root: the file operations of `ApplyPatch` on one root run one at a time, whoever
 * calls them (the built-in `apply_patch` handler, a freeform custom tool of any name, a caller of its own),
 * so two concurrent patches of one file cannot both read it before either writes (the later write would
 * drop the earlier edit). Roots are told apart by their real path (`fs.realpathSync.native`: a link to the
 * root and the root itself share a lock; a root that does not exist yet by its absolute path); a lock is
 * dropped once no operation holds or waits for it. Roots nested in one another have locks of their own.
 */
import * as Effect from "effect/Effect"
import { realpathSync } from "node:fs"
import * as NodePath from "node:path"

interface Lock {
  readonly semaphore: Effect.Semaphore
  users: number
}

const locks = new Map<string, Lock>()

/** `effect` run while holding the lock of `root` (waiting for it first). Not reentrant. */
export const withRootLock = <A, E, R>(root: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const key = realPath(NodePath.resolve(root))
      let lock = locks.get(key)
      if (lock === undefined) {
        lock = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(key, lock)
      }
      lock.users++
      return { key, lock }
    }),
    ({ lock }) => lock.semaphore.withPermits(1)(effect),
    ({ key, lock }) =>
      Effect.sync(() => {
        if (--lock.users === 0 && locks.get(key) === lock) locks.delete(key)
      })
  )

const realPath = (path: string): string => {
  try {
    return realpathSync.native(path)
  } catch {
    return path
  }
}
