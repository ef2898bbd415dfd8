/** Escalation levels 3 and 4 in a graph: the createReactAgent post-model hook and the custom-graph node. */
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { Command, END, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod/v4";
import type { GuardStreamEvent } from "../common/events/stream-events.js";
import { lastAIMessageIndex } from "../common/messages.js";
import { parseOptions } from "../common/options.js";
import { endAtHook, endIfOutOfSteps, hookBudget } from "../run-end/hook.js";
import type { StepBudget } from "../run-end/invocations.js";
import { isWrapUpOption, type WrapUpOption } from "../run-end/wrap-up.js";
import type { GuardEvent, ToolGuardState } from "./core/state.js";
import { GuardStateMissingError } from "./errors.js";
import type { StopResult } from "./stop.js";
import { type GuardedToolNode, turnEnvOf } from "./tool-node.js";
import { openAfterModel } from "./turn.js";

const node = z.string().min(1, { error: "must be a non-empty node name" });
const hookOptionsSchema = z.strictObject({
  interrupt: z.boolean().optional(),
  wrapUp: z.custom<WrapUpOption>(isWrapUpOption, 'expected "model", "canned" or { model } (a chat model)').optional(),
});
const nodeOptionsSchema = hookOptionsSchema.extend({
  model: node.optional(),
  next: node.optional(),
  done: node.optional(),
  exit: node.optional(),
});

/**
 * Options of {@link escalationHook}.
 *
 * @example
 * ```ts
 * escalationHook(toolNode, { interrupt: false } satisfies EscalationHookOptions); // level 3 ends the run too
 * ```
 */
export interface EscalationHookOptions {
  /**
   * Ask a person at level 3 with `interrupt()` (default true). Without a checkpointer, or with `false`, level 3
   * ends the run as level 4 does.
   */
  interrupt?: boolean;
  /**
   * How the run's final message is written when the guards end it (level 4, or LangGraph's step budget would not
   * allow another turn): `{ model }` a chat model without tools, asked what was done, what failed and what is left;
   * `"model"` (default) or `"canned"` the guards' explanation (a hook has no model of its own). The canned message is
   * also the fallback when the model fails or still calls tools.
   */
  wrapUp?: WrapUpOption;
}

/**
 * Options of {@link escalationNode}: where it routes.
 *
 * @example
 * ```ts
 * escalationNode(toolNode, { model: "agent", next: "tools" } satisfies EscalationNodeOptions);
 * ```
 */
export interface EscalationNodeOptions extends EscalationHookOptions {
  /** The model node, where a person's answer goes (level 3). Default `"agent"`. */
  model?: string;
  /** Where the tool calls run. Default `"tools"`. */
  next?: string;
  /** Where to go when the model answered without tool calls. Default `END`. */
  done?: string;
  /** Where to go when the run ends at level 4. Default `END`. */
  exit?: string;
}

/**
 * The state the escalation hook and node read: the messages and the guard channel.
 *
 * @example
 * ```ts
 * const state: EscalationGraphState = { messages: [], toolGuard: emptyToolGuardState() };
 * ```
 */
export interface EscalationGraphState {
  /** The conversation. */
  messages: BaseMessage[];
  /** The tool-call guards' state (absent before the first guarded call). */
  toolGuard?: ToolGuardState;
}

/** The hook's and the node's decision: the tool node's own turn, opened after the model; then the step budget. */
async function decide<T>(
  toolNode: GuardedToolNode<T>,
  state: EscalationGraphState,
  config: LangGraphRunnableConfig,
  options: EscalationHookOptions,
  budget: StepBudget,
): Promise<StopResult> {
  if (state.toolGuard === undefined) throw new GuardStateMissingError();
  const env = turnEnvOf(toolNode, config, state, true); // the node reads the plan again
  const { turn, forgiven } = openAfterModel(state.toolGuard, state.messages ?? [], env);
  const stop = turn.stop;
  if (stop === undefined) {
    const ending = await endIfOutOfSteps(budget, state.messages ?? [], config, {
      wrapUp: options.wrapUp,
      events: env.options.feedback.events,
    });
    if (ending === undefined) return { kind: "pass", events: forgiven, log: [] };
    return { kind: "ended", events: forgiven, messages: ending.messages, log: ending.log };
  }
  const outcome = turn.halt(stop, options.interrupt !== false, forgiven);
  if (outcome.kind !== "ended" || outcome.messages === undefined) return outcome;
  return { ...outcome, messages: await endAtHook(outcome.messages, state.messages ?? [], options.wrapUp) };
}

function updateOf({ events, messages, log }: StopResult) {
  return {
    ...(messages ? { messages } : {}),
    ...(events.length > 0 ? { toolGuard: events } : {}),
    ...(log.length > 0 ? { guardLog: log } : {}),
  };
}

/**
 * Escalation levels 3 and 4 as a createReactAgent `postModelHook`, for the calls a {@link GuardedToolNode} would
 * block: it looks at the model's response before the tools run, with the same decisions the node makes. Levels 1
 * and 2 are the node's feedback (ask what will be different, then explicit options). At level 3 it stops and asks a
 * person with `interrupt()` (resume with `Command({ resume })`, see {@link EscalationResume}); the answer goes to
 * the model as the result of the blocked calls. At level 4 (or at level 3 without a checkpointer) it ends the run
 * with an AI message that says why. Every tool call it holds back gets exactly one ToolMessage, so the history stays
 * valid for every provider. A human message after a run ended at level 4 forgives the strikes.
 *
 * @example
 * ```ts
 * const tools = new GuardedToolNode([readFile, writeFile]);
 * const agent = createReactAgent({
 *   llm,
 *   tools,
 *   stateSchema: GuardMessagesState,
 *   postModelHook: escalationHook(tools),
 *   checkpointer: new MemorySaver(),
 * });
 * ```
 */
export function escalationHook<T>(toolNode: GuardedToolNode<T>, options: EscalationHookOptions = {}) {
  parseOptions(hookOptionsSchema, options, "escalationHook");
  const budget = hookBudget();
  return async (
    state: EscalationGraphState,
    config: LangGraphRunnableConfig,
  ): Promise<{
    /** Messages to add: answers to the response's tool calls when the run stops, asks or ends. */
    messages?: BaseMessage[];
    /** Events for the `toolGuard` channel. */
    toolGuard?: GuardEvent[];
    /** Guard events for the `guardLog` channel. */
    guardLog?: GuardStreamEvent[];
  }> => updateOf(await decide(toolNode, state, config, options, budget));
}

/**
 * The same escalation as a node for custom graphs, placed between the model and the tools. It routes with a
 * `Command`: to `next` (default `"tools"`) when the calls may go on to the tool node, to `model` (default
 * `"agent"`) with a person's answer at level 3, to `exit` (default `END`) when the run ends at level 4, and to
 * `done` (default `END`) when the model answered without tool calls. Add it with its `ends`.
 *
 * @example
 * ```ts
 * const tools = new GuardedToolNode(myTools);
 * const graph = new StateGraph(GuardMessagesState)
 *   .addNode("agent", callModel)
 *   .addNode("escalation", escalationNode(tools), { ends: ["tools", "agent", END] })
 *   .addNode("tools", tools)
 *   .addEdge(START, "agent")
 *   .addEdge("agent", "escalation")
 *   .addEdge("tools", "agent")
 *   .compile({ checkpointer: new MemorySaver() });
 * ```
 */
export function escalationNode<T>(toolNode: GuardedToolNode<T>, options: EscalationNodeOptions = {}) {
  parseOptions(nodeOptionsSchema, options, "escalationNode");
  const { model = "agent", next = "tools", done = END, exit = END } = options;
  const budget = hookBudget();
  return async (state: EscalationGraphState, config: LangGraphRunnableConfig): Promise<Command> => {
    const outcome = await decide(toolNode, state, config, options, budget);
    const update = updateOf(outcome);
    const { kind } = outcome;
    if (kind !== "pass") return new Command({ goto: kind === "ended" ? exit : model, update });
    const all = state.messages ?? [];
    const last = all[lastAIMessageIndex(all)] as AIMessage | undefined;
    return new Command({ goto: (last?.tool_calls ?? []).length > 0 ? next : done, update });
  };
}
