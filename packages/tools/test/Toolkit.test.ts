import type { Tool } from "@effect-responses/tools"
import { Toolkit } from "@effect-responses/tools"
import { Tool as ToolModule } from "@effect-responses/tools"
import { assert, describe, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Calculator, calculate, DivisionByZero, MathToolkit } from "./calculator.js"

const Echo = ToolModule.make("echo", {
  description: "Says it back.",
  parameters: { text: Schema.String },
  success: Schema.String
})

const Both = Toolkit.make(Calculator, Echo)
type BothHandlers = Toolkit.HandlersOf<typeof Both>

class Prefix extends Context.Tag("test/Prefix")<Prefix, string>() {}

describe("Toolkit", () => {
  it("lists names and definitions in the order given", () => {
    assert.deepStrictEqual(Both.names, ["calculator", "echo"])
    assert.deepStrictEqual(Both.definitions.map((d) => d.name), ["calculator", "echo"])
    assert.strictEqual(Both.find("echo"), Echo)
    assert.isUndefined(Both.find("web_search"))
    assert.strictEqual(Both.tools.calculator, Calculator)
  })

  it("rejects two tools of the same name", () => {
    assert.throws(() => Toolkit.make(Echo, Echo), /two tools are named "echo"/)
  })

  it("requires exactly one handler per tool, by name (type level)", () => {
    const echo = (params: { readonly text: string }) => Effect.succeed(params.text)
    // complete: accepted
    expectTypeOf<{ calculator: typeof calculate; echo: typeof echo }>().toExtend<BothHandlers>()
    // the record type names every tool, and only them
    expectTypeOf<keyof BothHandlers>().toEqualTypeOf<"calculator" | "echo">()
    // a missing handler: rejected
    expectTypeOf<{ calculator: typeof calculate }>().not.toExtend<BothHandlers>()
    // a misnamed handler (so a missing one): rejected
    expectTypeOf<{ calculator: typeof calculate; ehco: typeof echo }>().not.toExtend<BothHandlers>()
    // an extra handler next to the right ones: rejected by the exactness check of `toLayer`
    type WithExtra = { calculator: typeof calculate; echo: typeof echo; ehco: typeof echo }
    expectTypeOf<WithExtra>().not.toExtend<Toolkit.ExactHandlers<Toolkit.Tools<typeof Both>, WithExtra>>()
    type Exact = { calculator: typeof calculate; echo: typeof echo }
    expectTypeOf<Exact>().toExtend<Toolkit.ExactHandlers<Toolkit.Tools<typeof Both>, Exact>>()
    // a handler with the wrong parameter or error type: rejected
    const badParams = (params: { readonly text: number }) => Effect.succeed(String(params.text))
    expectTypeOf<{ calculator: typeof calculate; echo: typeof badParams }>().not.toExtend<BothHandlers>()
    const failing = (params: { readonly text: string }) => Effect.fail(new DivisionByZero({ dividend: params.text.length }))
    expectTypeOf<{ calculator: typeof calculate; echo: typeof failing }>().not.toExtend<BothHandlers>()
  })

  it.effect("builds a layer that requires what the handlers use", () =>
    Effect.gen(function*() {
      const layer = Both.toLayer({
        calculator: calculate,
        echo: ({ text }) => Effect.map(Prefix, (prefix) => `${prefix}${text}`)
      })
      expectTypeOf(layer).toEqualTypeOf<
        Layer.Layer<Tool.Handler<"calculator"> | Tool.Handler<"echo">, never, Prefix>
      >()
      const handler = yield* ToolModule.handlerTag("echo").pipe(
        Effect.provide(layer),
        Effect.provide(Layer.succeed(Prefix, "> "))
      )
      // the service captured when the layer was built serves later calls
      const said = yield* handler.handle({ text: "hi" }, { callId: "call_1", name: "echo" })
      assert.strictEqual(said, "> hi")
    }))

  it("gives the layer of a toolkit whose handlers use nothing no requirement", () => {
    const layer = MathToolkit.toLayer({ calculator: calculate })
    expectTypeOf(layer).toEqualTypeOf<Layer.Layer<Tool.Handler<"calculator">, never, never>>()
  })

  it.effect("builds a layer from an Effect that makes the handlers, once, in the layer's scope", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const layer = Both.toLayer(Effect.gen(function*() {
        const prefix = yield* Prefix
        yield* Effect.acquireRelease(Effect.sync(() => log.push("open")), () => Effect.sync(() => log.push("close")))
        return {
          calculator: calculate,
          echo: ({ text }: { readonly text: string }) => Effect.succeed(`${prefix}${text}`)
        }
      }))
      expectTypeOf(layer).toEqualTypeOf<
        Layer.Layer<Tool.Handler<"calculator"> | Tool.Handler<"echo">, never, Prefix>
      >()
      const said = yield* Effect.gen(function*() {
        const echo = yield* ToolModule.handlerTag("echo")
        const first = yield* echo.handle({ text: "hi" }, { callId: "call_1", name: "echo" })
        const second = yield* echo.handle({ text: "again" }, { callId: "call_2", name: "echo" })
        assert.deepStrictEqual(log, ["open"])
        return [first, second]
      }).pipe(Effect.provide(layer), Effect.provide(Layer.succeed(Prefix, "> ")))
      assert.deepStrictEqual(said, ["> hi", "> again"])
      assert.deepStrictEqual(log, ["open", "close"])
    }))

  it.effect("a layer whose build fails fails with the build's error", () =>
    Effect.gen(function*() {
      const layer = MathToolkit.toLayer(Effect.fail("no index" as const))
      expectTypeOf(layer).toEqualTypeOf<Layer.Layer<Tool.Handler<"calculator">, "no index", never>>()
      const error = yield* Effect.flip(Effect.provide(ToolModule.handlerTag("calculator"), layer))
      assert.strictEqual(error, "no index")
    }))
})
