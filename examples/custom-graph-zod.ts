/**
 * A custom StateGraph with the guards, zod form: the same graph as custom-graph.ts, with the state declared as a
 * zod v4 object that spreads `guardMessagesStateSchema.shape` (messages + guard channels).
 *
 * Run: npx tsx examples/custom-graph-zod.ts
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { escalationNode, GuardedToolNode, guardMessagesStateSchema } from "langgraph-guards";
import { ScriptedChatModel } from "langgraph-guards/testing";
import { z } from "zod";
import { createWorkspaceTools, sampleProject } from "./workspace.js";

/** Your state: messages, the guard channels, and anything of your own. */
export const AgentState = z.object({
  ...guardMessagesStateSchema.shape,
  // Not `.default(...)`: LangGraph re-applies zod defaults to every invocation's input, which would reset it.
  task: z.string().optional(),
});

/**
 * Builds the graph: agent → tools → agent … until the model stops calling tools.
 *
 * @example
 * ```ts
 * const graph = buildZodGraph(llm, tools);
 * ```
 */
export function buildZodGraph(llm: BaseChatModel, tools: StructuredToolInterface[]) {
  const model = llm.bindTools?.(tools) ?? llm;
  const guarded = new GuardedToolNode(tools);
  // Between the model and the tools: asks a person (strike 3) or ends the run (strike 4) when the model keeps
  // repeating a blocked call; routes to the tools, or to END when the model answered.
  return new StateGraph(AgentState)
    .addNode("agent", async (state: z.infer<typeof AgentState>) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("escalation", escalationNode(guarded), { ends: ["tools", "agent", END] })
    .addNode("tools", guarded)
    .addEdge(START, "agent")
    .addEdge("agent", "escalation")
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const llm = new ScriptedChatModel([
    { toolCalls: [{ name: "list_files", args: {} }] },
    { toolCalls: [{ name: "list_files", args: {} }] },
    "Four files.",
  ]);
  const graph = buildZodGraph(llm, createWorkspaceTools(sampleProject()));
  const out = await graph.invoke(
    { messages: [{ role: "user", content: "How many files?" }], task: "count" },
    { configurable: { thread_id: "example" } },
  );
  for (const m of out.messages) console.log(`${m.getType().padEnd(6)} ${String(m.content).split("\n")[0]}`);
  console.log("guard stats:", out.toolGuard.stats);
}
