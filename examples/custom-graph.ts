/**
 * A custom StateGraph with the guards, Annotation form: your own state spreads the guard channels, a model node
 * and a GuardedToolNode loop until the model answers.
 *
 * Run: npx tsx examples/custom-graph.ts
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { Annotation, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { escalationNode, GuardedToolNode, GuardState } from "langgraph-guards";
import { ScriptedChatModel } from "langgraph-guards/testing";
import { createWorkspaceTools, sampleProject } from "./workspace.js";

/** Your state: messages, the guard channels, and anything of your own. */
export const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...GuardState.spec,
  task: Annotation<string>(),
});

/**
 * Builds the graph: agent → tools → agent … until the model stops calling tools.
 *
 * @example
 * ```ts
 * const graph = buildGraph(llm, tools);
 * await graph.invoke({ messages: [{ role: "user", content: "hi" }], task: "demo" }, { configurable: { thread_id: "1" } });
 * ```
 */
export function buildGraph(llm: BaseChatModel, tools: StructuredToolInterface[]) {
  const model = llm.bindTools?.(tools) ?? llm;
  const guarded = new GuardedToolNode(tools, { repetitionThreshold: 3, windowSize: 10 });
  // Between the model and the tools: asks a person (strike 3) or ends the run (strike 4) when the model keeps
  // repeating a blocked call; routes to the tools, or to END when the model answered.
  return new StateGraph(AgentState)
    .addNode("agent", async (state: typeof AgentState.State) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("escalation", escalationNode(guarded), { ends: ["tools", "agent", END] })
    .addNode("tools", guarded)
    .addEdge(START, "agent")
    .addEdge("agent", "escalation")
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const llm = new ScriptedChatModel([
    { toolCalls: [{ name: "read_file", args: { path: "config.py" } }] },
    { toolCalls: [{ name: "read_file", args: { path: "config.py" } }] },
    "DEBUG is on.",
  ]);
  const graph = buildGraph(llm, createWorkspaceTools(sampleProject()));
  const out = await graph.invoke(
    { messages: [{ role: "user", content: "Is DEBUG on?" }], task: "config check" },
    { configurable: { thread_id: "example" } },
  );
  for (const m of out.messages) console.log(`${m.getType().padEnd(6)} ${String(m.content).split("\n")[0]}`);
  console.log("guard stats:", out.toolGuard.stats);
}
