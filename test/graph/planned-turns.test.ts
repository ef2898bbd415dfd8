/**
 * The tool node takes the escalation node's plan of a response only for the state it was made from: a node between
 * them that writes the guard channel (here, a change made outside the guards) makes the tool node plan again, so the
 * call is decided on what the state now says.
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationNode, GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";

const readFile = tool(async ({ path }) => `contents of ${path}`, {
  name: "read_file",
  description: "Read a file.",
  schema: z.object({ path: z.string() }),
});

async function run(meddle: boolean) {
  const read = (id: string) => ({ content: "", toolCalls: [{ name: "read_file", args: { path: "a.py" }, id }] });
  const llm = new ScriptedChatModel([read("c1"), read("c2"), "Done."]);
  const node = new GuardedToolNode([readFile]);
  let turns = 0;
  const graph = new StateGraph(GuardMessagesState)
    .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
    .addNode("escalation", escalationNode(node, { next: "meddler" }), { ends: ["meddler", "agent", END] })
    // Between the escalation node and the tools: at the second response, a change the guards did not see.
    .addNode("meddler", () =>
      meddle && ++turns === 2 ? { toolGuard: [{ type: "external", effect: { kind: "mutate" } }] } : {},
    )
    .addNode("tools", node)
    .addEdge(START, "agent")
    .addEdge("agent", "escalation")
    .addEdge("meddler", "tools")
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
  const out = await graph.invoke(
    { messages: [new HumanMessage("Read a.py twice.")] },
    { configurable: { thread_id: String(meddle) } },
  );
  return (out.messages as BaseMessage[])
    .filter((m) => m.getType() === "tool")
    .map((m) => (m as { status?: string }).status ?? "success");
}

describe("a kept plan is the tool node's only for the state it was made from", () => {
  it("the repeat is blocked as planned; after a change written between the nodes, it runs", async () => {
    expect(await run(false)).toEqual(["success", "error"]);
    expect(await run(true)).toEqual(["success", "success"]);
  });
});
