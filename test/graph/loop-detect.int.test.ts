/** Seed 004 (loop detection and safety limits) through SafetyGuard, the loop node and the createReactAgent hook. */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { AIMessage, type BaseMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import * as fuzz from "fuzzball";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createWorkspaceTools, sampleProject } from "../../examples/workspace.js";
import { SafetyGuard } from "../../src/classes/index.js";
import { similarityRatio } from "../../src/core/index.js";
import {
  GuardedToolNode,
  GuardMessagesState,
  GuardOptionsError,
  type LoopDetectNodeOptions,
  loopDetectHook,
  loopDetectNode,
} from "../../src/index.js";
import { ScriptedChatModel, type StepResponder } from "../../src/testing/index.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-loop-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { warn: () => {} };

describe("SafetyGuard (seed 004)", () => {
  it("identical outputs: a loop on the 2nd", () => {
    const guard = new SafetyGuard({ logger: quiet });
    expect(guard.detectLoop("Let me check the database for user information...")).toBe(false);
    expect(guard.detectLoop("Let me check the database for user information...")).toBe(true);
  });

  it("a window of 5: six distinct outputs, then the 1st again, is no loop", () => {
    const guard = new SafetyGuard({ logger: quiet });
    const outputs = [
      "Reading the configuration file",
      "Writing unit tests for the parser",
      "Deploying to the staging cluster",
      "Summarising yesterday's incident",
      "Migrating the billing database",
      "Translating the README into French",
    ];
    for (const o of outputs) expect(guard.detectLoop(o)).toBe(false);
    expect(guard.recentOutputs).toHaveLength(5);
    expect(guard.detectLoop(outputs[0])).toBe(false); // evicted from the window
    expect(guard.detectLoop(outputs[2])).toBe(true); // still in it
  });

  it("clearLoopHistory and reset empty the history", () => {
    const guard = new SafetyGuard({ logger: quiet });
    guard.detectLoop("Same message");
    guard.clearLoopHistory();
    expect(guard.detectLoop("Same message")).toBe(false);
    guard.recordIteration();
    guard.reset();
    expect(guard.recentOutputs).toEqual([]);
    expect(guard.detectLoop("Same message")).toBe(false);
  });

  it("custom threshold and window", () => {
    const loose = new SafetyGuard({ loopThreshold: 0.6, logger: quiet });
    loose.detectLoop("kitten");
    expect(loose.detectLoop("sitting")).toBe(true); // ratio 0.62
    const short = new SafetyGuard({ maxRecentOutputs: 1, logger: quiet });
    short.detectLoop("alpha output one");
    short.detectLoop("beta output two!");
    expect(short.detectLoop("alpha output one")).toBe(false);
  });

  it("empty or undefined output is no loop, and is not remembered", () => {
    const guard = new SafetyGuard({ logger: quiet });
    expect(guard.detectLoop("")).toBe(false);
    expect(guard.detectLoop("")).toBe(false);
    expect(guard.detectLoop(undefined)).toBe(false);
    expect(guard.recentOutputs).toEqual([]);
  });

  it("the seed's two examples that fuzzball scores differently, with the real values", () => {
    // The seed expects a loop here; fuzzball's ratio is 83, below 0.9.
    expect(fuzz.ratio("Processing the user data...", "Processing user data now...")).toBe(83);
    expect(similarityRatio("Processing the user data...", "Processing user data now...")).toBe(0.83);
    const guard = new SafetyGuard({ loopThreshold: 0.9, logger: quiet });
    expect(guard.detectLoop("Processing the user data...")).toBe(false);
    expect(guard.detectLoop("Creating the database schema...")).toBe(false);
    expect(guard.detectLoop("Processing user data now...")).toBe(false);
    // The seed expects no loop at 0.95; punctuation is removed before comparing, so the ratio is 100.
    expect(fuzz.ratio("Hello world", "Hello world!")).toBe(100);
    const strict = new SafetyGuard({ loopThreshold: 0.95, logger: quiet });
    strict.detectLoop("Hello world");
    expect(strict.detectLoop("Hello world!")).toBe(true);
  });

  it("logs as the seed does, through a replaceable logger; a scorer error is a warning and no loop", () => {
    const lines: string[] = [];
    const guard = new SafetyGuard({ logger: { warn: (m) => lines.push(m) } });
    guard.detectLoop("Same message");
    guard.detectLoop("Same message");
    expect(lines).toEqual(["Loop detected: 100.0% similarity to previous output"]);
    const broken = new SafetyGuard({
      scorer: () => {
        throw new Error("scorer down");
      },
      logger: { warn: (m) => lines.push(m) },
    });
    broken.detectLoop("a");
    expect(broken.detectLoop("a")).toBe(false);
    expect(lines.at(-1)).toBe("Error in loop detection: scorer down");
  });

  it("minOutputLength skips short outputs", () => {
    const guard = new SafetyGuard({ minOutputLength: 10, logger: quiet });
    expect(guard.detectLoop("Done")).toBe(false);
    expect(guard.detectLoop("Done")).toBe(false);
  });

  it("validates options when built", () => {
    expect(() => new SafetyGuard({ loopThreshold: 1.5 })).toThrow(GuardOptionsError);
    expect(() => new SafetyGuard({ maxCost: 5 })).toThrow(/price/);
    expect(() => new SafetyGuard({ maxIterations: 0 })).toThrow(/maxIterations/);
  });

  it("round-trips through JSON", () => {
    const guard = new SafetyGuard({ logger: quiet });
    guard.detectLoop("Checking the build output");
    const copy = SafetyGuard.fromJSON(JSON.parse(JSON.stringify(guard.toJSON())), { logger: quiet });
    expect(copy.detectLoop("Checking the build output")).toBe(true);
  });
});

/** A model whose every turn is a new, distinct tool call (never a loop), with token usage. */
function distinctCaller(usage?: { input_tokens: number; output_tokens: number; total_tokens: number }): StepResponder {
  let n = 0;
  const topics = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
  return () => {
    n += 1;
    const topic = topics[(n - 1) % topics.length] ?? "x";
    return new AIMessage({
      content: `Step ${n}: now examining the ${topic} component in depth (${topic.repeat(3)}).`,
      tool_calls: [{ name: "probe", args: { target: `${topic}-${n}` }, id: `call-${n}`, type: "tool_call" }],
      ...(usage ? { usage_metadata: usage } : {}),
    });
  };
}

const probe = (fail = false) =>
  tool(
    async ({ target }) => {
      if (fail) throw new Error(`cannot reach ${target}`);
      return `ok ${target}`;
    },
    { name: "probe", description: "probe a component", schema: z.object({ target: z.string() }) },
  );

/** agent → loop_guard → tools → agent … with the loop node; returns the messages and how many model calls ran. */
async function runNodeGraph(responder: StepResponder, options: LoopDetectNodeOptions, fail = false) {
  let calls = 0;
  const llm = new ScriptedChatModel((messages) => {
    calls += 1;
    return responder(messages);
  });
  const graph = new StateGraph(GuardMessagesState)
    .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
    .addNode("loop_guard", loopDetectNode({ ...options, feedback: { logger: quiet, ...options.feedback } }), {
      ends: ["tools", END],
    })
    .addNode("tools", new ToolNode([probe(fail)]))
    .addEdge(START, "agent")
    .addEdge("agent", "loop_guard")
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
  const out = await graph.invoke(
    { messages: [{ role: "user", content: "Investigate." }] },
    { configurable: { thread_id: "t" }, recursionLimit: 200 },
  );
  const last = out.messages[out.messages.length - 1] as BaseMessage;
  return { out, calls, last: String(last.content), graph };
}

describe("each limit stops a scripted graph at the right step", () => {
  it("iterations: 3 full turns, the 4th is stopped", async () => {
    const { calls, last, out } = await runNodeGraph(distinctCaller(), { maxIterations: 3 });
    // maxIterations: N runs N full turns (issue 43, class 9: openai-agents' max_turns, pydantic-ai's request_limit):
    // the 3rd turn's call ran, the 4th response's call did not.
    expect(calls).toBe(4);
    expect(out.messages.filter((m) => m.getType() === "tool" && (m as ToolMessage).status !== "error")).toHaveLength(3);
    expect(last).toBe("Stopped: the iteration limit was reached (3 of 3).");
  });

  it("runtime: stops at the first turn at or past the limit", async () => {
    let t = 0;
    const clock = () => {
      t += 60_000; // each model turn takes a minute
      return t;
    };
    const { calls, last } = await runNodeGraph(distinctCaller(), { maxRuntimeMs: 150_000, turns: { clock } });
    expect(calls).toBe(4); // started at 1 min; 4 min - 1 min = 3 min >= 2.5 min
    expect(last).toBe("Stopped: the runtime limit was reached (3 min of 2.5 min).");
  });

  it("tokens: from usage_metadata", async () => {
    const usage = { input_tokens: 80, output_tokens: 20, total_tokens: 100 };
    const { calls, last } = await runNodeGraph(distinctCaller(usage), { maxTokens: 250 });
    expect(calls).toBe(3);
    expect(last).toBe("Stopped: the token limit was reached (300 of 250 tokens).");
  });

  it("cost: from usage_metadata and a price table", async () => {
    const usage = { input_tokens: 1000, output_tokens: 1000, total_tokens: 2000 };
    const price = { inputPerMillion: 300, outputPerMillion: 700 }; // $1 per turn
    const { calls, last } = await runNodeGraph(distinctCaller(usage), { maxCost: 2, price });
    expect(calls).toBe(2);
    expect(last).toBe("Stopped: the cost limit was reached ($2 of $2).");
  });

  it("consecutive failures: every tool call of the last turns failed", async () => {
    const { calls, last, out } = await runNodeGraph(distinctCaller(), { maxConsecutiveFailures: 2 }, true);
    expect(calls).toBe(3);
    expect(last).toBe("Stopped: 2 failed iterations in a row (limit 2).");
    // The calls the guard did not run still got a ToolMessage: the history stays valid.
    const lastAI = out.messages.filter((m) => m.getType() === "ai").at(-2) as AIMessage;
    const answered = out.messages.filter((m) => m.getType() === "tool").map((m) => (m as ToolMessage).tool_call_id);
    for (const c of lastAI.tool_calls ?? []) expect(answered).toContain(c.id);
  });

  it("a loop: the same output after the same answer stops the run, with the similarity in the final message", async () => {
    const same = () =>
      new AIMessage({
        content: "Let me probe the alpha component again.",
        tool_calls: [{ name: "probe", args: { target: "alpha" }, id: `c${Math.random()}`, type: "tool_call" }],
      });
    const { calls, last } = await runNodeGraph(same, {});
    expect(calls).toBe(3); // the 2nd turn is the first to see the probe's answer; the 3rd saw it again (issue 63)
    expect(last).toBe("Stopped: loop detected, the output is 100.0% similar to a previous output (threshold 90%).");
  });

  it("a final answer is never stopped, and routes to done", async () => {
    const { calls, last } = await runNodeGraph(() => new AIMessage("All done."), { maxIterations: 1 });
    expect(calls).toBe(1);
    expect(last).toBe("All done.");
  });
});

describe("loopDetectHook in createReactAgent", () => {
  it("stops a looping agent before the graph's recursion limit", async () => {
    const say = { content: "I will list the files to find the config.", toolCalls: [{ name: "list_files", args: {} }] };
    const llm = new ScriptedChatModel(Array.from({ length: 50 }, () => say));
    const agent = createReactAgent({
      llm,
      tools: new ToolNode(createWorkspaceTools(sampleProject())),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({ feedback: { logger: quiet } }),
    });
    const out = await agent.invoke(
      { messages: [{ role: "user", content: "Find the config." }] },
      { recursionLimit: 25 },
    );
    expect(llm.stepsTaken).toBe(3); // turn 3 says the same after the same list as turn 2 (issue 63)
    expect(String(out.messages.at(-1)?.content)).toMatch(/^Stopped: loop detected/);
    expect(out.loopGuard.stopped?.kind).toBe("loop");
  });

  it("turns answered entirely by a guard do not count as iterations", async () => {
    // Turn 2 repeats turn 1's call: GuardedToolNode blocks it, so turn 2 is free.
    const steps = [
      {
        content: "First I read the app to understand it.",
        toolCalls: [{ name: "read_file", args: { path: "app.py" } }],
      },
      {
        content: "Reading the app module once more, carefully.",
        toolCalls: [{ name: "read_file", args: { path: "app.py" } }],
      },
      {
        content: "Now the configuration values, to compare.",
        toolCalls: [{ name: "read_file", args: { path: "config.py" } }],
      },
      {
        content: "And the models, which the app imports.",
        toolCalls: [{ name: "read_file", args: { path: "models.py" } }],
      },
      {
        content: "Finally the entry point of the program.",
        toolCalls: [{ name: "read_file", args: { path: "main.py" } }],
      },
    ];
    const llm = new ScriptedChatModel(steps);
    const agent = createReactAgent({
      llm,
      tools: new GuardedToolNode(createWorkspaceTools(sampleProject())),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({
        maxIterations: 3,
        turns: { minOutputLength: 10_000 },
        feedback: { logger: quiet },
      }),
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "Read the project." }] });
    // 3 full turns besides the free one, the 5th model turn stopped (issue 43, class 9: N full turns, as
    // openai-agents' max_turns and pydantic-ai's request_limit).
    expect(llm.stepsTaken).toBe(5);
    expect(String(out.messages.at(-1)?.content)).toBe("Stopped: the iteration limit was reached (3 of 3).");
  });

  it("a new human message starts a new session: counters and history reset", async () => {
    const say = { content: "Listing the files of the project now.", toolCalls: [{ name: "list_files", args: {} }] };
    const llm = new ScriptedChatModel([say, "Four files.", say, "Still four files."]);
    const agent = createReactAgent({
      llm,
      tools: new ToolNode(createWorkspaceTools(sampleProject())),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({ feedback: { logger: quiet } }),
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "s" } };
    await agent.invoke({ messages: [{ role: "user", content: "How many files?" }] }, config);
    const second = await agent.invoke({ messages: [{ role: "user", content: "And now?" }] }, config);
    expect(String(second.messages.at(-1)?.content)).toBe("Still four files.");
    expect(second.loopGuard.iterations).toBe(2);
  });
});

describe("persistence", () => {
  it("survives a checkpoint round trip and a restart: the loop spans two processes", async () => {
    const db = join(dir, "loop.sqlite");
    const cwd = join(import.meta.dirname, "..", "..");
    const fixture = "test/fixtures/loop-turn.ts";
    const first = JSON.parse(
      (await run(process.execPath, ["--import", "tsx", fixture, "start", db, "t"], { cwd, timeout: 60_000 })).stdout,
    );
    expect(first.loopGuard.iterations).toBe(2);
    // The 2nd turn is remembered with the answers it saw (issue 63): the 3rd, after the restart, repeats it.
    const said = "Let me look at the project files once more.\u001flist_files({})";
    const [one, two] = first.loopGuard.recentOutputs;
    expect([one, two.slice(0, said.length + 1), two.length]).toEqual([said, `${said}\u001e`, said.length + 33]);
    const second = JSON.parse(
      (await run(process.execPath, ["--import", "tsx", fixture, "resume", db, "t"], { cwd, timeout: 60_000 })).stdout,
    );
    expect(second.last).toBe(
      "Stopped: loop detected, the output is 100.0% similar to a previous output (threshold 90%).",
    );
    expect(second.loopGuard.iterations).toBe(2);
  });
});
