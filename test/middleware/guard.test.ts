/** guardMiddleware in createAgent: the quick-start scenario (a model that retries a failing call forever). */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GuardOptionsError, isEscalationInterrupt, type ToolGuardState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { validHistory } from "../support/escalation.js";

const getWeather = tool(
  async () => {
    throw new Error("weather service unavailable");
  },
  { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) },
);
const forever = () => new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
const toolCalls = (messages: BaseMessage[]) =>
  messages.filter((m): m is AIMessage => AIMessage.isInstance(m)).flatMap((m) => m.tool_calls ?? []);
const input = { messages: [{ role: "user", content: "Weather in Paris?" }] };

describe("guardMiddleware in createAgent", () => {
  // The quick start at the defaults (issue 43, classes 5 and 8; issue 63): "service unavailable" may pass, so two
  // identical retries run (the AI SDK's maxRetries); the 4th and 5th calls are blocked (strikes 1, 2); the 6th is the
  // first that may ask a person (no earlier than the 5th, as Cline, Qwen Code and deer-flow), and the 7th ends the run.
  it("asks a person at strike 3 (interrupt), and after the resume ends the run at strike 4", async () => {
    const llm = forever();
    const agent = createAgent({
      model: llm,
      tools: [getWeather],
      middleware: [guardMiddleware()],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "mw" }, recursionLimit: 100 };
    const first = await agent.invoke(input, config);
    expect(isInterrupted(first)).toBe(true);
    const ask = isInterrupted(first) ? first.__interrupt__[0]?.value : undefined;
    expect(isEscalationInterrupt(ask)).toBe(true);
    expect(ask).toMatchObject({ level: 3, tool: "get_weather", attempts: 3 });
    expect(validHistory(first.messages as BaseMessage[], { pendingLast: true })).toEqual([]);

    const last = await agent.invoke(new Command({ resume: "Say you cannot get it." }), config);
    const final = last.messages.at(-1) as AIMessage;
    expect(final.response_metadata.guard).toMatchObject({ kind: "escalation", level: 4, strikes: 4 });
    expect(final.response_metadata.guard).toMatchObject({ wrapUp: "model" });
    expect(String((final.response_metadata.guard as { message: string }).message)).toMatch(
      /^I stopped this run because I kept repeating one step/,
    );
    expect(String(final.content)).toMatch(/^I have to stop here\./); // the model's own words, tools off
    // The person's answer reached the model as the result of the held-back call.
    expect(
      last.messages.some((m: BaseMessage) => String(m.content).includes("The user answered:\nSay you cannot get it.")),
    ).toBe(true);
    expect(toolCalls(last.messages as BaseMessage[])).toHaveLength(7);
    expect(validHistory(last.messages as BaseMessage[])).toEqual([]);
    expect(llm.stepsTaken).toBe(7);
    expect((last.toolGuard as ToolGuardState).escalation.strikes).toBe(4);
  });

  it("without a checkpointer ends the run at strike 3 with the final message", async () => {
    const llm = forever();
    const agent = createAgent({ model: llm, tools: [getWeather], middleware: [guardMiddleware()] });
    const out = await agent.invoke(input, { recursionLimit: 100 });
    const final = out.messages.at(-1) as AIMessage;
    expect(final.response_metadata.guard).toMatchObject({ kind: "escalation", level: 4, strikes: 3 });
    expect(toolCalls(out.messages as BaseMessage[])).toHaveLength(6); // both retries ran; the 6th call ends it
    expect(validHistory(out.messages as BaseMessage[])).toEqual([]);
  });

  it("level 4: when the model's wrap-up call throws, the canned message ends the run", async () => {
    const llm = new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }), {
      wrapUp: () => {
        throw new Error("provider down");
      },
    });
    const agent = createAgent({ model: llm, tools: [getWeather], middleware: [guardMiddleware()] });
    const out = await agent.invoke(input, { recursionLimit: 100 });
    const final = out.messages.at(-1) as AIMessage;
    expect(final.tool_calls ?? []).toEqual([]);
    expect(final.response_metadata.guard).toMatchObject({ kind: "escalation", level: 4, wrapUp: "canned" });
    expect(String(final.content)).toMatch(/^I stopped this run because I kept repeating one step/);
    expect(validHistory(out.messages as BaseMessage[])).toEqual([]);
  });

  it("configurable.guards = false switches the guards off for a run", async () => {
    let n = 0;
    const llm = new ScriptedChatModel(() =>
      n++ < 3 ? { toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] } : "I could not get it.",
    );
    const agent = createAgent({ model: llm, tools: [getWeather], middleware: [guardMiddleware()] });
    const out = await agent.invoke(input, { configurable: { guards: false }, recursionLimit: 100 });
    const blocked = (out.messages as BaseMessage[]).filter(
      (m) => ToolMessage.isInstance(m) && (m.artifact as { guard?: unknown } | undefined)?.guard,
    );
    expect(blocked).toEqual([]);
    expect(String(out.messages.at(-1)?.content)).toBe("I could not get it.");
  });

  it("validates its options when it is built", () => {
    expect(() => guardMiddleware({ windowSize: 0 })).toThrow(/windowSize/);
    expect(() => guardMiddleware({ interrupt: "yes" as never })).toThrow(GuardOptionsError);
    expect(() => guardMiddleware({ agentTools: [42 as never] })).toThrow(/agentTools/);
  });
});

describe("guardMiddleware: the agent's tools", () => {
  // Read-only by its MCP annotation only: its name does not say so.
  const lookup = tool(async ({ id }) => `record ${id}`, {
    name: "lookup",
    description: "Looks a record up",
    schema: z.object({ id: z.string() }),
    metadata: { annotations: { readOnlyHint: true } },
  });
  const status = tool(async () => "ok", {
    name: "status_page",
    description: "Service status",
    schema: z.object({}),
    metadata: { readOnlyHint: true },
  });
  // lookup(a), status, lookup(a): the second lookup repeats a read that is still valid (the redundant rule) only when
  // the guards know both tools are read-only.
  const script = () =>
    new ScriptedChatModel([
      { toolCalls: [{ name: "lookup", args: { id: "a" } }] },
      { toolCalls: [{ name: "status_page", args: {} }] },
      { toolCalls: [{ name: "lookup", args: { id: "a" } }] },
      "Done.",
    ]);
  const blocked = async (middleware: ReturnType<typeof guardMiddleware>) => {
    const agent = createAgent({ model: script(), tools: [lookup, status], middleware: [middleware] });
    const out = await agent.invoke(input, { recursionLimit: 50 });
    return (out.messages as BaseMessage[])
      .filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.status === "error")
      .map((m) => (m.artifact as { guard?: { rule?: string } } | undefined)?.guard?.rule);
  };

  it("given as agentTools, they are read once; decisions are as when it learns them (both keep the step budget)", async () => {
    const given = guardMiddleware({ agentTools: [lookup, status] });
    const learning = guardMiddleware();
    expect(given.wrapModelCall).toBeTypeOf("function");
    expect(learning.wrapModelCall).toBeTypeOf("function");
    expect(await blocked(given)).toEqual(["redundant"]);
    expect(await blocked(learning)).toEqual(["redundant"]);
  });

  it("a name alone gives the name, not the tool's traits", async () => {
    expect(await blocked(guardMiddleware({ agentTools: ["lookup", "status_page"] }))).toEqual([]);
  });

  it("learns the tools from the first model request, and a tool not seen yet when it is called", async () => {
    const lookupTool = (name: string) =>
      tool(async ({ id }) => `record ${id}`, {
        name,
        description: "Look a record up",
        schema: z.object({ id: z.string() }),
        metadata: { readOnlyHint: true },
      });
    // The same lookup in two model turns: redundant only if the tool is known to read only (its readOnlyHint).
    const twice = (name: string) => {
      let n = 0;
      return new ScriptedChatModel(() => (n++ < 2 ? { toolCalls: [{ name, args: { id: "7" } }] } : "Done."));
    };
    const middleware = guardMiddleware();
    const blockedIn = (messages: BaseMessage[]) =>
      messages.filter((m) => ToolMessage.isInstance(m) && (m.artifact as { guard?: unknown } | undefined)?.guard)
        .length;

    const first = createAgent({ model: twice("lookup"), tools: [lookupTool("lookup")], middleware: [middleware] });
    expect(blockedIn((await first.invoke(input, { recursionLimit: 50 })).messages as BaseMessage[])).toBe(1);

    // Another agent on the same middleware: its tool is learned when it is called.
    const second = createAgent({ model: twice("lookup_2"), tools: [lookupTool("lookup_2")], middleware: [middleware] });
    expect(blockedIn((await second.invoke(input, { recursionLimit: 50 })).messages as BaseMessage[])).toBe(1);
  });
});
