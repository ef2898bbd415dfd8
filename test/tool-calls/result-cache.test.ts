/**
 * The result cache in a live thread (issue 46, item 6): what a served answer is (the earlier result, a success, its
 * artifact saying so), the time-to-live, a result trimmed out of the conversation, the cache kept with the thread by
 * the checkpointer and read back by another agent, parallel calls, and createReactAgent v2's tasks.
 */
import { type BaseMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { GuardLog, ServedArtifact, ToolGuardState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import { runThread, sequence, step } from "../scenarios/support.js";

const HINTS = { readOnlyHint: true, idempotentHint: true };

/** A search tool with MCP hints that counts its runs and answers something new each run. */
function searchDocs() {
  const runs = { n: 0 };
  const search = tool(async ({ query }: { query: string }) => `result ${++runs.n} for ${query}`, {
    name: "search_docs",
    description: "Searches the documentation.",
    schema: z.object({ query: z.string() }),
    metadata: HINTS,
  });
  return { search, runs };
}

const installCall = { name: "search_docs", args: { query: "install" } };
const ask: ScriptStep = { toolCalls: [installCall] };
const input = (text: string) => ({ messages: [{ role: "user", content: text }] });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the result cache in a live thread", () => {
  it("a served answer is the earlier result, a success, with artifact.guard { served, from } and a cache event", async () => {
    const { search, runs } = searchDocs();
    const agent = createAgent({
      model: new ScriptedChatModel([ask, ask, "Done."]),
      tools: [search],
      middleware: [guardMiddleware()],
    });
    const out = await agent.invoke(input("How do I install it?"));
    const answers = (out.messages as BaseMessage[]).filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(runs.n).toBe(1);
    const [first, served] = answers as [ToolMessage, ToolMessage];
    expect(served.content).toBe(first.content);
    expect(served.status).toBe("success");
    expect(served.name).toBe("search_docs");
    expect(served.tool_call_id).not.toBe(first.tool_call_id);
    const guard = (served.artifact as { guard?: ServedArtifact }).guard;
    expect(guard).toEqual({ served: true, from: first.tool_call_id });
    const log = out.guardLog as GuardLog;
    expect(log.recent.at(-1)).toMatchObject({ kind: "cache", guard: "tool-calls", tool: "search_docs" });
    expect((out.toolGuard as ToolGuardState).stats.served).toBe(1);
  });

  it("a result older than ttlSeconds is not served: the call runs, and its new result is served next", async () => {
    let now = Date.parse("2026-11-28T12:00:00Z");
    vi.spyOn(Date, "now").mockImplementation(() => now);
    const later =
      (seconds: number): ScriptStep =>
      () => {
        now += seconds * 1000;
        return { toolCalls: [{ name: "search_docs", args: { query: "install" } }] };
      };
    const { search, runs } = searchDocs();
    const agent = createAgent({
      model: new ScriptedChatModel([ask, later(30), later(31), later(1), "Done."]),
      tools: [search],
      middleware: [guardMiddleware({ memory: { cache: { ttlSeconds: 60 } } })],
    });
    const out = await agent.invoke(input("Install?"));
    const texts = (out.messages as BaseMessage[]).filter((m) => ToolMessage.isInstance(m)).map((m) => m.content);
    // 0 s ran; 30 s served; 61 s expired: ran again; 62 s served the new result.
    expect(texts).toEqual([
      "result 1 for install",
      "result 1 for install",
      "result 2 for install",
      "result 2 for install",
    ]);
    expect(runs.n).toBe(2);
  });

  it("kept with the thread: another agent on the same checkpointer serves it; a trimmed result is not served", async () => {
    const checkpointer = new MemorySaver();
    const options = { memory: { acrossRuns: "keep" as const } };
    const build = (steps: ScriptStep[], search: ReturnType<typeof searchDocs>["search"]) =>
      createAgent({
        model: new ScriptedChatModel(steps),
        tools: [search],
        middleware: [guardMiddleware(options)],
        checkpointer,
      });
    const config = { configurable: { thread_id: "docs" } };
    const first = searchDocs();
    await build([ask, "Done."], first.search).invoke(input("Install?"), config);
    // The cache as the checkpoint holds it: plain data, a few fields per call.
    const stored = (await build([], first.search).graph.getState(config)).values.toolGuard as ToolGuardState;
    expect(JSON.parse(JSON.stringify(stored.cache))).toEqual([
      expect.objectContaining({ tool: "search_docs", paths: [], until: expect.any(Number) }),
    ]);
    const second = searchDocs();
    await build([ask, "Done."], second.search).invoke(input("And again?"), config);
    expect([first.runs.n, second.runs.n]).toEqual([1, 0]);

    // The first turn is trimmed away (its AI message and its answer): the result is no longer there to serve.
    const agent = build([], first.search);
    const messages = (await agent.graph.getState(config)).values.messages as BaseMessage[];
    const cut = messages.slice(1, 3).map((m) => new RemoveMessage({ id: m.id as string }));
    await agent.graph.updateState(config, { messages: cut });
    const third = searchDocs();
    await build([ask, "Done."], third.search).invoke(input("Once more?"), config);
    expect(third.runs.n).toBe(1);
  });

  it("parallel identical calls in one response both run (nothing to serve yet); the next response is served", async () => {
    const twice: ScriptStep = { toolCalls: [installCall, installCall] };
    for (const reactVersion of ["v1", "v2"] as const) {
      const search = { ...sequence("search_docs", ["a", "b", "c"]), metadata: HINTS };
      const calls = [step("search_docs", { query: "install" }), step("search_docs", { query: "install" })];
      const r = await runThread("createReactAgent", [search], [[calls, calls[0] as never]], {}, { reactVersion });
      expect(r.outcomes).toEqual(["ran", "ran", "served"]);
      expect(r.strikes).toBe(0);
    }
    const { search, runs } = searchDocs();
    const agent = createAgent({
      model: new ScriptedChatModel([twice, ask, "Done."]),
      tools: [search],
      middleware: [guardMiddleware()],
    });
    await agent.invoke(input("Install?"));
    expect(runs.n).toBe(2);
  });
});
