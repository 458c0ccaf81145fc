/**
 * The gateway's stateful request handling, with a `ResponseStore`: `store`, `previous_response_id` and
 * `item_reference` items turned into a stateless request for the decoder, and the stored responses'
 * routes. Errors are returned as the fields of a `GatewayError` (the module `Gateway` builds it), so that
 * this module does not import `Gateway`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ResponseStore from "../ResponseStore.js"
import { makeId } from "../ResponsesLifecycle.js"
import { CONVERSATION_UNSUPPORTED_STORED } from "../ResponsesRequestDecoder.js"

/** Whether a JSON value is an object (not an array, not null). */
export const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The fields of an OpenAI-shaped error answer (`GatewayError`). */
export interface ErrorFields {
  readonly status: number
  readonly description: string
  readonly errorType: string
  readonly param: string | null
  readonly code: string | null
}

/** A request prepared for the stateless decoder. */
export interface Prepared {
  /** The body for `ResponsesRequestDecoder.decode`: `store` and `previous_response_id` removed, `input` the whole conversation. */
  readonly body: { readonly [key: string]: unknown }
  /** Whether the response is to be stored (`store`, default `true` with a store, as the API). */
  readonly store: boolean
  readonly previousResponseId: string | null
  /** This request's input items (string input as a user message, references resolved), each with an `id`. */
  readonly inputItems: ReadonlyArray<ResponseStore.Item>
  /** How many stored items `body.input` holds before this request's own (0 without `previous_response_id`). */
  readonly historyItems: number
}

/**
 * A decoder error's `param` and description in the client's terms: `input[n]` of the prepared body is
 * `input[n - historyItems]` of the client's; an item of the stored conversation is named by
 * `previous_response_id`.
 */
export const clientTerms = (
  prepared: Prepared,
  param: string | null,
  description: string
): { readonly param: string | null; readonly description: string } => {
  const offset = prepared.historyItems
  if (offset === 0) return { param, description }
  const shift = (text: string) =>
    text.replace(/input\[(\d+)\]/g, (whole, n: string) => Number(n) >= offset ? `input[${Number(n) - offset}]` : whole)
  const at = param === null ? undefined : /^input\[(\d+)\]/.exec(param)
  if (at !== undefined && at !== null && Number(at[1]) < offset) {
    return {
      param: "previous_response_id",
      description: `In the stored conversation of previous_response_id (item ${at[1]} of it): ${description}`
    }
  }
  return { param: param === null ? null : shift(param), description: shift(description) }
}

const storeFailed = (error: ResponseStore.ResponseStoreError): ErrorFields => ({
  status: 500,
  description: `The response store failed: ${error.description}`,
  errorType: "server_error",
  param: null,
  code: "server_error"
})

/**
 * What `POST` answers for a `previous_response_id` that is stored when an earlier response of its chain,
 * `missing`, is not (deleted, or past its retention): the id the client sent first, then why.
 */
const previousChainBroken = (id: string, missing: string): ErrorFields => ({
  status: 400,
  description: `Previous response with id '${id}' cannot be continued: an earlier response of its conversation, '${missing}', is no longer stored (deleted, or past its retention), so the conversation cannot be rebuilt.`,
  errorType: "invalid_request_error",
  param: "previous_response_id",
  code: "previous_response_not_found"
})

/** What `POST` answers for an unknown `previous_response_id` (OpenAI's wording and code). */
const previousNotFound = (id: string): ErrorFields => ({
  status: 400,
  description: `Previous response with id '${id}' not found.`,
  errorType: "invalid_request_error",
  param: "previous_response_id",
  code: "previous_response_not_found"
})

/** What `POST` answers for an `item_reference` to an unknown item (OpenAI's wording). */
const itemNotFound = (id: string, index: number): ErrorFields => ({
  status: 404,
  description: `Item with id '${id}' not found. Items are stored only when the response that held them was stored (\`store\` true or left out).`,
  errorType: "invalid_request_error",
  param: `input[${index}]`,
  code: null
})

/** What the routes of a stored response answer for an unknown id. */
export const responseNotFound = (id: string): ErrorFields => ({
  status: 404,
  description: `Response with id '${id}' not found.`,
  errorType: "invalid_request_error",
  param: null,
  code: null
})

const PREFIXES: { readonly [type: string]: string } = {
  message: "msg",
  reasoning: "rs",
  function_call: "fc",
  function_call_output: "fco"
}

/**
 * An input item as stored: `type` made explicit (`message` for `{role, content}`), message content given
 * as a string turned into one text content part (as the API lists it), and a new `id` when it has none.
 */
const normalize = (item: { readonly [key: string]: unknown }): ResponseStore.Item => {
  const type = typeof item.type === "string" ? item.type : item.role !== undefined ? "message" : "item"
  const out: Record<string, unknown> = { ...item, type }
  if (type === "message" && typeof item.content === "string") {
    out.content = [
      item.role === "assistant"
        ? { type: "output_text", text: item.content, annotations: [] }
        : { type: "input_text", text: item.content }
    ]
  }
  if (typeof item.id !== "string" || item.id === "") out.id = makeId(PREFIXES[type] ?? "item")
  return out as unknown as ResponseStore.Item
}

/**
 * Prepares a parsed body with the store: reads `store` and `previous_response_id`, rebuilds the
 * conversation of the previous response (its chain's input and output items, in order), resolves
 * `item_reference` items, and gives the decoder a body without them. Values of the wrong type are left in
 * the body for the decoder to refuse with its usual 400.
 */
export const prepare = (
  store: ResponseStore.Service,
  tenant: string,
  body: unknown
): Effect.Effect<Prepared, ErrorFields> =>
  Effect.gen(function*() {
    if (!isObject(body)) return { body: {}, store: false, previousResponseId: null, inputItems: [], historyItems: 0 }
    if (body.conversation != null) {
      // refused here, before any store read, in a store's terms: the decoder's words assume no store
      return yield* Effect.fail<ErrorFields>({
        status: 400,
        description: CONVERSATION_UNSUPPORTED_STORED,
        errorType: "invalid_request_error",
        param: "conversation",
        code: "unsupported_parameter"
      })
    }
    const out: Record<string, unknown> = { ...body }
    let save = true
    if (typeof body.store === "boolean" || body.store === null) {
      save = body.store !== false
      delete out.store
    }
    let previousResponseId: string | null = null
    if (typeof body.previous_response_id === "string" || body.previous_response_id === null) {
      previousResponseId = body.previous_response_id
      delete out.previous_response_id
    }
    const input = body.input
    const items: Array<ResponseStore.Item> = []
    if (typeof input === "string") {
      items.push(normalize({ type: "message", role: "user", content: input }))
    } else if (Array.isArray(input)) {
      const references: Array<string> = []
      for (const item of input) {
        if (isObject(item) && item.type === "item_reference" && typeof item.id === "string") references.push(item.id)
      }
      const found = yield* store.items(tenant, references).pipe(Effect.mapError(storeFailed))
      for (let index = 0; index < input.length; index++) {
        const item = input[index]
        if (!isObject(item)) return { body: out, store: save, previousResponseId, inputItems: [], historyItems: 0 } // the decoder names it
        if (item.type === "item_reference") {
          const resolved = typeof item.id === "string" ? found.get(item.id) : undefined
          if (resolved === undefined) {
            if (typeof item.id !== "string") {
              return yield* Effect.fail<ErrorFields>({
                status: 400,
                description: "Missing required parameter: 'id' of an item_reference.",
                errorType: "invalid_request_error",
                param: `input[${index}].id`,
                code: "missing_required_parameter"
              })
            }
            return yield* Effect.fail(itemNotFound(item.id, index))
          }
          items.push(resolved)
        } else {
          items.push(normalize(item))
        }
      }
    } else if (input != null) {
      return { body: out, store: save, previousResponseId, inputItems: [], historyItems: 0 } // the decoder refuses the input's type
    }
    const previous = previousResponseId
    const history = previous === null ? [] : yield* store.chain(tenant, previous).pipe(
      Effect.catchTags({
        // the chain names its first missing link: the id the client sent, or an earlier response of it
        ResponseNotFound: (error) =>
          Effect.fail(error.id === previous ? previousNotFound(previous) : previousChainBroken(previous, error.id)),
        ResponseStoreError: (error) => Effect.fail(storeFailed(error))
      })
    )
    if (input != null || history.length > 0) out.input = [...history, ...items]
    return { body: out, store: save, previousResponseId, inputItems: items, historyItems: history.length }
  })

/** Saves a response with its request's input items, when the request asked for it. */
export const save = (
  store: ResponseStore.Service,
  tenant: string,
  prepared: Prepared,
  response: ResponseStore.ResponseJson
): Effect.Effect<void, ErrorFields> =>
  prepared.store
    ? store.save({ tenant, response, previousResponseId: prepared.previousResponseId, inputItems: prepared.inputItems })
      .pipe(Effect.mapError(storeFailed))
    : Effect.void

/** `GET /v1/responses/{id}`: the stored Response object. */
export const getResponse = (store: ResponseStore.Service, tenant: string, id: string) =>
  store.get(tenant, id).pipe(
    Effect.mapError(storeFailed),
    Effect.flatMap(Option.match({ onNone: () => Effect.fail(responseNotFound(id)), onSome: Effect.succeed }))
  )

/** `DELETE /v1/responses/{id}`: `{id, object: "response", deleted: true}`. */
export const deleteResponse = (store: ResponseStore.Service, tenant: string, id: string) =>
  store.delete(tenant, id).pipe(
    Effect.mapError(storeFailed),
    Effect.flatMap((deleted) =>
      deleted ? Effect.succeed({ id, object: "response", deleted: true }) : Effect.fail(responseNotFound(id))
    )
  )

const invalidQuery = (param: string, description: string): ErrorFields => ({
  status: 400,
  description,
  errorType: "invalid_request_error",
  param,
  code: "invalid_value"
})

/**
 * `GET /v1/responses/{id}/input_items`: a page of the response's input items; query `limit` (1 to 100,
 * default 20), `order` (`asc` or `desc`, default `desc`), `after` (an item id; one that is no input item of
 * the response is a 400 naming `after`), `include` (accepted: the stored items hold everything the gateway has).
 */
export const listInputItems = (
  store: ResponseStore.Service,
  tenant: string,
  id: string,
  query: URLSearchParams
) =>
  Effect.gen(function*() {
    const limitText = query.get("limit")
    const limit = limitText === null ? 20 : Number(limitText)
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      return yield* Effect.fail(
        invalidQuery("limit", `Invalid 'limit': integer between 1 and 100 expected, got '${limitText}'.`)
      )
    }
    const order = query.get("order") ?? "desc"
    if (order !== "asc" && order !== "desc") {
      return yield* Effect.fail(invalidQuery("order", `Invalid 'order': 'asc' or 'desc' expected, got '${order}'.`))
    }
    const after = query.get("after") ?? undefined
    const page = yield* store.inputItems(tenant, id, { limit, order, after }).pipe(
      Effect.catchTags({
        ResponseStoreError: (error) => Effect.fail(storeFailed(error)),
        InputItemNotFound: (error) =>
          Effect.fail(invalidQuery("after", `Invalid 'after': '${error.itemId}' is no input item of response '${error.responseId}'.`))
      })
    )
    return yield* Option.match(page, { onNone: () => Effect.fail(responseNotFound(id)), onSome: Effect.succeed })
  })
