/**
 * `serve` on an address it cannot listen on, in process: one clear line naming the address and the code.
 */
import { Serve } from "@effect-responses/cli"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:net"

describe("effect-responses serve", () => {
  it.scoped("a busy port fails with ServeSetupError naming host:port and EADDRINUSE", () =>
    Effect.gen(function*() {
      const busy = createServer()
      const port = yield* Effect.async<number>((resume) => {
        busy.listen(0, "127.0.0.1", () => resume(Effect.succeed((busy.address() as { port: number }).port)))
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => busy.close()))
      const error = yield* Effect.flip(Layer.build(Serve.layer({
        upstream: "http://127.0.0.1:9/v1",
        port,
        host: "127.0.0.1",
        upstreamKeyEnv: Option.none(),
        apiKeyEnv: Option.none(),
        builtinTools: "drop"
      })))
      assert.strictEqual(error._tag, "ServeSetupError")
      assert.strictEqual(
        error.message,
        `cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE); pass another --port`
      )
    }))
})
