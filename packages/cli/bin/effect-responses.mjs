#!/usr/bin/env node
// The packages ship TypeScript sources; tsx compiles them on the fly (no build step before `npm start`).
import { register } from "tsx/esm/api"

register()
await import("../src/bin.ts")
