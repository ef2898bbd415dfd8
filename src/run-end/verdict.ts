/** Why the guards ended a run, as data: read from the run's final message, whichever guard and adapter wrote it. */
import { AIMessage } from "@langchain/core/messages";

/**
 * Why the guards ended a run: which guard, the rule or limit, the level, the reason in words, and who wrote the final
 * message.
 *
 * @example
 * ```ts
 * const verdict: GuardVerdict | undefined = guardVerdict(result);
 * if (verdict?.guard === "steps") console.log(`raise recursionLimit above ${verdict.limit}`);
 * ```
 */
export interface GuardVerdict {
  /**
   * The guard that ended the run: `"tool-calls"` (escalation: the same call repeated after blocks), `"loop"` (the
   * model's turns repeat, or agents hand a task back and forth), `"limits"` (a safety limit), `"steps"` (LangGraph's
   * step budget had no room for another tool turn).
   */
  guard: "tool-calls" | "loop" | "limits" | "steps";
  /**
   * The rule or limit: `"escalation"` (tool calls), `"loop"`, `"handoffs"` (loop: agents handing a task back and
   * forth with nothing new), `"iterations"`, `"runtime"`, `"tokens"`, `"cost"`, `"failures"` (limits),
   * `"recursionLimit"` (steps).
   */
  rule: string;
  /** The escalation level (4: the run was ended; a person may have chosen to end it at level 3). */
  level?: number;
  /** A person ended the run when asked at level 3 (escalation): the final message carries their words. */
  byPerson?: boolean;
  /** The limit was the task's budget, shared by every agent of the task (`configurable.taskBudget`). */
  task?: boolean;
  /** The tool whose calls were repeated (escalation). */
  tool?: string;
  /** The value that reached the limit (the step, the similarity, the count…). */
  value?: number;
  /** The limit (the `recursionLimit`, the threshold…). */
  limit?: number;
  /** The guard's reason in words (also the canned final message). */
  message: string;
  /** Who wrote the final message: the model (its wrap-up) or the guard (`"canned"`). */
  wrapUp: "model" | "canned";
  /** The final message's id. */
  messageId?: string;
  /**
   * Only for an agent with a `responseFormat` (createAgent): `"given"` when the model's wrap-up came in the format (the
   * run's `structuredResponse` is set, the final message says why the run ended), `"missing"` when the run ended
   * without it (`wrapUp: "canned"` or a model of your own, a wrap-up that did not fit the format, a person who ended
   * the run, no room for one more model call): `structuredResponse` is then undefined.
   */
  structuredResponse?: "given" | "missing";
}

const LIMITS = new Set(["iterations", "runtime", "tokens", "cost", "failures"]);

function guardOf(kind: string): GuardVerdict["guard"] {
  if (kind === "escalation") return "tool-calls";
  if (kind === "steps") return "steps";
  if (kind === "loop" || kind === "handoffs") return "loop";
  return LIMITS.has(kind) ? "limits" : "tool-calls";
}

function numberOf(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/**
 * Why the guards ended the run whose state (or messages) is given, or undefined when they did not end it (the model
 * answered, or the run goes on). It reads the last message: the guards' final message carries its reason.
 *
 * @example
 * ```ts
 * const result = await agent.invoke({ messages: [{ role: "user", content: "Go" }] }, config);
 * const verdict = guardVerdict(result);
 * if (verdict !== undefined) console.log(verdict.guard, verdict.rule, verdict.message);
 * ```
 */
export function guardVerdict(state: { messages?: readonly unknown[] } | readonly unknown[]): GuardVerdict | undefined {
  const messages = Array.isArray(state) ? state : ((state as { messages?: readonly unknown[] }).messages ?? []);
  const last = messages.at(-1);
  if (!AIMessage.isInstance(last) || (last.tool_calls ?? []).length > 0) return undefined;
  const guard = (last.response_metadata as { guard?: Record<string, unknown> } | undefined)?.guard;
  if (typeof guard !== "object" || guard === null || typeof guard.kind !== "string") return undefined;
  const kind = guard.kind;
  const level = numberOf(guard.level);
  const verdict: GuardVerdict = {
    guard: guardOf(kind),
    rule: kind === "steps" ? "recursionLimit" : kind,
    message: typeof guard.message === "string" ? guard.message : String(last.content),
    wrapUp: guard.wrapUp === "model" ? "model" : "canned",
    ...(level === undefined ? {} : { level }),
    ...(guard.byPerson === true ? { byPerson: true } : {}),
    ...(guard.task === true ? { task: true } : {}),
    ...(typeof guard.tool === "string" ? { tool: guard.tool } : {}),
    ...(numberOf(guard.value) === undefined ? {} : { value: numberOf(guard.value) }),
    ...(numberOf(guard.limit) === undefined ? {} : { limit: numberOf(guard.limit) }),
    ...(last.id === undefined ? {} : { messageId: last.id }),
    ...(guard.structuredResponse === "given" || guard.structuredResponse === "missing"
      ? { structuredResponse: guard.structuredResponse }
      : {}),
  };
  return verdict;
}
