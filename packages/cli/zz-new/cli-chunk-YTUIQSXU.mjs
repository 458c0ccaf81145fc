import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);
var VERSION="0.1.0";export{VERSION};
