/**
 * The contenders: each takes an SSE body (a `ReadableStream` of byte chunks, as `fetch` gives it) through
 * its library's real streaming path to a final message, and returns the message's text so that the harness
 * can check it. Clients are built once per contender; only the body changes between runs.
 *
 * @since 0.1.0
 */

/**
 * A contender: `run` consumes the body to its end and resolves with the text of the final assistant
 * message (the `output_text`), or rejects.
 *
 * @since 0.1.0
 * @category models
 */
export interface Contender {
  /** Short name, for `--only` and the memory child processes. */
  readonly id: string
  readonly name: string
  readonly run: (body: ReadableStream<Uint8Array>) => Promise<string>
}

/**
 * The body of one run: the chunks, one per read. `onPull` runs before each chunk is handed over (the memory
 * probe samples the heap there).
 *
 * @since 0.1.0
 * @category constructors
 */
export const body = (chunks: ReadonlyArray<Uint8Array>, onPull?: () => void): ReadableStream<Uint8Array> => {
  let next = 0
  return new ReadableStream<Uint8Array>({
    pull: (controller) => {
      onPull?.()
      const chunk = chunks[next++]
      if (chunk === undefined) controller.close()
      else controller.enqueue(chunk)
    }
  }, { highWaterMark: 0 })
}

/** The text of a Responses `response.output_text.delta` event. */
const responsesText = (event: unknown): string | undefined =>
  typeof event === "object" && event !== null && "type" in event && event.type === "response.output_text.delta" &&
    "delta" in event && typeof event.delta === "string" ? event.delta : undefined

/** The `choices[0].delta.content` of a Chat Completions chunk. */
const chatText = (chunk: unknown): string | undefined => {
  if (typeof chunk !== "object" || chunk === null || !("choices" in chunk) || !Array.isArray(chunk.choices)) return undefined
  const choice: unknown = chunk.choices[0]
  if (typeof choice !== "object" || choice === null || !("delta" in choice)) return undefined
  const delta: unknown = choice.delta
  return typeof delta === "object" && delta !== null && "content" in delta && typeof delta.content === "string"
    ? delta.content
    : undefined
}

/**
 * The bare loop of the floors: splits SSE frames at blank lines, `JSON.parse`s each `data:` line and keeps
 * the text deltas. `push` takes the next chunk of bytes, `end` returns the text.
 *
 * @since 0.1.0
 * @category contenders
 */
export const bareLoop = (pick: (event: unknown) => string | undefined = responsesText) => {
  const decoder = new TextDecoder()
  const texts: Array<string> = []
  let buffer = ""
  const frame = (text: string): void => {
    const at = text.indexOf("data: ")
    if (at === -1) return
    const end = text.indexOf("\n", at)
    const data = text.slice(at + 6, end === -1 ? undefined : end)
    if (data === "[DONE]") return
    const delta = pick(JSON.parse(data))
    if (delta !== undefined) texts.push(delta)
  }
  return {
    push: (bytes: Uint8Array): void => {
      buffer += decoder.decode(bytes, { stream: true })
      let start = 0
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n", start)) {
        frame(buffer.slice(start, end))
        start = end + 2
      }
      buffer = buffer.slice(start)
    },
    end: (): string => {
      if (buffer.trim() !== "") frame(buffer)
      return texts.join("")
    }
  }
}

/**
 * The floor: the bare loop over the body's reader. No validation, no parts, no events other than text
 * deltas kept.
 *
 * @since 0.1.0
 * @category contenders
 */
export const floor: Contender = {
  id: "floor",
  name: "floor (split + JSON.parse)",
  run: (body) => runLoop(body, bareLoop())
}

/**
 * The floor of the Chat Completions streams: the same loop keeping `choices[0].delta.content`.
 *
 * @since 0.2.0
 * @category contenders
 */
export const chatFloor: Contender = {
  id: "chat-floor",
  name: "floor (split + JSON.parse)",
  run: (body) => runLoop(body, bareLoop(chatText))
}

const runLoop = async (body: ReadableStream<Uint8Array>, loop: ReturnType<typeof bareLoop>): Promise<string> => {
  const reader = body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    loop.push(value)
  }
  return loop.end()
}

/**
 * The ids of the contenders, ours first.
 *
 * @since 0.1.0
 * @category contenders
 */
export const IDS: ReadonlyArray<string> = ["ours", "ours-decode", "ours-client", "openai", "ai-sdk", "effect-ai", "ours-effect-ai", "floor", "effect-floor"]

/**
 * The ids of the contenders on the Chat Completions streams, ours first.
 *
 * @since 0.2.0
 * @category contenders
 */
export const CHAT_IDS: ReadonlyArray<string> = ["ours-chat-client", "openai-chat", "chat-floor"]

/**
 * Builds the contenders whose ids are in `ids` (every one by default), in the order of `IDS`. Each library
 * is imported only when its contender is asked for (a memory child process loads one), and the peers'
 * clients are built here, once.
 *
 * @since 0.1.0
 * @category contenders
 */
export const make = async (ids: ReadonlyArray<string> = IDS): Promise<ReadonlyArray<Contender>> => {
  const builders: { readonly [id: string]: () => Promise<Contender> } = {
    "ours": () => import("./contenders/ours.js").then((ours) => ours.aggregate),
    "ours-decode": () => import("./contenders/ours.js").then((ours) => ours.decodeOnly),
    "ours-client": () => import("./contenders/ours.js").then((ours) => ours.client()),
    "openai": () => import("./contenders/openai.js").then((openai) => openai.make()),
    "ai-sdk": () => import("./contenders/aiSdk.js").then((aiSdk) => aiSdk.make()),
    "effect-ai": () => import("./contenders/effectAi.js").then((effectAi) => effectAi.make()),
    "ours-effect-ai": () => import("./contenders/effectAi.js").then((effectAi) => effectAi.makeOurs()),
    "floor": () => Promise.resolve(floor),
    "effect-floor": () => import("./contenders/ours.js").then((ours) => ours.effectFloor),
    "ours-chat-client": () => import("./contenders/ours.js").then((ours) => ours.chatClient()),
    "openai-chat": () => import("./contenders/openai.js").then((openai) => openai.makeChat()),
    "chat-floor": () => Promise.resolve(chatFloor)
  }
  const known = [...IDS, ...CHAT_IDS]
  for (const id of ids) if (!(id in builders)) throw new Error(`unknown contender ${id}; known: ${known.join(", ")}`)
  const contenders: Array<Contender> = []
  for (const id of known) if (ids.includes(id)) contenders.push(await builders[id]!())
  return contenders
}
