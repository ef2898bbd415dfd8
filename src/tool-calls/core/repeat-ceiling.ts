/** The repeat ceiling: identical calls in the current run, and their answers equal in a row (see `repeatsOf`). */
import { looksUp, ownEntry } from "../../common/identity/classify.js";
import type { CallFacts, RepeatKind } from "./call.js";
import type { ResolvedToolGuardOptions } from "./options.js";

/**
 * How many times one identical call was made since its count last restarted (see {@link RepeatState}).
 *
 * @example
 * ```ts
 * const latest: RepeatCount | undefined = state.toolGuard.repeats?.calls.at(-1);
 * // { key: "…", tool: "web_search", calls: 7, mark: 2 }
 * ```
 */
export interface RepeatCount {
  /** Digest of the call's canonical signature. */
  key: string;
  /** The tool's name. */
  tool: string;
  /** Identical calls that ran since the count restarted (blocked calls do not count). */
  calls: number;
  /** The state's `mark` when the call was last counted: a count whose mark is not the state's has restarted. */
  mark: number;
  /** A poll (a stateful call): an answer unlike the one before (after normalization) is progress, and restarts. */
  poll?: true | undefined;
  /** The latest answer (the digest the rules compare). */
  last?: string | undefined;
  /** Answers equal to `last` in a row since the count restarted (`last` included). */
  same?: number | undefined;
  /** Made for the first time in the run and its result not in yet: a successful change by it moves the mark. */
  fresh?: true | undefined;
}

/**
 * The repeat ceiling's counts in the current run: the most recently made calls last, at most 50 (`REPEATS_LIMIT`).
 * `mark` moves at every change made by a call new in the run, every call that lets time pass and every change made
 * by someone else: each count made under an older mark starts again.
 *
 * @example
 * ```ts
 * const repeats: RepeatState | undefined = state.toolGuard.repeats; // absent until a repeat is counted
 * ```
 */
export interface RepeatState {
  /** Moved by what restarts every count (see above). */
  mark: number;
  /** The counts, the most recently made call last. */
  calls: RepeatCount[];
}

/** Identical calls whose counts are kept in one run (the most recently made ones; an older call's is forgotten). */
export const REPEATS_LIMIT = 50;

type CeilingOptions = Pick<ResolvedToolGuardOptions, "rules" | "tools">;

/** Whether the ceiling is on for any tool (globally, or by a tool's own limits): then every call is tracked. */
export function isTracked(options: CeilingOptions): boolean {
  return (
    options.rules.repeatCeiling !== false ||
    Object.values(options.tools).some((t) => t?.repeatCeiling !== undefined && t.repeatCeiling !== false)
  );
}

/** The ceiling's limits for a call (`false`: off for it); `changing`: its answers may vary by themselves. */
function ceilingLimits(
  options: CeilingOptions,
  tool: string,
  changing: boolean,
): false | { remindAt: number | false; blockAt: number } {
  const own = ownEntry(options.tools, tool)?.repeatCeiling;
  if (own !== undefined) return own;
  const rules = options.rules.repeatCeiling;
  return rules === false ? false : changing ? rules.changing : rules;
}

// A delegation, a question asked of another agent: `task`, `agent`, `delegate_work`, `call_subagent`.
const DELEGATES = /^(?:task|agent)$|delegate|sub_?agent/i;
/** A search or a delegation: a question asked again is waste, whatever the answer's wording. */
const asks = (call: CallFacts) => DELEGATES.test(call.name) || looksUp(call.name);

/**
 * Whether identical calls may answer differently by themselves (a poll, a shell command, an unknown non-search tool):
 * the `changing` limits. A read or a search keeps the lower ones (an LLM-backed search rewords the same answer).
 */
function answersMayChange(call: CallFacts): boolean {
  if (call.shell || call.stateful) return true;
  return call.effect.kind !== "read" && !asks(call);
}

/** The position of `key`'s count, searched from the most recent end (the usual place), or -1. */
function positionOf(calls: readonly RepeatCount[], key: string): number {
  let at = calls.length - 1;
  while (at >= 0 && (calls[at] as RepeatCount).key !== key) at -= 1;
  return at;
}

/** The count of key `key` in the current run (since it last restarted), if any. */
function countOf(state: RepeatState | undefined, key: string): RepeatCount | undefined {
  const count = state === undefined ? undefined : state.calls[positionOf(state.calls, key)]; // [-1]: none
  return count?.mark === state?.mark ? count : undefined;
}

/**
 * The counts after a call was recorded: a wait moves the mark; any other call is counted (afresh when its count's
 * mark is old), moved to the most recent end, the oldest dropped beyond {@link REPEATS_LIMIT}.
 */
export function noteRepeatCall(
  state: RepeatState | undefined,
  key: string,
  tool: string,
  kind: RepeatKind,
): RepeatState {
  const mark = state?.mark ?? 0;
  const calls = state?.calls ?? [];
  if (kind === "wait") return { mark: mark + 1, calls };
  const at = positionOf(calls, key);
  const before = at < 0 ? undefined : (calls[at] as RepeatCount);
  const next: RepeatCount = { key, tool, calls: 1, mark };
  if (before === undefined) next.fresh = true;
  else if (before.mark === mark) next.calls = before.calls + 1;
  if (kind === "poll") next.poll = true;
  if (before?.last !== undefined) next.last = before.last;
  if (before?.mark === mark && before.same !== undefined) next.same = before.same;
  const kept = calls.slice();
  if (at >= 0) kept.splice(at, 1);
  kept.push(next);
  if (kept.length > REPEATS_LIMIT) kept.splice(0, kept.length - REPEATS_LIMIT);
  return { mark, calls: kept };
}

/**
 * The counts after a counted call's result came in (`digest`): its equal answers in a row go on or restart, a poll
 * with a new answer restarts at 1; the first call of a key in the run that `changed` something moves the mark.
 */
export function noteRepeatResult(state: RepeatState, key: string, digest: string, changed: boolean): RepeatState {
  const at = positionOf(state.calls, key);
  if (at < 0) return state;
  const before = state.calls[at] as RepeatCount;
  const again = before.last === digest;
  const moved = before.fresh === true && changed;
  const mark = moved ? state.mark + 1 : state.mark;
  const next: RepeatCount = {
    key,
    tool: before.tool,
    calls: before.poll === true && before.last !== undefined && !again ? 1 : before.calls,
    mark: moved ? mark : before.mark,
    last: digest,
    same: again && before.same !== undefined ? before.same + 1 : 1,
  };
  if (before.poll === true) next.poll = true;
  const calls = state.calls.slice();
  calls[at] = next;
  return { mark, calls };
}

/**
 * The ceiling's finding for a call before it runs: its place among identical calls in this run (this one included),
 * once that reaches the tool's `remindAt` or `blockAt`; `undefined` otherwise (too few, ceiling off, or a wait). A
 * search's, a delegation's, a served call's (`byCalls`) or one under its tool's own limits blocks by that count; any
 * other only once `blockAt` − 1 answers in a row were the same. `moving` (a running job): the `changing` limits.
 */
export function repeatsOf(
  state: RepeatState | undefined,
  call: CallFacts,
  options: CeilingOptions,
  { moving = false, byCalls = false } = {},
): { calls: number; block: boolean; blockAt: number; byAnswers?: true } | undefined {
  const limits = ceilingLimits(options, call.name, moving || answersMayChange(call));
  if (limits === false) return undefined;
  const count = countOf(state, call.key);
  const calls = (count?.calls ?? 0) + 1;
  const from = limits.remindAt === false ? limits.blockAt : limits.remindAt;
  if (calls < from || call.repeat === "wait") return undefined;
  if (byCalls || ownEntry(options.tools, call.name)?.repeatCeiling !== undefined || asks(call))
    return { calls, block: calls >= limits.blockAt, blockAt: limits.blockAt };
  return { calls, block: (count?.same ?? 0) + 1 >= limits.blockAt, blockAt: limits.blockAt, byAnswers: true };
}
