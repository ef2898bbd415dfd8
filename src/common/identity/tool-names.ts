// Which real tool a model probably meant when it called one the agent does not have (a typo, another spelling).

/** The most tools named as probably meant. */
export const MAX_SUGGESTIONS = 3;

/** Key characters compared by edit distance (a longer name is cut): tool names are at most 64 in the usual APIs. */
const MAX_KEY = 128;

/** The key two spellings of one tool name share: lowercased, without `_`, `-`, `.` and white space. */
export function toolNameKey(name: string): string {
  return name.toLowerCase().replace(/[\s_.-]+/g, "");
}

/** The largest typo distance for keys `length` long: 0 below 5, where a letter makes another word (`read`/`head`). */
function allowedDistance(length: number): number {
  return length >= 6 ? 2 : length === 5 ? 1 : 0;
}

/** Optimal-string-alignment distance (swapping two neighbours costs 1), or `max + 1` once it must exceed `max`. */
function editDistance(a: readonly string[], b: readonly string[], max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    let least = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (before[j - 2] as number) + 1);
      row.push(d);
      least = Math.min(least, d);
    }
    if (least > max) return max + 1;
    before = previous;
    previous = row;
  }
  return Math.min(previous[b.length] as number, max + 1);
}

/** A key as the edit distance reads it: its code points, at most {@link MAX_KEY}. */
const points = (key: string) => Array.from(key).slice(0, MAX_KEY);

/**
 * The tools the model probably meant by `name`, in the order of `tools`: those with its {@link toolNameKey}, else the
 * nearest by edit distance within {@link allowedDistance}; none when `name` is a tool or nothing is close.
 */
export function suggestToolNames(name: string, tools: readonly string[]): string[] {
  if (tools.includes(name)) return [];
  const unique = [...new Set(tools)];
  const key = toolNameKey(name);
  if (key === "") return [];
  const same = unique.filter((t) => toolNameKey(t) === key);
  if (same.length > 0) return same.slice(0, MAX_SUGGESTIONS);
  const own = points(key);
  let best = Number.POSITIVE_INFINITY;
  let nearest: string[] = [];
  for (const tool of unique) {
    const other = points(toolNameKey(tool));
    const max = Math.min(allowedDistance(Math.min(own.length, other.length)), best);
    if (max === 0) continue;
    const d = editDistance(own, other, max);
    if (d > max) continue;
    if (d < best) [best, nearest] = [d, []];
    nearest.push(tool);
  }
  return nearest.slice(0, MAX_SUGGESTIONS);
}

/**
 * The `count` tools nearest `name`: {@link suggestToolNames}'s first, then the others by edit distance (ties in order).
 */
export function nearestToolNames(name: string, tools: readonly string[], count: number): string[] {
  const first = suggestToolNames(name, tools);
  const own = points(toolNameKey(name));
  const rest = [...new Set(tools)]
    .filter((t) => !first.includes(t))
    .map((tool, i) => {
      const other = points(toolNameKey(tool));
      return { tool, i, d: editDistance(own, other, Math.max(own.length, other.length)) };
    })
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .map((r) => r.tool);
  return [...first, ...rest].slice(0, Math.max(0, count));
}
