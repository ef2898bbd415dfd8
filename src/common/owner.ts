// Which agent a guard's memory belongs to, when agents share a channel (see "agent" in notes/architecture.md).

/** The agent a node runs in: its enclosing nodes from `checkpoint_ns`; `undefined` outside a graph. */
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

/** A whole value replaces `current` unless it is another agent's coming back (a sub-agent's final state) unclaimed. */
export function wholeValueStands(
  current: { agent?: string | undefined } | null | undefined,
  update: { agent?: string | undefined } & Claim,
): boolean {
  const mine = current?.agent;
  if (mine === undefined || update.agent === undefined || update.agent === mine) return true;
  return update.claims === mine;
}

/** Another agent's value reads as none: the guards start afresh. */
export function ownValue<T extends { agent?: string | undefined }>(
  value: T | undefined,
  agent: string | undefined,
): T | undefined {
  if (value === undefined || agent === undefined || value.agent === undefined || value.agent === agent) return value;
  return undefined;
}
