/** Detection: what a tool call *is* against the thread's history, new or a repeat under a rule (decide.ts acts). */
import { isAbsolute } from "node:path";
import {
  type CallEffect,
  identityArgs,
  isIdempotentTool,
  isRepeatableTool,
  letsTimePass,
  ownEntry,
} from "../../common/identity/classify.js";
import type { BlockRule } from "../../common/vocabulary.js";
import type { CallFacts, DecideContext, ToolCallInput } from "./call.js";
import {
  answeredAnew,
  answeredRecords,
  answersChanged,
  cachedAnswer,
  doesItAgain,
  exactOf,
  judgedByAnswers,
  mayAnswerAnew,
  retryMayPass,
  saysRunning,
  withEvidence,
} from "./earlier.js";
import {
  type ArgsView,
  type ResolvedEscalationOptions,
  type ResponseInput,
  repeatsBlocked,
  responseAcknowledges,
  textAcknowledges,
} from "./escalation.js";
import { callFacts, ignoredArgs } from "./facts.js";
import { type FileEditsFinding, fileEditsOf } from "./file-edits.js";
import type { ResolvedToolGuardOptions } from "./options.js";
import { findOperation } from "./redundancy.js";
import { repeatsOf } from "./repeat-ceiling.js";
import { type CallRecord, evaluateRepetition, type RecordedResult, type RepetitionState } from "./repetition.js";
import type { CacheHit } from "./result-cache.js";
import type { ToolGuardState } from "./state.js";

/**
 * What a call is: its identity and effect, and the rule it repeats under, if any.
 *
 * @example
 * ```ts
 * const found: Detection = detectCall(state, { name: "ls", args: {} }, options);
 * if (found.rule) console.log(`a repeat (${found.rule}), ${found.count} times`);
 * ```
 */
export interface Detection {
  /** Digest of the call's canonical signature. */
  key: string;
  /** What the call does to the files and state the guards track. */
  effect: CallEffect;
  /** The rule the call repeats under; undefined for a call that is new (or may run again). */
  rule?: BlockRule | undefined;
  /** Identical calls the window would hold with this one (for repeat_failure: the failures in a row). */
  count: number;
  /** What the model already has from the earlier call(s). */
  previous?: RecordedResult | undefined;
  /**
   * A write of a file written often in this run (the file-edits rule, from `remindAt` writes): the file and this
   * call's write of it.
   */
  fileEdits?: FileEditsFinding | undefined;
  /**
   * An identical call made often in this run (the repeat ceiling, from `remindAt` calls): this call's place in the
   * count, and the call that is blocked.
   */
  repeats?:
    | {
        /** Identical calls in this run with this one (since the count last restarted). */
        calls: number;
        /** The identical call that is blocked (`blockAt` of the tool's limits). */
        blockAt: number;
        /** Blocked only once the answers before it were all the same (not by the count). */
        byAnswers?: true | undefined;
      }
    | undefined;
  /** A repeat the result cache answers (no rule applies but the repeat ceiling): the earlier answer it serves. */
  served?: CacheHit | undefined;
  /** Volatile metadata was left out of `key` (see `callIdentity`): no cached answer is served for it, or kept. */
  stripped?: "undeclared" | "unknown" | undefined;
}

/**
 * Canonical identity and effect of a call under the options: ignored fields dropped, paths normalized against
 * `root`, then digested.
 *
 * @example
 * ```ts
 * identifyCall({ name: "read_file", args: { path: "x" } }, resolveToolGuardOptions({ rules: { root: "/r" } })).key ===
 *   identifyCall({ name: "read_file", args: { path: "/r/x" } }, resolveToolGuardOptions({ rules: { root: "/r" } })).key; // true
 * ```
 */
export function identifyCall(
  call: ToolCallInput,
  options: ResolvedToolGuardOptions,
  ctx: DecideContext = {},
): {
  /** Digest of the call's canonical signature. */
  key: string;
  /** What the call does to the files and state the guards track. */
  effect: CallEffect;
  /** Volatile metadata was left out of the key (see `callIdentity`). */
  stripped?: "undeclared" | "unknown";
} {
  const { key, effect, stripped } = callFacts(call, options, ctx);
  return stripped === undefined ? { key, effect } : { key, effect, stripped };
}

/** What escalation compares calls by: its patterns and threshold, with the block rules' view of arguments. */
export type EscalationCompare = Pick<
  ResolvedEscalationOptions,
  "acknowledgmentPatterns" | "retryPatterns" | "contentThreshold"
> & { view: ArgsView };

/**
 * Escalation's comparison with the block rules' view of arguments, so "something different" agrees with the rules.
 * Named fields, not a spread of the options: a spread costs a microsecond, and every response pays it.
 */
export function escalationCompare(options: ResolvedToolGuardOptions): EscalationCompare {
  const { acknowledgmentPatterns, retryPatterns, contentThreshold } = options.escalation;
  return {
    acknowledgmentPatterns,
    retryPatterns,
    contentThreshold,
    // A method, not a named arrow: tsx names every named closure it makes (`__name`), a cost each response paid.
    view(call) {
      try {
        const opts = { tools: options.tools, root: options.rules.root, ignoreArgs: ignoredArgs(options, call.tool) };
        return identityArgs(call.tool, call.args, opts);
      } catch {
        return call.args; // unreadable arguments: compared as they are
      }
    },
  };
}

/** The per-tool `keys` lookup. */
export function substanceKeys(options: ResolvedToolGuardOptions): (tool: string) => readonly string[] | undefined {
  return (tool) => ownEntry(options.tools, tool)?.keys;
}

const mutating = (effect: CallEffect) => effect.kind === "write" || effect.kind === "mutate";
// Files whose every change the guards see: named, and absolute (resolved against `rules.root`, or written so).
const filesKnown = (effect: CallEffect) =>
  "paths" in effect && effect.paths.length > 0 && effect.paths.every(isAbsolute);

/**
 * Detects what a call is, in order: a repeat in the recent window (consecutive, threshold), a redundant call (a
 * read whose result is still valid, or a change repeated with nothing changed since), a call of a cycle gone round
 * twice with exactly the same results, a write of a file already written `blockAt` − 1 times in the run (file_edits;
 * from `remindAt` writes, `fileEdits` says so), an identical call made often in the run (repeat_ceiling, see
 * `repeatsOf`; from `remindAt` calls, `repeats` says so), and after a block, a near-repeat of the blocked call or a
 * tool failing with one error under changing arguments. What earlier answers prove comes from earlier.ts: a call that
 * may answer differently is a consecutive repeat only after two equal answers, a job still running is blocked by
 * the ceiling alone, a failure that may pass is retried twice. Pure.
 *
 * @example
 * ```ts
 * detectCall(emptyToolGuardState(), { name: "read_file", args: { path: "a" } }, resolveToolGuardOptions()).rule;
 * // undefined: a new call
 * ```
 */
export function detectCall(
  state: ToolGuardState,
  call: ToolCallInput,
  options: ResolvedToolGuardOptions,
  ctx: DecideContext = {},
  given: CallFacts = callFacts(call, options, ctx),
): Detection {
  // A poll by its shape whose answers moved by themselves is judged by them, as a poll by name.
  const facts = withEvidence(state.repetition, given);
  const { key, effect, stripped } = facts;
  const tool = ownEntry(options.tools, facts.name);
  if (ctx.disabled || tool?.exempt) return { key, effect, count: 1 };
  // A tool whose repeats the cache serves needs neither the consecutive nor the redundant rule (unless asked for):
  // a repeat is served while its result is good, and runs once it is not.
  const cached = facts.cacheTtlMs !== undefined;
  const verdict = evaluateRepetition(
    state.repetition,
    key,
    {
      repetitionThreshold: tool?.repetitionThreshold ?? options.repetitionThreshold,
      windowSize: options.windowSize,
      consecutive: options.rules.consecutive && (tool?.consecutive ?? !cached),
      countChangedResults: options.rules.countChangedResults,
      countAcrossMutations: options.rules.countAcrossMutations,
    },
    effect,
  );
  const previous = verdict.previous?.result;
  const found: Detection = { key, effect, rule: verdict.rule, count: verdict.count, previous, stripped };
  const served = cachedAnswer(state, facts, ctx);
  if (served !== undefined) {
    // Served, not run: only the repeat ceiling still counts it (a loop of served calls ends too).
    Object.assign(found, { rule: undefined, served });
    repeatCeilingRule(state, facts, found, options, { byCalls: true });
    if (found.rule !== undefined) found.served = undefined;
    return found;
  }
  const byAnswers = judgedByAnswers(facts, tool);
  // Polling a job still running is waiting for its end (the ceiling ends it), and waiting again is waiting longer.
  const running = saysRunning(facts, previous);
  const inWindow = found.rule === "consecutive" || found.rule === "threshold";
  if (inWindow && (running || (byAnswers && facts.waits))) found.rule = undefined;
  if (found.rule === "consecutive" && byAnswers && !verdict.repeatsResult) found.rule = undefined;
  // Answers exactly new each time (a message sent again, with a fresh id) are progress, not a threshold repeat.
  const anew = found.rule === "threshold" && !options.rules.countChangedResults && answeredAnew(state.repetition, key);
  if (anew && byAnswers) found.rule = undefined;
  if (found.rule === "consecutive" && doesItAgain(facts, tool, previous)) found.rule = undefined;
  const redundancy = options.rules.redundancy && (tool?.redundancy ?? !cached) && !running;
  if (found.rule === undefined && !mayAnswerAnew(facts) && redundancy) {
    Object.assign(found, redundancyOf(state, facts, found, verdict.previous, options));
  }
  if ((found.rule === "consecutive" || found.rule === "redundant") && retryMayPass(state.repetition, key)) {
    found.rule = undefined;
  }
  // A call of a stuck cycle is a cycle block whatever other rule it also breaks (the cycle's last call is also a
  // consecutive repeat of itself): one rule for the whole cycle, so its strikes add up.
  const cyclic = !running && (found.rule === undefined || found.rule === "consecutive" || found.rule === "threshold");
  if (options.rules.cycles && cyclic) {
    const cycle = findCycle(state.repetition, key);
    const own = cycle?.find((r) => r.key === key);
    if (own !== undefined) Object.assign(found, { rule: "cycle", count: 3, previous: own.result });
  }
  // The tool's own freshness check decides first: what changed since the result a block would quote is no repeat.
  if (found.rule !== undefined && answersChanged(ctx, facts, found.previous)) {
    Object.assign(found, { rule: undefined, count: verdict.count, previous });
  }
  if (found.rule === undefined) fileEditsRule(state, facts, found, options);
  if (found.rule === undefined) repeatCeilingRule(state, facts, found, options, { moving: running || facts.stateful });
  if (found.rule === undefined && options.escalation.enabled && ctx.response !== undefined) {
    const after = afterBlockOf(state, facts, options, ctx, ctx.response);
    // A near-repeat of a blocked read whose file has changed since is no repeat either.
    if (after.rule !== "near_duplicate" || !answersChanged(ctx, facts, previous)) Object.assign(found, after);
  }
  return found;
}

/** The file-edits rule: it counts writes of the file, whatever the call's content. */
function fileEditsRule(state: ToolGuardState, call: CallFacts, found: Detection, options: ResolvedToolGuardOptions) {
  const edits = fileEditsOf(state.fileEdits, call.name, found.effect, options);
  if (edits === undefined || options.rules.fileEdits === false) return;
  found.fileEdits = edits;
  if (edits.blockedBy !== undefined) {
    const count = edits.blockedBy === "rewrites" ? (edits.rewrites as number) : edits.writes;
    Object.assign(found, { rule: "file_edits", count, previous: undefined });
  }
}

function repeatCeilingRule(
  state: ToolGuardState,
  call: CallFacts,
  found: Detection,
  options: ResolvedToolGuardOptions,
  how: { moving?: boolean; byCalls?: boolean },
) {
  const repeats = repeatsOf(state.repeats, call, options, how);
  if (repeats === undefined) return;
  const { block, ...shown } = repeats;
  Object.assign(found, block ? { repeats: shown, rule: "repeat_ceiling", count: repeats.calls } : { repeats: shown });
}

/** A read whose result is still valid, or the same change again with nothing changed since its last run. */
function redundancyOf(
  state: ToolGuardState,
  call: CallFacts,
  { key, effect }: Detection,
  last: { epoch: number; result?: RecordedResult | undefined } | undefined,
  options: ResolvedToolGuardOptions,
): Partial<Detection> {
  if (effect.kind === "read") {
    const op = findOperation(state.operations, key);
    // A shell read of files the guards do not know (no fingerprint) is judged by its answers: nothing proves it.
    return op === undefined || (call.shell && !filesKnown(effect)) ? {} : { rule: "redundant", previous: op.result };
  }
  if (!mutating(effect) || last?.result === undefined) return {};
  // After a failure the change fails the same way; an idempotent change (update_, set_) changes nothing more.
  // Nothing changed since = the only successful change since that call is its own.
  const tool = ownEntry(options.tools, call.name);
  const result = last.result;
  const changedSince = state.repetition.epoch !== last.epoch + (result.ok ? 1 : 0);
  const repeatsNothing = !result.ok || (isIdempotentTool(call.name, tool) && !call.shell);
  if (changedSince || !repeatsNothing || (result.ok && isRepeatableTool(call.name, tool))) return {};
  return { rule: "redundant", previous: result };
}

/** The after-block rules: near_duplicate (unacknowledged repeat) and repeat_failure (one error, changing args). */
function afterBlockOf(
  state: ToolGuardState,
  call: CallFacts,
  options: ResolvedToolGuardOptions,
  ctx: DecideContext,
  response: ResponseInput,
): Partial<Detection> {
  const esc = options.escalation;
  const escState = state.escalation;
  if (escState.blocked.length > 0) {
    const compare = escalationCompare(options);
    const keys = ownEntry(options.tools, call.name)?.keys;
    const acknowledged = ctx.acknowledged ?? responseAcknowledges(escState, response, compare, substanceKeys(options));
    if (!acknowledged && repeatsBlocked(escState, { tool: call.name, args: call.args }, compare, keys)) {
      return { rule: "near_duplicate" };
    }
  }
  // A shell's "arguments" are whole commands: different commands that fail alike (a `grep` that matches nothing)
  // are not one update retried with other values.
  if (esc.sameErrorThreshold === 0 || call.shell) return {};
  const run = sameErrorRun(state.repetition, call.name);
  if (run.count < esc.sameErrorThreshold || textAcknowledges(response.text, esc)) return {};
  return { rule: "repeat_failure", count: run.count, previous: run.result };
}

/** `tool`'s latest run of one non-empty error under at least two argument sets (empty: `grep` matching nothing). */
function sameErrorRun(repetition: RepetitionState, tool: string): { count: number; result?: RecordedResult } {
  const run: CallRecord[] = [];
  for (const record of answeredRecords(repetition)) {
    const result = record.result as RecordedResult;
    if (record.tool !== tool) continue;
    if (result.ok || result.preview.trim() === "" || record.epoch !== repetition.epoch) break;
    if (run[0] !== undefined && result.digest !== run[0].result?.digest) break;
    run.push(record);
  }
  // Two calls of the run differ: one call failing again is the consecutive rule's.
  return run.some((r) => r.key !== run[0]?.key) ? { count: run.length, result: run[0]?.result } : { count: 0 };
}

/** Two rounds of the longest cycle fit the default window of 10 calls. */
const LONGEST_CYCLE = 5;

/** The cycle rule: the shortest cycle the window holds twice with exactly the same results (A, B, A, B). */
function findCycle(state: RepetitionState, key: string): CallRecord[] | undefined {
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
      // Exactly the same: answers that differ only in fresh ids (a message sent again) are progress.
      same = b.key === r.key && r.result !== undefined && exactOf(b) === exactOf(r);
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
