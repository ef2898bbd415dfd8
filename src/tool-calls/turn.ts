/** The guarded turn in LangChain messages, under every adapter (see notes/architecture.md, "The guarded turn"). */
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
import type { CallOutcome } from "./core/call.js";
import type { ToolCallDecision } from "./core/decide.js";
import { identifyCall } from "./core/detect.js";
import type { ResolvedToolGuardOptions } from "./core/options.js";
import { answerReminder, commitTurn, planTurn, type TurnStop } from "./core/plan.js";
import { type GuardEvent, readToolGuard, reduceToolGuard, type ToolGuardState } from "./core/state.js";
import { turnStreamEvents } from "./events.js";
import { fingerprintBeforeRun } from "./freshness.js";
import { turnInput } from "./inputs.js";
import { forgiveness, type StopResult, stopResponse } from "./stop.js";
import type { TurnContext } from "./traits.js";

/**
 * What an adapter gives a turn: the options, the run's context, where stream events go, a tool node's plans (and
 * whether this turn's plan is kept in them: only where another opening of the same response reads it).
 */
export interface TurnEnv {
  options: ResolvedToolGuardOptions;
  context: TurnContext;
  host: WriterHost;
  plans?: PlannedTurns | undefined;
  keepPlan?: boolean | undefined;
}

/** The escalation hook's plans by AI message, reused by the tool node for the same state and calls only. */
export class PlannedTurns {
  readonly #plans = new WeakMap<object, { from: ToolGuardState; ids: (string | undefined)[]; plan: Plan }>();

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
 * What createAgent keeps of a turn between `afterModel` (which plans it) and `wrapToolCall` (which runs one call),
 * plain data in a state channel (or in memory, see {@link SplitTurns}).
 */
export interface TurnRecord {
  decisions: ToolCallDecision[];
  ids: (string | null)[];
  /** The id of the AI message whose calls these are (a record of an earlier response is not resumed). */
  message?: string | undefined;
  /** A run the guards end with the model's own words (the next model call): why, and the final message's id. */
  wrapUp?: WrapUpRecord | undefined;
}

interface WrapUpRecord {
  reason: EndReason;
  id: string;
}

/** A class instance because LangGraph's `Send` deep-copies plain objects, not instances. */
class ChannelRecord implements TurnRecord {
  constructor(
    public decisions: ToolCallDecision[],
    public ids: (string | null)[],
    public message?: string,
    public wrapUp?: WrapUpRecord,
  ) {}
}

/** A record of no turn (the channel's default), or of a wrap-up to make. */
export function emptyTurnRecord(wrapUp?: WrapUpRecord): TurnRecord {
  return new ChannelRecord([], [], undefined, wrapUp);
}

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
  indices: number[] | undefined; // undefined: the calls are the planned ones, in order
}

const NO_CALLS: Plan = { decisions: [], turnEvents: [] };

interface Ground {
  state: ToolGuardState;
  messages: readonly BaseMessage[];
  env: TurnEnv;
}

type Announce = "announce" | "silent";

/** One model response under the guards: open it; unless {@link stop} is set, answer each call; then `update()`. */
export class GuardedTurn {
  readonly #outcomes: (CallOutcome | undefined)[] = [];
  readonly log: GuardStreamEvent[] = [];
  #unannounced: boolean;

  readonly message: AIMessage | undefined;
  readonly calls: readonly ToolCall[];
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

  /** Writes the decisions' stream events once the turn goes on (a hook that only judges the stop writes none). */
  #announce(): void {
    if (!this.#unannounced) return;
    this.#unannounced = false;
    this.log.push(
      ...emitGuardEvents(this.env.host, turnStreamEvents(this.decisions), this.env.options.feedback.events),
    );
  }

  /** Opens the turn of the last AI message's unanswered calls (a v2 task's `single` planned with its siblings). */
  static open(
    state: ToolGuardState,
    messages: readonly BaseMessage[],
    env: TurnEnv,
    single?: ToolCall | undefined,
  ): GuardedTurn {
    state = readToolGuard(state);
    env = withCacheLookup(env, state, messages);
    const pending = pendingCalls(messages, single);
    const ground = { state, messages, env };
    const { message, planned } = pending;
    if (planned.length === 0) return new GuardedTurn(ground, pending, NO_CALLS, "silent");
    const kept = message === undefined ? undefined : env.plans?.find(message, state, planned);
    if (kept !== undefined) return new GuardedTurn(ground, pending, kept, "announce");
    const made = planTurn(state, turnInput(message, planned, messages), env.options, env.context);
    if (message !== undefined && env.keepPlan) env.plans?.keep(message, state, planned, made);
    return new GuardedTurn(ground, pending, made, "announce");
  }

  /** Resumes a split turn; a call edited since planned (humanInTheLoopMiddleware) is decided again. */
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
    // `Send` hands the tool a copy of the call: equal arguments need no key.
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
    const id = decision.call.id ?? call.id;
    const turn = { id: `edited:${id}`, text: "", calls: [{ name: call.name, args: call.args, id }] };
    const decisions = planned.slice();
    const { options, context } = withCacheLookup(env, state, messages);
    decisions[index] = planTurn(state, turn, options, context).decisions[0] as ToolCallDecision;
    return new GuardedTurn({ state, messages, env }, resumed, { decisions, turnEvents: [] }, "announce");
  }

  /** Splits the turn across createAgent's hooks: calls without an id are answered now (no later hook finds them). */
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

  get stop(): TurnStop | undefined {
    return this.plan.stop;
  }

  /** The plan of the whole response (in a v2 task, with the siblings' decisions). */
  get responsePlan(): Readonly<Plan> {
    return this.plan;
  }

  /** The decision for each of {@link GuardedTurn.calls}. */
  get decisions(): ToolCallDecision[] {
    const { indices, plan } = this;
    return indices === undefined ? plan.decisions : indices.map((i) => plan.decisions[i] as ToolCallDecision);
  }

  decision(i: number): ToolCallDecision {
    return this.plan.decisions[this.#at(i)] as ToolCallDecision;
  }

  #at(i: number): number {
    return this.indices?.[i] ?? i;
  }

  /** Answers call `i`: a stand-in for a blocked or served call, else `run` fingerprinted, watched and settled. */
  answer(i: number, run: () => Promise<ToolMessage | Command>): Promise<ToolMessage | Command> {
    const instead = this.#standIn(i);
    if (instead !== undefined) return Promise.resolve(instead);
    const reads = this.#fingerprint(i);
    return watchSubAgents(this.calls[i]?.id, run).then((output) => this.#settle(i, output, reads));
  }

  /** The ToolMessage that answers call `i` in the tool's place (a block's error, a served result), if any. */
  #standIn(i: number): ToolMessage | undefined {
    this.#announce();
    const decision = this.decision(i);
    if (decision.allowed) return undefined;
    const call = this.calls[i] as ToolCall;
    if (decision.served !== undefined) return servedAnswer(call, decision, this.messages);
    return guardAnswer(call, decision.content ?? decision.message ?? "", blockArtifact(decision));
  }

  /** A shell read of known files about to run: its files' fingerprint now, for `DecideContext.readsChanged`. */
  #fingerprint(i: number): string | undefined {
    if (this.env.context.disabled) return undefined;
    try {
      const { call, effect } = this.decision(i);
      return fingerprintBeforeRun(call.name, effect);
    } catch {
      return undefined; // no fingerprint: the read's repeats are judged by the rules alone
    }
  }

  /** Records what call `i` returned and gives the answer to send (the output, or result dedupe's note). */
  #settle(i: number, output: ToolMessage | Command, reads: string | undefined): ToolMessage | Command {
    const decision = this.decision(i);
    const call = this.calls[i] as ToolCall;
    const { options, host } = this.env;
    // The guards' id of the call (distinct within the response) for the state and events; the model's for its answer.
    const own = { key: decision.key, tool: call.name, id: decision.call.id };
    const { answer, outcome, event } = dedupe(this.state, own, output, call.id, this.messages, options);
    this.#outcomes[this.#at(i)] = reads === undefined ? outcome : { ...outcome, reads };
    if (event !== undefined) this.log.push(...emitGuardEvents(host, [event], options.feedback.events));
    return withNote(answer, answerReminder(decision, outcome));
  }

  /** The guard channels' update: the turn's `toolGuard` events, and `guardLog` when anything was streamed. */
  update(): { toolGuard: GuardEvent[]; guardLog?: GuardStreamEvent[] } {
    this.#announce();
    const toolGuard = commitTurn(this.plan, this.#outcomes, this.env.options, this.indices);
    return this.log.length > 0 ? { toolGuard, guardLog: this.log } : { toolGuard };
  }

  /** Level 3 or 4 reached: the run ends, or a person is asked (see stop.ts). `before`: a forgiveness. */
  halt(stop: TurnStop, ask: boolean, before: readonly GuardEvent[] = []): StopResult {
    const events = [...before, ...stop.events];
    const emit = { host: this.env.host, on: this.env.options.feedback.events };
    const response = { calls: this.calls, decisions: this.decisions };
    return stopResponse({ response, stop, guard: this.state, events, emit }, ask);
  }
}

/**
 * Turns with nothing to write after the model, kept by AI message: any `afterModel` update makes createAgent write
 * back every channel the hook reads, `messages` included.
 */
export class SplitTurns {
  readonly #kept = new WeakMap<object, TurnRecord>();

  /** Keeps the record of a turn `afterModel` writes nothing for; `false` for a turn of no AI message. */
  keep(turn: GuardedTurn, record: TurnRecord): boolean {
    if (turn.message === undefined) return false;
    this.#kept.set(turn.message, record);
    return true;
  }

  /** The turn `afterModel` planned; planned again after a checkpoint resume or a replaced response. */
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

/** The environment with the result cache's question (is the earlier answer still in `messages`?), when needed. */
function withCacheLookup(env: TurnEnv, state: ToolGuardState, messages: readonly BaseMessage[]): TurnEnv {
  if (state.cache === undefined || state.cache.length === 0) return env;
  const answerPresent = (callId: string, digest: string) => heldAnswer(messages, callId, digest) !== undefined;
  return { ...env, context: { ...env.context, answerPresent } };
}

/** The response after a model call: a person who wrote after a run ended forgives the strikes first, then it opens. */
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

/** `false` when too deep to compare. */
function sameData(a: unknown, b: unknown): boolean {
  try {
    return isDeepStrictEqual(a, b);
  } catch {
    return false;
  }
}

function pendingCalls(messages: readonly BaseMessage[], single: ToolCall | undefined): Pending {
  const index = lastAIMessageIndex(messages);
  const message = index < 0 ? undefined : (messages[index] as AIMessage);
  if (single !== undefined) {
    // createReactAgent v2 sends each call to its own task: planned with its siblings, as one node would plan them.
    const siblings = message?.tool_calls ?? [];
    const at = taskPosition(message, siblings, single);
    return { message, calls: [single], planned: at >= 0 ? siblings : [single], indices: [Math.max(0, at)] };
  }
  const calls = message === undefined ? [] : unansweredCalls(message, messages);
  return { message, calls, planned: calls, indices: undefined };
}

/** Where a v2 task's call (a copy) is among the message's calls (see `callPosition`); -1: not there. */
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
