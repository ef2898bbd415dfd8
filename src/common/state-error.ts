/**
 * A guard channel that holds a value the guards cannot read: the error every channel's check throws, and the helpers
 * its messages share. Each guard checks its own channel (tool-calls/core/state-check.ts, loop/core/state-check.ts,
 * fs/cache.ts).
 */
import type { z } from "zod/v4";

/**
 * The guard channels whose values are checked when read.
 *
 * @example
 * ```ts
 * const channel: GuardChannel = "toolGuard";
 * ```
 */
export type GuardChannel = "toolGuard" | "guardLog" | "loopGuard" | "safetyLimits" | "fileCache";

/**
 * A guard channel holds a value the guards cannot read (a damaged checkpoint, a hand-edited state, a value of another
 * program), or a node wrote an update its reducer does not accept. The message names the channel, says what is
 * wrong, and how to reset it: `await graph.updateState(config, { <channel>: null })` (every guard channel's reducer
 * takes `null` as "start afresh"; the thread's guard memory of that channel is forgotten).
 *
 * @example
 * ```ts
 * try {
 *   await agent.invoke(input, config);
 * } catch (e) {
 *   if (e instanceof GuardStateError) await agent.updateState(config, { [e.channel]: null });
 * }
 * ```
 */
export class GuardStateError extends Error {
  /** Always `"GuardStateError"`. */
  override readonly name = "GuardStateError";
  constructor(
    /** The channel. */
    readonly channel: GuardChannel,
    /** What is wrong, e.g. `stats.allowed: expected number, received string`. */
    readonly problem: string,
    /** Whether the value is an update a node wrote (else the channel's stored value). */
    readonly update = false,
  ) {
    super(
      update
        ? `The '${channel}' channel's reducer does not accept this update: ${problem}. Write the events or the whole ` +
            `value the channel documents, or null to reset it.`
        : `The '${channel}' channel holds a value the guards cannot read: ${problem}. Reset it with ` +
            `\`await graph.updateState(config, { ${channel}: null })\` (the guards forget what this channel ` +
            `remembered of the thread), or restore an earlier checkpoint.`,
    );
  }
}

/**
 * `where: what` of zod's first issue, for a {@link GuardStateError}.
 *
 * @example
 * ```ts
 * zodProblem(z.object({ n: z.number() }).safeParse({ n: "x" }).error!); // "n: Invalid input: expected number, received string"
 * ```
 */
export function zodProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "not readable";
  const path = issue.path.length === 0 ? "the value" : issue.path.map(String).join(".");
  return `${path}: ${issue.message}`;
}

/**
 * What a value is, for an error message: `null`, `an array`, or its `typeof`.
 *
 * @example
 * ```ts
 * kindOf([]); // "an array"
 * ```
 */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
