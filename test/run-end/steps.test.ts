/**
 * What the step budget reads of LangGraph (src/run-end/steps.ts), pinned on the installed @langchain/langgraph (CI
 * runs these tests at the lowest supported version too): the step and the limit of every task, one `control` object
 * per top-level run shared by the graphs inside it, one namespace per graph invocation (in parallel inside one node,
 * through `Send`, one after the other in one node), the first node of a fresh invocation at step 1, and the task's
 * channel reader and the resuming flag (the two internals the package reads).
 */
import {
  Annotation,
  Command,
  END,
  getConfig,
  interrupt,
  MemorySaver,
  Send,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { graphOf, readGraphChannels, readStep, type StepReading } from "../../src/run-end/steps.js";
import { allowManyAbortListeners } from "../support/abort-listeners.js";

const Inner = Annotation.Root({
  n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  hidden: Annotation<string>,
});

/** A small graph of three nodes in a row that records what each of its nodes reads. */
function inner(seen: StepReading[], channels?: Record<string, unknown>[]) {
  const node = async () => {
    const at = readStep(getConfig());
    if (at !== undefined) seen.push(at);
    channels?.push(readGraphChannels(getConfig(), ["n", "hidden", "absent"]) ?? {});
    return { n: 1 };
  };
  return new StateGraph(Inner)
    .addNode("a", node)
    .addNode("b", node)
    .addNode("c", node)
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile();
}

describe("LangGraph's config as the step budget reads it", () => {
  it("a run's nodes: steps from 1, its recursionLimit, one control object, the top-level namespace", async () => {
    const seen: StepReading[] = [];
    await inner(seen).invoke({}, { recursionLimit: 9 });
    expect(seen.map((s) => s.step)).toEqual([1, 2, 3]);
    expect(seen.every((s) => s.limit === 9 && s.graph === "" && s.run === seen[0]?.run)).toBe(true);
    const again: StepReading[] = [];
    await inner(again).invoke({});
    expect(again[0]?.run).not.toBe(seen[0]?.run); // a new run, a new control object
    expect(again[0]?.limit).toBe(25);
  });

  it("a thread's next run goes on counting from the checkpoint, with a control object of its own", async () => {
    const seen: StepReading[] = [];
    const graph = inner(seen);
    graph.checkpointer = new MemorySaver();
    const config = { configurable: { thread_id: "t" } };
    await graph.invoke({}, config);
    await graph.invoke({}, config);
    expect(seen.map((s) => s.step)).toEqual([1, 2, 3, 6, 7, 8]);
    expect(seen[3]?.run).not.toBe(seen[0]?.run);
  });

  it("a run resumed after interrupt(): a control object of its own, and the resumed task reads as resumed", async () => {
    const seen: StepReading[] = [];
    const graph = new StateGraph(Inner)
      .addNode("ask", () => {
        seen.push(readStep(getConfig()) as StepReading);
        return { hidden: String(interrupt("go on?")) };
      })
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "asked" } };
    await graph.invoke({}, config);
    await graph.invoke(new Command({ resume: "yes" }), config);
    expect(seen.map((s) => s.resumed)).toEqual([false, true]); // `configurable.__pregel_resuming` (an internal)
    expect(seen[1]?.run).not.toBe(seen[0]?.run);
    expect(seen[1]?.step).toBe(seen[0]?.step);
  });

  it("graphs invoked inside a node: the run's control object, a namespace each, steps from 1", async () => {
    allowManyAbortListeners(); // six graphs below one run
    const seen: Record<string, StepReading[]> = { a: [], b: [], c1: [], c2: [], s1: [], s2: [] };
    const Outer = Annotation.Root({ i: Annotation<string> });
    const parent = new StateGraph(Outer)
      .addNode("par", async () => {
        await Promise.all([inner(seen.a ?? []).invoke({}), inner(seen.b ?? []).invoke({})]);
        const twice = inner(seen.c1 ?? []);
        await twice.invoke({});
        await inner(seen.c2 ?? []).invoke({});
        return {};
      })
      .addNode("sent", async (s: { i: string }) => {
        await inner(seen[s.i] ?? []).invoke({});
        return {};
      })
      .addConditionalEdges(START, () => [
        new Send("par", {}),
        new Send("sent", { i: "s1" }),
        new Send("sent", { i: "s2" }),
      ])
      .addEdge("par", END)
      .addEdge("sent", END)
      .compile({ checkpointer: new MemorySaver() });
    let parentRun: object | undefined;
    const probe = new StateGraph(Outer)
      .addNode("probe", async () => {
        parentRun = readStep(getConfig())?.run;
        return {};
      })
      .addEdge(START, "probe")
      .compile();
    await probe.invoke({});
    await parent.invoke({}, { configurable: { thread_id: "p" } });
    const groups = Object.values(seen);
    for (const g of groups) expect(g.map((s) => s.step)).toEqual([1, 2, 3]);
    const graphs = groups.map((g) => g[0]?.graph);
    expect(new Set(graphs).size).toBe(groups.length); // every invocation its own namespace
    for (const g of groups) expect(new Set(g.map((s) => s.graph)).size).toBe(1);
    const run = seen.a?.[0]?.run;
    expect(groups.every((g) => g.every((s) => s.run === run))).toBe(true); // one run
    expect(run).not.toBe(parentRun);
  });

  it("graphOf: the namespace of the graph a task runs in", () => {
    expect(graphOf("model_request:1a")).toBe("");
    expect(graphOf("par:9f|model_request:1a")).toBe("par:9f");
    expect(graphOf("par:9f|1|model_request:1a")).toBe("par:9f|1");
  });

  it("outside a graph step, or without a run's control object, there is no reading", () => {
    expect(readStep(undefined)).toBeUndefined();
    expect(readStep({ metadata: { langgraph_step: 3 } })).toBeUndefined();
    expect(readGraphChannels(undefined, ["n"])).toBeUndefined();
  });

  it("the task's channel reader: the graph's channels by name, those never written and absent ones left out", async () => {
    const channels: Record<string, unknown>[] = [];
    await inner([], channels).invoke({});
    expect(channels[0]).toEqual({ n: 0 });
    expect(channels[1]).toEqual({ n: 1 });
  });

  it("a channel the graph lacks is asked about once per invocation, alone (LangGraph throws for it)", async () => {
    const asked: unknown[] = [];
    const values: Record<string, unknown>[] = [];
    const node = async () => {
      const config = getConfig() as { configurable: Record<string, unknown> };
      const read = config.configurable.__pregel_read as (select: unknown, fresh: boolean) => unknown;
      const spy = (select: unknown, fresh: boolean) => {
        asked.push(select);
        return read(select, fresh);
      };
      const spied = { ...config, configurable: { ...config.configurable, __pregel_read: spy } };
      values.push(readGraphChannels(spied, ["n", "hidden", "absent"]) ?? {});
      return { n: 1 };
    };
    const graph = new StateGraph(Inner).addNode("a", node).addNode("b", node).addEdge(START, "a").addEdge("a", "b");
    await graph.addEdge("b", END).compile().invoke({});
    expect(values).toEqual([{ n: 0 }, { n: 1 }]);
    expect(asked).toEqual(["n", "hidden", "absent", ["n", "hidden"], ["n", "hidden"]]);
    // Outside a run (no control object) every name is asked for, as LangGraph's reader takes them.
    const names: unknown[] = [];
    readGraphChannels({ configurable: { __pregel_read: (select: unknown) => names.push(select) && {} } }, ["x"]);
    expect(names).toEqual([["x"]]);
  });
});
