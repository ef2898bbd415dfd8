/**
 * Guard events reach LangChain's callbacks too (issue 36, item 8): a callback handler's `handleCustomEvent` and
 * `streamEvents` (v2) see each guard event as a custom event named `langgraph_guards.<kind>`, from the tool node +
 * hook (createReactAgent) and from the middleware (createAgent), so LangSmith traces show them. A handler that
 * throws does not fail the run.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState, isGuardStreamEvent } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";

const getWeather = tool(async ({ city }) => `Sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather in a city",
  schema: z.object({ city: z.string() }),
});
/** Asks for the same weather twice, then answers: the second call is blocked (strike 1), then the run ends. */
const model = () =>
  new ScriptedChatModel([
    { toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] },
    { toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] },
    "It is sunny in Paris.",
  ]);
const input = { messages: [{ role: "user", content: "Weather in Paris?" }] };

const agents = {
  createReactAgent: () => {
    const tools = new GuardedToolNode([getWeather]);
    return createReactAgent({
      llm: model(),
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(tools),
      checkpointer: new MemorySaver(),
    });
  },
  createAgent: () =>
    createAgent({
      model: model(),
      tools: [getWeather],
      middleware: [guardMiddleware()],
      checkpointer: new MemorySaver(),
    }),
};

type Invocable = {
  invoke(input: unknown, config: Record<string, unknown>): Promise<unknown>;
  streamEvents(
    input: unknown,
    config: Record<string, unknown>,
  ): AsyncIterable<{ event: string; name: string; data: unknown }>;
};

class Recorder extends BaseCallbackHandler {
  name = "recorder";
  readonly seen: { name: string; data: unknown }[] = [];
  override handleCustomEvent(name: string, data: unknown): void {
    this.seen.push({ name, data });
  }
}

describe.each(Object.keys(agents) as (keyof typeof agents)[])("guard events as callbacks through %s", (name) => {
  it("a blocked call reaches a callback handler as the custom event langgraph_guards.blocked", async () => {
    const agent = agents[name]() as unknown as Invocable;
    const recorder = new Recorder();
    await agent.invoke(input, { configurable: { thread_id: "cb" }, callbacks: [recorder] });
    const guard = recorder.seen.filter((e) => e.name.startsWith("langgraph_guards."));
    expect(guard.map((e) => e.name)).toEqual(["langgraph_guards.blocked"]);
    expect(isGuardStreamEvent(guard[0]?.data)).toBe(true);
    expect(guard[0]?.data).toMatchObject({ kind: "blocked", tool: "get_weather", rule: "consecutive", level: 1 });
  });

  it("streamEvents (v2) shows it as an on_custom_event", async () => {
    const agent = agents[name]() as unknown as Invocable;
    const custom = [];
    for await (const event of agent.streamEvents(input, { configurable: { thread_id: "se" }, version: "v2" })) {
      if (event.event === "on_custom_event" && event.name.startsWith("langgraph_guards.")) custom.push(event);
    }
    expect(custom.map((e) => e.name)).toEqual(["langgraph_guards.blocked"]);
    expect(custom[0]?.data).toMatchObject({ source: "langgraph-guards", kind: "blocked", tool: "get_weather" });
  });

  it("a callback handler that throws does not fail the run", async () => {
    const agent = agents[name]() as unknown as Invocable;
    const failing = BaseCallbackHandler.fromMethods({
      handleCustomEvent() {
        throw new Error("handler down");
      },
    });
    const out = (await agent.invoke(input, { configurable: { thread_id: "x" }, callbacks: [failing] })) as {
      messages: { content: unknown }[];
    };
    expect(out.messages.at(-1)?.content).toBe("It is sunny in Paris.");
  });
});
