/** The repeat ceiling: identical calls in the current run, whatever they answer (it stops loops of varying answers). */
import { nameWords, ownEntry } from "../../common/identity/classify.js";
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
  /** A poll's latest answer (the digest the rules compare). */
  last?: string | undefined;
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

// Words of a tool's name that say it looks something up: its answers to one question change only in wording.
const ASKING_WORDS = new Set(["search", "lookup", "query", "retrieve", "find"]);

/**
 * Whether identical calls may answer differently by themselves (a poll, a shell command, an unknown non-search tool):
 * the `changing` limits. A read or a search keeps the lower ones (an LLM-backed search rewords the same answer).
 */
function answersMayChange(call: CallFacts): boolean {
  if (call.shell || call.stateful) return true;
  if (call.effect.kind === "read") return false;
  return !nameWords(call.name).some((w) => ASKING_WORDS.has(w));
}

/** The position of `key`'s count, searched from the most recent end (the usual place), or -1. */
function positionOf(calls: readonly RepeatCount[], key: string): number {
  let at = calls.length - 1;
  while (at >= 0 && (calls[at] as RepeatCount).key !== key) at -= 1;
  return at;
}

/** How many identical calls with key `key` were made since their count last restarted (0: none, or restarted). */
function repeatCountOf(state: RepeatState | undefined, key: string): number {
  if (state === undefined) return 0;
  const at = positionOf(state.calls, key);
  if (at < 0) return 0;
  const count = state.calls[at] as RepeatCount;
  return count.mark === state.mark ? count.calls : 0;
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
  const kept = at < 0 ? calls.slice() : [...calls.slice(0, at), ...calls.slice(at + 1)];
  kept.push(next);
  return { mark, calls: kept.length > REPEATS_LIMIT ? kept.slice(kept.length - REPEATS_LIMIT) : kept };
}

/**
 * The counts after a counted call's result came in: a poll with a new answer (`digest`) restarts at 1; the first call
 * of a key in the run that `changed` something (a successful change) moves the mark, so every other count restarts.
 */
export function noteRepeatResult(state: RepeatState, key: string, digest: string, changed: boolean): RepeatState {
  const at = positionOf(state.calls, key);
  if (at < 0) return state;
  const before = state.calls[at] as RepeatCount;
  // Nothing to note: not the first call of its key, and not a poll with a new answer.
  if (before.fresh === undefined && (before.poll !== true || before.last === digest)) return state;
  const moved = before.fresh === true && changed;
  const mark = moved ? state.mark + 1 : state.mark;
  const progress = before.poll === true && before.last !== undefined && before.last !== digest;
  const next: RepeatCount = {
    key,
    tool: before.tool,
    calls: progress ? 1 : before.calls,
    mark: moved ? mark : before.mark,
  };
  if (before.poll === true) {
    next.poll = true;
    next.last = digest;
  }
  const calls = state.calls.slice();
  calls[at] = next;
  return { mark, calls };
}

/**
 * The ceiling's finding for a call before it runs: its place among identical calls in this run (this one included),
 * once that reaches the tool's `remindAt` or `blockAt`; `undefined` otherwise (too few, ceiling off, or a wait).
 */
export function repeatsOf(
  state: RepeatState | undefined,
  call: CallFacts,
  options: CeilingOptions,
): { calls: number; block: boolean; blockAt: number } | undefined {
  const limits = ceilingLimits(options, call.name, answersMayChange(call));
  if (limits === false) return undefined;
  const calls = repeatCountOf(state, call.key) + 1;
  const from = limits.remindAt === false ? limits.blockAt : limits.remindAt;
  if (calls < from || call.repeat === "wait") return undefined;
  return { calls, block: calls >= limits.blockAt, blockAt: limits.blockAt };
}
