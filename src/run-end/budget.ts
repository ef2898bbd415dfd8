/**
 * LangGraph's step budget as arithmetic (pure; the facts are in notes/steps-and-wrap-up.md). An invocation's first
 * node runs at step `F`; its last node must run by step `F + recursionLimit - 2`, or LangGraph throws
 * `GraphRecursionError`. Every node is a step: the model call, the tool node (parallel calls share it), and every
 * hook node around them.
 *
 * A stack is described by two counts ({@link StackShape}): `around`, the hook nodes of one turn besides the model and
 * the tools (createAgent's `beforeModel` and `afterModel` hooks, a createReactAgent post-model hook), and `edges`, the
 * nodes of an invocation outside its turns (createAgent's `beforeAgent` and `afterAgent` hooks). A turn is
 * `around + 2` steps; a task of N tool turns and an answer needs `N * (around + 2) + around + edges + 2` steps of
 * `recursionLimit`. A guard that sees a point of every turn (the model call, or a hook right after it) at step `x`,
 * first at `x1` in this invocation, lets the response's tools run only when the task with one more tool turn would
 * fit: the offset of that point inside its turn cancels out, so where the guard sits does not matter.
 */

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

/**
 * The most tool turns a task can take at `limit` with a stack of this shape (and still end in an answer), or -1
 * when not even an answer at once fits.
 *
 * @example
 * ```ts
 * toolTurnsThatFit(25, { around: 1, edges: 0 }); // 7
 * ```
 */
export function toolTurnsThatFit(limit: number, shape: StackShape): number {
  return Math.floor((limit - shape.around - shape.edges - 2) / (shape.around + 2));
}

/**
 * Whether the response seen at step `at` of a turn point first seen at `first` may have its tools run: the task with
 * one more tool turn (the turns so far, this one, and an answer after it) fits `limit`.
 *
 * @example
 * ```ts
 * // A plain createAgent (turns of 2 steps) at recursionLimit 6: the model calls at steps 1, 3, 5.
 * toolTurnFits(3, 1, 6, { around: 0, edges: 0 }); // true: the 2nd tool turn, then an answer at step 5
 * toolTurnFits(5, 1, 6, { around: 0, edges: 0 }); // false
 * ```
 */
export function toolTurnFits(at: number, first: number, limit: number, shape: StackShape): boolean {
  return at - first + 2 * shape.around + shape.edges + 4 <= limit;
}

/**
 * Whether a hook at step `at` after the model (createAgent's `afterModel`) may send the run back to the model for one
 * more call (the wrap-up) that still ends in time: the model call at `at + 1`, then the turn's after-model hooks and
 * the agent's after-agent hooks. `first` is the invocation's first model call.
 *
 * @example
 * ```ts
 * modelCallFitsAfter(10, 1, 25, { around: 2, edges: 1 }); // true
 * ```
 */
export function modelCallFitsAfter(at: number, first: number, limit: number, shape: StackShape): boolean {
  return at - first + shape.around + shape.edges + 3 <= limit;
}

/**
 * The stop reason of a run ended because LangGraph's step budget has no room for another tool turn.
 *
 * @example
 * ```ts
 * stepsStop(21, 25).kind; // "steps"
 * ```
 */
export function stepsStop(step: number, limit: number): StopReason {
  return { kind: "steps", value: step, limit, message: stepBudgetReason(limit) };
}
