/**
 * The texts of the run's end, word for word (tests and the eval compare them): LangGraph's step budget, the model's
 * wrap-up, and a sub-agent the guards stopped as its parent's tool call reports it. The code that decides when to
 * send them lives beside (src/run-end/).
 */

// ---------------------------------------------------------------------------------------------------------------
// 1. Ending a run: LangGraph's step budget, and the model's own wrap-up
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
// 2. Several agents: a sub-agent the guards stopped, as its parent's tool call reports it
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
