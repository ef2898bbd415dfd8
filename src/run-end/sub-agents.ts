/**
 * A stuck sub-agent reported as stuck. An agent that a tool starts (deepagents' `task`, an agent wrapped as a tool)
 * hands back only its last words: a sub-agent the guards stopped would read to its parent as a success. So every
 * guarded tool call runs in a scope of its own (Node's `AsyncLocalStorage`, which follows the call through every
 * `await` of the sub-agent it starts), a guard that ends a run there reports why and the run's final words, and the
 * tool's answer says so when those words reach it: an error ToolMessage that names the guard and the rule before the
 * tool's own words, which the parent's guards record as a failure. A tool that handled the stop (asked another agent
 * instead; an agent between them that answered in its own words) answers with other words: its answer stands. The
 * guard states that the tool hands back with the sub-agent's final state (deepagents) are dropped there: they are the
 * sub-agent's memory, not its parent's.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ToolMessage } from "@langchain/core/messages";
import { Command, getConfig, isCommand } from "@langchain/langgraph";
import { messageText } from "../common/messages.js";
import { agentOf } from "../common/owner.js";
import type { EndReason } from "../common/vocabulary.js";
import { nestedStopNote, stopVerdict, subAgentStoppedText } from "./texts.js";

/** A run the guards ended, and the words it ends in (what a tool hands back of it: any of them). */
interface EndedRun {
  reason: EndReason;
  words: readonly string[];
}

/** The runs the guards ended inside the tool call being run (the innermost scope), in order. */
const scopes = new AsyncLocalStorage<EndedRun[]>();

/**
 * Reports a run the guards end (its final message is written now, in `words`: the reason's canned message unless
 * told) to the tool call that started it, if any: a no-op for a run no guarded tool call started.
 *
 * @example
 * ```ts
 * reportRunEnd({ kind: "loop", message: "Stopped: loop detected, …" });
 * ```
 */
export function reportRunEnd(reason: EndReason, words: readonly string[] = [reason.message]): boolean {
  const scope = scopes.getStore();
  scope?.push({ reason, words: words.map((w) => w.trim()) });
  return scope !== undefined;
}

/**
 * The model's wrap-up that ends a run the guards stop, with the verdict after its words when no guarded tool call
 * took the report (`reported`: {@link reportRunEnd}'s answer) and the agent runs inside another graph (a
 * supervisor's worker): the words need not say that the run was stopped, and the agent that reads them (the
 * supervisor's model) must be told the task is not done. A canned final message says why in words already.
 *
 * @example
 * ```ts
 * const content = withStopNote("I searched twice and found nothing.", reason, reportRunEnd(reason));
 * ```
 */
export function withStopNote(text: string, reason: EndReason, reported: boolean): string {
  return reported || !nestedAgent() ? text : `${text}\n\n${nestedStopNote(verdictOf(reason))}`;
}

/** The verdict of a stop in one line (see `stopVerdict`). */
function verdictOf(reason: EndReason): string {
  return stopVerdict(reason.kind, reason.message, typeof reason.tool === "string" ? reason.tool : undefined);
}

/** Whether the node running now is in an agent inside another graph (see `agentOf`). */
function nestedAgent(): boolean {
  try {
    const agent = agentOf(getConfig()?.configurable);
    return agent !== undefined && agent !== "";
  } catch {
    return false; // outside a graph
  }
}

/**
 * Runs a tool call in a scope of its own, and marks its output when a run it started was ended by the guards (see
 * the module comment). `callId` is the call's id, to find its ToolMessage in a Command.
 *
 * @example
 * ```ts
 * const output = await watchSubAgents(call.id, () => tool.invoke(call, config));
 * ```
 */
export function watchSubAgents(
  callId: string | undefined,
  run: () => Promise<ToolMessage | Command>,
): Promise<ToolMessage | Command> {
  const ended: EndedRun[] = [];
  return scopes.run(ended, run).then((output) => {
    const own = isCommand(output) ? withoutAgentStates(output) : output;
    return ended.length === 0 ? own : markStopped(own, callId, ended);
  });
}

/** The guard channels (see `GuardState`), and the middleware's private one. */
const GUARD_CHANNELS = ["toolGuard", "loopGuard", "safetyLimits", "guardLog", "fileCache", "_guardPending"];

/**
 * A tool's Command without the whole guard states it carries: a sub-agent's final state, handed back by the tool
 * that ran it (deepagents' `task` returns every key of it). They are the sub-agent's memory, not the caller's: its
 * guard log would replace the caller's (of parallel sub-agents, the last one's), as its other states would if their
 * reducers did not refuse another agent's. A tool's own events for a channel (a list, or an object with a `type`)
 * stay.
 */
function withoutAgentStates(output: Command): Command {
  const update = output.update as Record<string, unknown> | undefined;
  if (update === undefined || typeof update !== "object" || Array.isArray(update)) return output;
  const states = GUARD_CHANNELS.filter((key) => isWholeState(update[key]));
  if (states.length === 0) return output;
  const kept = { ...update };
  for (const key of states) delete kept[key];
  return new Command({ ...output, update: kept });
}

/** A channel's whole state (an object that is not an event or a list of events). */
function isWholeState(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !("type" in value);
}

/** The output with its ToolMessage turned into the report of a stopped run (see {@link stoppedAnswer}). */
function markStopped(
  output: ToolMessage | Command,
  callId: string | undefined,
  ended: EndedRun[],
): ToolMessage | Command {
  if (!isCommand(output)) return ToolMessage.isInstance(output) ? stoppedAnswer(output, ended) : output;
  const update = output.update as { messages?: unknown } | undefined;
  if (update === undefined || typeof update !== "object" || !Array.isArray(update.messages)) return output;
  const messages = update.messages.map((m) =>
    ToolMessage.isInstance(m) && (callId === undefined || m.tool_call_id === callId) ? stoppedAnswer(m, ended) : m,
  );
  return new Command({ ...output, update: { ...update, messages } });
}

/**
 * The answer of a tool call whose sub-agent the guards stopped: an error, the guard's verdict first, then what the
 * tool said; `artifact.guard.subAgent` keeps the verdict as data. The stopped run is the last one whose final words
 * are in the answer: an answer without them (the tool fell back to another agent) is the tool's, as it is.
 */
function stoppedAnswer(answer: ToolMessage, ended: EndedRun[]): ToolMessage {
  const said = typeof answer.content === "string" ? answer.content : JSON.stringify(answer.content);
  const text = messageText(answer);
  const reason = ended.findLast((run) => run.words.some((w) => text.includes(w)))?.reason;
  if (reason === undefined) return answer;
  const artifact = answer.artifact !== null && typeof answer.artifact === "object" ? answer.artifact : {};
  const guard = (artifact as { guard?: object }).guard;
  return new ToolMessage({
    id: answer.id,
    name: answer.name,
    tool_call_id: answer.tool_call_id,
    status: "error",
    content: subAgentStoppedText(verdictOf(reason), said),
    artifact: { ...artifact, guard: { ...guard, subAgent: { ...reason } } },
  });
}
