/** The loop guard's state as a checkpoint gives it back: checked once when read (a state the guard made is trusted). */
import { z } from "zod/v4";
import { type Claim, wholeValueStands } from "../../common/owner.js";
import { GuardStateError, kindOf, StoredValues } from "../../common/state-error.js";
import { emptyLoopState, type LoopState } from "./loop.js";

const count = z.number();
const text = z.string();
const stopReason = z.looseObject({ kind: text, message: text });

/** The loop guard's state: what the limits and the loop check read (the fields an empty state has are required). */
const loopStateSchema = z.looseObject({
  recentOutputs: z.array(text),
  iterations: count,
  startedAt: count.nullable(),
  tokens: z.looseObject({ input: count, output: count, total: count }),
  cost: count,
  consecutiveFailures: count,
  session: text.nullable(),
  stopped: stopReason.nullable(),
  raised: z.record(z.string(), count).optional(),
  asking: stopReason.nullable().optional(),
  agent: text.optional(),
  task: z.looseObject({ iterations: count, tokens: count, cost: count, startedAt: count.nullable() }).optional(),
});

/** Loop states read: each value checked once; a state the loop guard made is marked with `trust`. */
export const loopStates = new StoredValues<LoopState>("loopGuard", "the loop guard's state", loopStateSchema);

/** The loop guard's state from `channel`; `undefined`/`null` is fresh, a damaged one throws {@link GuardStateError}. */
export function readLoopState(value: unknown, channel: "loopGuard" | "safetyLimits" = "loopGuard"): LoopState {
  if (value === undefined || value === null) return emptyLoopState();
  return loopStates.read(value, false, channel);
}

/**
 * The `loopGuard` reducer: a whole state replaces unchecked (createAgent writes every channel back each invoke, damaged
 * too: it is checked when read), `null` resets, `undefined` keeps; a non-object throws {@link GuardStateError}.
 */
export function reduceLoopState(current: LoopState | undefined, update: LoopState | null | undefined): LoopState {
  if (update === undefined) return current ?? emptyLoopState();
  if (update === null) return emptyLoopState();
  if (typeof update !== "object" || Array.isArray(update)) {
    throw new GuardStateError("loopGuard", `${kindOf(update)} (not the loop guard's state)`, true);
  }
  // Another agent's state coming back (a deepagents sub-agent's final state) leaves this agent's as it was; an
  // agent's first write over the state it was handed claims the channel (and the claim is not kept).
  if (current !== undefined && !wholeValueStands(current, update)) return current;
  if ((update as Claim).claims === undefined) return update;
  const { claims: _claims, ...own } = update as LoopState & Claim;
  return own;
}

/** The `loopGuard` channel (and createAgent's `safetyLimits`; see common/channel.ts): a whole state replaces. */
export const loopGuardChannel = { reduce: reduceLoopState, empty: emptyLoopState };
