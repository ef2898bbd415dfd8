import { z } from "zod/v4";
import type { CallEffect } from "../../common/identity/classify.js";
import { wholeValueStands } from "../../common/owner.js";
import { GuardStateError, kindOf, StoredValues } from "../../common/state-error.js";
import type { BlockRule } from "../../common/vocabulary.js";
import { type EscalationEvent, type EscalationState, emptyEscalationState, reduceEscalation } from "./escalation.js";
import { type FileEditCount, noteWrites } from "./file-edits.js";
import {
  emptyOperationsState,
  invalidateOperations,
  type OperationsState,
  recordOperationResult,
} from "./redundancy.js";
import { noteRepeatCall, noteRepeatResult, type RepeatState } from "./repeat-ceiling.js";
import {
  emptyRepetitionState,
  noteChange,
  type RecordedResult,
  type RepetitionState,
  recordCall,
  recordResult,
} from "./repetition.js";
import { type CacheEntry, type CacheTerms, invalidateCache, noteCached } from "./result-cache.js";
import { BLOCK_RULES } from "./rules.js";
import type { GuardEvent, ObservedBlock } from "./state-events.js";

export type { GuardEvent } from "./state-events.js";

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
  /** Calls blocked, per rule. */
  blocked: Record<BlockRule, number>;
  /** Calls observe mode would have blocked, per rule. */
  observed: Record<BlockRule, number>;
  /** Responses whose near-repeats of a blocked call were held back with a reminder. */
  reminded: number;
  /** Calls answered from the result cache without running (absent until the first). */
  served?: number | undefined;
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
  /** The consecutive and threshold rules' window of recorded calls. */
  repetition: RepetitionState;
  /** The redundant rule's successful read-only operations, and the recent file operations. */
  operations: OperationsState;
  /** The most recent blocks and would-be blocks, oldest first (bounded by `observedLimit`). */
  observed: ObservedBlock[];
  /** The thread's counters. */
  stats: GuardStats;
  /** Strikes, the pending acknowledgment and the recent blocked calls. */
  escalation: EscalationState;
  /**
   * What marks the current run (the id of the person's message that started it), or null/absent before the first.
   */
  run?: string | null | undefined;
  /**
   * The agent whose memory this is (where its graph runs, see `agentOf`): another agent reading it starts afresh,
   * and a whole state of another agent written back (a sub-agent's final state) leaves it as it is. Absent when
   * the guards run outside a graph.
   */
  agent?: string | undefined;
  /**
   * The latest full answer of each recent call (by call key), for result dedupe: which ToolMessage holds it and the
   * digest of its result. Kept across runs (the conversation keeps the messages); the newest 50.
   */
  answers?: AnswerRecord[] | undefined;
  /**
   * The file-edits rule's counts: the writes of each file in the current run (calls that ran; blocked and failed
   * ones do not count), the most recently written file last, at most 50 files (`FILE_EDITS_LIMIT`). Empty again
   * at a new run; absent until a write is counted.
   */
  fileEdits?: FileEditCount[] | undefined;
  /**
   * The repeat ceiling's counts: identical calls made in the current run (the most recent last, at most 50), and the
   * mark whose moves restart them. Empty again at a new run; absent while the ceiling is off or has counted nothing.
   */
  repeats?: RepeatState | undefined;
  /**
   * The result cache (`memory.cache`): per call key, which ToolMessage holds a successful result that an identical
   * call is answered with, and until when; the most recent last, at most `memory.cache.maxEntries`. Absent until a
   * result is cached.
   */
  cache?: CacheEntry[] | undefined;
}

/**
 * Where the model last read the full result of a call: the ToolMessage's call id, and the result's digest.
 *
 * @example
 * ```ts
 * const latest: AnswerRecord | undefined = state.toolGuard.answers?.at(-1);
 * ```
 */
export interface AnswerRecord {
  /** Digest of the call's canonical signature. */
  key: string;
  /** The tool's name. */
  tool: string;
  /** The call id of the ToolMessage that holds the full result. */
  callId: string;
  /** Digest of the result (see {@link RecordedResult.digest}). */
  digest: string;
}

/** Answers kept for result dedupe. */
const ANSWERS_LIMIT = 50;

/**
 * An empty guard state (the channel default).
 *
 * @example
 * ```ts
 * emptyToolGuardState().stats.allowed; // 0
 * ```
 */
export function emptyToolGuardState(): ToolGuardState {
  return new ChannelState({
    repetition: emptyRepetitionState(),
    operations: emptyOperationsState(),
    observed: [],
    stats: { allowed: 0, blocked: zeroCounts(), observed: zeroCounts(), reminded: 0 },
    escalation: emptyEscalationState(),
  });
}

/** The reducer's state: a class instance because LangGraph's `Send` deep-copies plain objects, not instances. */
// biome-ignore lint/correctness/noUnusedVariables: merged into the class below, which assigns every field it declares
interface ChannelState extends ToolGuardState {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above declares the fields
class ChannelState {
  constructor(from: ToolGuardState) {
    this.repetition = from.repetition;
    this.operations = from.operations;
    this.observed = from.observed;
    this.stats = from.stats;
    this.escalation = from.escalation;
    // Absent stays absent (as in the object it copies: an empty state has none of these).
    if (from.run !== undefined) this.run = from.run;
    if (from.agent !== undefined) this.agent = from.agent;
    if (from.answers !== undefined) this.answers = from.answers;
    if (from.fileEdits !== undefined) this.fileEdits = from.fileEdits;
    if (from.repeats !== undefined) this.repeats = from.repeats;
    if (from.cache !== undefined) this.cache = from.cache;
  }
}

const zeroCounts = () => Object.fromEntries(BLOCK_RULES.map((rule) => [rule, 0])) as Record<BlockRule, number>;

/** The answers after a result: the call's ToolMessage holds its full result now (unless it was a dedupe note). */
function noteAnswer(
  answers: AnswerRecord[] | undefined,
  event: Extract<GuardEvent, { type: "result" }>,
): AnswerRecord[] | undefined {
  if (event.callId === undefined || event.deduped === true) return answers;
  // Oldest first, the call's earlier answer (if any) left out, the newest ANSWERS_LIMIT kept.
  const next: AnswerRecord[] = [];
  for (const a of answers ?? []) if (a.key !== event.key) next.push(a);
  if (next.length >= ANSWERS_LIMIT) next.splice(0, next.length + 1 - ANSWERS_LIMIT);
  // Result dedupe compares exact results: the exact digest when the normalizer changed the text.
  const digest = event.result.exact ?? event.result.digest;
  next.push({ key: event.key, tool: event.tool, callId: event.callId, digest });
  return next;
}

/** The latest full answer of an identical earlier call (by call key), if one is kept. */
export function answerFor(state: ToolGuardState, key: string): AnswerRecord | undefined {
  for (const a of state.answers ?? []) if (a.key === key) return a;
  return undefined;
}

/** Copy-on-first-write over a batch of events; nested parts are replaced, never mutated, so the base stays intact. */
class StateDraft {
  current: ToolGuardState;
  private owned = false;
  private statsOwned = false;

  constructor(
    base: ToolGuardState,
    private readonly carryIndex: boolean,
  ) {
    this.current = base;
  }

  private own(): ToolGuardState {
    if (!this.owned) {
      this.current = new ChannelState(this.current);
      this.owned = true;
    }
    return this.current;
  }

  private stats(): GuardStats {
    const state = this.own();
    if (!this.statsOwned) {
      state.stats = { ...state.stats };
      this.statsOwned = true;
    }
    return state.stats;
  }

  /** The file-edits counts after a counted write was recorded (`1`) or failed (`-1`). */
  private noteEdits(before: ToolGuardState, effect: CallEffect, delta: 1 | -1): void {
    if (effect.kind === "write") {
      this.own().fileEdits = noteWrites(before.fileEdits, effect.paths, delta, effect.rewrites);
    }
  }

  /** The file-edits counts and the repeat ceiling's start afresh (a new run, a person's forgiveness). */
  private clearEdits(before: ToolGuardState): void {
    if (before.fileEdits !== undefined && before.fileEdits.length > 0) this.own().fileEdits = [];
    if (before.repeats !== undefined && before.repeats.calls.length > 0) this.own().repeats = { mark: 0, calls: [] };
  }

  /** The repeat ceiling's counts after a call was recorded, or after its result came in. */
  private noteRepeats(before: ToolGuardState, event: Extract<GuardEvent, { type: "call" | "result" }>): void {
    const repeats = before.repeats;
    if (event.type === "call") {
      if (event.repeat !== undefined) this.own().repeats = noteRepeatCall(repeats, event.key, event.tool, event.repeat);
      return;
    }
    if (repeats === undefined) return;
    const changed = (event.effect.kind === "write" || event.effect.kind === "mutate") && event.result.ok;
    this.own().repeats = noteRepeatResult(repeats, event.key, event.result.digest, changed);
  }

  apply(event: GuardEvent): void {
    if (event.type === "call") this.call(event);
    else if (event.type === "result") this.result(event);
    else if (event.type === "served") this.served(event);
    else if (event.type === "block") this.block(event);
    else if (event.type === "reset") this.reset();
    else if (event.type === "run") this.run(event);
    else if (event.type === "agent") this.agent(event.agent);
    else if (event.type === "external") this.external(event);
    else this.escalate(event);
  }

  private reset(): void {
    this.current = emptyToolGuardState();
    this.owned = true;
    this.statsOwned = true;
  }

  private call(event: Extract<GuardEvent, { type: "call" }>): void {
    const before = this.current;
    const state = this.own();
    state.repetition = recordCall(before.repetition, event, event.windowSize, { carryIndex: this.carryIndex });
    state.operations = invalidateOperations(before.operations, event.effect);
    this.invalidate(before, event.effect);
    if (event.edits === true) this.noteEdits(before, event.effect, 1);
    if (event.repeat !== undefined) this.noteRepeats(before, event);
    this.stats().allowed += 1;
  }

  private result(event: Extract<GuardEvent, { type: "result" }>): void {
    const { carryIndex, current: before } = this;
    const mutates = event.effect.kind === "write" || event.effect.kind === "mutate";
    const state = this.own();
    const paths = writtenPaths(event.effect);
    state.repetition = recordResult(before.repetition, event.seq, event.result, mutates, { carryIndex, paths });
    state.operations = recordOperationResult(before.operations, event, event.effect, event.result, event.limits);
    state.answers = noteAnswer(before.answers, event);
    if (event.cache !== undefined && event.result.ok) this.cacheResult(event, event.cache);
    // A write that failed changed nothing (as far as the guards know): its count is taken back.
    if (event.edits === true && !event.result.ok) this.noteEdits(before, event.effect, -1);
    if (before.repeats !== undefined) this.noteRepeats(before, event);
  }

  /** A call answered from the cache: counted, and counted by the repeat ceiling. */
  private served(event: Extract<GuardEvent, { type: "served" }>): void {
    const before = this.current;
    if (event.repeat !== undefined) {
      this.own().repeats = noteRepeatCall(before.repeats, event.key, event.tool, event.repeat);
    }
    const stats = this.stats();
    stats.served = (stats.served ?? 0) + 1;
  }

  /** A successful result becomes the cached one of its key: the ToolMessage that holds it (its answer record). */
  private cacheResult(event: Extract<GuardEvent, { type: "result" }>, cache: CacheTerms): void {
    const state = this.own();
    const answer = answerFor(state, event.key);
    if (answer === undefined || answer.digest !== (event.result.exact ?? event.result.digest)) return;
    const { key, tool, effect } = event;
    const paths = effect.kind === "read" ? effect.paths : [];
    const entry = { key, tool, callId: answer.callId, digest: answer.digest, until: cache.until, paths };
    state.cache = noteCached(state.cache, entry, cache.limit);
  }

  private invalidate(before: ToolGuardState, effect: CallEffect): void {
    const cache = invalidateCache(before.cache, effect);
    if (cache !== before.cache) this.own().cache = cache;
  }

  private block({ block, observedLimit }: Extract<GuardEvent, { type: "block" }>): void {
    const observed = [...this.current.observed, block];
    const counters = block.enforced ? "blocked" : "observed";
    this.own().observed = observed.slice(Math.max(0, observed.length - observedLimit));
    const stats = this.stats();
    stats[counters] = { ...stats[counters], [block.rule]: (stats[counters][block.rule] ?? 0) + 1 };
  }

  /** Another agent's memory (a sub-agent is handed its parent's state): this agent starts afresh. */
  private agent(agent: string): void {
    if (this.current.agent === agent) return;
    this.reset();
    this.own().agent = agent;
  }

  private run(event: Extract<GuardEvent, { type: "run" }>): void {
    const before = this.current;
    if (before.run === event.run) return; // every task of one response records the same start
    const state = this.own();
    state.run = event.run;
    // The windows are per run; sequence numbers, the change epoch and who changed what last stay.
    state.repetition = { ...before.repetition, window: [] };
    state.operations = event.keep.operations ? before.operations : emptyOperationsState();
    // The cache follows `memory.acrossRuns`, as the valid reads do: the world may have changed between messages.
    if (!event.keep.operations && before.cache !== undefined && before.cache.length > 0) state.cache = [];
    // carryStrikes: escalation goes on as if no one had written (strikes, the acknowledgment owed, blocked calls).
    state.escalation = event.keep.strikes ? before.escalation : emptyEscalationState();
    this.clearEdits(before); // counted per run (the repeat ceiling's counts too)
  }

  /** A change made by someone else (a person's own tool call in a recorded run): earlier results may be stale. */
  private external({ effect }: Extract<GuardEvent, { type: "external" }>): void {
    if (effect.kind !== "write" && effect.kind !== "mutate") return;
    const before = this.current;
    // Repeating a call after someone else changed the world is a new question: the window and the counts restart.
    if (before.repeats !== undefined) this.own().repeats = { ...before.repeats, mark: before.repeats.mark + 1 };
    const state = this.own();
    state.operations = invalidateOperations(before.operations, effect);
    this.invalidate(before, effect);
    const { repetition } = before;
    const epoch = repetition.epoch + 1;
    const changes = noteChange(repetition.changes, "\u0000external", epoch, writtenPaths(effect), []);
    state.repetition = { ...repetition, epoch, window: [], changes };
  }

  private escalate(event: EscalationEvent): void {
    const before = this.current;
    // Forgiving the strikes also lifts the file limits and the repeat ceiling.
    if (event.type === "forgive") this.clearEdits(before);
    const escalation = reduceEscalation(before.escalation, event);
    if (escalation === before.escalation) return;
    this.own().escalation = escalation;
    if (event.type === "remind") this.stats().reminded += 1;
  }
}

/** The files a change is known to have changed (a write of known paths); `undefined`: it may have changed anything. */
function writtenPaths(effect: CallEffect): readonly string[] | undefined {
  return effect.kind === "write" ? effect.paths : undefined;
}

/** The types of {@link GuardEvent}: an event of any other type is refused, never applied. */
const EVENT_TYPES = new Set(
  "call result served block reset external run agent strike remind acknowledge progress forgive end".split(" "),
);

const count = z.number();
const text = z.string();
const ruleCounts = z.record(z.string(), count);
const effect = z.looseObject({ kind: z.enum(["read", "write", "mutate"]) });
const result = z.looseObject({ ok: z.boolean(), digest: text });

/** The `toolGuard` shape a checkpoint gives back: the parts the rules read (those of an empty state required). */
const toolGuardSchema = z.looseObject({
  repetition: z.looseObject({
    nextSeq: count,
    epoch: count,
    window: z.array(z.looseObject({ seq: count, key: text, tool: text, epoch: count, result: result.optional() })),
    changes: z.array(z.looseObject({ tool: text, epoch: count })).optional(),
  }),
  operations: z.looseObject({
    ops: z.record(z.string(), z.looseObject({ key: text.optional(), effect: effect.optional() })),
    files: z.array(z.looseObject({})),
  }),
  observed: z.array(z.looseObject({ tool: text, rule: text, count: count })),
  stats: z.looseObject({ allowed: count, blocked: ruleCounts, observed: ruleCounts, reminded: count }),
  escalation: z.looseObject({
    strikes: count,
    pending: z.boolean(),
    reminders: count,
    lastTurn: text.nullable(),
    blocked: z.array(z.looseObject({ tool: text, key: text })),
    endedBy: text.nullable(),
  }),
  run: text.nullable().optional(),
  agent: text.optional(),
  answers: z.array(z.looseObject({ key: text, tool: text, callId: text, digest: text })).optional(),
  fileEdits: z.array(z.looseObject({ path: text, writes: count })).optional(),
  repeats: z.looseObject({ mark: count, calls: z.array(z.looseObject({ key: text })) }).optional(),
  cache: z
    .array(z.looseObject({ key: text, tool: text, callId: text, digest: text, until: count, paths: z.array(text) }))
    .optional(),
});

/** States read from checkpoints: each plain value is checked once. */
const storedStates = new StoredValues(
  "toolGuard",
  "the guards' state",
  toolGuardSchema,
  (parsed) => new ChannelState(parsed as unknown as ToolGuardState),
);

/** The `toolGuard` value, a checkpoint's checked once (a damaged one throws `GuardStateError`). */
export function readToolGuard(value: unknown, update = false): ToolGuardState {
  if (value instanceof ChannelState) return value;
  if (value === undefined) return emptyToolGuardState();
  return storedStates.read(value, update);
}

/** A whole state written to the channel: kept as it is if it has the state's window, else refused. */
function wholeState(update: object): ToolGuardState {
  if (update instanceof ChannelState || "repetition" in update) return update as ToolGuardState;
  throw new GuardStateError("toolGuard", "an object that is neither an event nor the guards' state", true);
}

/** The events of an update, each of a known type; else a `GuardStateError`. */
function eventsOf(update: GuardEvent | readonly GuardEvent[]): readonly GuardEvent[] {
  const events = (Array.isArray(update) ? update : [update]) as readonly unknown[];
  for (const event of events) {
    const type = event !== null && typeof event === "object" ? (event as { type?: unknown }).type : undefined;
    if (typeof type !== "string" || !EVENT_TYPES.has(type)) {
      const what = typeof type === "string" ? `an event of unknown type '${type}'` : `${kindOf(event)} (not an event)`;
      throw new GuardStateError("toolGuard", what, true);
    }
  }
  return events as readonly GuardEvent[];
}

/**
 * What a node may write to the `toolGuard` channel: events (applied in order) or a whole state.
 *
 * @example
 * ```ts
 * const node = () => ({ toolGuard: [{ type: "reset" }] satisfies ToolGuardUpdate }); // forget the guards' memory
 * ```
 */
export type ToolGuardUpdate = GuardEvent | GuardEvent[] | ToolGuardState | null;

/**
 * The reducer of the `toolGuard` channel: applies events in order. Also accepts a whole state (replaces it; checked
 * when read) and `null` (the empty state: how a damaged state is reset, `updateState(config, { toolGuard: null })`);
 * `undefined` changes nothing. Anything else is refused with a `GuardStateError`, never applied.
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

/** The `toolGuard` channel (see common/channel.ts): the tool-call guards' memory, through its reducer. */
export const toolGuardChannel = { reduce: reduceToolGuard, empty: emptyToolGuardState };

/** Applies events; `carryIndex` is false when planning a batch, so the channel state keeps its index. */
export function applyEvents(
  state: ToolGuardState | undefined,
  update: GuardEvent | readonly GuardEvent[] | ToolGuardState | undefined | null,
  carryIndex: boolean,
): ToolGuardState {
  if (update === null) return emptyToolGuardState();
  if (update === undefined) return state ?? emptyToolGuardState();
  if (!Array.isArray(update)) {
    if (typeof update !== "object") throw new GuardStateError("toolGuard", `${kindOf(update)} (not an event)`, true);
    // createAgent writes each channel back on every invoke (checked when read); a sub-agent's final state is not ours.
    if (!("type" in update)) {
      const whole = wholeState(update);
      if (state === undefined || wholeValueStands(state, whole)) return whole;
      // Whatever that agent changed makes our reads stale, as an external change does.
      const changed = whole.repetition.epoch > 0;
      return changed ? applyEvents(state, { type: "external", effect: { kind: "mutate" } }, carryIndex) : state;
    }
  }
  const events = eventsOf(update as GuardEvent | readonly GuardEvent[]);
  if (events.length === 0) return state ?? emptyToolGuardState();
  // A reset first needs nothing of the state before it (which may be the damaged one it replaces).
  const current = events[0]?.type === "reset" ? emptyToolGuardState() : readToolGuard(state);
  const draft = new StateDraft(current, carryIndex);
  for (const event of events) draft.apply(event);
  return draft.current;
}
