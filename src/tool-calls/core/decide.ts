/** What to do with one tool call: let it run (maybe with a reminder), observe a would-be block, or block it. */

import { posix } from "node:path";
import type { CallEffect } from "../../common/identity/classify.js";
import { ownEntry } from "../../common/identity/classify.js";
import { canonicalJson } from "../../common/identity/signature.js";
import type { BlockRule } from "../../common/vocabulary.js";
import type { CallFacts, DecideContext, ToolCallInput } from "./call.js";
import { type Detection, detectCall, escalationCompare } from "./detect.js";
import {
  type ArgsView,
  type BlockedCall,
  blockedCall,
  type EscalationState,
  levelFor,
  matchesBlocked,
  substanceKey,
} from "./escalation.js";
import { callFacts } from "./facts.js";
import { countsEdits, type FileEditsFinding } from "./file-edits.js";
import type { ResolvedToolGuardOptions } from "./options.js";
import { countInWindow } from "./repetition.js";
import type { CacheHit, CacheTerms } from "./result-cache.js";
import { blockMessage } from "./rules.js";
import type { GuardEvent, ToolGuardState } from "./state.js";
import {
  type EscalationFeedbackInput,
  escalationFeedback,
  fileEditsReminder,
  NEXT_STRIKE_STOPS,
  reminderFeedback,
  repeatCeilingReminder,
} from "./texts.js";

/**
 * The guards' decision for one tool call.
 *
 * @example
 * ```ts
 * const d: ToolCallDecision = decideToolCall(state, call, options);
 * if (!d.allowed) console.log(d.rule, d.content);
 * ```
 */
export interface ToolCallDecision {
  /** The call decided on. */
  call: ToolCallInput;
  /** Whether the tool runs (`false` for a block, and for a repeat served from the cache: see `served`). */
  allowed: boolean;
  /** The rule that blocked the call (or would have, in observe mode). */
  rule?: BlockRule | undefined;
  /** `true` when observe mode let through a call it would have blocked. */
  observed: boolean;
  /** Identical calls the window would hold with this one. */
  count: number;
  /** The recorded sequence number (allowed calls). */
  seq?: number | undefined;
  /** Digest of the call's canonical signature. */
  key: string;
  /** What the call does to the files and state the guards track. */
  effect: CallEffect;
  /** The ToolMessage content for a blocked call. */
  content?: string | undefined;
  /** The rule's message alone (without arguments and previous result). */
  message?: string | undefined;
  /** Escalation level of a blocked call (1 ask, 2 options, 3 ask the user, 4 end the run); 0 when off. */
  escalation?: number | undefined;
  /** Strikes of the thread with this block (0 when escalation is off). */
  strikes?: number | undefined;
  /** The call is held back with a reminder (no strike). */
  reminder?: boolean | undefined;
  /** The previous result shown to the model. */
  previousResult?:
    | {
        /** Whether the earlier call succeeded. */
        ok: boolean;
        /** Its result (truncated to `maxResultChars`). */
        text: string;
      }
    | undefined;
  /**
   * A write of a file written often in this run (the file-edits rule): the file, this call's write of it, and for a
   * call that runs the reminder its answer carries after the tool's result (when it succeeds).
   */
  fileEdits?:
    | {
        /** The file written most in this run of those the call writes. */
        path: string;
        /** Its writes in this run with this call. */
        writes: number;
        /** Its rewrites of the whole content in this run with this call, when the call rewrites it. */
        rewrites?: number | undefined;
        /** Why the call is blocked: by the count of writes (`blockAt`) or of rewrites (`blockRewritesAt`). */
        blockedBy?: "writes" | "rewrites" | undefined;
        /** The reminder sent after the tool's result (a call that runs, in enforce mode). */
        reminder?: string | undefined;
      }
    | undefined;
  /**
   * An identical call made often in this run (the repeat ceiling): its place in the count, the call that is
   * blocked, and for a call that runs the reminder its answer carries after the tool's result.
   */
  repeats?:
    | {
        /** Identical calls in this run with this one (since the count last restarted). */
        calls: number;
        /** The identical call that is blocked. */
        blockAt: number;
        /** The reminder sent after the tool's result (a call that runs, in enforce mode). */
        reminder?: string | undefined;
      }
    | undefined;
  /**
   * A repeat answered from the result cache (not run, not blocked): the earlier answer whose result it is given, as
   * a normal tool answer (with the repeat ceiling's reminder from `remindAt`, in `repeats`).
   */
  served?: CacheHit | undefined;
  /** The earlier call of the response this one repeats under the model's same id: not run, `content` answers it. */
  sameIdAs?: number | undefined;
  /** A call that runs and whose successful result the cache keeps: until when (ms), and the entries kept. */
  cache?: CacheTerms | undefined;
  /** State changes to apply (through the channel reducer). */
  events: GuardEvent[];
}

/**
 * Decides one tool call against the thread's guard state: {@link detectCall} says what the call is, then the call
 * runs, or (a repeat) is recorded as a would-be block in observe mode, or is blocked with feedback and a strike.
 * Pure: returns the decision and the events that record it; apply them with {@link reduceToolGuard} before deciding
 * the next call.
 *
 * @example
 * ```ts
 * const options = resolveToolGuardOptions();
 * const d = decideToolCall(emptyToolGuardState(), { name: "read_file", args: { path: "a" }, id: "1" }, options);
 * d.allowed; // true
 * ```
 */
export function decideToolCall(
  state: ToolGuardState,
  call: ToolCallInput,
  options: ResolvedToolGuardOptions,
  ctx: DecideContext = {},
  facts: CallFacts = callFacts(call, options, ctx),
): ToolCallDecision {
  const found = detectCall(state, call, options, ctx, facts);
  const { rule, count } = found;
  if (found.served !== undefined && options.mode === "enforce") return servedDecision(call, facts, found);
  const allowed = allowedDecision(call, facts, state.repetition.nextSeq, options, rule, count);
  if (found.stripped === undefined) cacheIfGood(allowed, facts, options, ctx);
  if (rule === undefined) return withReminder(allowed, found, options);
  const enforced = options.mode === "enforce";
  const block: GuardEvent = {
    type: "block",
    block: { tool: call.name, rule, count, toolCallId: call.id, enforced },
    observedLimit: options.memory.observedLimit,
  };
  if (!enforced) return { ...allowed, observed: true, events: [block, ...allowed.events] };
  return blockCall(state, call, { ...found, rule }, block, options, ctx);
}

/** Lets a call run as call `seq` (`rule`: the one observe mode lets it break). */
function allowedDecision(
  call: ToolCallInput,
  { key, effect, repeat }: CallFacts,
  seq: number,
  options: Pick<ResolvedToolGuardOptions, "windowSize" | "rules" | "tools">,
  rule: BlockRule | undefined = undefined,
  count = 1,
): ToolCallDecision {
  const { windowSize } = options;
  const record: Extract<GuardEvent, { type: "call" }> = countsEdits(call.name, effect, options)
    ? { type: "call", seq, key, tool: call.name, effect, windowSize, edits: true }
    : { type: "call", seq, key, tool: call.name, effect, windowSize };
  if (repeat !== undefined) record.repeat = repeat;
  return { call, allowed: true, rule, observed: false, count, seq, key, effect, events: [record] };
}

/** Marks an allowed call whose successful result the cache keeps (see `memory.cache`), until when it is served. */
function cacheIfGood(
  decision: ToolCallDecision,
  facts: CallFacts,
  options: ResolvedToolGuardOptions,
  ctx: Pick<DecideContext, "clock" | "disabled">,
): void {
  const cache = options.memory.cache;
  const ttl = facts.cacheTtlMs;
  if (cache === false || ctx.disabled || ttl === undefined) return;
  decision.cache = { until: (ctx.clock ?? Date.now)() + ttl, limit: cache.maxEntries };
}

/** A repeat the result cache answers: not run, no strike, but counted by the repeat ceiling. */
function servedDecision(call: ToolCallInput, facts: CallFacts, found: Detection): ToolCallDecision {
  const { key, effect, count } = found;
  const served: GuardEvent = { type: "served", key, tool: call.name };
  if (facts.repeat !== undefined) served.repeat = facts.repeat;
  const decision: ToolCallDecision = { call, allowed: false, observed: false, count, key, effect, events: [served] };
  decision.served = found.served;
  return withRepeatsReminder(decision, found);
}

/** A call that runs although near a file-edits or repeat-ceiling limit: its answer carries a reminder. */
function withReminder(
  decision: ToolCallDecision,
  found: Detection,
  options: ResolvedToolGuardOptions,
): ToolCallDecision {
  // Observe mode changes nothing the model reads.
  if (options.mode !== "enforce") return decision;
  const edits = found.fileEdits;
  const limits = options.rules.fileEdits;
  if (edits !== undefined && limits !== false) {
    const whole =
      edits.rewrites === undefined || limits.blockRewritesAt === false
        ? undefined
        : { rewrites: edits.rewrites, blockAt: limits.blockRewritesAt };
    const reminder = fileEditsReminder(shownPath(edits.path, options), edits.writes, limits.blockAt, whole);
    decision.fileEdits = { ...edits, reminder };
  }
  return withRepeatsReminder(decision, found);
}

function withRepeatsReminder(decision: ToolCallDecision, { repeats }: Detection): ToolCallDecision {
  if (repeats === undefined) return decision;
  const reminder = repeatCeilingReminder(decision.call.name, repeats.calls, repeats.blockAt, repeats.byAnswers);
  decision.repeats = { ...repeats, reminder };
  return decision;
}

type Found = Detection & { rule: BlockRule };

/** A blocked call's decision: the feedback, and a reminder or a strike. */
function blockCall(
  state: ToolGuardState,
  call: ToolCallInput,
  found: Found,
  block: GuardEvent,
  options: ResolvedToolGuardOptions,
  ctx: DecideContext,
): ToolCallDecision {
  const { rule, count, previous } = found;
  const edits = rule === "file_edits" ? found.fileEdits : undefined;
  const path = edits && shownPath(edits.path, options);
  const about = { tool: call.name, args: call.args, count, rule, previousOk: previous?.ok, path };
  const rewrites = edits?.blockedBy === "rewrites" ? { rewrites: true } : {};
  const message = blockMessage({ ...about, ...rewrites }, options.feedback.messages);
  const previousResult = previous ? { ok: previous.ok, text: previous.preview } : undefined;
  const base = { call, allowed: false, rule, observed: false, count, key: found.key, effect: found.effect };
  const blocked = edits === undefined ? { ...base, message, previousResult } : { ...base, message, fileEdits: edits };
  const file = edits && fileOf(edits, options);
  const repeats = rule === "repeat_ceiling" ? count - 1 : undefined;
  const esc = options.escalation;
  if (!esc.enabled) {
    const content = feedback(call, options, { message, level: 0, strikes: 0, previousResult, file, repeats });
    return { ...blocked, content, escalation: 0, strikes: 0, events: [block] };
  }
  const escState = state.escalation;
  const turn = ctx.response?.id ?? `call:${call.id ?? state.repetition.nextSeq}:${found.key}`;
  const at = (ctx.clock ?? Date.now)();
  const keys = ownEntry(options.tools, call.name)?.keys;
  const { view } = escalationCompare(options);
  // One strike per response: a second block in the same response stays at the level of the first.
  const struck = escState.lastTurn === turn;
  if (rule === "near_duplicate" && !struck && !isExactRepeat(escState, call, keys, view)) {
    if (escState.reminders < esc.maxReminders) {
      const remind: GuardEvent = {
        type: "remind",
        turn,
        call: blockedCall({ tool: call.name, args: call.args }, 0, at, keys, view),
        blockedLimit: esc.blockedLimit,
      };
      const content = reminderFeedback(call.name, esc.maxReminders - escState.reminders - 1);
      return { ...blocked, content, reminder: true, strikes: escState.strikes, escalation: 0, events: [block, remind] };
    }
  }
  // Escalation follows the calls being repeated: a block of a call outside the current strikes starts again at 1.
  const sameCall = repeatsLastStrike(escState, call, found, options);
  let strikes = struck ? escState.strikes : sameCall ? escState.strikes + 1 : 1;
  // A response that also makes new calls is making progress: its repeats are blocked, but it is never stopped.
  if (ctx.progressing === true) strikes = Math.min(strikes, Math.max(1, esc.levelStrikes[2] - 1));
  // The identical calls made so far with this one: those that ran (the window's, or the rule's count), one per strike.
  const attempts = Math.max(countInWindow(state.repetition.window, found.key), count - 1) + strikes;
  const escalation = heldLevel(strikes, attempts, esc);
  const nextLevel = ctx.progressing === true ? escalation : heldLevel(strikes + 1, attempts + 1, esc);
  const next = nextLevel > escalation && nextLevel >= 3 ? NEXT_STRIKE_STOPS : undefined;
  const shown = { message, level: escalation, strikes, previousResult, next, file, repeats };
  const content = feedback(call, options, shown, ctx);
  const struckCall: BlockedCall = {
    ...blockedCall({ tool: call.name, args: call.args }, escalation, at, keys, view),
    turn,
  };
  const strike: Extract<GuardEvent, { type: "strike" }> = {
    type: "strike",
    turn,
    call: rule === "cycle" ? { ...struckCall, cycle: true } : edits ? { ...struckCall, file: edits.path } : struckCall,
    blockedLimit: esc.blockedLimit,
    restart: !sameCall,
  };
  if (!struck && strikes !== (sameCall ? escState.strikes + 1 : 1)) strike.strikes = strikes;
  return { ...blocked, content, escalation, strikes, events: [block, strike] };
}

/** The level {@link levelFor} gives, but levels 3 and 4 wait for the `askFrom`-th identical call and the gap after. */
function heldLevel(
  strikes: number,
  attempts: number,
  esc: Pick<ResolvedToolGuardOptions["escalation"], "levelStrikes" | "askFrom">,
): number {
  const level = Math.max(1, levelFor(strikes, esc.levelStrikes));
  if (level < 3) return level;
  const [, , user, end] = esc.levelStrikes;
  const reached = attempts >= esc.askFrom + (end - user) ? 4 : attempts >= esc.askFrom ? 3 : 2;
  return Math.min(level, reached);
}

/** A reminder is for a near-repeat; the very same call again (as `view` sees it) is a repeat, and escalates. */
function isExactRepeat(
  escState: EscalationState,
  call: ToolCallInput,
  keys: readonly string[] | undefined,
  view: ArgsView,
): boolean {
  const own = { tool: call.name, args: call.args };
  return escState.blocked.some(
    (b) =>
      b.tool === call.name &&
      (b.args === null
        ? b.key === substanceKey(own, keys, view)
        : canonicalJson(view({ tool: b.tool, args: b.args })) === canonicalJson(view(own))),
  );
}

function fileOf(edits: FileEditsFinding, options: ResolvedToolGuardOptions) {
  const limits = options.rules.fileEdits;
  const path = shownPath(edits.path, options);
  if (edits.blockedBy === "rewrites" && edits.rewrites !== undefined && limits !== false) {
    return { path, writes: edits.rewrites - 1, blockAt: edits.rewrites, rewrites: true };
  }
  return { path, writes: edits.writes - 1, blockAt: limits === false ? edits.writes : limits.blockAt };
}

/** A file as the model is told of it: inside `rules.root`, its path from the root (the root's own path is not its). */
function shownPath(path: string, options: ResolvedToolGuardOptions): string {
  const root = options.rules.root;
  if (root === undefined) return path;
  const inside = posix.relative(posix.resolve(root), path);
  return inside === "" || inside.startsWith("..") || posix.isAbsolute(inside) ? path : inside;
}

/** Whether this block repeats any call of the current strikes, in any order (alternating or rotating calls too). */
function repeatsLastStrike(
  escState: EscalationState,
  call: ToolCallInput,
  found: Found,
  options: ResolvedToolGuardOptions,
): boolean {
  if (escState.strikes === 0) return false;
  const streak = Math.max(escState.streak ?? 0, escState.strikes);
  const struck: BlockedCall[] = [];
  const turns = new Set<string>();
  for (let i = escState.blocked.length - 1; i >= 0; i -= 1) {
    const b = escState.blocked[i] as BlockedCall;
    if (b.level === 0) continue;
    // A call of an older response than the current strikes cover belongs to another count.
    const turn = b.turn ?? `#${i}`;
    if (!turns.has(turn)) {
      if (turns.size >= streak) break;
      turns.add(turn);
    }
    struck.push(b);
  }
  return struck.some((b) => repeatsStruck(b, call, found, options));
}

function repeatsStruck(
  struck: BlockedCall,
  call: ToolCallInput,
  found: Found,
  options: ResolvedToolGuardOptions,
): boolean {
  const { rule } = found;
  if (rule === "repeat_failure") return struck.tool === call.name;
  if (rule === "cycle" && struck.cycle === true) return true;
  // Another write of the file blocked last: whatever its content, the same file written too often.
  if (rule === "file_edits" && struck.file !== undefined) return struck.file === found.fileEdits?.path;
  const keys = ownEntry(options.tools, call.name)?.keys;
  return matchesBlocked(struck, { tool: call.name, args: call.args }, escalationCompare(options), keys);
}

function feedback(
  call: ToolCallInput,
  options: ResolvedToolGuardOptions,
  at: Omit<EscalationFeedbackInput, "tool" | "args" | "otherTools">,
  ctx: DecideContext = {},
): string {
  return escalationFeedback({ tool: call.name, args: call.args, ...at, otherTools: ctx.toolNames }, options.feedback);
}
