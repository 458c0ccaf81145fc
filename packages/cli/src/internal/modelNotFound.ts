/**
 * Whether an upstream's error answer says it does not know the request's model, for `serve`'s warning
 * (`Serve.withHints`): only the answers that say so, not any answer that mentions a model (a 404 for a
 * path under `/v1/model/…` is about the path).
 *
 * @internal
 */
import type { AiError } from "@effect-responses/core"

/**
 * The wordings of the answers that say the model is unknown, from the servers' own code or recorded answers:
 *
 * - OpenAI's Chat Completions (404 `model_not_found`) and vLLM (404 `NotFoundError`, `_check_model` in
 *   `vllm/entrypoints/openai/serving_engine.py`): "The model `x` does not exist" (OpenAI adds "or you do not
 *   have access to it.");
 * - OpenAI's Responses (400 `model_not_found`, `fixtures/responses-json/pai-error-400-model-not-found.json`):
 *   "The requested model 'x' does not exist.";
 * - Ollama: `model "x" not found, try pulling it first` (its OpenAI compatibility, 404), `model 'x' not found`
 *   (its own API, 404);
 * - llama.cpp's `llama-server` in router mode (several models): "model not found" (a 400
 *   `invalid_request_error`; one serving a single model answers whatever the request's model is).
 */
const WORDINGS: ReadonlyArray<RegExp> = [
  /^The (?:requested )?model [`'"][^`'"]*[`'"] does not exist/,
  /^model [`'"][^`'"]*[`'"] not found/,
  /^model not found$/
]

/**
 * Whether `error` is an answer saying the upstream does not know the request's model: OpenAI's
 * `code: "model_not_found"`, or one of `WORDINGS` (a 404 or a 400: llama.cpp answers 400).
 *
 * @internal
 */
export const modelNotFound = (error: AiError.HttpError): boolean =>
  (error.status === 404 || error.status === 400) &&
  (error.code === "model_not_found" || WORDINGS.some((wording) => wording.test(error.description)))
