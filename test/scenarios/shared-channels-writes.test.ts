/**
 * Issue 61, item 6: agents sharing the guard channels (`GuardMessagesState` in the parent graph, as
 * docs/multi-agent.md documents) each keep their own memory; the parent's channel holds the first agent's. A write
 * by another agent left that memory as it was, so the reader's re-read after the writer changed the price was served
 * the old answer from the result cache ($10 after the writer set $12), or blocked as a repeat. Now another agent's
 * state coming back with changes in it makes this agent's earlier reads stale (as a change made by someone else
 * does): the re-read runs. Two agents as subgraph nodes of one graph, through createReactAgent with
 * `GuardedToolNode` and through createAgent with `guardMiddleware`.
 */
import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type StepResponder } from "../../src/testing/index.js";

type Adapter = "createReactAgent" | "createAgent";

/** A shop whose price one agent reads and the other sets. */
function shop(metadata: Record<string, unknown> | undefined) {
  let price = 10;
  const reads: number[] = [];
  const getPrice = tool(
    async () => {
      reads.push(price);
      return `$${price}`;
    },
    { name: "get_price", description: "The widget's price.", schema: z.object({ item: z.string() }), metadata },
  );
  const setPrice = tool(
    async ({ price: next }: { item: string; price: number }) => {
      price = next;
      return "ok";
    },
    { name: "set_price", description: "Sets the price.", schema: z.object({ item: z.string(), price: z.number() }) },
  );
  return { getPrice, setPrice, reads };
}

/** Reads the price, then says it. */
const reader: StepResponder = (messages) => {
  const last = messages.at(-1);
  if (ToolMessage.isInstance(last)) return `The price is ${String(last.content)}.`;
  return { toolCalls: [{ name: "get_price", args: { item: "widget" } }] };
};
/** Sets the price to $12, then says so. */
const writer: StepResponder = (messages) =>
  ToolMessage.isInstance(messages.at(-1))
    ? "Price set."
    : { toolCalls: [{ name: "set_price", args: { item: "widget", price: 12 } }] };

function agent(adapter: Adapter, name: string, tools: StructuredToolInterface[], respond: StepResponder) {
  const llm = new ScriptedChatModel(respond);
  if (adapter === "createAgent") {
    return createAgent({ name, model: llm, tools, middleware: [guardMiddleware({ interrupt: false })] }).graph;
  }
  const node = new GuardedToolNode(tools);
  return createReactAgent({
    name,
    llm,
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(node, { interrupt: false }),
  });
}

/** reader → writer → reader, the guard channels in the parent's state. */
async function readWriteRead(adapter: Adapter, metadata?: Record<string, unknown>) {
  const { getPrice, setPrice, reads } = shop(metadata);
  let readerTurns = 0;
  const graph = new StateGraph(GuardMessagesState)
    .addNode("reader", agent(adapter, "reader", [getPrice], reader))
    .addNode("writer", agent(adapter, "writer", [setPrice], writer))
    .addEdge(START, "reader")
    .addConditionalEdges("reader", () => (++readerTurns === 1 ? "writer" : END), ["writer", END])
    .addEdge("writer", "reader")
    .compile({ checkpointer: new MemorySaver() });
  const result = await graph.invoke(
    { messages: [new HumanMessage("What does a widget cost now?")] },
    { configurable: { thread_id: `${adapter}-${metadata ? "cached" : "plain"}` }, recursionLimit: 60 },
  );
  const messages = result.messages as BaseMessage[];
  return { reads, final: String(messages.at(-1)?.content) };
}

describe.each(["createReactAgent", "createAgent"] as const)(
  "agents sharing the guard channels, through %s",
  (adapter) => {
    it("the writer sets $12: the reader's re-read of a cached tool runs and reads $12, it is not served $10", async () => {
      const r = await readWriteRead(adapter, { readOnlyHint: true, idempotentHint: true });
      expect(r.reads).toEqual([10, 12]);
      expect(r.final).toBe("The price is $12.");
    });

    it("the writer sets $12: the reader's re-read of a plain read-only tool runs, it is not blocked as a repeat", async () => {
      const r = await readWriteRead(adapter);
      expect(r.reads).toEqual([10, 12]);
      expect(r.final).toBe("The price is $12.");
    });
  },
);
