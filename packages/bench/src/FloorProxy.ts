/**
 * The floor of the gateway-load section (`GatewayLoad`): a bare `node:http` proxy, no Effect, that does the
 * least any Responses-over-Chat-Completions gateway must do per event. For each `POST /v1/responses` it reads
 * the body, opens the same upstream request (`POST <upstream>/chat/completions`, `stream: true`, over a
 * keep-alive `http.Agent`) and, for each chunk the upstream socket gives, `JSON.parse`s its `data:` lines and
 * writes one chunk to the client: a `response.output_text.delta` frame per content delta (whole frames, one
 * `write` per upstream chunk). Around them, `response.created` and `response.completed` (with the text), so
 * that the bench's reader checks it as it checks the gateway. `GET /health` answers `{"status":"ok"}`.
 *
 * What the gateway costs above it is ours: the floor is what Node itself costs per socket wake-up (an HTTP
 * parse of the upstream's chunk, a `JSON.parse`, a `JSON.stringify`, a write to the client's socket).
 *
 * Run in a child process by `GatewayLoad` (`child.ts floor-proxy <upstream base URL> <port>`).
 *
 * @since 0.2.0
 */
import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http"

const frame = (event: object): string => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`

/**
 * Serves the floor proxy on `127.0.0.1:port` in front of the Chat Completions server at `upstream` (a base
 * URL ending in `/v1`); resolves once it listens.
 *
 * @since 0.2.0
 * @category constructors
 */
export const serve = (upstream: string, port: number): Promise<void> => {
  const agent = new Agent({ keepAlive: true })
  const target = new URL(`${upstream.replace(/\/+$/, "")}/chat/completions`)
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.method === "GET" && request.url === "/health") {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(`{"status":"ok"}`)
      return
    }
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (piece: string) => (body += piece))
    request.on("end", () => {
      const { input, model } = JSON.parse(body) as { readonly input: string; readonly model: string }
      const id = `resp_${Date.now()}`
      let ended = false
      const upstreamRequest = httpRequest(target, {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", accept: "text/event-stream" }
      }, (upstreamResponse) => {
        response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        response.socket?.setNoDelay(true)
        let sequence = 0
        let text = ""
        let rest = ""
        response.write(frame({ type: "response.created", sequence_number: sequence++, response: { id, status: "in_progress", model, output: [] } }))
        upstreamResponse.setEncoding("utf8")
        upstreamResponse.on("data", (piece: string) => {
          const lines = (rest + piece).split("\n")
          rest = lines.pop() ?? ""
          let out = ""
          for (const line of lines) {
            if (!line.startsWith("data: ") || line === "data: [DONE]") continue
            const delta = (JSON.parse(line.slice(6)) as { choices?: ReadonlyArray<{ delta?: { content?: string } }> })
              .choices?.[0]?.delta?.content
            if (delta === undefined || delta === "") continue
            text += delta
            out += frame({
              type: "response.output_text.delta",
              sequence_number: sequence++,
              item_id: "msg_floor",
              output_index: 0,
              content_index: 0,
              delta,
              logprobs: []
            })
          }
          if (out !== "") response.write(out)
        })
        upstreamResponse.on("end", () => {
          ended = true
          response.end(frame({
            type: "response.completed",
            sequence_number: sequence++,
            response: { id, status: "completed", model, output: [{ type: "message", content: [{ type: "output_text", text }] }] }
          }))
        })
      })
      // a client that leaves early aborts the upstream request
      response.on("close", () => {
        if (!ended) upstreamRequest.destroy()
      })
      upstreamRequest.end(JSON.stringify({ model, messages: [{ role: "user", content: input }], stream: true }))
    })
  })
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve()))
}
