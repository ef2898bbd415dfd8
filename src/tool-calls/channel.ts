import type { ChannelSpec } from "../shared/channel.js";
import { emptyToolGuardState, reduceToolGuard, type ToolGuardState, type ToolGuardUpdate } from "./core/state.js";

/** The `toolGuard` channel: the tool-call guards' memory (recent calls, valid reads, blocks, counters). */
export const toolGuardChannel: ChannelSpec<ToolGuardState, ToolGuardUpdate> = {
  reduce: reduceToolGuard,
  empty: emptyToolGuardState,
};
