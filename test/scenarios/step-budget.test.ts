/**
 * Issue 33: a guarded run never ends in GraphRecursionError. A model that never stops (every response calls a tool
 * with new arguments and says something new) runs against LangGraph's recursionLimit in createAgent and createReactAgent:
 * the run ends with a final AI message (no tool calls), the model's own wrap-up where the guards can ask for it.
 */
import { randomUUID } from "node:crypto";
import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import fc from "fast-check";
import { createAgent, createMiddleware, modelCallLimitMiddleware, toolCallLimitMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState, guardHooks, loopDetectHook } from "../../src/index.js";
import {
  guardMiddleware,
  guardStack,
  loopDetectMiddleware,
  safetyLimitsMiddleware,
} from "../../src/middleware/index.js";
import { smallestRecursionLimit, toolTurnFits, toolTurnsThatFit } from "../../src/run-end/budget.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { validHistory } from "../support/escalation.js";

const work = tool(async ({ n }) => `step ${n} done, output ${n * 7}`, {
  name: "work",
  description: "Does one step of the work",
  schema: z.object({ n: z.number() }),
});
/** A model that never finishes: each turn a new call and a new text (random: never a loop by the similarity check). */
const endless = (options: ConstructorParameters<typeof ScriptedChatModel>[1] = {}) => {
  let n = 0;
  return new ScriptedChatModel(
    () => ({
      content: `Next: ${randomUUID()}`,
      toolCalls: [{ name: "work", args: { n: n++ } }],
    }),
    options,
  );
};
const text = (m: AIMessage) => (typeof m.content === "string" ? m.content : "");
const input = { messages: [{ role: "user", content: "Do all the steps." }] };
const toolTurns = (messages: BaseMessage[]) =>
  messages.filter((m) => ToolMessage.isInstance(m) && m.status !== "error").length;

function expectEndedInWords(messages: BaseMessage[], kind = "steps"): AIMessage {
  const final = messages.at(-1) as AIMessage;
  expect(final.getType()).toBe("ai");
  expect(final.tool_calls ?? []).toEqual([]);
  expect(final.response_metadata.guard).toMatchObject({ kind });
  expect(validHistory(messages)).toEqual([]);
  return final;
}

describe("createAgent: the documented stack at the default recursionLimit", () => {
  const stacks = {
    "guardMiddleware + loopDetectMiddleware + toolCallLimitMiddleware": {
      make: () => [
        guardMiddleware(),
        loopDetectMiddleware({ turns: { outputOf: text } }),
        toolCallLimitMiddleware({ runLimit: 1000 }),
      ],
      turns: 5,
    },
    // langchain's two limit middlewares: one afterAgent node each (GraphRecursionError at 25 before they were
    // counted). A turn takes 6 steps here (modelCallLimit's before- and after-model hooks, toolCallLimit's and the
    // guard's after-model hooks, the model, the tools) and the end 5 after the last model call: 2 turns fit, the
    // most that can (without the guards, these two middlewares throw GraphRecursionError after 5 turns).
    "guardMiddleware + loopDetectMiddleware + toolCallLimitMiddleware + modelCallLimitMiddleware": {
      make: () => [
        guardMiddleware(),
        loopDetectMiddleware({ turns: { outputOf: text } }),
        toolCallLimitMiddleware({ runLimit: 1000 }),
        modelCallLimitMiddleware({ runLimit: 1000 }),
      ],
      turns: 2,
    },
    "guardMiddleware + loopDetectMiddleware": {
      make: () => [guardMiddleware(), loopDetectMiddleware({ turns: { outputOf: text } })],
      turns: 7,
    },
    guardMiddleware: { make: () => [guardMiddleware()], turns: 7 },
    "guardMiddleware({ agentTools })": { make: () => [guardMiddleware({ agentTools: [work] })], turns: 7 },
    loopDetectMiddleware: { make: () => [loopDetectMiddleware({ turns: { outputOf: text } })], turns: 11 },
  };
  for (const [name, { make, turns }] of Object.entries(stacks)) {
    it(`${name}: ${turns} tool turns of progress, then the model's own wrap-up (tools off), no exception`, async () => {
      const agent = createAgent({ model: endless(), tools: [work], middleware: make() });
      const out = await agent.invoke(input);
      const messages = out.messages as BaseMessage[];
      expect(toolTurns(messages)).toBe(turns);
      const final = expectEndedInWords(messages);
      // The scripted model answers a call made with tool_choice "none" with its wrap-up, never with its script.
      expect(String(final.content)).toMatch(/^I have to stop here\. You asked: "Do all the steps\."/);
      expect(final.response_metadata.guard).toMatchObject({ kind: "steps", limit: 25, wrapUp: "model" });
      expect(String((final.response_metadata.guard as { message: string }).message)).toMatch(/recursionLimit 25/);
    });
  }

  it("with a checkpointer, every invocation of a thread gets its own budget", async () => {
    const agent = createAgent({
      model: endless(),
      tools: [work],
      middleware: [guardMiddleware(), loopDetectMiddleware({ turns: { outputOf: text } })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "budget" } };
    let before = 0;
    for (let i = 0; i < 3; i++) {
      const out = await agent.invoke({ messages: [{ role: "user", content: `Go on (${i}).` }] }, config);
      const messages = out.messages as BaseMessage[];
      expect(toolTurns(messages) - before).toBe(7);
      before = toolTurns(messages);
      expectEndedInWords(messages);
    }
  });

  it('wrapUp: "canned" ends with the guards\' message; a wrap-up call that fails ends with it too', async () => {
    const canned = createAgent({
      model: endless(),
      tools: [work],
      middleware: [guardMiddleware({ wrapUp: "canned" })],
    });
    const a = expectEndedInWords((await canned.invoke(input)).messages as BaseMessage[]);
    expect(String(a.content)).toMatch(
      /^Stopped: this run has used the steps LangGraph allows it \(recursionLimit 25\)/,
    );
    expect(a.response_metadata.guard).toMatchObject({ wrapUp: "canned" });

    const failing = endless({
      wrapUp: () => {
        throw new Error("provider down");
      },
    });
    const agent = createAgent({ model: failing, tools: [work], middleware: [guardMiddleware()] });
    const b = expectEndedInWords((await agent.invoke(input)).messages as BaseMessage[]);
    expect(String(b.content)).toMatch(/^Stopped: this run has used the steps/);
    expect(b.response_metadata.guard).toMatchObject({ wrapUp: "canned" });
  });

  it("property: any recursionLimit from 8 to 60 and any of the stacks, with other middleware's hooks (guardStack): no exception", async () => {
    const noop = (name: string, hook: "beforeModel" | "afterModel") =>
      createMiddleware({ name, [hook]: () => undefined } as Parameters<typeof createMiddleware>[0]);
    const stackArb = fc.record({
      guard: fc.boolean(),
      loop: fc.constantFrom("none", "loop", "limits"),
      limit: fc.boolean(),
      modelLimit: fc.boolean(),
      before: fc.nat({ max: 2 }),
      after: fc.nat({ max: 1 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 8, max: 60 }), stackArb, async (recursionLimit, s) => {
        const middleware = () =>
          guardStack([
            ...(s.guard ? [guardMiddleware()] : []),
            ...(s.loop === "loop" ? [loopDetectMiddleware({ turns: { outputOf: text } })] : []),
            ...(s.loop === "limits" ? [safetyLimitsMiddleware({ maxIterations: 1000 })] : []),
            ...(s.limit ? [toolCallLimitMiddleware({ runLimit: 1000 })] : []),
            ...(s.modelLimit ? [modelCallLimitMiddleware({ runLimit: 1000 })] : []),
            ...Array.from({ length: s.before }, (_, i) => noop(`before${i}`, "beforeModel")),
            ...Array.from({ length: s.after }, (_, i) => noop(`after${i}`, "afterModel")),
          ]);
        if (!s.guard && s.loop === "none") return; // no guard: nothing to test
        // Below the stack's own minimum (its hooks around one model call and its afterAgent nodes), even an agent
        // whose model answers at once throws GraphRecursionError: no guard can end such a run in words.
        const atOnce = createAgent({
          model: new ScriptedChatModel(["Done."]),
          tools: [work],
          middleware: middleware(),
        });
        if (
          !(await atOnce.invoke(input, { recursionLimit }).then(
            () => true,
            () => false,
          ))
        )
          return;
        const agent = createAgent({ model: endless(), tools: [work], middleware: middleware() });
        const out = await agent.invoke(input, { recursionLimit });
        expectEndedInWords(out.messages as BaseMessage[]);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe("createReactAgent with the guard hooks at the default recursionLimit", () => {
  const hooks = {
    escalationHook: (tools: GuardedToolNode) => escalationHook(tools),
    loopDetectHook: () => loopDetectHook(),
    "guardHooks(loopDetectHook, escalationHook)": (tools: GuardedToolNode) =>
      guardHooks(loopDetectHook(), escalationHook(tools)),
  };
  for (const [name, hook] of Object.entries(hooks)) {
    it(`${name}: 7 tool turns, then a final message, no exception`, async () => {
      const tools = new GuardedToolNode([work]);
      const agent = createReactAgent({
        llm: endless(),
        tools,
        stateSchema: GuardMessagesState,
        postModelHook: hook(tools),
      });
      const messages = (await agent.invoke(input)).messages as BaseMessage[];
      expect(toolTurns(messages)).toBe(7);
      const final = expectEndedInWords(messages);
      expect(String(final.content)).toMatch(/^Stopped: this run has used the steps/);
    });
  }

  it("wrapUp: { model } gives the final message in the model's words", async () => {
    const tools = new GuardedToolNode([work]);
    const summary = new ScriptedChatModel(["I did seven steps; the rest is left."]);
    const agent = createReactAgent({
      llm: endless(),
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(tools, { wrapUp: { model: summary } }),
    });
    const final = expectEndedInWords((await agent.invoke(input)).messages as BaseMessage[]);
    expect(String(final.content)).toBe("I did seven steps; the rest is left.");
    expect(final.response_metadata.guard).toMatchObject({ kind: "steps", wrapUp: "model" });
  });

  it("property: any recursionLimit from 5 to 60: no exception", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 5, max: 60 }), fc.boolean(), async (recursionLimit, both) => {
        const tools = new GuardedToolNode([work]);
        const postModelHook = both ? guardHooks(loopDetectHook(), escalationHook(tools)) : escalationHook(tools);
        const agent = createReactAgent({ llm: endless(), tools, stateSchema: GuardMessagesState, postModelHook });
        expectEndedInWords((await agent.invoke(input, { recursionLimit })).messages as BaseMessage[]);
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});

describe("the budget's arithmetic (notes/steps-and-wrap-up.md)", () => {
  it("a task of N tool turns needs N turns of (around + 2) steps, the hooks of one more turn, the agent's hooks and 2", () => {
    expect(smallestRecursionLimit(2, { around: 0, edges: 0 })).toBe(6);
    // The documented stack: two after-model hooks (the guard's, toolCallLimit's) and toolCallLimit's afterAgent.
    expect(toolTurnsThatFit(25, { around: 2, edges: 1 })).toBe(5);
    expect(toolTurnFits(17, 1, 25, { around: 2, edges: 1 })).toBe(true); // the 5th tool turn
    expect(toolTurnFits(21, 1, 25, { around: 2, edges: 1 })).toBe(false); // a 6th would not end in time
  });
});
