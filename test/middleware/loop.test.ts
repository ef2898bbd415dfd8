/** loopDetectMiddleware in createAgent: a model that repeats itself, and the iteration limit. */

import { tmpdir } from "node:os";
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createFileTools, GuardOptionsError, type LoopState, loopDetectHook, loopDetectNode } from "../../src/index.js";
import { loopDetectMiddleware, safetyLimitsMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { validHistory } from "../support/escalation.js";

const lookup = tool(async ({ id }) => `no record ${id}`, {
  name: "lookup",
  description: "Look a record up.",
  schema: z.object({ id: z.string() }),
});
const input = { messages: [{ role: "user", content: "Find the user." }] };
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

describe("the loop guard's options", () => {
  it("are all validated, the way a turn is read included: a wrong value throws, none is ignored", () => {
    for (const build of [loopDetectHook, loopDetectNode, loopDetectMiddleware, safetyLimitsMiddleware]) {
      expect(() => build({ runBoundary: "thread" as never })).toThrow(GuardOptionsError);
      expect(() => build({ events: "no" as never })).toThrow(/events/);
      expect(() => build({ maxIterations: 0 })).toThrow(/maxIterations/);
      expect(() => build({ runBoundary: "none", events: false, maxIterations: 3 })).not.toThrow();
    }
    expect(() => loopDetectHook({ outputOf: "text" as never })).toThrow(/outputOf/);
    // One logger shape for every guard: console, or anything with info and/or warn.
    expect(() => loopDetectHook({ logger: {} as never })).toThrow(/logger/);
    expect(() => createFileTools({ root: tmpdir(), logger: { log: () => {} } as never })).toThrow(/logger/);
    expect(() => loopDetectHook({ logger: console })).not.toThrow();
    expect(() => createFileTools({ root: tmpdir(), logger: console })).not.toThrow();
    expect(() => loopDetectNode({ exit: "summarize", next: "tools", done: "end" })).not.toThrow();
  });
});

describe("loopDetectMiddleware in createAgent", () => {
  it("stops a model that says and does the same thing again, answering its pending call", async () => {
    const llm = new ScriptedChatModel(() => ({
      content: "Let me check the database for user information...",
      toolCalls: [{ name: "lookup", args: { id: "u1" } }],
    }));
    const agent = createAgent({
      model: llm,
      tools: [lookup],
      middleware: [loopDetectMiddleware({ logger: quiet })],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(input, { configurable: { thread_id: "loop" }, recursionLimit: 50 });
    const final = out.messages.at(-1) as AIMessage;
    expect(final.response_metadata.guard).toMatchObject({ kind: "loop", limit: 0.9 });
    expect(llm.stepsTaken).toBe(2);
    expect(validHistory(out.messages as BaseMessage[])).toEqual([]);
    expect((out.loopGuard as LoopState).iterations).toBeGreaterThan(0);
  });

  it("ends the run at maxIterations with distinct outputs", async () => {
    const plans = [
      "Search the customers table by email.",
      "Open the audit log of March.",
      "Ask billing for invoices.",
      "Read the CRM notes of Acme.",
    ];
    let n = 0;
    const llm = new ScriptedChatModel(() => ({
      content: plans[n % plans.length],
      toolCalls: [{ name: "lookup", args: { id: `${n++}` } }],
    }));
    const agent = createAgent({
      model: llm,
      tools: [lookup],
      middleware: [loopDetectMiddleware({ maxIterations: 3, logger: quiet })],
    });
    const out = await agent.invoke(input, { recursionLimit: 50 });
    const final = out.messages.at(-1) as AIMessage;
    expect(final.response_metadata.guard).toMatchObject({ kind: "iterations", limit: 3 });
    expect(validHistory(out.messages as BaseMessage[])).toEqual([]);
  });
});
