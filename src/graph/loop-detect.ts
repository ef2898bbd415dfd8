import { AIMessage, type BaseMessage, isAIMessage, ToolMessage } from "@langchain/core/messages";
import { Command, END, type LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  emptyLoopState,
  type LoopState,
  type LoopTurn,
  type ResolvedSafetyOptions,
  resolveSafetyOptions,
  type SafetyOptions,
  type StopReason,
  stepLoopGuard,
} from "../core/loop.js";
import { canonicalJson } from "../core/signature.js";
import { type GuardStreamEvent, stopStreamEvent } from "../core/stream-events.js";
import { guardAnswer } from "./answers.js";
import { isPersonMessage, lastAIMessageIndex, messageText, runMarker, unansweredCalls } from "./messages.js";
import { emitGuardEvents, type WriterHost } from "./stream.js";

type ToolCallLike = { id?: string; name: string; args: unknown };
type AIWithCalls = AIMessage & { tool_calls?: ToolCallLike[] };

/**
 * Options of {@link loopDetectNode} and {@link loopDetectHook}: the safety options plus how to read a turn.
 *
 * @example
 * ```ts
 * loopDetectHook({ maxIterations: 30, session: "thread" } satisfies LoopDetectOptions);
 * ```
 */
export interface LoopDetectOptions extends SafetyOptions {
  /** What "the output" of a turn is. Default {@link defaultTurnOutput}: the text plus the tool calls, canonical. */
  outputOf?: (message: AIMessage) => string;
  /**
   * Whether a turn failed, from the ToolMessages that answered its tool calls. Default: every one is an error
   * (tool errors and guard blocks alike).
   */
  isFailure?: (results: ToolMessage[]) => boolean;
  /**
   * What starts a new session (outputs, counters, clock and spending reset): `"human-message"` (default) a new
   * human message in the thread, `"thread"` never (the whole thread is one session).
   */
  session?: "human-message" | "thread";
  /** Write a guard event when a loop or a limit stops the run (custom stream and `guardLog`). Default true. */
  events?: boolean;
}

/**
 * Options of {@link loopDetectNode}.
 *
 * @example
 * ```ts
 * loopDetectNode({ exit: "summarize", next: "tools" } satisfies LoopDetectNodeOptions);
 * ```
 */
export interface LoopDetectNodeOptions extends LoopDetectOptions {
  /** Where to go when a limit or a loop stops the run. Default `END`. */
  exit?: string;
  /** Where to go when the model called tools and nothing stopped it. Default `"tools"`. */
  next?: string;
  /** Where to go when the model answered without tool calls. Default `END`. */
  done?: string;
}

/**
 * The default output of a turn: the AI message's text, then each tool call as `name(canonical JSON args)` (ids
 * left out: they differ every time).
 *
 * @example
 * ```ts
 * defaultTurnOutput(new AIMessage({ content: "Reading", tool_calls: [{ name: "read_file", args: { path: "a" }, id: "1" }] }));
 * // 'Reading\nread_file({"path":"a"})'
 * ```
 */
export function defaultTurnOutput(message: AIMessage): string {
  const text = messageText(message);
  const calls = ((message as AIWithCalls).tool_calls ?? []).map((c) => `${c.name}(${canonicalJson(c.args)})`);
  return [text, ...calls].filter((part) => part !== "").join("\n");
}

function isFree(result: ToolMessage): boolean {
  const artifact = result.artifact as { guard?: { blocked?: boolean }; cached?: boolean } | undefined;
  return artifact?.guard?.blocked === true || artifact?.cached === true;
}

/** Reads the current turn (the last AI message) and the results of the previous one from the messages. */
function readTurn(
  messages: BaseMessage[],
  options: LoopDetectOptions,
): { turn: Omit<LoopTurn, "session"> & { session: string | undefined }; message: AIWithCalls } | undefined {
  const current = lastAIMessageIndex(messages);
  if (current < 0) return undefined;
  const message = messages[current] as AIWithCalls;
  let previous: LoopTurn["previous"];
  for (let i = current - 1; i >= 0; i -= 1) {
    const m = messages[i] as BaseMessage;
    if (isPersonMessage(m)) break; // the previous turn belongs to another session
    if (!isAIMessage(m)) continue;
    const calls = (m as AIWithCalls).tool_calls ?? [];
    if (calls.length > 0) {
      const ids = new Set(calls.map((c) => c.id));
      const results = messages
        .slice(i + 1, current)
        .filter((r): r is ToolMessage => ToolMessage.isInstance(r) && ids.has(r.tool_call_id));
      previous = {
        free: results.length > 0 && results.every(isFree),
        failed: (options.isFailure ?? ((rs) => rs.length > 0 && rs.every((r) => r.status === "error")))(results),
      };
    }
    break;
  }
  const output = (options.outputOf ?? defaultTurnOutput)(message);
  return {
    message,
    turn: {
      output,
      continues: (message.tool_calls ?? []).length > 0,
      usage: message.usage_metadata,
      previous,
      // A new person's message starts a new session; none (all summarized away) continues the current one.
      session: options.session === "thread" ? "thread" : runMarker(messages),
    },
  };
}

/**
 * What the guard adds when it stops a run: an error ToolMessage for each tool call it will not run and nothing has
 * answered yet (another middleware may have: the history stays valid, one answer per call), then an AI message
 * that says which limit or loop stopped the run.
 */
export function stopMessages(message: AIWithCalls, reason: StopReason, messages: BaseMessage[]): BaseMessage[] {
  const skipped = unansweredCalls(message as AIMessage, messages).map((c) =>
    guardAnswer(c, `Not run: ${reason.message}`, { stopped: true, kind: reason.kind }),
  );
  return [...skipped, new AIMessage({ content: reason.message, response_metadata: { guard: reason } })];
}

/** The state the loop guard reads and writes (not part of the public API). */
export interface LoopGraphState {
  /** The conversation. */
  messages: BaseMessage[];
  /** The loop guard's state (absent before the first turn). */
  loopGuard?: LoopState;
}

/**
 * One turn of the loop guard: the limits and the similarity check (shared with the createAgent middleware). A stop
 * is written to the custom stream of `host`, and its event returned in `log` for the `guardLog` channel.
 */
export function evaluate(
  state: LoopGraphState,
  options: LoopDetectOptions,
  resolved: ResolvedSafetyOptions,
  host: WriterHost,
) {
  const read = readTurn(state.messages ?? [], options);
  if (read === undefined) return undefined;
  const loopGuard = state.loopGuard ?? emptyLoopState();
  const turn = { ...read.turn, session: read.turn.session ?? loopGuard.session ?? "none" };
  const result = stepLoopGuard(loopGuard, turn, resolved);
  const stopped = result.stop === null ? [] : [stopStreamEvent(result.stop)];
  return { ...result, read, log: emitGuardEvents(host, stopped, options.events !== false) };
}

/** The `guardLog` part of an update (none when nothing was logged). */
function logged(log: GuardStreamEvent[]): { guardLog?: GuardStreamEvent[] } {
  return log.length > 0 ? { guardLog: log } : {};
}

/** The safety options among the loop guard's options, validated. */
export function split(options: LoopDetectNodeOptions) {
  const { outputOf: _o, isFailure: _f, session: _s, exit: _e, next: _n, done: _d, events: _v, ...safety } = options;
  return resolveSafetyOptions(safety);
}

/**
 * A node for custom graphs, placed after the model: it counts the turn, checks the safety limits (iterations,
 * runtime, tokens, cost, failures in a row) and compares the turn's output with the recent ones. It
 * routes with a `Command`: to `exit` (default `END`) with a final AI message that says what stopped the run and
 * the similarity found, else to `next` (default `"tools"`) when the model called tools, else to `done` (default
 * `END`). Its memory is the `loopGuard` channel, so a checkpointer persists it. Add it with its `ends`.
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
  const resolved = split(options);
  const exit = options.exit ?? END;
  const next = options.next ?? "tools";
  const done = options.done ?? END;
  return async (state: LoopGraphState, config?: LangGraphRunnableConfig): Promise<Command> => {
    const result = evaluate(state, options, resolved, config);
    if (result === undefined) return new Command({ goto: done });
    if (result.stop !== null) {
      const messages = stopMessages(result.read.message, result.stop, state.messages ?? []);
      return new Command({ goto: exit, update: { loopGuard: result.state, messages, ...logged(result.log) } });
    }
    return new Command({ goto: result.read.turn.continues ? next : done, update: { loopGuard: result.state } });
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
  const resolved = split(options);
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
    const result = evaluate(state, options, resolved, config);
    if (result === undefined) return {};
    if (result.stop !== null) {
      const messages = stopMessages(result.read.message, result.stop, state.messages ?? []);
      return { loopGuard: result.state, messages, ...logged(result.log) };
    }
    return { loopGuard: result.state };
  };
}
