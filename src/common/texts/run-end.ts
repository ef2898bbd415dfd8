/**
 * The texts of the run's end, word for word (tests and the eval compare them): the loop detector's and the safety
 * limits' stop reasons, LangGraph's step budget and the model's wrap-up, and the question a limit asks before it
 * ends the run. The code that decides when to send them lives with its guard (src/loop/, src/run-end/).
 */

// ---------------------------------------------------------------------------------------------------------------
// 1. Loop detector and safety limits: the stop reasons (the final AI message; "Not run: …" for pending calls)
// ---------------------------------------------------------------------------------------------------------------

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/**
 * The message of each stop reason, from its value and its limit: iterations, runtime (ms, shown in minutes),
 * tokens, cost, failures in a row, and a loop (similarity and threshold, 0..1, shown as percentages).
 */
export const STOP_REASON_TEXTS = {
  iterations: (value: number, limit: number) => `Stopped: the iteration limit was reached (${value} of ${limit}).`,
  runtime: (valueMs: number, limitMs: number) =>
    `Stopped: the runtime limit was reached (${round(valueMs / 60000, 1)} min of ${round(limitMs / 60000, 1)} min).`,
  tokens: (value: number, limit: number) => `Stopped: the token limit was reached (${value} of ${limit} tokens).`,
  cost: (value: number, limit: number) => `Stopped: the cost limit was reached ($${round(value, 4)} of $${limit}).`,
  failures: (value: number, limit: number) => `Stopped: ${value} failed iterations in a row (limit ${limit}).`,
  handoffs: (count: number, limit: number) =>
    `Stopped: the agents handed the task back and forth ${count} times in a row with nothing new between the hand-offs (limit ${limit}).`,
  loop: (similarity: number, threshold: number) =>
    `Stopped: loop detected, the output is ${(similarity * 100).toFixed(1)}% similar to a previous output (threshold ${round(threshold * 100, 1)}%).`,
} as const;

/** The message of each limit of a task's budget, shared by every agent of the task. */
export const TASK_BUDGET_TEXTS = {
  iterations: (_value: number, limit: number) =>
    `Stopped: the task's iteration budget was reached (${limit} model turns, shared by every agent of the task).`,
  runtime: (valueMs: number, limitMs: number) =>
    `Stopped: the task's runtime budget was reached (${round(valueMs / 60000, 1)} min of ${round(limitMs / 60000, 1)} min, shared by every agent of the task).`,
  tokens: (value: number, limit: number) =>
    `Stopped: the task's token budget was reached (${value} of ${limit} tokens, shared by every agent of the task).`,
  cost: (value: number, limit: number) =>
    `Stopped: the task's cost budget was reached ($${round(value, 4)} of $${limit}, shared by every agent of the task).`,
} as const;

/** The answer of a pending tool call the loop guard will not run: the stop reason's message. */
export function notRunStopped(reason: string): string {
  return `Not run: ${reason}`;
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Ending a run: LangGraph's step budget, and the model's own wrap-up
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why a run ends when LangGraph's step budget (`recursionLimit`) would not allow another turn.
 *
 * @example
 * ```ts
 * stepBudgetReason(25); // "Stopped: this run has used the steps LangGraph allows it (recursionLimit 25). …"
 * ```
 */
export function stepBudgetReason(limit: number): string {
  return `Stopped: this run has used the steps LangGraph allows it (recursionLimit ${limit}). To go on, send another message to continue from here, or run it again with a higher recursionLimit in its config.`;
}

/**
 * What the model is asked in its last call, made with its tools off, when the guards end a run: its answer is the
 * run's final message.
 *
 * @example
 * ```ts
 * wrapUpInstruction("Stopped: the iteration limit was reached (30 of 30).");
 * ```
 */
export function wrapUpInstruction(reason: string): string {
  return [
    `[The run ends now. ${reason}]`,
    "Do not call any tool. In a few sentences, tell the user what you did, what failed or is still unresolved, and what is left to do and how they can continue.",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// 3. Limits that ask: the question before a limit ends the run
// ---------------------------------------------------------------------------------------------------------------

/**
 * The question a limit asks a person before it ends the run (`ask`): the limit reached, and how much more.
 *
 * @example
 * ```ts
 * limitQuestion("Stopped: the iteration limit was reached (30 of 30).", "10 more iterations");
 * // "The run reached a limit: the iteration limit was reached (30 of 30). Go on with 10 more iterations?"
 * ```
 */
export function limitQuestion(reason: string, more: string): string {
  return `The run reached a limit: ${reason.replace(/^Stopped: /, "")} Go on with ${more}?`;
}

/** How to answer a limit's question (in its interrupt payload). */
export const LIMIT_HOW_TO_ANSWER =
  'Resume with Command({ resume }): true or "yes" to go on with the amount offered, { more: n } or "20 more" to go on with that much, false or "no" to end the run.';

/**
 * The question asked again after an answer that reads as none of yes, no or an amount.
 *
 * @example
 * ```ts
 * limitQuestionAgain("maybe", "The run reached a limit: … Go on with 10 more iterations?");
 * // 'I could not read "maybe" as yes, no or a number. The run reached a limit: …'
 * ```
 */
export function limitQuestionAgain(said: string, question: string): string {
  return `I could not read ${JSON.stringify(said.slice(0, 200))} as yes, no or a number. ${question}`;
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Several agents: a sub-agent the guards stopped, as its parent's tool call reports it
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why the guards stopped an agent, in one line for the agent that reads its answer: the escalation's reason is a
 * letter to a person (what to do next), so it is told as the call that kept being repeated; every other reason is
 * short already ("Stopped: …").
 *
 * @example
 * ```ts
 * stopVerdict("escalation", "I stopped this run because …", "search_code");
 * // "the guards stopped it (escalation): it kept repeating a call of `search_code` that they blocked."
 * ```
 */
export function stopVerdict(kind: string, message: string, tool?: string): string {
  if (kind === "escalation") {
    return `the guards stopped it (escalation): it kept repeating a call${tool === undefined ? "" : ` of \`${tool}\``} that they blocked.`;
  }
  return `the guards stopped it (${kind}). ${message.trim()}`;
}

/**
 * The answer of a tool call whose sub-agent the guards stopped: the verdict, that the task is not done, then the
 * sub-agent's own last words.
 *
 * @example
 * ```ts
 * subAgentStoppedText("the guards stopped it (loop). Stopped: loop detected, …", "I kept searching.");
 * // "The sub-agent did not finish: the guards stopped it (loop). Stopped: loop detected, … Its task is not done: do
 * // not treat its answer as a result. Its last words: I kept searching."
 * ```
 */
export function subAgentStoppedText(verdict: string, said: string): string {
  const words = said.trim() === "" ? "" : ` Its last words: ${said.trim()}`;
  return `The sub-agent did not finish: ${verdict} Its task is not done: do not treat its answer as a result.${words}`;
}

/**
 * The note after the final words of an agent that runs inside another graph (a supervisor's worker), when the guards
 * ended its run: the verdict, for the agent that reads the words.
 *
 * @example
 * ```ts
 * nestedStopNote("the guards stopped it (iterations). Stopped: the iteration limit was reached (12 of 12).");
 * // "[This agent did not finish: the guards stopped it (iterations). Stopped: … Its task is not done.]"
 * ```
 */
export function nestedStopNote(verdict: string): string {
  return `[This agent did not finish: ${verdict} Its task is not done.]`;
}
