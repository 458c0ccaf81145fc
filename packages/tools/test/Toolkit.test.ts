import { Part } from "@effect-responses/core"
import type { Tool } from "@effect-responses/tools"
import { ApplyPatch, Toolkit, ToolExecutor } from "@effect-responses/tools"
import { Tool as ToolModule } from "@effect-responses/tools"
import { assert, describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
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

  it.effect("of types the handlers an Effect builds: their parameters from the tools, their services kept", () =>
    Effect.gen(function*() {
      // the docstring's form: the handler's parameter is not annotated (an implicit any, TS7031, without of)
      const layer = Both.toLayer(Effect.gen(function*() {
        const prefix = yield* Prefix
        return Both.of({
          calculator: calculate,
          echo: ({ text }) => Effect.map(Prefix, (again) => `${prefix}${again}${text}`)
        })
      }))
      expectTypeOf(layer).toEqualTypeOf<
        Layer.Layer<Tool.Handler<"calculator"> | Tool.Handler<"echo">, never, Prefix>
      >()
      const handlers = { calculator: calculate, echo: ({ text }: { readonly text: string }) => Effect.succeed(text) }
      assert.strictEqual(Both.of(handlers), handlers)
      const said = yield* Effect.flatMap(ToolModule.handlerTag("echo"), (echo) => echo.handle({ text: "hi" }, { callId: "c", name: "echo" }))
        .pipe(Effect.provide(layer), Effect.provide(Layer.succeed(Prefix, "> ")))
      assert.strictEqual(said, "> > hi")
    }))

  it.effect("a layer whose build fails fails with the build's error", () =>
    Effect.gen(function*() {
      const layer = MathToolkit.toLayer(Effect.fail("no index" as const))
      expectTypeOf(layer).toEqualTypeOf<Layer.Layer<Tool.Handler<"calculator">, "no index", never>>()
      const error = yield* Effect.flip(Effect.provide(ToolModule.handlerTag("calculator"), layer))
      assert.strictEqual(error, "no index")
    }))

  describe("a custom tool and a client-run built-in of one name (Codex's freeform apply_patch beside the built-in)", () => {
    // as Codex declares it: the input is a whole V4A patch
    const FreeformApplyPatch = ToolModule.custom("apply_patch", {
      description: "Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.",
      failure: Schema.String
    })
    // made in each test (it threw when a toolkit held one tool of a name)
    const makePatches = () => Toolkit.make(FreeformApplyPatch, ToolModule.applyPatch)
    type Patches = ReturnType<typeof makePatches>
    const patchesLive = (Patches: Patches, root: string) =>
      Patches.toLayer({
        apply_patch: (input) => ApplyPatch.applyPatchText(root, input).pipe(Effect.mapError((error) => error.message)),
        "built-in:apply_patch": ApplyPatch.handler({ root })
      })
    // the recorded apply_patch_call of OpenAI's gpt-5.1 (vercel/ai, Apache-2.0): creates shopping-checklist.md
    const recordedCall = (): Part.ApplyPatchCallPart => {
      const fixture = fileURLToPath(new URL("../../../fixtures/responses-sse/vai-openai-apply-patch-call.chunks.txt", import.meta.url))
      const done = readFileSync(fixture, "utf8").split("\n").filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as { readonly type: string; readonly item?: { readonly type: string; readonly call_id: string; readonly operation: Part.ApplyPatchOperation } })
        .find((event) => event.type === "response.output_item.done" && event.item?.type === "apply_patch_call")!
      return new Part.ApplyPatchCallPart({ callId: done.item!.call_id, operation: done.item!.operation })
    }

    it("are both held: the built-in's handler is keyed built-in:apply_patch, and a lookup by kind finds each", () => {
      const Patches = makePatches()
      assert.deepStrictEqual(Patches.names, ["apply_patch", "built-in:apply_patch"])
      assert.strictEqual(Patches.tools.apply_patch, FreeformApplyPatch)
      assert.strictEqual(Patches.tools["built-in:apply_patch"], ToolModule.applyPatch)
      assert.strictEqual(Patches.find("apply_patch", undefined, "custom"), FreeformApplyPatch)
      assert.strictEqual(Patches.find("apply_patch", undefined, "client"), ToolModule.applyPatch)
      assert.isUndefined(Patches.find("apply_patch", undefined, "function"))
      // without a kind: the first of the two
      assert.strictEqual(Patches.find("apply_patch"), FreeformApplyPatch)
      assert.strictEqual(Patches.keyOf(ToolModule.applyPatch), "built-in:apply_patch")
      assert.strictEqual(Patches.keyOf(FreeformApplyPatch), "apply_patch")
      expect(Patches.definitions.map((definition) => JSON.parse(JSON.stringify(definition)))).toStrictEqual([
        { type: "custom", name: "apply_patch", description: FreeformApplyPatch.description },
        { type: "client", name: "apply_patch" }
      ])
      // alone, the built-in keeps its name as its key
      assert.deepStrictEqual(Toolkit.make(ToolModule.applyPatch).names, ["apply_patch"])
      // two custom tools (or two built-ins) of one name are still refused
      assert.throws(() => Toolkit.make(FreeformApplyPatch, FreeformApplyPatch), /two tools are named "apply_patch"/)
      assert.throws(() => Toolkit.make(ToolModule.applyPatch, ToolModule.applyPatch), /two tools are named "apply_patch"/)
    })

    it("take one handler each, the built-in's keyed built-in:apply_patch (type level)", () => {
      type Handlers = Toolkit.HandlersOf<Patches>
      expectTypeOf<keyof Handlers>().toEqualTypeOf<"apply_patch" | "built-in:apply_patch">()
      expectTypeOf<Parameters<Handlers["apply_patch"]>[0]>().toEqualTypeOf<string>()
      expectTypeOf<Parameters<Handlers["built-in:apply_patch"]>[0]>().toEqualTypeOf<Part.ApplyPatchCallPart>()
      expectTypeOf<ReturnType<typeof patchesLive>>().toEqualTypeOf<
        Layer.Layer<Tool.Handler<"apply_patch"> | Tool.Handler<"built-in:apply_patch">, never, never>
      >()
      // alone, or beside tools of other names, the built-in's key is its name
      type Alone = Toolkit.HandlersOf<Toolkit.Toolkit<typeof ToolModule.applyPatch | typeof Echo>>
      expectTypeOf<keyof Alone>().toEqualTypeOf<"apply_patch" | "echo">()
    })

    it.effect("each call reaches the tool of its kind, both patching one directory", () =>
      Effect.gen(function*() {
        const Patches = makePatches()
        const root = mkdtempSync(join(tmpdir(), "toolkit-patches-"))
        const layer = patchesLive(Patches, root)
        // the built-in creates the file (the recorded call), then the custom tool updates it with a V4A patch
        const first = yield* ToolExecutor.execute(Patches, [recordedCall()]).pipe(Effect.provide(layer))
        const second = yield* ToolExecutor.execute(Patches, [
          new Part.CustomToolCallPart({
            callId: "call_custom_1",
            name: "apply_patch",
            input: "*** Begin Patch\n*** Update File: shopping-checklist.md\n@@\n-- [ ] Milk\n+- [x] Milk\n*** End Patch\n"
          })
        ]).pipe(Effect.provide(layer))
        expect(JSON.parse(JSON.stringify([...first, ...second]))).toStrictEqual([
          {
            type: "apply_patch_call_output",
            callId: "call_kA46f91ZwocQyMCKyyZqRyC5",
            status: "completed",
            output: "created shopping-checklist.md"
          },
          {
            type: "tool_result",
            callId: "call_custom_1",
            name: "apply_patch",
            output: "updated shopping-checklist.md",
            isError: false,
            kind: "custom"
          }
        ])
        assert.strictEqual(
          readFileSync(join(root, "shopping-checklist.md"), "utf8"),
          "## Shopping Checklist\n\n- [x] Milk\n- [ ] Bread\n- [ ] Eggs\n- [ ] Fresh fruit\n- [ ] Coffee\n"
        )
        // a function call of that name reaches neither: it is the built-in's call whose arguments were no
        // operation (as the gateway hands it back), answered naming the wrong field
        const wrongKind = yield* ToolExecutor.execute(Patches, [
          new Part.ToolCallPart({ callId: "call_f1", name: "apply_patch", arguments: "{}" })
        ]).pipe(Effect.provide(layer))
        assert.strictEqual(
          (wrongKind[0] as Part.ToolResultPart).output,
          "{\"error\":\"invalid arguments for tool \\\"apply_patch\\\": type is missing; nothing was run\"}"
        )
      }))

    it.effect("in one response, a custom call of the built-in's name runs in output order with the built-in calls", () =>
      Effect.gen(function*() {
        const Patches = makePatches()
        const root = mkdtempSync(join(tmpdir(), "toolkit-patches-"))
        // the custom tool creates a file, the built-in then updates it, one after the other as the model wrote them
        const results = yield* ToolExecutor.execute(Patches, [
          new Part.CustomToolCallPart({
            callId: "call_custom_1",
            name: "apply_patch",
            input: "*** Begin Patch\n*** Add File: notes/todo.md\n+# To do\n+- [ ] milk\n*** End Patch\n"
          }),
          new Part.ApplyPatchCallPart({
            callId: "call_builtin_1",
            operation: { type: "update_file", path: "notes/todo.md", diff: "@@\n # To do\n-- [ ] milk\n+- [x] milk\n" }
          })
        ]).pipe(Effect.provide(patchesLive(Patches, root)))
        expect(results.map((result) => result.type === "tool_result" || result.type === "apply_patch_call_output" ? result.output : ""))
          .toStrictEqual(["created notes/todo.md", "updated notes/todo.md"])
        assert.strictEqual(readFileSync(join(root, "notes/todo.md"), "utf8"), "# To do\n- [x] milk\n")
      }))
  })
})
