/**
 * The file-edits rule in createReactAgent with `GuardedToolNode` and a checkpointer: the counts are per run (a new
 * person's message starts afresh) and persist between invokes of one run; the reminder and the block reach the
 * model and the guard log.
 */
import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  escalationHook,
  GuardedToolNode,
  type GuardLog,
  GuardMessagesState,
  type ToolGuardOptions,
  type ToolGuardState,
} from "../../src/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";

const writeFile = tool(async ({ path, content }) => `Wrote ${content.length} characters to ${path}.`, {
  name: "write_file",
  description: "Write a file.",
  schema: z.object({ path: z.string(), content: z.string() }),
});

let n = 0;
/** `count` responses that each rewrite game.py with new content, then a final answer. */
const session = (count: number): ScriptStep[] => [
  ...Array.from({ length: count }, () => ({
    toolCalls: [{ name: "write_file", args: { path: "game.py", content: `print(${++n})\n` } }],
  })),
  "Done.",
];

/** With the limits (remind at the 8th write, block the 12th). */
function agentWith(options: ToolGuardOptions, steps: ScriptStep[], version: "v1" | "v2" = "v1") {
  const node = new GuardedToolNode([writeFile], { ...options, rules: { fileEdits: { remindAt: 8, blockAt: 12 } } });
  return createReactAgent({
    llm: new ScriptedChatModel(steps),
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(node),
    checkpointer: new MemorySaver(),
    version,
  });
}

const answers = (messages: BaseMessage[]) =>
  messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => String(m.content));
const config = { configurable: { thread_id: "edits" }, recursionLimit: 100 };

describe("file edits in createReactAgent (GuardedToolNode)", () => {
  it("a new person's message starts the count afresh: 7 writes in each of two runs, no reminder", async () => {
    const agent = agentWith({}, [...session(7), ...session(7)]);
    await agent.invoke({ messages: [new HumanMessage("Write the game.")] }, config);
    const out = await agent.invoke({ messages: [new HumanMessage("Now make it faster.")] }, config);
    expect(answers(out.messages).filter((a) => a.includes("[FILE EDITED OFTEN]"))).toEqual([]);
    expect((out.toolGuard as ToolGuardState).fileEdits).toEqual([{ path: "game.py", writes: 7, rewrites: 7 }]);
  });

  it.each(["v1", "v2"] as const)(
    "with runBoundary none, the count goes on across invokes from the checkpoint: reminders, then a block (%s)",
    async (version) => {
      const agent = agentWith({ memory: { runBoundary: "none" } }, [...session(7), ...session(5)], version);
      await agent.invoke({ messages: [new HumanMessage("Write the game.")] }, config);
      const out = await agent.invoke({ messages: [new HumanMessage("Now make it faster.")] }, config);
      const second = answers(out.messages).slice(7);
      expect(second.slice(0, 4).every((a) => a.includes("[FILE EDITED OFTEN]"))).toBe(true);
      expect(second[0]).toMatch(/^Wrote \d+ characters to game\.py\.\n\n\[FILE EDITED OFTEN\] This was the 8th write/);
      expect(second[4]).toMatch(/^⚠️ FILE EDITED TOO OFTEN/);
      const log = out.guardLog as GuardLog;
      expect(log.counts).toMatchObject({ "near-miss": 4, blocked: 1 });
      expect(log.recent.filter((e) => e.rule === "file_edits").map((e) => e.kind)).toEqual([
        "near-miss",
        "near-miss",
        "near-miss",
        "near-miss",
        "blocked",
      ]);
      expect((out.toolGuard as ToolGuardState).stats.blocked.file_edits).toBe(1);
    },
  );
});
