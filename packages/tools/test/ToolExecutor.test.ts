import { Part } from "@effect-responses/core"
import { Tool, Toolkit, ToolExecutor } from "@effect-responses/tools"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { MathToolkit, MathToolkitLive } from "./calculator.js"

const call = (args: string, name = "calculator", callId = "call_1") =>
  new Part.ToolCallPart({ callId, name, arguments: args })

const runOne = (toolCall: Part.ToolCallPart) =>
  ToolExecutor.execute(MathToolkit, [toolCall]).pipe(
    Effect.map((results) => {
      assert.strictEqual(results.length, 1)
      return results[0]!
    }),
    Effect.provide(MathToolkitLive)
  )

const errorOf = (result: Part.ToolResultPart): unknown => {
  assert.isTrue(result.isError)
  const parsed: unknown = JSON.parse(result.output)
  assert.isObject(parsed)
  return (parsed as { readonly error: unknown }).error
}

/** A logger that keeps what is logged, with its cause. */
const capturingLogger = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ cause, logLevel, message }) => {
      lines.push(`${logLevel.label} ${JSON.stringify(message)} ${String(cause)}`)
    })
  )

describe("ToolExecutor", () => {
  it.effect("runs a call and encodes its success as JSON text", () =>
    Effect.gen(function*() {
      const result = yield* runOne(call('{"a":12,"b":7,"op":"add"}'))
      expect(result).toStrictEqual(
        new Part.ToolResultPart({ callId: "call_1", name: "calculator", output: "19", isError: false })
      )
    }))

  it.effect("reads empty arguments as {}", () =>
    Effect.gen(function*() {
      const Now = Tool.make("now", { description: "The time.", success: Schema.Struct({ iso: Schema.String }) })
      const toolkit = Toolkit.make(Now)
      const results = yield* ToolExecutor.execute(toolkit, [call("", "now")]).pipe(
        Effect.provide(toolkit.toLayer({ now: () => Effect.succeed({ iso: "2025-12-12T15:17:39Z" }) }))
      )
      assert.isFalse(results[0]!.isError)
      assert.strictEqual(results[0]!.output, '{"iso":"2025-12-12T15:17:39Z"}')
    }))

  it.effect("reads null for an optional property as left out (strict mode), and keeps null where it is allowed", () =>
    Effect.gen(function*() {
      const Search = Tool.make("search", {
        description: "Search.",
        parameters: {
          query: Schema.String,
          limit: Schema.optional(Schema.Number),
          cursor: Schema.optional(Schema.NullOr(Schema.String)),
          filter: Schema.optional(Schema.Struct({ lang: Schema.optional(Schema.String) }))
        },
        success: Schema.String
      })
      const toolkit = Toolkit.make(Search)
      const results = yield* ToolExecutor.execute(toolkit, [
        call('{"query":"effect","limit":null,"cursor":null,"filter":{"lang":null}}', "search", "call_a"),
        call('{"query":null,"limit":null,"cursor":null,"filter":null}', "search", "call_b")
      ]).pipe(
        Effect.provide(toolkit.toLayer({ search: (params) => Effect.succeed(JSON.stringify(params)) }))
      )
      assert.isFalse(results[0]!.isError)
      assert.strictEqual(JSON.parse(results[0]!.output), '{"query":"effect","cursor":null,"filter":{}}')
      // a required property is never dropped: null there is still an error the model can read
      assert.include(String(errorOf(results[1]!)), "query")
    }))

  it.effect("turns invalid JSON into an error result", () =>
    Effect.gen(function*() {
      const result = yield* runOne(call('{"a":12,"b":'))
      const error = errorOf(result)
      assert.isString(error)
      assert.match(error as string, /^invalid JSON arguments for tool "calculator": /)
    }))

  it.effect("turns a schema mismatch into an error result with the decode message", () =>
    Effect.gen(function*() {
      const result = yield* runOne(call('{"a":"twelve","b":7,"op":"power"}'))
      const error = errorOf(result) as string
      assert.match(error, /^invalid arguments for tool "calculator": /)
      // every issue, with its path
      assert.include(error, '["a"]')
      assert.include(error, '["op"]')
      assert.include(error, '"twelve"')
    }))

  it.effect("turns an unknown tool into an error result listing the tools", () =>
    Effect.gen(function*() {
      const result = yield* runOne(call("{}", "web_search"))
      assert.strictEqual(errorOf(result), 'unknown tool "web_search"; available tools: calculator')
      assert.strictEqual(result.name, "web_search")
      assert.strictEqual(result.callId, "call_1")
    }))

  it.effect("encodes a typed handler failure with the failure schema", () =>
    Effect.gen(function*() {
      const result = yield* runOne(call('{"a":12,"b":0,"op":"divide"}'))
      expect(errorOf(result)).toStrictEqual({ _tag: "DivisionByZero", dividend: 12 })
    }))

  it.effect("turns a defect into a generic error result and logs the cause", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const result = yield* ToolExecutor.execute(MathToolkit, [call('{"a":1,"b":2,"op":"add"}')]).pipe(
        Effect.provide(MathToolkit.toLayer({ calculator: () => Effect.die(new Error("secret stack detail")) })),
        Effect.provide(capturingLogger(lines))
      )
      const error = errorOf(result[0]!)
      assert.strictEqual(error, 'tool "calculator" failed unexpectedly')
      assert.notInclude(result[0]!.output, "secret")
      assert.strictEqual(lines.length, 1)
      assert.match(lines[0]!, /^ERROR /)
      assert.include(lines[0]!, "secret stack detail")
    }))

  it.effect("turns a success its schema cannot encode into a generic error result", () =>
    Effect.gen(function*() {
      const Odd = Tool.make("odd", { description: "An odd number.", success: Schema.Number.pipe(Schema.int()) })
      const toolkit = Toolkit.make(Odd)
      const lines: Array<string> = []
      const results = yield* ToolExecutor.execute(toolkit, [call("{}", "odd")]).pipe(
        Effect.provide(toolkit.toLayer({ odd: () => Effect.succeed(1.5) })),
        Effect.provide(capturingLogger(lines))
      )
      assert.strictEqual(errorOf(results[0]!), 'tool "odd" failed unexpectedly')
      assert.strictEqual(lines.length, 1)
    }))

  it.effect("turns a timeout into an error result", () =>
    Effect.gen(function*() {
      const fiber = yield* ToolExecutor.execute(MathToolkit, [call('{"a":1,"b":2,"op":"add"}')], { timeout: "5 seconds" })
        .pipe(
          Effect.provide(MathToolkit.toLayer({ calculator: () => Effect.as(Effect.sleep("1 minute"), 3) })),
          Effect.fork
        )
      yield* TestClock.adjust("5 seconds")
      const results = yield* Fiber.join(fiber)
      assert.strictEqual(errorOf(results[0]!), 'tool "calculator" timed out after 5s')
    }))

  it.effect("turns a handler that interrupts itself into an error result", () =>
    Effect.gen(function*() {
      const results = yield* ToolExecutor.execute(MathToolkit, [call('{"a":1,"b":2,"op":"add"}')]).pipe(
        Effect.provide(MathToolkit.toLayer({ calculator: () => Effect.interrupt }))
      )
      assert.strictEqual(errorOf(results[0]!), 'tool "calculator" was interrupted')
    }))

  it.effect("is interrupted, not turned into results, when its caller interrupts it", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const fiber = yield* ToolExecutor.execute(MathToolkit, [call('{"a":1,"b":2,"op":"add"}')]).pipe(
        Effect.provide(MathToolkit.toLayer({ calculator: () => Effect.as(Effect.never, 0) })),
        Effect.provide(capturingLogger(lines)),
        Effect.fork
      )
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      expect(lines).toStrictEqual([])
    }))

  it.effect("returns results in call order whatever order the calls finish in", () =>
    Effect.gen(function*() {
      const last = yield* Deferred.make<void>()
      const layer = MathToolkit.toLayer({
        calculator: ({ a }) =>
          a === 3
            // the last call finishes first and lets the others finish
            ? Effect.as(Deferred.succeed(last, undefined), a)
            : Effect.as(Deferred.await(last), a)
      })
      const calls = [1, 2, 3].map((a) => call(`{"a":${a},"b":0,"op":"add"}`, "calculator", `call_${a}`))
      const results = yield* ToolExecutor.execute(MathToolkit, calls).pipe(Effect.provide(layer))
      expect(results.map((r) => [r.callId, r.output])).toStrictEqual([["call_1", "1"], ["call_2", "2"], ["call_3", "3"]])
    }))

  it.effect("runs at most `concurrency` calls at once", () =>
    Effect.gen(function*() {
      const running = yield* Ref.make(0)
      const most = yield* Ref.make(0)
      const layer = MathToolkit.toLayer({
        calculator: ({ a }) =>
          Effect.gen(function*() {
            const now = yield* Ref.updateAndGet(running, (n) => n + 1)
            yield* Ref.update(most, (m) => Math.max(m, now))
            yield* Effect.sleep("1 second")
            yield* Ref.update(running, (n) => n - 1)
            return a
          })
      })
      const calls = [1, 2, 3, 4, 5].map((a) => call(`{"a":${a},"b":0,"op":"add"}`, "calculator", `call_${a}`))
      const fiber = yield* ToolExecutor.execute(MathToolkit, calls, { concurrency: 2 }).pipe(
        Effect.provide(layer),
        Effect.fork
      )
      yield* TestClock.adjust("10 seconds")
      const results = yield* Fiber.join(fiber)
      assert.strictEqual(yield* Ref.get(most), 2)
      expect(results.map((r) => r.output)).toStrictEqual(["1", "2", "3", "4", "5"])
    }))

  it.effect("runs each call in an execute_tool span with the GenAI attributes", () =>
    Effect.gen(function*() {
      const Whoami = Tool.make("whoami", {
        description: "The current span.",
        success: Schema.Struct({ span: Schema.String, name: Schema.String, callId: Schema.String })
      })
      const toolkit = Toolkit.make(Whoami)
      const layer = toolkit.toLayer({
        whoami: () =>
          Effect.map(Effect.currentSpan, (span) => ({
            span: span.name,
            name: String(span.attributes.get("gen_ai.tool.name")),
            callId: String(span.attributes.get("gen_ai.tool.call.id"))
          })).pipe(Effect.orDie)
      })
      const results = yield* ToolExecutor.execute(toolkit, [call("{}", "whoami", "call_42")]).pipe(
        Effect.provide(layer)
      )
      expect(JSON.parse(results[0]!.output)).toStrictEqual({
        span: "execute_tool whoami",
        name: "whoami",
        callId: "call_42"
      })
    }))
})
