#!/usr/bin/env node
// The compiled CLI, bundled into one file at build time (`npm run build`; a published package ships it).
import "../dist/effect-responses.mjs"
