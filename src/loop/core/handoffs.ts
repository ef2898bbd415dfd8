/**
 * Hand-off loops: agents passing control back and forth with nothing new between the hand-offs (A→B→A→B), as a
 * supervisor that sends a task to a worker who cannot do it, again and again, or two swarm agents that each think
 * the other should answer. LangGraph ends them only at `recursionLimit`, with an error. The check reads the run's
 * conversation, which every agent of a supervisor or a swarm sees whole (their own guard state does not outlive a
 * hand-off): the hand-offs made since the last progress, where progress is a tool call (not a hand-off) that
 * succeeded, or words an agent had not said before in the run (the adapter says which words count).
 */

/** One step of a run's conversation, as the hand-off check reads it (oldest first). */
export type RunStep =
  /** A hand-off: a call of a tool that passes control to another agent (`transfer_to_…`). */
  | { kind: "handoff" }
  /** A tool call other than a hand-off that succeeded: work was done. */
  | { kind: "work" }
  /** What an agent said (an AI message's text, not empty). */
  | { kind: "words"; text: string };

/**
 * The hand-offs made since the last progress (see the module comment): `sameWords(a, b)` says whether two texts
 * say the same thing. Reads back from the end, so a long run
 * costs what its latest stretch without progress costs.
 *
 * @example
 * ```ts
 * const same = (a: string, b: string) => a === b;
 * handoffsWithoutProgress([{ kind: "handoff" }, { kind: "work" }, { kind: "handoff" }], same); // 1
 * handoffsWithoutProgress([{ kind: "words", text: "hi" }, { kind: "handoff" }, { kind: "words", text: "hi" }, { kind: "handoff" }], same); // 2
 * ```
 */
export function handoffsWithoutProgress(
  steps: readonly RunStep[],
  sameWords: (a: string, b: string) => boolean,
): number {
  let handoffs = 0;
  for (let i = steps.length - 1; i >= 0; i -= 1) {
    const step = steps[i] as RunStep;
    if (step.kind === "handoff") handoffs += 1;
    else if (step.kind === "work") return handoffs;
    else if (!saidBefore(steps, i, sameWords)) return handoffs; // new words: progress
  }
  return handoffs;
}

/** Whether the words of step `at` repeat words said earlier in the run (the last 20 texts before them). */
function saidBefore(steps: readonly RunStep[], at: number, sameWords: (a: string, b: string) => boolean): boolean {
  const text = (steps[at] as { text: string }).text;
  let compared = 0;
  for (let i = at - 1; i >= 0 && compared < 20; i -= 1) {
    const step = steps[i] as RunStep;
    if (step.kind !== "words") continue;
    compared += 1;
    if (sameWords(text, step.text)) return true;
  }
  return false;
}
