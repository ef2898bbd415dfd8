/** Small readers and writers of LangChain messages shared by every guard's adapters. */
import { type AIMessage, type BaseMessage, isAIMessage, isBaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { isGraphDrained, isGraphInterrupt } from "@langchain/langgraph";
import { canonicalJson, digest } from "./identity/signature.js";
import type { GuardArtifact, StopArtifact, StopReason } from "./vocabulary.js";

/**
 * The index of the last AI message in `messages`, or -1 (anything that is not an array has none).
 *
 * @example
 * ```ts
 * lastAIMessageIndex([new HumanMessage("hi"), new AIMessage("hello")]); // 1
 * ```
 */
export function lastAIMessageIndex(messages: unknown): number {
  if (!Array.isArray(messages)) return -1;
  for (let i = messages.length - 1; i >= 0; i -= 1) if (isAI(messages[i])) return i;
  return -1;
}

/**
 * Whether a value of a state's message list is an AI message.
 *
 * @example
 * ```ts
 * isAI(new AIMessage("hello")); // true
 * ```
 */
export function isAI(value: unknown): value is AIMessage {
  return isBaseMessage(value) && isAIMessage(value);
}

/**
 * The text of a message: its string content, or its text blocks joined (other blocks are left out).
 *
 * @example
 * ```ts
 * messageText(new AIMessage({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] })); // "ab"
 * ```
 */
export function messageText(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content
    .map((block) => (typeof block === "string" ? block : block.type === "text" ? String(block.text ?? "") : ""))
    .join("");
}

/**
 * The calls of `message` that no ToolMessage in `messages` answers yet (another node or middleware may have
 * answered some).
 *
 * @example
 * ```ts
 * unansweredCalls(aiMessage, state.messages).map((c) => c.id);
 * ```
 */
export function unansweredCalls(message: AIMessage, messages: readonly BaseMessage[]): ToolCall[] {
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return [];
  // A call is answered after the message that made it: when `message` is in the list, only the messages after it
  // are read (the node runs every turn; reading the whole conversation each time made a long thread quadratic).
  let from = 0;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (messages[i] === message) {
      from = i + 1;
      break;
    }
  }
  if (from === messages.length) return calls.slice(); // nothing after the message: no call answered yet
  const answered = new Set<string>();
  for (let i = from; i < messages.length; i += 1) {
    const m = messages[i];
    if (typeof m?.getType === "function" && m.getType() === "tool") answered.add((m as ToolMessage).tool_call_id);
  }
  return calls.filter((c) => c.id == null || !answered.has(c.id));
}

/**
 * What marks a new run: the id of the person's message (or, without an id, its position and content) the latest
 * model turn answers, when the person spoke since the model's previous turn: the last person's message is followed
 * by no AI message but the last message of the list (the response being judged). `undefined` otherwise: the run
 * goes on (and the guards keep the marker they have). A message that comes back into the history mid-run is not a
 * new run: a summary written by a middleware that rewrites the history (langchain's summarizationMiddleware, a
 * compaction of your own), placed before the turns it keeps.
 *
 * @example
 * ```ts
 * runMarker([new HumanMessage({ id: "h1", content: "Hi" }), aiMessage]); // "h1": the turn answers the person
 * runMarker([new HumanMessage({ id: "h1", content: "Hi" }), aiMessage, toolMessage, aiMessage2]); // undefined
 * ```
 */
export function runMarker(messages: readonly BaseMessage[]): string | undefined {
  const last = messages.length - 1;
  for (let i = last; i >= 0; i -= 1) {
    const m = messages[i] as BaseMessage;
    if (isPersonMessage(m)) return m.id ?? `${i}:${digest(canonicalJson(m.content))}`;
    if (i < last && m.getType() === "ai") return undefined; // the model spoke since: the run goes on
  }
  return undefined;
}

/**
 * Whether a message is a person's (a human message that is not a summary: langchain's summarizationMiddleware puts
 * its summary in a human message marked `additional_kwargs.lc_source = "summarization"`). A person's message starts
 * a new run; a summary does not.
 */
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

/** The answer of a pending tool call the loop guard will not run: the stop reason's message. */
export function notRunStopped(reason: string): string {
  return `Not run: ${reason}`;
}

/** An error ToolMessage "Not run: <reason>" for each call of `message` that nothing has answered yet. */
export function notRunAnswers(message: AIMessage, reason: StopReason, messages: readonly BaseMessage[]): BaseMessage[] {
  return unansweredCalls(message, messages).map((c) =>
    guardAnswer(c, notRunStopped(reason.message), { stopped: true, kind: reason.kind }),
  );
}

/**
 * Whether a thrown value must leave the tool node as it is (as `ToolNode` re-throws them): a graph interrupt
 * (`interrupt()` in a tool) or a drained graph. Never throws (an odd value is a tool error, not an interrupt).
 */
export function passesThrough(error: unknown): boolean {
  try {
    return isGraphInterrupt(error) || isGraphDrained(error);
  } catch {
    return false;
  }
}
