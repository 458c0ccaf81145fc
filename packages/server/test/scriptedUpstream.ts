/**
 * The gateway over a scripted Chat Completions upstream (`ScriptedServer` of `@effect-responses/testing`, on a
 * loopback port), so that a test can make the upstream stall, break off, or answer anything at all.
 */
import { Gateway, type ResponseStore, Upstream } from "@effect-responses/server"
import { ScriptedServer } from "@effect-responses/testing"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { loopback, serverUrl } from "./utils.js"

/**
 * Runs `body` with the gateway (`options`) over the Chat Completions upstream (`upstream` options) at the
 * scripted server answering with `script`; `body` gets the gateway's base URL and the received requests.
 */
export const withScriptedGateway = <A, E, R>(
  script: ReadonlyArray<ScriptedServer.Handler>,
  options: {
    readonly gateway?: Gateway.Options
    readonly upstream?: Omit<Upstream.ChatCompletionsOptions, "baseUrl">
    /** a `ResponseStore` for the gateway (stateless without) */
    readonly store?: Layer.Layer<ResponseStore.ResponseStore, ResponseStore.ResponseStoreError>
    /** the upstream's `HttpClient` (default undici's, `NodeHttpClient.layerUndici`) */
    readonly client?: Layer.Layer<HttpClient.HttpClient>
  },
  body: (url: string, received: ReadonlyArray<ScriptedServer.Received>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const upstream = yield* ScriptedServer.make(script)
    return yield* Effect.gen(function*() {
      const url = yield* serverUrl
      return yield* body(`${url}/v1`, upstream.received)
    }).pipe(
      Effect.provide(
        Gateway.layer(options.gateway ?? {}).pipe(
          Layer.provide(Upstream.chatCompletions({ baseUrl: upstream.baseUrl, ...options.upstream })),
          Layer.provide(options.store ?? Layer.empty),
          Layer.provide(options.client ?? NodeHttpClient.layerUndici),
          Layer.provideMerge(loopback)
        )
      )
    )
  }).pipe(Effect.scoped)
