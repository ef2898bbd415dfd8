import type { BaseMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { GuardStreamEvent } from "../common/events/stream-events.js";
import type { LoopState } from "../loop/core/loop.js";
import type { GuardEvent, ToolGuardState } from "../tool-calls/core/state.js";
import { reduceToolGuard } from "../tool-calls/core/state.js";

/**
 * What this package's post-model hooks read and write.
 *
 * @example
 * ```ts
 * const hook: GuardHook = loopDetectHook({ maxIterations: 30 });
 * ```
 */
export type GuardHook = (
  state: { messages: BaseMessage[]; toolGuard?: ToolGuardState; loopGuard?: LoopState },
  config: LangGraphRunnableConfig,
) => Promise<{
  /** Messages to add (an answer to the response's tool calls, a stop message). */
  messages?: BaseMessage[];
  /** Events for the `toolGuard` channel. */
  toolGuard?: GuardEvent[];
  /** The new loop-guard state. */
  loopGuard?: LoopState;
  /** Guard events for the `guardLog` channel. */
  guardLog?: GuardStreamEvent[];
}>;

/**
 * Runs several of this package's post-model hooks as one (createReactAgent takes a single `postModelHook`), in
 * order: each sees the state as the earlier ones left it, and the first that answers the response's tool calls
 * (stops the run, asks a person, or ends it) is the last to run. Put the loop detector first, so a runaway run
 * stops before it escalates.
 *
 * @example
 * ```ts
 * const tools = new GuardedToolNode(myTools);
 * const agent = createReactAgent({
 *   llm,
 *   tools,
 *   stateSchema: GuardMessagesState,
 *   postModelHook: guardHooks(loopDetectHook({ maxIterations: 30 }), escalationHook(tools)),
 *   checkpointer: new MemorySaver(),
 * });
 * ```
 */
export function guardHooks(...hooks: GuardHook[]): GuardHook {
  return async (state, config) => {
    let current = state;
    const events: GuardEvent[] = [];
    let loopGuard: LoopState | undefined;
    const log: GuardStreamEvent[] = [];
    const own = () => ({
      ...(events.length > 0 ? { toolGuard: events } : {}),
      ...(loopGuard ? { loopGuard } : {}),
      ...(log.length > 0 ? { guardLog: log } : {}),
    });
    for (const hook of hooks) {
      const update = await hook(current, config);
      if (update.guardLog !== undefined) log.push(...update.guardLog);
      if (update.toolGuard !== undefined && update.toolGuard.length > 0) {
        events.push(...update.toolGuard);
        current = { ...current, toolGuard: reduceToolGuard(current.toolGuard, update.toolGuard) };
      }
      if (update.loopGuard !== undefined) {
        loopGuard = update.loopGuard;
        current = { ...current, loopGuard: update.loopGuard };
      }
      if (update.messages !== undefined && update.messages.length > 0) return { messages: update.messages, ...own() };
    }
    return own();
  };
}
