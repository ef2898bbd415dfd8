/**
 * Issue 46, item 7: the guards' numbers. One scripted run, through createAgent's middleware and through
 * createReactAgent with `GuardedToolNode` and the hooks, gives the same counts: calls run, served from the cache,
 * deduped, blocked, the run ended and stopped by a limit, characters kept out. The counts reach OpenTelemetry
 * counters (through the global meter provider, as an app with the OpenTelemetry SDK has it), a function of yours,
 * and `counts()`; without `@opentelemetry/api` nothing of it is loaded and the counts still work.
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { metrics } from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  escalationHook,
  GuardedToolNode,
  type GuardLog,
  GuardMessagesState,
  type GuardMetricCounts,
  guardHooks,
  guardMetrics,
  guardVerdict,
  loopDetectHook,
} from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";

const STATUS = `status: deploying, 3 of 7 pods ready.\n${"pod web-7f9c: Pending (image pull in progress)\n".repeat(6)}`;

function tools() {
  return [
    tool(async ({ query }: { query: string }) => `docs for ${query}`, {
      name: "search_docs",
      description: "Searches the documentation.",
      schema: z.object({ query: z.string() }),
      metadata: { readOnlyHint: true, idempotentHint: true },
    }),
    tool(async () => STATUS, { name: "get_status", description: "The deployment's status.", schema: z.object({}) }),
    tool(async () => "notes: none", { name: "read_notes", description: "Reads the notes.", schema: z.object({}) }),
  ];
}

let said = 0;
const WORDS = ["First", "Then the", "Checking", "Once more, the", "Now the", "Again the", "Finally the"];
/** A tool turn whose words differ from every other (the loop detector compares the words too). */
const call =
  (name: string, args: Record<string, unknown> = {}): ScriptStep =>
  () => ({
    content: `${WORDS[said++ % WORDS.length]} ${name} step ${said}: ${"abcdefghij".slice(said % 10)}${said * 7919}`,
    toolCalls: [{ name, args }],
  });
/** A search and its served repeat, a status and its deduped repeat, notes and a blocked repeat, a new search, a stop. */
const SCRIPT: ScriptStep[] = [
  call("search_docs", { query: "rollout" }), // runs
  call("search_docs", { query: "rollout" }), // served from the cache
  call("get_status"), // runs
  call("get_status"), // runs: the same answer, sent as a note (deduped)
  call("read_notes"), // runs
  call("read_notes"), // blocked: consecutive
  call("search_docs", { query: "pods" }), // runs: the 5th full turn (the served and the blocked turns are free)
  call("get_status"), // the 6th full turn: maxIterations 5 stops the run here
  "never reached",
];
const EXPECTED: Omit<GuardMetricCounts, "charsKeptOut"> = {
  callsRun: 5,
  blocked: 1,
  served: 1,
  deduped: 1,
  runsEnded: 1,
  runsStopped: 1,
};
const input = { messages: [new HumanMessage("Is the rollout done?")] };

async function viaMiddleware(callbacks: unknown[]) {
  const agent = createAgent({
    model: new ScriptedChatModel(SCRIPT),
    tools: tools(),
    middleware: [guardMiddleware({ escalation: { enabled: false } }), loopDetectMiddleware({ maxIterations: 5 })],
  });
  return agent.invoke(input, { callbacks: callbacks as never, recursionLimit: 100 });
}

async function viaReactAgent(callbacks: unknown[]) {
  const node = new GuardedToolNode(tools(), { escalation: { enabled: false } });
  const agent = createReactAgent({
    llm: new ScriptedChatModel(SCRIPT),
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: guardHooks(loopDetectHook({ maxIterations: 5 }), escalationHook(node)),
  });
  return agent.invoke(input, { callbacks: callbacks as never, recursionLimit: 100 });
}

/** The characters the run's guard events say were kept out (the dedupe's note against its result). */
const keptOut = (log: GuardLog) => log.recent.reduce((n, e) => n + (e.bytesSaved ?? 0), 0);

afterEach(() => {
  metrics.disable();
});

describe("guardMetrics", () => {
  it.each([
    ["createAgent + guardMiddleware", viaMiddleware],
    ["createReactAgent + GuardedToolNode + hooks", viaReactAgent],
  ])("counts one scripted run the same through %s", async (_name, run) => {
    const seen: [string, number, Record<string, string>][] = [];
    const counter = guardMetrics({
      meter: false,
      onCount: (name, value, attributes) => seen.push([name, value, attributes]),
    });
    const out = await run([counter]);
    const messages = out.messages as BaseMessage[];
    expect(guardVerdict(messages)).toMatchObject({ guard: "limits", rule: "iterations" });
    const log = out.guardLog as GuardLog;
    const counts = counter.counts();
    expect(counts).toEqual({ ...EXPECTED, charsKeptOut: keptOut(log) });
    expect(counts.charsKeptOut).toBeGreaterThan(0);
    expect(seen).toContainEqual(["calls.blocked", 1, { tool: "read_notes", rule: "consecutive" }]);
    expect(seen).toContainEqual(["calls.served", 1, { tool: "search_docs", guard: "tool-calls" }]);
    expect(seen).toContainEqual(["runs.stopped", 1, { guard: "limits", rule: "iterations" }]);
    // A second run adds to the counts; reset() starts them again.
    await run([counter]);
    expect(counter.counts().runsEnded).toBe(2);
    counter.reset();
    expect(counter.counts().callsRun).toBe(0);
  });

  it("records OpenTelemetry counters through the global meter provider", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    const counter = guardMetrics();
    await viaMiddleware([counter]);
    const { resourceMetrics } = await reader.collect();
    const points = new Map(
      resourceMetrics.scopeMetrics
        .filter((s) => s.scope.name === "langgraph-guards")
        .flatMap((s) => s.metrics)
        .map((m) => [m.descriptor.name, m.dataPoints.reduce((n, p) => n + (p.value as number), 0)]),
    );
    expect(Object.fromEntries(points)).toMatchObject({
      "langgraph_guards.calls.run": 5,
      "langgraph_guards.calls.blocked": 1,
      "langgraph_guards.calls.served": 1,
      "langgraph_guards.calls.deduped": 1,
      "langgraph_guards.runs.ended": 1,
      "langgraph_guards.runs.stopped": 1,
    });
    expect(points.get("langgraph_guards.context.chars_kept_out")).toBe(counter.counts().charsKeptOut);
    await reader.shutdown();
  });

  it("without @opentelemetry/api, nothing of it is loaded and the counts still work", async () => {
    vi.resetModules();
    vi.doMock("@opentelemetry/api", () => {
      throw new Error("Cannot find package '@opentelemetry/api'");
    });
    // An SDK is registered, so a meter from @opentelemetry/api would record: nothing does, nothing fails.
    const reader = new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 60_000,
    });
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      const fresh = await import("../../src/index.js");
      const counter = fresh.guardMetrics();
      await viaMiddleware([counter]);
      expect(counter.counts()).toMatchObject(EXPECTED);
      const { resourceMetrics } = await reader.collect();
      expect(resourceMetrics.scopeMetrics.filter((s) => s.scope.name === "langgraph-guards")).toEqual([]);
    } finally {
      await reader.shutdown();
      vi.doUnmock("@opentelemetry/api");
      vi.resetModules();
    }
  });
});
