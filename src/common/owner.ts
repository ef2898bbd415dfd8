// Which agent a guard's memory belongs to (several agents can share a channel: deepagents' sub-agents, a supervisor's
// workers). Each value is tagged with the agent that wrote it; see "agent" in notes/architecture.md.

/**
 * The agent a node runs in: the names of the graph nodes that enclose it, from its config's `checkpoint_ns` (`""` the
 * outermost graph, `"tools"` a sub-agent started by a tool), the same on every invocation of the thread; `undefined`
 * when the config says nothing (a guard used outside a graph: its memory is nobody's in particular).
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

/** A whole value written by an agent that took the channel over: `claims` names the agent whose value it replaces. */
export interface Claim {
  claims?: string | undefined;
}

/**
 * Whether a whole value written to a channel replaces the channel's `current` value: yes, unless both are tagged with
 * different agents (another agent's state coming back, e.g. a deepagents sub-agent's final state) and the write does
 * not claim the current value for its own agent (an agent's first write over what it was handed).
 */
export function wholeValueStands(
  current: { agent?: string | undefined } | null | undefined,
  update: { agent?: string | undefined } & Claim,
): boolean {
  const mine = current?.agent;
  if (mine === undefined || update.agent === undefined || update.agent === mine) return true;
  return update.claims === mine;
}

/** A value of another agent read as none (the guards start afresh), else the value as it is. */
export function ownValue<T extends { agent?: string | undefined }>(
  value: T | undefined,
  agent: string | undefined,
): T | undefined {
  if (value === undefined || agent === undefined || value.agent === undefined || value.agent === agent) return value;
  return undefined;
}
