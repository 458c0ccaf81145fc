/**
 * A validator for the OpenAI OpenAPI description (`fixtures/spec/openai-openapi.yaml`, read in place), built
 * once per test file that imports it: the YAML is 3 MB and takes about two seconds to parse and compile.
 *
 * The description uses `oneOf` for unions whose branches overlap (an input message matches both
 * `EasyInputMessage` and `InputMessage`), which JSON Schema's "exactly one" reading rejects; the SDK
 * generators read them as "any of", and so does this validator (every `oneOf` becomes `anyOf`).
 */
import Ajv2020Module from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as YAML from "yaml"

const specPath = fileURLToPath(new URL("../../../fixtures/spec/openai-openapi.yaml", import.meta.url))

const toAnyOf = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(toAnyOf)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key === "oneOf" ? "anyOf" : key, toAnyOf(entry)]))
  }
  return value
}

// ajv is CommonJS: under NodeNext its default import is `module.exports`, whose `default` is the class.
const Ajv2020 = Ajv2020Module.default
type Ajv2020 = InstanceType<typeof Ajv2020>

let ajv: Ajv2020 | undefined

const instance = (): Ajv2020 => {
  if (ajv === undefined) {
    const document = YAML.parse(readFileSync(specPath, "utf8")) as { readonly components: unknown }
    ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats.default(ajv)
    ajv.addSchema({ $id: "openai", components: toAnyOf(document.components) })
  }
  return ajv
}

/** The errors of `value` against `#/components/schemas/{name}` (empty when it is valid). */
export const errorsAgainst = (name: string, value: unknown): ReadonlyArray<string> => {
  const validate = instance().getSchema(`openai#/components/schemas/${name}`)
  if (validate === undefined) throw new Error(`no schema ${name} in the OpenAPI description`)
  if (validate(value)) return []
  return (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""}`)
}
