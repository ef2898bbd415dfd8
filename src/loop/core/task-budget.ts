/** One budget for a task several agents share: every guarded turn under the top-level `invoke` that carries it. */
import { z } from "zod/v4";
import { parseOptions } from "../../common/options.js";
import type { StopReason } from "../../common/vocabulary.js";
import { addUsage, emptyLoopState, type PriceTable, type TaskSpending, type TokenUsage } from "./loop.js";
import { TASK_BUDGET_TEXTS } from "./texts.js";

const positive = z.number().positive();

const taskBudgetSchema = z.strictObject({
  maxIterations: z.number().int().min(1).optional(),
  maxTokens: z.number().int().min(1).optional(),
  maxCost: positive.optional(),
  maxRuntimeMs: positive.optional(),
});

/**
 * A task's budget, shared by every guarded agent that runs under the invocation it is given to (each limit
 * optional; none set: nothing is limited). Counted by the loop detector and the safety limits of each agent
 * (`loopDetectMiddleware`, `safetyLimitsMiddleware`, `loopDetectHook`, `loopDetectNode`).
 *
 * @example
 * ```ts
 * const budget: TaskBudget = { maxIterations: 20, maxTokens: 500_000 };
 * await agent.invoke(input, { configurable: { thread_id: "t1", taskBudget: budget } });
 * ```
 */
export interface TaskBudget {
  /**
   * Model turns of every agent of the task together (as an agent's own `maxIterations` counts them): `N` lets the
   * task's agents take N turns; the next one that calls tools is stopped.
   */
  maxIterations?: number | undefined;
  /** Tokens of every model call of the task's agents (from `usage_metadata`). */
  maxTokens?: number | undefined;
  /** Dollars of every model call (each agent's own `price` table prices its calls). */
  maxCost?: number | undefined;
  /** Wall time from the task's first model turn, in ms. */
  maxRuntimeMs?: number | undefined;
}

/** A task's budget as given, checked (`GuardOptionsError` for a bad one). */
export function readTaskBudget(value: unknown): TaskBudget {
  return parseOptions(taskBudgetSchema, value as TaskBudget, "taskBudget");
}

/**
 * Counts one model turn against the task's budget: the spending after it and, when the model called tools but the
 * task has reached a limit, why the turn is stopped (iterations count the turns before this one, as `maxIterations`).
 */
export function spendTask(
  spent: TaskSpending,
  turn: { continues: boolean; usage?: TokenUsage | undefined },
  budget: TaskBudget,
  price: PriceTable | undefined,
  now: number,
): { spent: TaskSpending; stop: StopReason | null } {
  const used = addUsage(emptyLoopState(), turn.usage, price);
  const next: TaskSpending = {
    iterations: spent.iterations + 1,
    tokens: spent.tokens + used.tokens.total,
    cost: spent.cost + used.cost,
    startedAt: spent.startedAt ?? now,
  };
  if (!turn.continues) return { spent: next, stop: null };
  return { spent: next, stop: taskLimit({ ...next, iterations: spent.iterations }, budget, now) };
}

function taskLimit(spent: TaskSpending, budget: TaskBudget, now: number): StopReason | null {
  const { maxIterations, maxTokens, maxCost, maxRuntimeMs } = budget;
  if (maxIterations !== undefined && spent.iterations >= maxIterations) {
    return reached("iterations", spent.iterations, maxIterations);
  }
  const elapsed = spent.startedAt === null ? 0 : now - spent.startedAt;
  if (maxRuntimeMs !== undefined && elapsed >= maxRuntimeMs) return reached("runtime", elapsed, maxRuntimeMs);
  if (maxTokens !== undefined && spent.tokens >= maxTokens) return reached("tokens", spent.tokens, maxTokens);
  if (maxCost !== undefined && spent.cost >= maxCost) return reached("cost", spent.cost, maxCost);
  return null;
}

function reached(kind: keyof typeof TASK_BUDGET_TEXTS, value: number, limit: number): StopReason {
  return { kind, value, limit, message: TASK_BUDGET_TEXTS[kind](value, limit), task: true };
}
