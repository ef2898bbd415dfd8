/** A graph START → tools → END over the file tools, one thread: each call is one AI message with one tool call. */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createFileTools, type FileToolsOptions } from "../../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";

/** What a test reads of a file tool's ToolMessage: its text, status, and the cache's artifact. */
export function describeReply(reply: ToolMessage) {
  const artifact = reply.artifact as { cached?: boolean; content_ref?: string } | undefined;
  return {
    reply,
    text: String(reply.content),
    status: reply.status,
    /** The call id of the earlier result a reference answer points to. */
    ref: artifact?.content_ref,
    cached: artifact?.cached,
  };
}

export function fileToolsHarness(root: string, options: Partial<FileToolsOptions> = {}) {
  const graph = new StateGraph(GuardMessagesState)
    .addNode("tools", new GuardedToolNode(createFileTools({ root, allowCommands: true, ...options })))
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile({ checkpointer: new MemorySaver() });
  let n = 0;
  return async (name: string, args: Record<string, unknown>) => {
    n += 1;
    const id = `c${n}`;
    const ai = new AIMessage({ content: "", tool_calls: [{ name, args, id, type: "tool_call" }] });
    const out = await graph.invoke({ messages: [ai] }, { configurable: { thread_id: "t" } });
    const messages = out.messages as BaseMessage[];
    const reply = messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === id) as ToolMessage;
    return { ...describeReply(reply), messages, out };
  };
}
