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
  loop: (similarity: number, threshold: number) =>
    `Stopped: loop detected, the output is ${(similarity * 100).toFixed(1)}% similar to a previous output (threshold ${round(threshold * 100, 1)}%).`,
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
