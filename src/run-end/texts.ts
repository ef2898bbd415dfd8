/** The texts of the run's end, word for word (tests and the eval compare them). */

/** Why a run ends when LangGraph's step budget (`recursionLimit`) would not allow another turn. */
export function stepBudgetReason(limit: number): string {
  return `Stopped: this run has used the steps LangGraph allows it (recursionLimit ${limit}). To go on, send another message to continue from here, or run it again with a higher recursionLimit in its config.`;
}

/** What the model is asked in its last call, with its tools off, when the guards end a run. */
export function wrapUpInstruction(reason: string): string {
  return [
    `[The run ends now. ${reason}]`,
    "Do not call any tool. In a few sentences, tell the user what you did, what failed or is still unresolved, and what is left to do and how they can continue.",
  ].join("\n");
}

/**
 * Why the guards stopped an agent, in one line for the agent that reads its answer (the escalation's reason is a
 * letter to a person, so it is told as the call that kept being repeated).
 */
export function stopVerdict(kind: string, message: string, tool?: string): string {
  if (kind === "escalation") {
    return `the guards stopped it (escalation): it kept repeating a call${tool === undefined ? "" : ` of \`${tool}\``} that they blocked.`;
  }
  return `the guards stopped it (${kind}). ${message.trim()}`;
}

/** The answer of a tool call whose sub-agent the guards stopped: the verdict, the task not done, its last words. */
export function subAgentStoppedText(verdict: string, said: string): string {
  const words = said.trim() === "" ? "" : ` Its last words: ${said.trim()}`;
  return `The sub-agent did not finish: ${verdict} Its task is not done: do not treat its answer as a result.${words}`;
}

/** The note after the final words of an agent inside another graph (a supervisor's worker) the guards ended. */
export function nestedStopNote(verdict: string): string {
  return `[This agent did not finish: ${verdict} Its task is not done.]`;
}
