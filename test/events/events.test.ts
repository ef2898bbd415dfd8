/**
 * Guard events: the same typed events on the custom stream from the tool node + hook (createReactAgent) and from the
 * middleware (createAgent), counted in the guardLog channel; loop and limit stops; cache answers; events off.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GUARD_EVENT_VERSION } from "../../src/core/index.js";
import {
  escalationHook,
  GuardedToolNode,
  type GuardLog,
  GuardMessagesState,
  type GuardStreamEvent,
  guardHooks,
  isGuardStreamEvent,
  loopDetectHook,
} from "../../src/index.js";
import { fileToolsMiddleware, guardMiddleware, safetyLimitsMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { seedPace } from "../support/escalation.js";

const getWeather = tool(async ({ city }) => `Sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather in a city",
  schema: z.object({ city: z.string() }),
});
const repeating = () =>
  new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
const input = { messages: [{ role: "user", content: "Weather in Paris?" }] };

type Streamable = {
  stream(input: unknown, config: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
};

/** Streams a run with `custom` and `values`; returns the custom chunks and the last values. */
async function streamRun(agent: Streamable, runInput: unknown, config: Record<string, unknown>) {
  const custom: unknown[] = [];
  let values: Record<string, unknown> = {};
  const stream = await agent.stream(runInput, { ...config, streamMode: ["custom", "values"], recursionLimit: 60 });
  for await (const chunk of stream) {
    const [mode, data] = chunk as [string, unknown];
    if (mode === "custom") custom.push(data);
    else if (!("__interrupt__" in (data as object))) values = data as Record<string, unknown>;
  }
  return { custom, events: custom.filter(isGuardStreamEvent), values };
}

const summary = (events: GuardStreamEvent[]) =>
  events.map((e) => [e.kind, e.tool, e.rule ?? e.limit ?? "", e.level ?? 0].join(":"));

function reactAgent(events = true) {
  // The escalation at seed 003's pace (level 3 at the third duplicate): the events of every level in few calls.
  const tools = new GuardedToolNode([getWeather], seedPace({ feedback: { events } }));
  return createReactAgent({
    llm: repeating(),
    tools,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(tools),
    checkpointer: new MemorySaver(),
  });
}

function middlewareAgent(events = true) {
  return createAgent({
    model: repeating(),
    tools: [getWeather],
    middleware: [guardMiddleware(seedPace({ feedback: { events } }))],
    checkpointer: new MemorySaver(),
  });
}

describe("guard events", () => {
  it("the tool node + hook and the middleware write the same events, and count them in guardLog", async () => {
    const runs = [];
    for (const [name, agent] of [
      ["createReactAgent", reactAgent()],
      ["createAgent", middlewareAgent()],
    ] as const) {
      const config = { configurable: { thread_id: name } };
      const first = await streamRun(agent as unknown as Streamable, input, config);
      const resumed = await streamRun(agent as unknown as Streamable, new Command({ resume: "Stop." }), config);
      runs.push({ name, first, resumed });
    }
    const [react, middleware] = runs as [(typeof runs)[0], (typeof runs)[0]];
    // Strike 1 (consecutive), strike 2, strike 3: a person is asked.
    expect(summary(react.first.events)).toEqual([
      "blocked:get_weather:consecutive:1",
      "blocked:get_weather:consecutive:2",
      "blocked:get_weather:consecutive:3",
      "escalation:get_weather:consecutive:3",
      "interrupt:get_weather::3",
    ]);
    // The resumed run does not repeat the question; strike 4 ends the run.
    expect(summary(react.resumed.events)).toEqual([
      "blocked:get_weather:consecutive:4",
      "escalation:get_weather:consecutive:4",
    ]);
    expect(summary(middleware.first.events)).toEqual(summary(react.first.events));
    expect(summary(middleware.resumed.events)).toEqual(summary(react.resumed.events));
    for (const e of [...react.first.events, ...middleware.resumed.events]) {
      expect(e).toMatchObject({ source: "langgraph-guards", version: GUARD_EVENT_VERSION });
    }
    expect(react.first.events[0]).toMatchObject({ args: '{"city":"Paris"}', count: 2, strikes: 1 });
    // Every event the stream showed is in the log, once (the paused run's update is not applied; the resumed run
    // logs the question it answered).
    for (const { resumed } of runs) {
      const log = resumed.values.guardLog as GuardLog;
      expect(log.counts).toEqual({ blocked: 4, escalation: 2, interrupt: 1 });
      expect(log.total).toBe(7);
      expect(log.recent.map((e) => e.kind)).toEqual([
        "blocked",
        "blocked",
        "blocked",
        "escalation",
        "interrupt",
        "blocked",
        "escalation",
      ]);
    }
  });

  it("guardHooks passes on every hook's guardLog: the log holds what the stream showed", async () => {
    const tools = new GuardedToolNode([getWeather], seedPace());
    const agent = createReactAgent({
      llm: repeating(),
      tools,
      stateSchema: GuardMessagesState,
      // The loop detector sees every turn (no similarity check here) and lets the escalation hook stop the run.
      postModelHook: guardHooks(loopDetectHook({ turns: { outputOf: () => "" } }), escalationHook(tools)),
    });
    const run = await streamRun(agent as unknown as Streamable, input, {});
    const log = run.values.guardLog as GuardLog;
    expect(run.events.map((e) => e.kind)).toEqual(["blocked", "blocked", "blocked", "escalation"]);
    expect(log.total).toBe(run.events.length);
    expect(log.recent.map((e) => e.kind)).toEqual(run.events.map((e) => e.kind));
  });

  it("events: false writes nothing to the stream or the log, and blocks as before", async () => {
    for (const agent of [reactAgent(false), middlewareAgent(false)]) {
      const run = await streamRun(agent as unknown as Streamable, input, { configurable: { thread_id: "off" } });
      expect(run.custom).toEqual([]);
      expect((run.values.guardLog as GuardLog | undefined)?.total ?? 0).toBe(0);
      const blocked = (run.values.messages as BaseMessage[]).filter(
        (m) => ToolMessage.isInstance(m) && m.status === "error",
      );
      expect(blocked.length).toBeGreaterThanOrEqual(2);
    }
  });

  it("a near miss: an identical call the guards let run (not consecutive, under the threshold) is reported", async () => {
    let n = 0;
    const ping = tool(async ({ host }) => `pong from ${host}`, {
      name: "ping_service",
      description: "Pings a service",
      schema: z.object({ host: z.string() }),
    });
    const script = [
      { name: "ping_service", args: { host: "db" } },
      { name: "get_weather", args: { city: "Paris" } },
      { name: "ping_service", args: { host: "db" } },
    ];
    const llm = new ScriptedChatModel(() => (n < script.length ? { toolCalls: [script[n++] as never] } : "Done."));
    const agent = createAgent({ model: llm, tools: [getWeather, ping], middleware: [guardMiddleware()] });
    const run = await streamRun(agent as unknown as Streamable, input, {});
    expect(summary(run.events)).toEqual(["near-miss:ping_service::0"]);
    expect(run.events[0]).toMatchObject({ count: 2, args: '{"host":"db"}' });
    expect(String((run.values.messages as BaseMessage[]).at(-1)?.content)).toBe("Done.");
  });

  it("a loop stop and a limit stop are events, from the hook and from the middleware", async () => {
    const tools = new GuardedToolNode([getWeather], { mode: "observe", feedback: { events: false } });
    const agent = createReactAgent({
      llm: repeating(),
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({ loopThreshold: 0.9 }),
    });
    const run = await streamRun(agent as unknown as Streamable, input, {});
    expect(run.events).toHaveLength(1);
    expect(run.events[0]).toMatchObject({ kind: "loop", guard: "loop", limit: "loop", value: 1, threshold: 0.9 });
    expect((run.values.guardLog as GuardLog).counts).toEqual({ loop: 1 });

    const limited = createAgent({
      model: repeating(),
      tools: [getWeather],
      middleware: [
        guardMiddleware({ mode: "observe", feedback: { events: false } }),
        safetyLimitsMiddleware({ maxIterations: 3 }),
      ],
    });
    const stopped = await streamRun(limited as unknown as Streamable, input, {});
    expect(stopped.events.map((e) => [e.kind, e.guard, e.limit, e.value, e.threshold])).toEqual([
      ["limit", "limits", "iterations", 3, 3],
    ]);
    expect((stopped.values.guardLog as GuardLog).counts).toEqual({ limit: 1 });
  });

  it("a file read answered from the cache is an event (createAgent with fileToolsMiddleware)", async () => {
    const root = mkdtempSync(join(tmpdir(), "lgg-events-"));
    writeFileSync(join(root, "notes.txt"), "alpha\nbeta\n".repeat(50));
    // Old enough that the stat is trusted (outside the racy window).
    const later = Date.now() + 10_000;
    let n = 0;
    const llm = new ScriptedChatModel(() =>
      n++ < 2 ? { toolCalls: [{ name: "read_file", args: { path: "notes.txt" } }] } : "Read it.",
    );
    const agent = createAgent({
      model: llm,
      tools: [],
      middleware: [guardMiddleware(), fileToolsMiddleware({ root, clock: () => later })],
    });
    const run = await streamRun(agent as unknown as Streamable, input, {});
    // The repeat runs (the file tools answer repeats, so the guards let them through: a near miss), and the cache
    // answers it with a reference to the first read.
    expect(run.events.map((e) => [e.kind, e.guard, e.tool])).toEqual([
      ["near-miss", "tool-calls", "read_file"],
      ["cache", "file-cache", "read_file"],
    ]);
    expect(run.events[1]?.bytesSaved).toBeGreaterThan(100);
    expect((run.values.guardLog as GuardLog).counts).toEqual({ "near-miss": 1, cache: 1 });
  });
});
