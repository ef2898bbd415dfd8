/**
 * One budget for a task that several agents share: a parent and the sub-agents it starts, a supervisor and its
 * workers, the agents of a swarm. Each agent's own limits count its own turns (and start afresh where LangGraph
 * drops an agent's state at a hand-off); the task's budget counts every turn of every guarded agent that runs under
 * the invocation that carries it, so a task's total is bounded whoever spends it. A task is one top-level `invoke`
 * (a resume after a person's answer goes on with it; the budget object may be shared by every invocation), and a
 * turn is charged once whatever the number of guards that see it: src/loop/turn.ts keeps the spending.
 */
import { z } from "zod/v4";
import { parseOptions } from "../../common/options.js";
import type { StopReason } from "../../common/vocabulary.js";
import { addUsage, emptyLoopState, type PriceTable, type TaskSpending, type TokenUsage } from "./loop.js";
import { TASK_BUDGET_TEXTS } from "./texts.js";

const positive = z.number().positive();

/** The limits of a task's budget, checked (see {@link TaskBudget}). */
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
 * Counts one model turn of one of the task's agents against the task's budget: the spending after it and, when the
 * model wants to go on (it called tools) but the task has reached a limit, why its turn is stopped. Iterations count
 * the turns taken before this one, as an agent's own `maxIterations` does: `maxIterations: N` lets the task's agents
 * take N tool turns together.
 *
 * @example
 * ```ts
 * let spent = { iterations: 0, tokens: 0, cost: 0, startedAt: null };
 * const step = spendTask(spent, { continues: true }, { maxIterations: 1 }, undefined, 0); // no stop
 * spendTask(step.spent, { continues: true }, { maxIterations: 1 }, undefined, 0).stop?.kind; // "iterations"
 * ```
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

/** The first of the task's limits its spending has reached, or null. */
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
