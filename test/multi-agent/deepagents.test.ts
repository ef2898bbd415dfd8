/**
 * Issue 47: the guards in `createDeepAgent` (deepagents), in the main agent and in its sub-agents. deepagents hands
 * a sub-agent its parent's state (the guard channels with it) and takes the sub-agent's final state back: each
 * agent's guards keep their own memory all the same. A sub-agent the guards stop is reported to its parent as
 * stopped (an error ToolMessage with the verdict), and the parent ends in words. Issue 61, item 11: `guardSubAgents`
 * guards every sub-agent, the general-purpose one included (it gets none of the main agent's middleware).
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createDeepAgent, GENERAL_PURPOSE_SUBAGENT } from "deepagents";
import type { AgentMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { type GuardLog, guardVerdict, type ToolGuardState } from "../../src/index.js";
import { guardMiddleware, guardSubAgents, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { answersOf, countingTool, finalWords } from "./support.js";

type Result = {
  messages: BaseMessage[];
  toolGuard?: ToolGuardState;
  loopGuard?: { iterations: number; agent?: string };
  guardLog?: GuardLog;
};

/** The main agent's model: starts the sub-agent with `task(description(n))`, and reports its answer in words. */
function delegating(description: (n: number) => string, rounds = 1) {
  let n = 0;
  return new ScriptedChatModel((messages) => {
    const last = messages.at(-1);
    if (ToolMessage.isInstance(last) && n >= rounds) return `Report: ${String(last.content).slice(0, 80)}`;
    n += 1;
    return { toolCalls: [{ name: "task", args: { description: description(n), subagent_type: "searcher" } }] };
  });
}

/** A sub-agent's model: one call of `tool` with `q`, then the answer in words. */
function oneLookup(tool: string, q: string) {
  return new ScriptedChatModel((messages) =>
    ToolMessage.isInstance(messages.at(-1)) ? "Found it." : { toolCalls: [{ name: tool, args: { q } }] },
  );
}

/** The sub-agent the main agent starts with `task(…, "searcher")`: its tool, its model, its guards. */
function searcher(
  tool: ReturnType<typeof countingTool>["tool"],
  model: ScriptedChatModel,
  middleware: AgentMiddleware[],
) {
  return {
    name: "searcher",
    description: "searches the code",
    systemPrompt: "Search the code.",
    tools: [tool],
    model,
    middleware,
  };
}

const invoke = async (agent: { invoke: (...a: never[]) => Promise<unknown> }, thread: string) =>
  (await (agent.invoke as (input: unknown, config: unknown) => Promise<unknown>)(
    { messages: [{ role: "user", content: "Find the TODOs in the project." }] },
    { configurable: { thread_id: thread }, recursionLimit: 200 },
  )) as Result;

describe("deepagents: a sub-agent stuck in a loop", () => {
  it("is stopped by its own guards, the parent is told it is stuck, and the parent ends in words", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    const stuck = new ScriptedChatModel(() => ({ toolCalls: [{ name: "search_code", args: { q: "TODO" } }] }));
    const agent = createDeepAgent({
      model: delegating(() => "Find the TODOs"),
      tools: [search.tool],
      middleware: [guardMiddleware({ interrupt: false })],
      subagents: [searcher(search.tool, stuck, [guardMiddleware({ interrupt: false })])],
      checkpointer: new MemorySaver(),
    });
    const result = await invoke(agent, "stuck-sub-agent");

    // The sub-agent's guards stopped it: its one search ran, its repeats were blocked, level 4 ended it.
    expect(search.runs).toEqual(["TODO"]);
    const [answer] = answersOf(result.messages, "task");
    expect(answer?.status).toBe("error");
    expect(String(answer?.content)).toMatch(
      /^The sub-agent did not finish: the guards stopped it \(escalation\): it kept repeating a call of `search_code` that they blocked\. Its task is not done/,
    );
    const artifact = answer?.artifact as { guard?: { subAgent?: { kind?: string } } } | undefined;
    expect(artifact?.guard?.subAgent?.kind).toBe("escalation");
    // The parent's guards recorded the task as a failure, not a success; its guard log is its own (the sub-agent's
    // blocks and stop are in the sub-agent's, not brought back with its state).
    const task = result.toolGuard?.repetition.window.find((r) => r.tool === "task");
    expect(task?.result?.ok).toBe(false);
    expect(result.guardLog?.counts).toEqual({});
    // The parent ended in words, on its own: its guards did not end it.
    expect(finalWords(result.messages)).toMatch(/^Report: The sub-agent did not finish/);
    expect(guardVerdict(result)).toBeUndefined();
  });

  it("a sub-agent stopped by its loop detector is reported with the loop's verdict", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    let n = 0;
    // Searching different things, saying the same words each time: the loop detector's case.
    const stuck = new ScriptedChatModel(() => {
      n += 1;
      return { content: "Let me search again.", toolCalls: [{ name: "search_code", args: { q: `TODO ${n}` } }] };
    });
    const agent = createDeepAgent({
      model: delegating(() => "Find the TODOs"),
      tools: [search.tool],
      middleware: [guardMiddleware()],
      subagents: [searcher(search.tool, stuck, [loopDetectMiddleware({ maxIterations: 8 })])],
    });
    const result = await invoke(agent, "looping-sub-agent");
    const [answer] = answersOf(result.messages, "task");
    expect(answer?.status).toBe("error");
    const verdict = (answer?.artifact as { guard?: { subAgent?: { kind?: string } } } | undefined)?.guard?.subAgent;
    expect(["loop", "iterations"]).toContain(verdict?.kind);
    expect(search.runs.length).toBeLessThanOrEqual(8);
    expect(finalWords(result.messages)).toMatch(/^Report: The sub-agent did not finish/);
  });
});

describe("deepagents: each agent's guards keep their own memory", () => {
  it("the parent's history never blocks a sub-agent's first call, and the sub-agent's state never replaces the parent's", async () => {
    const lookup = countingTool("lookup", (a) => `notes on ${a.q}`);
    lookup.tool.metadata = { readOnlyHint: true };
    let turn = 0;
    const main = new ScriptedChatModel((messages) => {
      turn += 1;
      if (turn === 1) return { toolCalls: [{ name: "lookup", args: { q: "config" } }] };
      if (turn === 2)
        return { toolCalls: [{ name: "task", args: { description: "Check the config", subagent_type: "searcher" } }] };
      return `Done: ${String(messages.at(-1)?.content)}`;
    });
    const agent = createDeepAgent({
      model: main,
      tools: [lookup.tool],
      middleware: [guardMiddleware()],
      subagents: [searcher(lookup.tool, oneLookup("lookup", "config"), [guardMiddleware()])],
      checkpointer: new MemorySaver(),
    });
    const result = await invoke(agent, "own-memory");

    // The sub-agent's read of what the parent had read ran: it has not seen it.
    expect(lookup.runs).toEqual(["config", "config"]);
    expect(finalWords(result.messages)).toBe("Done: Found it.");
    // The parent's memory is its own: its two calls, tagged with its agent (the outermost graph).
    expect(result.toolGuard?.agent).toBe("");
    expect(result.toolGuard?.repetition.window.map((r) => r.tool)).toEqual(["lookup", "task"]);
    expect(result.toolGuard?.stats.allowed).toBe(2);
  });

  it("a parent repeating the same task is caught as without sub-agents", async () => {
    const lookup = countingTool("lookup", (a) => `notes on ${a.q}`);
    const main = new ScriptedChatModel(() => ({
      toolCalls: [{ name: "task", args: { description: "Check the config", subagent_type: "searcher" } }],
    }));
    const agent = createDeepAgent({
      model: main,
      tools: [lookup.tool],
      middleware: [guardMiddleware({ interrupt: false })],
      subagents: [searcher(lookup.tool, oneLookup("lookup", "config"), [guardMiddleware()])],
    });
    const result = await invoke(agent, "repeated-task");
    // The task ran twice (a tool whose answers may change is judged by its answer: the same answer twice), then the
    // identical repeats were blocked (the sub-agent did not run again) and level 4 ended the run.
    expect(lookup.runs).toEqual(["config", "config"]);
    expect(guardVerdict(result)).toMatchObject({ guard: "tool-calls", rule: "escalation", tool: "task" });
    expect(finalWords(result.messages)).toBeDefined();
  });

  it("the parent's iteration limit counts the parent's turns, whatever its sub-agents count", async () => {
    const lookup = countingTool("lookup", (a) => `notes on ${a.q}`);
    const agent = createDeepAgent({
      model: delegating((n) => `Check part ${n}`, 100),
      tools: [lookup.tool],
      middleware: [loopDetectMiddleware({ maxIterations: 3 })],
      subagents: [searcher(lookup.tool, oneLookup("lookup", "config"), [loopDetectMiddleware({ maxIterations: 10 })])],
    });
    const result = await invoke(agent, "parent-iterations");
    expect(answersOf(result.messages, "task")).toHaveLength(3);
    expect(guardVerdict(result)).toMatchObject({ guard: "limits", rule: "iterations" });
    expect(result.loopGuard?.agent).toBe("");
    expect(AIMessage.isInstance(result.messages.at(-1))).toBe(true);
  });
});

describe("deepagents: one budget for the task", () => {
  it("the main agent and its sub-agents share a 20-iteration budget: it ends inside a sub-agent, then the main agent ends in words", async () => {
    const lookup = countingTool("lookup", (a) => `notes on ${a.q}`);
    // The sub-agent looks up four new things, then answers; the main agent starts it again and again.
    const sub = new ScriptedChatModel((messages) => {
      const done = messages.filter((m) => ToolMessage.isInstance(m)).length;
      return done >= 4
        ? "Found four things."
        : { toolCalls: [{ name: "lookup", args: { q: `item ${lookup.runs.length}` } }] };
    });
    const agent = createDeepAgent({
      model: delegating((n) => `Research part ${n}`, 100),
      tools: [lookup.tool],
      middleware: [guardMiddleware(), loopDetectMiddleware()],
      subagents: [searcher(lookup.tool, sub, [guardMiddleware(), loopDetectMiddleware()])],
    });
    const result = (await agent.invoke(
      { messages: [{ role: "user", content: "Research everything." }] },
      { configurable: { thread_id: "task-budget", taskBudget: { maxIterations: 20 } }, recursionLimit: 500 },
    )) as Result;
    // Every model turn of either agent counts: a task is 6 (the main agent's call, 4 lookups, the answer). After 3
    // tasks (18), the 4th task's main turn (19) and first lookup (20) run; the sub-agent's next lookup is stopped, it
    // reports that it did not finish, and the main agent's next turn is stopped too.
    expect(lookup.runs).toHaveLength(13);
    const answers = answersOf(result.messages, "task");
    expect(answers.map((a) => a.status ?? "success")).toEqual(["success", "success", "success", "error"]);
    expect(String(answers.at(-1)?.content)).toMatch(
      /the guards stopped it \(iterations\)\. Stopped: the task's iteration budget was reached \(20 model turns/,
    );
    expect(guardVerdict(result)).toMatchObject({
      guard: "limits",
      rule: "iterations",
      task: true,
      value: 21,
      limit: 20,
    });
  });
});

describe("deepagents: the general-purpose sub-agent", () => {
  /**
   * One model for the main agent and the general-purpose sub-agent (it is the main agent's model): the main agent
   * hands "Find the TODOs" to `general-purpose`, which searches for the same thing again and again.
   */
  function mainAndStuckGeneralPurpose() {
    return new ScriptedChatModel((messages) => {
      if (String(messages.find((m) => HumanMessage.isInstance(m))?.content) === "Find the TODOs")
        return { toolCalls: [{ name: "search_code", args: { q: "TODO" } }] };
      const last = messages.at(-1);
      if (ToolMessage.isInstance(last)) return `Report: ${String(last.content).slice(0, 80)}`;
      return {
        toolCalls: [{ name: "task", args: { description: "Find the TODOs", subagent_type: "general-purpose" } }],
      };
    });
  }

  it("guardSubAgents with GENERAL_PURPOSE_SUBAGENT: a general-purpose sub-agent repeating one call is stopped by its own guards", async () => {
    const search = countingTool("search_code", (a) => `no match for ${a.q}`);
    const guards = () => [guardMiddleware({ interrupt: false }), loopDetectMiddleware()];
    const agent = createDeepAgent({
      model: mainAndStuckGeneralPurpose(),
      tools: [search.tool],
      middleware: guards(),
      subagents: guardSubAgents(guards, [GENERAL_PURPOSE_SUBAGENT]),
    });
    const result = await invoke(agent, "general-purpose");

    // Without its guards it ran 99 times here (recursionLimit 200; deepagents' own limit is 10,000 steps).
    expect(search.runs).toEqual(["TODO"]);
    const [answer] = answersOf(result.messages, "task");
    expect(answer?.status).toBe("error");
    expect(String(answer?.content)).toMatch(/^The sub-agent did not finish: the guards stopped it \(escalation\)/);
    expect(finalWords(result.messages)).toMatch(/^Report: The sub-agent did not finish/);
  });

  it("guardSubAgents: each declared sub-agent gets its own guards, a guard it declares is kept, a compiled one is left as it is", () => {
    const mine = guardMiddleware({ interrupt: false });
    const compiled = { name: "compiled", description: "a compiled agent", runnable: {} };
    const [gp, own, left] = guardSubAgents(
      () => [guardMiddleware(), loopDetectMiddleware()],
      [GENERAL_PURPOSE_SUBAGENT, { name: "own", description: "d", systemPrompt: "p", middleware: [mine] }, compiled],
    ) as { middleware?: { name: string }[] }[];
    expect(gp?.middleware?.map((m) => m.name)).toEqual(["GuardMiddleware", "LoopDetectMiddleware"]);
    expect(own?.middleware?.map((m) => m.name)).toEqual(["LoopDetectMiddleware", "GuardMiddleware"]);
    expect(own?.middleware?.[1]).toBe(mine);
    expect(left).toBe(compiled);
  });
});
