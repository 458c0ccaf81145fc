import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);
import{VERSION}from"./cli-chunk-YTUIQSXU.mjs";import"./cli-chunk-PJFAJS2Y.mjs";process.argv.length===3&&process.argv[2]==="--version"?process.stdout.write(`${VERSION}
`):await import("./cli-main-YA5N4KNY.mjs");
