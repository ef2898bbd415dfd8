/**
 * Issue 42: each invocation of a guarded agent has its own step budget, wherever it runs: alone, as sub-agents run in
 * parallel inside one node of a parent graph, through `Send`, one after the other in one node, and as a subgraph
 * node. Each gets the tool turns it gets alone and ends in words; none throws GraphRecursionError.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, END, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { guardVerdict } from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { toolTurnsThatFit } from "../../src/run-end/budget.js";
import { allowManyAbortListeners } from "../support/abort-listeners.js";
import { agentWith, doneSteps, text } from "./agents.js";

const input = { messages: [{ role: "user", content: "Do all the steps." }] };
/** The documented pair: 7 tool turns fit recursionLimit 25 (turns of 3 steps). */
const guarded = (turns = Number.POSITIVE_INFINITY) =>
  agentWith(turns, [guardMiddleware(), loopDetectMiddleware({ turns: { outputOf: text } })]);

function expectSevenTurnsInWords(messages: BaseMessage[]) {
  expect(doneSteps(messages)).toBe(7);
  expect(guardVerdict({ messages })).toMatchObject({ guard: "steps", limit: 25 });
}

const Results = Annotation.Root({
  runs: Annotation<BaseMessage[][]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  i: Annotation<number>,
});

describe("sub-agents: a budget per invocation", () => {
  it("alone: 7 tool turns, then the wrap-up", async () => {
    expectSevenTurnsInWords((await guarded().invoke(input)).messages);
  });

  it("two run in parallel inside one node (Promise.all), then one twice in a row: each its own 7 turns", async () => {
    const parent = new StateGraph(Results)
      .addNode("team", async () => {
        const both = await Promise.all([guarded().invoke(input), guarded().invoke(input)]);
        const again = guarded();
        const first = await again.invoke(input);
        const second = await again.invoke(input);
        return { runs: [...both, first, second].map((r) => r.messages) };
      })
      .addEdge(START, "team")
      .addEdge("team", END)
      .compile({ checkpointer: new MemorySaver() });
    const { runs } = await parent.invoke({}, { configurable: { thread_id: "team" } });
    expect(runs).toHaveLength(4);
    for (const messages of runs) expectSevenTurnsInWords(messages);
  });

  it("through Send, three at once: each its own 7 turns", async () => {
    const parent = new StateGraph(Results)
      .addNode("worker", async () => ({ runs: [(await guarded().invoke(input)).messages] }))
      .addConditionalEdges(START, () => [0, 1, 2].map((i) => new Send("worker", { i })))
      .addEdge("worker", END)
      .compile();
    const { runs } = await parent.invoke({});
    expect(runs).toHaveLength(3);
    for (const messages of runs) expectSevenTurnsInWords(messages);
  });

  it("as a subgraph node, invoked at two steps of the parent: each its own budget", async () => {
    const agent = guarded();
    const parent = new StateGraph(MessagesAnnotation)
      .addNode("first", agent.graph)
      .addNode("second", agent.graph)
      .addNode("ask", () => ({ messages: [{ role: "user", content: "Do more steps." }] }))
      .addEdge(START, "first")
      .addEdge("first", "ask")
      .addEdge("ask", "second")
      .addEdge("second", END)
      .compile();
    const { messages } = await parent.invoke(input);
    expect(doneSteps(messages)).toBe(7); // the second sub-run's steps, after the parent's message
    expect(guardVerdict({ messages })).toMatchObject({ guard: "steps" });
    const ask = messages.findIndex((m) => m.getType() === "human" && String(m.content) === "Do more steps.");
    expect(doneSteps(messages.slice(0, ask))).toBe(7);
  });

  it("property: recursionLimit 5-60, tasks of 0-12 tool turns or endless, in parallel and through Send: each gets what it gets alone", async () => {
    const shape = { around: 1, edges: 0 }; // guardMiddleware + loopDetectMiddleware
    const expected = (limit: number, turns: number) => Math.min(turns, toolTurnsThatFit(limit, shape));
    const task = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constant(Number.POSITIVE_INFINITY));
    allowManyAbortListeners(); // four agents at once below one run, 30 times
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 5, max: 60 }), task, task, async (limit, a, b) => {
        const Tasks = Annotation.Root({
          runs: Annotation<BaseMessage[][]>({ reducer: (x, y) => [...x, ...y], default: () => [] }),
          turns: Annotation<number>,
        });
        const parent = new StateGraph(Tasks)
          .addNode("team", async () => {
            const runs = await Promise.all([guarded(a).invoke(input), guarded(b).invoke(input)]);
            return { runs: runs.map((r) => r.messages) };
          })
          .addNode("worker", async (s: { turns: number }) => ({
            runs: [(await guarded(s.turns).invoke(input)).messages],
          }))
          .addConditionalEdges(START, () => [
            new Send("team", {}),
            new Send("worker", { turns: a }),
            new Send("worker", { turns: b }),
          ])
          .addEdge("team", END)
          .addEdge("worker", END)
          .compile();
        const { runs } = await parent.invoke({}, { recursionLimit: limit });
        const want = [expected(limit, a), expected(limit, b)];
        expect(runs.map((m) => doneSteps(m)).sort()).toEqual([...want, ...want].sort());
        for (const messages of runs) expect(messages.at(-1)?.getType()).toBe("ai");
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it("a task that fits ends in the model's answer wherever it runs", async () => {
    const parent = new StateGraph(Results)
      .addNode("team", async () => {
        const runs = await Promise.all([guarded(7).invoke(input), guarded(3).invoke(input)]);
        return { runs: runs.map((r) => r.messages) };
      })
      .addEdge(START, "team")
      .addEdge("team", END)
      .compile();
    const { runs } = await parent.invoke({});
    expect(runs.map((m) => doneSteps(m))).toEqual([7, 3]);
    expect(runs.map((m) => guardVerdict({ messages: m }))).toEqual([undefined, undefined]);
  });
});
