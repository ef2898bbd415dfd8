/**
 * Issue 61, item 10 (left from round 4): a sub-agent with its own persisted thread (`checkpointer: true`: its
 * checkpoint namespace has no task id) invoked again at a later step of its parent runs under the same namespace,
 * its thread's steps going on. Each invocation has its own step budget: the second gets the 7 tool turns it gets alone.
 */
import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { guardVerdict } from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { doneSteps, type TestAgent, text, work } from "./agents.js";

/** The first task takes 3 tool turns and answers; the next one never ends. */
const model = () =>
  new ScriptedChatModel((messages: BaseMessage[]) => {
    const done = doneSteps(messages);
    if (messages.filter((m) => m.getType() === "human").length === 1 && done >= 3) return "All 3 steps are done.";
    return { content: `Next: ${randomUUID()}`, toolCalls: [{ name: "work", args: { n: done } }] };
  });

const Runs = Annotation.Root({
  runs: Annotation<BaseMessage[][]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

describe("a sub-agent invoked again under the same namespace", () => {
  it("its own thread (checkpointer: true), invoked at two steps of one parent node: the second gets its own 7 turns", async () => {
    const agent = createAgent({
      model: model(),
      tools: [work],
      middleware: [guardMiddleware(), loopDetectMiddleware({ turns: { outputOf: text } })],
      checkpointer: true, // its own thread, under its parent's checkpointer
    } as never) as unknown as TestAgent;
    const parent = new StateGraph(Runs)
      .addNode("team", async (state) => {
        const content = state.runs.length === 0 ? "Do three steps." : "Now do all the steps.";
        const { messages } = await agent.invoke({ messages: [{ role: "user", content }] });
        return { runs: [messages] };
      })
      .addEdge(START, "team")
      .addConditionalEdges("team", (state) => (state.runs.length < 2 ? "team" : END))
      .compile({ checkpointer: new MemorySaver() });
    const { runs } = await parent.invoke({}, { configurable: { thread_id: "again" } });
    const [first, second] = runs as [BaseMessage[], BaseMessage[]];
    expect(doneSteps(first)).toBe(3);
    expect(guardVerdict({ messages: first })).toBeUndefined();
    expect(doneSteps(second)).toBe(7);
    expect(guardVerdict({ messages: second })).toMatchObject({ guard: "steps", limit: 25 });
  });
});
