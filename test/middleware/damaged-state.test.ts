/**
 * Issue 35, item 14, in createAgent (guardMiddleware, loopDetectMiddleware): a damaged guard channel in a checkpoint
 * fails the next turn with a GuardStateError naming it, `updateState(config, { <channel>: null })` resets it, and an
 * older shape is repaired (no NaN counters).
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GuardStateError } from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { damage } from "../support/damage.js";

function agent(saver: MemorySaver) {
  const readFile = tool(async ({ path }: { path: string }) => `content of ${path}`, {
    name: "read_file",
    description: "Reads a file.",
    schema: z.object({ path: z.string() }),
  });
  const llm = new ScriptedChatModel((messages) => {
    const last = messages.at(-1);
    if (last?.getType() !== "human") return "Done.";
    return {
      toolCalls: String(last.content)
        .split(" ")
        .map((path) => ({ name: "read_file", args: { path } })),
    };
  });
  return createAgent({
    model: llm,
    tools: [readFile],
    middleware: [guardMiddleware(), loopDetectMiddleware()],
    checkpointer: saver,
  });
}

const ask = (content: string) => ({ messages: [{ role: "user", content }] });

type Edit = (value: Record<string, unknown>) => void;

describe("a damaged guard channel in a checkpoint (createAgent)", () => {
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
        v.repetition = null;
      },
    ],
    [
      "loopGuard",
      (v) => {
        v.tokens = "lots";
      },
    ],
    [
      "guardLog",
      (v) => {
        v.counts = [1];
      },
    ],
  ];
  it.each(cases)("%s: the next turn names the channel; null resets it", async (channel, edit) => {
    const saver = new MemorySaver();
    const graph = agent(saver);
    const config = { configurable: { thread_id: `damaged-${channel}` } };
    await graph.invoke(ask("a.txt"), config);
    await damage(saver, config, channel, edit);
    const error = await graph.invoke(ask("a.txt a.txt"), config).then(
      () => undefined,
      (e: unknown) => e,
    );
    // langchain hands on what a middleware's wrapModelCall throws (the loop guard) as a MiddlewareError, the
    // GuardStateError its `cause` (wrapped once more by each middleware's wrapModelCall around it).
    let guardError = error;
    while (guardError !== undefined && !(guardError instanceof GuardStateError))
      guardError = (guardError as { cause?: unknown }).cause;
    expect(guardError).toBeInstanceOf(GuardStateError);
    expect((guardError as GuardStateError).channel).toBe(channel);
    await graph.updateState(config, { [channel]: null });
    const after = await graph.invoke(ask("b.txt"), config);
    expect(after.messages.at(-1)?.content).toBe("Done.");
  });
});
