import type { ChannelSpec } from "../shared/channel.js";
import { emptyLoopState, type LoopState } from "./core/loop.js";
import { reduceLoopState } from "./core/state-check.js";

/**
 * The `loopGuard` channel (and the createAgent `safetyLimits` channel): the loop detector's recent outputs and the
 * safety limits' counters for the current session. A whole state replaces the current one, `null` resets it.
 */
export const loopGuardChannel: ChannelSpec<LoopState, LoopState | null> = {
  reduce: reduceLoopState,
  empty: emptyLoopState,
};
