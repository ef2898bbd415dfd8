/** A stuck sub-agent reported as stuck: an agent a tool starts hands back only its last words, read as success. */
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

/** Reports a run the guards end, and its final `words`, to the guarded tool call that started it, if any. */
export function reportRunEnd(reason: EndReason, words: readonly string[] = [reason.message]): boolean {
  const scope = scopes.getStore();
  scope?.push({ reason, words: words.map((w) => w.trim()) });
  return scope !== undefined;
}

/**
 * The model's wrap-up of a run the guards stop, with the verdict after its words when no guarded tool call took the
 * report (`reported`) and the agent runs inside another graph: the agent that reads them must learn it is not done.
 */
export function withStopNote(text: string, reason: EndReason, reported: boolean): string {
  return reported || !nestedAgent() ? text : `${text}\n\n${nestedStopNote(verdictOf(reason))}`;
}

function verdictOf(reason: EndReason): string {
  return stopVerdict(reason.kind, reason.message, typeof reason.tool === "string" ? reason.tool : undefined);
}

function nestedAgent(): boolean {
  try {
    const agent = agentOf(getConfig()?.configurable);
    return agent !== undefined && agent !== "";
  } catch {
    return false; // outside a graph
  }
}

/**
 * Runs a tool call in a scope of its own (`AsyncLocalStorage` follows every `await` of a sub-agent it starts). When
 * the final words of a run it started that the guards ended reach the tool's answer, the answer becomes an error
 * naming the guard and rule, which the parent's guards record as a failure (a tool that handled the stop answers in
 * other words and stands). Guard states handed back with a sub-agent's final state are dropped: its memory, not ours.
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
 * A tool's Command without a sub-agent's whole guard states (deepagents' `task` returns its whole final state): its
 * guard log would replace the caller's. A tool's own events for a channel (a list, or with a `type`) stay.
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

function isWholeState(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !("type" in value);
}

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
 * The answer of a tool call whose sub-agent the guards stopped (the last run whose final words are in it; without
 * them the answer is the tool's own): an error, the verdict first; `artifact.guard.subAgent` keeps it as data.
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
