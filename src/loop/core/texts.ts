/** The loop guard's texts, word for word (tests and the eval compare them). */

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/** Each stop reason's message from its value and limit (runtime in ms shown as minutes, a loop's 0..1 as %). */
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

/** The question a limit asks a person before it ends the run (`ask`): the limit reached, and how much more. */
export function limitQuestion(reason: string, more: string): string {
  return `The run reached a limit: ${reason.replace(/^Stopped: /, "")} Go on with ${more}?`;
}

/** How to answer a limit's question (in its interrupt payload). */
export const LIMIT_HOW_TO_ANSWER =
  'Resume with Command({ resume }): true or "yes" to go on with the amount offered, { more: n } or "20 more" to go on with that much, false or "no" to end the run.';

/** The question asked again after an answer that reads as none of yes, no or an amount. */
export function limitQuestionAgain(said: string, question: string): string {
  return `I could not read ${JSON.stringify(said.slice(0, 200))} as yes, no or a number. ${question}`;
}
