/**
 * Issue 47: `GuardedToolNode` in custom multi-agent graphs. An agent wrapped as a tool (a createReactAgent that a
 * tool of another createReactAgent invokes) is reported to its parent as stuck when its guards stop it. Two agents
 * added as subgraph nodes of one graph, sharing the guard channels through the parent's state, each keep their own
 * memory: the second one's first call is never blocked by the first one's history.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState, type ToolGuardState } from "../../src/index.js";
import { ScriptedChatModel, type StepResponder } from "../../src/testing/index.js";
import { answersOf, countingTool, finalWords } from "./support.js";

type Tool = ReturnType<typeof countingTool>["tool"];

/** A createReactAgent with `GuardedToolNode` and the escalation hook (`interrupt: false`: level 3 ends the run). */
function guardedAgent(name: string, tools: Tool[], respond: StepResponder) {
  const node = new GuardedToolNode(tools);
  return createReactAgent({
    name,
    llm: new ScriptedChatModel(respond),
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(node, { interrupt: false }),
  });
}

describe("GuardedToolNode in a custom multi-agent graph", () => {
  it("an agent wrapped as a tool, stuck in a loop, is reported to its parent as stuck", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    const child = guardedAgent("searcher", [search.tool], () => ({
      toolCalls: [{ name: "search_code", args: { q: "TODO" } }],
    }));
    const askSearcher = tool(
      async ({ question }, config) => {
        const result = await child.invoke({ messages: [new HumanMessage(question)] }, config);
        return String(result.messages.at(-1)?.content);
      },
      { name: "ask_searcher", description: "Ask the searcher agent.", schema: z.object({ question: z.string() }) },
    ) as unknown as Tool;
    const parent = guardedAgent("lead", [askSearcher], (messages) => {
      const last = messages.at(-1);
      if (ToolMessage.isInstance(last)) return `Report: ${String(last.content).slice(0, 60)}`;
      return { toolCalls: [{ name: "ask_searcher", args: { question: "Where are the TODOs?" } }] };
    });
    const result = (await parent.invoke(
      { messages: [new HumanMessage("Find the TODOs.")] },
      { configurable: { thread_id: "agent-as-tool" } },
    )) as { messages: BaseMessage[]; toolGuard: ToolGuardState };
    expect(search.runs).toEqual(["TODO"]);
    const [answer] = answersOf(result.messages, "ask_searcher");
    expect(answer?.status).toBe("error");
    expect(String(answer?.content)).toMatch(/^The sub-agent did not finish: the guards stopped it \(escalation\)/);
    expect(result.toolGuard.repetition.window.map((r) => [r.tool, r.result?.ok])).toEqual([["ask_searcher", false]]);
    expect(finalWords(result.messages)).toMatch(/^Report: The sub-agent did not finish/);
  });

  it("two agents as subgraphs sharing the guard channels: each keeps its own memory, persisted", async () => {
    const lookup = countingTool("lookup", (a) => `notes on ${a.q}`);
    lookup.tool.metadata = { readOnlyHint: true };
    // Each agent looks up the same thing twice (the second time is its own repeat), then answers.
    const twice =
      (name: string): StepResponder =>
      (messages) => {
        const own = messages.filter(
          (m) => AIMessage.isInstance(m) && m.name === name && (m.tool_calls ?? []).length > 0,
        );
        return own.length < 2 ? { toolCalls: [{ name: "lookup", args: { q: "config" } }] } : `${name} is done.`;
      };
    const graph = new StateGraph(GuardMessagesState)
      .addNode("agent_a", guardedAgent("agent_a", [lookup.tool], twice("agent_a")))
      .addNode("agent_b", guardedAgent("agent_b", [lookup.tool], twice("agent_b")))
      .addEdge(START, "agent_a")
      .addEdge("agent_a", "agent_b")
      .addEdge("agent_b", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "two-subgraphs" } };
    const result = await graph.invoke({ messages: [new HumanMessage("Check the config.")] }, config);

    // Each agent's first lookup ran (agent_b's is not a repeat of agent_a's); each one's own repeat was blocked.
    expect(lookup.runs).toEqual(["config", "config"]);
    const answers = answersOf(result.messages, "lookup");
    expect(answers.map((a) => a.status ?? "success")).toEqual(["success", "error", "success", "error"]);
    expect(finalWords(result.messages)).toBe("agent_b is done.");
    // The parent's channel holds one agent's memory, tagged with it, as the checkpoint has it: the first agent's
    // (agent_b's state coming back did not replace it; agent_b started afresh from it and will again).
    const saved = (await graph.getState(config)).values as { toolGuard: ToolGuardState };
    expect(saved.toolGuard.agent).toBe("agent_a");
    expect(saved.toolGuard.stats).toMatchObject({ allowed: 1, blocked: { consecutive: 1 } });
  });
});
