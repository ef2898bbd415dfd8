/** The totals of a replay: what the guards would have blocked, cached or stopped, judged by the ground truth. */
import type { BlockRule } from "../common/vocabulary.js";
import { BLOCK_RULES } from "../tool-calls/core/rules.js";

/**
 * Totals of a replay (one run, or several added up with {@link addTotals}).
 *
 * @example
 * ```ts
 * const { wasteCaught, harmfulBlockRate } = rates(totals);
 * ```
 */
export interface ReplayTotals {
  /** Runs replayed. */
  runs: number;
  /** Agent tool calls with a recorded result (calls without one are left out). */
  calls: number;
  /** Calls that would have run. */
  allowed: number;
  /** Blocked calls, by guard. */
  blocked: Record<BlockRule, number>;
  /** Blocked calls, by escalation level (index 0 = escalation off). */
  escalation: [number, number, number, number, number];
  /** Calls answered from the result cache (an earlier identical call's result) instead of running. */
  cached: number;
  /** Calls not made because the run stopped before them. */
  stopped: number;
  /** Runs the guards stopped early. */
  runsStopped: number;
  /** Ground truth: calls that produced nothing new. */
  waste: number;
  /** Waste calls that did not run (blocked, cached or stopped). */
  wasteCaught: number;
  /** Progress calls that did not run. */
  progressBlocked: number;
  /** Characters of recorded results that were not sent to the model again (calls that did not run). */
  charsSaved: number;
  /** Calls that ran and whose unchanged result was answered with a short note (result dedupe). */
  deduped: number;
  /** Characters result dedupe kept out of the context (each result's length minus its note's). */
  charsDeduped: number;
}

/**
 * Empty totals.
 *
 * @example
 * ```ts
 * const all = runs.reduce((t, r) => addTotals(t, replayGuards(r).totals), emptyTotals());
 * ```
 */
export function emptyTotals(): ReplayTotals {
  return {
    runs: 0,
    calls: 0,
    allowed: 0,
    blocked: Object.fromEntries(BLOCK_RULES.map((rule) => [rule, 0])) as Record<BlockRule, number>,
    escalation: [0, 0, 0, 0, 0],
    cached: 0,
    stopped: 0,
    runsStopped: 0,
    waste: 0,
    wasteCaught: 0,
    progressBlocked: 0,
    charsSaved: 0,
    deduped: 0,
    charsDeduped: 0,
  };
}

/**
 * Adds two totals.
 *
 * @example
 * ```ts
 * addTotals(emptyTotals(), replayGuards(run).totals).runs; // 1
 * ```
 */
export function addTotals(a: ReplayTotals, b: ReplayTotals): ReplayTotals {
  return addInto(addInto(emptyTotals(), a), b);
}

type Count = Exclude<keyof ReplayTotals, "blocked" | "escalation">;
const COUNTS = Object.keys(emptyTotals()).filter((k) => k !== "blocked" && k !== "escalation") as Count[];

/** Adds `b` into `into` (changed in place) and returns it: what the CLI adds millions of runs up with. */
export function addInto(into: ReplayTotals, b: ReplayTotals): ReplayTotals {
  for (const rule of BLOCK_RULES) into.blocked[rule] += b.blocked[rule];
  for (const i of [0, 1, 2, 3, 4] as const) into.escalation[i] += b.escalation[i];
  for (const key of COUNTS) into[key] += b[key];
  return into;
}

/**
 * The two figures of the shared data set's ground truth: waste caught (waste calls that did not run / all waste
 * calls) and harmful block rate (progress calls that did not run / all calls that did not run).
 *
 * @example
 * ```ts
 * rates(totals); // { wasteCaught: 0.91, harmfulBlockRate: 0.008, notRun: 1530 }
 * ```
 */
export function rates(t: ReplayTotals): {
  /** Waste calls that did not run / all waste calls (0 without waste). */
  wasteCaught: number;
  /** Progress calls that did not run / all calls that did not run (0 when every call ran). */
  harmfulBlockRate: number;
  /** Calls that did not run (blocked, cached or stopped). */
  notRun: number;
} {
  const notRun = t.calls - t.allowed;
  return {
    wasteCaught: t.waste === 0 ? 0 : t.wasteCaught / t.waste,
    harmfulBlockRate: notRun === 0 ? 0 : t.progressBlocked / notRun,
    notRun,
  };
}

/**
 * What the guards would have done with one of the agent's tool calls: `allow` (it runs), `block` (a guard answers
 * instead), `cache` (answered from the result cache, an earlier identical call's result, instead of running), `stop`
 * (the run would have ended, or been interrupted for a person, before this call).
 *
 * @example
 * ```ts
 * const blocked = decisions.filter((d: ReplayDecision) => d.action === "block").map((d) => d.rule);
 * ```
 */
export interface ReplayDecision {
  /** Position among the run's agent tool calls. */
  index: number;
  /** Position of the call's assistant step in `run.steps`. */
  step: number;
  /** The tool's name. */
  toolName: string;
  /** The call's arguments. */
  args: unknown;
  /** What the guards would have done (see above). */
  action: "allow" | "block" | "cache" | "stop";
  /** The rule that blocked the call (or would have, for an allowed call in observe mode). */
  rule?: BlockRule | undefined;
  /** Escalation level of a block (1 ask, 2 options, 3 a person is asked, 4 the run ends). */
  escalation?: number | undefined;
  /** A block that is a reminder to acknowledge. */
  reminder?: boolean | undefined;
  /** What the model would have read for this call: the recorded result, the block's feedback, or why it stopped. */
  content: string;
  /** Ground truth: the call produced nothing new (an earlier identical call returned exactly the same). */
  waste: boolean;
  /** The recorded result's length (characters a block or stop keeps out of the context). */
  resultChars: number;
  /** Whether the run recorded a result for this call (calls without one are left out of the totals). */
  recorded: boolean;
  /** The call ran, and its result repeated an earlier identical call's: the model read a short note instead. */
  deduped?: boolean | undefined;
}

/** The totals of one replayed run. */
export function totalsOf(decisions: ReplayDecision[], stopped: boolean): ReplayTotals {
  const t = emptyTotals();
  t.runs = 1;
  t.runsStopped = stopped ? 1 : 0;
  for (const d of decisions) {
    if (!d.recorded) continue; // the run ended before this call's result: nothing to judge
    t.calls += 1;
    if (d.waste) t.waste += 1;
    if (d.action === "allow") {
      t.allowed += 1;
      if (d.deduped === true) {
        t.deduped += 1;
        t.charsDeduped += d.resultChars - d.content.length;
      }
      continue;
    }
    if (d.waste) t.wasteCaught += 1;
    else t.progressBlocked += 1;
    // A call served from the cache did not run, but its (earlier) result was sent again.
    if (d.action !== "cache") t.charsSaved += d.resultChars;
    if (d.action === "block") {
      if (d.rule !== undefined) t.blocked[d.rule] += 1;
      const at = Math.min(4, d.escalation ?? 0) as 0 | 1 | 2 | 3 | 4;
      t.escalation[at] += 1;
    } else if (d.action === "cache") t.cached += 1;
    else t.stopped += 1;
  }
  return t;
}
