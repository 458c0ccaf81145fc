#!/usr/bin/env node
// The compiled CLI, bundled at build time (`npm run build`: dist/effect-responses.mjs and its chunks,
// dist/cli-*.mjs; a published package ships them).
import "../dist/effect-responses.mjs"
