// Run by scripts/consumer-test.sh inside a fresh project that installed the packed tarballs: plain Node,
// no TypeScript, no workspace. It imports every module each package exports, then uses the packages as
// an app would: a Prompt, the aggregator on a recorded stream, and a ResponsesLanguageModel call over
// real HTTP to a loopback server that answers with the same recording.
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const require = createRequire(import.meta.url)
const packages = ["core", "wire", "aggregate", "responses", "chat-completions", "tools", "testing", "effect-ai", "server", "cli"]
let modules = 0
for (const name of packages) {
  const manifest = JSON.parse(readFileSync(join(dirname(require.resolve(`@effect-responses/${name}/package.json`)), "package.json"), "utf8"))
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (target === null || subpath === "./package.json") continue
    await import(subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`)
    modules++
  }
  try {
    await import(`${manifest.name}/internal/decoder`)
    throw new Error(`${manifest.name}/internal/* is importable`)
  } catch (error) {
    if (error.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED") throw error
  }
}

const { Prompt } = await import("@effect-responses/core")
const { MessageAggregator } = await import("@effect-responses/aggregate")
const { ResponsesClient, ResponsesLanguageModel, ResponsesStream } = await import("@effect-responses/responses")
const { LanguageModel } = await import("@effect-responses/core")
const { NodeHttpClient } = await import("@effect/platform-node")
const { Effect, Layer, Stream } = await import("effect")

const fixture = readFileSync(process.env.CONSUMER_FIXTURE, "utf8")
const prompt = Prompt.user("Say hello")
if (prompt.messages.length !== 1) throw new Error("Prompt.user gave no message")

// The aggregator on the recorded stream, decoded from bytes.
const bytes = Stream.make(new TextEncoder().encode(fixture))
const [offline] = await Effect.runPromise(MessageAggregator.aggregate(ResponsesStream.decodeSse(bytes)))

// The same recording served over loopback HTTP, reached through the language model.
let requestBody
const server = createServer((req, res) => {
  let body = ""
  req.on("data", (chunk) => (body += chunk))
  req.on("end", () => {
    requestBody = JSON.parse(body)
    res.writeHead(200, { "content-type": "text/event-stream" })
    res.end(fixture)
  })
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const baseUrl = `http://127.0.0.1:${server.address().port}/v1`
const [live] = await Effect.runPromise(
  Effect.flatMap(LanguageModel.LanguageModel, (model) => MessageAggregator.aggregate(model.stream(prompt))).pipe(
    Effect.provide(
      ResponsesLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
        Layer.provide(ResponsesClient.layer({ baseUrl })),
        Layer.provide(NodeHttpClient.layerUndici)
      )
    )
  )
)
server.close()

const text = (response) => response.message.parts.filter((p) => p.type === "text").map((p) => p.text).join("")
if (requestBody?.model !== "gpt-4o-mini" || requestBody.stream !== true) throw new Error(`unexpected request ${JSON.stringify(requestBody)}`)
if (text(offline).length === 0 || text(live) !== text(offline)) throw new Error(`texts differ: ${text(offline)} / ${text(live)}`)
console.log(`consumer: node ${process.version}: ${modules} modules imported; internal/* sealed; aggregated and called: ${JSON.stringify(text(live).slice(0, 40))}`)
