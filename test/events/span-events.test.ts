/**
 * Guard events as OpenTelemetry span events (issue 36): `guardSpanEvents(span)` in a run's callbacks adds each guard
 * event to the span, named `langgraph_guards.<kind>` with the event's fields as `langgraph_guards.<field>`
 * attributes. A real tracer (OpenTelemetry's SDK with an in-memory exporter) records them, through createReactAgent
 * and createAgent; other custom events are left alone, and a span that throws does not fail the run.
 */
import { dispatchCustomEvent } from "@langchain/core/callbacks/dispatch";
import { RunnableLambda } from "@langchain/core/runnables";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { guardSpanEvents } from "../../src/index.js";
import { weatherAgents as agents, weatherInput as input, WEATHER_ANSWER } from "../support/weather-agents.js";

function tracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer("langgraph-guards-test") };
}

describe.each(Object.keys(agents) as (keyof typeof agents)[])(
  "guard events on an OpenTelemetry span through %s",
  (name) => {
    it("a blocked call is a span event langgraph_guards.blocked with the event's fields as attributes", async () => {
      const { exporter, tracer: t } = tracer();
      const span = t.startSpan("agent");
      await agents[name]().invoke(input, { configurable: { thread_id: "otel" }, callbacks: [guardSpanEvents(span)] });
      span.end();
      const [finished] = exporter.getFinishedSpans();
      expect(finished?.events.map((e) => e.name)).toEqual(["langgraph_guards.blocked"]);
      expect(finished?.events[0]?.attributes).toMatchObject({
        "langgraph_guards.kind": "blocked",
        "langgraph_guards.tool": "get_weather",
        "langgraph_guards.rule": "consecutive",
        "langgraph_guards.level": 1,
        "langgraph_guards.version": 1,
      });
      expect(finished?.events[0]?.attributes?.["langgraph_guards.source"]).toBeUndefined();
    });

    it("a span that throws, or none, does not fail the run", async () => {
      const throwing = {
        addEvent: () => {
          throw new Error("exporter down");
        },
      };
      for (const span of [throwing, () => undefined]) {
        const result = await agents[name]().invoke(input, {
          configurable: { thread_id: "otel-fail" },
          callbacks: [guardSpanEvents(span)],
        });
        expect(result.messages.at(-1)?.content).toBe(WEATHER_ANSWER);
      }
    });
  },
);

describe("guardSpanEvents", () => {
  it("leaves other custom events alone, and takes the span from a function when each event comes", async () => {
    const { exporter, tracer: t } = tracer();
    const spans = [t.startSpan("first"), t.startSpan("second")];
    let current = 0;
    const emit = RunnableLambda.from(async () => {
      await dispatchCustomEvent("my_app.progress", { source: "langgraph-guards", kind: "blocked" });
      await dispatchCustomEvent("langgraph_guards.blocked", { kind: "blocked" }); // not a guard event's shape
      await dispatchCustomEvent("langgraph_guards.loop", { source: "langgraph-guards", version: 1, kind: "loop" });
      current = 1;
      await dispatchCustomEvent("langgraph_guards.limit", { source: "langgraph-guards", version: 1, kind: "limit" });
    });
    await emit.invoke({}, { callbacks: [guardSpanEvents(() => spans[current])] });
    for (const span of spans) span.end();
    expect(exporter.getFinishedSpans().map((s) => [s.name, s.events.map((e) => e.name)])).toEqual([
      ["first", ["langgraph_guards.loop"]],
      ["second", ["langgraph_guards.limit"]],
    ]);
  });

  it("takes OpenTelemetry's active span when given trace.getActiveSpan (a context manager registered)", async () => {
    const { exporter, tracer: t } = tracer();
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const agent = agents.createAgent();
      await t.startActiveSpan("agent", async (span) => {
        await agent.invoke(input, {
          configurable: { thread_id: "otel-active" },
          callbacks: [guardSpanEvents(() => trace.getActiveSpan())],
        });
        span.end();
      });
      // Outside any span, the same handler drops the events.
      await agents.createAgent().invoke(input, {
        configurable: { thread_id: "otel-none" },
        callbacks: [guardSpanEvents(() => trace.getActiveSpan())],
      });
    } finally {
      context.disable();
    }
    const finished = exporter.getFinishedSpans();
    expect(finished.map((s) => [s.name, s.events.map((e) => e.name)])).toEqual([
      ["agent", ["langgraph_guards.blocked"]],
    ]);
  });
});
