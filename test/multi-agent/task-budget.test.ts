/**
 * Issue 61, item 3: a task's budget (`configurable.taskBudget`) belongs to the top-level invocation that carries it,
 * not to the budget object: a `const` budget (as the docs write it) or one bound with `withConfig` gives every
 * invocation, every user and every thread, a budget of its own; a resume after a person's answer is the same task;
 * and one turn is charged once whatever the number of guards that see it.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  escalationHook,
  GuardedToolNode,
  GuardMessagesState,
  guardHooks,
  guardVerdict,
  loopDetectHook,
  type TaskBudget,
} from "../../src/index.js";
import { loopDetectMiddleware, safetyLimitsMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";

const work = tool(async ({ n }) => `step ${n} done`, {
  name: "work",
  description: "Does one step of the work",
  schema: z.object({ n: z.number() }),
});

/** A model that never stops: one new call of `work` and new words at every turn. */
const endless = () =>
  new ScriptedChatModel((messages: BaseMessage[]) => ({
    content: `Next: ${randomUUID()}`,
    toolCalls: [{ name: "work", args: { n: messages.length } }],
  }));

/** Tool turns whose calls ran (answered by the tool, not "Not run" nor blocked) since the last person's message. */
const ranTurns = (messages: readonly BaseMessage[]) => {
  const start = messages.findLastIndex((m) => m.getType() === "human");
  return messages.slice(start).filter((m) => ToolMessage.isInstance(m) && m.status !== "error").length;
};

const ask = (text: string) => ({ messages: [{ role: "user", content: text }] });

describe("a task's budget is the invocation's", () => {
  it("a const budget (the docs' snippet): each invocation, thread or user gets its own 3 turns", async () => {
    const taskBudget: TaskBudget = { maxIterations: 3 };
    const agent = createAgent({ model: endless(), tools: [work], middleware: [loopDetectMiddleware()] });
    for (const thread of ["alice", "bob", "carol"]) {
      const result = await agent.invoke(ask("Go."), { configurable: { thread_id: thread, taskBudget } });
      expect(ranTurns(result.messages)).toBe(3);
      expect(guardVerdict(result)).toMatchObject({ rule: "iterations", value: 3, limit: 3, task: true });
    }
  });

  it("a budget bound with withConfig: a person's next message on the same thread is a new task", async () => {
    const agent = createReactAgent({
      llm: endless(),
      tools: new GuardedToolNode([work]),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook(),
      checkpointer: new MemorySaver(),
    }).withConfig({ configurable: { taskBudget: { maxIterations: 4 } } });
    const config = { configurable: { thread_id: "same" }, recursionLimit: 100 };
    for (const text of ["First task.", "Second task.", "Third task."]) {
      const result = await agent.invoke(ask(text), config);
      expect(ranTurns(result.messages)).toBe(4);
      expect(guardVerdict(result)).toMatchObject({ rule: "iterations", limit: 4, task: true });
    }
  });

  it("safetyLimitsMiddleware and loopDetectMiddleware in one agent: a budget of 10 lets 10 turns run", async () => {
    const agent = createAgent({
      model: endless(),
      tools: [work],
      middleware: [safetyLimitsMiddleware(), loopDetectMiddleware()],
    });
    const result = await agent.invoke(ask("Go."), { configurable: { taskBudget: { maxIterations: 10 } } });
    expect(ranTurns(result.messages)).toBe(10);
    expect(guardVerdict(result)).toMatchObject({ rule: "iterations", value: 10, limit: 10, task: true });
  });

  it("guardHooks(loopDetectHook, escalationHook) asking a person: the resumed turn is charged once, the task goes on", async () => {
    const failing = tool(
      async () => {
        throw new Error("field 'status' is read-only");
      },
      { name: "update_record", description: "Update a record.", schema: z.object({ id: z.string() }) },
    );
    const update = { name: "update_record", args: { id: "7" } };
    // The same failing call until a person answers, then new work until the budget ends the task.
    const model = new ScriptedChatModel((messages: BaseMessage[]) => {
      const answered = messages.some((m) => ToolMessage.isInstance(m) && String(m.content).includes("answered"));
      if (!answered) return { content: `${randomUUID()} ${randomUUID()}`, toolCalls: [update] };
      return { content: `Next: ${randomUUID()}`, toolCalls: [{ name: "work", args: { n: messages.length } }] };
    });
    const tools = new GuardedToolNode([failing, work], { escalation: { askFrom: 1 } });
    const agent = createReactAgent({
      llm: model,
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: guardHooks(loopDetectHook({ maxConsecutiveFailures: 100 }), escalationHook(tools)),
      checkpointer: new MemorySaver(),
    });
    const taskBudget: TaskBudget = { maxIterations: 8 };
    const config = { configurable: { thread_id: "asked", taskBudget }, recursionLimit: 100 };
    const first = await agent.invoke(ask("Update record 7, then do the work."), config);
    const turnsBefore = first.messages.filter((m) => AIMessage.isInstance(m) && (m.tool_calls ?? []).length > 0);
    expect((await agent.getState(config)).tasks.some((t) => t.interrupts.length > 0)).toBe(true);
    const resumed = await agent.invoke(new Command({ resume: "Skip the record." }), config);
    const turns = resumed.messages.filter((m) => AIMessage.isInstance(m) && (m.tool_calls ?? []).length > 0);
    // 8 turns in the whole task, the one asked about counted once; the 9th is stopped.
    expect(turnsBefore.length).toBeLessThan(8);
    expect(turns).toHaveLength(9);
    expect(guardVerdict(resumed)).toMatchObject({ rule: "iterations", value: 8, limit: 8, task: true });
  });
});
