/**
 * Limits that ask: before an iteration, runtime, token or cost limit ends the run, a person is asked with
 * `interrupt()` whether to go on, and with how much more. A loop and failures in a row still end the run.
 */

import { LIMIT_HOW_TO_ANSWER, limitQuestion } from "../common/texts/run-end.js";
import type { LoopState, StopReason } from "../loop/core/loop.js";
import type { LimitAsk } from "../loop/options.js";
import { interruptIfResumable } from "./interrupt.js";

/** The limits that may ask. */
type AskingLimit = "iterations" | "runtime" | "tokens" | "cost";

/**
 * What a limit's `interrupt()` carries: the limit reached, the question, and how much more is offered.
 *
 * @example
 * ```ts
 * if (isLimitInterrupt(value)) console.log(value.question); // "The run reached a limit: … Go on with 10 more iterations?"
 * ```
 */
export interface LimitInterrupt {
  /** Always `"langgraph-guards/limit"` (see {@link isLimitInterrupt}). */
  type: "langgraph-guards/limit";
  /** Which limit: `"iterations"`, `"runtime"` (ms), `"tokens"` or `"cost"` (dollars). */
  limit: "iterations" | "runtime" | "tokens" | "cost";
  /** The value reached. */
  value: number;
  /** The limit as it stands (raised by earlier answers in this run). */
  max: number;
  /** How much more going on grants. */
  more: number;
  /** What the agent asks the person. */
  question: string;
  /** How to answer: `Command({ resume })` with `true`, `{ more: n }`, or anything else to end. */
  howToAnswer: string;
}

/**
 * Whether an interrupt's value is a limit's question (and not, say, the escalation's).
 *
 * @example
 * ```ts
 * const ask = snapshot.tasks.flatMap((t) => t.interrupts.map((i) => i.value)).find(isLimitInterrupt);
 * ```
 */
export function isLimitInterrupt(value: unknown): value is LimitInterrupt {
  return (value as { type?: unknown } | null)?.type === "langgraph-guards/limit";
}

function isAsking(kind: string): kind is AskingLimit {
  return kind === "iterations" || kind === "runtime" || kind === "tokens" || kind === "cost";
}

function describe(limit: AskingLimit, more: number): string {
  if (limit === "runtime") return `${Math.round((more / 60000) * 10) / 10} more minutes`;
  if (limit === "cost") return `$${more} more`;
  return `${more} more ${limit}`;
}

/** How much more a limit that was reached offers, or undefined when it does not ask. */
export function offer(stop: StopReason, ask: LimitAsk | undefined): number | undefined {
  if (ask === undefined || !isAsking(stop.kind)) return undefined;
  return ask[stop.kind] ?? stop.limit;
}

/**
 * Asks a person whether to go on past a limit: the amount granted, or undefined (end the run: the person said so,
 * or the graph has no checkpointer, so that nobody could answer).
 */
export function askToGoOn(stop: StopReason, more: number): number | undefined {
  const limit = stop.kind as AskingLimit;
  const payload: LimitInterrupt = {
    type: "langgraph-guards/limit",
    limit,
    value: stop.value,
    max: stop.limit,
    more,
    question: limitQuestion(stop.message, describe(limit, more)),
    howToAnswer: LIMIT_HOW_TO_ANSWER,
  };
  const asked = interruptIfResumable(payload);
  if (asked === undefined) return undefined;
  const { answer } = asked;
  if (answer === true || answer === "yes") return more;
  const granted = (answer as { more?: unknown } | null)?.more;
  return typeof granted === "number" && granted > 0 ? granted : undefined;
}

/**
 * The state after a person granted `more` of the limit `stop` reached: the limit raised for the rest of the run, the
 * stop forgotten.
 */
export function raiseLimit(state: LoopState, stop: StopReason, more: number): LoopState {
  const kind = stop.kind as AskingLimit;
  const raised = { ...state.raised, [kind]: (state.raised?.[kind] ?? 0) + (stop.value - stop.limit) + more };
  return { ...state, stopped: null, asking: null, raised };
}
