/** Limits that ask a person with `interrupt()` whether to go on, and with how much more, before they end the run. */
import type { StopReason } from "../common/vocabulary.js";
import { interruptIfResumable } from "../run-end/interrupt.js";
import type { LoopState } from "./core/loop.js";
import { LIMIT_HOW_TO_ANSWER, limitQuestion, limitQuestionAgain } from "./core/texts.js";
import type { LimitAsk } from "./options.js";

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
  /** How to answer: `Command({ resume })` with yes (`true`, "yes", "y"), no, or an amount (`{ more: n }`, "20"). */
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

/** How often an answer that reads as none of yes, no or an amount is asked again before the run ends. */
const ASK_AGAIN = 3;

/** Asks a person whether to go on past a limit: the amount granted, or undefined (a no, no checkpointer, unclear). */
export function askToGoOn(stop: StopReason, more: number): number | undefined {
  const limit = stop.kind as AskingLimit;
  const question = limitQuestion(stop.message, describe(limit, more));
  let payload: LimitInterrupt = {
    type: "langgraph-guards/limit",
    limit,
    value: stop.value,
    max: stop.limit,
    more,
    question,
    howToAnswer: LIMIT_HOW_TO_ANSWER,
  };
  for (let asked = 0; asked <= ASK_AGAIN; asked += 1) {
    const answered = interruptIfResumable(payload);
    if (answered === undefined) return undefined;
    const read = readLimitAnswer(answered.answer, limit, more);
    if (read !== "unclear") return read === "end" ? undefined : read.more;
    payload = { ...payload, question: limitQuestionAgain(answerText(answered.answer), question) };
  }
  return undefined;
}

/** Words that say yes or no, as a person writes them (lowercase, without end punctuation). */
const YES = new Set([
  "yes",
  "y",
  "yeah",
  "yep",
  "ok",
  "okay",
  "sure",
  "go on",
  "go ahead",
  "continue",
  "proceed",
  "true",
]);
const NO = new Set(["no", "n", "nope", "stop", "end", "cancel", "abort", "quit", "false"]);

/** The unit words an amount may carry, per limit (the unit its question names). */
const UNITS: Record<AskingLimit, RegExp> = {
  iterations: /^(iterations?|turns?)?$/,
  runtime: /^(min|mins|minutes?)?$/,
  tokens: /^(tokens?)?$/,
  cost: /^(dollars?|usd)?$/,
};

/**
 * A person's answer to a limit's question: `{ more }` (the offer on a yes; `{ more: n }` or a number in the limit's
 * own unit; a text such as "20 more" or "5 more minutes" in the question's unit), `"end"` (a no, or 0) or `"unclear"`.
 */
export function readLimitAnswer(
  answer: unknown,
  limit: AskingLimit,
  more: number,
): { more: number } | "end" | "unclear" {
  if (answer === true) return { more };
  if (answer === false || answer === null || answer === undefined) return "end";
  if (typeof answer === "number") return amount(answer);
  if (typeof answer === "object" && !Array.isArray(answer) && "more" in answer) {
    const granted = (answer as { more?: unknown }).more;
    return typeof granted === "number" ? amount(granted) : "end";
  }
  if (typeof answer !== "string") return "unclear";
  const said = answer
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, "");
  if (YES.has(said)) return { more };
  if (NO.has(said)) return "end";
  const written = /^(?:(?:yes|y|ok|okay|sure)[,\s]+)?\$?(\d+(?:\.\d+)?)(?:\s+more)?(?:\s+([a-z]+))?$/.exec(said);
  if (written === null || !UNITS[limit].test(written[2] ?? "")) return "unclear";
  const n = Number(written[1]);
  return amount(limit === "runtime" ? n * 60_000 : n);
}

function amount(n: number): { more: number } | "end" {
  return Number.isFinite(n) && n > 0 ? { more: n } : "end";
}

/** An answer as the question quotes it. */
function answerText(answer: unknown): string {
  if (typeof answer === "string") return answer;
  try {
    return JSON.stringify(answer) ?? String(answer);
  } catch {
    return String(answer);
  }
}

/** The state after a person granted `more` of the limit `stop` reached: the limit raised, the stop forgotten. */
export function raiseLimit(state: LoopState, stop: StopReason, more: number): LoopState {
  const kind = stop.kind as AskingLimit;
  const raised = { ...state.raised, [kind]: (state.raised?.[kind] ?? 0) + (stop.value - stop.limit) + more };
  return { ...state, stopped: null, asking: null, raised };
}
