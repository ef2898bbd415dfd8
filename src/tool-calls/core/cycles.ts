/**
 * The cycle rule's finding: the same round of calls, with the same results, twice in a row at the end of the window.
 */
import type { CallRecord, RepetitionState } from "./repetition.js";

/**
 * The longest cycle the cycle rule looks for (ml-intern and Hermes find cycles of 2 to 5 calls). Two rounds of it
 * fit the default window of 10 calls; a smaller window sees cycles of up to half its size.
 */
const LONGEST_CYCLE = 5;

/**
 * A cycle of 2 to {@link LONGEST_CYCLE} (5) calls, two at least different, that the recent window holds twice in a
 * row with the same result at every position (A, B, A, B with A and B each answering as before): the agent goes
 * round without learning anything. The shortest such cycle wins. Returns the cycle's records (its latest round) when
 * `key` is one of its calls, else undefined. Independent of what the tools do: a cycle whose results change is
 * progress and is not found, and so is a cycle with a call that lets time pass (`letsTimePass`: a wait between
 * polls). Looks at the last 2 × 5 records at most, so it costs the same at any window size.
 *
 * @example
 * ```ts
 * // window: ls → "a.py", cat a.py → "x", ls → "a.py", cat a.py → "x"
 * findCycle(state, lsKey)?.length; // 2: calling ls again goes round the cycle a third time
 * ```
 */
export function findCycle(
  state: RepetitionState,
  key: string,
  letsTimePass: (tool: string) => boolean = () => false,
): CallRecord[] | undefined {
  const window = state.window;
  const n = window.length;
  for (let size = 2; size <= LONGEST_CYCLE; size += 1) {
    if (n < 2 * size) break;
    // The latest round repeats the one before it, call by call and result by result …
    let own = false;
    let mixed = false;
    let same = true;
    for (let j = 0; j < size && same; j += 1) {
      const r = window[n - size + j] as CallRecord;
      const b = window[n - 2 * size + j] as CallRecord;
      same = b.key === r.key && r.result !== undefined && b.result?.digest === r.result.digest;
      if (r.key === key) own = true;
      if (r.key !== (window[n - size] as CallRecord).key) mixed = true;
    }
    // … with `key` in it, two calls at least (one call repeated is the other rules' case), and no wait between polls.
    if (!same || !own || !mixed) continue;
    const latest = window.slice(n - size);
    if (latest.some((r) => letsTimePass(r.tool))) continue;
    return latest;
  }
  return undefined;
}
