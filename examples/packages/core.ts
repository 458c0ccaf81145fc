import { Prompt } from "@effect-responses/core"
import { Effect } from "effect"

const prompt = Prompt.concat(
  Prompt.system("Answer in one sentence."),
  Prompt.user("What is the capital of the UK?")
)

// The JSON form of a prompt, as `effect-responses request` reads it
console.log(JSON.stringify(Effect.runSync(Prompt.encode(prompt))))
