/**
 * One decision per call: a call's facts (its identity, effect, shell or stateful) are worked out once, by the one
 * function that asks the classifier, whichever adapter runs the agent. The spies sit on the classifier's and the
 * facts' module namespaces, which every other module reads its imports from: each call the engine makes is seen.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseMessage, HumanMessage, mapChatMessagesToStoredMessages } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import * as classify from "../../src/common/identity/classify.js";
import { escalationHook, escalationNode, GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { replayGuards, runFromMessages } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import * as facts from "../../src/tool-calls/core/facts.js";

const folder = mkdtempSync(join(tmpdir(), "one-decision-"));
writeFileSync(join(folder, "build.log"), "step 1\n");
const log = join(folder, "build.log");

const readFile = tool(async ({ path }) => `contents of ${path}`, {
  name: "read_file",
  description: "Read a file.",
  schema: z.object({ path: z.string() }),
});
const bash = tool(async ({ command }) => `ran ${command}`, {
  name: "bash",
  description: "Run a shell command.",
  schema: z.object({ command: z.string() }),
});
const status = tool(async ({ id }) => `job ${id}: running`, {
  name: "get_job_status",
  description: "A job's status.",
  schema: z.object({ id: z.string() }),
});
const tools = () => [readFile, bash, status];

/** The spies' counts: facts worked out, and the classifier's identity and stateful answers (either function). */
function spies() {
  const counted = [
    vi.spyOn(facts, "callFacts"),
    vi.spyOn(classify, "callIdentity"),
    vi.spyOn(classify, "statefulCall"),
  ];
  const stateful = vi.spyOn(classify, "isStatefulCall");
  return () => {
    const [made, identified, statefulAsked] = counted.map((spy) => spy.mock.calls.length) as [number, number, number];
    return [made, identified, statefulAsked + stateful.mock.calls.length];
  };
}
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * A script whose every model call first notes the counts, so that each response's calls can be told apart: a new
 * read, its identical repeat (blocked), a shell read of a file and its repeat, a poll, two calls in one response.
 */
function script(counts: () => number[], seen: number[][]): { steps: ScriptStep[]; calls: number[] } {
  const responses = [
    [{ name: "read_file", args: { path: "a.py" } }],
    [{ name: "read_file", args: { path: "a.py" } }],
    [{ name: "bash", args: { command: `cat ${log}` } }],
    [{ name: "bash", args: { command: `cat ${log}` } }],
    [{ name: "get_job_status", args: { id: "j1" } }],
    [
      { name: "read_file", args: { path: "b.py" } },
      { name: "get_job_status", args: { id: "j2" } },
    ],
  ];
  let n = 0;
  const steps: ScriptStep[] = [...responses, []].map((calls, i) => (_messages: BaseMessage[]) => {
    seen.push(counts());
    if (i === responses.length) return "Done.";
    return { content: "", toolCalls: calls.map((c) => ({ ...c, id: `c${++n}` })) };
  });
  return { steps, calls: responses.map((r) => r.length) };
}

/** What each response's calls cost: the counts' differences between the model calls before and after it. */
const perResponse = (seen: number[][]) => seen.slice(1).map((now, i) => now.map((v, j) => v - (seen[i]?.[j] ?? 0)));
const once = (calls: number[]) => calls.map((k) => [k, k, k]);

const input = { messages: [new HumanMessage("Read, check the log, poll the job.")] };

describe("one decision per call: the classifier asked once per call, through every adapter", () => {
  it("createAgent + guardMiddleware", async () => {
    const counts = spies();
    const seen: number[][] = [];
    const { steps, calls } = script(counts, seen);
    const agent = createAgent({
      model: new ScriptedChatModel(steps),
      tools: tools(),
      middleware: [guardMiddleware({ interrupt: false })],
      checkpointer: new MemorySaver(),
    });
    await agent.invoke(input, { configurable: { thread_id: "mw" } });
    expect(perResponse(seen)).toEqual(once(calls));
  });

  it("createReactAgent + GuardedToolNode", async () => {
    const counts = spies();
    const seen: number[][] = [];
    const { steps, calls } = script(counts, seen);
    const agent = createReactAgent({
      llm: new ScriptedChatModel(steps),
      tools: new GuardedToolNode(tools()),
      stateSchema: GuardMessagesState,
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(input, { configurable: { thread_id: "node" } });
    expect(perResponse(seen)).toEqual(once(calls));
    // The repeats were decided, not only counted: the second read and the second shell read were blocked.
    const blocked = (out.messages as BaseMessage[]).filter(
      (m) => m.getType() === "tool" && (m as { status?: string }).status === "error",
    );
    expect(blocked.length).toBe(2);

    // Replay of the same messages: one for each call too.
    const stored = JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(out.messages as BaseMessage[])));
    const before = counts();
    const replay = replayGuards(runFromMessages(stored, "one-decision"), { agentTools: tools().map((t) => t.name) });
    const total = calls.reduce((a, b) => a + b, 0);
    expect(replay.decisions.length).toBe(total);
    expect(counts().map((v, j) => v - (before[j] ?? 0))).toEqual([total, total, total]);
  });

  for (const version of ["v1", "v2"] as const) {
    it(`createReactAgent ${version} + escalationHook: the hook's plan is the node's (and a v2 task's, its siblings')`, async () => {
      const counts = spies();
      const seen: number[][] = [];
      const { steps, calls } = script(counts, seen);
      const node = new GuardedToolNode(tools());
      const agent = createReactAgent({
        llm: new ScriptedChatModel(steps),
        tools: node,
        stateSchema: GuardMessagesState,
        postModelHook: escalationHook(node),
        checkpointer: new MemorySaver(),
        version,
      });
      await agent.invoke(input, { configurable: { thread_id: `hook-${version}` } });
      expect(perResponse(seen)).toEqual(once(calls));
    });
  }

  it("a custom StateGraph with escalationNode and GuardedToolNode", async () => {
    const counts = spies();
    const seen: number[][] = [];
    const { steps, calls } = script(counts, seen);
    const llm = new ScriptedChatModel(steps);
    const node = new GuardedToolNode(tools());
    const graph = new StateGraph(GuardMessagesState)
      .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
      .addNode("escalation", escalationNode(node), { ends: ["tools", "agent", END] })
      .addNode("tools", node)
      .addEdge(START, "agent")
      .addEdge("agent", "escalation")
      .addEdge("tools", "agent")
      .compile({ checkpointer: new MemorySaver() });
    await graph.invoke(input, { configurable: { thread_id: "graph" } });
    expect(perResponse(seen)).toEqual(once(calls));
  });
});
