// Models and providers sometimes repeat a call id within a response, or send none: the guards then match decisions,
// results and answers to calls by position, never by an id two calls share.

/**
 * Unique ids for a response's calls (`<id>#<position>` where shared or missing), for the guards' state and events;
 * the ToolMessage keeps the model's own id, which pairs with its AI message.
 */
export function distinctCallIds(ids: readonly (string | null | undefined)[]): string[] {
  if (ids.length === 1) return [ids[0] ? ids[0] : "#1"];
  const counts = new Map<string, number>();
  for (const id of ids) if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  if (counts.size === ids.length) return ids as string[]; // every id present and unique: the usual response
  const taken = new Set<string>();
  for (const [id, count] of counts) if (count === 1) taken.add(id);
  return ids.map((id, i) => {
    if (id && counts.get(id) === 1) return id;
    let made = `${id ?? ""}#${i + 1}`;
    while (taken.has(made)) made += "'";
    taken.add(made);
    return made;
  });
}

/**
 * The position of a parallel task's call (a copy) among the response's calls: by id, then `same(i)`, then the first
 * unclaimed by another task (a retried task keeps its position); -1: no call has the id.
 */
export function callPosition(
  ids: readonly (string | null | undefined)[],
  id: string | null | undefined,
  same: (i: number) => boolean,
  claim?: { owner: object; task: object },
): number {
  const wanted = id ?? "";
  const candidates: number[] = [];
  for (let i = 0; i < ids.length; i += 1) if ((ids[i] ?? "") === wanted) candidates.push(i);
  if (candidates.length <= 1) return candidates[0] ?? -1;
  const matching = candidates.filter(same);
  const pool = matching.length > 0 ? matching : candidates;
  if (pool.length === 1 || claim === undefined) return pool[0] as number;
  let claims = claimed.get(claim.owner);
  if (claims === undefined) {
    claims = new Map();
    claimed.set(claim.owner, claims);
  }
  const own = claims.get(claim.task);
  if (own !== undefined && pool.includes(own)) return own;
  const taken = new Set(claims.values());
  const free = pool.find((i) => !taken.has(i)) ?? (pool[0] as number);
  claims.set(claim.task, free);
  return free;
}

/** Claimed positions, per response, per task's call. */
const claimed = new WeakMap<object, Map<object, number>>();
