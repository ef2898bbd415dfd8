/** Hand-off loops (A→B→A→B, nothing new between), read from the conversation: an agent's state ends at a hand-off. */

/** One step of a run's conversation, as the hand-off check reads it (oldest first). */
export type RunStep =
  | { kind: "handoff" }
  /** A tool call other than a hand-off that succeeded: work was done. */
  | { kind: "work" }
  /** What an agent said (an AI message's text, not empty). */
  | { kind: "words"; text: string };

/**
 * The hand-offs made since the last progress: a tool call (not a hand-off) that succeeded, or words not said before
 * in the run (`sameWords(a, b)`: whether two texts say the same thing).
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
