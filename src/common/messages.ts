/** Small readers and writers of LangChain messages shared by every guard's adapters. */
import { type AIMessage, type BaseMessage, isAIMessage, isBaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { isGraphDrained, isGraphInterrupt } from "@langchain/langgraph";
import { canonicalJson, digest } from "./identity/signature.js";
import type { GuardArtifact, StopArtifact, StopReason } from "./vocabulary.js";

/** The index of the last AI message, or -1. */
export function lastAIMessageIndex(messages: unknown): number {
  if (!Array.isArray(messages)) return -1;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m: unknown = messages[i];
    if (isBaseMessage(m) && isAIMessage(m)) return i;
  }
  return -1;
}

/** The text of a message: its string content, or its text blocks joined (other blocks are left out). */
export function messageText(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content
    .map((block) => (typeof block === "string" ? block : block.type === "text" ? String(block.text ?? "") : ""))
    .join("");
}

/** The calls of `message` no ToolMessage answers yet (another node or middleware may have answered some). */
export function unansweredCalls(message: AIMessage, messages: readonly BaseMessage[]): ToolCall[] {
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return [];
  // A call is answered after the message that made it: only the messages after it are read (not the whole thread).
  let from = 0;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (messages[i] === message) {
      from = i + 1;
      break;
    }
  }
  if (from === messages.length) return calls.slice();
  const answered = new Set<string>();
  for (let i = from; i < messages.length; i += 1) {
    const m = messages[i];
    if (typeof m?.getType === "function" && m.getType() === "tool") answered.add((m as ToolMessage).tool_call_id);
  }
  return calls.filter((c) => c.id == null || !answered.has(c.id));
}

/** The person's message that started a new run, if they spoke since the model's previous turn; else `undefined`. */
export function runMarker(messages: readonly BaseMessage[]): string | undefined {
  const last = messages.length - 1;
  for (let i = last; i >= 0; i -= 1) {
    const m = messages[i] as BaseMessage;
    if (isPersonMessage(m)) return m.id ?? `${i}:${digest(canonicalJson(m.content))}`;
    if (i < last && m.getType() === "ai") return undefined; // the model spoke since: the run goes on
  }
  return undefined;
}

/** Whether a message is a person's: a human message, not summarizationMiddleware's (`lc_source: "summarization"`). */
export function isPersonMessage(message: BaseMessage): boolean {
  return message.getType() === "human" && message.additional_kwargs?.lc_source !== "summarization";
}

/** The error ToolMessage that answers a call the guards did not run (same `tool_call_id` and `name`). */
export function guardAnswer(
  call: Pick<ToolCall, "id" | "name">,
  content: string,
  guard: GuardArtifact | StopArtifact,
): ToolMessage {
  return new ToolMessage({
    status: "error",
    name: call.name,
    tool_call_id: call.id ?? "",
    content,
    artifact: { guard },
  });
}

/** An error ToolMessage "Not run: <reason>" for each call of `message` that nothing has answered yet. */
export function notRunAnswers(message: AIMessage, reason: StopReason, messages: readonly BaseMessage[]): BaseMessage[] {
  return unansweredCalls(message, messages).map((c) =>
    guardAnswer(c, `Not run: ${reason.message}`, { stopped: true, kind: reason.kind }),
  );
}

/** Whether a thrown value must leave the tool node as it is (an interrupt, a drained graph). Never throws. */
export function passesThrough(error: unknown): boolean {
  try {
    return isGraphInterrupt(error) || isGraphDrained(error);
  } catch {
    return false;
  }
}
