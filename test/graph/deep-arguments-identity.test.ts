/**
 * Issue 35, item 13, through the live adapters: arguments nested 5,000 levels deep (beyond the recursive
 * serializer's stack) keep their own identity in createReactAgent (GuardedToolNode) and createAgent
 * (guardMiddleware). No checkpointer: LangGraph's own serializer stops at about 5,000 levels, and createAgent's
 * `Send` (which copies the state recursively) at about 3,500.
 */
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";

function nested(depth: number, leaf: string): Record<string, unknown> {
  let value: Record<string, unknown> = { key: leaf };
  for (let i = 1; i < depth; i += 1) value = { a: value };
  return value;
}

const leaves = ["x", "y", "x"];

async function run(adapter: "createReactAgent" | "createAgent", depth: number): Promise<string[]> {
  const ran: string[] = [];
  const getRecord = tool(
    async () => {
      ran.push("ran");
      return `record ${ran.length}`;
    },
    { name: "get_record", description: "A record.", schema: z.looseObject({}) },
  );
  const llm = new ScriptedChatModel([
    ...leaves.map((leaf) => ({ toolCalls: [{ name: "get_record", args: nested(depth, leaf) }] })),
    "Done.",
  ]);
  const input = { messages: [{ role: "user", content: "Go." }] };
  let messages: BaseMessage[];
  if (adapter === "createReactAgent") {
    const node = new GuardedToolNode([getRecord]);
    const agent = createReactAgent({
      llm,
      tools: node,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(node),
    });
    messages = (await agent.invoke(input)).messages;
  } else {
    const agent = createAgent({ model: llm, tools: [getRecord], middleware: [guardMiddleware()] });
    messages = (await agent.invoke(input)).messages;
  }
  return messages
    .filter((m): m is ToolMessage => ToolMessage.isInstance(m))
    .map((m) => (m.artifact as { guard?: { rule: string } } | undefined)?.guard?.rule ?? "ran");
}

describe("deep arguments through the adapters", () => {
  it.each([
    ["createReactAgent", 5_000],
    ["createAgent", 3_300],
  ] as const)("%s, %i levels: two different deep calls run, the repeat is blocked", async (adapter, depth) => {
    expect(await run(adapter, depth)).toEqual(["ran", "ran", "redundant"]);
  });
});
