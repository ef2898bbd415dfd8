import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import type { CallEffect } from "../core/classify.js";
import type { ToolCallDecision } from "../core/decide.js";
import { identifyCall } from "../core/detect.js";
import { type ResolvedToolGuardOptions, resolveToolGuardOptions, type ToolGuardOptions } from "../core/options.js";
import { emptyToolGuardState, type GuardEvent, reduceToolGuard, type ToolGuardState } from "../core/state.js";
import { type GuardLog, type GuardStreamEvent, turnStreamEvents } from "../core/stream-events.js";
import { type CallOutcome, planTurn, resultEvents, type TurnPlan } from "../core/turn.js";
import {
  blockArtifact,
  dedupe,
  type GuardArtifact,
  guardAnswer,
  passesThrough,
  toolErrorAnswer,
} from "../graph/answers.js";
import { lastAIMessageIndex, turnInput, unansweredCalls } from "../graph/messages.js";
import { forgiveness, stopResponse } from "../graph/stop.js";
import { emitGuardEvents } from "../graph/stream.js";
import { letCachesServeRepeats, readOnlyHintOf } from "../graph/tool-node.js";
import type { ToolGuardUpdate } from "../state/index.js";
import { defineMiddleware } from "./define.js";
import { guardLogField, reducedField } from "./state.js";

/**
 * Options of {@link guardMiddleware}: the tool node's guard options, plus whether level 3 asks a person.
 *
 * @example
 * ```ts
 * guardMiddleware({ repetitionThreshold: 4, escalation: { levelStrikes: [1, 2, 3, 4] } } satisfies GuardMiddlewareOptions);
 * ```
 */
export interface GuardMiddlewareOptions extends ToolGuardOptions {
  /**
   * Ask a person at escalation level 3 with `interrupt()` (default true). Without a checkpointer, or with `false`,
   * level 3 ends the run as level 4 does.
   */
  interrupt?: boolean;
  /**
   * The agent's tools, named in the level-2 options ("use another tool: …"). Default: the tools the agent binds to
   * its model, as seen by this middleware's `wrapModelCall` (with their `readOnlyHint`, and the file tools' cache).
   */
  toolNames?: string[];
}

/** What `afterModel` leaves for `wrapToolCall`: for each allowed call, the events that record it. */
type Pending = Record<
  string,
  {
    events: GuardEvent[];
    tool: string;
    seq: number;
    key: string;
    effect: CallEffect;
    progress: boolean;
    /** A blocked call: its answer, given in `wrapToolCall` in place of running the tool. */
    blocked?: { content: string; artifact: GuardArtifact } | undefined;
  }
>;

const stateSchema = z.object({
  /** The tool-call guards' state, per thread. */
  toolGuard: reducedField<ToolGuardState, ToolGuardUpdate>(emptyToolGuardState, reduceToolGuard),
  /** Guard events, counted and the most recent kept (shared with the other middleware). */
  guardLog: guardLogField,
  // Private to the middleware (a leading underscore keeps it out of the agent's input and output types).
  /** Private to the middleware: what `afterModel` decided, for `wrapToolCall`. */
  _guardPending: reducedField<Pending, Pending>(
    () => ({}),
    (_current, update) => update,
  ),
});

/**
 * createAgent types a hook's update as the channels' values, but the `toolGuard` and `guardLog` reducers take events
 * (as they do in every graph); this is the one place that says so.
 */
function update<U extends { toolGuard: GuardEvent[]; guardLog: GuardStreamEvent[] }>(
  u: U,
): Omit<U, "toolGuard" | "guardLog"> & { toolGuard: ToolGuardState; guardLog: GuardLog } {
  return u as unknown as Omit<U, "toolGuard" | "guardLog"> & { toolGuard: ToolGuardState; guardLog: GuardLog };
}

interface Turn {
  message: AIMessage;
  calls: ToolCall[];
}

/** The last AI message and its calls that no ToolMessage answers yet. */
function pendingTurn(messages: BaseMessage[]): Turn | undefined {
  const index = lastAIMessageIndex(messages);
  if (index < 0) return undefined;
  const message = messages[index] as AIMessage;
  const calls = unansweredCalls(message, messages);
  return calls.length > 0 ? { message, calls } : undefined;
}

/** The blocked calls answered now; the allowed ones left for `wrapToolCall` with the events that record them. */
function proceeding(turn: Turn, plan: TurnPlan, events: GuardEvent[], log: GuardStreamEvent[]) {
  const anyBlocked = plan.decisions.some((d) => !d.allowed);
  const pending: Pending = {};
  const messages: ToolMessage[] = [];
  const written = [...events, ...plan.turnEvents];
  for (const [i, decision] of plan.decisions.entries()) {
    const call = turn.calls[i] as ToolCall;
    const content = decision.content ?? decision.message ?? "";
    if (call.id == null) {
      // Without an id no later hook can find the call: decide it here.
      if (!decision.allowed) messages.push(guardAnswer(call, content, blockArtifact(decision)));
      written.push(...decision.events);
      continue;
    }
    // Blocked calls are answered in wrapToolCall too, not here: a middleware whose afterModel runs after this one
    // (toolCallLimitMiddleware) answers calls without looking for earlier answers, and the tool node skips calls
    // that are answered already.
    pending[call.id] = pendingOf(call, decision, !anyBlocked);
  }
  return update({ messages, toolGuard: written, guardLog: log, _guardPending: pending });
}

/** What `wrapToolCall` needs of a planned call's decision. */
function pendingOf(call: ToolCall, decision: ToolCallDecision, progress: boolean): Pending[string] {
  const { seq = 0, key, effect } = decision; // a blocked call has no seq, and records no result
  const content = decision.content ?? decision.message ?? "";
  const blocked = decision.allowed ? undefined : { content, artifact: blockArtifact(decision) };
  return { events: decision.events, tool: call.name, seq, key, effect, progress, blocked };
}

/** The events that record an allowed call that ran: its own, its outcome, and progress. */
function recordedEvents(
  pending: Pending[string],
  outcome: CallOutcome,
  options: ResolvedToolGuardOptions,
  callId: string | undefined,
): GuardEvent[] {
  const { seq, key, tool, effect } = pending;
  const call = { seq, key, tool, effect, callId, deduped: outcome.deduped };
  const events = [...pending.events, ...resultEvents(call, outcome, options)];
  return outcome.ok && pending.progress ? [...events, { type: "progress" }] : events;
}

/**
 * What the middleware knows of the agent's tools: createAgent gives a middleware its tools only in `wrapModelCall`
 * (the model's request), so they are learned there, before the first `afterModel`. Tool names, read-only hints and
 * "serves repeats from a cache" are the agent's configuration, not thread state: they accumulate in the middleware.
 */
function agentTools(resolved: ResolvedToolGuardOptions, given: string[] | undefined) {
  const names = new Set(given);
  const readOnlyHints: Record<string, boolean> = Object.create(null);
  let seen: readonly unknown[] | undefined;
  return {
    readOnlyHints,
    names: () => (names.size > 0 ? [...names] : undefined),
    learn(tools: readonly unknown[]) {
      if (tools === seen) return;
      seen = tools;
      for (const tool of tools) {
        const name = (tool as { name?: unknown }).name;
        if (typeof name !== "string") continue;
        if (given === undefined) names.add(name);
        const hint = readOnlyHintOf(tool);
        if (hint !== undefined) readOnlyHints[name] = hint;
      }
      letCachesServeRepeats(tools, resolved);
    },
  };
}

/**
 * The tool-call guards as createAgent middleware, deciding exactly as {@link GuardedToolNode} with
 * {@link escalationHook} does: the consecutive, threshold and redundant rules block calls with feedback, strikes
 * escalate, at level 3 a person is asked with `interrupt()` (with a checkpointer) and at level 4 the run ends with a
 * message that says why. Guard state lives in the middleware's `toolGuard` channel, so the checkpointer keeps it per
 * thread. Options are validated here.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { MemorySaver } from "@langchain/langgraph";
 * import { guardMiddleware } from "langgraph-guards/middleware";
 *
 * const agent = createAgent({ model, tools, middleware: [guardMiddleware()], checkpointer: new MemorySaver() });
 * ```
 */
export function guardMiddleware(options: GuardMiddlewareOptions = {}) {
  const { interrupt: ask = true, toolNames, ...guardOptions } = options;
  const resolved = resolveToolGuardOptions(guardOptions);
  const tools = agentTools(resolved, toolNames);
  const context = (runtime: unknown) => ({
    disabled: (runtime as { configurable?: Record<string, unknown> } | undefined)?.configurable?.guards === false,
    toolNames: tools.names(),
    readOnlyHints: tools.readOnlyHints,
  });
  /** Whether the call is still the one planned (same tool, same identity). */
  const plannedAs = (pending: Pending[string], call: ToolCall) =>
    pending.tool === call.name && pending.key === identifyCall(call, resolved, context(undefined)).key;
  const recorded = (pending: Pending[string], outcome: CallOutcome, callId: string | undefined) =>
    recordedEvents(pending, outcome, resolved, callId);
  return defineMiddleware({
    name: "GuardMiddleware",
    stateSchema,
    afterModel: {
      canJumpTo: ["end", "model"],
      hook: (state, runtime) => {
        const messages = state.messages as BaseMessage[];
        const forgive = forgiveness(state.toolGuard, messages);
        const turn = pendingTurn(messages);
        if (turn === undefined) return forgive.length > 0 ? update({ toolGuard: forgive, guardLog: [] }) : undefined;
        const guard = reduceToolGuard(state.toolGuard, forgive);
        const plan = planTurn(guard, turnInput(turn.message, turn.calls, messages), resolved, context(runtime));
        const emit = { host: runtime, on: resolved.events };
        if (plan.stop === undefined) {
          return proceeding(turn, plan, forgive, emitGuardEvents(runtime, turnStreamEvents(plan.decisions), emit.on));
        }
        const events = [...forgive, ...plan.stop.events];
        const response = { calls: turn.calls, decisions: plan.decisions };
        const outcome = stopResponse(response, plan.stop, guard, events, ask, emit);
        // Ended: nothing may run; answered (level 3): the model reads the person's answer next.
        return update({
          messages: outcome.messages ?? [],
          toolGuard: outcome.events,
          guardLog: outcome.log,
          _guardPending: {} as Pending,
          jumpTo: outcome.kind === "ended" ? ("end" as const) : ("model" as const),
        });
      },
    },
    wrapModelCall: (request, handler) => {
      tools.learn(request.tools);
      return handler(request);
    },
    wrapToolCall: async (request, handler) => {
      const id = request.toolCall.id;
      let pending = id == null ? undefined : (request.state._guardPending as Pending | undefined)?.[id];
      const call = request.toolCall as ToolCall;
      if (pending !== undefined && !plannedAs(pending, call)) {
        // A middleware whose afterModel ran after the plan changed the call (humanInTheLoopMiddleware's "edit"):
        // decide the call that will really run, from the state before this response's calls.
        const state = reduceToolGuard(request.state.toolGuard as ToolGuardState, []);
        const turn = { id: `edited:${id}`, text: "", calls: [{ name: call.name, args: call.args, id: call.id }] };
        const plan = planTurn(state, turn, resolved, context(request.runtime));
        emitGuardEvents(request.runtime, turnStreamEvents(plan.decisions), resolved.events);
        pending = pendingOf(call, plan.decisions[0] as ToolCallDecision, pending.progress);
      }
      if (pending?.blocked !== undefined) {
        const answer = guardAnswer(request.toolCall, pending.blocked.content, pending.blocked.artifact);
        return new Command({ update: { messages: [answer], toolGuard: pending.events } });
      }
      let output: ToolMessage | Command;
      try {
        output = await handler(request);
      } catch (error) {
        // With a wrapToolCall present, createAgent no longer turns a throwing tool into an error ToolMessage. A tool
        // may throw anything (undefined, a string, an object whose getters throw): the answer never fails.
        if (passesThrough(error)) throw error;
        output = toolErrorAnswer(request.toolCall, error);
      }
      if (pending === undefined) return output;
      const state = request.state as { toolGuard?: ToolGuardState; messages?: BaseMessage[] };
      const { answer, outcome, event } = dedupe(state.toolGuard, pending, output, id, state.messages ?? [], resolved);
      const toolGuard = recorded(pending, outcome, id);
      const log = event === undefined ? [] : emitGuardEvents(request.runtime, [event], resolved.events);
      if (ToolMessage.isInstance(answer)) {
        return new Command({ update: { messages: [answer], toolGuard, ...(log.length > 0 ? { guardLog: log } : {}) } });
      }
      const update = answer.update;
      if (update === undefined || (typeof update === "object" && !Array.isArray(update))) {
        return new Command({ ...answer, update: { ...(update ?? {}), toolGuard } });
      }
      return answer;
    },
  });
}
