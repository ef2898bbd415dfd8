/** loopDetectMiddleware in createAgent: a model that repeats itself, and the iteration limit. */

import { tmpdir } from "node:os";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
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
  const builders = [loopDetectHook, loopDetectNode, loopDetectMiddleware, safetyLimitsMiddleware];

  it("are all validated, groups included: a wrong value throws, none is ignored", () => {
    for (const build of builders) {
      expect(() => build({ turns: { runBoundary: "thread" as never } })).toThrow(GuardOptionsError);
      expect(() => build({ feedback: { events: "no" as never } })).toThrow(/feedback\.events/);
      expect(() => build({ maxIterations: 0 })).toThrow(/maxIterations/);
      expect(() => build({ maxCost: 1 })).toThrow(/price: maxCost needs a price table/);
      const turns = { runBoundary: "none", isFailure: () => false, clock: Date.now } as const;
      expect(() => build({ maxIterations: 3, turns, feedback: { events: false } })).not.toThrow();
      // An unknown key inside a group is rejected, not ignored.
      expect(() => build({ turns: { boundary: "none" } as never })).toThrow(/turns: Unrecognized key: "boundary"/);
      expect(() => build({ feedback: { event: false } as never })).toThrow(/feedback: Unrecognized key: "event"/);
    }
    expect(() => loopDetectHook({ turns: { outputOf: "text" as never } })).toThrow(/turns\.outputOf/);
    expect(() => loopDetectHook({ turns: { scorer: "levenshtein" as never } })).toThrow(/turns\.scorer/);
    expect(() => loopDetectNode({ routes: { exit: "" } })).toThrow(/routes\.exit/);
    expect(() => loopDetectNode({ routes: { end: "x" } as never })).toThrow(/routes: Unrecognized key: "end"/);
    // One logger shape for every guard: console, or anything with info and/or warn.
    expect(() => loopDetectHook({ feedback: { logger: {} as never } })).toThrow(/feedback\.logger/);
    const root = tmpdir();
    expect(() => createFileTools({ root, feedback: { logger: { log: () => {} } as never } })).toThrow(/logger/);
    expect(() => loopDetectHook({ feedback: { logger: console } })).not.toThrow();
    expect(() => createFileTools({ root, feedback: { logger: console } })).not.toThrow();
    expect(() => loopDetectNode({ routes: { exit: "summarize", next: "tools", done: "end" } })).not.toThrow();
    // The similarity check is not part of the limits alone: its options are not options there.
    expect(() => safetyLimitsMiddleware({ loopThreshold: 0.8 } as never)).toThrow(
      /unrecognized option: loopThreshold$/m,
    );
    expect(() => safetyLimitsMiddleware({ turns: { scorer: "ratio" } } as never)).toThrow(/Unrecognized key: "scorer"/);
    expect(() => safetyLimitsMiddleware({ feedback: { logger: console } } as never)).toThrow(/"logger"/);
  });

  it("refuse a key written outside its group, by name", () => {
    for (const build of builders) {
      expect(() => build({ runBoundary: "none" } as never)).toThrow(/unrecognized option: runBoundary$/m);
      expect(() => build({ isFailure: () => true } as never)).toThrow(/unrecognized option: isFailure$/m);
      expect(() => build({ clock: Date.now } as never)).toThrow(/unrecognized option: clock$/m);
      expect(() => build({ events: false } as never)).toThrow(GuardOptionsError);
      expect(() => build({ events: false } as never)).toThrow(/unrecognized option: events$/m);
    }
    for (const build of [loopDetectHook, loopDetectNode, loopDetectMiddleware]) {
      expect(() => build({ maxIterations: 5, logger: console, scorer: "ratio" } as never)).toThrow(
        /unrecognized options: logger, scorer/,
      );
      expect(() => build({ outputOf: () => "" } as never)).toThrow(/unrecognized option: outputOf$/m);
      expect(() => build({ minOutputLength: 5 } as never)).toThrow(/unrecognized option: minOutputLength$/m);
    }
    expect(() => loopDetectNode({ exit: "summarize", next: "act" } as never)).toThrow(
      /unrecognized options: exit, next/,
    );
    expect(() => loopDetectNode({ done: "x" } as never)).toThrow(/unrecognized option: done$/m);
  });

  const person = (id: string) => new HumanMessage({ content: `Task ${id}`, id });
  const calling = (content: string, id: string) =>
    new AIMessage({ content, tool_calls: [{ name: "lookup", args: { id }, id: `call_${id}` }] });
  const answer = (id: string) => new ToolMessage({ content: `no record ${id}`, tool_call_id: `call_${id}` });

  it("turns: what the output is and what starts a new run take effect", async () => {
    // outputOf: different responses read as one output, after the same answer, are a loop (issue 63: the turn
    // that first sees an answer repeats no turn before it).
    const same = loopDetectHook({ turns: { outputOf: () => "the same words" }, feedback: { logger: quiet } });
    const none = (id: string) => new ToolMessage({ content: "no record", tool_call_id: `call_${id}` });
    let messages: BaseMessage[] = [person("h1"), calling("Look up u1.", "1")];
    const first = await same({ messages });
    messages = [...messages, none("1"), calling("Now u2.", "2")];
    const second = await same({ messages, loopGuard: first.loopGuard });
    expect(second.loopGuard?.stopped).toBeNull();
    messages = [...messages, none("2"), calling("And u3.", "3")];
    expect((await same({ messages, loopGuard: second.loopGuard })).loopGuard?.stopped?.kind).toBe("loop");
    // runBoundary: with "none" a person's new message does not start the counters again.
    for (const [runBoundary, stopped] of [
      ["human-message", undefined],
      ["none", "iterations"],
    ] as const) {
      // maxIterations: 1 runs one full turn; the 2nd turn of the run is one too many (issue 43, class 9: N full
      // turns, as openai-agents' max_turns and pydantic-ai's request_limit).
      const hook = loopDetectHook({ maxIterations: 1, turns: { runBoundary } });
      const one = [person("h1"), calling("Look up u1.", "1")];
      const start = await hook({ messages: one });
      const next = await hook({
        messages: [...one, answer("1"), person("h2"), calling("Look up u2.", "2")],
        loopGuard: start.loopGuard,
      });
      expect(next.loopGuard?.stopped?.kind).toBe(stopped);
    }
  });

  it("feedback: the logger receives the warnings, and events: false keeps the stop out of guardLog", async () => {
    const again = (id: string) =>
      new AIMessage({ content: "Look up u1.", tool_calls: [{ name: "lookup", args: { id: "1" }, id }] });
    const messages: BaseMessage[] = [
      person("h1"),
      calling("Look up u1.", "1"),
      answer("1"),
      again("c2"),
      new ToolMessage({ content: "no record 1", tool_call_id: "c2" }),
      again("c3"),
    ];
    for (const events of [true, false]) {
      const warnings: string[] = [];
      const hook = loopDetectHook({ feedback: { logger: { warn: (m) => warnings.push(m) }, events } });
      const first = await hook({ messages: messages.slice(0, 2) });
      const second = await hook({ messages: messages.slice(0, 4), loopGuard: first.loopGuard });
      const stop = await hook({ messages, loopGuard: second.loopGuard });
      expect(stop.loopGuard?.stopped?.kind).toBe("loop");
      expect(warnings).toEqual([
        "Loop detected: 100.0% similarity to previous output",
        "Breaking loop due to repetitive agent outputs",
      ]);
      expect(stop.guardLog?.map((e) => e.kind)).toEqual(events ? ["loop"] : undefined);
    }
  });

  it("routes: the node goes where they say", async () => {
    // maxIterations: 1 runs one full turn and stops the 2nd (issue 43, class 9: openai-agents' max_turns).
    const node = loopDetectNode({ maxIterations: 1, routes: { next: "act", exit: "stop", done: "finish" } });
    const one = [person("h1"), calling("Look up u1.", "1")];
    const first = await node({ messages: one });
    expect(first.goto).toEqual(["act"]);
    const loopGuard = (first.update as { loopGuard: LoopState }).loopGuard;
    const two = [...one, answer("1"), calling("Look up u2.", "2")];
    expect((await node({ messages: two, loopGuard })).goto).toEqual(["stop"]);
    const answered = [...one, answer("1"), new AIMessage("Nothing found.")];
    expect((await node({ messages: answered, loopGuard })).goto).toEqual(["finish"]);
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
      middleware: [loopDetectMiddleware({ feedback: { logger: quiet } })],
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(input, { configurable: { thread_id: "loop" }, recursionLimit: 50 });
    const final = out.messages.at(-1) as AIMessage;
    expect(final.response_metadata.guard).toMatchObject({ kind: "loop", limit: 0.9 });
    // Turn 2 is the first to see the lookup's answer; turn 3 saw the same answer again (issue 63).
    expect(llm.stepsTaken).toBe(3);
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
      middleware: [loopDetectMiddleware({ maxIterations: 3, feedback: { logger: quiet } })],
    });
    const out = await agent.invoke(input, { recursionLimit: 50 });
    const final = out.messages.at(-1) as AIMessage;
    expect(final.response_metadata.guard).toMatchObject({ kind: "iterations", limit: 3 });
    expect(validHistory(out.messages as BaseMessage[])).toEqual([]);
  });
});
