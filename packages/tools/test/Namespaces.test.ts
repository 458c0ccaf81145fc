/**
 * Tools in namespaces: two namespaces may each have a tool of one name; the toolkit keys their handlers
 * `<namespace>.<name>`, sends the namespace and `deferLoading` in the definitions, and a call resolves to
 * the handler of its namespace and name.
 */
import { LanguageModel, Part } from "@effect-responses/core"
import { ResponsesRequest } from "@effect-responses/responses"
import type { Tool } from "@effect-responses/tools"
import { Tool as ToolModule, Toolkit, ToolExecutor } from "@effect-responses/tools"
import { assert, describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const GitHub = ToolModule.namespace("github", "Repositories on GitHub.")
const GitLab = ToolModule.namespace("gitlab", "Repositories on GitLab.")

const searchIn = <const N extends string>(namespace: { readonly name: N; readonly description: string }) =>
  ToolModule.make("search", {
    description: "Searches the repositories' code.",
    parameters: { query: Schema.String },
    success: Schema.String,
    namespace
  })

const GitHubSearch = searchIn(GitHub)
const GitLabSearch = searchIn(GitLab)
const GetWeather = ToolModule.make("get_weather", {
  description: "The current weather at a place.",
  parameters: { location: Schema.String },
  success: Schema.String,
  deferLoading: true
})

const Code = Toolkit.make(GitHubSearch, GitLabSearch, GetWeather)

const CodeLive = Code.toLayer({
  "github.search": ({ query }, context) => Effect.succeed(`github:${query}:${context.namespace ?? "-"}`),
  "gitlab.search": ({ query }) => Effect.succeed(`gitlab:${query}`),
  get_weather: ({ location }) => Effect.succeed(`sunny in ${location}`)
})

const call = (name: string, args: string, namespace?: string) =>
  new Part.ToolCallPart({
    callId: `call_${namespace ?? ""}_${name}`,
    name,
    arguments: args,
    ...(namespace === undefined ? {} : { namespace })
  })

describe("Toolkit namespaces", () => {
  it("keys the tools of a namespace <namespace>.<name>, at the type level and at run time", () => {
    expectTypeOf<ToolModule.Key<typeof GitHubSearch>>().toEqualTypeOf<"github.search">()
    expectTypeOf<ToolModule.Key<typeof GetWeather>>().toEqualTypeOf<"get_weather">()
    expectTypeOf<keyof Toolkit.HandlersOf<typeof Code>>().toEqualTypeOf<"github.search" | "gitlab.search" | "get_weather">()
    expectTypeOf(CodeLive).toEqualTypeOf<
      Layer.Layer<Tool.Handler<"github.search"> | Tool.Handler<"gitlab.search"> | Tool.Handler<"get_weather">, never, never>
    >()
    // a handler keyed by the bare name of a namespaced tool is refused
    expectTypeOf<{ search: () => Effect.Effect<string>; get_weather: () => Effect.Effect<string> }>()
      .not.toExtend<Toolkit.HandlersOf<typeof Code>>()
    assert.deepStrictEqual(Code.names, ["github.search", "gitlab.search", "get_weather"])
    assert.strictEqual(Code.tools["gitlab.search"], GitLabSearch)
  })

  it("sends the namespace and deferLoading in the definitions", () => {
    const [github, gitlab, weather] = LanguageModel.functionTools(Code.definitions)
    expect(github).toMatchObject({ name: "search", namespace: GitHub })
    expect(gitlab).toMatchObject({ name: "search", namespace: GitLab })
    assert.isUndefined(github!.deferLoading)
    assert.isUndefined(weather!.namespace)
    assert.strictEqual(weather!.deferLoading, true)
    assert.instanceOf(weather, LanguageModel.ToolDefinition)
  })

  it("resolves a call by namespace and name", () => {
    assert.strictEqual(Code.find("search", "github"), GitHubSearch)
    assert.strictEqual(Code.find("search", "gitlab"), GitLabSearch)
    assert.isUndefined(Code.find("search", "bitbucket"))
    // several namespaces have a `search`: a call without a namespace names none of them
    assert.isUndefined(Code.find("search"))
    // only one namespace has it: a call by the name alone (a provider without namespaces) finds it
    assert.strictEqual(Toolkit.make(GitHubSearch, GetWeather).find("search"), GitHubSearch)
    // a tool in no namespace, loaded by tool search, is called with a namespace of its own name
    assert.strictEqual(Code.find("get_weather", "get_weather"), GetWeather)
    assert.strictEqual(Code.find("get_weather"), GetWeather)
    assert.isUndefined(Code.find("get_weather", "github"))
  })

  it("refuses two tools of one name in one namespace, and a namespace given two descriptions", () => {
    assert.throws(() => Toolkit.make(GitHubSearch, searchIn(GitHub)), /two tools are named "search" in namespace "github"/)
    assert.throws(
      () =>
        Toolkit.make(
          GitHubSearch,
          ToolModule.make("issues", {
            description: "Lists the issues.",
            success: Schema.String,
            namespace: { name: "github", description: "Other words." }
          })
        ),
      /namespace "github" is given two descriptions/
    )
  })

  it.effect("runs each call with the handler of its namespace and name", () =>
    Effect.gen(function*() {
      const results = yield* ToolExecutor.execute(Code, [
        call("search", `{"query":"effect"}`, "github"),
        call("search", `{"query":"effect"}`, "gitlab"),
        call("get_weather", `{"location":"Paris"}`, "get_weather"),
        call("search", `{"query":"effect"}`, "bitbucket"),
        call("search", `{"query":"effect"}`)
      ]).pipe(Effect.provide(CodeLive))
      expect(results.map((result) => [result.output, result.isError])).toStrictEqual([
        [JSON.stringify("github:effect:github"), false],
        [JSON.stringify("gitlab:effect"), false],
        [JSON.stringify("sunny in Paris"), false],
        [
          JSON.stringify({
            error:
              "unknown tool \"search\" in namespace \"bitbucket\"; available tools: github.search, gitlab.search, get_weather"
          }),
          true
        ],
        [
          JSON.stringify({ error: "unknown tool \"search\"; available tools: github.search, gitlab.search, get_weather" }),
          true
        ]
      ])
    }))

  it.effect("groups function and custom tools by namespace on the Responses wire; a namespaced custom call finds its handler", () =>
    Effect.gen(function*() {
      const Db = ToolModule.namespace("db", "The users database.")
      const ExecuteSql = ToolModule.custom("execute_sql", { description: "Runs SQL.", namespace: Db, deferLoading: true })
      const Tables = ToolModule.make("tables", { description: "Lists the tables.", success: Schema.Array(Schema.String), namespace: Db })
      expectTypeOf<ToolModule.Key<typeof ExecuteSql>>().toEqualTypeOf<"db.execute_sql">()
      const Kit = Toolkit.make(ExecuteSql, GetWeather, Tables)
      expect(ResponsesRequest.toolsToWire(Kit.definitions)).toStrictEqual([
        {
          type: "namespace",
          name: "db",
          description: "The users database.",
          tools: [
            { type: "custom", name: "execute_sql", description: "Runs SQL.", defer_loading: true },
            {
              type: "function",
              name: "tables",
              description: "Lists the tables.",
              parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
              strict: true
            }
          ]
        },
        {
          type: "function",
          name: "get_weather",
          description: "The current weather at a place.",
          parameters: {
            type: "object",
            required: ["location"],
            properties: { location: { type: "string" } },
            additionalProperties: false
          },
          strict: true,
          defer_loading: true
        }
      ])
      const [answer] = yield* ToolExecutor.execute(Kit, [
        new Part.CustomToolCallPart({ callId: "call_sql", name: "execute_sql", input: "SELECT 1;", namespace: "db" })
      ]).pipe(
        Effect.provide(Kit.toLayer({
          "db.execute_sql": (input) => Effect.succeed(`ran ${input}`),
          "db.tables": () => Effect.succeed(["users"]),
          get_weather: () => Effect.succeed("")
        }))
      )
      expect(answer).toMatchObject({ type: "tool_result", callId: "call_sql", kind: "custom", output: "ran SELECT 1;", isError: false })
    }))
})
