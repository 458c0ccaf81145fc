/**
 * Test helpers for tools that flatten to one upstream name: a tool list built from entries in any order
 * (`toolsOf`), and every order of a set (`orders`), so that a test can check the same names in each.
 */

/** One function or custom tool, top-level or in `namespace`. */
export interface Entry<Tool extends { readonly type: string; readonly name: string } = { readonly type: string; readonly name: string }> {
  readonly namespace?: string
  readonly tool: Tool
}

/** Every order of `items` (n! lists). */
export const orders = <A>(items: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> =>
  items.length <= 1 ? [items] : items.flatMap((item, i) => orders([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]))

/** The request's `tools`: a namespace entry per run of tools of one namespace (a namespace may be declared twice). */
export const toolsOf = (order: ReadonlyArray<Entry>): Array<{ type: string; name: string; tools?: Array<unknown> }> => {
  const tools: Array<{ type: string; name: string; tools?: Array<unknown> }> = []
  for (const entry of order) {
    const last = tools[tools.length - 1]
    if (entry.namespace === undefined) tools.push(entry.tool)
    else if (last?.type === "namespace" && last.name === entry.namespace) last.tools!.push(entry.tool)
    else tools.push({ type: "namespace", name: entry.namespace, tools: [entry.tool] })
  }
  return tools
}
