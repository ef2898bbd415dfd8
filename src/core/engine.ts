import {
  type CallEffect,
  callIdentity,
  isIdempotentTool,
  isRepeatableTool,
  isShellTool,
  ownEntry,
} from "./classify.js";
import {
  blockedCall,
  type EscalationEvent,
  type EscalationState,
  emptyEscalationState,
  escalationFeedback,
  levelFor,
  matchesBlocked,
  type ResponseInput,
  reduceEscalation,
  reminderFeedback,
  repeatsBlocked,
  responseAcknowledges,
  substanceKey,
  textAcknowledges,
} from "./escalation.js";
import { BLOCK_LEVELS, type BlockLevel, blockMessage } from "./messages.js";
import type { ResolvedToolGuardOptions } from "./options.js";
import {
  DEFAULT_OPERATION_LIMITS,
  emptyOperationsState,
  findOperation,
  invalidateOperations,
  type OperationLimits,
  type OperationsState,
  recordOperationResult,
} from "./redundancy.js";
import {
  emptyRepetitionState,
  evaluateRepetition,
  noteChange,
  type RecordedResult,
  type RepetitionState,
  recordCall,
  recordResult,
  resultDigest,
} from "./repetition.js";
import { canonicalJson, truncate } from "./signature.js";

/**
 * A call that would have been blocked in observe mode (or was blocked in enforce mode), kept for inspection.
 *
 * @example
 * ```ts
 * const last: ObservedBlock | undefined = state.toolGuard.observed.at(-1); // { tool, level, count, enforced }
 * ```
 */
export interface ObservedBlock {
  tool: string;
  level: BlockLevel;
  count: number;
  toolCallId?: string | undefined;
  /** Whether the call was really blocked (`false` in observe mode). */
  enforced: boolean;
}

/**
 * Counters for a thread.
 *
 * @example
 * ```ts
 * const { allowed, blocked }: GuardStats = state.toolGuard.stats;
 * ```
 */
export interface GuardStats {
  /** Calls the guards let run. */
  allowed: number;
  /** Calls blocked, per level. */
  blocked: Record<BlockLevel, number>;
  /** Calls observe mode would have blocked, per level. */
  observed: Record<BlockLevel, number>;
  /** Responses whose near-repeats of a blocked call were held back with a reminder. */
  reminded: number;
}

/**
 * Everything the tool-call guards know about a thread: plain JSON, stored in the `toolGuard` channel and so
 * persisted by any checkpointer. Every list in it is bounded by an option.
 *
 * @example
 * ```ts
 * const snapshot = await graph.getState({ configurable: { thread_id: "1" } });
 * const guard: ToolGuardState = snapshot.values.toolGuard;
 * ```
 */
export interface ToolGuardState {
  repetition: RepetitionState;
  operations: OperationsState;
  /** The most recent blocks and would-be blocks, oldest first (bounded by `observedLimit`). */
  observed: ObservedBlock[];
  stats: GuardStats;
  /** Strikes, the pending acknowledgment and the recent blocked calls (seed 003). */
  escalation: EscalationState;
}

/**
 * A change to {@link ToolGuardState}. Nodes return events and the channel's reducer applies them, so parallel
 * writers never overwrite each other.
 *
 * @example
 * ```ts
 * const events: GuardEvent[] = decideToolCall(state, call, options).events;
 * const next = reduceToolGuard(state, events);
 * ```
 */
export type GuardEvent =
  | { type: "call"; seq: number; key: string; tool: string; effect: CallEffect; windowSize: number }
  | {
      type: "result";
      seq: number;
      key: string;
      tool: string;
      effect: CallEffect;
      result: RecordedResult;
      limits: OperationLimits;
    }
  | { type: "block"; block: ObservedBlock; observedLimit: number }
  | { type: "reset" }
  | { type: "external"; effect: CallEffect }
  | EscalationEvent;

/**
 * An empty guard state (the channel default).
 *
 * @example
 * ```ts
 * emptyToolGuardState().stats.allowed; // 0
 * ```
 */
export function emptyToolGuardState(): ToolGuardState {
  return {
    repetition: emptyRepetitionState(),
    operations: emptyOperationsState(),
    observed: [],
    stats: { allowed: 0, blocked: zeroCounts(), observed: zeroCounts(), reminded: 0 },
    escalation: emptyEscalationState(),
  };
}

function zeroCounts(): Record<BlockLevel, number> {
  return Object.fromEntries(BLOCK_LEVELS.map((level) => [level, 0])) as Record<BlockLevel, number>;
}

function applyEvent(state: ToolGuardState, event: GuardEvent, carryIndex: boolean): ToolGuardState {
  switch (event.type) {
    case "call":
      return {
        ...state,
        repetition: recordCall(state.repetition, event, event.windowSize, { carryIndex }),
        operations: invalidateOperations(state.operations, event.effect),
        stats: { ...state.stats, allowed: state.stats.allowed + 1 },
      };
    case "result": {
      const mutates = event.effect.kind === "write" || event.effect.kind === "mutate";
      return {
        ...state,
        repetition: recordResult(state.repetition, event.seq, event.result, mutates, { carryIndex }),
        operations: recordOperationResult(state.operations, event, event.effect, event.result, event.limits),
      };
    }
    case "block": {
      const { block } = event;
      const observed = [...state.observed, block];
      const counters = block.enforced ? "blocked" : "observed";
      return {
        ...state,
        observed: observed.slice(Math.max(0, observed.length - event.observedLimit)),
        stats: {
          ...state.stats,
          [counters]: { ...state.stats[counters], [block.level]: (state.stats[counters][block.level] ?? 0) + 1 },
        },
      };
    }
    case "reset":
      return emptyToolGuardState();
    case "external": {
      // A change made by someone else (a person's own tool call in a recorded run): earlier results may be stale.
      const mutates = event.effect.kind === "write" || event.effect.kind === "mutate";
      if (!mutates) return state;
      // Repeating a call after someone else changed the world is a new question: the window starts again.
      return {
        ...state,
        operations: invalidateOperations(state.operations, event.effect),
        repetition: {
          ...state.repetition,
          epoch: state.repetition.epoch + 1,
          window: [],
          changes: noteChange(state.repetition.changes, "\u0000external", state.repetition.epoch + 1),
        },
      };
    }
    default: {
      // Escalation events (states saved before escalation existed have no `escalation`).
      const before = state.escalation ?? emptyEscalationState();
      const escalation = reduceEscalation(before, event);
      if (escalation === before) return state;
      const reminded = event.type === "remind" ? (state.stats.reminded ?? 0) + 1 : (state.stats.reminded ?? 0);
      return { ...state, escalation, stats: { ...state.stats, reminded } };
    }
  }
}

/**
 * The reducer of the `toolGuard` channel: applies events in order. Also accepts a whole state (replaces it).
 *
 * @example
 * ```ts
 * const next = reduceToolGuard(emptyToolGuardState(), [{ type: "reset" }]);
 * ```
 */
export function reduceToolGuard(
  state: ToolGuardState | undefined,
  update: GuardEvent | readonly GuardEvent[] | ToolGuardState | undefined | null,
): ToolGuardState {
  return applyEvents(state, update, true);
}

/**
 * Applies events; `carryIndex` hands the derived call index from each state to the next (the channel reducer
 * does; planning a batch does not, so the channel state keeps its index for the reducer).
 */
function applyEvents(
  state: ToolGuardState | undefined,
  update: GuardEvent | readonly GuardEvent[] | ToolGuardState | undefined | null,
  carryIndex: boolean,
): ToolGuardState {
  let current = state ?? emptyToolGuardState();
  if (update === undefined || update === null) return current;
  if (!Array.isArray(update) && !("type" in (update as object))) return update as ToolGuardState;
  for (const event of (Array.isArray(update) ? update : [update]) as GuardEvent[]) {
    current = applyEvent(current, event, carryIndex);
  }
  return current;
}

/**
 * A tool call as the guards see it.
 *
 * @example
 * ```ts
 * const call: ToolCallInput = { name: "read_file", args: { path: "a.py" }, id: "call_1" };
 * ```
 */
export interface ToolCallInput {
  name: string;
  args: unknown;
  id?: string | undefined;
}

/**
 * The guards' decision for one tool call.
 *
 * @example
 * ```ts
 * const d: ToolCallDecision = decideToolCall(state, call, options);
 * if (!d.allowed) console.log(d.level, d.content);
 * ```
 */
export interface ToolCallDecision {
  call: ToolCallInput;
  /** Whether the tool runs. */
  allowed: boolean;
  /** The level that blocked the call (or would have, in observe mode). */
  level?: BlockLevel | undefined;
  /** `true` when observe mode let through a call it would have blocked. */
  observed: boolean;
  /** Identical calls the window would hold with this one. */
  count: number;
  /** The recorded sequence number (allowed calls). */
  seq?: number | undefined;
  /** Digest of the call's canonical signature. */
  key: string;
  effect: CallEffect;
  /** The ToolMessage content for a blocked call. */
  content?: string | undefined;
  /** The level's message alone (without arguments and previous result). */
  message?: string | undefined;
  /** Escalation level of a blocked call (1 ask, 2 options, 3 ask the user, 4 end the run); 0 when off. */
  escalation?: number | undefined;
  /** Strikes of the thread with this block. */
  strikes?: number | undefined;
  /** The call is held back with a reminder (no strike). */
  reminder?: boolean | undefined;
  /** The previous result shown to the model. */
  previousResult?: { ok: boolean; text: string } | undefined;
  /** State changes to apply (through the channel reducer). */
  events: GuardEvent[];
}

/**
 * Run-time switches.
 *
 * @example
 * ```ts
 * decideToolCall(state, call, options, { disabled: true }); // the per-run off switch
 * ```
 */
export interface DecideContext {
  /** The per-run off switch: nothing is blocked, calls are still recorded. */
  disabled?: boolean | undefined;
  /** Metadata `readOnlyHint` by tool name. */
  readOnlyHints?: Readonly<Record<string, boolean | undefined>> | undefined;
  /**
   * The model response the call belongs to (its id, text and all its calls): needed for the acknowledgment check
   * and to count one strike per response. Without it, each blocked call is its own response.
   */
  response?: ResponseInput | undefined;
  /** Every tool the model can call (named in the level-2 options). */
  toolNames?: readonly string[] | undefined;
  /** The clock for blocked-call timestamps (ms). Default `Date.now`. */
  now?: (() => number) | undefined;
  /** Whether `response` acknowledges the pending block ({@link planToolCalls} works it out when omitted). */
  acknowledged?: boolean | undefined;
}

const SAME_ERROR_LOOKBACK = 100;

/**
 * How many times in a row (its own recent calls, no successful change since) `tool` failed with one and the same
 * error under at least two different argument sets, and that error's result.
 */
function sameErrorRun(
  repetition: RepetitionState,
  tool: string,
): { count: number; result?: RecordedResult | undefined } {
  let count = 0;
  let first: RecordedResult | undefined;
  const keys = new Set<string>();
  // Look back a bounded distance: the decision must cost the same at any window size.
  const stop = Math.max(0, repetition.window.length - SAME_ERROR_LOOKBACK);
  for (let i = repetition.window.length - 1; i >= stop; i -= 1) {
    const record = repetition.window[i] as (typeof repetition.window)[number];
    if (record.tool !== tool) continue;
    const result = record.result;
    // An empty failure says nothing (`grep` that matches nothing exits 1): it is no error to repeat.
    if (result === undefined || result.ok || result.preview.trim() === "" || record.epoch !== repetition.epoch) break;
    if (first !== undefined && result.digest !== first.digest) break;
    first ??= result;
    keys.add(record.key);
    count += 1;
  }
  return keys.size >= 2 ? { count, result: first } : { count: 0 };
}

/**
 * Canonical identity and effect of a call under the options: ignored fields dropped, paths normalized against
 * `root`, then digested.
 *
 * @example
 * ```ts
 * identifyCall({ name: "read_file", args: { path: "x" } }, resolveToolGuardOptions({ root: "/r" })).key ===
 *   identifyCall({ name: "read_file", args: { path: "/r/x" } }, resolveToolGuardOptions({ root: "/r" })).key; // true
 * ```
 */
export function identifyCall(
  call: ToolCallInput,
  options: ResolvedToolGuardOptions,
  ctx: DecideContext = {},
): { key: string; effect: CallEffect } {
  const tool = ownEntry(options.tools, call.name);
  return callIdentity(call.name, call.args, {
    tools: options.tools,
    readOnlyHints: ctx.readOnlyHints,
    root: options.root,
    ignoreArgs: tool?.ignoreArgs ? [...options.ignoreArgs, ...tool.ignoreArgs] : options.ignoreArgs,
  });
}

/**
 * Decides one tool call against the thread's guard state: level 1 (identical to the previous call), level 2
 * (threshold in the window), level 3 (a successful read-only call whose result is still valid). Pure: returns the
 * decision and the events that record it; apply them with {@link reduceToolGuard} before deciding the next call.
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
): ToolCallDecision {
  const { key, effect } = identifyCall(call, options, ctx);
  const tool = ownEntry(options.tools, call.name);
  const seq = state.repetition.nextSeq;
  const allow = (level?: BlockLevel, count = 1, extra: GuardEvent[] = []): ToolCallDecision => ({
    call,
    allowed: true,
    level,
    observed: level !== undefined,
    count,
    seq,
    key,
    effect,
    events: [...extra, { type: "call", seq, key, tool: call.name, effect, windowSize: options.windowSize }],
  });
  if (ctx.disabled || tool?.exempt) return allow();

  const rules = {
    repetitionThreshold: tool?.repetitionThreshold ?? options.repetitionThreshold,
    windowSize: options.windowSize,
    consecutive: options.consecutive && tool?.consecutive !== false,
    countChangedResults: options.countChangedResults,
    countAcrossMutations: options.countAcrossMutations,
  };
  const verdict = evaluateRepetition(state.repetition, key, rules);
  let level: BlockLevel | undefined = verdict.level;
  let count = verdict.count;
  let previous = verdict.previous?.result;
  const mutates = effect.kind === "write" || effect.kind === "mutate";
  // Calling a repeatable tool (a booking, a message) again after it succeeded does something again.
  if (level === "consecutive" && mutates && previous?.ok === true && isRepeatableTool(call.name, tool)) {
    level = undefined;
  }
  const redundancy = options.redundancy && tool?.redundancy !== false;
  if (level === undefined && redundancy && effect.kind === "read") {
    const op = findOperation(state.operations, key);
    if (op) {
      level = "redundant";
      previous = op.result;
    }
  } else if (level === undefined && redundancy && mutates && verdict.previous?.result !== undefined) {
    // The same change again, with nothing changed since its last run: after a failure it fails the same way; an
    // idempotent change (update_, set_) changes nothing more. Nothing changed since = the only successful change
    // since that call is its own.
    const last = verdict.previous;
    const result = last.result as RecordedResult;
    const changedSince = state.repetition.epoch !== last.epoch + (result.ok ? 1 : 0);
    const repeatsNothing = !result.ok || (isIdempotentTool(call.name, tool) && !isShellTool(call.name));
    if (!changedSince && repeatsNothing && !(result.ok && isRepeatableTool(call.name, tool))) {
      level = "redundant";
      previous = result;
    }
  }
  // Seed 003, after a block: a response that repeats a blocked call in substance without acknowledging it, and a
  // tool that keeps failing with one error under changing arguments while the response does not say what changes.
  const esc = options.escalation;
  const escState = state.escalation ?? emptyEscalationState();
  const response = ctx.response;
  if (level === undefined && esc.enabled && response !== undefined) {
    const keysOf = (name: string) => ownEntry(options.tools, name)?.keys;
    const acknowledged = ctx.acknowledged ?? responseAcknowledges(escState, response, esc, keysOf);
    if (!acknowledged && repeatsBlocked(escState, { tool: call.name, args: call.args }, esc, tool?.keys)) {
      level = "near_duplicate";
    } else if (
      esc.sameErrorThreshold > 0 &&
      // A shell's "arguments" are whole commands: different commands that fail alike (a `grep` that matches
      // nothing) are not one update retried with other values.
      !isShellTool(call.name) &&
      !textAcknowledges(response.text, esc)
    ) {
      const run = sameErrorRun(state.repetition, call.name);
      if (run.count >= esc.sameErrorThreshold) {
        level = "repeat_failure";
        count = run.count;
        previous = run.result;
      }
    }
  }
  if (level === undefined) return allow(undefined, verdict.count);

  const enforced = options.mode === "enforce";
  const block: GuardEvent = {
    type: "block",
    block: { tool: call.name, level, count, toolCallId: call.id, enforced },
    observedLimit: options.observedLimit,
  };
  if (!enforced) return allow(level, count, [block]);
  const blockCtx = { tool: call.name, args: call.args, count, level };
  const message = blockMessage(blockCtx, options.messages);
  const previousResult = previous ? { ok: previous.ok, text: previous.preview } : undefined;
  const limits = { maxArgsChars: options.maxArgsChars, maxResultChars: options.maxResultChars };
  const base = { call, allowed: false, level, observed: false, count, key, effect, message, previousResult };
  const turn = response?.id ?? `call:${call.id ?? seq}:${key}`;
  const at = (ctx.now ?? Date.now)();

  if (!esc.enabled) {
    const content = escalationFeedback({ ...blockCtx, message, level: 0, strikes: 0, previousResult }, limits);
    return { ...base, content, escalation: 0, events: [block] };
  }
  // One strike per response: a second block in the same response stays at the level of the first.
  const struck = escState.lastTurn === turn;
  // A reminder is for a near-repeat; the very same call again is a repeat, and escalates.
  const exactRepeat = escState.blocked.some(
    (b) =>
      b.tool === call.name &&
      (b.args === null
        ? b.key === substanceKey({ tool: call.name, args: call.args }, tool?.keys)
        : canonicalJson(b.args) === canonicalJson(call.args)),
  );
  if (level === "near_duplicate" && !struck && !exactRepeat && escState.reminders < esc.maxReminders) {
    const remind: GuardEvent = {
      type: "remind",
      turn,
      call: blockedCall({ tool: call.name, args: call.args }, 0, at, tool?.keys),
      blockedLimit: esc.blockedLimit,
    };
    const content = reminderFeedback(call.name, esc.maxReminders - escState.reminders - 1);
    return { ...base, content, reminder: true, strikes: escState.strikes, escalation: 0, events: [block, remind] };
  }
  // Escalation follows one call repeated: a block of another call starts the count again.
  const lastStrike = escState.blocked.findLast((b) => b.level > 0);
  const sameCall =
    escState.strikes > 0 &&
    lastStrike !== undefined &&
    (level === "repeat_failure"
      ? lastStrike.tool === call.name
      : matchesBlocked(lastStrike, { tool: call.name, args: call.args }, esc, tool?.keys));
  const strikes = struck ? escState.strikes : sameCall ? escState.strikes + 1 : 1;
  const escalation = Math.max(1, levelFor(strikes, esc.levelStrikes));
  const nextLevel = levelFor(strikes + 1, esc.levelStrikes);
  const content = escalationFeedback(
    {
      ...blockCtx,
      message,
      level: escalation,
      strikes,
      previousResult,
      otherTools: ctx.toolNames,
      next:
        nextLevel > escalation && nextLevel >= 3
          ? "Repeating it again stops automatic execution: the user is asked to step in, or the run ends."
          : undefined,
    },
    limits,
  );
  const strike: GuardEvent = {
    type: "strike",
    turn,
    call: blockedCall({ tool: call.name, args: call.args }, escalation, at, tool?.keys),
    blockedLimit: esc.blockedLimit,
    restart: !sameCall,
  };
  return { ...base, content, escalation, strikes, events: [block, strike] };
}

/**
 * Decides the calls of one AI message in order (a later call sees the earlier ones as recorded, so the second of
 * two identical parallel calls is a consecutive duplicate). Returns each decision, the events that belong to the
 * response as a whole (its acknowledgment of an earlier block), and the state after them.
 *
 * @example
 * ```ts
 * const { decisions } = planToolCalls(emptyToolGuardState(), [
 *   { name: "ls", args: {}, id: "a" }, { name: "ls", args: {}, id: "b" },
 * ], resolveToolGuardOptions());
 * decisions.map((d) => d.allowed); // [true, false]
 * ```
 */
export function planToolCalls(
  state: ToolGuardState,
  calls: readonly ToolCallInput[],
  options: ResolvedToolGuardOptions,
  ctx: DecideContext = {},
): { decisions: ToolCallDecision[]; turnEvents: GuardEvent[]; state: ToolGuardState } {
  let current = state;
  const decisions: ToolCallDecision[] = [];
  const events: GuardEvent[] = [];
  // The acknowledgment is a property of the whole response, judged against the state before it.
  let turnCtx = ctx;
  if (ctx.response !== undefined && options.escalation.enabled && ctx.acknowledged === undefined) {
    const escState = state.escalation ?? emptyEscalationState();
    const acknowledged = responseAcknowledges(
      escState,
      ctx.response,
      options.escalation,
      (name) => ownEntry(options.tools, name)?.keys,
    );
    turnCtx = { ...ctx, acknowledged };
    if (acknowledged && (escState.pending || escState.reminders > 0)) events.push({ type: "acknowledge" });
  }
  current = applyEvents(current, events, false);
  for (const call of calls) {
    const decision = decideToolCall(current, call, options, turnCtx);
    current = applyEvents(current, decision.events, false);
    decisions.push(decision);
  }
  return { decisions, turnEvents: events, state: current };
}

/**
 * The block of a response that escalates furthest (reminders left out): what the escalation hook acts on, in the
 * live graph and in replay.
 *
 * @example
 * ```ts
 * const top = topEscalation(plan.decisions);
 * if ((top?.escalation ?? 0) >= 3) console.log("a person is asked, or the run ends");
 * ```
 */
export function topEscalation(decisions: readonly ToolCallDecision[]): ToolCallDecision | undefined {
  return decisions
    .filter((d) => !d.allowed && !d.reminder)
    .reduce<ToolCallDecision | undefined>((a, d) => ((d.escalation ?? 0) > (a?.escalation ?? 0) ? d : a), undefined);
}

/**
 * The event that marks a response as progress, once its calls have run: none of them was blocked or held back,
 * and one succeeded. It sets the strikes back to 0 (escalation counts repeats without progress in between).
 *
 * @example
 * ```ts
 * const events = progressEvents(plan.decisions, [{ ok: true, text: "done" }]); // [{ type: "progress" }]
 * ```
 */
export function progressEvents(
  responseDecisions: readonly ToolCallDecision[],
  outcomes: readonly { ok: boolean }[],
): GuardEvent[] {
  if (responseDecisions.some((d) => !d.allowed)) return [];
  return outcomes.some((o) => o.ok) ? [{ type: "progress" }] : [];
}

/**
 * The event that records what an allowed call returned.
 *
 * @example
 * ```ts
 * const events = outcomeEvents(decision, { ok: true, text: "file contents" }, options);
 * ```
 */
export function outcomeEvents(
  decision: ToolCallDecision,
  outcome: { ok: boolean; text: string },
  options: ResolvedToolGuardOptions,
): GuardEvent[] {
  if (!decision.allowed || decision.seq === undefined) return [];
  const limits = {
    operationsHistoryLimit: options.operationsHistoryLimit ?? DEFAULT_OPERATION_LIMITS.operationsHistoryLimit,
    fileHistoryLimit: options.fileHistoryLimit ?? DEFAULT_OPERATION_LIMITS.fileHistoryLimit,
  };
  return [
    {
      type: "result",
      seq: decision.seq,
      key: decision.key,
      tool: decision.call.name,
      effect: decision.effect,
      result: {
        ok: outcome.ok,
        digest: resultDigest(outcome.ok, outcome.text),
        preview: truncate(outcome.text, options.maxResultChars),
      },
      limits,
    },
  ];
}
