/**
 * The loop detector and the safety limits as createAgent middleware: after each model response it counts the turn,
 * checks the limits and (the loop detector) compares the response with the recent ones, exactly as
 * `loopDetectHook` does.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import type { WriterHost } from "../agent/events.js";
import {
  type LoopDetectOptions,
  type LoopGuardSettings,
  resolveLoopDetectOptions,
  resolveSafetyLimitsOptions,
  type SafetyLimitsOptions,
} from "../agent/loop-options.js";
import { loopGuardTurn } from "../agent/loop-turn.js";
import { emptyLoopState, type LoopState } from "../core/loop/loop.js";
import type { GuardLog, GuardStreamEvent } from "../core/stream-events.js";
import { defineMiddleware } from "./define.js";
import { defaulted, guardLogField } from "./state.js";

export type { SafetyLimitsOptions } from "../agent/loop-options.js";

/** `afterModel`: one step of the guard over the channel `key`; a stop answers the pending calls and ends the run. */
function stepHook<K extends "loopGuard" | "safetyLimits">(key: K, settings: LoopGuardSettings) {
  const turn = loopGuardTurn(settings);
  return (state: { messages: unknown } & { [P in K]: LoopState }, runtime: WriterHost) => {
    const result = turn({ messages: state.messages as BaseMessage[], loopGuard: state[key] }, runtime);
    if (result === undefined) return undefined;
    const own = { [key]: result.state } as { [P in K]: LoopState };
    if (result.messages === undefined) return own;
    // The reducer of guardLog takes events; createAgent types the update as the channel's value.
    const guardLog = result.log as GuardStreamEvent[] as unknown as GuardLog;
    return {
      ...own,
      guardLog,
      messages: result.messages,
      jumpTo: "end" as const,
    };
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
    afterModel: { canJumpTo: ["end"], hook: stepHook("loopGuard", resolveLoopDetectOptions(options)) },
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
  const hook = stepHook("safetyLimits", resolveSafetyLimitsOptions(options));
  const stateSchema = z.object({
    /** The safety limits' counters, per thread. */ safetyLimits: defaulted<LoopState>(emptyLoopState),
    /** Guard events, counted and the most recent kept (shared with the other middleware). */ guardLog: guardLogField,
  });
  return defineMiddleware({ name: "SafetyLimitsMiddleware", stateSchema, afterModel: { canJumpTo: ["end"], hook } });
}
