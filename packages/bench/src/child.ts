/**
 * Entry point of the harness's child processes, each a fresh V8 heap:
 *
 * - `child.ts memory <contender id> <bytes> <live | sampled>`: see `Memory.child`;
 * - `child.ts aggregation <small> <large> <repeats>`: prints `Aggregation.measure` as one JSON line;
 * - `child.ts floor-proxy <upstream base URL> <port>`: serves `FloorProxy` until killed;
 * - `child.ts stall-poller <gateway base URL> <gateway pid>`: polls the gateway's `/health` on command from
 *   stdin, see `GatewayStall.poller`.
 *
 * @since 0.1.0
 */

// each command loads only its own modules (the floor proxy's process holds no Effect, no SDK)
const usage = () => {
  process.stderr.write(
    "usage: child.ts memory <contender id> <bytes> <live | sampled>\n       child.ts aggregation <small> <large> <repeats>\n" +
      "       child.ts floor-proxy <upstream base URL> <port>\n" +
      "       child.ts stall-poller <gateway base URL> <gateway pid>\n"
  )
  process.exit(2)
}

const run = async (): Promise<void> => {
  const [command, ...rest] = process.argv.slice(2)
  if (command === "memory") {
    const [id, bytes, mode] = rest
    if (id === undefined || bytes === undefined || (mode !== "live" && mode !== "sampled")) return usage()
    const Memory = await import("./Memory.js")
    return Memory.child(id, Number(bytes), mode)
  }
  if (command === "aggregation") {
    const [small, large, repeats] = rest.map(Number)
    if (small === undefined || large === undefined || repeats === undefined) return usage()
    const Aggregation = await import("./Aggregation.js")
    process.stdout.write(`${JSON.stringify(Aggregation.measure(small, large, repeats))}\n`)
    return
  }
  if (command === "floor-proxy") {
    const [upstream, port] = rest
    if (upstream === undefined || port === undefined) return usage()
    const FloorProxy = await import("./FloorProxy.js")
    return FloorProxy.serve(upstream, Number(port))
  }
  if (command === "stall-poller") {
    const [base, pid] = rest
    if (base === undefined || pid === undefined) return usage()
    const GatewayStall = await import("./GatewayStall.js")
    return GatewayStall.poller(base, Number(pid))
  }
  usage()
}

run().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
