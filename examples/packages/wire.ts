import { CaptureFile } from "@effect-responses/wire"

// Raw SSE as recorded off the wire: each frame's data and the line it starts on
const sse = [
  "event: response.created",
  "data: {\"type\":\"response.created\",\"sequence_number\":0}",
  "",
  "data: [DONE]",
  ""
].join("\n")

for (const frame of CaptureFile.frames(sse)) console.log(`${frame.line}: ${frame.data}`)
