import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);
import{TypeIdError}from"./cli-chunk-KQB2VJ2I.mjs";var SqlErrorTypeId=Symbol.for("@effect/sql/SqlError"),SqlError=class extends TypeIdError(SqlErrorTypeId,"SqlError"){};export{SqlError};
