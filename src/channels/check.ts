/**
 * The guard channels' values as a checkpoint gives them back: checked once when read (a value the reducers made is
 * trusted), older shapes repaired (fields added since are filled with what their absence meant), anything else
 * refused with a {@link GuardStateError} that names the channel, says what is wrong and how to reset it.
 */
import { z } from "zod/v4";
import { emptyLoopState, type LoopState } from "../loop/core/loop.js";
import { BLOCK_RULES } from "../tool-calls/core/rules.js";

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

const count = z.number();
const counter = count.default(0);
const text = z.string();
const ruleCounts = z
  .record(z.string(), count)
  .prefault({})
  .transform((counts) => {
    const all: Record<string, number> = Object.fromEntries(BLOCK_RULES.map((rule) => [rule, 0]));
    return Object.assign(all, counts);
  });
const effect = z.looseObject({ kind: z.enum(["read", "write", "mutate"]) });
const result = z.looseObject({ ok: z.boolean(), digest: text });

/**
 * The `toolGuard` channel's shape: what the rules read. `repetition` (there from the first release) is required;
 * parts and counters added since default to what their absence meant.
 */
const toolGuardSchema = z.looseObject({
  repetition: z.looseObject({
    nextSeq: counter,
    epoch: counter,
    window: z.array(z.looseObject({ seq: count, key: text, tool: text, epoch: counter, result: result.optional() })),
    changes: z.array(z.looseObject({ tool: text, epoch: count })).optional(),
  }),
  operations: z
    .looseObject({
      ops: z.record(z.string(), z.looseObject({ key: text.optional(), effect: effect.optional() })).default({}),
      files: z.array(z.looseObject({})).default([]),
    })
    .prefault({}),
  observed: z.array(z.looseObject({ tool: text, rule: text, count: count })).default([]),
  stats: z.looseObject({ allowed: counter, blocked: ruleCounts, observed: ruleCounts, reminded: counter }).prefault({}),
  escalation: z
    .looseObject({
      strikes: counter,
      pending: z.boolean().default(false),
      reminders: counter,
      lastTurn: text.nullable().default(null),
      blocked: z.array(z.looseObject({ tool: text, key: text })).default([]),
      endedBy: text.nullable().default(null),
    })
    .prefault({}),
  run: text.nullable().optional(),
  answers: z.array(z.looseObject({ key: text, tool: text, callId: text, digest: text })).optional(),
  fileEdits: z.array(z.looseObject({ path: text, writes: count })).optional(),
  repeats: z.looseObject({ mark: counter, calls: z.array(z.looseObject({ key: text })) }).optional(),
});

/**
 * The `toolGuard` value of a checkpoint, checked: older shapes repaired (a missing counter is 0, a missing part
 * empty), anything the rules cannot read refused with a {@link GuardStateError}. The result's fields are plain data
 * in the shape of `ToolGuardState`.
 *
 * @example
 * ```ts
 * checkToolGuardValue({ stats: { allowed: 3 } }).stats.blocked.consecutive; // 0
 * ```
 */
export function checkToolGuardValue(value: unknown): z.output<typeof toolGuardSchema> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new GuardStateError("toolGuard", `expected the guards' state (an object), received ${kindOf(value)}`);
  }
  const parsed = toolGuardSchema.safeParse(value);
  if (!parsed.success) throw new GuardStateError("toolGuard", zodProblem(parsed.error));
  return parsed.data;
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

const stopReason = z.looseObject({ kind: text, message: text });

/** The loop guard's state: what the limits and the loop check read; fields added after the first release default. */
const loopStateSchema = z.looseObject({
  recentOutputs: z.array(text).default([]),
  iterations: counter,
  startedAt: count.nullable().default(null),
  tokens: z.looseObject({ input: counter, output: counter, total: counter }).default({ input: 0, output: 0, total: 0 }),
  cost: counter,
  consecutiveFailures: counter,
  session: text.nullable().default(null),
  stopped: stopReason.nullable().default(null),
  raised: z.record(z.string(), count).optional(),
  asking: stopReason.nullable().optional(),
});

/** Loop states read, checked: each value is checked once (a state the loop guard made is checked at its next read). */
const checkedLoopStates = new WeakMap<object, LoopState>();

/**
 * The loop guard's state as the loop guard reads it (`channel`: `loopGuard`, or the createAgent `safetyLimits`
 * channel): checked once per value, an older shape repaired (a missing counter is 0), a damaged one refused with a
 * {@link GuardStateError}; `undefined` or `null` is a fresh state.
 *
 * @example
 * ```ts
 * readLoopState({ iterations: 3 }).tokens.total; // 0
 * ```
 */
export function readLoopState(value: unknown, channel: "loopGuard" | "safetyLimits" = "loopGuard"): LoopState {
  if (value === undefined || value === null) return emptyLoopState();
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new GuardStateError(channel, `expected the loop guard's state (an object), received ${kindOf(value)}`);
  }
  const known = checkedLoopStates.get(value);
  if (known !== undefined) return known;
  const parsed = loopStateSchema.safeParse(value);
  if (!parsed.success) throw new GuardStateError(channel, zodProblem(parsed.error));
  const state = parsed.data as LoopState;
  checkedLoopStates.set(value, state);
  checkedLoopStates.set(state, state);
  return state;
}

/**
 * Marks a loop state the loop guard made as checked: its next read (the next turn, the reducer) costs a lookup.
 *
 * @example
 * ```ts
 * const next = trustLoopState(stepLoopGuard(state, turn, safety).state);
 * ```
 */
export function trustLoopState(state: LoopState): LoopState {
  checkedLoopStates.set(state, state);
  return state;
}

/**
 * The `loopGuard` channel's reducer: a whole state replaces the current one (checked), `null` resets it (how a
 * damaged state is reset), `undefined` changes nothing; anything else is refused with a {@link GuardStateError}.
 *
 * @example
 * ```ts
 * reduceLoopState(current, null).iterations; // 0
 * ```
 */
export function reduceLoopState(current: LoopState | undefined, update: LoopState | null | undefined): LoopState {
  if (update === undefined) return current ?? emptyLoopState();
  if (update === null) return emptyLoopState();
  try {
    return readLoopState(update);
  } catch (error) {
    if (error instanceof GuardStateError) throw new GuardStateError("loopGuard", error.problem, true);
    throw error;
  }
}
