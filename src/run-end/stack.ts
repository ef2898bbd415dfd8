/** The agent's whole middleware list, shown to the step budget (createAgent shows a middleware only its own hooks). */
import type { StackShape } from "./budget.js";
import type { StepBudget } from "./invocations.js";

/** Each pack middleware's step budget, kept beside it: createAgent reads a middleware's own properties as hooks. */
const budgets = new WeakMap<object, StepBudget>();

/** Registers the step budget of a middleware of the pack (the middleware is returned as it is). */
export function withStepBudget<M extends object>(middleware: M, budget: StepBudget): M {
  budgets.set(middleware, budget);
  return middleware;
}

interface Hooks {
  beforeAgent?: unknown;
  beforeModel?: unknown;
  afterModel?: unknown;
  afterAgent?: unknown;
}

/**
 * The hook nodes of a createAgent middleware list, as the step budget counts them: each `beforeModel` and
 * `afterModel` hook is a node of every turn, each `beforeAgent` and `afterAgent` hook a node of every invocation.
 *
 * @example
 * ```ts
 * stackShape([guardMiddleware(), toolCallLimitMiddleware({ runLimit: 20 })]); // { around: 2, edges: 1 }
 * ```
 */
export function stackShape(middleware: readonly object[]): StackShape {
  let around = 0;
  let edges = 0;
  for (const m of middleware as readonly Hooks[]) {
    around += (m.beforeModel ? 1 : 0) + (m.afterModel ? 1 : 0);
    edges += (m.beforeAgent ? 1 : 0) + (m.afterAgent ? 1 : 0);
  }
  return { around, edges };
}

/**
 * Shows the guards the agent's whole middleware list, so that the step budget counts every hook from the first model
 * call: pass the list to `createAgent` through it. Without it the guards count their own hooks and langchain's
 * `toolCallLimitMiddleware` and `modelCallLimitMiddleware`, and measure other `beforeModel` and `afterModel` hooks
 * after the first turn; `beforeAgent` and `afterAgent` hooks of other middleware they cannot see at all. Returns the
 * list as it is.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { guardMiddleware, guardStack, loopDetectMiddleware } from "langgraph-guards/middleware";
 *
 * const agent = createAgent({
 *   model,
 *   tools,
 *   middleware: guardStack([guardMiddleware(), loopDetectMiddleware(), myAuditMiddleware]),
 * });
 * ```
 */
export function guardStack<const M extends readonly object[]>(middleware: M): M {
  const shape = stackShape(middleware);
  for (const m of middleware) budgets.get(m)?.declare(shape);
  return middleware;
}
