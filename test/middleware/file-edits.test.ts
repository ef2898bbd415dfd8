/**
 * The file-edits rule in createAgent with `guardMiddleware`: one file rewritten again and again gets the reminder
 * after its result from the 8th write and is blocked at the 12th; a new person's message starts the count afresh.
 */
import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { GuardArtifact, ToolGuardState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";

const writeFile = tool(async ({ path, content }) => `Wrote ${content.length} characters to ${path}.`, {
  name: "write_file",
  description: "Write a file.",
  schema: z.object({ path: z.string(), content: z.string() }),
});

let n = 0;
const session = (count: number): ScriptStep[] => [
  ...Array.from({ length: count }, () => ({
    toolCalls: [{ name: "write_file", args: { path: "game.py", content: `print(${++n})\n` } }],
  })),
  "Done.",
];
const replies = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
const config = { configurable: { thread_id: "edits" }, recursionLimit: 100 };
/** The issue's limits (remind at the 8th write, block the 12th). */
const ISSUE = { rules: { fileEdits: { remindAt: 8, blockAt: 12 } } };

describe("file edits in createAgent (guardMiddleware)", () => {
  it("12 rewrites of one file: reminders on the 8th to the 11th, the 12th blocked with a strike", async () => {
    const agent = createAgent({
      model: new ScriptedChatModel(session(12)),
      tools: [writeFile],
      middleware: [guardMiddleware(ISSUE)],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke({ messages: [new HumanMessage("Write the game.")] }, config);
    const answers = replies(out.messages as BaseMessage[]);
    expect(answers.map((m) => String(m.content).includes("[FILE EDITED OFTEN]"))).toEqual([
      ...Array.from({ length: 7 }, () => false),
      true,
      true,
      true,
      true,
      false,
    ]);
    const guard = (answers[11]?.artifact as { guard?: GuardArtifact } | undefined)?.guard;
    expect(guard).toMatchObject({ blocked: true, rule: "file_edits", count: 12, escalation: 1, strikes: 1 });
    expect((out.toolGuard as ToolGuardState).fileEdits).toEqual([{ path: "game.py", writes: 11, rewrites: 11 }]);
  });

  it("a new person's message starts the count afresh", async () => {
    const agent = createAgent({
      model: new ScriptedChatModel([...session(7), ...session(7)]),
      tools: [writeFile],
      middleware: [guardMiddleware(ISSUE)],
      checkpointer: new MemorySaver(),
    });
    await agent.invoke({ messages: [new HumanMessage("Write the game.")] }, config);
    const out = await agent.invoke({ messages: [new HumanMessage("Now make it faster.")] }, config);
    const answers = replies(out.messages as BaseMessage[]).map((m) => String(m.content));
    expect(answers).toHaveLength(14);
    expect(answers.filter((a) => a.includes("[FILE EDITED OFTEN]"))).toEqual([]);
    expect((out.toolGuard as ToolGuardState).fileEdits).toEqual([{ path: "game.py", writes: 7, rewrites: 7 }]);
  });
});
