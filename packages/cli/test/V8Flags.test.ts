/**
 * The V8 options the executable sets before it loads the command line (internal `v8Flags`): `serve` gets
 * `SERVE_FLAGS` wherever its options stand, unless the user gave `node` the same option; the other verbs,
 * `--help` and `--version` get none.
 */
import { describe, expect, it } from "@effect/vitest"
import { flagsFor, SERVE_FLAGS } from "../src/internal/v8Flags.js"

describe("v8Flags.flagsFor", () => {
  it("serve gets a lower interrupt budget, its options before or after the verb", () => {
    expect(SERVE_FLAGS).toEqual(["--interrupt-budget=16384"])
    expect(flagsFor(["serve", "--upstream", "http://localhost:11434/v1"], [])).toEqual(SERVE_FLAGS)
    expect(flagsFor(["--log-level", "info", "serve", "--port", "0"], [])).toEqual(SERVE_FLAGS)
    expect(flagsFor(["serve", "--help"], [])).toEqual(SERVE_FLAGS)
  })

  it("an interrupt budget the user gave node is kept (either spelling)", () => {
    expect(flagsFor(["serve"], ["--interrupt-budget=1000"])).toEqual([])
    expect(flagsFor(["serve"], ["--interrupt_budget=1000"])).toEqual([])
    expect(flagsFor(["serve"], ["--max-old-space-size=64"])).toEqual(SERVE_FLAGS)
  })

  it("the other verbs, a verb's argument named serve, no verb: none", () => {
    expect(flagsFor(["chat", "--demo"], [])).toEqual([])
    expect(flagsFor(["decode", "serve"], [])).toEqual([])
    expect(flagsFor(["--log-level", "serve"], [])).toEqual([])
    expect(flagsFor(["--help"], [])).toEqual([])
    expect(flagsFor([], [])).toEqual([])
  })
})
