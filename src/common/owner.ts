/**
 * Which agent a guard's memory belongs to. Several agents can share a channel: deepagents hands a sub-agent its
 * parent's state (the guard channels included) and takes the sub-agent's final state back, and a supervisor's
 * `stateSchema` may declare the guard channels for every worker. The guards' memory is kept per agent: each value
 * is tagged with the agent that wrote it, an agent that reads another agent's value starts afresh, and a value that
 * comes back from another agent (a whole state, not this agent's events) leaves this agent's value as it was.
 *
 * The agent is where its graph runs: the names of the graph nodes that enclose it, read from LangGraph's
 * `checkpoint_ns` (`""` for the outermost graph, `"tools"` for a sub-agent started by a tool, `"worker_a"` for a
 * supervisor's worker, `"alice"` for a swarm's agent). It is the same on every invocation of the thread, with or
 * without a checkpointer.
 */

/**
 * The agent a node runs in, from its config's `configurable` (see the module comment): `undefined` when the config
 * says nothing (a guard used outside a graph: its memory is nobody's in particular).
 *
 * @example
 * ```ts
 * agentOf({ checkpoint_ns: "tools:3f2a|GuardMiddleware.after_model:9c1b" }); // "tools"
 * agentOf({ checkpoint_ns: "GuardMiddleware.after_model:9c1b" }); // ""
 * ```
 */
export function agentOf(configurable: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const ns = configurable?.checkpoint_ns;
  if (typeof ns !== "string") return undefined;
  // Each level is `node:task` (the task id changes every step); the last level is the node running now.
  const last = ns.lastIndexOf("|");
  if (last < 0) return ""; // the outermost graph: the usual case, no work
  return ns
    .slice(0, last)
    .split("|")
    .map((level) => level.split(":")[0])
    .join("|");
}

/**
 * A whole value written to a guard channel by an agent that took the channel over from another one (the first write
 * of a sub-agent whose input held its parent's value): see {@link wholeValueStands}.
 */
export interface Claim {
  /** The agent whose value this write replaces. */
  claims?: string | undefined;
}

/**
 * Whether a whole value written to a channel replaces the channel's `current` value: yes, unless both are tagged with
 * different agents (another agent's state coming back, e.g. a deepagents sub-agent's final state) and the write does
 * not claim the current value for its own agent (an agent's first write over what it was handed).
 *
 * @example
 * ```ts
 * wholeValueStands({ agent: "" }, { agent: "tools" }); // false: the sub-agent's state came back
 * wholeValueStands({ agent: "" }, { agent: "tools", claims: "" }); // true: the sub-agent's own first write
 * ```
 */
export function wholeValueStands(
  current: { agent?: string | undefined } | null | undefined,
  update: { agent?: string | undefined } & Claim,
): boolean {
  const mine = current?.agent;
  if (mine === undefined || update.agent === undefined || update.agent === mine) return true;
  return update.claims === mine;
}

/**
 * A value of another agent read as none (the guards start afresh), else the value as it is.
 *
 * @example
 * ```ts
 * ownValue({ agent: "", iterations: 3 }, "tools"); // undefined
 * ownValue({ agent: "tools", iterations: 3 }, "tools"); // the value
 * ```
 */
export function ownValue<T extends { agent?: string | undefined }>(
  value: T | undefined,
  agent: string | undefined,
): T | undefined {
  if (value === undefined || agent === undefined || value.agent === undefined || value.agent === agent) return value;
  return undefined;
}
