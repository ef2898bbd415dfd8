/**
 * The guarded turn in LangChain messages, under every adapter (the tool node, the escalation hook and node, the
 * createAgent middleware): open the model's response, stop the run or go on, answer the blocked calls, settle the
 * calls that ran, and give the guard channels' update. The usual turn (one call the core's shortcut proves new) is
 * planned without the full procedure here: an adapter never chooses a path.
 */
import { isDeepStrictEqual } from "node:util";
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { Command } from "@langchain/langgraph";
import { callPosition } from "../common/call-ids.js";
import type { GuardStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import { canonicalJson } from "../common/identity/signature.js";
import { guardAnswer, lastAIMessageIndex, unansweredCalls } from "../common/messages.js";
import type { EndReason } from "../common/vocabulary.js";
import { watchSubAgents } from "../run-end/sub-agents.js";
import { blockArtifact, dedupe, heldAnswer, servedAnswer, withNote } from "./answers.js";
import type { ToolCallDecision } from "./core/decide.js";
import { identifyCall } from "./core/detect.js";
import type { ResolvedToolGuardOptions } from "./core/options.js";
import { answerReminder, type CallOutcome, commitTurn, planTurn, type TurnStop } from "./core/plan.js";
import { type GuardEvent, readToolGuard, reduceToolGuard, type ToolGuardState } from "./core/state.js";
import { turnStreamEvents } from "./events.js";
import { type FingerprintedResult, fingerprintBeforeRun } from "./freshness.js";
import { turnInput } from "./inputs.js";
import { forgiveness, type StopResult, stopResponse } from "./stop.js";
import type { TurnContext } from "./traits.js";

/**
 * What an adapter gives a turn: the resolved options, the run's decision context, and where stream events go
 * (a node's config, a middleware's runtime).
 */
export interface TurnEnv {
  options: ResolvedToolGuardOptions;
  context: TurnContext;
  host: WriterHost;
  /** Where a tool node keeps the plans of its responses (see {@link PlannedTurns}). */
  plans?: PlannedTurns | undefined;
}

/**
 * The plans a tool node's turns were opened with, by AI message: the escalation hook (or node) plans a response and
 * the tool node after it takes that plan, as the sibling tasks of a createReactAgent v2 response take the first
 * one's. A plan is taken only for the state value it was made from and the same calls: a write in between plans again.
 */
export class PlannedTurns {
  readonly #plans = new WeakMap<object, { from: ToolGuardState; ids: (string | undefined)[]; plan: Plan }>();

  /** The plan of `message`'s calls `planned` made from `state`, if one was kept. */
  find(message: AIMessage, state: ToolGuardState, planned: readonly ToolCall[]): Plan | undefined {
    const kept = this.#plans.get(message);
    if (kept === undefined || kept.from !== state || kept.ids.length !== planned.length) return undefined;
    return kept.ids.every((id, i) => planned[i]?.id === id) ? kept.plan : undefined;
  }

  keep(message: AIMessage, state: ToolGuardState, planned: readonly ToolCall[], plan: Plan): void {
    this.#plans.set(message, { from: state, ids: planned.map((c) => c.id ?? undefined), plan });
  }
}

/**
 * What createAgent keeps of a turn between `afterModel` (which plans it) and `wrapToolCall` (which runs one call):
 * the response's decisions and the id of each call, plain data in a state channel (or in memory, see
 * {@link SplitTurns}).
 */
export interface TurnRecord {
  decisions: ToolCallDecision[];
  ids: (string | null)[];
  /** The id of the AI message whose calls these are (a record of an earlier response is not resumed). */
  message?: string | undefined;
  /** A run the guards end with the model's own words: the reason, and the id the final message takes. */
  wrapUp?: WrapUpRecord | undefined;
}

/** The model's wrap-up a stop asked for (createAgent: the next model call makes it). */
interface WrapUpRecord {
  /** Why the run ends (the final message's `response_metadata.guard`, and the canned message). */
  reason: EndReason;
  /** The id of the final message (the guards' state refers to it). */
  id: string;
}

/**
 * A turn record as the channel holds it: an instance, which LangGraph's `Send` passes as it is to the tool task
 * instead of deep-copying it (as it does every plain object of the state). Its JSON is a {@link TurnRecord}'s.
 */
class ChannelRecord implements TurnRecord {
  constructor(
    public decisions: ToolCallDecision[],
    public ids: (string | null)[],
    public message?: string,
    public wrapUp?: WrapUpRecord,
  ) {}
}

/** A record of no turn (the channel's default, and what a stopped response leaves), or of a wrap-up to make. */
export function emptyTurnRecord(wrapUp?: WrapUpRecord): TurnRecord {
  return new ChannelRecord([], [], undefined, wrapUp);
}

/** The response's plan as a turn keeps it. */
interface Plan {
  decisions: ToolCallDecision[];
  turnEvents: GuardEvent[];
  stop?: TurnStop | undefined;
}

/** The calls a turn answers, the calls planned with them, and where the former are in the latter. */
interface Pending {
  message: AIMessage | undefined;
  calls: ToolCall[];
  planned: readonly ToolCall[];
  /** `undefined`: the calls are the planned ones, in order. */
  indices: number[] | undefined;
}

const NO_CALLS: Plan = { decisions: [], turnEvents: [] };

/** What a turn is opened on: the guards' state, the conversation and the adapter's environment. */
interface Ground {
  state: ToolGuardState;
  messages: readonly BaseMessage[];
  env: TurnEnv;
}

/** Whether the turn's decisions have stream events to write (not again for a resumed turn). */
type Announce = "announce" | "silent";

/**
 * One model response under the guards. Open it from the state ({@link GuardedTurn.open}); if {@link stop} is set
 * none of its calls runs; else {@link GuardedTurn.answer} each call, then write {@link GuardedTurn.update} to the
 * guard channels.
 */
export class GuardedTurn {
  /** The outcome of each call that ran, indexed like the plan's decisions. */
  readonly #outcomes: (CallOutcome | undefined)[] = [];
  /** The fingerprint of the files each shell read reads, taken as it starts (see freshness.ts), by decision. */
  readonly #reads: (string | undefined)[] = [];
  /** The guard events written to the stream by this turn (its decisions', then each dedupe's). */
  readonly log: GuardStreamEvent[] = [];
  /** Whether the decisions' stream events are still to be written (once the turn goes on: not by a judge). */
  #unannounced: boolean;

  /** The AI message the calls belong to. */
  readonly message: AIMessage | undefined;
  /** The calls this turn answers. */
  readonly calls: readonly ToolCall[];
  /** The guards' state the turn was planned from. */
  readonly state: ToolGuardState;
  private readonly plan: Plan;
  private readonly indices: readonly number[] | undefined;
  private readonly messages: readonly BaseMessage[];
  private readonly env: TurnEnv;

  private constructor(ground: Ground, pending: Omit<Pending, "planned">, plan: Plan, announce: Announce) {
    ({ state: this.state, messages: this.messages, env: this.env } = ground);
    ({ message: this.message, calls: this.calls, indices: this.indices } = pending);
    this.plan = plan;
    this.#unannounced = announce === "announce" && plan.stop === undefined;
  }

  /**
   * Writes the stream events of the turn's decisions, once, when the turn goes on (its first answer or its split):
   * a hook that only judges whether the run stops writes none.
   */
  #announce(): void {
    if (!this.#unannounced) return;
    this.#unannounced = false;
    this.log.push(
      ...emitGuardEvents(this.env.host, turnStreamEvents(this.decisions), this.env.options.feedback.events),
    );
  }

  /**
   * Opens the turn of the last AI message: its calls no ToolMessage answers yet (in a createReactAgent v2 task,
   * `single`, planned with its siblings), each decided from `state`. Without an AI message, a turn of no calls
   * (its `message` undefined).
   */
  static open(
    state: ToolGuardState,
    messages: readonly BaseMessage[],
    env: TurnEnv,
    single?: ToolCall | undefined,
  ): GuardedTurn {
    state = readToolGuard(state); // a value from a checkpoint checked (once), else as it is
    env = withCacheLookup(env, state, messages);
    const pending = pendingCalls(messages, single);
    const ground = { state, messages, env };
    const { message, planned } = pending;
    if (planned.length === 0) return new GuardedTurn(ground, pending, NO_CALLS, "silent");
    const kept = message === undefined ? undefined : env.plans?.find(message, state, planned);
    if (kept !== undefined) return new GuardedTurn(ground, pending, kept, "announce");
    const made = planTurn(state, turnInput(message, planned, messages), env.options, env.context);
    if (message !== undefined) env.plans?.keep(message, state, planned, made);
    return new GuardedTurn(ground, pending, made, "announce");
  }

  /**
   * Resumes a turn that createAgent split across hooks, to settle the call `call` (see {@link TurnRecord}); `state`
   * is the guards' state as `wrapToolCall` sees it. A call changed since it was planned (humanInTheLoopMiddleware's
   * "edit") is decided again, as the call that will really run. `undefined` when the record does not know the call.
   */
  static resume(
    record: TurnRecord | undefined,
    call: ToolCall,
    state: ToolGuardState,
    messages: readonly BaseMessage[],
    env: TurnEnv,
  ): GuardedTurn | undefined {
    if (call.id == null || !Array.isArray(record?.ids) || !Array.isArray(record.decisions)) return undefined;
    state = readToolGuard(state);
    const { ids, decisions: planned } = record;
    let key: string | undefined;
    const keyOf = () => {
      key ??= identifyCall(call, env.options, env.context).key;
      return key;
    };
    // The planned call, unless it changed since: the same arguments (as data: createAgent's `Send` hands the tool a
    // copy of the call) have its key without working it out again.
    const plannedAs = (d: ToolCallDecision | undefined) =>
      d?.call.name === call.name && (sameData(d.call.args, call.args) || d.key === keyOf());
    // Calls that share an id are told apart by what they call, then by the task (see callPosition).
    const same = (i: number) => plannedAs(planned[i]);
    const owner = (messages[lastAIMessageIndex(messages)] as object | undefined) ?? record;
    const index = callPosition(ids, call.id, same, { owner, task: call });
    const decision = planned[index];
    if (decision === undefined) return undefined;
    const resumed = { message: undefined, calls: [call], indices: [index] };
    if (plannedAs(decision)) {
      const plan = { decisions: planned, turnEvents: [] };
      return new GuardedTurn({ state, messages, env }, resumed, plan, "silent");
    }
    // Decided again from the state as wrapToolCall sees it, as a response of this call alone.
    const id = decision.call.id ?? call.id;
    const turn = { id: `edited:${id}`, text: "", calls: [{ name: call.name, args: call.args, id }] };
    const decisions = planned.slice();
    const { options, context } = withCacheLookup(env, state, messages);
    decisions[index] = planTurn(state, turn, options, context).decisions[0] as ToolCallDecision;
    return new GuardedTurn({ state, messages, env }, resumed, { decisions, turnEvents: [] }, "announce");
  }

  /**
   * Splits the turn across hooks (createAgent): what `afterModel` writes now, and the record `wrapToolCall` resumes
   * the turn from. Written now: the response's own events, and the calls without an id, which no later hook can
   * find, decided here (a blocked one answered).
   */
  split(): { events: GuardEvent[]; answers: ToolMessage[]; record: TurnRecord } {
    this.#announce();
    const events = [...this.plan.turnEvents];
    const answers: ToolMessage[] = [];
    this.calls.forEach((call, i) => {
      if (call.id != null) return;
      events.push(...this.decision(i).events);
      const instead = this.#standIn(i);
      if (instead !== undefined) answers.push(instead);
    });
    const record = new ChannelRecord(
      this.plan.decisions,
      this.calls.map((c) => c.id ?? null),
      this.message?.id,
    );
    return { events, answers, record };
  }

  /** Set when the response reaches escalation level 3 or 4: none of its calls runs. */
  get stop(): TurnStop | undefined {
    return this.plan.stop;
  }

  /**
   * The plan of the whole response (in a v2 task, with the siblings' decisions): its decisions, its own events (a
   * new run, an acknowledgment) and its stop.
   */
  get responsePlan(): Readonly<Plan> {
    return this.plan;
  }

  /** The decision for each of {@link GuardedTurn.calls}. */
  get decisions(): ToolCallDecision[] {
    const { indices, plan } = this;
    return indices === undefined ? plan.decisions : indices.map((i) => plan.decisions[i] as ToolCallDecision);
  }

  /** The decision for call `i` of {@link GuardedTurn.calls}. */
  decision(i: number): ToolCallDecision {
    return this.plan.decisions[this.#at(i)] as ToolCallDecision;
  }

  /** Where call `i` of {@link GuardedTurn.calls} is in the response's plan. */
  #at(i: number): number {
    return this.indices?.[i] ?? i;
  }

  /**
   * Answers call `i` of {@link GuardedTurn.calls}, the whole of a call's protocol: a blocked call gets its error and a
   * repeat served from the result cache the earlier result (`run` is not called); any other call has a shell read's
   * files fingerprinted, runs under the sub-agent watch (a run the guards end inside it is reported in its answer),
   * and its output is settled (result dedupe's note, the reminders, the outcome kept for {@link GuardedTurn.update}).
   * What `run` throws is thrown on, and the call records nothing.
   */
  answer(i: number, run: () => Promise<ToolMessage | Command>): Promise<ToolMessage | Command> {
    const instead = this.#standIn(i);
    if (instead !== undefined) return Promise.resolve(instead);
    this.#fingerprint(i);
    // A promise chain, not an async function: no step between the tool and the adapter beyond the tool's own.
    return watchSubAgents(this.calls[i]?.id, run).then((output) => this.#settle(i, output));
  }

  /**
   * The ToolMessage that answers call `i` in the tool's place: the error of a block, or the earlier result of a
   * repeat served from the result cache; `undefined` when the tool runs.
   */
  #standIn(i: number): ToolMessage | undefined {
    this.#announce();
    const decision = this.decision(i);
    if (decision.allowed) return undefined;
    const call = this.calls[i] as ToolCall;
    if (decision.served !== undefined) return servedAnswer(call, decision, this.messages);
    return guardAnswer(call, decision.content ?? decision.message ?? "", blockArtifact(decision));
  }

  /**
   * Call `i` is about to run: when it is a shell read of known files, they are fingerprinted now, and the fingerprint
   * is kept with the result it records, for the freshness check of a later identical read (`DecideContext.readsChanged`).
   */
  #fingerprint(i: number): void {
    if (this.env.context.disabled) return;
    try {
      const decision = this.decision(i);
      // Only a shell read has one: any other call leaves `#reads` empty, and its events as they are.
      const fingerprint = fingerprintBeforeRun(decision.call.name, decision.effect);
      if (fingerprint !== undefined) this.#reads[this.#at(i)] = fingerprint;
    } catch {
      // no fingerprint: the read's repeats are judged by the rules alone, as before
    }
  }

  /**
   * Records what call `i` returned and gives the answer to send: the output itself, or a short note when it repeats
   * exactly an earlier identical call's answer still in the conversation (result dedupe).
   */
  #settle(i: number, output: ToolMessage | Command): ToolMessage | Command {
    const decision = this.decision(i);
    const call = this.calls[i] as ToolCall;
    const { options, host } = this.env;
    // The guards' id of the call (its own, unless another call of the response shares it) for the state and events;
    // the model's id for its answer.
    const own = { key: decision.key, tool: call.name, id: decision.call.id };
    const { answer, outcome, event } = dedupe(this.state, own, output, call.id, this.messages, options);
    this.#outcomes[this.#at(i)] = outcome;
    if (event !== undefined) this.log.push(...emitGuardEvents(host, [event], options.feedback.events));
    return withNote(answer, answerReminder(decision, outcome));
  }

  /** The `toolGuard` events that record the turn: the plan's, and each settled call's outcome and progress. */
  events(): GuardEvent[] {
    const events = commitTurn(this.plan, this.#outcomes, this.env.options, this.indices);
    return this.#reads.length === 0 ? events : withReads(events, this.plan.decisions, this.#reads);
  }

  /** The guard channels' update: `toolGuard` events, and `guardLog` when anything was written to the stream. */
  update(): { toolGuard: GuardEvent[]; guardLog?: GuardStreamEvent[] } {
    this.#announce();
    const toolGuard = this.events();
    return this.log.length > 0 ? { toolGuard, guardLog: this.log } : { toolGuard };
  }

  /**
   * Level 3 or 4 reached: every pending call is answered and the run ends (level 4, or level 3 without `ask`), or a
   * person is asked (`interrupt()`) and their answer given to the model. `before`: events recorded ahead of the
   * turn (a forgiveness).
   */
  halt(stop: TurnStop, ask: boolean, before: readonly GuardEvent[] = []): StopResult {
    const events = [...before, ...stop.events];
    const emit = { host: this.env.host, on: this.env.options.feedback.events };
    const response = { calls: this.calls, decisions: this.decisions };
    return stopResponse({ response, stop, guard: this.state, events, emit }, ask);
  }
}

/**
 * The turns createAgent splits across hooks (see {@link GuardedTurn.split}), from `afterModel` to `wrapToolCall`.
 * A turn with nothing to write after the model (the usual turn: every call allowed, nothing for the stream) is kept
 * here, in memory, by its AI message, and `afterModel` returns nothing: createAgent then writes no channel (any
 * update writes back every channel the hook reads, `messages` included: 5-10% of a turn in the overhead bench). Any
 * other turn's record is written to the state, with the id of its AI message.
 */
export class SplitTurns {
  readonly #kept = new WeakMap<object, TurnRecord>();

  /** Keeps the record of a turn `afterModel` writes nothing for; `false` (not kept) for a turn of no AI message. */
  keep(turn: GuardedTurn, record: TurnRecord): boolean {
    if (turn.message === undefined) return false;
    this.#kept.set(turn.message, record);
    return true;
  }

  /**
   * The turn of `call` as `afterModel` planned it: its record kept here, else `stored` (the state's) when it is of the
   * same response. Without either, the turn is planned again from the state: a kept turn read after a resume from a
   * checkpoint between the hooks (`afterModel` wrote nothing for it), or a response replaced under a new id.
   */
  resume(
    call: ToolCall,
    stored: TurnRecord | undefined,
    state: ToolGuardState,
    messages: readonly BaseMessage[],
    env: TurnEnv,
  ): GuardedTurn | undefined {
    const response = messages[lastAIMessageIndex(messages)] as AIMessage | undefined;
    const kept = response === undefined ? undefined : this.#kept.get(response);
    const same = stored?.message !== undefined && stored.message === response?.id;
    const record = kept ?? (same ? stored : undefined);
    if (record !== undefined) return GuardedTurn.resume(record, call, state, messages, env);
    return call.id == null || response === undefined ? undefined : GuardedTurn.open(state, messages, env, call);
  }
}

/**
 * The environment with the result cache's question (is the earlier answer still in `messages`?), when the state
 * has cached results to serve; else as it is.
 */
function withCacheLookup(env: TurnEnv, state: ToolGuardState, messages: readonly BaseMessage[]): TurnEnv {
  if (state.cache === undefined || state.cache.length === 0) return env;
  const answerPresent = (callId: string, digest: string) => heldAnswer(messages, callId, digest) !== undefined;
  return { ...env, context: { ...env.context, answerPresent } };
}

/**
 * The result events of shell reads with the fingerprint of the files they read (`reads[i]`, for `decisions[i]`) kept
 * in their recorded result (see {@link FingerprintedResult}).
 */
function withReads(
  events: GuardEvent[],
  decisions: readonly ToolCallDecision[],
  reads: readonly (string | undefined)[],
): GuardEvent[] {
  const bySeq = new Map<number, string>();
  reads.forEach((fingerprint, i) => {
    const seq = decisions[i]?.seq;
    if (fingerprint !== undefined && seq !== undefined) bySeq.set(seq, fingerprint);
  });
  return events.map((event) => {
    const fingerprint = event.type === "result" ? bySeq.get(event.seq) : undefined;
    if (fingerprint === undefined || event.type !== "result") return event;
    const result: FingerprintedResult = { ...event.result, reads: fingerprint };
    return { ...event, result };
  });
}

/**
 * The response after a model call, as the escalation hook and the middleware judge it: a person who wrote after a
 * run ended at level 4 forgives the strikes first; then the turn is opened from the state after that.
 */
export function openAfterModel(
  state: ToolGuardState,
  messages: readonly BaseMessage[],
  env: TurnEnv,
): { turn: GuardedTurn; forgiven: GuardEvent[] } {
  state = readToolGuard(state);
  const forgiven = forgiveness(state, messages);
  const guard = forgiven.length > 0 ? reduceToolGuard(state, forgiven) : state;
  return { turn: GuardedTurn.open(guard, messages, env), forgiven };
}

/** Whether `a` and `b` are deeply equal (`false` when too deep to compare: the caller then compares the keys). */
function sameData(a: unknown, b: unknown): boolean {
  try {
    return isDeepStrictEqual(a, b);
  } catch {
    return false;
  }
}

/** The calls a turn answers (see {@link Pending}): none without an AI message or a single call. */
function pendingCalls(messages: readonly BaseMessage[], single: ToolCall | undefined): Pending {
  const index = lastAIMessageIndex(messages);
  const message = index < 0 ? undefined : (messages[index] as AIMessage);
  if (single !== undefined) {
    // createReactAgent v2 sends each call to its own task: decide the calls before it in the same AI message too,
    // so that parallel branches agree with what one node would have decided.
    const siblings = message?.tool_calls ?? [];
    const at = taskPosition(message, siblings, single);
    return { message, calls: [single], planned: at >= 0 ? siblings : [single], indices: [Math.max(0, at)] };
  }
  const calls = message === undefined ? [] : unansweredCalls(message, messages);
  return { message, calls, planned: calls, indices: undefined };
}

/**
 * Where a createReactAgent v2 task's call (a copy of one of the message's calls) is among the message's calls: by its
 * id; among calls that share it, by its name and arguments, then by the task (see `callPosition`). -1: not there.
 */
function taskPosition(message: AIMessage | undefined, siblings: readonly ToolCall[], single: ToolCall): number {
  if (message === undefined || single.id == null) return -1;
  let args: string | undefined;
  const same = (i: number) => {
    const other = siblings[i] as ToolCall;
    args ??= canonicalJson(single.args);
    return other.name === single.name && canonicalJson(other.args) === args;
  };
  return callPosition(
    siblings.map((c) => c.id),
    single.id,
    same,
    { owner: message, task: single },
  );
}
