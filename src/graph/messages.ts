/** Small readers of LangChain messages shared by the graph adapters. */
import { type BaseMessage, isAIMessage, isBaseMessage } from "@langchain/core/messages";

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
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message: unknown = messages[i];
    if (isBaseMessage(message) && isAIMessage(message)) return i;
  }
  return -1;
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
