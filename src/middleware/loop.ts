/**
 * The loop detector and the safety limits as createAgent middleware: after each model response it counts the turn,
 * checks the limits and (the loop detector) compares the response with the recent ones, exactly as
 * `loopDetectHook` does.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { z } from "zod/v4";
import { emitGuardEvents, type WriterHost } from "../agent/events.js";
import { askToGoOn, offer, raiseLimit } from "../agent/limit-ask.js";
import {
  type LoopDetectOptions,
  type LoopGuardSettings,
  resolveLoopDetectOptions,
  resolveSafetyLimitsOptions,
  type SafetyLimitsOptions,
} from "../agent/loop-options.js";
import { loopGuardTurn } from "../agent/loop-turn.js";
import { atModelCall, currentSteps, stepsStop } from "../agent/steps.js";
import { isWrapUpInput } from "../agent/wrap-up.js";
import { emptyLoopState, type LoopState } from "../core/loop/loop.js";
import { GuardOptionsError } from "../core/options.js";
import { stopStreamEvent } from "../core/stream-events.js";
import { readLoopState } from "../core/tool-calls/state-check.js";
import { defineMiddleware } from "./define.js";
import { adoptId, finalModelCall, type ModelCallHandler, type ModelCallRequest } from "./model-call.js";
import { defaulted, guardLogField } from "./state.js";

export type { SafetyLimitsOptions } from "../agent/loop-options.js";

/**
 * `wrapModelCall`: one step of the guard over the channel `key`, inside the model call (so the guard adds no graph
 * step to a turn). Before the call, the step budget: when the model call after this one could not end the run in
 * time, this one is made the last (tools off, asked to wrap up). After the call, the limits and the loop check over
 * the response; a stop asks the model once more, tools off, for the final message, which replaces the response
 * (its tool calls never run).
 */
function stepCall<K extends "loopGuard" | "safetyLimits">(key: K, settings: LoopGuardSettings) {
  const turn = loopGuardTurn(settings);
  if (typeof settings.wrapUp === "object")
    throw new GuardOptionsError(
      'Invalid loop-detection options:\n- wrapUp: in createAgent the guard asks the agent\'s own model: "model" or "canned"',
    );
  const canned = settings.wrapUp === "canned";
  return async (request: ModelCallRequest, handler: ModelCallHandler): Promise<AIMessage | Command> => {
    if (isWrapUpInput(request.messages)) return handler(request as never); // another guard asked for the wrap-up
    const state = request.state as { messages?: BaseMessage[] } & { [P in K]?: LoopState };
    const messages = state.messages ?? [];
    const host = request.runtime as WriterHost;
    const at = currentSteps();
    if (at !== undefined && atModelCall(at) === "final") {
      const reason = stepsStop(at);
      const final = await finalModelCall(request, canned ? undefined : handler, { ...reason });
      const guardLog = emitGuardEvents(host, [stopStreamEvent(reason)], settings.events);
      return new Command({ update: { messages: [final], guardLog } });
    }
    let loopGuard: LoopState | undefined = state[key] === undefined ? undefined : readLoopState(state[key], key);
    const asking = loopGuard?.asking ?? null;
    if (asking !== null && loopGuard !== undefined) {
      // A limit reached at the last response asks a person now, before the model is called (a resume runs this
      // node again: the model is called once, after the answer).
      const granted = askToGoOn(asking, offer(asking, settings.ask) ?? asking.limit);
      if (granted === undefined) {
        const final = await finalModelCall(request, canned ? undefined : handler, { ...asking });
        return new Command({ update: { [key]: { ...loopGuard, stopped: asking, asking: null }, messages: [final] } });
      }
      loopGuard = raiseLimit(loopGuard, asking, granted);
    }
    const response = await handler(request as never);
    if (!AIMessage.isInstance(response)) return response;
    const result = turn({ messages: [...messages, response], loopGuard }, host);
    if (result === undefined) return response;
    if (result.stop === null) return new Command({ update: { [key]: result.state } });
    if (offer(result.stop, settings.ask) !== undefined) {
      // The response's calls run; the person is asked before the next model call.
      const update = { [key]: { ...result.state, stopped: null, asking: result.stop }, guardLog: result.log };
      return new Command({ update });
    }
    // The final message replaces the response (its tool calls never run): it takes the response's id.
    const final = await finalModelCall(
      request,
      canned ? undefined : handler,
      { ...result.stop },
      adoptId(response, undefined),
    );
    return new Command({ update: { [key]: result.state, guardLog: result.log, messages: [final] } });
  };
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
  return defineMiddleware({
    name: "LoopDetectMiddleware",
    stateSchema: z.object({
      /** The loop detector's and the safety limits' state, per thread. */
      loopGuard: defaulted<LoopState>(emptyLoopState),
      /** Guard events, counted and the most recent kept (shared with the other middleware). */
      guardLog: guardLogField,
    }),
    wrapModelCall: stepCall("loopGuard", resolveLoopDetectOptions(options)),
  });
}

/**
 * The safety limits alone (iterations, runtime, tokens, cost, failures in a row), without the loop detector's
 * similarity check, for langchain `createAgent`: a limit reached answers every pending tool call with an error
 * ToolMessage and ends the run with an AI message that says which limit. Its counters live in the `safetyLimits`
 * channel, per thread, and start again with each new human message (`turns: { runBoundary: "none" }` keeps them for
 * the whole thread). {@link loopDetectMiddleware} includes these limits: use one of the two.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { guardMiddleware, safetyLimitsMiddleware } from "langgraph-guards/middleware";
 *
 * const agent = createAgent({
 *   model,
 *   tools,
 *   middleware: [guardMiddleware(), safetyLimitsMiddleware({ maxIterations: 25, maxConsecutiveFailures: 3 })],
 * });
 * ```
 */
export function safetyLimitsMiddleware(options: SafetyLimitsOptions = {}) {
  // The turn's output is empty: never a loop, never remembered, so the similarity check is off.
  const wrapModelCall = stepCall("safetyLimits", resolveSafetyLimitsOptions(options));
  const stateSchema = z.object({
    /** The safety limits' counters, per thread. */ safetyLimits: defaulted<LoopState>(emptyLoopState),
    /** Guard events, counted and the most recent kept (shared with the other middleware). */ guardLog: guardLogField,
  });
  return defineMiddleware({ name: "SafetyLimitsMiddleware", stateSchema, wrapModelCall });
}
