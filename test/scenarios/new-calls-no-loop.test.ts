/**
 * Issue 43, class 1 (measured from outside on other agent projects' loop scenarios): the loop detector stopped runs
 * whose tool calls were all new. Each turn was compared as text plus `name(args)` with the fuzzy ratio, so tool-only
 * turns that differ in one argument were >= 90% alike: a research run (a new query, a new article, 30 times) was
 * stopped at turn 4, and reading eight different modules (payments.py, taxes.py, ...) at turn 6. A turn's calls are
 * now compared by identity: a turn that calls something new is progress. The same text with the same calls, after
 * the same answers, is still a loop: stopped at turn 3 (issue 63: turn 2 is the first to have seen the answer).
 * Through createAgent, createReactAgent and replay.
 */
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GuardedToolNode, GuardMessagesState, guardVerdict, loopDetectHook } from "../../src/index.js";
import { loopDetectMiddleware } from "../../src/middleware/index.js";
import { type ReplayRun, replayLoopDetector } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";

const quiet = { feedback: { logger: { warn: () => undefined }, events: false } };
const search = tool(async ({ q }) => `3 results for ${q}`, {
  name: "search",
  description: "Searches the web",
  schema: z.object({ q: z.string() }),
});
const fetchPage = tool(async ({ url }) => `the article at ${url}`, {
  name: "fetch",
  description: "Fetches a page",
  schema: z.object({ url: z.string() }),
});
const readFile = tool(async ({ path }) => `contents of ${path}`, {
  name: "read_file",
  description: "Reads a file",
  schema: z.object({ path: z.string() }),
});
const tools = [search, fetchPage, readFile];

/** A research run: 30 turns, a new query or a new article each, with the same words; then the answer. */
const research: ScriptStep[] = [
  ...Array.from(
    { length: 30 },
    (_, i): ScriptStep =>
      i % 2 === 0
        ? {
            content: "Searching for more sources.",
            toolCalls: [{ name: "search", args: { q: `cache eviction ${i}` } }],
          }
        : {
            content: "Reading the next article.",
            toolCalls: [{ name: "fetch", args: { url: `https://a.example/${i}` } }],
          },
  ),
  "Here is what the 15 sources say.",
];
/** Eight different modules read with tool-only turns (no text), then the answer. */
const MODULES = ["payments", "taxes", "invoices", "refunds", "ledger", "accounts", "reports", "audit"];
const modules: ScriptStep[] = [
  ...MODULES.map((m): ScriptStep => ({ toolCalls: [{ name: "read_file", args: { path: `src/${m}.py` } }] })),
  "All eight modules read.",
];
/** A real loop: the same words and the same call, again. */
const looping: ScriptStep[] = Array.from({ length: 6 }, () => ({
  content: "Let me check the status once more.",
  toolCalls: [{ name: "search", args: { q: "status" } }],
}));

const ran = (messages: BaseMessage[]) => messages.filter((m) => ToolMessage.isInstance(m)).length;

async function viaCreateAgent(script: ScriptStep[]) {
  const agent = createAgent({ model: new ScriptedChatModel(script), tools, middleware: [loopDetectMiddleware(quiet)] });
  return (await agent.invoke({ messages: [{ role: "user", content: "Go." }] }, { recursionLimit: 200 }))
    .messages as BaseMessage[];
}

async function viaCreateReactAgent(script: ScriptStep[]) {
  const agent = createReactAgent({
    llm: new ScriptedChatModel(script),
    tools: new GuardedToolNode(tools),
    stateSchema: GuardMessagesState,
    postModelHook: loopDetectHook(quiet),
  });
  return (await agent.invoke({ messages: [{ role: "user", content: "Go." }] }, { recursionLimit: 200 }))
    .messages as BaseMessage[];
}

function viaReplay(script: ScriptStep[]) {
  const steps: ReplayRun["steps"] = [{ role: "user", text: "Go." }];
  for (const step of script) {
    if (typeof step === "string") {
      steps.push({ role: "assistant", text: step, tool_calls: [] });
      continue;
    }
    const calls = (step as { content?: string; toolCalls?: { name: string; args: unknown }[] }).toolCalls ?? [];
    steps.push({ role: "assistant", text: (step as { content?: string }).content ?? "", tool_calls: calls });
    for (const _ of calls) steps.push({ role: "tool", ok: true, text: "ok" });
  }
  return replayLoopDetector({ id: "scenario", steps }, { logger: { warn: () => undefined } });
}

describe("issue 43, class 1: turns whose calls are all new are never a loop", () => {
  for (const [name, run] of [
    ["createAgent", viaCreateAgent],
    ["createReactAgent", viaCreateReactAgent],
  ] as const) {
    it(`${name}: a research run of 30 new searches and fetches with the same words runs to its answer`, async () => {
      const messages = await run(research);
      expect(ran(messages)).toBe(30);
      expect((messages.at(-1) as AIMessage).content).toBe("Here is what the 15 sources say.");
      expect(guardVerdict(messages)).toBeUndefined();
    });

    it(`${name}: eight different modules read in tool-only turns: all read, no stop`, async () => {
      const messages = await run(modules);
      expect(ran(messages)).toBe(8);
      expect((messages.at(-1) as AIMessage).content).toBe("All eight modules read.");
    });

    it(`${name}: the same words, call and answer again is still a loop, stopped at turn 3`, async () => {
      const messages = await run(looping);
      expect(guardVerdict(messages)).toMatchObject({ guard: "loop", rule: "loop" });
      // Turns 1 and 2 answered (the tool, or the tool-call guards' repeat answer); turn 3's call, if answered, "Not run".
      expect(ran(messages)).toBeLessThanOrEqual(3);
    });
  }

  it("replay: the research run and the modules are not stopped; the loop is, at its 3rd turn", () => {
    expect(viaReplay(research).stop).toBeNull();
    expect(viaReplay(modules).stop).toBeNull();
    expect(viaReplay(looping)).toMatchObject({ stop: { kind: "loop" }, turn: 3 });
  });
});
