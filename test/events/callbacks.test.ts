/**
 * Guard events reach LangChain's callbacks too (issue 36, item 8): a callback handler's `handleCustomEvent` and
 * `streamEvents` (v2) see each guard event as a custom event named `langgraph_guards.<kind>`, from the tool node +
 * hook (createReactAgent) and from the middleware (createAgent), so LangSmith traces show them. A handler that
 * throws does not fail the run.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { describe, expect, it, vi } from "vitest";
import { isGuardStreamEvent } from "../../src/index.js";
import { weatherAgents as agents, weatherInput as input, WEATHER_ANSWER } from "../support/weather-agents.js";

class Recorder extends BaseCallbackHandler {
  name = "recorder";
  readonly seen: { name: string; data: unknown }[] = [];
  override handleCustomEvent(name: string, data: unknown): void {
    this.seen.push({ name, data });
  }
}

describe.each(Object.keys(agents) as (keyof typeof agents)[])("guard events as callbacks through %s", (name) => {
  it("a blocked call reaches a callback handler as the custom event langgraph_guards.blocked", async () => {
    const agent = agents[name]();
    const recorder = new Recorder();
    await agent.invoke(input, { configurable: { thread_id: "cb" }, callbacks: [recorder] });
    const guard = recorder.seen.filter((e) => e.name.startsWith("langgraph_guards."));
    expect(guard.map((e) => e.name)).toEqual(["langgraph_guards.blocked"]);
    expect(isGuardStreamEvent(guard[0]?.data)).toBe(true);
    expect(guard[0]?.data).toMatchObject({ kind: "blocked", tool: "get_weather", rule: "consecutive", level: 1 });
  });

  it("streamEvents (v2) shows it as an on_custom_event", async () => {
    const agent = agents[name]();
    const custom = [];
    for await (const event of agent.streamEvents(input, { configurable: { thread_id: "se" }, version: "v2" })) {
      if (event.event === "on_custom_event" && event.name.startsWith("langgraph_guards.")) custom.push(event);
    }
    expect(custom.map((e) => e.name)).toEqual(["langgraph_guards.blocked"]);
    expect(custom[0]?.data).toMatchObject({ source: "langgraph-guards", kind: "blocked", tool: "get_weather" });
  });

  it("a callback handler that throws does not fail the run", async () => {
    const agent = agents[name]();
    const failing = BaseCallbackHandler.fromMethods({
      handleCustomEvent() {
        throw new Error("handler down");
      },
    });
    // LangChain reports a failing handler on console.warn and goes on: caught here, so that the suite's output shows
    // no error that is not one.
    const reported = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const out = await agent.invoke(input, { configurable: { thread_id: "x" }, callbacks: [failing] });
      expect(out.messages.at(-1)?.content).toBe(WEATHER_ANSWER);
      await awaitAllCallbacks(); // handlers run in the background
      expect(reported.mock.calls.map((c) => String(c.join(" ")))).toContainEqual(
        expect.stringContaining("handler down"),
      );
    } finally {
      reported.mockRestore();
    }
  });
});
