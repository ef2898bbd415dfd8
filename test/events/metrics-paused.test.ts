/**
 * Issue 61, item 7: a run paused by `interrupt()` (escalation level 3 asking a person) has not ended. guardMetrics
 * counts it once, when the resume ends it, through createAgent's middleware and through createReactAgent with
 * `GuardedToolNode` and the escalation hook, each with a checkpointer and `Command({ resume })`.
 */
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState, guardMetrics } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";

const weather = () =>
  tool(
    async () => {
      throw new Error("weather service unavailable");
    },
    { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) },
  );
/** A model that retries the failing call forever: level 3 asks a person, level 4 (after the resume) ends the run. */
const forever = () => new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));

function viaMiddleware() {
  return createAgent({
    model: forever(),
    tools: [weather()],
    middleware: [guardMiddleware()],
    checkpointer: new MemorySaver(),
  });
}

function viaReactAgent() {
  const node = new GuardedToolNode([weather()]);
  return createReactAgent({
    llm: forever(),
    tools: node,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(node),
    checkpointer: new MemorySaver(),
  });
}

/** A note tool a person approves (humanInTheLoopMiddleware): one call, approved, then the model's answer. */
function viaHumanInTheLoop() {
  const note = tool(async ({ text }: { text: string }) => `noted: ${text}`, {
    name: "write_note",
    description: "Writes a note.",
    schema: z.object({ text: z.string() }),
  });
  return createAgent({
    model: new ScriptedChatModel([{ toolCalls: [{ name: "write_note", args: { text: "hi" } }] }, "Noted."]),
    tools: [note],
    middleware: [guardMiddleware(), humanInTheLoopMiddleware({ interruptOn: { write_note: true } })],
    checkpointer: new MemorySaver(),
  });
}

describe("guardMetrics and a run paused for a person", () => {
  it.each([
    ["createAgent + guardMiddleware", viaMiddleware],
    ["createReactAgent + GuardedToolNode + escalationHook", viaReactAgent],
  ])("counts a run paused by interrupt() once, when the resume ends it, through %s", async (_name, make) => {
    const agent = make();
    const metrics = guardMetrics({ meter: false });
    const config = { configurable: { thread_id: "paused" }, recursionLimit: 100, callbacks: [metrics] };
    const first = await agent.invoke({ messages: [new HumanMessage("Weather in Paris?")] }, config);
    expect(isInterrupted(first)).toBe(true);
    expect(metrics.counts()).toMatchObject({ runsEnded: 0, runsStopped: 0 });
    await agent.invoke(new Command({ resume: "Say you cannot get it." }), config);
    expect(metrics.counts()).toMatchObject({ runsEnded: 1, runsStopped: 1 });
  });

  it("counts a run humanInTheLoopMiddleware paused once, when the approval's resume ends it (no guard stopped it)", async () => {
    const agent = viaHumanInTheLoop();
    const metrics = guardMetrics({ meter: false });
    const config = { configurable: { thread_id: "approval" }, recursionLimit: 100, callbacks: [metrics] };
    const first = await agent.invoke({ messages: [new HumanMessage("Note hi.")] }, config);
    expect(isInterrupted(first)).toBe(true);
    expect(metrics.counts()).toMatchObject({ runsEnded: 0, callsRun: 0 });
    const last = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(String(last.messages.at(-1)?.content)).toBe("Noted.");
    expect(metrics.counts()).toMatchObject({ runsEnded: 1, runsStopped: 0, callsRun: 1 });
  });

  it("counts a run paused before its tools (interruptBefore) once, when the resume ends it", async () => {
    const agent = createReactAgent({
      llm: new ScriptedChatModel([{ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }, "Cloudy."]),
      tools: new GuardedToolNode([weather()]),
      stateSchema: GuardMessagesState,
      checkpointer: new MemorySaver(),
      interruptBefore: ["tools"],
    });
    const metrics = guardMetrics({ meter: false });
    const config = { configurable: { thread_id: "before" }, recursionLimit: 100, callbacks: [metrics] };
    await agent.invoke({ messages: [new HumanMessage("Weather in Paris?")] }, config);
    expect(metrics.counts()).toMatchObject({ runsEnded: 0, callsRun: 0 });
    await agent.invoke(null, config);
    expect(metrics.counts()).toMatchObject({ runsEnded: 1, callsRun: 1 });
  });
});
