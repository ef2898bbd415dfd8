/** The loop guard's turn, shared by the graph node and hook and the createAgent middleware. */
import { AIMessage, type BaseMessage, isAIMessage, ToolMessage } from "@langchain/core/messages";
import { type GuardStreamEvent, stopStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import { canonicalJson } from "../common/identity/signature.js";
import { isPersonMessage, lastAIMessageIndex, messageText, notRunAnswers, runMarker } from "../common/messages.js";
import { agentOf, ownValue } from "../common/owner.js";
import type { StopReason } from "../common/vocabulary.js";
import { currentStep } from "../run-end/steps.js";
import { reportRunEnd } from "../run-end/sub-agents.js";
import { isGuardFinal } from "../run-end/wrap-up.js";
import { handoffsWithoutProgress, type RunStep } from "./core/handoffs.js";
import type { TaskSpending } from "./core/loop.js";
import {
  answersSeen,
  emptyLoopState,
  iterationLimitBefore,
  type LoopState,
  type LoopTurn,
  stepLoopGuard,
  turnOutput,
} from "./core/loop.js";
import { loopStates, readLoopState } from "./core/state-check.js";
import { readTaskBudget, spendTask, type TaskBudget } from "./core/task-budget.js";
import { STOP_REASON_TEXTS } from "./core/texts.js";
import type { LoopGuardSettings } from "./options.js";

type ToolCallLike = { id?: string; name: string; args: unknown };
type AIWithCalls = AIMessage & { tool_calls?: ToolCallLike[] };

/**
 * The default output of a turn: the AI message's text, and its tool calls as an identity apart, each as
 * `name(canonical JSON args)` (ids left out: they differ every time). The loop detector compares the texts only of
 * turns that make the same calls after the same answers: a turn that calls or sees something new is never a loop.
 *
 * @example
 * ```ts
 * defaultTurnOutput(new AIMessage({ content: "Reading", tool_calls: [{ name: "read_file", args: { path: "a" }, id: "1" }] }));
 * // 'Reading\u001fread_file({"path":"a"})'
 * ```
 */
export function defaultTurnOutput(message: AIMessage): string {
  const calls = ((message as AIWithCalls).tool_calls ?? []).map((c) => `${c.name}(${canonicalJson(c.args)})`);
  return turnOutput(messageText(message), calls);
}

/** A result a guard or a cache gave in the tool's place: blocked, served from the result cache, or a file-cache hit. */
function isFree(result: ToolMessage): boolean {
  const artifact = result.artifact as { guard?: { blocked?: boolean; served?: boolean }; cached?: boolean } | undefined;
  return artifact?.guard?.blocked === true || artifact?.guard?.served === true || artifact?.cached === true;
}

/** How the turn before index `current` went, or undefined when it made no tool calls or a person spoke since. */
function previousTurn(messages: BaseMessage[], current: number, settings: LoopGuardSettings): LoopTurn["previous"] {
  for (let i = current - 1; i >= 0; i -= 1) {
    const m = messages[i] as BaseMessage;
    if (isPersonMessage(m)) return undefined; // the previous turn belongs to another session
    if (!isAIMessage(m)) continue;
    const calls = (m as AIWithCalls).tool_calls ?? [];
    if (calls.length === 0) return undefined;
    const ids = new Set(calls.map((c) => c.id));
    const results = messages
      .slice(i + 1, current)
      .filter((r): r is ToolMessage => ToolMessage.isInstance(r) && ids.has(r.tool_call_id));
    return {
      free: results.length > 0 && results.every(isFree),
      seen: answersSeen(results.map((r) => ({ ok: r.status !== "error", text: messageText(r), free: isFree(r) }))),
      // A turn whose calls the guards all answered (blocked, or served from a cache) is no tool failure: the
      // escalation counts those repeats, and counting them here too would end the run by a second rule.
      failed: (
        settings.isFailure ?? ((rs) => rs.length > 0 && rs.every((r) => r.status === "error") && !rs.every(isFree))
      )(results),
    };
  }
  return undefined;
}

/** The session marker of the messages: a new person's message starts a new session; none continues the current one. */
function sessionOf(messages: BaseMessage[], settings: LoopGuardSettings): string | undefined {
  return settings.runBoundary === "none" ? "thread" : runMarker(messages);
}

function readTurn(
  messages: BaseMessage[],
  settings: LoopGuardSettings,
): { turn: Omit<LoopTurn, "session"> & { session: string | undefined }; message: AIWithCalls } | undefined {
  const current = lastAIMessageIndex(messages);
  if (current < 0) return undefined;
  const message = messages[current] as AIWithCalls;
  // An empty output is never a loop and is not remembered: the safety limits alone compare nothing.
  const output = settings.checksLoops ? (settings.outputOf ?? defaultTurnOutput)(message) : "";
  return {
    message,
    turn: {
      output,
      continues: (message.tool_calls ?? []).length > 0,
      usage: message.usage_metadata,
      previous: previousTurn(messages, current, settings),
      session: sessionOf(messages, settings),
    },
  };
}

/** Before a model call: the iteration limit reached, or null (a limit asks here, so a resume calls the model once). */
export function iterationLimitBeforeCall(
  messages: BaseMessage[],
  settings: LoopGuardSettings,
  loopGuard: LoopState | undefined,
): StopReason | null {
  if (loopGuard === undefined) return null;
  const previous = previousTurn(messages, messages.length, settings);
  const session = sessionOf(messages, settings) ?? loopGuard.session ?? "none";
  return iterationLimitBefore(loopGuard, { previous, session }, settings.safety);
}

/** A stop when the last AI message only hands off and, with it, the hand-offs without progress reach the limit. */
function handoffStop(messages: BaseMessage[], settings: LoopGuardSettings): StopReason | null {
  const check = settings.handoffs;
  if (check === null) return null;
  const current = lastAIMessageIndex(messages);
  const calls = (messages[current] as AIWithCalls | undefined)?.tool_calls ?? [];
  if (calls.length === 0 || (check.isHandoff === undefined && !calls.every((c) => HANDOFF_NAME.test(c.name)))) {
    return null;
  }
  const isHandoff = check.isHandoff ?? handoffTools(messages);
  if (!calls.every((c) => isHandoff(c.name))) return null;
  const steps = runSteps(messages, runStart(messages, settings), current, isHandoff);
  const count = handoffsWithoutProgress(steps, (a, b) => a === b);
  if (count < check.limit) return null;
  return {
    kind: "handoffs",
    value: count,
    limit: check.limit,
    message: STOP_REASON_TEXTS.handoffs(count, check.limit),
  };
}

/** The names langgraph-supervisor and langgraph-swarm give their hand-off tools. */
const HANDOFF_NAME = /^transfer_(back_)?to_/;
/** How both libraries answer a hand-off, naming the agent that takes over. */
const HANDED_OFF = /^Successfully transferred (back )?to (.+)$/;

/** The `transfer_(back_)to_<agent>` tools answered as a hand-off (a bank's `transfer_to_account` is work). */
function handoffTools(messages: readonly BaseMessage[]): (name: string) => boolean {
  const names = new Set<string>();
  for (const m of messages) {
    const said = ToolMessage.isInstance(m) && typeof m.content === "string" ? HANDED_OFF.exec(m.content) : null;
    if (said === null) continue;
    const agent = (said[2] as string).trim().replace(/\s+/g, "_").toLowerCase();
    names.add(`transfer_${said[1] === undefined ? "" : "back_"}to_${agent}`);
  }
  return (name) => names.has(name);
}

/**
 * Each task's spending, by the top-level invocation that runs it (LangGraph's run control object: one per `invoke`,
 * shared by every graph inside it), then by its budget; each turn charged once, by AI message (two guards may see it).
 */
const tasks = new WeakMap<object, WeakMap<object, { spent: TaskSpending; charged: Map<unknown, StopReason | null> }>>();
/** Each budget object, checked once. */
const budgets = new WeakMap<object, TaskBudget>();

/** Charges the turn to `configurable.taskBudget` (`given`), if any; a resume goes on from the spending `kept`. */
function chargeTask(
  message: AIWithCalls,
  turn: Pick<LoopTurn, "continues" | "usage">,
  given: unknown,
  settings: LoopGuardSettings,
  kept: TaskSpending | undefined,
): { stop: StopReason | null; spent: TaskSpending } | undefined {
  if (given === undefined || given === null || typeof given !== "object") return undefined;
  let budget = budgets.get(given);
  if (budget === undefined) {
    budget = readTaskBudget(given);
    budgets.set(given, budget);
  }
  const at = currentStep();
  const run = at?.run ?? given; // outside a graph: the budget object is the task
  const byBudget = tasks.get(run) ?? new WeakMap();
  tasks.set(run, byBudget);
  let task = byBudget.get(given);
  if (task === undefined) {
    // A person's answer resumes the task where the checkpoint left it; any other invocation is a new task.
    const spent = (at?.resumed === true ? kept : undefined) ?? { iterations: 0, tokens: 0, cost: 0, startedAt: null };
    task = { spent, charged: new Map() };
    byBudget.set(given, task);
  }
  const key = message.id ?? message;
  const charged = task.charged.get(key);
  if (charged !== undefined) return { stop: charged, spent: task.spent };
  const step = spendTask(task.spent, turn, budget, settings.safety.price, (settings.safety.clock ?? Date.now)());
  task.spent = step.spent;
  task.charged.set(key, step.stop);
  return step;
}

/** Where the run starts: after its person's message (the whole thread when runs are off or no one wrote). */
function runStart(messages: readonly BaseMessage[], settings: LoopGuardSettings): number {
  if (settings.runBoundary === "none") return 0;
  for (let i = messages.length - 1; i >= 0; i -= 1) if (isPersonMessage(messages[i] as BaseMessage)) return i + 1;
  return 0;
}

/** The run's steps from `from` to the AI message at `to` (its calls not answered yet): what was said and done. */
function runSteps(
  messages: readonly BaseMessage[],
  from: number,
  to: number,
  isHandoff: (name: string) => boolean,
): RunStep[] {
  const failed = new Set<string>();
  for (let i = from; i <= to; i += 1) {
    const m = messages[i] as BaseMessage;
    if (ToolMessage.isInstance(m) && m.status === "error") failed.add(m.tool_call_id);
  }
  const steps: RunStep[] = [];
  for (let i = from; i <= to; i += 1) {
    const m = messages[i] as BaseMessage;
    if (!isAIMessage(m)) continue;
    // Words are what the agent said, whitespace and case aside: the words that go with a hand-off are the task it
    // hands on (a supervisor's next task is new, its worker's "Done." need not be), as are a hand-off's arguments.
    const calls = (m as AIWithCalls).tool_calls ?? [];
    const text = messageText(m).trim().replace(/\s+/g, " ").toLowerCase();
    // An agent the guards stopped made no progress, whatever its last words say.
    if (text !== "" && !isGuardFinal(m)) steps.push({ kind: "words", text });
    for (const call of calls) {
      const task = isHandoff(call.name) ? canonicalJson(call.args) : "";
      if (task !== "" && task !== "{}") steps.push({ kind: "words", text: `${call.name}(${task})` });
      if (isHandoff(call.name)) steps.push({ kind: "handoff" });
      else if (i < to && call.id != null && !failed.has(call.id)) steps.push({ kind: "work" });
    }
  }
  return steps;
}

/** The state the loop guard reads and writes (in public signatures, not exported). */
export interface LoopGraphState {
  /** The conversation. */
  messages: BaseMessage[];
  /** The loop guard's state (absent before the first turn). */
  loopGuard?: LoopState;
}

/** One turn's result: the new state; on a stop, why, the messages that end the run and its event for `guardLog`. */
interface LoopTurnResult {
  state: LoopState;
  stop: StopReason | null;
  messages: BaseMessage[] | undefined;
  log: GuardStreamEvent[];
  continues: boolean;
}

/** The loop guard's turn over validated settings (`undefined` when there is no model response to judge). */
export function loopGuardTurn(
  settings: LoopGuardSettings,
): (state: LoopGraphState, host: WriterHost) => LoopTurnResult | undefined {
  return (state, host) => {
    const messages = state.messages ?? [];
    const read = readTurn(messages, settings);
    if (read === undefined) return undefined;
    const configurable = (host as { configurable?: Record<string, unknown> } | undefined)?.configurable;
    const agent = agentOf(configurable);
    const stored = readLoopState(state.loopGuard);
    // Another agent's state (a sub-agent handed its parent's): this agent's counts start afresh.
    const loopGuard = ownValue(stored, agent) ?? emptyLoopState();
    const turn = { ...read.turn, session: read.turn.session ?? loopGuard.session ?? "none" };
    const step = stepLoopGuard(loopGuard, turn, settings.safety);
    // Then the task's budget (every turn counted, whatever stopped it), and the run's hand-offs.
    const task = chargeTask(read.message, read.turn, configurable?.taskBudget, settings, loopGuard.task);
    const stop = step.stop ?? task?.stop ?? handoffStop(messages, settings);
    let next = task === undefined ? step.state : { ...step.state, task: task.spent };
    if (stop !== step.stop) next = { ...next, stopped: stop };
    if (agent !== undefined && next.agent !== agent) {
      const claims = stored.agent !== undefined && stored.agent !== agent ? { claims: stored.agent } : {};
      next = { ...next, agent, ...claims };
    }
    loopStates.trust(next); // the guard's own state: its next read is a lookup
    const log = emitGuardEvents(host, stop === null ? [] : [stopStreamEvent(stop)], settings.events);
    const result = { state: next, stop, messages: undefined, log, continues: read.turn.continues };
    if (stop === null) return result;
    // "Not run" for each call nothing answered yet (another middleware may have), then why the run stopped.
    const skipped = notRunAnswers(read.message as AIMessage, stop, messages);
    reportRunEnd({ ...stop }); // the canned message says why, in words
    return {
      ...result,
      messages: [...skipped, new AIMessage({ content: stop.message, response_metadata: { guard: stop } })],
    };
  };
}
