import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { RunnableToolLike } from "@langchain/core/runnables";
import type { DynamicTool, StructuredToolInterface } from "@langchain/core/tools";
import { Command, isCommand, type LangGraphRunnableConfig, Send } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { thrownAnswer } from "./answers.js";
import type { ToolCallDecision } from "./core/decide.js";
import { type ResolvedToolGuardOptions, resolveToolGuardOptions, type ToolGuardOptions } from "./core/options.js";
import type { TurnPlan } from "./core/plan.js";
import type { ToolGuardState } from "./core/state.js";
import { GuardEscalationError, GuardStateMissingError } from "./errors.js";
import { ToolTraits } from "./traits.js";
import { GuardedTurn, PlannedTurns, type TurnEnv } from "./turn.js";

/**
 * A tool a {@link GuardedToolNode} can run (the same kinds `ToolNode` accepts).
 *
 * @example
 * ```ts
 * const tools: GuardableTool[] = [readFile, writeFile];
 * ```
 */
export type GuardableTool = StructuredToolInterface | DynamicTool | RunnableToolLike;

/**
 * Options of {@link GuardedToolNode}: the guard options plus `ToolNode`'s own.
 *
 * @example
 * ```ts
 * new GuardedToolNode(tools, { root: "/repo", mode: "observe", handleToolErrors: true });
 * ```
 */
export interface GuardedToolNodeOptions extends ToolGuardOptions {
  /** Node name (as in `ToolNode`). */
  name?: string;
  /** Tags (as in `ToolNode`). */
  tags?: string[];
  /** Turn tool errors into error ToolMessages (default true, as in `ToolNode`). */
  handleToolErrors?: boolean;
}

/**
 * What {@link GuardedToolNode.planCalls} returns: the pending calls of the last AI message, the guards' decision
 * for each (nothing has run), and the plan of the whole response they belong to.
 *
 * @example
 * ```ts
 * const plan: GuardPlan = toolNode.planCalls(state, config);
 * plan.decisions.filter((d) => !d.allowed).length; // calls the node would block
 * if (plan.turn.stop) console.log("the run stops: level", plan.turn.stop.level);
 * ```
 */
export interface GuardPlan {
  /** The calls this node (or this createReactAgent v2 task) answers. */
  calls: ToolCall[];
  /** The decision for each of `calls`. */
  decisions: ToolCallDecision[];
  /** The plan of the response (in a v2 task: with its siblings), as the core made it. */
  turn: Pick<TurnPlan, "decisions" | "turnEvents" | "stop">;
  /** The AI message the calls belong to. */
  message: AIMessage | undefined;
}

/** Each node's tool traits and the plans of its turns. */
const traitsOf = new WeakMap<GuardedToolNode<unknown>, { traits: ToolTraits; plans: PlannedTurns }>();

/**
 * What `node` decides its turns with in a run (the escalation hook and node open the same turn). `keepPlan`: the
 * plan is read again (the escalation hook's, by the node; a createReactAgent v2 task's, by its siblings' tasks).
 */
export function turnEnvOf<T>(
  node: GuardedToolNode<T>,
  config: LangGraphRunnableConfig,
  state: unknown,
  keepPlan: boolean,
): TurnEnv {
  const { traits, plans } = traitsOf.get(node as GuardedToolNode<unknown>) as {
    traits: ToolTraits;
    plans: PlannedTurns;
  };
  traits.learn(node.tools); // learned again when they changed
  const context = traits.context(config.configurable, state);
  return { options: traits.options, context, host: config, plans, keepPlan };
}

/** A `ToolNode` that lets a throw reach the node as is (its own handling reads `e.message`, even of `undefined`). */
class RawToolRunner extends ToolNode {
  constructor() {
    super([], { handleToolErrors: false });
  }

  runRaw(tools: ToolNode["tools"], call: ToolCall, config: LangGraphRunnableConfig, state: unknown) {
    this.tools = tools; // the node's tools as they are now (a user may replace them)
    return this.runTool(call, config, state);
  }
}

type StateInput = { messages?: unknown; toolGuard?: ToolGuardState; lg_tool_call?: ToolCall } & Record<string, unknown>;

function withoutToolCall({ lg_tool_call: _call, ...state }: StateInput): Record<string, unknown> {
  return state;
}

/** The calls' outputs as `ToolNode.run` combines them (with Commands: a list, parent-graph `Send`s merged in one). */
function combineOutputs(outputs: (ToolMessage | Command)[]): unknown {
  if (!outputs.some(isCommand)) return { messages: outputs };
  const combined: unknown[] = [];
  let parent: Command | undefined;
  for (const output of outputs) {
    if (!isCommand(output)) {
      combined.push({ messages: [output] });
      continue;
    }
    const goto = output.goto;
    const sendsOnly = Array.isArray(goto) && goto.every((send) => send instanceof Send);
    if (output.graph !== Command.PARENT || !sendsOnly) {
      combined.push(output);
    } else if (parent !== undefined) {
      (parent.goto as Send[]).push(...(goto as Send[]));
    } else {
      parent = new Command({ graph: Command.PARENT, goto });
    }
  }
  if (parent !== undefined) combined.push(parent);
  return combined;
}

/** The node's update: the calls' (a new list or object, see {@link combineOutputs}) with the guard channels' added. */
function withGuardUpdate(output: unknown, own: { toolGuard: unknown; guardLog?: unknown }): unknown {
  if (!Array.isArray(output)) return Object.assign(output as object, own);
  output.push(own);
  return output;
}

/**
 * A drop-in `ToolNode` that guards every tool call before it runs: the consecutive rule blocks a call identical to
 * the previous one, the threshold rule a call repeated `repetitionThreshold` times in the recent window, the
 * redundant rule a read-only call that already succeeded and whose result is still valid. A blocked call gets one
 * error ToolMessage (same `tool_call_id` and `name`) that tells the model why, with the arguments and the previous
 * result; an allowed call runs as in `ToolNode` and its outcome is recorded. The guards' memory lives in the
 * `toolGuard` channel, so a checkpointer persists it per thread.
 *
 * Switch the guards off for one run with `config.configurable.guards = false`, or watch without blocking with
 * `mode: "observe"`.
 *
 * Escalation levels 1 and 2 are the node's feedback; levels 3 (ask a person) and 4 (end the run) need
 * {@link escalationHook} (createReactAgent) or {@link escalationNode} (custom graphs) ahead of the node: a node that
 * reaches them alone throws {@link GuardEscalationError} rather than let the model loop.
 *
 * @typeParam T - The update type the node declares; the default fits any graph's state, so a node kept in a
 *   variable can be added to a `StateGraph` and passed to `createReactAgent` without naming it.
 *
 * @example
 * ```ts
 * import { createReactAgent } from "@langchain/langgraph/prebuilt";
 * import { MemorySaver } from "@langchain/langgraph";
 * import { escalationHook, GuardedToolNode, GuardMessagesState } from "langgraph-guards";
 *
 * const tools = new GuardedToolNode([readFile, writeFile], { repetitionThreshold: 3, root: "/repo" });
 * const agent = createReactAgent({
 *   llm,
 *   tools,
 *   stateSchema: GuardMessagesState,
 *   postModelHook: escalationHook(tools),
 *   checkpointer: new MemorySaver(),
 * });
 * ```
 */
export class GuardedToolNode<T = Record<string, never>> extends ToolNode<T> {
  /** The validated options with their defaults. */
  readonly guardOptions: ResolvedToolGuardOptions;
  private readonly runner = new RawToolRunner();

  constructor(tools: GuardableTool[], options: GuardedToolNodeOptions = {}) {
    const { name, tags, handleToolErrors, ...guardOptions } = options;
    const resolved = resolveToolGuardOptions(guardOptions);
    super(tools, { name: name ?? "tools", tags, handleToolErrors });
    this.guardOptions = resolved;
    const traits = new ToolTraits(resolved);
    traits.learn(tools);
    traitsOf.set(this as GuardedToolNode<unknown>, { traits, plans: new PlannedTurns() });
  }

  /**
   * What the node would decide for the pending calls of the last AI message (or, in a createReactAgent v2 task,
   * for its one call), without running anything: the same decisions `run` acts on.
   *
   * @example
   * ```ts
   * const plan = toolNode.planCalls(state, config);
   * if (plan.turn.stop) console.log("a person is asked, or the run ends");
   * ```
   */
  planCalls(input: unknown, config: LangGraphRunnableConfig = {}): GuardPlan {
    const turn = this.open(input, config);
    const decisions = turn.decisions;
    return { calls: turn.calls as ToolCall[], decisions, turn: turn.responsePlan, message: turn.message };
  }

  /** The guarded turn of the state's last AI message (see {@link GuardedTurn}). */
  private open(input: unknown, config: LangGraphRunnableConfig): GuardedTurn {
    if (Array.isArray(input) || input === null || typeof input !== "object") throw new GuardStateMissingError();
    const { lg_tool_call: single, messages, toolGuard } = input as StateInput;
    if (toolGuard === undefined) throw new GuardStateMissingError();
    // A plan is kept only for a v2 task's siblings: nothing after the node reads it.
    const env = turnEnvOf(this, config, input, single !== undefined);
    const turn = GuardedTurn.open(toolGuard, Array.isArray(messages) ? messages : [], env, single);
    if (turn.message === undefined && single === undefined) {
      throw new Error("GuardedToolNode only accepts AIMessages as input.");
    }
    return turn;
  }

  /** Answers each call of the guarded turn (see `GuardedTurn.answer`); the guard channels' update added. */
  protected override async run(input: unknown, config: LangGraphRunnableConfig): Promise<T> {
    const turn = this.open(input, config);
    const stop = turn.stop;
    if (stop !== undefined) throw new GuardEscalationError(stop.decision.call.name, stop.strikes, stop.level);
    // In a createReactAgent v2 task the tools see the state without the call (copied only there: a rest spread
    // copies every channel of the state).
    const state = (input as StateInput).lg_tool_call === undefined ? input : withoutToolCall(input as StateInput);
    const outputs = await Promise.all(
      turn.calls.map((call, i) => turn.answer(i, () => this.runTool(call, config, state))),
    );
    return withGuardUpdate(combineOutputs(outputs), turn.update()) as T;
  }

  /** Runs the tool as `ToolNode` does, but answers whatever it throws with an error ToolMessage. Not guarded. */
  protected override runTool(
    call: ToolCall,
    config: LangGraphRunnableConfig,
    state: unknown,
  ): Promise<ToolMessage | Command> {
    return this.runner
      .runRaw(this.tools, call, config, state)
      .then(undefined, (error: unknown) => this.errorAnswer(call, error));
  }

  /** The answer to what a tool threw (see `thrownAnswer`); with `handleToolErrors: false` it is thrown on. */
  private errorAnswer(call: ToolCall, error: unknown): ToolMessage {
    if (!this.handleToolErrors) throw error;
    // ToolNode throws `Tool "<name>" not found.` for a tool it does not have.
    const names = this.tools.map((tool) => tool.name);
    return thrownAnswer(call, error, names.includes(call.name) ? undefined : names);
  }
}
