/**
 * The consumer test's check of TypeScript's `moduleResolution: "node10"` (what `module: "commonjs"` picks
 * by default), which reads no `exports`: every published package's root resolves with its types, and so
 * do the subpaths the packages' declarations import from one another.
 */
import { Prompt, type ModelResponse } from "@effect-responses/core"
import { Framing } from "@effect-responses/wire"
import { MessageAggregator } from "@effect-responses/aggregate"
import { ResponsesLanguageModel } from "@effect-responses/responses"
import { ChatCompletionsLanguageModel } from "@effect-responses/chat-completions"
import { Tool } from "@effect-responses/tools"
import { ReplayHttpClient } from "@effect-responses/testing"
import { EffectAiLanguageModel } from "@effect-responses/effect-ai"
import { Gateway } from "@effect-responses/server"
import { Serve } from "@effect-responses/cli"
import * as AiError from "@effect-responses/core/AiError"

export const prompt: Prompt.Prompt = Prompt.make("hi")
export type Response = ModelResponse.ModelResponse
export const used = [Framing.makeSseFramer, MessageAggregator, ResponsesLanguageModel, ChatCompletionsLanguageModel, Tool,
  ReplayHttpClient, EffectAiLanguageModel, Gateway.layer, Serve.layer, AiError.MalformedOutput] as const
