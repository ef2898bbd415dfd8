import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { Command, END, interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ToolCallDecision } from "../core/decide.js";
import { endExplanation, notRunAnswer, userQuestion } from "../core/escalation.js";
import { type GuardEvent, reduceToolGuard, type ToolGuardState } from "../core/state.js";
import { lastAIMessageIndex } from "./messages.js";
import { type GuardArtifact, type GuardedToolNode, GuardStateMissingError } from "./tool-node.js";

/**
 * The value of the interrupt raised at escalation level 3: what a person needs to decide how the agent goes on.
 * Find it in `(await graph.getState(config)).tasks[i].interrupts[j].value`, or in the `__interrupt__` of an
 * `invoke` result.
 *
 * @example
 * ```ts
 * const snapshot = await graph.getState(config);
 * const ask = snapshot.tasks.flatMap((t) => t.interrupts).find((i) => isEscalationInterrupt(i.value))
 *   ?.value as EscalationInterrupt;
 * console.log(ask.question, ask.tool, ask.attempts);
 * ```
 */
export interface EscalationInterrupt {
  type: "langgraph-guards/escalation";
  level: 3;
  /** What the agent asks the person. */
  question: string;
  /** The tool that keeps being repeated, and its arguments. */
  tool: string;
  args: unknown;
  /** Strikes so far: blocked repeats in this thread, this one included. */
  attempts: number;
  /** The previous result of the repeated call, when recorded. */
  previousResult?: { ok: boolean; text: string } | undefined;
  /** Every pending tool call of the response (none of them runs). */
  calls: { id?: string | undefined; name: string; args: unknown }[];
  /** How to answer: `Command({ resume })` with one of {@link EscalationResume}. */
  howToAnswer: string;
}

/**
 * A person's answer at level 3, passed as `new Command({ resume })`: a text for the model (the strikes stay), or an
 * object whose `action` also says what happens next: `"continue"` (default) gives `answer` to the model, `"reset"`
 * gives it and forgets the strikes, `"end"` ends the run (with `answer` as the reason).
 *
 * @example
 * ```ts
 * await graph.invoke(new Command({ resume: { answer: "Install pygame first.", action: "reset" } }), config);
 * ```
 */
export type EscalationResume = string | { answer?: string; action?: "continue" | "reset" | "end" };

/**
 * Whether an interrupt value is the escalation's.
 *
 * @example
 * ```ts
 * result.__interrupt__?.some((i) => isEscalationInterrupt(i.value)); // a person is asked
 * ```
 */
export function isEscalationInterrupt(value: unknown): value is EscalationInterrupt {
  return (
    typeof value === "object" && value !== null && (value as { type?: unknown }).type === "langgraph-guards/escalation"
  );
}

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

interface EscalationGraphState {
  messages: BaseMessage[];
  toolGuard?: ToolGuardState;
}

/** What the hook decided for the response. */
type Outcome =
  | { kind: "pass"; events: GuardEvent[] }
  | { kind: "answered"; events: GuardEvent[]; messages: BaseMessage[] }
  | { kind: "ended"; events: GuardEvent[]; messages: BaseMessage[] };

function hasCheckpointer(config: LangGraphRunnableConfig): boolean {
  return Boolean((config.configurable as Record<string, unknown> | undefined)?.__pregel_checkpointer);
}

function parseResume(value: unknown): { answer: string; action: "continue" | "reset" | "end" } {
  if (typeof value === "string") return { answer: value, action: "continue" };
  if (typeof value === "object" && value !== null) {
    const { answer, action } = value as { answer?: unknown; action?: unknown };
    const act = action === "reset" || action === "end" ? action : "continue";
    return { answer: typeof answer === "string" ? answer : "", action: act };
  }
  return { answer: value === undefined || value === null ? "" : String(value), action: "continue" };
}

function answerCalls(
  calls: ToolCall[],
  decisions: ToolCallDecision[],
  content: (decision: ToolCallDecision) => string,
  artifact: (decision: ToolCallDecision) => Partial<GuardArtifact>,
): ToolMessage[] {
  return calls.map((call, i) => {
    const decision = decisions[i] as ToolCallDecision;
    const guard = decision.allowed
      ? { stopped: true, kind: "escalation" }
      : {
          blocked: true,
          rule: decision.rule,
          count: decision.count,
          message: decision.message ?? "",
          escalation: decision.escalation,
          strikes: decision.strikes,
          ...artifact(decision),
        };
    return new ToolMessage({
      status: "error",
      name: call.name,
      tool_call_id: call.id ?? "",
      content: content(decision),
      artifact: { guard },
    });
  });
}

/** The one decision procedure of the hook and the node. */
function decide<T>(
  toolNode: GuardedToolNode<T>,
  state: EscalationGraphState,
  config: LangGraphRunnableConfig,
  options: EscalationHookOptions,
): Outcome {
  const guard = state.toolGuard;
  if (guard === undefined) throw new GuardStateMissingError();
  const messages = state.messages ?? [];
  const events: GuardEvent[] = [];
  let current = guard;

  // A run ended at level 4 and a person wrote since: they have taken over, the strikes start again.
  const endedBy = guard.escalation?.endedBy;
  if (endedBy) {
    const at = messages.findIndex((m) => m.id === endedBy);
    if (at < 0 || messages.slice(at + 1).some((m) => m.getType() === "human")) {
      events.push({ type: "forgive" });
      current = reduceToolGuard(current, [{ type: "forgive" }]);
    }
  }

  const plan = toolNode.planCalls({ ...state, toolGuard: current }, config);
  const stop = plan.turn.stop;
  if (stop === undefined) return { kind: "pass", events };

  // Level 3 or 4: none of the response's calls runs; the hook answers each of them.
  const top = stop.decision;
  const written = [...events, ...stop.events];
  const previousResult = top.previousResult;
  const attempts = stop.strikes;
  const end = (endedByUser?: { answer: string }): Outcome => {
    const id = randomUUID();
    const text = endExplanation({
      tool: top.call.name,
      args: top.call.args,
      strikes: attempts,
      previousResult,
      alsoBlocked: current.escalation?.blocked,
      endedByUser,
    });
    const notRun = answerCalls(
      plan.calls,
      plan.decisions,
      () => notRunAnswer(top.call.name, attempts, endedByUser !== undefined),
      () => ({ escalation: 4 }),
    );
    const final = new AIMessage({
      id,
      content: text,
      response_metadata: { guard: { kind: "escalation", level: 4, tool: top.call.name, strikes: attempts } },
    });
    return { kind: "ended", events: [...written, { type: "end", by: id }], messages: [...notRun, final] };
  };
  if (stop.level >= 4 || options.interrupt === false || !hasCheckpointer(config)) return end();

  const question = userQuestion(top.call.name, attempts);
  const payload: EscalationInterrupt = {
    type: "langgraph-guards/escalation",
    level: 3,
    question,
    tool: top.call.name,
    args: top.call.args,
    attempts,
    previousResult,
    calls: plan.calls.map((c) => ({ id: c.id, name: c.name, args: c.args })),
    howToAnswer:
      'Resume with new Command({ resume: "guidance for the agent" }), or { answer, action: "continue" | "reset" | "end" }.',
  };
  const reply = parseResume(interrupt(payload));
  if (reply.action === "end") {
    return end({ answer: reply.answer });
  }
  const said = reply.answer.trim() === "" ? "(no answer)" : reply.answer;
  const answered = answerCalls(
    plan.calls,
    plan.decisions,
    (d) =>
      d.allowed
        ? `Not run: automatic execution was stopped to ask the user. The user answered:\n${said}`
        : `${question}\n\nThe user answered:\n${said}`,
    () => ({ escalation: 3, answer: said }),
  );
  const after: GuardEvent[] = reply.action === "reset" ? [{ type: "forgive" }] : [{ type: "acknowledge" }];
  return { kind: "answered", events: [...written, ...after], messages: answered };
}

/**
 * Escalation levels 3 and 4 (seed 003) as a createReactAgent `postModelHook`, for the calls a
 * {@link GuardedToolNode} would block: it looks at the model's response before the tools run, with the same
 * decisions the node makes. Levels 1 and 2 are the node's feedback (ask what will be different, then explicit
 * options). At level 3 it stops and asks a person with `interrupt()` (resume with `Command({ resume })`, see
 * {@link EscalationResume}); the answer goes to the model as the result of the blocked calls. At level 4 (or at
 * level 3 without a checkpointer) it ends the run with an AI message that says why. Every tool call it holds back
 * gets exactly one ToolMessage, so the history stays valid for every provider. A human message after a run ended
 * at level 4 forgives the strikes.
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
  return async (
    state: EscalationGraphState,
    config: LangGraphRunnableConfig,
  ): Promise<{ messages?: BaseMessage[]; toolGuard?: GuardEvent[] }> => {
    const outcome = decide(toolNode, state, config, options);
    if (outcome.kind === "pass") return outcome.events.length > 0 ? { toolGuard: outcome.events } : {};
    return { messages: outcome.messages, toolGuard: outcome.events };
  };
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
  const model = options.model ?? "agent";
  const next = options.next ?? "tools";
  const done = options.done ?? END;
  const exit = options.exit ?? END;
  return async (state: EscalationGraphState, config: LangGraphRunnableConfig): Promise<Command> => {
    const outcome = decide(toolNode, state, config, options);
    const update = outcome.events.length > 0 ? { toolGuard: outcome.events } : {};
    if (outcome.kind === "ended") return new Command({ goto: exit, update: { ...update, messages: outcome.messages } });
    if (outcome.kind === "answered") {
      return new Command({ goto: model, update: { ...update, messages: outcome.messages } });
    }
    const messages = state.messages ?? [];
    const last = messages[lastAIMessageIndex(messages)] as AIMessage | undefined;
    return new Command({ goto: (last?.tool_calls ?? []).length > 0 ? next : done, update });
  };
}
