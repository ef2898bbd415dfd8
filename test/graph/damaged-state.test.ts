/**
 * Issue 35, item 14, through the graphs: a checkpoint whose guard channel is damaged makes the next turn fail with a
 * GuardStateError that names the channel (not a bare TypeError), `updateState(config, { <channel>: null })` resets
 * it and the thread goes on; an older shape (counters missing) is repaired, never NaN; an unknown update is refused.
 * createReactAgent (GuardedToolNode, escalationHook, loopDetectHook) on MemorySaver, a custom StateGraph for the
 * file cache; createAgent is in test/middleware/damaged-state.test.ts.
 */
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  escalationHook,
  GuardedToolNode,
  GuardMessagesState,
  GuardState,
  GuardStateError,
  guardHooks,
  loopDetectHook,
} from "../../src/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { damage } from "../support/damage.js";

function agent(saver: MemorySaver) {
  const readFile = tool(async ({ path }: { path: string }) => `content of ${path}`, {
    name: "read_file",
    description: "Reads a file.",
    schema: z.object({ path: z.string() }),
  });
  // Reads the files the person names: the same name twice in one message is a repeat (blocked, a guard event).
  const llm = new ScriptedChatModel((messages) => {
    const last = messages.at(-1);
    return last?.getType() === "human"
      ? {
          toolCalls: String(last.content)
            .split(" ")
            .map((path) => ({ name: "read_file", args: { path } })),
        }
      : "Done.";
  });
  const node = new GuardedToolNode([readFile]);
  return createReactAgent({
    llm,
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: guardHooks(escalationHook(node), loopDetectHook()),
    checkpointer: saver,
  });
}

const ask = (content: string) => ({ messages: [{ role: "user", content }] });

async function failure(run: Promise<unknown>): Promise<GuardStateError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GuardStateError);
  return error as GuardStateError;
}

describe("a damaged guard channel in a checkpoint (createReactAgent)", () => {
  type Edit = (value: Record<string, unknown>) => void;
  const cases: [string, Edit][] = [
    [
      "toolGuard",
      (v) => {
        (v.stats as Record<string, unknown>).allowed = "many";
      },
    ],
    [
      "toolGuard",
      (v) => {
        (v.repetition as Record<string, unknown>).window = {};
      },
    ],
    [
      "loopGuard",
      (v) => {
        v.iterations = "3";
      },
    ],
    [
      "guardLog",
      (v) => {
        v.recent = 5;
      },
    ],
  ];
  it.each(cases)(
    "%s: the next turn names the channel; null resets it and the thread goes on",
    async (channel, edit) => {
      const saver = new MemorySaver();
      const graph = agent(saver);
      const config = { configurable: { thread_id: `damaged-${channel}` } };
      await graph.invoke(ask("a.txt"), config);
      await damage(saver, config, channel, edit);
      const error = await failure(graph.invoke(ask("a.txt a.txt"), config)); // a repeat: the guards write an event
      expect(error.channel).toBe(channel);
      expect(error.message).toContain(`updateState(config, { ${channel}: null })`);
      await graph.updateState(config, { [channel]: null });
      const after = await graph.invoke(ask("b.txt"), config);
      expect(after.messages.at(-1)?.content).toBe("Done.");
    },
  );
});

describe("an update a guard channel's reducer does not know", () => {
  it.each([
    ["fileCache", { op: "bogus" }],
    ["toolGuard", { nope: true }],
    ["loopGuard", 7],
    ["guardLog", [{ nope: 1 }]],
  ] as const)("%s: refused with a GuardStateError, never applied", async (channel, update) => {
    const graph = new StateGraph(GuardState)
      .addNode("writes", () => ({ [channel]: update }) as never)
      .addEdge(START, "writes")
      .addEdge("writes", END)
      .compile();
    const error = await failure(graph.invoke({}));
    expect(error.channel).toBe(channel);
    expect(error.update).toBe(true);
  });
});
