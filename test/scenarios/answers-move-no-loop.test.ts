/**
 * Issue 63, why 1: the loop detector compared what the model wrote and called, never what the calls answered, so an
 * agent that repeats itself while its answers move was stopped at turn 2. browser-use: a product list scrolled with
 * `scroll_down {}`, the memory line growing ("Memory: 20 of about 240 products collected … Next goal: scroll down"),
 * 99% alike. agent-zero: `code_execution_tool { runtime: "output" }` polled while `npm install` prints new lines.
 * The README's own `turns: { outputOf: (m) => m.text }`: a new search each turn, worded alike. A turn now repeats
 * an earlier one only when it says and calls the same after seeing the same (normalized) answers; the same words,
 * call and answer every turn is still a loop, stopped at turn 3 (turn 2 is the first to see that answer). Through
 * createAgent + loopDetectMiddleware, createReactAgent + loopDetectHook, and replayLoopDetector.
 */
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GuardMessagesState, guardVerdict, type LoopDetectOptions, loopDetectHook } from "../../src/index.js";
import { loopDetectMiddleware } from "../../src/middleware/index.js";
import { type ReplayRun, replayLoopDetector } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";

const quiet = { feedback: { logger: { warn: () => undefined }, events: false } };

/** A scenario: the model's script, and a tool whose n-th run (1-based) answers `answer(n, args)`. */
interface Scenario {
  script: ScriptStep[];
  tool: string;
  answer: (n: number, args: Record<string, unknown>) => string;
  options?: LoopDetectOptions;
}

function toolsOf(scenario: Scenario) {
  let n = 0;
  const run = tool(async (args: Record<string, unknown>) => scenario.answer(++n, args), {
    name: scenario.tool,
    description: `The ${scenario.tool} tool`,
    schema: z.object({}).passthrough(),
  });
  return [run];
}

/** The calls the tool answered (a stop answers the calls it holds back "Not run"). */
const ran = (messages: BaseMessage[]) =>
  messages.filter(
    (m) => ToolMessage.isInstance(m) && (m.artifact as { guard?: unknown } | undefined)?.guard === undefined,
  ).length;

async function viaCreateAgent(scenario: Scenario) {
  const agent = createAgent({
    model: new ScriptedChatModel(scenario.script),
    tools: toolsOf(scenario),
    middleware: [loopDetectMiddleware({ ...quiet, ...scenario.options })],
  });
  return (await agent.invoke({ messages: [{ role: "user", content: "Go." }] }, { recursionLimit: 200 }))
    .messages as BaseMessage[];
}

async function viaCreateReactAgent(scenario: Scenario) {
  const agent = createReactAgent({
    llm: new ScriptedChatModel(scenario.script),
    tools: new ToolNode(toolsOf(scenario)),
    stateSchema: GuardMessagesState,
    postModelHook: loopDetectHook({ ...quiet, ...scenario.options }),
  });
  return (await agent.invoke({ messages: [{ role: "user", content: "Go." }] }, { recursionLimit: 200 }))
    .messages as BaseMessage[];
}

function viaReplay(scenario: Scenario) {
  const steps: ReplayRun["steps"] = [{ role: "user", text: "Go." }];
  let n = 0;
  for (const step of scenario.script) {
    if (typeof step === "string") {
      steps.push({ role: "assistant", text: step, tool_calls: [] });
      continue;
    }
    const calls = (step as { toolCalls?: { name: string; args: Record<string, unknown> }[] }).toolCalls ?? [];
    steps.push({ role: "assistant", text: (step as { content?: string }).content ?? "", tool_calls: calls });
    for (const call of calls) steps.push({ role: "tool", ok: true, text: scenario.answer(++n, call.args) });
  }
  const options = { logger: { warn: () => undefined } };
  // replayLoopDetector compares turns as `defaultTurnOutput` does (no `outputOf`).
  return replayLoopDetector({ id: "scenario", steps }, options);
}

/** browser-use: 12 scrolls of a product list, the memory line growing by 20 products each, then the answer. */
const scrolling: Scenario = {
  tool: "scroll_down",
  script: [
    ...Array.from(
      { length: 12 },
      (_, k): ScriptStep => ({
        content:
          `Eval: Success - scrolled, new products visible. Memory: ${20 * k} of about 240 products collected ` +
          "(name, price, rating) from the catalogue page. Next goal: scroll down to load the next products.",
        toolCalls: [{ name: "scroll_down", args: {} }],
      }),
    ),
    "Done: 240 products collected.",
  ],
  answer: (n) =>
    Array.from({ length: 20 }, (_, i) => `product ${20 * (n - 1) + i + 1}: $${(n * 7 + i) % 90}.99`).join("\n"),
};

const NPM = ["idealTree: timing", "reify: fetching lodash", "reify: fetching react", "added 12 packages"];
/** agent-zero: `code_execution_tool { runtime: "output" }` ×8 while `npm install` prints one more line each time. */
const polling: Scenario = {
  tool: "code_execution_tool",
  script: [
    ...Array.from(
      { length: 8 },
      (): ScriptStep => ({
        content: "The installation is still running; I will wait for more output.",
        toolCalls: [{ name: "code_execution_tool", args: { runtime: "output" } }],
      }),
    ),
    "npm install finished.",
  ],
  answer: (n) => Array.from({ length: n }, (_, i) => `npm http fetch GET 200 package-${i} (${NPM[i % 4]})`).join("\n"),
};

/** The README's setting, `outputOf: (m) => m.text`: six new searches, worded alike after the first, each a new page. */
const searching: Scenario = {
  tool: "web_search",
  options: { turns: { outputOf: (m) => m.text } },
  script: [
    ...Array.from(
      { length: 6 },
      (_, i): ScriptStep => ({
        content: i === 0 ? "Let me search for the topic." : "Searching for more sources.",
        toolCalls: [{ name: "web_search", args: { query: `cache eviction policies part ${i + 1}` } }],
      }),
    ),
    "Here is what the six searches found.",
  ],
  answer: (_, args) => `Results for ${String(args.query)}: a page about ${String(args.query)}.`,
};

/** A real loop: the same words, the same call and the same answer every turn. */
const stuck: Scenario = {
  tool: "check_status",
  script: Array.from({ length: 6 }, () => ({
    content: "Let me check the status once more.",
    toolCalls: [{ name: "check_status", args: { job: "build-7" } }],
  })),
  answer: () => "status: failed (exit code 1)",
};

describe("issue 63, why 1: turns whose calls answered something new are not repeats", () => {
  for (const [name, run] of [
    ["createAgent + loopDetectMiddleware", viaCreateAgent],
    ["createReactAgent + loopDetectHook", viaCreateReactAgent],
  ] as const) {
    it(`${name}: browser-use scrolling a product list, its memory line growing, runs all 12 scrolls`, async () => {
      const messages = await run(scrolling);
      expect(ran(messages)).toBe(12);
      expect((messages.at(-1) as AIMessage).content).toBe("Done: 240 products collected.");
      expect(guardVerdict(messages)).toBeUndefined();
    });

    it(`${name}: agent-zero polling code_execution_tool while npm install prints new lines runs all 8 polls`, async () => {
      const messages = await run(polling);
      expect(ran(messages)).toBe(8);
      expect((messages.at(-1) as AIMessage).content).toBe("npm install finished.");
      expect(guardVerdict(messages)).toBeUndefined();
    });

    it(`${name}: the README's outputOf (m) => m.text with a new search each turn runs all six`, async () => {
      const messages = await run(searching);
      expect(ran(messages)).toBe(6);
      expect((messages.at(-1) as AIMessage).content).toBe("Here is what the six searches found.");
      expect(guardVerdict(messages)).toBeUndefined();
    });

    it(`${name}: the same words, call and answer every turn is still a loop, stopped at turn 3`, async () => {
      const messages = await run(stuck);
      expect(guardVerdict(messages)).toMatchObject({ guard: "loop", rule: "loop" });
      expect(ran(messages)).toBe(2);
    });
  }

  it("replay: the scroll, the poll and the searches are not stopped; the stuck run is, at turn 3", () => {
    expect(viaReplay(scrolling).stop).toBeNull();
    expect(viaReplay(polling).stop).toBeNull();
    expect(viaReplay(searching).stop).toBeNull();
    expect(viaReplay(stuck)).toMatchObject({ stop: { kind: "loop" }, turn: 3 });
  });
});
