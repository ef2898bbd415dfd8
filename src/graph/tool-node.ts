import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { RunnableToolLike } from "@langchain/core/runnables";
import type { DynamicTool, StructuredToolInterface } from "@langchain/core/tools";
import { Command, isCommand, type LangGraphRunnableConfig, Send } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import type { ToolCallDecision } from "../core/decide.js";
import type { DecideContext } from "../core/detect.js";
import { type ResolvedToolGuardOptions, resolveToolGuardOptions, type ToolGuardOptions } from "../core/options.js";
import type { GuardEvent, ToolGuardState } from "../core/state.js";
import { type GuardStreamEvent, turnStreamEvents } from "../core/stream-events.js";
import {
  type CallOutcome,
  commitTurn,
  newCallDecisions,
  planTurn,
  planTurnFully,
  type TurnPlan,
} from "../core/turn.js";
import { blockArtifact, dedupe, guardAnswer, passesThrough, toolErrorAnswer } from "./answers.js";
import { GuardEscalationError, GuardStateMissingError } from "./errors.js";
import { isAI, lastAIMessageIndex, runMarker, turnInput, unansweredCalls } from "./messages.js";
import { emitGuardEvents } from "./stream.js";

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
  turn: TurnPlan;
  /** Where `calls` are in `turn.decisions`. */
  indices: number[];
  /** The AI message the calls belong to. */
  message: AIMessage | undefined;
}

type StateInput = { messages?: unknown; toolGuard?: ToolGuardState; lg_tool_call?: ToolCall } & Record<string, unknown>;

/** One invocation of the node: its plan, and the outcome of each call that ran (indexed like the plan). */
interface Invocation {
  plan: GuardPlan;
  outcomes: (CallOutcome | undefined)[];
  /** The conversation before the calls (where an earlier answer a dedupe note points at must be). */
  messages: BaseMessage[];
  /** The guard events of the invocation (its decisions', then each dedupe's as the calls return). */
  log: GuardStreamEvent[];
  /** The guards' state before the response. */
  state: ToolGuardState;
}

/** A tool's MCP-style `readOnlyHint` (in its metadata, or its metadata's `annotations`), if it has one. */
export function readOnlyHintOf(tool: unknown): boolean | undefined {
  const metadata = (tool as { metadata?: Record<string, unknown> }).metadata;
  if (!metadata) return undefined;
  const direct = metadata.readOnlyHint;
  if (typeof direct === "boolean") return direct;
  const annotations = metadata.annotations as Record<string, unknown> | undefined;
  return typeof annotations?.readOnlyHint === "boolean" ? annotations.readOnlyHint : undefined;
}

/**
 * The node's update from its calls' outputs, as `ToolNode.run` makes it for a state input: the ToolMessages under
 * `messages`; with Commands among them, a list of updates and Commands, the parent-graph Commands that only send
 * merged into one. The node runs the calls itself (the pending calls it planned) rather than through `ToolNode.run`,
 * which reads every message of the thread to find them, three times a turn.
 */
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

/** The node's update: the calls' (see {@link combineOutputs}) with the guard's events and stream events added. */
function withGuardUpdate(output: unknown, events: GuardEvent[], log: GuardStreamEvent[]): unknown {
  const own = log.length > 0 ? { toolGuard: events, guardLog: log } : { toolGuard: events };
  if (Array.isArray(output)) return [...output, own];
  const answers = (output as { messages?: unknown }).messages;
  if (answers !== undefined && log.length === 0 && Object.keys(output as object).length === 1) {
    return { messages: answers, toolGuard: events }; // the usual update, built without a spread
  }
  return { ...(output as object), ...own };
}

/**
 * A tool that serves repeats from its own cache (the file tools) answers a re-read cheaply and correctly, with a
 * reference to the earlier result: the consecutive and redundant rules would only get in the way (the threshold
 * rule still stops loops). An explicit per-tool setting still wins.
 */
export function letCachesServeRepeats(tools: readonly unknown[], options: ResolvedToolGuardOptions): void {
  for (const t of tools) {
    const meta = (t as { metadata?: { langgraphGuards?: { servesRepeats?: boolean } } }).metadata;
    if (!meta?.langgraphGuards?.servesRepeats) continue;
    const { name } = t as { name: string };
    const own = options.tools[name];
    options.tools[name] = { ...own, consecutive: own?.consecutive ?? false, redundancy: own?.redundancy ?? false };
  }
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
  private readonly readOnlyHints: Record<string, boolean> = Object.create(null);
  /**
   * The plan of each invocation in flight, by its config (ToolNode hands the same config to every call); removed when
   * the invocation ends. A `Map`, not a `WeakMap`: an insert into a `WeakMap` costs microseconds every turn.
   */
  private readonly invocations = new Map<object, Invocation>();
  /**
   * This node as `ToolNode.runTool` sees it when the node runs a tool: with `handleToolErrors` false, so that what
   * the tool threw reaches {@link GuardedToolNode.runTool} as it is (`ToolNode` reads `e.message` and `e.name`,
   * which fails on `undefined`, `null`, throwing getters…). Everything else is read through to the node itself.
   */
  private readonly rawErrors: this = Object.create(this, { handleToolErrors: { value: false } });

  constructor(tools: GuardableTool[], options: GuardedToolNodeOptions = {}) {
    const { name, tags, handleToolErrors, ...guardOptions } = options;
    const resolved = resolveToolGuardOptions(guardOptions);
    super(tools, { name: name ?? "tools", tags, handleToolErrors });
    letCachesServeRepeats(tools, resolved);
    this.guardOptions = resolved;
    for (const tool of tools) {
      const hint = readOnlyHintOf(tool);
      if (hint !== undefined) this.readOnlyHints[tool.name] = hint;
    }
  }

  /**
   * What the node would decide for the pending calls of the last AI message (or, in a createReactAgent v2 task,
   * for its one call), without running anything: the same decisions `run` acts on. The escalation hook uses it to
   * see a strike coming before the tools run.
   *
   * @example
   * ```ts
   * const plan = toolNode.planCalls(state, config);
   * if (plan.turn.stop) console.log("a person is asked, or the run ends");
   * ```
   */
  planCalls(input: unknown, config: LangGraphRunnableConfig = {}): GuardPlan {
    return this.plan(input, config, false);
  }

  /** {@link GuardedToolNode.planCalls}; `shortcutAsked`: the core's shortcut for new calls already said no. */
  private plan(input: unknown, config: LangGraphRunnableConfig, shortcutAsked: boolean): GuardPlan {
    if (Array.isArray(input) || input === null || typeof input !== "object") throw new GuardStateMissingError();
    const { lg_tool_call: single, messages: raw, toolGuard } = input as StateInput;
    if (toolGuard === undefined) throw new GuardStateMissingError();
    const messages = Array.isArray(raw) ? (raw as BaseMessage[]) : [];
    const index = lastAIMessageIndex(messages);
    const message = index < 0 ? undefined : (messages[index] as AIMessage);
    if (single === undefined && message === undefined)
      throw new Error("GuardedToolNode only accepts AIMessages as input.");
    const { calls, planned, indices } = this.pending(single, message, messages);
    const plan = shortcutAsked ? planTurnFully : planTurn;
    const turn = plan(toolGuard, turnInput(message, planned, messages), this.guardOptions, this.context(config));
    // The node's calls are the response's (their decisions as planned), a v2 task's one call is one of them.
    const decisions = single === undefined ? turn.decisions : indices.map((i) => turn.decisions[i] as ToolCallDecision);
    return { calls, decisions, turn, indices, message };
  }

  /**
   * Plans the response, then runs its pending calls as `ToolNode` does (a createReactAgent v2 task through
   * `ToolNode.run` itself): {@link GuardedToolNode.runTool} answers blocked calls and records what the others return;
   * the guard's events are added to the update. The usual turn, one new call, is run without a plan (see
   * `newCall`), to the same update.
   */
  protected override async run(input: unknown, config: LangGraphRunnableConfig): Promise<T> {
    const decision = this.newCall(input, config);
    if (decision) return this.runNewCall(decision, input as StateInput, config);
    const plan = this.plan(input, config, decision === null);
    const stop = plan.turn.stop;
    if (stop !== undefined) throw new GuardEscalationError(stop.decision.call.name, stop.strikes, stop.level);
    const log = emitGuardEvents(config, turnStreamEvents(plan.decisions), this.guardOptions.events);
    const { messages, toolGuard } = input as StateInput;
    const invocation: Invocation = {
      plan,
      outcomes: [],
      messages: Array.isArray(messages) ? messages : [],
      log,
      state: toolGuard as ToolGuardState,
    };
    this.invocations.set(config, invocation);
    let output: unknown;
    try {
      output =
        (input as StateInput).lg_tool_call !== undefined
          ? await super.run(input, config)
          : combineOutputs(await this.runTools(plan.calls, config, input));
    } finally {
      this.invocations.delete(config);
    }
    const events = commitTurn(plan.turn, invocation.outcomes, this.guardOptions, plan.indices);
    return withGuardUpdate(output, events, log) as T;
  }

  /**
   * The usual turn, decided without a plan: the last message is an AI message with one call, and the core's
   * shortcut for new calls ({@link newCallDecisions}, what {@link planTurn} tries first) proves it new. The call's
   * decision; `null` when the shortcut was asked and does not apply (an acknowledgment owed, a new run, a call the
   * state knows...), so the full procedure decides without asking it again; `undefined` when the turn is not of this
   * kind (several calls, a createReactAgent v2 task...).
   */
  private newCall(input: unknown, config: LangGraphRunnableConfig): ToolCallDecision | null | undefined {
    if (Array.isArray(input) || input === null || typeof input !== "object") return undefined;
    const { lg_tool_call: single, messages, toolGuard } = input as StateInput;
    if (single !== undefined || toolGuard === undefined || !Array.isArray(messages)) return undefined;
    const message: unknown = messages[messages.length - 1];
    if (!isAI(message) || message.tool_calls?.length !== 1) return undefined;
    const calls = message.tool_calls;
    const decisions = newCallDecisions(toolGuard, calls, runMarker(messages), this.guardOptions, this.context(config));
    return decisions === undefined ? null : decisions[0];
  }

  /**
   * Runs the call {@link GuardedToolNode.newCall} allowed and records it: what `run` does for a plan of that one
   * decision (nothing to block, no stream event of the decision), without the plan.
   */
  private async runNewCall(decision: ToolCallDecision, input: StateInput, config: LangGraphRunnableConfig): Promise<T> {
    const call = decision.call as ToolCall;
    // No invocation is registered for this config: `runTool` runs the call as `ToolNode` does (errors answered).
    const output = await this.runTool(call, config, input);
    const state = input.toolGuard as ToolGuardState;
    const own = { key: decision.key, tool: call.name };
    const messages = input.messages as BaseMessage[];
    const { answer, outcome, event } = dedupe(state, own, output, call.id, messages, this.guardOptions);
    const events = commitTurn({ decisions: [decision], turnEvents: [] }, [outcome], this.guardOptions);
    const log = event === undefined ? [] : emitGuardEvents(config, [event], this.guardOptions.events);
    return withGuardUpdate(combineOutputs([answer]), events, log) as T;
  }

  /** Runs the calls (through {@link GuardedToolNode.runTool}); one call without `Promise.all`'s extra steps. */
  private async runTools(
    calls: ToolCall[],
    config: LangGraphRunnableConfig,
    input: unknown,
  ): Promise<(ToolMessage | Command)[]> {
    if (calls.length === 1) return [await this.runTool(calls[0] as ToolCall, config, input)];
    return Promise.all(calls.map((call) => this.runTool(call, config, input)));
  }

  /** A blocked call is answered with its feedback; an allowed one runs as in `ToolNode` and its outcome is kept. */
  protected override runTool(
    call: ToolCall,
    config: LangGraphRunnableConfig,
    state: unknown,
  ): Promise<ToolMessage | Command> {
    const invocation = this.invocations.get(config);
    const at = invocation?.plan.calls.findIndex((c) => c === call || (c.id !== undefined && c.id === call.id)) ?? -1;
    if (invocation === undefined || at < 0) return this.runUnguarded(call, config, state);
    const decision = invocation.plan.decisions[at] as ToolCallDecision;
    if (!decision.allowed) {
      return Promise.resolve(guardAnswer(call, decision.content ?? decision.message ?? "", blockArtifact(decision)));
    }
    // A promise chain, not an async function, and one step for both outcomes: no step between the tool and the
    // node beyond ToolNode's own.
    return super.runTool.call(this.rawErrors, call, config, state).then(
      (output) => this.recordOutput(invocation, at, decision, call, config, output),
      (error: unknown) => this.recordOutput(invocation, at, decision, call, config, this.errorAnswer(call, error)),
    );
  }

  /** Records what an allowed call returned (its outcome, a dedupe's event) and gives the answer to send. */
  private recordOutput(
    invocation: Invocation,
    at: number,
    decision: ToolCallDecision,
    call: ToolCall,
    config: LangGraphRunnableConfig,
    output: ToolMessage | Command,
  ): ToolMessage | Command {
    const { plan, messages } = invocation;
    const own = { key: decision.key, tool: call.name };
    // The answers kept are those of the state before the response (planning changes none).
    const { answer, outcome, event } = dedupe(invocation.state, own, output, call.id, messages, this.guardOptions);
    invocation.outcomes[plan.indices[at] as number] = outcome;
    if (event !== undefined) invocation.log.push(...emitGuardEvents(config, [event], this.guardOptions.events));
    return answer;
  }

  /**
   * Runs the tool as `ToolNode` does, but answers whatever it throws (not only an `Error`: `undefined`, a string, an
   * object whose `message` getter throws, a Proxy…) with an error ToolMessage (see {@link GuardedToolNode.errorAnswer}).
   */
  private runUnguarded(
    call: ToolCall,
    config: LangGraphRunnableConfig,
    state: unknown,
  ): Promise<ToolMessage | Command> {
    return super.runTool
      .call(this.rawErrors, call, config, state)
      .then(undefined, (error: unknown) => this.errorAnswer(call, error));
  }

  /**
   * The answer to what a tool threw: `ToolNode`'s own content when the value has a message, else one that names the
   * tool and shows the value. Interrupts are thrown on; with `handleToolErrors: false` everything is.
   */
  private errorAnswer(call: ToolCall, error: unknown): ToolMessage {
    if (!this.handleToolErrors || passesThrough(error)) throw error;
    return toolErrorAnswer(call, error);
  }

  /** The calls this invocation answers, the calls planned with them, and where the former are in the latter. */
  private pending(single: ToolCall | undefined, message: AIMessage | undefined, messages: BaseMessage[]) {
    if (single !== undefined) {
      // createReactAgent v2 sends each call to its own task: decide the calls before it in the same AI message
      // too, so that parallel branches agree with what one node would have decided.
      const siblings = message?.tool_calls ?? [];
      const index = siblings.findIndex((c) => c.id !== undefined && c.id === single.id);
      return { calls: [single], planned: index >= 0 ? siblings : [single], indices: [Math.max(0, index)] };
    }
    const calls = message === undefined ? [] : unansweredCalls(message, messages);
    return { calls, planned: calls, indices: calls.map((_, i) => i) };
  }

  private context(config: LangGraphRunnableConfig): Omit<DecideContext, "response" | "acknowledged"> {
    return {
      disabled: config.configurable?.guards === false,
      readOnlyHints: this.readOnlyHints,
      toolNames: this.toolNames(),
    };
  }

  /** The names of the node's tools (listed again only when its tools change: `ToolNode` reads `tools` each call). */
  private toolNames(): readonly string[] {
    const tools = this.tools;
    const known = this.names;
    if (known === undefined || known.tools.length !== tools.length || known.tools.some((t, i) => t !== tools[i])) {
      this.names = { tools: tools.slice(), names: tools.map((t) => t.name) };
      return this.names.names;
    }
    return known.names;
  }

  private names: { tools: readonly unknown[]; names: string[] } | undefined;
}
