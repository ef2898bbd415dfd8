/** What a call's earlier identical answers say: served, answered with a note, or open to a repeat rule. */
import { isRepeatableTool, isShellTool, type ToolTraits } from "../../common/identity/classify.js";
import type { CallFacts, CallOutcome, DecideContext } from "./call.js";
import type { ResolvedToolGuardOptions } from "./options.js";
import { type CallRecord, type RecordedResult, type RepetitionState, resultDigest } from "./repetition.js";
import type { CacheHit } from "./result-cache.js";
import { answerFor, type ToolGuardState } from "./state.js";
import { sameFailureText, unchangedResultNote } from "./texts.js";

/** The earlier answer the cache serves, if its entry is still good and its message still in the conversation. */
export function cachedAnswer(state: ToolGuardState, facts: CallFacts, ctx: DecideContext): CacheHit | undefined {
  // A call whose identity left metadata out may ask something its earlier answer does not answer.
  if (facts.cacheTtlMs === undefined || facts.stripped !== undefined) return undefined;
  const entry = state.cache?.findLast((e) => e.key === facts.key);
  const present = ctx.answerPresent;
  if (entry === undefined || entry.until <= (ctx.clock ?? Date.now)() || present === undefined) return undefined;
  return present(entry.callId, entry.digest) ? { callId: entry.callId, digest: entry.digest } : undefined;
}

/** A call that may ask what its earlier answer does not say: a stateful one, or one whose metadata was left out. */
export function mayAnswerAnew(facts: CallFacts): boolean {
  return facts.stripped === "unknown" || facts.stateful;
}

/** Judged by its answers: a call that may answer differently next time (not a read or a write of known files). */
export function judgedByAnswers(facts: CallFacts, tool: ToolTraits | undefined): boolean {
  const { kind } = facts.effect;
  return tool?.stateful ?? (mayAnswerAnew(facts) || kind === "mutate" || kind === "none" || facts.shell);
}

/** Whether calling a repeatable tool (a booking, a message) again after it succeeded does something again. */
export function doesItAgain(facts: CallFacts, tool: ToolTraits | undefined, previous?: RecordedResult): boolean {
  const { kind } = facts.effect;
  return (kind === "write" || kind === "mutate") && previous?.ok === true && isRepeatableTool(facts.name, tool);
}

/** Whether the tool or the adapter can tell the answer changed since `previous`; `false` when it cannot tell. */
export function answersChanged(ctx: DecideContext, facts: CallFacts, previous: RecordedResult | undefined): boolean {
  if (previous === undefined) return false;
  if (ctx.readsChanged?.(facts, previous) === true) return true;
  if (ctx.answersNow === undefined) return false;
  const now = ctx.answersNow(facts);
  // The exact text: a file whose content changed only in a timestamp has changed (the normalizer is for loops).
  const exact = previous.exact ?? previous.digest;
  return now !== undefined && now.length > 0 && now.every((a) => resultDigest(a.ok, a.text) !== exact);
}

// An error that says to try again: "Temporary failure, please retry", "rate limit exceeded, try again later".
const SAYS_RETRY = /\b(?:retry|retrying|try again|try later|temporar(?:y|ily)|transient|rate[ _-]?limit(?:ed)?)\b/i;
// An error of the kind that passes: a time-out, a service or connection down, an HTTP 429 or 5xx.
const TRANSIENT =
  /\b(?:timed? ?out|timeout|unavailable|too many requests|overloaded|bad gateway|internal server error|gateway time-?out|connection (?:reset|refused|error)|network error|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|(?:429|500|502|503|504)\b)/i;

/** How far back the window is read for a tool's recent failures: a decision costs the same at any window size. */
export const SAME_ERROR_LOOKBACK = 100;

/** The answered records of `key` (or any), newest first, within the lookback. */
export function answeredRecords(repetition: RepetitionState, key?: string): CallRecord[] {
  const { window } = repetition;
  const found: CallRecord[] = [];
  for (let i = window.length - 1; i >= Math.max(0, window.length - SAME_ERROR_LOOKBACK); i -= 1) {
    const r = window[i] as CallRecord;
    if (r.result !== undefined && (key === undefined || r.key === key)) found.push(r);
  }
  return found;
}
/** The exact digest the model read. */
export const exactOf = (r: CallRecord) => r.result?.exact ?? r.result?.digest;

/** A transient failure may be retried twice (the AI SDK's `maxRetries`); any other error comes back the same. */
export function retryMayPass(repetition: RepetitionState, key: string): boolean {
  const records = answeredRecords(repetition, key);
  const failures = records.findIndex((r) => r.result?.ok);
  const preview = records[0]?.result?.ok === false ? records[0].result.preview : "";
  return (failures < 0 ? records.length : failures) <= 2 && (SAYS_RETRY.test(preview) || TRANSIENT.test(preview));
}

// An answer that says the job it reports on still runs, and not that it ended ("3 passed, 1 failed" ended).
const RUNNING =
  /\b(?:queued|pending|running|in[ _-]?progress|processing|starting|not (?:yet )?(?:done|finished|ready|complete))\b/i;
const ENDED = /(?<!\bnot (?:yet )?)\b(?:completed?|finished|done|succeeded|failed|cancell?ed)\b/i;

/** Whether the quoted answer says a job still runs (a file that mentions "pending" says nothing of a job). */
export function saysRunning(facts: CallFacts, previous: RecordedResult | undefined): boolean {
  if (previous === undefined || ("paths" in facts.effect && facts.effect.paths.length > 0)) return false;
  return RUNNING.test(previous.preview) && !ENDED.test(previous.preview);
}

/** Whether the latest two answers of identical calls differ exactly (a fresh message id): progress, no threshold. */
export function answeredAnew(repetition: RepetitionState, key: string): boolean {
  const [latest, before] = answeredRecords(repetition, key);
  return before !== undefined && exactOf(latest as CallRecord) !== exactOf(before);
}

/** The call's facts as its earlier answers show them: a poll by its shape whose answers moved is stateful. */
export function withEvidence(repetition: RepetitionState, facts: CallFacts): CallFacts {
  return !facts.stateful && pollsByShape(repetition, facts) ? { ...facts, stateful: true } : facts;
}

const ID_NAME = /^id$|_id$|[a-z]Id$/;
/** A poll by shape: no arguments or only an id, and answers that moved with no change by the run in between. */
function pollsByShape(repetition: RepetitionState, facts: CallFacts): boolean {
  try {
    const names = Object.keys(facts.args as object);
    if (names.length > 1 || (names.length === 1 && !ID_NAME.test(names[0] as string))) return false;
  } catch {
    return false; // no arguments object, or one that throws when read (a revoked Proxy)
  }
  const moved = (r: CallRecord, i: number, all: CallRecord[]) =>
    i > 0 && r.epoch === all[i - 1]?.epoch && r.result?.digest !== all[i - 1]?.result?.digest;
  return answeredRecords(repetition, facts.key).some(moved);
}

/** A reminder (never a block) when 4 of the 5 shell commands before failed byte for byte alike: one cause. */
export function sameFailureNote(state: ToolGuardState, tool: string, outcome: CallOutcome): string | undefined {
  if (outcome.ok || outcome.text.trim() === "" || !isShellTool(tool)) return undefined;
  const shells = answeredRecords(state.repetition).filter((r) => isShellTool(r.tool));
  const digest = resultDigest(false, outcome.text);
  const same = shells.slice(0, 5).filter((r) => exactOf(r) === digest).length;
  return same >= 4 ? sameFailureText(same + 1, Math.min(shells.length, 5) + 1) : undefined;
}

/**
 * Result dedupe: the short note the model is sent instead of a result when an identical earlier call returned
 * exactly the same and its ToolMessage is still in the conversation (`present`: after summarization or trimming it
 * may not be). `undefined` when the result must be sent: dedupe off, no identical earlier answer, a different
 * result, the answer gone, or a note that would not be shorter than the result.
 *
 * @example
 * ```ts
 * const note = unchangedNote(state, { key, tool: "search", id: "call_9" }, { ok: true, text }, options, () => true);
 * // "Unchanged: exactly the same result as the earlier identical call call_2 of 'search' (its message above) …"
 * ```
 */
export function unchangedNote(
  state: ToolGuardState,
  call: { key: string; tool: string; id?: string | undefined },
  outcome: CallOutcome,
  options: { feedback: Pick<ResolvedToolGuardOptions["feedback"], "dedupeResults"> },
  present: (callId: string, digest: string) => boolean,
): string | undefined {
  if (!options.feedback.dedupeResults) return undefined;
  const earlier = answerFor(state, call.key);
  if (earlier === undefined || earlier.callId === call.id) return undefined;
  const digest = resultDigest(outcome.ok, outcome.text);
  if (earlier.digest !== digest || !present(earlier.callId, digest)) return undefined;
  const note = unchangedResultNote(outcome.ok ? "result" : "error", earlier.callId, call.tool);
  return note.length < outcome.text.length ? note : undefined;
}
