/** Loop detection and safety limits in a graph: the custom-graph node and the createReactAgent post-model hook. */
import type { BaseMessage } from "@langchain/core/messages";
import { Command, END, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod/v4";
import type { GuardStreamEvent } from "../common/events/stream-events.js";
import { parseOptions } from "../common/options.js";
import { endAtHook, endIfOutOfSteps, hookBudget } from "../run-end/hook.js";
import type { LoopState } from "./core/loop.js";
import { askToGoOn, offer, raiseLimit } from "./limit-ask.js";
import {
  type LoopDetectOptions,
  type LoopGuardSettings,
  loopDetectOptionsSchema,
  loopGuardSettings,
  resolveLoopDetectOptions,
} from "./options.js";
import { type LoopGraphState, loopGuardTurn } from "./turn.js";

export type { LoopDetectOptions } from "./options.js";
export { defaultTurnOutput } from "./turn.js";

const node = z.string().min(1);

/** The options of {@link loopDetectNode}: {@link LoopDetectOptions} and where the node routes. */
const loopDetectNodeOptionsSchema = z.strictObject({
  ...loopDetectOptionsSchema.shape,
  /** Where the node routes the graph (node names). */
  routes: z
    .strictObject({
      /** Where to go when a limit or a loop stops the run. Default `END`. */
      exit: node.optional(),
      /** Where to go when the model called tools and nothing stopped it. Default `"tools"`. */
      next: node.optional(),
      /** Where to go when the model answered without tool calls. Default `END`. */
      done: node.optional(),
    })
    .optional(),
});

/**
 * Options of {@link loopDetectNode}: the options of {@link loopDetectHook}, and where it routes in `routes`.
 *
 * @example
 * ```ts
 * loopDetectNode({ routes: { exit: "summarize", next: "tools" } } satisfies LoopDetectNodeOptions);
 * ```
 *
 * @interface
 */
export type LoopDetectNodeOptions = z.input<typeof loopDetectNodeOptionsSchema>;

function logged(log: GuardStreamEvent[]): { guardLog?: GuardStreamEvent[] } {
  return log.length > 0 ? { guardLog: log } : {};
}

/**
 * A node for custom graphs, after the model: the safety limits and the loop check. It routes with a `Command`: to
 * `routes.exit` with a final AI message that says what stopped the run, else to `routes.next` when the model called
 * tools, else to `routes.done`. Its memory is the `loopGuard` channel. Add it with its `ends`.
 *
 * @example
 * ```ts
 * const graph = new StateGraph(GuardMessagesState)
 *   .addNode("agent", callModel)
 *   .addNode("loop_guard", loopDetectNode({ maxIterations: 30 }), { ends: ["tools", END] })
 *   .addNode("tools", new GuardedToolNode(tools))
 *   .addEdge(START, "agent")
 *   .addEdge("agent", "loop_guard")
 *   .addEdge("tools", "agent")
 *   .compile();
 * ```
 */
export function loopDetectNode(options: LoopDetectNodeOptions = {}) {
  const { routes = {}, ...rest } = parseOptions(loopDetectNodeOptionsSchema, options, "loop-detection");
  const hook = graphLoopHook(loopGuardSettings(rest));
  const { exit = END, next = "tools", done = END } = routes;
  return async (state: LoopGraphState, config?: LangGraphRunnableConfig): Promise<Command> => {
    const result = await hook(state, config);
    if (result === undefined) return new Command({ goto: done });
    const { messages, loopGuard, guardLog } = result;
    if (messages !== undefined)
      return new Command({ goto: exit, update: { loopGuard, messages, ...logged(guardLog ?? []) } });
    return new Command({ goto: result.continues ? next : done, update: { loopGuard } });
  };
}

/**
 * The same guard as a `postModelHook` for createReactAgent: it writes the `loopGuard` channel, and when a limit
 * or a loop stops the run it answers the pending tool calls with error ToolMessages and adds a final AI message,
 * so the agent ends there.
 *
 * @example
 * ```ts
 * const agent = createReactAgent({
 *   llm,
 *   tools: new GuardedToolNode(tools),
 *   stateSchema: GuardMessagesState,
 *   postModelHook: loopDetectHook({ maxIterations: 30, loopThreshold: 0.9 }),
 * });
 * ```
 */
export function loopDetectHook(options: LoopDetectOptions = {}) {
  const hook = graphLoopHook(resolveLoopDetectOptions(options));
  return async (
    state: LoopGraphState,
    config?: LangGraphRunnableConfig,
  ): Promise<{
    /** The loop guard's new state. */
    loopGuard?: LoopState;
    /** When the run stops: answers to the response's tool calls ("Not run") and the stop message. */
    messages?: BaseMessage[];
    /** The stop's guard event, for the `guardLog` channel. */
    guardLog?: GuardStreamEvent[];
  }> => {
    const result = await hook(state, config);
    if (result === undefined) return {};
    const { messages, loopGuard, guardLog } = result;
    return messages === undefined ? { loopGuard } : { loopGuard, messages, ...logged(guardLog ?? []) };
  };
}

interface LoopHookResult {
  loopGuard: LoopState;
  continues: boolean;
  messages?: BaseMessage[];
  guardLog?: GuardStreamEvent[];
}

/** The loop guard's turn in a graph, right after the model: the limits and the loop check, then the step budget. */
function graphLoopHook(settings: LoopGuardSettings) {
  const turn = loopGuardTurn(settings);
  const budget = hookBudget();
  return async (state: LoopGraphState, config?: LangGraphRunnableConfig): Promise<LoopHookResult | undefined> => {
    const result = turn(state, config);
    if (result === undefined) return undefined;
    const base: LoopHookResult = { loopGuard: result.state, continues: result.continues };
    if (result.messages !== undefined && result.stop !== null) {
      // A limit that asks: a person may let the run go on (the hook runs again on resume and asks nothing new).
      const more = offer(result.stop, settings.ask);
      const granted = more === undefined ? undefined : askToGoOn(result.stop, more);
      if (granted !== undefined) return { ...base, loopGuard: raiseLimit(result.state, result.stop, granted) };
      return {
        ...base,
        messages: await endAtHook(result.messages, state.messages ?? [], settings.wrapUp),
        guardLog: result.log,
      };
    }
    const ending = await endIfOutOfSteps(budget, state.messages ?? [], config, settings);
    return ending === undefined ? base : { ...base, messages: ending.messages, guardLog: ending.log };
  };
}
