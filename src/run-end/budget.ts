/** LangGraph's step budget as arithmetic (pure; the facts and the derivation: notes/steps-and-wrap-up.md). */
import type { StopReason } from "../common/vocabulary.js";
import { stepBudgetReason } from "./texts.js";

/**
 * The hook nodes of a stack, as the step budget counts them.
 *
 * @example
 * ```ts
 * // createAgent with guardMiddleware and toolCallLimitMiddleware: two afterModel hooks, one afterAgent hook.
 * const shape: StackShape = { around: 2, edges: 1 };
 * ```
 */
export interface StackShape {
  /** Hook nodes of one turn besides the model call and the tool node (before- and after-model hooks). */
  around: number;
  /** Nodes of an invocation outside its turns (before- and after-agent hooks). */
  edges: number;
}

/**
 * The smallest `recursionLimit` at which a task of `toolTurns` tool turns and a final answer ends without
 * `GraphRecursionError`, for a stack of this shape.
 *
 * @example
 * ```ts
 * smallestRecursionLimit(2, { around: 0, edges: 0 }); // 6: a plain createAgent
 * smallestRecursionLimit(2, { around: 1, edges: 0 }); // 9: with guardMiddleware
 * ```
 */
export function smallestRecursionLimit(toolTurns: number, shape: StackShape): number {
  return toolTurns * (shape.around + 2) + shape.around + shape.edges + 2;
}

/** The most tool turns a task can take at `limit` with a stack of this shape and still end in an answer (-1: none). */
export function toolTurnsThatFit(limit: number, shape: StackShape): number {
  return Math.floor((limit - shape.around - shape.edges - 2) / (shape.around + 2));
}

/** Whether the response at step `at` (its turn point first seen at `first`) may run its tools and still end in time. */
export function toolTurnFits(at: number, first: number, limit: number, shape: StackShape): boolean {
  return at - first + 2 * shape.around + shape.edges + 4 <= limit;
}

/** Whether a hook at step `at` after the model may send the run back to the model for its wrap-up and end in time. */
export function modelCallFitsAfter(at: number, first: number, limit: number, shape: StackShape): boolean {
  return at - first + shape.around + shape.edges + 3 <= limit;
}

/** The stop reason of a run whose step budget has no room for another tool turn. */
export function stepsStop(step: number, limit: number): StopReason {
  return { kind: "steps", value: step, limit, message: stepBudgetReason(limit) };
}
