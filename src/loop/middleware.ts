/** The loop detector and the safety limits as createAgent middleware (the same turn as `loopDetectHook`'s). */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { StateSchema } from "@langchain/langgraph";
import { defineMiddleware } from "../common/agent/define.js";
import { agentFieldOf } from "../common/channel.js";
import { guardLogChannel, stopStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import { agentOf, ownValue } from "../common/owner.js";
import type { StopReason } from "../common/vocabulary.js";
import type { StepBudget } from "../run-end/invocations.js";
import { endModelCall, guardedModelCall, modelCallBudget, type ResponseStands } from "../run-end/model-call.js";
import { withStepBudget } from "../run-end/stack.js";
import {
  isGuardFinal,
  type ModelCallHandler,
  type ModelCallRequest,
  type ModelCallResult,
} from "../run-end/wrap-up.js";
import type { LoopState } from "./core/loop.js";
import { loopGuardChannel, readLoopState } from "./core/state-check.js";
import { askToGoOn, offer, raiseLimit } from "./limit-ask.js";
import {
  type LoopDetectOptions,
  type LoopGuardSettings,
  resolveLoopDetectOptions,
  resolveSafetyLimitsOptions,
  type SafetyLimitsOptions,
} from "./options.js";
import { iterationLimitBeforeCall, loopGuardTurn } from "./turn.js";

export type { SafetyLimitsOptions } from "./options.js";

/** `wrapModelCall` on channel `key`: a limit that asks does so before the call; then a stop replaces the response. */
function stepCall<K extends "loopGuard" | "safetyLimits">(key: K, settings: LoopGuardSettings, budget: StepBudget) {
  const turn = loopGuardTurn(settings);
  const wrapUp = settings.wrapUp ?? "model";
  const ending = { wrapUp, events: settings.events };
  const iterationAsk = (messages: BaseMessage[], loopGuard: LoopState | undefined): StopReason | null => {
    if (settings.ask === undefined) return null;
    const limit = iterationLimitBeforeCall(messages, settings, loopGuard);
    return limit !== null && offer(limit, settings.ask) !== undefined ? limit : null;
  };
  const stopLog = (request: ModelCallRequest, stop: StopReason) => ({
    guardLog: emitGuardEvents(request.runtime as WriterHost, [stopStreamEvent(stop)], settings.events),
  });
  return (request: ModelCallRequest, handler: ModelCallHandler): Promise<ModelCallResult> =>
    guardedModelCall(request, handler, budget, ending, async () => {
      const state = request.state as { messages?: BaseMessage[] } & { [P in K]?: LoopState };
      const stored = state[key] === undefined ? undefined : readLoopState(state[key], key);
      let loopGuard = ownValue(
        stored,
        agentOf((request.runtime as { configurable?: Record<string, unknown> }).configurable),
      );
      // A limit reached at the last response, or the iteration limit reached with the turns taken, asks now, before
      // the model is called (a resume runs this again: the model is called once, after the answer).
      const reachedBefore = loopGuard?.asking ?? null;
      const asking = reachedBefore ?? iterationAsk(state.messages ?? [], loopGuard);
      if (asking !== null && loopGuard !== undefined) {
        const granted = askToGoOn(asking, offer(asking, settings.ask) ?? asking.limit);
        if (granted === undefined) {
          // The limit's stop event was written when it was reached at a response; one reached here is written now.
          const log = reachedBefore === null ? stopLog(request, asking) : {};
          const update = { [key]: { ...loopGuard, stopped: asking, asking: null }, ...log };
          return endModelCall(request, handler, wrapUp, { ...asking }, undefined, update);
        }
        loopGuard = raiseLimit(loopGuard, asking, granted);
      }
      const response = await handler(request as never);
      if (!AIMessage.isInstance(response) || isGuardFinal(response)) return response;
      const result = turn(
        { messages: [...(state.messages ?? []), response], loopGuard },
        request.runtime as WriterHost,
      );
      if (result === undefined) return response;
      if (result.stop === null) return { response, update: { [key]: result.state } } satisfies ResponseStands;
      if (offer(result.stop, settings.ask) !== undefined) {
        // The response's calls run; the person is asked before the next model call.
        const asks = { ...result.state, stopped: null, asking: result.stop };
        return { response, update: { [key]: asks, guardLog: result.log } } satisfies ResponseStands;
      }
      const update = { [key]: result.state, guardLog: result.log };
      return endModelCall(request, handler, wrapUp, { ...result.stop }, response, update);
    });
}

/**
 * The loop detector and the safety limits (iterations, runtime, tokens, cost, failures in a row) for langchain
 * `createAgent`. When a limit or a loop stops the run, every pending tool call is answered with an error
 * ToolMessage and a final AI message says what stopped it; the run ends there. Its memory is the `loopGuard`
 * channel, kept per thread by the checkpointer. Options are the same as `loopDetectHook`'s, validated here.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { guardMiddleware, loopDetectMiddleware } from "langgraph-guards/middleware";
 *
 * const agent = createAgent({ model, tools, middleware: [guardMiddleware(), loopDetectMiddleware({ maxIterations: 30 })] });
 * ```
 */
export function loopDetectMiddleware(options: LoopDetectOptions = {}) {
  const budget = modelCallBudget();
  const middleware = defineMiddleware({
    name: "LoopDetectMiddleware",
    stateSchema: new StateSchema({
      /** The loop detector's and the safety limits' state, per thread. */
      loopGuard: agentFieldOf<LoopState, LoopState | null>(loopGuardChannel),
      /** Guard events, counted and the most recent kept (shared with the other middleware). */
      guardLog: agentFieldOf(guardLogChannel),
    }),
    wrapModelCall: stepCall("loopGuard", resolveLoopDetectOptions(options), budget),
  });
  return withStepBudget(middleware, budget);
}

/**
 * The safety limits alone (iterations, runtime, tokens, cost, failures in a row), without the loop detector's
 * similarity check, for langchain `createAgent`; a limit reached ends the run as {@link loopDetectMiddleware} does,
 * which includes these limits (use one of the two). Its counters live in the `safetyLimits` channel, per run
 * (`turns.runBoundary`).
 *
 * @example
 * ```ts
 * const agent = createAgent({ model, tools, middleware: [safetyLimitsMiddleware({ maxIterations: 25 })] });
 * ```
 */
export function safetyLimitsMiddleware(options: SafetyLimitsOptions = {}) {
  const budget = modelCallBudget();
  const middleware = defineMiddleware({
    name: "SafetyLimitsMiddleware",
    stateSchema: new StateSchema({
      /** The safety limits' counters, per thread. */
      safetyLimits: agentFieldOf<LoopState, LoopState | null>(loopGuardChannel),
      /** Guard events, counted and the most recent kept (shared with the other middleware). */
      guardLog: agentFieldOf(guardLogChannel),
    }),
    wrapModelCall: stepCall("safetyLimits", resolveSafetyLimitsOptions(options), budget),
  });
  return withStepBudget(middleware, budget);
}
