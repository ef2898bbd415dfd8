import type { BaseMessage } from "@langchain/core/messages";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { Command, StateSchema } from "@langchain/langgraph";
import { z } from "zod/v4";
import { defineMiddleware } from "../common/agent/define.js";
import { agentFieldOf } from "../common/channel.js";
import { type GuardLog, type GuardStreamEvent, guardLogChannel } from "../common/events/stream-events.js";
import { parseOptions } from "../common/options.js";
import { withStepBudget } from "../run-end/stack.js";
import { watchSubAgents } from "../run-end/sub-agents.js";
import { isWrapUpOption, type WrapUpOption } from "../run-end/wrap-up.js";
import { handlerOutput } from "./answers.js";
import { resolveToolGuardOptions, type ToolGuardOptions } from "./core/options.js";
import {
  emptyToolGuardState,
  type GuardEvent,
  type ToolGuardState,
  type ToolGuardUpdate,
  toolGuardChannel,
} from "./core/state.js";
import { GuardModelCalls } from "./model-call.js";
import { type AgentTool, ToolTraits } from "./traits.js";
import { emptyTurnRecord, openAfterModel, SplitTurns, type TurnEnv, type TurnRecord } from "./turn.js";

/**
 * Options of {@link guardMiddleware}: the tool node's guard options, plus whether level 3 asks a person.
 *
 * @example
 * ```ts
 * guardMiddleware({ repetitionThreshold: 4, escalation: { levelStrikes: [1, 2, 3, 4] } } satisfies GuardMiddlewareOptions);
 * ```
 */
export interface GuardMiddlewareOptions extends ToolGuardOptions {
  /**
   * Ask a person at escalation level 3 with `interrupt()` (default true). Without a checkpointer, or with `false`,
   * level 3 ends the run as level 4 does.
   */
  interrupt?: boolean;
  /**
   * How the run's final message is written when the guards end it (level 4, or LangGraph's step budget): `"model"`
   * (default) by one last call of the agent's model with the tools off, asked what was done, what failed and what is
   * left; `{ model }` by the chat model given; `"canned"` the guards' own message. The canned message is also the
   * fallback when that call fails or still calls tools, or when the step budget has no room for it.
   */
  wrapUp?: WrapUpOption;
  /**
   * The agent's tools: the list given to `createAgent` (with those of other middleware, such as `fileToolsMiddleware`),
   * or their names. The guards read from them the names offered in the level-2 options ("use another tool: …") and in
   * the answer to a call of a tool the agent does not have, each tool's `readOnlyHint` and whether it serves repeats
   * from a cache (the file tools); a name alone gives only the name. Given, they are read once. Default: learned from
   * the first model request (createAgent shows a middleware the tools only there), each called tool when it is
   * called, and the next request again after a tool not seen was called. A middleware shared by agents with other
   * tools learns each agent's tools as they are called; give `agentTools` to have them all from the start.
   */
  agentTools?: readonly AgentTool[];
}

const middlewareOptionsSchema = z.strictObject({
  interrupt: z.boolean().optional(),
  wrapUp: z.custom<WrapUpOption>(isWrapUpOption, 'expected "model", "canned" or { model } (a chat model)').optional(),
  agentTools: z.array(z.union([z.string(), z.looseObject({ name: z.string() })])).optional(),
});

const stateSchema = new StateSchema({
  /** The tool-call guards' state, per thread. */
  toolGuard: agentFieldOf<ToolGuardState, ToolGuardUpdate>(toolGuardChannel),
  /** Guard events, counted and the most recent kept (shared with the other middleware). */
  guardLog: agentFieldOf(guardLogChannel),
  /** The turn `afterModel` planned, for `wrapToolCall` (the underscore keeps it out of the agent's input/output). */
  _guardPending: agentFieldOf<TurnRecord, TurnRecord>({ empty: emptyTurnRecord, reduce: (_current, update) => update }),
});

/** createAgent types a hook's update as the channels' values; the `toolGuard` and `guardLog` reducers take events. */
function update<U extends { toolGuard: GuardEvent[]; guardLog: GuardStreamEvent[] }>(
  u: U,
): Omit<U, "toolGuard" | "guardLog"> & { toolGuard: ToolGuardState; guardLog: GuardLog } {
  return u as unknown as Omit<U, "toolGuard" | "guardLog"> & { toolGuard: ToolGuardState; guardLog: GuardLog };
}

/** `afterModel`: opens the response's turn; stops the run, or leaves its calls to `wrapToolCall`. */
function afterModel(
  state: { messages: unknown; toolGuard: ToolGuardState },
  env: TurnEnv,
  ask: boolean,
  calls: GuardModelCalls,
  turns: SplitTurns,
) {
  const { turn, forgiven } = openAfterModel(state.toolGuard, state.messages as BaseMessage[], env);
  if (turn.calls.length === 0) return forgiven.length > 0 ? update({ toolGuard: forgiven, guardLog: [] }) : undefined;
  const stop = turn.stop;
  if (stop === undefined) {
    // Blocked calls with an id are answered in wrapToolCall, not here: a later afterModel (toolCallLimitMiddleware)
    // answers calls without looking for earlier answers, and the tool node skips calls answered already.
    const { events, answers, record } = turn.split();
    const quiet = events.length === 0 && answers.length === 0 && turn.log.length === 0 && forgiven.length === 0;
    if (quiet && turns.keep(turn, record)) return undefined;
    return update({
      messages: answers,
      toolGuard: [...forgiven, ...events],
      guardLog: turn.log,
      _guardPending: record,
    });
  }
  const outcome = turn.halt(stop, ask, forgiven);
  const { messages: said, record, jumpTo } = calls.afterStop(outcome);
  return update({ messages: said, toolGuard: outcome.events, guardLog: outcome.log, _guardPending: record, jumpTo });
}

type ToolCallState = { toolGuard?: ToolGuardState; messages?: BaseMessage[]; _guardPending?: TurnRecord };

/** `wrapToolCall`: the turn resumed for this call, and the call answered by it. */
async function wrapToolCall(
  request: { toolCall: ToolCall; state: unknown; tool?: unknown },
  handler: () => ToolMessage | Command | Promise<ToolMessage | Command>,
  env: TurnEnv,
  turns: SplitTurns,
): Promise<ToolMessage | Command> {
  const state = request.state as ToolCallState;
  const guard = state.toolGuard ?? emptyToolGuardState();
  const turn = turns.resume(request.toolCall, state._guardPending, guard, state.messages ?? [], env);
  const unknown = request.tool === undefined ? env.context.toolNames : undefined;
  const run = () => handlerOutput(handler, request.toolCall, unknown);
  if (turn === undefined) return watchSubAgents(request.toolCall.id, run);
  const answer = await turn.answer(0, run);
  const own = turn.update();
  if (ToolMessage.isInstance(answer)) return new Command({ update: { messages: [answer], ...own } });
  const body = answer.update;
  if (body === undefined || (typeof body === "object" && !Array.isArray(body))) {
    return new Command({ ...answer, update: { ...(body ?? {}), toolGuard: own.toolGuard } });
  }
  return answer;
}

/**
 * The tool-call guards as createAgent middleware, deciding exactly as {@link langgraph-guards!GuardedToolNode} with
 * {@link langgraph-guards!escalationHook} does: the consecutive, threshold and redundant rules block calls with feedback, strikes
 * escalate, at level 3 a person is asked with `interrupt()` (with a checkpointer) and at level 4 the run ends with a
 * message that says why. Guard state lives in the middleware's `toolGuard` channel, so the checkpointer keeps it per
 * thread. Options are validated here.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { MemorySaver } from "@langchain/langgraph";
 * import { guardMiddleware } from "langgraph-guards/middleware";
 *
 * const agent = createAgent({ model, tools, middleware: [guardMiddleware()], checkpointer: new MemorySaver() });
 * ```
 */
export function guardMiddleware(options: GuardMiddlewareOptions = {}) {
  const { interrupt, agentTools, wrapUp, ...guardOptions } = options;
  parseOptions(middlewareOptionsSchema, { interrupt, agentTools, wrapUp }, "guardMiddleware");
  const resolved = resolveToolGuardOptions(guardOptions);
  const traits = new ToolTraits(resolved);
  if (agentTools !== undefined) traits.learn(agentTools);
  const ask = interrupt !== false;
  const turns = new SplitTurns();
  const env = (runtime: unknown, state: unknown): TurnEnv => ({
    options: traits.options,
    context: traits.context((runtime as { configurable?: Record<string, unknown> } | undefined)?.configurable, state),
    host: runtime as TurnEnv["host"],
  });
  const calls = new GuardModelCalls(traits, agentTools, {
    events: resolved.feedback.events,
    wrapUp: wrapUp ?? "model",
  });
  const middleware = defineMiddleware({
    name: "GuardMiddleware",
    stateSchema,
    afterModel: {
      canJumpTo: ["end", "model"],
      hook: (state, runtime) => afterModel(state, env(runtime, state), ask, calls, turns),
    },
    wrapToolCall: (request, handler) => {
      calls.sawTool(request.tool);
      return wrapToolCall(request, () => handler(request), env(request.runtime, request.state), turns);
    },
  });
  return withStepBudget(calls.install(middleware), calls.budget);
}
