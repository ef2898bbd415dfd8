/**
 * Issue 42: why the guards ended a run, as data (`guardVerdict`), whichever guard and adapter ended it, and the one
 * `wrapUp` shape (`"model" | "canned" | { model }`, default `"model"`) in createAgent and in a graph.
 */
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState, guardVerdict, loopDetectHook } from "../../src/index.js";
import { guardMiddleware, loopDetectMiddleware, safetyLimitsMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { validHistory } from "../support/escalation.js";
import { agentWith, taskModel, text, work } from "./agents.js";

const getWeather = tool(
  async () => {
    throw new Error("weather service unavailable");
  },
  { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) },
);
/** A model that repeats one failing call forever. */
const repeating = () =>
  new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
const input = { messages: [{ role: "user", content: "Weather in Paris?" }] };

describe("guardVerdict: why the run stopped", () => {
  it("a run the model ended has no verdict", async () => {
    const out = await agentWith(2, [guardMiddleware()]).invoke({ messages: [{ role: "user", content: "Go." }] });
    expect(guardVerdict(out)).toBeUndefined();
    expect(guardVerdict(out.messages)).toBeUndefined();
  });

  it("escalation in createAgent: the tool-call guard, level 4, the tool, the model's wrap-up", async () => {
    const agent = createAgent({ model: repeating(), tools: [getWeather], middleware: [guardMiddleware()] });
    const out = await agent.invoke(input);
    expect(guardVerdict(out)).toMatchObject({
      guard: "tool-calls",
      rule: "escalation",
      level: 4,
      tool: "get_weather",
      wrapUp: "model",
    });
    expect(guardVerdict(out)?.message).toMatch(/^I stopped this run because I kept repeating one step/);
    expect(validHistory(out.messages as BaseMessage[])).toEqual([]);
  });

  it("a person who ends the run at level 3: their words are the final message, no model call after", async () => {
    const model = repeating();
    const agent = createAgent({
      model,
      tools: [getWeather],
      middleware: [guardMiddleware()],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "ends" } };
    await agent.invoke(input, config);
    const before = model.stepsTaken;
    const out = await agent.invoke(new Command({ resume: { answer: "Stop.", action: "end" } }), config);
    expect(model.stepsTaken).toBe(before);
    expect(guardVerdict(out)).toMatchObject({ guard: "tool-calls", byPerson: true, wrapUp: "canned" });
    expect(String(out.messages.at(-1)?.content)).toMatch(/^I stopped this run because you asked me to: "Stop\."/);
  });

  it("a loop and a limit in createAgent", async () => {
    // The same words after the same answer (a new `n` each time would answer something new: no loop, issue 63).
    const same = new ScriptedChatModel(() => ({
      content: "Let me check the weather service once more.",
      toolCalls: [{ name: "work", args: { n: 1 } }],
    }));
    const loop = createAgent({
      model: same,
      tools: [work],
      middleware: [loopDetectMiddleware({ turns: { outputOf: text } })],
    });
    expect(guardVerdict(await loop.invoke(input))).toMatchObject({ guard: "loop", rule: "loop", limit: 0.9 });
    const limits = agentWith(Number.POSITIVE_INFINITY, [safetyLimitsMiddleware({ maxIterations: 3 })]);
    expect(guardVerdict(await limits.invoke(input))).toMatchObject({
      guard: "limits",
      rule: "iterations",
      value: 3,
      limit: 3,
    });
  });

  it("the step budget and escalation in createReactAgent's hooks", async () => {
    const tools = new GuardedToolNode([work]);
    const steps = createReactAgent({
      llm: taskModel(Number.POSITIVE_INFINITY),
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({ turns: { outputOf: text } }),
    });
    const out = await steps.invoke(input, { recursionLimit: 12 });
    expect(guardVerdict(out)).toMatchObject({ guard: "steps", rule: "recursionLimit", limit: 12, wrapUp: "canned" });

    const weather = new GuardedToolNode([getWeather]);
    const escalation = createReactAgent({
      llm: repeating(),
      tools: weather,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(weather),
    });
    expect(guardVerdict(await escalation.invoke(input))).toMatchObject({ guard: "tool-calls", level: 4 });
  });
});

describe("wrapUp: one shape, one default", () => {
  const summary = () => new ScriptedChatModel(["I did what fit; the rest is left."]);

  it('createAgent: "model" (default) asks the agent\'s model, { model } the one given, "canned" neither', async () => {
    const endless = Number.POSITIVE_INFINITY;
    const byDefault = await agentWith(endless, [guardMiddleware()]).invoke(input, { recursionLimit: 11 });
    expect(text(byDefault.messages.at(-1) as never)).toMatch(/^I have to stop here\./);
    const given = await agentWith(endless, [loopDetectMiddleware({ wrapUp: { model: summary() } })]).invoke(input, {
      recursionLimit: 11,
    });
    expect(given.messages.at(-1)?.content).toBe("I did what fit; the rest is left.");
    expect(guardVerdict(given)).toMatchObject({ guard: "steps", wrapUp: "model" });
    const canned = await agentWith(endless, [guardMiddleware({ wrapUp: "canned" })]).invoke(input, {
      recursionLimit: 11,
    });
    expect(guardVerdict(canned)).toMatchObject({ guard: "steps", wrapUp: "canned" });
    // recursionLimit 11, turns of 3 steps (the model, the guard's afterModel, the tools): 2 tool turns fit.
    expect(canned.messages.filter((m) => ToolMessage.isInstance(m) && m.status !== "error")).toHaveLength(2);
  });

  it('a graph hook: "model" (default) has no model of its own and writes the canned message; { model } asks it', async () => {
    const run = (wrapUp?: "model" | { model: ScriptedChatModel }) =>
      createReactAgent({
        llm: taskModel(Number.POSITIVE_INFINITY),
        tools: new GuardedToolNode([work]),
        stateSchema: GuardMessagesState,
        postModelHook: loopDetectHook(wrapUp === undefined ? {} : { wrapUp }),
      }).invoke(input, { recursionLimit: 12 });
    expect(guardVerdict(await run())).toMatchObject({ guard: "steps", wrapUp: "canned" });
    expect(guardVerdict(await run("model"))).toMatchObject({ guard: "steps", wrapUp: "canned" });
    const given = await run({ model: summary() });
    expect(given.messages.at(-1)?.content).toBe("I did what fit; the rest is left.");
  });
});
