import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { RunnableToolLike } from "@langchain/core/runnables";
import type { DynamicTool, StructuredToolInterface } from "@langchain/core/tools";
import { Command, isCommand, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import type { ToolCallDecision } from "../core/decide.js";
import type { DecideContext, ToolCallInput } from "../core/detect.js";
import { missingHookMessage } from "../core/escalation.js";
import type { BlockRule } from "../core/messages.js";
import { type ResolvedToolGuardOptions, resolveToolGuardOptions, type ToolGuardOptions } from "../core/options.js";
import { canonicalJson, digest } from "../core/signature.js";
import type { GuardEvent, ToolGuardState } from "../core/state.js";
import { type CallOutcome, commitTurn, planTurn, type TurnPlan } from "../core/turn.js";
import { lastAIMessageIndex, messageText } from "./messages.js";

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
 * What a blocked call's ToolMessage carries in `artifact.guard` (never sent to the model).
 *
 * @example
 * ```ts
 * const guard = (message.artifact as { guard?: GuardArtifact } | undefined)?.guard;
 * if (guard?.blocked) console.log(`blocked (${guard.rule}), escalation ${guard.escalation}`);
 * ```
 */
export interface GuardArtifact {
  blocked: true;
  /** The rule the call broke. */
  rule: BlockRule;
  count: number;
  message: string;
  /** Escalation level of the block (1 ask, 2 options, 3 the user was asked, 4 the run ended); 0 when off. */
  escalation?: number | undefined;
  /** Strikes of the thread with this block. */
  strikes?: number | undefined;
  /** The call was held back with a reminder to acknowledge (no strike). */
  reminder?: boolean | undefined;
  /** At level 3: the person's answer given to the model. */
  answer?: string | undefined;
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

/**
 * Thrown when a {@link GuardedToolNode} runs in a graph whose state has no guard channels.
 *
 * @example
 * ```ts
 * // Thrown at the first run of a graph whose state lacks the guard channels:
 * createReactAgent({ llm, tools: new GuardedToolNode(tools) }); // missing stateSchema: GuardMessagesState
 * ```
 */
export class GuardStateMissingError extends Error {
  override readonly name = "GuardStateMissingError";
  constructor() {
    super(
      "GuardedToolNode needs the guard channels in the graph state, so that its memory is checkpointed with the " +
        "thread. With createReactAgent pass `stateSchema: GuardMessagesState`; in a custom graph spread " +
        "`GuardState.spec` into your Annotation.Root (or `guardStateSchema.shape` into your zod object).",
    );
  }
}

/**
 * Thrown by a {@link GuardedToolNode} when a response reaches escalation level 3 or 4 (the model repeated a blocked
 * call that many times) and nothing ahead of the node acted on it: the agent has no {@link escalationHook} (or
 * {@link escalationNode}). The node cannot stop the run by itself (in createReactAgent the tools always lead back to
 * the model), so it fails here, naming the missing piece, instead of letting the model loop until
 * `GraphRecursionError`.
 *
 * @example
 * ```ts
 * try {
 *   await agent.invoke({ messages: [{ role: "user", content: "Go" }] });
 * } catch (e) {
 *   if (e instanceof GuardEscalationError) console.error(e.tool, e.strikes); // add escalationHook(tools)
 * }
 * ```
 */
export class GuardEscalationError extends Error {
  override readonly name = "GuardEscalationError";
  constructor(
    /** The tool whose blocked call was repeated. */
    readonly tool: string,
    /** Strikes so far: blocked repeats without progress in between. */
    readonly strikes: number,
    /** The escalation level reached (3 ask a person, 4 end the run). */
    readonly level: number,
  ) {
    super(missingHookMessage(tool, strikes, level));
  }
}

type StateInput = { messages?: unknown; toolGuard?: ToolGuardState; lg_tool_call?: ToolCall } & Record<string, unknown>;

function readOnlyHintOf(tool: GuardableTool): boolean | undefined {
  const metadata = (tool as { metadata?: Record<string, unknown> }).metadata;
  if (!metadata) return undefined;
  const direct = metadata.readOnlyHint;
  if (typeof direct === "boolean") return direct;
  const annotations = metadata.annotations as Record<string, unknown> | undefined;
  return typeof annotations?.readOnlyHint === "boolean" ? annotations.readOnlyHint : undefined;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((block) =>
        typeof block === "string"
          ? block
          : typeof (block as { text?: unknown })?.text === "string"
            ? (block as { text: string }).text
            : canonicalJson(block),
      )
      .join("\n");
  }
  return canonicalJson(content);
}

/** A Command's outcome: its own ToolMessage for this call when it has one, else the update as a whole. */
function commandOutcome(command: Command, callId: string | undefined): { ok: boolean; text: string } {
  const update = command.update as { messages?: unknown } | undefined;
  const messages = Array.isArray(update?.messages) ? update.messages : [];
  const own = messages.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === callId);
  if (own !== undefined) return { ok: own.status !== "error", text: textOf(own.content) };
  return { ok: true, text: `[Command] ${canonicalJson(command.update ?? null)}` };
}

function toInput(call: ToolCall): ToolCallInput {
  return { name: call.name, args: call.args, id: call.id };
}

/**
 * A drop-in `ToolNode` that guards every tool call before it runs: level 1 blocks a call identical to the
 * previous one, level 2 a call repeated `repetitionThreshold` times in the recent window, level 3 a read-only
 * call that already succeeded and whose result is still valid. A blocked call gets one error ToolMessage (same
 * `tool_call_id` and `name`) that tells the model why, with the arguments and the previous result; an allowed
 * call runs as in `ToolNode` and its outcome is recorded. The guards' memory lives in the `toolGuard` channel,
 * so a checkpointer persists it per thread.
 *
 * Switch the guards off for one run with `config.configurable.guards = false`, or watch without blocking with
 * `mode: "observe"`.
 *
 * Levels 1 and 2 of the escalation are the node's feedback; levels 3 (ask a person) and 4 (end the run) need
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
 * import { GuardedToolNode, GuardMessagesState } from "langgraph-guards";
 *
 * const agent = createReactAgent({
 *   llm,
 *   tools: new GuardedToolNode([readFile, writeFile], { repetitionThreshold: 3, root: "/repo" }),
 *   stateSchema: GuardMessagesState,
 *   checkpointer: new MemorySaver(),
 * });
 * ```
 */
export class GuardedToolNode<T = Record<string, never>> extends ToolNode<T> {
  /** The validated options with their defaults. */
  readonly guardOptions: ResolvedToolGuardOptions;
  private readonly readOnlyHints: Record<string, boolean>;

  constructor(tools: GuardableTool[], options: GuardedToolNodeOptions = {}) {
    const { name, tags, handleToolErrors, ...guardOptions } = options;
    const resolved = resolveToolGuardOptions(guardOptions);
    super(tools, { name: name ?? "tools", tags, handleToolErrors });
    // A tool that serves repeats from its own cache (the file tools) answers a re-read cheaply and correctly,
    // with a reference to the earlier result: levels 1 and 3 would only get in the way (level 2 still stops
    // loops). An explicit per-tool setting still wins.
    for (const t of tools) {
      const meta = (t as { metadata?: { langgraphGuards?: { servesRepeats?: boolean } } }).metadata;
      if (meta?.langgraphGuards?.servesRepeats) {
        const own = resolved.tools[t.name];
        resolved.tools[t.name] = {
          ...own,
          consecutive: own?.consecutive ?? false,
          redundancy: own?.redundancy ?? false,
        };
      }
    }
    this.guardOptions = resolved;
    this.readOnlyHints = Object.create(null) as Record<string, boolean>;
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
   * if (plan.decisions.some((d) => (d.escalation ?? 0) >= 3)) console.log("the user will be asked");
   * ```
   */
  planCalls(input: unknown, config: LangGraphRunnableConfig = {}): GuardPlan {
    if (Array.isArray(input) || input === null || typeof input !== "object") throw new GuardStateMissingError();
    const state = input as StateInput;
    const guardState = state.toolGuard;
    if (guardState === undefined) throw new GuardStateMissingError();
    const { lg_tool_call: single, ...rest } = state;
    const messages = Array.isArray(rest.messages) ? (rest.messages as BaseMessage[]) : [];
    const message = this.lastAIMessage(messages);
    if (single === undefined && message === undefined)
      throw new Error("GuardedToolNode only accepts AIMessages as input.");
    const siblings = message?.tool_calls ?? [];
    let calls: ToolCall[];
    let planned: ToolCall[];
    let indices: number[];
    if (single !== undefined) {
      // createReactAgent v2 sends each call to its own task: decide the calls before it in the same AI message
      // too, so that parallel branches agree with what one node would have decided.
      const index = siblings.findIndex((c) => c.id !== undefined && c.id === single.id);
      calls = [single];
      planned = index >= 0 ? siblings : [single];
      indices = [Math.max(0, index)];
    } else {
      const answered = new Set(
        messages.filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id),
      );
      calls = siblings.filter((c) => c.id == null || !answered.has(c.id));
      planned = calls;
      indices = calls.map((_, i) => i);
    }
    const turn = planTurn(
      guardState,
      {
        id: message?.id ?? digest(canonicalJson(siblings.map((c) => c.id ?? c.name))),
        text: message === undefined ? "" : messageText(message),
        calls: planned.map(toInput),
        siblings: siblings.map(toInput),
      },
      this.guardOptions,
      this.context(config),
    );
    const decisions = indices.map((i) => turn.decisions[i] as ToolCallDecision);
    return { calls, decisions, turn, indices, message };
  }

  protected override async run(input: unknown, config: LangGraphRunnableConfig): Promise<T> {
    const { calls, decisions, turn, indices } = this.planCalls(input, config);
    if (turn.stop !== undefined) {
      const { decision, strikes, level } = turn.stop;
      throw new GuardEscalationError(decision.call.name, strikes, level);
    }
    const { lg_tool_call: _single, ...toolState } = input as StateInput;
    const results = await Promise.all(
      decisions.map((decision, i) =>
        decision.allowed
          ? this.runTool(calls[i] as ToolCall, config, toolState)
          : this.blockedMessage(calls[i] as ToolCall, decision),
      ),
    );
    const outcomes: (CallOutcome | undefined)[] = [];
    for (const [i, result] of results.entries()) {
      if (!(decisions[i] as ToolCallDecision).allowed) continue;
      outcomes[indices[i] as number] = isCommand(result)
        ? commandOutcome(result, (calls[i] as ToolCall).id)
        : { ok: (result as ToolMessage).status !== "error", text: textOf((result as ToolMessage).content) };
    }
    return this.combine(
      results as (ToolMessage | Command)[],
      commitTurn(turn, outcomes, this.guardOptions, indices),
    ) as T;
  }

  private context(config: LangGraphRunnableConfig): Omit<DecideContext, "response" | "acknowledged"> {
    return {
      disabled: config.configurable?.guards === false,
      readOnlyHints: this.readOnlyHints,
      toolNames: this.tools.map((t) => t.name),
    };
  }

  private lastAIMessage(messages: unknown): AIMessage | undefined {
    const index = lastAIMessageIndex(messages);
    return index < 0 ? undefined : ((messages as BaseMessage[])[index] as AIMessage);
  }

  private blockedMessage(call: ToolCall, decision: ToolCallDecision): ToolMessage {
    const guard: GuardArtifact = {
      blocked: true,
      rule: decision.rule ?? "consecutive",
      count: decision.count,
      message: decision.message ?? "",
      escalation: decision.escalation,
      strikes: decision.strikes,
      reminder: decision.reminder,
    };
    return new ToolMessage({
      status: "error",
      name: call.name,
      tool_call_id: call.id ?? "",
      content: decision.content ?? guard.message,
      artifact: { guard },
    });
  }

  /** As `ToolNode` does: plain messages, or a list of updates when a tool returned a `Command`. */
  private combine(outputs: (ToolMessage | Command)[], events: GuardEvent[]): unknown {
    if (!outputs.some((o) => isCommand(o))) return { messages: outputs, toolGuard: events };
    const combined: unknown[] = [];
    let parentCommand: Command | null = null;
    for (const output of outputs) {
      if (isCommand(output)) {
        const goto = output.goto;
        if (output.graph === Command.PARENT && Array.isArray(goto) && goto.every((g) => typeof g === "object")) {
          if (parentCommand) (parentCommand.goto as unknown[]).push(...goto);
          else parentCommand = new Command({ graph: Command.PARENT, goto });
        } else combined.push(output);
      } else combined.push({ messages: [output] });
    }
    combined.push({ toolGuard: events });
    if (parentCommand) combined.push(parentCommand);
    return combined;
  }
}
