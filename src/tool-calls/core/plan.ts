/** One model turn, as every adapter runs it: {@link planTurn} decides the calls, {@link commitTurn} records them. */

import { truncate } from "../../common/texts/format.js";
import type { CallFacts, CallOutcome, DecideContext, ToolCallInput } from "./call.js";
import { decideToolCall, type ToolCallDecision } from "./decide.js";
import { escalationCompare, substanceKeys } from "./detect.js";
import { type ResponseInput, responseAcknowledges } from "./escalation.js";
import { callFacts } from "./facts.js";
import { countsEdits } from "./file-edits.js";
import { normalizerFor } from "./normalize.js";
import type { ResolvedToolGuardOptions } from "./options.js";
import { type RecordedResult, resultDigest } from "./repetition.js";
import { applyEvents, type GuardEvent, type ToolGuardState } from "./state.js";
import { sameIdNote, withNoteAfter } from "./texts.js";

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
  facts: readonly CallFacts[] = calls.map((call) => callFacts(call, options, ctx)),
): {
  /** One decision per call, in order. */
  decisions: ToolCallDecision[];
  /** The events of the response as a whole (its acknowledgment of an earlier block). */
  turnEvents: GuardEvent[];
  /** The state after the response's events and every decision's events; computed when first read. */
  state: ToolGuardState;
} {
  const events: GuardEvent[] = [];
  // The acknowledgment is a property of the whole response, judged against the state before it.
  let turnCtx = ctx;
  if (ctx.response !== undefined && options.escalation.enabled && ctx.acknowledged === undefined) {
    const escState = state.escalation;
    const acknowledged = responseAcknowledges(
      escState,
      ctx.response,
      escalationCompare(options),
      substanceKeys(options),
    );
    turnCtx = { ...ctx, acknowledged };
    if (acknowledged && (escState.pending || escState.reminders > 0)) events.push({ type: "acknowledge" });
  }
  let current = applyEvents(state, events, false);
  const decisions: ToolCallDecision[] = [];
  calls.forEach((call, i) => {
    // Each call is decided from the state after the calls before it (their events applied now, not sooner).
    const previous = decisions[decisions.length - 1];
    if (previous !== undefined) current = applyEvents(current, previous.events, false);
    const own = facts[i] as CallFacts;
    const first = call.modelId ? calls.findIndex((c, j) => c.modelId === call.modelId && facts[j]?.key === own.key) : i;
    const same = first < i ? sameIdDecision(call, own, first) : undefined;
    decisions.push(same ?? decideToolCall(current, call, options, turnCtx, own));
  });
  return new Planned(decisions, events, current);
}

/**
 * Decisions whose state after the last call's events is computed when read (the tool node and the middleware never
 * need it). A class: V8 builds an object literal with a getter on a slow path, twice a turn.
 */
class Planned implements Pick<TurnPlan, "decisions" | "turnEvents" | "state" | "stop"> {
  readonly #before: ToolGuardState;
  #after: ToolGuardState | undefined;
  stop?: TurnStop | undefined;

  constructor(
    readonly decisions: ToolCallDecision[],
    public turnEvents: GuardEvent[],
    before: ToolGuardState,
  ) {
    this.#before = before;
  }

  get state(): ToolGuardState {
    const last = this.decisions.at(-1);
    this.#after ??= last === undefined ? this.#before : applyEvents(this.#before, last.events, false);
    return this.#after;
  }
}

/** A call sent again under the id of call `first` of its response: a provider runs an id once, so it is served. */
function sameIdDecision(call: ToolCallInput, { key, effect }: CallFacts, first: number): ToolCallDecision {
  const id = call.modelId as string;
  const [content, served] = [sameIdNote(id), { callId: id, digest: "" }];
  const events: GuardEvent[] = [{ type: "served", key, tool: call.name }];
  return { call, allowed: false, observed: false, count: 1, key, effect, content, served, sameIdAs: first, events };
}

/**
 * One model response, as the guards need it.
 *
 * @example
 * ```ts
 * const turn: TurnInput = { id: "msg_1", text: "Reading it.", calls: [{ name: "read_file", args: { path: "a" } }] };
 * ```
 */
export interface TurnInput {
  /** The response's id: a response is struck at most once. */
  id: string;
  /** Its text (where it acknowledges a block). */
  text: string;
  /** The calls to decide, in order. */
  calls: readonly ToolCallInput[];
  /** Every call of the response, when `calls` is only part of it (the acknowledgment looks at all). */
  siblings?: readonly ToolCallInput[] | undefined;
  /**
   * What marks the run the response belongs to (the id of the person's message that started it); a marker other
   * than the state's starts a new run. Absent: the response continues the current run.
   */
  run?: string | undefined;
}

/**
 * The run must stop before any call of the response runs: at level 3 a person is asked (`interrupt()`), at level 4
 * the run ends with an explanation.
 *
 * @example
 * ```ts
 * const { stop } = planTurn(state, turn, options);
 * if (stop) console.log(stop.level === 3 ? "ask a person" : "end the run", stop.decision.call.name, stop.strikes);
 * ```
 */
export interface TurnStop {
  /** 3: ask a person (`interrupt()`); 4: end the run. */
  level: 3 | 4;
  /** The block that escalated furthest. */
  decision: ToolCallDecision;
  /** Strikes with this response. */
  strikes: number;
  /** What a stop records: the response's acknowledgment and its blocks (nothing ran). */
  events: GuardEvent[];
}

/**
 * The guards' plan for one model response.
 *
 * @example
 * ```ts
 * const plan: TurnPlan = planTurn(state, turn, options);
 * plan.decisions.filter((d) => !d.allowed).length; // calls that will not run
 * ```
 */
export interface TurnPlan {
  /** One decision per call of `turn.calls`, in order. */
  decisions: ToolCallDecision[];
  /** Events of the response as a whole (its acknowledgment of an earlier block). */
  turnEvents: GuardEvent[];
  /** The state after the decisions (outcomes not yet recorded); computed when first read. */
  state: ToolGuardState;
  /** Set when the response reaches escalation level 3 or 4. */
  stop?: TurnStop | undefined;
}

/**
 * Plans one model response: decides its calls together from the state before it ({@link planToolCalls}) and says
 * whether the run must stop. Pure.
 *
 * @example
 * ```ts
 * const plan = planTurn(state, { id: "m1", text: "", calls: [{ name: "ls", args: {}, id: "c1" }] }, options);
 * if (!plan.stop) runAllowed(plan.decisions);
 * ```
 */
export function planTurn(
  state: ToolGuardState,
  turn: TurnInput,
  options: ResolvedToolGuardOptions,
  ctx: Omit<DecideContext, "response" | "acknowledged"> = {},
): TurnPlan {
  const calls = (turn.siblings ?? turn.calls).map((c) => ({ tool: c.name, args: c.args }));
  const response: ResponseInput = { id: turn.id, text: turn.text, calls };
  const started = runEvents(state, turn.run, options, ctx.agent);
  const afterStart = applyEvents(state, started, false);
  // Each call's facts, once for the plan (the plan of a progressing response reads them again).
  const facts = turn.calls.map((call) => callFacts(call, options, ctx));
  let inRun = planToolCalls(afterStart, turn.calls, options, { ...ctx, response }, facts);
  // A response that would stop but also makes a new call makes progress: its new calls run, its repeats are blocked.
  if ((topEscalation(inRun.decisions)?.escalation ?? 0) >= 3 && inRun.decisions.some((d) => d.allowed)) {
    inRun = planToolCalls(afterStart, turn.calls, options, { ...ctx, response, progressing: true }, facts);
  }
  const planned: TurnPlan = inRun;
  if (started.length > 0) planned.turnEvents = [...started, ...inRun.turnEvents];
  const top = topEscalation(planned.decisions);
  const level = top?.escalation ?? 0;
  if (top === undefined || level < 3) return planned;
  const blocks = planned.decisions.filter((d) => !d.allowed).flatMap((d) => d.events);
  planned.stop = {
    level: level >= 4 ? 4 : 3,
    decision: top,
    strikes: top.strikes ?? level,
    events: [...planned.turnEvents, ...blocks],
  };
  return planned;
}

/** The `agent` and `run` events a response starts with, when the state is another agent's or another run's. */
function runEvents(
  state: ToolGuardState,
  run: string | undefined,
  options: ResolvedToolGuardOptions,
  agent: string | undefined,
): GuardEvent[] {
  const started: GuardEvent[] = agent !== undefined && state.agent !== agent ? [{ type: "agent", agent }] : [];
  if (options.memory.runBoundary === "none" || run === undefined) return started;
  if (started.length === 0 && state.run === run) return started;
  const keep = { operations: options.memory.acrossRuns === "keep", strikes: options.escalation.carryStrikes };
  return [...started, { type: "run", run, keep }];
}

/**
 * The events that record a planned response once its allowed calls have run: the plan's events, what each call
 * returned, and progress (a response whose calls all ran, one of them successfully, sets the strikes back to 0).
 * `only` limits the record to some calls (a createReactAgent v2 task runs one call of the response); `outcomes` is
 * indexed like `plan.decisions` (no outcome: the call did not run, or its result is unknown).
 *
 * @example
 * ```ts
 * const events = commitTurn(plan, [{ ok: true, text: "a.py" }], options);
 * state = reduceToolGuard(state, events);
 * ```
 */
export function commitTurn(
  plan: Pick<TurnPlan, "decisions" | "turnEvents">,
  outcomes: readonly (CallOutcome | undefined)[],
  options: ResolvedToolGuardOptions,
  only?: readonly number[],
): GuardEvent[] {
  const events: GuardEvent[] = [...plan.turnEvents];
  const ran: CallOutcome[] = [];
  // Each call is recorded with its outcome before the next call (a call after a change counts as after it).
  for (const i of only ?? plan.decisions.map((_, j) => j)) {
    const decision = plan.decisions[i] as ToolCallDecision;
    const outcome = outcomes[i];
    events.push(...decision.events);
    if (outcome === undefined || !decision.allowed) continue;
    events.push(...outcomeEvents(decision, outcome, options));
    ran.push(outcome);
  }
  events.push(...progressEvents(plan.decisions, ran));
  return events;
}

/** The block that escalates furthest (reminders left out): what stops the run. */
function topEscalation(decisions: readonly ToolCallDecision[]): ToolCallDecision | undefined {
  let top: ToolCallDecision | undefined;
  for (const d of decisions) {
    if (!d.allowed && !d.reminder && (d.escalation ?? 0) > (top?.escalation ?? 0)) top = d;
  }
  return top;
}

/** Progress (strikes back to 0): no call of the response blocked or held back, and one succeeded. */
function progressEvents(
  responseDecisions: readonly ToolCallDecision[],
  outcomes: readonly { ok: boolean }[],
): GuardEvent[] {
  // A call served from the cache is no block, nor progress: it ran nothing (`outcomes` are of the calls that ran).
  if (responseDecisions.some((d) => !d.allowed && d.served === undefined)) return [];
  return outcomes.some((o) => o.ok) ? [{ type: "progress" }] : [];
}

type ResultEvent = Extract<GuardEvent, { type: "result" }>;

/** The `result` event of an allowed call. */
export function outcomeEvents(
  decision: ToolCallDecision,
  outcome: CallOutcome,
  options: ResolvedToolGuardOptions,
): GuardEvent[] {
  if (!decision.allowed || decision.seq === undefined) return [];
  const { seq, key, effect, call } = decision;
  const [tool, callId, deduped, limits] = [call.name, call.id, outcome.deduped, options.memory];
  const result = recordedResult(tool, outcome, options);
  const event: ResultEvent = { type: "result", seq, key, tool, effect, callId, deduped, result, limits };
  if (countsEdits(tool, effect, options)) event.edits = true;
  if (decision.cache !== undefined && outcome.ok) event.cache = decision.cache;
  return [event];
}

/** A call's outcome as recorded: `exact` only when the normalizer changed the text (result dedupe compares it). */
function recordedResult(tool: string, outcome: CallOutcome, options: ResolvedToolGuardOptions): RecordedResult {
  const { ok, text, reads } = outcome;
  const preview = truncate(text, options.feedback.maxResultChars);
  const exact = resultDigest(ok, text);
  const normalized = normalizerFor(options, tool)?.(text) ?? text;
  const result: RecordedResult =
    normalized === text ? { ok, digest: exact, preview } : { ok, digest: resultDigest(ok, normalized), exact, preview };
  if (reads !== undefined) result.reads = reads;
  return result;
}

/**
 * The text a call's answer carries after the tool's result: the file-edits reminder of a call that ran and
 * succeeded (a failed write is not counted, so it gets none), and the repeat ceiling's reminder of a call that ran;
 * `undefined` for any other call.
 *
 * @example
 * ```ts
 * const outcome = { ok: true, text: "Wrote 120 characters to a.py." };
 * const note = answerReminder(decision, outcome);
 * const content = note === undefined ? outcome.text : withNoteAfter(outcome.text, note);
 * ```
 */
export function answerReminder(decision: ToolCallDecision, outcome: CallOutcome | undefined): string | undefined {
  if (!decision.allowed || outcome === undefined) return undefined;
  const file = outcome.ok ? decision.fileEdits?.reminder : undefined;
  const repeat = decision.repeats?.reminder;
  return file === undefined ? repeat : repeat === undefined ? file : withNoteAfter(file, repeat);
}
